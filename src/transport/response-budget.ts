/**
 * The per-connection state shared by the transport decorator and the stdio proxy: which inbound
 * requests are awaiting a response, what each tool declared (from `tools/list`, or given up front),
 * the negotiated protocol version (from `initialize`), and how a response is rewritten.
 *
 * A response is matched to its request the way a client could match it (see
 * `RequestTable.match`): a response whose id is the string form of a numeric request id answers
 * that request for the SDK client, so it is bounded like an exact answer.
 */
import { boundJson } from '../engine/bound.js';
import { fitsWithinBudget } from '../engine/fits.js';
import type { BudgetOptions } from '../engine/limits.js';
import { resolveLimits, type ResolvedLimits } from '../engine/options.js';
import type { BudgetReport } from '../engine/report.js';
import { isRequestId, RequestTable, type PendingRequest, type RequestId } from './request-ids.js';
import { enforceOutputSchema, ToolCatalog } from './typed-results.js';

/** Observer of responses the budget changed (for logs and metrics). */
export type TruncationListener = (info: { id: RequestId; tool: string | undefined; report: BudgetReport }) => void;

/** Methods whose responses carry a tool result. */
export const BOUNDED_METHODS: ReadonlySet<string> = new Set(['tools/call', 'tasks/result']);

type Json = Record<string, unknown>;

/** A `tools/list` result (`{ tools: [...] }`) or its `tools` array: what each tool declared. */
export type ToolCatalogInput = { tools: readonly unknown[] } | readonly unknown[];

export class ResponseBudget {
  readonly pending = new RequestTable();
  private readonly catalog = new ToolCatalog();
  private current: ResolvedLimits;

  constructor(
    private readonly options: BudgetOptions,
    private readonly onTruncated?: TruncationListener,
    tools?: ToolCatalogInput,
  ) {
    this.current = resolveLimits(options);
    // A catalog given up front serves transports that never see `tools/list` (stateless HTTP).
    if (tools !== undefined) this.catalog.learn(Array.isArray(tools) ? { tools } : tools);
  }

  /** Limits in force (they follow the negotiated protocol version). */
  get limits(): ResolvedLimits {
    return this.current;
  }

  /**
   * Look at a message from the client; remembers every request, so that a response can be told
   * from a duplicate or an unsolicited one.
   */
  inbound(message: unknown): void {
    const m = message as Json | null;
    if (m === null || typeof m !== 'object') return;
    const method = m.method;
    if (typeof method !== 'string') return;
    if (isRequestId(m.id)) {
      const name = method === 'tools/call' ? (m.params as { name?: unknown } | undefined)?.name : undefined;
      this.pending.remember(m.id, { method, tool: typeof name === 'string' ? name : undefined });
    } else if (method === 'notifications/cancelled') {
      const id = (m.params as { requestId?: unknown } | undefined)?.requestId;
      if (isRequestId(id)) this.pending.forget(id);
    }
  }

  useProtocolVersion(version: string): void {
    if (/^\d{4}-\d{2}-\d{2}$/.test(version) && version !== this.current.protocolVersion) {
      this.current = resolveLimits({ ...this.options, protocolVersion: version });
    }
  }

  /** The pending request id a response with `id` answers (see `RequestTable.match`). */
  answers(id: unknown): RequestId | undefined {
    return isRequestId(id) ? this.pending.match(id) : undefined;
  }

  /**
   * The message to send in place of `message` (a message from the server). Returns the same
   * object when nothing changes, so callers can pass the original bytes on. A response that
   * answers nothing pending is returned as it is: callers decide (the proxy drops it).
   */
  outbound(message: unknown): unknown {
    const m = message as Json | null;
    if (m === null || typeof m !== 'object' || 'method' in m) return message;
    const key = this.answers(m.id);
    const request = key === undefined ? undefined : this.pending.take(key);
    return request === undefined ? message : this.rewrite(m, request);
  }

  /** A JSON-RPC error that answers no request (its id is `null` or missing): bounded as an error. */
  boundError(m: Json): Json {
    if (fitsWithinBudget(m.error, this.current, 'error')) return m;
    return { ...m, error: JSON.parse(boundJson(m.error, this.current, 'error').json) as unknown };
  }

  private rewrite(m: Json, request: PendingRequest): Json {
    if (request.method === 'tools/list') {
      this.catalog.learn(m.result);
      return m;
    }
    if (request.method === 'initialize') {
      const v = (m.result as { protocolVersion?: unknown } | undefined)?.protocolVersion;
      if (typeof v === 'string') this.useProtocolVersion(v);
      return m;
    }
    if (!BOUNDED_METHODS.has(request.method)) return m;
    const id = m.id as RequestId;
    const limits = this.current;
    if ('error' in m) {
      // Perf: a response that fits is passed on untouched, measured without serializing it.
      if (fitsWithinBudget(m.error, limits, 'error')) return m;
      const out = boundJson(m.error, limits, 'error');
      if (out.report !== undefined) this.onTruncated?.({ id, tool: request.tool, report: out.report });
      return { ...m, error: JSON.parse(out.json) as unknown };
    }
    if (fitsWithinBudget(m.result, limits, 'result')) return m;
    const out = boundJson(m.result, limits, 'result');
    if (out.unchanged) return m;
    return { ...m, result: this.typed(request, m.result as Json, JSON.parse(out.json) as Json, out.report, id) };
  }

  /** Apply the typed-result policy to a bounded result and report it. */
  typed(request: PendingRequest, original: Json, bounded: Json, report: BudgetReport | undefined, id: RequestId): Json {
    if (report === undefined) return bounded;
    let result = bounded;
    const tool = request.tool === undefined ? undefined : this.catalog.get(request.tool);
    if (tool !== undefined && request.tool !== undefined) {
      result = enforceOutputSchema(request.tool, tool, original, bounded, report, this.current.maxResultBytes);
    }
    this.onTruncated?.({ id, tool: request.tool, report });
    return result;
  }
}
