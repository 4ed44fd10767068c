/**
 * Relays between a client-facing transport and an upstream one, for the proxy.
 *
 * - {@link relayTransports}: message for message between two SDK transports (a local server
 *   transport, already wrapped with `withResultBudget`, and an upstream client transport such as
 *   `StreamableHTTPClientTransport`). A request the upstream cannot take is answered with a
 *   JSON-RPC error; either side closing closes the other.
 * - {@link bridgeStdioProxy}: an SDK server transport in front of the stdio proxy core
 *   (`runProxy`), through in-process streams, so every upstream line goes through the same framing,
 *   matching and streamed budget as `mcp-budget proxy` on stdio.
 *
 * Both take a `relation` (relation.ts, watching the client-facing transport): each upstream
 * message is sent with the client request it belongs to, so that a Streamable HTTP client gets progress, logging, sampling and
 * elicitation on the stream of the call that caused them. Off for JSON answers, where a request's
 * answer carries nothing else and only the session's stream can.
 */
import { PassThrough, Writable } from 'node:stream';
import type { Transport } from '@modelcontextprotocol/sdk/shared/transport.js';
import type { JSONRPCMessage } from '@modelcontextprotocol/sdk/types.js';
import { UPSTREAM_GONE } from '../core/jsonrpc-errors.js';
import { runProxy, type ProxyOptions } from '../proxy/proxy.js';
import { isRequestId } from '../core/request-ids.js';
import type { RequestRelation } from './relation.js';
import { warningText } from '../../shared/warnings.js';

/**
 * Connect `local` (client-facing) and `upstream`; resolves once both are started, with a function
 * that closes both. `warn`: a writer that bounds what waits on stderr (`StderrWarnings`); what a
 * peer wrote into an error reaches it cut (`warningText`).
 */
export async function relayTransports(
  local: Transport,
  upstream: Transport,
  warn: (text: string) => void,
  onClosed?: () => void,
  relation?: RequestRelation,
): Promise<() => Promise<void>> {
  let closed = false;
  const closeBoth = async (): Promise<void> => {
    if (closed) return;
    closed = true;
    await upstream.close().catch(() => undefined);
    await local.close().catch(() => undefined);
    onClosed?.();
  };
  local.onmessage = (message) => {
    relation?.fromClient(message);
    upstream.send(message).catch((e: unknown) => {
      const m = message as { id?: unknown; method?: unknown };
      const why = (e as Error)?.message ?? String(e);
      if (typeof m.method === 'string' && isRequestId(m.id)) {
        const answer = { jsonrpc: '2.0', id: m.id, error: { code: UPSTREAM_GONE, message: `The upstream MCP server could not take the request: ${why}` } };
        void local.send(answer as JSONRPCMessage).catch(() => undefined);
      } else {
        warn(`could not forward a message upstream: ${warningText(why)}`);
      }
    });
  };
  upstream.onmessage = (message) => {
    const r = (message as { result?: { protocolVersion?: unknown; serverInfo?: unknown } }).result;
    if (typeof r?.protocolVersion === 'string' && r.serverInfo !== undefined) {
      // The initialize result: both sides speak this version from now on.
      upstream.setProtocolVersion?.(r.protocolVersion);
      local.setProtocolVersion?.(r.protocolVersion);
    }
    sendRelated(local, message, relation, warn);
  };
  upstream.onerror = (e) => warn(`upstream: ${errorText(e)}`);
  local.onerror = (e) => warn(errorText(e));
  upstream.onclose = () => void closeBoth();
  local.onclose = () => void closeBoth();
  await upstream.start();
  await local.start();
  return closeBoth;
}

/** Options of {@link bridgeStdioProxy}: the stdio proxy's, without its streams. */
export type BridgedProxyOptions = Omit<ProxyOptions, 'stdin' | 'stdout' | 'handleSignals'>;

/**
 * Run the stdio proxy core (spawning the server) for one client-facing transport. Messages the
 * transport receives are written to the proxy as lines; the bounded lines the proxy writes are
 * sent back through the transport. Resolves with a function that ends the proxy (the server's
 * stdin is closed, then SIGTERM and SIGKILL after the proxy's grace periods) and waits for it.
 */
export async function bridgeStdioProxy(local: Transport, options: BridgedProxyOptions, warn: (text: string) => void, relation?: RequestRelation): Promise<() => Promise<void>> {
  const toProxy = new PassThrough();
  let tail: Buffer[] = [];
  const fromProxy = new Writable({
    write(chunk: Buffer, _enc, cb) {
      let start = 0;
      for (let nl = chunk.indexOf(10); nl !== -1; nl = chunk.indexOf(10, start)) {
        const line = tail.length === 0 ? chunk.subarray(start, nl) : Buffer.concat([...tail, chunk.subarray(start, nl)]);
        tail = [];
        start = nl + 1;
        deliver(line);
      }
      if (start < chunk.length) tail.push(chunk.subarray(start));
      cb();
    },
  });
  // Lines from the proxy are bounded (tools/call results) or small enough to pass through whole.
  const deliver = (line: Buffer): void => {
    if (line.length === 0) return;
    let parsed: JSONRPCMessage | JSONRPCMessage[];
    try {
      parsed = JSON.parse(line.toString('utf8')) as JSONRPCMessage | JSONRPCMessage[];
    } catch {
      warn('dropped a line from the proxy that is not JSON');
      return;
    }
    // a batch line is its messages, each sent on its own (as one array it reached no request's stream)
    for (const message of Array.isArray(parsed) ? parsed : [parsed]) sendRelated(local, message, relation, warn);
  };
  let ended = false;
  const end = (): void => {
    if (ended) return;
    ended = true;
    toProxy.end();
  };
  local.onmessage = (message) => {
    if (ended) return;
    relation?.fromClient(message);
    toProxy.write(JSON.stringify(message) + '\n');
  };
  local.onclose = end;
  local.onerror = (e) => warn(errorText(e));
  const finished = runProxy({ ...options, stdin: toProxy, stdout: fromProxy, handleSignals: false }).then(() => {
    // The server went away: the session has nothing left to serve.
    void local.close().catch(() => undefined);
  });
  await local.start();
  return async () => {
    end();
    await finished;
  };
}

/**
 * Deliver an upstream message to the client, on the stream of the request it belongs to when one
 * is known. A request answered meanwhile has no stream left: the message then takes the session's.
 */
function sendRelated(local: Transport, message: JSONRPCMessage, relation: RequestRelation | undefined, warn: (text: string) => void): void {
  const failed = (e: unknown): void => warn(`could not deliver a message to the client: ${errorText(e)}`);
  const relatedRequestId = relation?.fromUpstream(message);
  if (relatedRequestId === undefined) {
    local.send(message).catch(failed);
    return;
  }
  local.send(message, { relatedRequestId }).catch(() => local.send(message).catch(failed));
}

/** An error's message for a warning: it may carry what a peer sent (a response body), so it is cut. */
function errorText(e: unknown): string {
  return warningText((e as Error)?.message ?? String(e));
}
