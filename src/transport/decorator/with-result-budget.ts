/**
 * `withResultBudget(transport)`: a Transport decorator for servers built on the MCP SDK. Every
 * response to a `tools/call` (and `tasks/result`) leaves through the result budget, whatever the
 * handler did: `server.connect(withResultBudget(new StdioServerTransport()))`.
 *
 * The SDK sends responses with `transport.send(message)` and no related request id, so the
 * decorator remembers which inbound request ids were `tools/call` (keyed by type: `1` ≠ `"1"`,
 * and `0` is valid), forgets them on `notifications/cancelled` and on close, and learns each tool's
 * output schema and annotations from the `tools/list` responses it sends. A transport that never
 * sends `tools/list` (stateless Streamable HTTP: one transport per request) is given the catalog
 * up front: `withResultBudget(transport, { tools: await toolCatalogOf(server) })`.
 */
import type { Transport, TransportSendOptions } from '@modelcontextprotocol/sdk/shared/transport.js';
import type { JSONRPCMessage, MessageExtraInfo } from '@modelcontextprotocol/sdk/types.js';
import { BudgetError, DEFAULT_MAX_MESSAGE_BYTES, MAX_MESSAGE_BYTES_RANGE, type BudgetOptions } from '../../engine/index.js';
import { ResponseBudget, type ToolCatalogInput, type TruncationListener } from '../core/response-budget.js';
import { sharedContinuationStore, type ContinuationStore } from '../core/continuation-store.js';

/** Options of {@link withResultBudget}: budget limits, an observer, and the tool catalog. */
export interface ResultBudgetOptions extends BudgetOptions {
  /** Called for every response the budget changed (for logs and metrics). */
  onTruncated?: TruncationListener;
  /**
   * The tools as a `tools/list` result lists them (or that result's `tools` array): their output
   * schemas and annotations decide what a typed tool's bounded result becomes. Needed when this
   * transport never sends `tools/list` itself (stateless Streamable HTTP); learned from
   * `tools/list` responses otherwise. See {@link toolCatalogOf}. @default learned from tools/list
   */
  tools?: ToolCatalogInput;
  /**
   * Every message the server sends that is not a tool result (a request such as sampling, a
   * notification, a response to another method) passes whole up to this size and is never cut;
   * over it, a request is answered to the server with an error, a notification dropped and a
   * response withheld with an error, each reported through `onerror`. @default 1 MiB
   */
  maxMessageBytes?: number;
  /**
   * Where a cut result's original is kept so that the cut parts can be read through the reading
   * tool (`mcp_result_budget__read`, added to `tools/list` and answered by this transport), or
   * `false` for none (the notice then asks for less, as before). One store per process keeps the
   * process cap; each transport is one session of it. @default the process's store, default settings
   */
  continuation?: ContinuationStore | false;
}

class ResultBudgetTransport implements Transport {
  onclose?: (() => void) | undefined;
  onerror?: ((error: Error) => void) | undefined;
  onmessage?: (<T extends JSONRPCMessage>(message: T, extra?: MessageExtraInfo) => void) | undefined;

  private readonly budget: ResponseBudget;
  private closed = false;

  constructor(
    private readonly inner: Transport,
    options: ResultBudgetOptions,
  ) {
    const { onTruncated, tools, maxMessageBytes, continuation, ...limits } = options;
    const store = continuation === false ? undefined : (continuation ?? sharedContinuationStore());
    this.budget = new ResponseBudget(limits, onTruncated, tools, checkMessageCap(maxMessageBytes), store);
    // Chain what the application installed on the inner transport before connect().
    const appMessage = inner.onmessage;
    const appClose = inner.onclose;
    const appError = inner.onerror;
    inner.onmessage = (message, extra) => {
      const caller = extra?.authInfo?.clientId;
      // A call to the reading tool is answered here: the server never sees it.
      const local = this.budget.answerLocally(message, caller);
      if (local !== undefined) {
        local.then((answer) => this.inner.send(answer as JSONRPCMessage)).catch((e: unknown) => this.onerror?.(e instanceof Error ? e : new Error(String(e))));
        return;
      }
      this.budget.inbound(message, caller);
      appMessage?.(message, extra);
      this.onmessage?.(message, extra);
    };
    inner.onclose = () => {
      // Some transports report their close more than once (a linked pair closes both ends).
      if (this.closed) return;
      this.closed = true;
      this.budget.close();
      appClose?.();
      this.onclose?.();
    };
    inner.onerror = (error) => {
      appError?.(error);
      this.onerror?.(error);
    };
  }

  get sessionId(): string | undefined {
    return this.inner.sessionId;
  }

  setProtocolVersion(version: string): void {
    this.budget.useProtocolVersion(version);
    this.inner.setProtocolVersion?.(version);
  }

  start(): Promise<void> {
    return this.inner.start();
  }

  close(): Promise<void> {
    this.budget.close();
    return this.inner.close();
  }

