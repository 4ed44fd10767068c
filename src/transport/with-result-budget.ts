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
import { boundJson } from '../engine/bound.js';
import { fitsWithinBudget } from '../engine/fits.js';
import type { BudgetOptions } from '../engine/limits.js';
import { resolveLimits, type ResolvedLimits } from '../engine/options.js';
import type { BudgetReport } from '../engine/report.js';
import { isRequestId, RequestTable, type PendingRequest } from './request-ids.js';
import { enforceOutputSchema, ToolCatalog } from './typed-results.js';

/** Options of {@link withResultBudget}: budget limits plus an observer. */
export interface ResultBudgetOptions extends BudgetOptions {
  /** Called for every response the budget changed (for logs and metrics). */
  onTruncated?: (info: { id: string | number; tool: string | undefined; report: BudgetReport }) => void;
}

/** Methods whose responses carry a tool result. */
const BOUNDED_METHODS = new Set(['tools/call', 'tasks/result']);
/** Methods whose responses the decorator reads (and passes on unchanged). */
const WATCHED_METHODS = new Set(['tools/list', 'initialize']);

type Json = Record<string, unknown>;

class ResultBudgetTransport implements Transport {
  onclose?: (() => void) | undefined;
  onerror?: ((error: Error) => void) | undefined;
  onmessage?: (<T extends JSONRPCMessage>(message: T, extra?: MessageExtraInfo) => void) | undefined;

  private readonly pending = new RequestTable();
  private readonly catalog = new ToolCatalog();
  private limits: ResolvedLimits;
  private readonly options: BudgetOptions;
  private readonly onTruncated: ResultBudgetOptions['onTruncated'];
  private closed = false;

  constructor(
    private readonly inner: Transport,
    options: ResultBudgetOptions,
  ) {
    const { onTruncated, ...budget } = options;
    this.onTruncated = onTruncated;
    this.options = budget;
    this.limits = resolveLimits(budget);
    // Chain what the application installed on the inner transport before connect().
    const appMessage = inner.onmessage;
    const appClose = inner.onclose;
    const appError = inner.onerror;
    inner.onmessage = (message, extra) => {
      this.inbound(message);
      appMessage?.(message, extra);
      this.onmessage?.(message, extra);
    };
    inner.onclose = () => {
      // Some transports report their close more than once (a linked pair closes both ends).
      if (this.closed) return;
      this.closed = true;
      this.pending.clear();
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
    this.useProtocolVersion(version);
    this.inner.setProtocolVersion?.(version);
  }

  start(): Promise<void> {
    return this.inner.start();
  }

  close(): Promise<void> {
    this.pending.clear();
    return this.inner.close();
  }

  send(message: JSONRPCMessage, options?: TransportSendOptions): Promise<void> {
    const m = message as Json;
    if (!('method' in m) && isRequestId(m.id)) {
      const request = this.pending.take(m.id);
      if (request !== undefined) return this.inner.send(this.outbound(m, request) as JSONRPCMessage, options);
    }
    return this.inner.send(message, options);
  }

  private inbound(message: JSONRPCMessage): void {
    const m = message as Json;
    const method = m.method;
    if (typeof method !== 'string') return;
    if (isRequestId(m.id)) {
      if (BOUNDED_METHODS.has(method) || WATCHED_METHODS.has(method)) {
        const name = (m.params as { name?: unknown } | undefined)?.name;
        this.pending.remember(m.id, { method, tool: typeof name === 'string' ? name : undefined });
      }
    } else if (method === 'notifications/cancelled') {
      const id = (m.params as { requestId?: unknown } | undefined)?.requestId;
      if (isRequestId(id)) this.pending.forget(id);
    }
  }

  private useProtocolVersion(version: string): void {
    if (/^\d{4}-\d{2}-\d{2}$/.test(version) && version !== this.limits.protocolVersion) {
      this.limits = resolveLimits({ ...this.options, protocolVersion: version });
    }
  }

  /** The message to send in place of a response to `request`. */
  private outbound(m: Json, request: PendingRequest): Json {
    if (request.method === 'tools/list') {
      this.catalog.learn(m.result);
      return m;
    }
    if (request.method === 'initialize') {
      const v = (m.result as { protocolVersion?: unknown } | undefined)?.protocolVersion;
      if (typeof v === 'string') this.useProtocolVersion(v);
      return m;
    }
    const id = m.id as string | number;
    if ('error' in m) {
      // Perf: a result that fits is passed on untouched, measured without serializing it.
      if (fitsWithinBudget(m.error, this.limits, 'error')) return m;
      const out = boundJson(m.error, this.limits, 'error');
      if (out.report !== undefined) this.onTruncated?.({ id, tool: request.tool, report: out.report });
      return { ...m, error: JSON.parse(out.json) as unknown };
    }
    if (fitsWithinBudget(m.result, this.limits, 'result')) return m;
    const out = boundJson(m.result, this.limits, 'result');
    if (out.unchanged) return m;
    let result = JSON.parse(out.json) as Json;
    if (out.report !== undefined) {
      const tool = request.tool === undefined ? undefined : this.catalog.get(request.tool);
      if (tool !== undefined && request.tool !== undefined) {
        result = enforceOutputSchema(request.tool, tool, m.result as Json, result, out.report, this.limits.maxResultBytes);
      }
      this.onTruncated?.({ id, tool: request.tool, report: out.report });
    }
    return { ...m, result };
  }
}

/**
 * Wrap a transport so that every `tools/call` result it sends is bounded. Works around stdio,
 * Streamable HTTP and in-memory transports alike; `extra` and `sessionId` pass through.
 */
export function withResultBudget<T extends Transport>(transport: T, options: ResultBudgetOptions = {}): Transport {
  return new ResultBudgetTransport(transport, options);
}
