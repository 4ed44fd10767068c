/**
 * The proxy over HTTP:
 * - `proxy --listen [HOST:]PORT -- COMMAND`: Streamable HTTP in front of a stdio server, one
 *   server process per session, each behind the stdio proxy core (`runProxy`: the same framing,
 *   matching and streamed budget as on stdio).
 * - `proxy --upstream-url URL`: a remote Streamable HTTP server for a local stdio client; the
 *   proxy is the upstream's client (the SDK's `StreamableHTTPClientTransport`) and every result it
 *   relays leaves through `withResultBudget` (the same `ResponseBudget`).
 * - `proxy --listen … --upstream-url URL`: the same for HTTP clients, one upstream connection per
 *   session.
 */
import type { Readable, Writable } from 'node:stream';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import type { BudgetOptions } from '../engine/index.js';
import { UPSTREAM_PROBE_MS } from '../transport/http/defaults.js';
import type { McpHttpApp } from '../transport/http/http-server.js';
import { bridgeStdioProxy, relayTransports } from '../transport/http/relay.js';
import { RequestRelation } from '../transport/http/relation.js';
import type { TruncationListener } from '../transport/core/response-budget.js';
import { BoundedStdioServerTransport } from '../transport/stdio/stdio-server.js';
import { StderrWarnings, warningText } from '../shared/warnings.js';
import { withResultBudget } from '../transport/decorator/with-result-budget.js';
import { httpOptionsFrom, runHttpListener, type ListeningArgs } from './http-listen.js';

/** What {@link runProxyHttp} runs: an upstream command or URL, and where it listens (none: stdio). */
export interface ProxyHttpOptions {
  limits: BudgetOptions;
  /** Caps a client message (HTTP body, or stdio line). */
  maxRequestBytes: number;
  /** The cap on server messages that are not tool results. @default 1 MiB */
  maxMessageBytes?: number | undefined;
  /** The stdio server to spawn per session (with `listen`). */
  command?: { command: string; args: string[] };
  /** The remote Streamable HTTP server. */
  upstreamUrl?: URL;
  /** HTTP flags when `--listen` was given; stdio otherwise. */
  listen?: ListeningArgs;
  stdin: Readable;
  stdout: Writable;
  stderr: Writable;
  /**
   * `--log-cuts`: makes the truncation listener of one connection, given a way to read its
   * session id (stdio: no session).
   */
  cutLog?: (session?: () => string | undefined) => TruncationListener;
}