  send(message: JSONRPCMessage, options?: TransportSendOptions): Promise<void> {
    // Classified by all its top-level keys, as the proxy does: a message that is both a request
    // and a response, or holds both `result` and `error`, never leaves unbounded.
    const r = this.budget.route(message);
    if (r.action === 'send') return this.inner.send(r.message as JSONRPCMessage, options);
    if (r.action === 'refuse') {
      this.onerror?.(new Error(`mcp-result-budget: replaced an invalid response to request ${JSON.stringify(r.id)} with an error: ${r.why}`));
      return this.inner.send(r.message as JSONRPCMessage, options);
    }
    if (r.action === 'answer-server') {
      // A server request over the cap on messages never reaches the client: the server gets its
      // error as if the client had answered, so it does not wait forever.
      this.onerror?.(new Error(`mcp-result-budget: answered the server's request ${JSON.stringify(r.id)} with an error and did not send it: ${r.why}`));
      queueMicrotask(() => this.onmessage?.(r.message as JSONRPCMessage));
      return Promise.resolve();
    }
    if (r.reason === 'over-cap') {
      this.onerror?.(new Error(`mcp-result-budget: dropped ${r.why ?? 'a notification over the cap on messages'}`));
      return Promise.resolve();
    }
    // A response that answers nothing pending (a duplicate, an answer to a cancelled request)
    // could still be taken, unbounded, by a lenient client, so it is not sent.
    const what = r.reason === 'unmatched' ? 'no pending request has that id' : `it is not a valid JSON-RPC message (${r.why ?? 'invalid'})`;
    this.onerror?.(new Error(`mcp-result-budget: dropped a response to request ${JSON.stringify(r.id)}: ${what}`));
    return Promise.resolve();
  }
}

/** The cap on messages that are not tool results, checked against its range. */
function checkMessageCap(n: number | undefined): number {
  if (n === undefined) return DEFAULT_MAX_MESSAGE_BYTES;
  const { min, max } = MAX_MESSAGE_BYTES_RANGE;
  if (!Number.isInteger(n) || n < min || n > max) {
    throw new BudgetError('LIMIT_OUT_OF_RANGE', `Expected \`maxMessageBytes\` to be an integer from ${min} to ${max}, got ${String(n)}`, { option: 'maxMessageBytes', min, max, value: n });
  }
  return n;
}

/**
 * The decorated transport: the `Transport` face bounded, and every other member of the transport
 * it wraps (a Streamable HTTP transport's `handleRequest`, say) reaching that transport.
 */
export type BudgetedTransport<T extends Transport> = Transport & Omit<T, keyof Transport>;

/** The members the decorator answers itself; any other goes to the wrapped transport. */
const OWN = new Set<PropertyKey>(['onclose', 'onerror', 'onmessage', 'sessionId', 'setProtocolVersion', 'start', 'close', 'send']);

/**
 * Wrap a transport so that every `tools/call` result it sends is bounded. Works around stdio,
 * Streamable HTTP and in-memory transports alike; `extra` and `sessionId` pass through, and the
 * wrapped transport's own members stay reachable on the result (its type keeps them): an inbound
 * method such as `handleRequest` delivers to the decorator, which bounds what goes back.
 */
export function withResultBudget<T extends Transport>(transport: T, options: ResultBudgetOptions = {}): BudgetedTransport<T> {
  const budgeted = new ResultBudgetTransport(transport, options);
  return new Proxy(budgeted, {
    get(target, key) {
      if (OWN.has(key) || !(key in transport)) return Reflect.get(target, key, target);
      const v: unknown = Reflect.get(transport, key, transport);
      return typeof v === 'function' ? (v as (...a: unknown[]) => unknown).bind(transport) : v;
    },
    set(target, key, value) {
      return OWN.has(key) || !(key in transport) ? Reflect.set(target, key, value, target) : Reflect.set(transport, key, value, transport);
    },
    has(target, key) {
      return OWN.has(key) || key in transport || key in target;
    },
  }) as unknown as BudgetedTransport<T>;
}

/** The part of an SDK `McpServer` that {@link toolCatalogOf} reads. */
export interface ToolListingServer {
  server: object;
}

/**
 * The `tools/list` result an SDK `McpServer` would send, for {@link ResultBudgetOptions.tools}.
 * It runs the server's own `tools/list` handler, so the output schemas are the JSON Schemas the
 * client validates against, whatever way the tools were registered. Call it after registering
 * the tools (and again after changing them).
 */
export async function toolCatalogOf(mcpServer: ToolListingServer): Promise<{ tools: unknown[] }> {
  // The SDK keeps request handlers in a private map; there is no public way to list tools
  // without a connected client.
  const handlers = (mcpServer.server as { _requestHandlers?: unknown })._requestHandlers;
  const handler = handlers instanceof Map ? (handlers.get('tools/list') as unknown) : undefined;
  if (typeof handler !== 'function') {
    throw new TypeError('toolCatalogOf: the server has no `tools/list` handler; register its tools first');
  }
  const controller = new AbortController();
  const result = (await (handler as (request: unknown, extra: unknown) => Promise<unknown>)(
    { method: 'tools/list', params: {} },
    { signal: controller.signal, requestId: 0, sendNotification: async () => undefined, sendRequest: async () => ({}) },
  )) as { tools?: unknown };
  return { tools: Array.isArray(result.tools) ? result.tools : [] };
}
