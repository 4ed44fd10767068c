/**
 * The Streamable HTTP flags of `serve` and `proxy`: `--listen [HOST:]PORT` and what goes with it.
 * Taken out of the command's arguments here, checked here (usage errors name the flag and the
 * accepted range), with every default from `src/transport/http/defaults.ts`.
 */
import {
  DEFAULT_HTTP_HOST,
  DEFAULT_HTTP_MAX_REQUEST_BYTES,
  DEFAULT_MAX_SESSIONS,
  DEFAULT_SESSION_IDLE_MS,
  DEFAULT_SHUTDOWN_GRACE_MS,
} from '../transport/http/defaults.js';
import { parseSize, UsageError } from './args.js';

/** The HTTP flags of one command line, parsed; `listen` is unset without `--listen`. */
export interface ListenArgs {
  /** Where to listen (`--listen`); `hostGiven` is false when only a port was named. */
  listen?: { host: string; port: number; hostGiven: boolean };
  stateless: boolean;
  jsonResponse: boolean;
  /** `--max-request-bytes` when given (its default depends on the mode). */
  maxRequestBytes?: number;
  allowHosts: string[];
  allowOrigins: string[];
  tokenFile?: string;
  sessionIdleMs: number;
  maxSessions: number;
  shutdownGraceMs: number;
  /** `--cursor-key-file` (serve): the cursor signing key shared by replicas. */
  cursorKeyFile?: string;
  /** `--upstream-url` (proxy): a remote Streamable HTTP server to bound. */
  upstreamUrl?: URL;
}

/** Flags that mean nothing without `--listen`. */
const HTTP_ONLY = ['--stateless', '--json-response', '--allow-host', '--allow-origin', '--token-file', '--session-idle-ms', '--max-sessions', '--shutdown-ms'];

/** Usage lines of these flags, for the CLI's help. */
export const LISTEN_USAGE = `HTTP (serve and proxy): --listen [HOST:]PORT serves MCP Streamable HTTP on http://HOST:PORT/mcp
  (HOST defaults to 127.0.0.1; 0.0.0.0 or :: only when named, with a warning; port 0 picks one).
  --stateless            one transport per request, no sessions (serve only)
  --json-response        JSON answers instead of SSE streams
  --max-request-bytes N  largest request body (default ${DEFAULT_HTTP_MAX_REQUEST_BYTES / 1024 / 1024}MiB), refused with 413
  --allow-host NAME      accept this Host name too (default: localhost, 127.0.0.1, [::1], the bound host)
  --allow-origin ORIGIN  accept this Origin too (default: the loopback origins of the bound port)
  --token-file FILE      require Authorization: Bearer TOKEN; lines \`TOKEN MEMBER\`; mode 600
  --session-idle-ms N    close sessions idle this long (default ${DEFAULT_SESSION_IDLE_MS})
  --max-sessions N       sessions open at once (default ${DEFAULT_MAX_SESSIONS})
  --shutdown-ms N        on SIGTERM/SIGINT, time left to requests in flight (default ${DEFAULT_SHUTDOWN_GRACE_MS})
serve: --cursor-key-file FILE  cursor signing key shared by replicas (or MCP_BUDGET_CURSOR_KEY)
proxy: --upstream-url URL      bound a remote Streamable HTTP server instead of spawning COMMAND`;

/**
 * Take the HTTP flags out of `argv` (stopping at `--`); other arguments are returned in order.
 * `command` decides which of `--cursor-key-file`, `--upstream-url` and `--stateless` apply.
 */
