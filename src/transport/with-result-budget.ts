/**
 * `withResultBudget(transport)`: a Transport decorator for servers built on the MCP SDK. Every
 * response to a `tools/call` (and `tasks/result`) leaves through the result budget, whatever the
 * handler did: `server.connect(withResultBudget(new StdioServerTransport()))`.
 *
 * The SDK sends responses with `transport.send(message)` and no related request id, so the
 * decorator remembers which inbound request ids were `tools/call` (keyed by type: `1` ≠ `"1"`,
 * and `0` is valid), forgets them on `notifications/cancelled` and on close, and learns each tool's
 * output schema and annotations from the `tools/list` responses it sends.
 */
import type { Transport, TransportSendOptions } from '@modelcontextprotocol/sdk/shared/transport.js';
import type { JSONRPCMessage, MessageExtraInfo } from '@modelcontextprotocol/sdk/types.js';
import type { BudgetOptions } from '../engine/limits.js';
import { isRequestId } from './request-ids.js';
import { ResponseBudget, type TruncationListener } from './response-budget.js';

/** Options of {@link withResultBudget}: budget limits plus an observer. */
export interface ResultBudgetOptions extends BudgetOptions {
  /** Called for every response the budget changed (for logs and metrics). */
  onTruncated?: TruncationListener;
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
    const { onTruncated, ...limits } = options;
    this.budget = new ResponseBudget(limits, onTruncated);
    // Chain what the application installed on the inner transport before connect().
    const appMessage = inner.onmessage;
    const appClose = inner.onclose;
    const appError = inner.onerror;
    inner.onmessage = (message, extra) => {
      this.budget.inbound(message);
      appMessage?.(message, extra);
      this.onmessage?.(message, extra);
    };
    inner.onclose = () => {
      // Some transports report their close more than once (a linked pair closes both ends).
      if (this.closed) return;
      this.closed = true;
      this.budget.pending.clear();
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
    this.budget.pending.clear();
    return this.inner.close();
  }

  send(message: JSONRPCMessage, options?: TransportSendOptions): Promise<void> {
    const m = message as { id?: unknown };
    // Perf: only responses with a remembered id are looked at.
    if (isRequestId(m.id) && this.budget.pending.peek(m.id) !== undefined) {
      return this.inner.send(this.budget.outbound(message) as JSONRPCMessage, options);
    }
    return this.inner.send(message, options);
  }
}

/**
 * Wrap a transport so that every `tools/call` result it sends is bounded. Works around stdio,
 * Streamable HTTP and in-memory transports alike; `extra` and `sessionId` pass through.
 */
export function withResultBudget<T extends Transport>(transport: T, options: ResultBudgetOptions = {}): Transport {
  return new ResultBudgetTransport(transport, options);
}