/** Run the proxy until its client goes (stdio) or SIGTERM/SIGINT (HTTP); resolves with the exit code. */
export async function runProxyHttp(o: ProxyHttpOptions): Promise<number> {
  const name = 'mcp-budget proxy';
  // Peers decide how many warnings there are: dropped and counted while stderr does not drain.
  const warnings = new StderrWarnings(o.stderr, name);
  const warn = (text: string): void => warnings.warn(text);
  const upstream = (): StreamableHTTPClientTransport => new StreamableHTTPClientTransport(o.upstreamUrl!);
  // An upstream nobody answers is a startup error (exit 1), not a proxy that answers nothing and exits 0.
  const unreachable = o.upstreamUrl === undefined ? undefined : await probeUpstream(o.upstreamUrl);
  if (unreachable !== undefined) {
    o.stderr.write(`${name}: cannot reach the upstream ${o.upstreamUrl!.href} (${unreachable}); start it first, or check --upstream-url.\n`);
    return 1;
  }
  // One cap on the server's messages that are not tool results, whichever way they come in.
  const messageCap = o.maxMessageBytes === undefined ? {} : { maxMessageBytes: o.maxMessageBytes };
  if (o.listen === undefined) {
    // stdio client ↔ remote server.
    const local = withResultBudget(new BoundedStdioServerTransport({ stdin: o.stdin, stdout: o.stdout, stderr: o.stderr, maxRequestBytes: o.maxRequestBytes, name }), { ...withCutLog(o.limits, o.cutLog?.()), ...messageCap });
    const remote = upstream();
    let closeBoth: () => Promise<void> = async () => undefined;
    const closed = new Promise<void>((resolve) => {
      const stop = (): void => void remote.terminateSession().catch(() => undefined).then(() => closeBoth());
      process.once('SIGTERM', stop);
      process.once('SIGINT', stop);
      void relayTransports(local, remote, warn, resolve).then((close) => (closeBoth = close), (e: unknown) => {
        warn(`cannot reach the upstream ${o.upstreamUrl!.href}: ${warningText((e as Error)?.message ?? String(e))}`);
        resolve();
      });
    });
    await closed;
    return 0;
  }
  const options = await httpOptionsFrom({ ...o.listen, maxRequestBytes: o.maxRequestBytes }, name, o.stderr);
  if (options.tokens !== undefined) o.stderr.write(`${name}: ${PROXY_TOKENS_NOTE}\n`);
  // Server messages ride the stream of the call that caused them; JSON answers have no room for them.
  const relate = !options.jsonResponse;
  const app: McpHttpApp = {
    async connect(transport) {
      if (o.upstreamUrl !== undefined) {
        const remote = upstream();
        const relation = relate ? new RequestRelation() : undefined;
        relation?.watch(transport);
        const close = await relayTransports(withResultBudget(transport, { ...withCutLog(o.limits, o.cutLog?.(() => transport.sessionId)), ...messageCap }), remote, warn, undefined, relation);
        return async () => {
          await remote.terminateSession().catch(() => undefined);
          await close();
        };
      }
      const { command, args } = o.command!;
      const onTruncated = o.cutLog?.(() => transport.sessionId);
      const relation = relate ? new RequestRelation() : undefined;
      relation?.watch(transport);
      return bridgeStdioProxy(transport, { command, args, limits: o.limits, maxRequestBytes: o.maxRequestBytes, ...messageCap, stderr: o.stderr, ...(onTruncated === undefined ? {} : { onTruncated }) }, warn, relation);
    },
  };
  return runHttpListener(app, options);
}

/**
 * Said at startup when the proxy asks for tokens: a token admits a caller to the proxy, and the
 * upstream never learns which one (a `serve` behind the proxy acts as its own `--as` member).
 */
export const PROXY_TOKENS_NOTE =
  'the token file admits callers, but its member names are not passed upstream: every caller reaches the upstream as one identity ' +
  '(an `mcp-budget serve` behind this proxy runs every call as its own --as member, whatever the token). ' +
  'For roles per member, run `mcp-budget serve --listen --token-file FILE` itself.';

/**
 * Whether anything answers HTTP at `url`: any status will do (an MCP endpoint may answer a bare GET
 * with 405 or 400); only no answer at all (refused, no route, a timeout) is a reason, returned.
 */
async function probeUpstream(url: URL): Promise<string | undefined> {
  try {
    const res = await fetch(url, { method: 'GET', headers: { Accept: 'text/event-stream' }, signal: AbortSignal.timeout(UPSTREAM_PROBE_MS) });
    await res.body?.cancel().catch(() => undefined);
    return undefined;
  } catch (e) {
    if (e instanceof Error && e.name === 'TimeoutError') return `no answer within ${UPSTREAM_PROBE_MS / 1000} s`;
    const cause = (e as { cause?: { code?: unknown; message?: unknown } }).cause;
    return typeof cause?.code === 'string' ? cause.code : typeof cause?.message === 'string' ? cause.message : 'no answer';
  }
}

/** Budget options with a truncation listener when one is given. */
function withCutLog(limits: BudgetOptions, onTruncated: TruncationListener | undefined): BudgetOptions & { onTruncated?: TruncationListener } {
  return onTruncated === undefined ? limits : { ...limits, onTruncated };
}