export function parseListenArgs(argv: readonly string[], command: 'serve' | 'proxy'): { args: ListenArgs; rest: string[] } {
  const args: ListenArgs = {
    stateless: false,
    jsonResponse: false,
    allowHosts: [],
    allowOrigins: [],
    sessionIdleMs: DEFAULT_SESSION_IDLE_MS,
    maxSessions: DEFAULT_MAX_SESSIONS,
    shutdownGraceMs: DEFAULT_SHUTDOWN_GRACE_MS,
  };
  const rest: string[] = [];
  const given = new Set<string>();
  for (let i = 0; i < argv.length; i++) {
    const a = argv[i]!;
    if (a === '--') {
      rest.push(...argv.slice(i));
      break;
    }
    const eq = a.indexOf('=');
    const flag = a.startsWith('--') && eq !== -1 ? a.slice(0, eq) : a;
    const value = (): string => {
      const v = eq !== -1 && a.startsWith('--') ? a.slice(eq + 1) : argv[++i];
      if (v === undefined || v === '') throw new UsageError(`\`${flag}\` needs a value`);
      return v;
    };
    switch (flag) {
      case '--listen':
        args.listen = parseListen(value());
        break;
      case '--stateless':
      case '--json-response':
        if (eq !== -1) throw new UsageError(`\`${flag}\` takes no value`);
        if (flag === '--stateless') args.stateless = true;
        else args.jsonResponse = true;
        break;
      case '--max-request-bytes': {
        const v = value();
        const n = parseSize(flag, v);
        if (n < 1024 || n > 1024 ** 3) throw new UsageError(`Expected \`--max-request-bytes\` to be from 1024 to ${1024 ** 3}, got ${v}`);
        args.maxRequestBytes = n;
        break;
      }
      case '--allow-host':
        args.allowHosts.push(value());
        break;
      case '--allow-origin': {
        const v = value();
        if (!/^https?:\/\/[^/\s]+\/?$/i.test(v)) throw new UsageError(`Expected \`--allow-origin\` to be an origin like https://app.example.com, got ${JSON.stringify(v)}`);
        args.allowOrigins.push(v);
        break;
      }
      case '--token-file':
        args.tokenFile = value();
        break;
      case '--session-idle-ms':
        args.sessionIdleMs = count(flag, value(), 100, 7 * 24 * 3600 * 1000);
        break;
      case '--max-sessions':
        args.maxSessions = count(flag, value(), 1, 100_000);
        break;
      case '--shutdown-ms':
        args.shutdownGraceMs = count(flag, value(), 0, 600_000);
        break;
      case '--cursor-key-file':
        if (command !== 'serve') throw new UsageError('`--cursor-key-file` is a serve flag');
        args.cursorKeyFile = value();
        break;
      case '--upstream-url': {
        if (command !== 'proxy') throw new UsageError('`--upstream-url` is a proxy flag');
        const v = value();
        let url: URL;
        try {
          url = new URL(v);
        } catch {
          throw new UsageError(`Expected \`--upstream-url\` to be an http(s) URL, got ${JSON.stringify(v)}`);
        }
        if (url.protocol !== 'http:' && url.protocol !== 'https:') throw new UsageError(`Expected \`--upstream-url\` to be an http(s) URL, got ${JSON.stringify(v)}`);
        args.upstreamUrl = url;
        break;
      }
      default:
        rest.push(a);
        continue;
    }
    given.add(flag);
  }
  if (args.listen === undefined) {
    const stray = HTTP_ONLY.find((f) => given.has(f));
    if (stray !== undefined) throw new UsageError(`\`${stray}\` needs \`--listen [HOST:]PORT\``);
  }
  if (args.stateless && command === 'proxy') {
    throw new UsageError('`--stateless` is a serve flag: the proxy keeps one upstream connection per session');
  }
  return { args, rest };
}

/** `PORT`, `HOST:PORT` or `[IPV6]:PORT`. */
export function parseListen(text: string): { host: string; port: number; hostGiven: boolean } {
  let host = DEFAULT_HTTP_HOST;
  let portText = text;
  let hostGiven = false;
  const v6 = /^\[([0-9a-fA-F:.]+)\]:(\d+)$/.exec(text);
  if (v6 !== null) {
    host = v6[1]!;
    portText = v6[2]!;
    hostGiven = true;
  } else if (text.includes(':')) {
    const colon = text.lastIndexOf(':');
    host = text.slice(0, colon);
    portText = text.slice(colon + 1);
    hostGiven = true;
    if (host === '' || host.includes(':')) throw new UsageError(`Expected \`--listen\` to be [HOST:]PORT (IPv6 in brackets: [::1]:8080), got ${JSON.stringify(text)}`);
  }
  if (!/^\d+$/.test(portText) || Number(portText) > 65535) throw new UsageError(`Expected the \`--listen\` port to be from 0 to 65535, got ${JSON.stringify(portText)}`);
  return { host, port: Number(portText), hostGiven };
}

function count(flag: string, text: string, min: number, max: number): number {
  if (!/^\d+$/.test(text) || Number(text) < min || Number(text) > max) {
    throw new UsageError(`Expected \`${flag}\` to be an integer from ${min} to ${max}, got ${JSON.stringify(text)}`);
  }
  return Number(text);
}
