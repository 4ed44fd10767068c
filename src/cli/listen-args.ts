/**
 * The Streamable HTTP flags of `serve` and `proxy`: `--listen [HOST:]PORT` and what goes with it.
 * Taken out of the command's arguments here, checked here (usage errors name the flag and the
 * accepted range), with every default from `src/transport/http/defaults.ts`.
 */
import { parseArgs } from 'node:util';
import {
  DEFAULT_HTTP_HOST,
  DEFAULT_HTTP_MAX_INFLIGHT_BODY_BYTES,
  DEFAULT_HTTP_MAX_REQUEST_BYTES,
  DEFAULT_MAX_SESSIONS,
  DEFAULT_SESSION_IDLE_MS,
  DEFAULT_SHUTDOWN_GRACE_MS,
} from '../transport/http/defaults.js';
import { parseSize, usageError } from './args.js';
import { CURSOR_KEY_FILE, LISTEN_FLAG_SPECS, STATELESS, UPSTREAM_URL } from './spec.js';

/** The HTTP flags of one command line, parsed; `listen` is unset without `--listen`. */
export interface ListenArgs {
  /** Where to listen (`--listen`); `hostGiven` is false when only a port was named. */
  listen?: { host: string; port: number; hostGiven: boolean };
  stateless: boolean;
  jsonResponse: boolean;
  /** `--max-request-bytes` when given (its default depends on the mode). */
  maxRequestBytes?: number;
  /** `--max-inflight-body-bytes`: request bodies held at once, summed. */
  maxInflightBodyBytes: number;
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
const HTTP_ONLY = ['--stateless', '--json-response', '--allow-host', '--allow-origin', '--token-file', '--session-idle-ms', '--max-sessions', '--shutdown-ms', '--max-inflight-body-bytes'];

/** The HTTP flags and whether each takes a value (`--cursor-key-file`: serve, `--upstream-url`: proxy), from the command table. */
const LISTEN_FLAGS: Record<string, 'string' | 'boolean'> = Object.fromEntries([...LISTEN_FLAG_SPECS, STATELESS, CURSOR_KEY_FILE, UPSTREAM_URL].map((f) => [f.name, f.type]));

/**
 * Take the HTTP flags out of `argv` (stopping at `--`); other arguments are returned in order.
 * `command` decides which of `--cursor-key-file`, `--upstream-url` and `--stateless` apply.
 * For embedding; the CLI parses the whole line at once and calls {@link listenArgsFromFlags}.
 */
export function parseListenArgs(argv: readonly string[], command: 'serve' | 'proxy'): { args: ListenArgs; rest: string[] } {
  const options: Record<string, { type: 'string' | 'boolean'; multiple: true }> = {};
  for (const [name, type] of Object.entries(LISTEN_FLAGS)) options[name] = { type, multiple: true };
  const { tokens } = parseArgs({ args: [...argv], options, strict: false, allowPositionals: true, tokens: true });
  const values: Record<string, (string | boolean)[]> = {};
  const rest: string[] = [];
  let ended = false;
  for (const t of tokens) {
    if (ended || t.kind === 'positional') {
      rest.push(argv[t.index]!);
    } else if (t.kind === 'option-terminator') {
      rest.push('--');
      ended = true;
    } else if (LISTEN_FLAGS[t.name] !== undefined && t.rawName.startsWith('--')) {
      // A boolean written `--flag=x`, or a value flag at the end: refused with the flag named.
      if (LISTEN_FLAGS[t.name] === 'boolean' && t.inlineValue === true) throw usageError(`\`${t.rawName}\` takes no value`);
      (values[t.name] ??= []).push(LISTEN_FLAGS[t.name] === 'boolean' ? true : (t.value ?? ''));
    } else {
      rest.push(t.inlineValue === true ? `${t.rawName}=${t.value ?? ''}` : argv[t.index]!);
    }
  }
  return { args: listenArgsFromFlags(values, command), rest };
}

/**
 * The HTTP flags from parsed flag values (keyed by long name; repeatable ones as arrays), checked:
 * usage errors name the flag and the accepted range; flags that need `--listen` are refused
 * without it.
 */
export function listenArgsFromFlags(values: Readonly<Record<string, unknown>>, command: 'serve' | 'proxy'): ListenArgs {
  const all = (name: string): unknown[] => {
    const v = values[name];
    return v === undefined ? [] : Array.isArray(v) ? v : [v];
  };
  const last = (name: string): string | undefined => {
    const vs = all(name);
    if (vs.length === 0) return undefined;
    const v = vs[vs.length - 1];
    if (typeof v !== 'string' || v === '') throw usageError(`\`--${name}\` needs a value`);
    return v;
  };
  const every = (name: string): string[] => all(name).map((v) => {
    if (typeof v !== 'string' || v === '') throw usageError(`\`--${name}\` needs a value`);
    return v;
  });
  const args: ListenArgs = {
    stateless: all('stateless').includes(true),
    jsonResponse: all('json-response').includes(true),
    allowHosts: every('allow-host'),
    allowOrigins: every('allow-origin'),
    maxInflightBodyBytes: DEFAULT_HTTP_MAX_INFLIGHT_BODY_BYTES,
    sessionIdleMs: DEFAULT_SESSION_IDLE_MS,
    maxSessions: DEFAULT_MAX_SESSIONS,
    shutdownGraceMs: DEFAULT_SHUTDOWN_GRACE_MS,
  };
  const listen = last('listen');
  if (listen !== undefined) args.listen = parseListen(listen);
  const maxRequest = last('max-request-bytes');
  if (maxRequest !== undefined) {
    const n = parseSize('--max-request-bytes', maxRequest);
    if (n < 1024 || n > 1024 ** 3) throw usageError(`Expected \`--max-request-bytes\` to be from 1024 to ${1024 ** 3}, got ${maxRequest}`);
    args.maxRequestBytes = n;
  }
  const inflight = last('max-inflight-body-bytes');
  if (inflight !== undefined) {
    const n = parseSize('--max-inflight-body-bytes', inflight);
    if (n < 1024 || n > 64 * 1024 ** 3) throw usageError(`Expected \`--max-inflight-body-bytes\` to be from 1024 to ${64 * 1024 ** 3}, got ${inflight}`);
    args.maxInflightBodyBytes = n;
  }
  for (const v of args.allowOrigins) {
    if (!/^https?:\/\/[^/\s]+\/?$/i.test(v)) throw usageError(`Expected \`--allow-origin\` to be an origin like https://app.example.com, got ${JSON.stringify(v)}`);
  }
  const tokenFile = last('token-file');
  if (tokenFile !== undefined) args.tokenFile = tokenFile;
  const idle = last('session-idle-ms');
  if (idle !== undefined) args.sessionIdleMs = count('--session-idle-ms', idle, 100, 7 * 24 * 3600 * 1000);
  const sessions = last('max-sessions');
  if (sessions !== undefined) args.maxSessions = count('--max-sessions', sessions, 1, 100_000);
  const grace = last('shutdown-ms');
  if (grace !== undefined) args.shutdownGraceMs = count('--shutdown-ms', grace, 0, 600_000);
  if (all('cursor-key-file').length > 0) {
    if (command !== 'serve') throw usageError('`--cursor-key-file` is a serve flag');
    args.cursorKeyFile = last('cursor-key-file');
  }
  if (all('upstream-url').length > 0) {
    if (command !== 'proxy') throw usageError('`--upstream-url` is a proxy flag');
    const v = last('upstream-url')!;
    let url: URL;
    try {
      url = new URL(v);
    } catch {
      throw usageError(`Expected \`--upstream-url\` to be an http(s) URL, got ${JSON.stringify(v)}`);
    }
    if (url.protocol !== 'http:' && url.protocol !== 'https:') throw usageError(`Expected \`--upstream-url\` to be an http(s) URL, got ${JSON.stringify(v)}`);
    args.upstreamUrl = url;
  }
  if (args.listen === undefined) {
    const stray = HTTP_ONLY.find((f) => all(f.slice(2)).length > 0);
    if (stray !== undefined) throw usageError(`\`${stray}\` needs \`--listen [HOST:]PORT\``);
  }
  if (args.stateless && command === 'proxy') {
    throw usageError('`--stateless` is a serve flag: the proxy keeps one upstream connection per session');
  }
  return args;
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
    if (host === '' || host.includes(':')) throw usageError(`Expected \`--listen\` to be [HOST:]PORT (IPv6 in brackets: [::1]:8080), got ${JSON.stringify(text)}`);
  }
  if (!/^\d+$/.test(portText) || Number(portText) > 65535) throw usageError(`Expected the \`--listen\` port to be from 0 to 65535, got ${JSON.stringify(portText)}`);
  return { host, port: Number(portText), hostGiven };
}

function count(flag: string, text: string, min: number, max: number): number {
  if (!/^\d+$/.test(text) || Number(text) < min || Number(text) > max) {
    throw usageError(`Expected \`${flag}\` to be an integer from ${min} to ${max}, got ${JSON.stringify(text)}`);
  }
  return Number(text);
}
