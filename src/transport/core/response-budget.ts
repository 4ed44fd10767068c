/**
 * The per-connection state shared by the transport decorator and the stdio proxy: which inbound
 * requests are awaiting a response, what each tool declared (from `tools/list`, or given up front),
 * the negotiated protocol version (from `initialize`), and how a response is rewritten.
 *
 * A response is matched to its request the way a client could match it (see
 * `RequestTable.match`): a response whose id is the string form of a numeric request id answers
 * that request for the SDK client, so it is bounded like an exact answer.
 */
import { boundJson, CONTINUATION_TOOL, DEFAULT_MAX_MESSAGE_BYTES, REPORT_KEY, fitsWithinBudget, isBudgetError, NUMERIC_LIMITS, resolveLimits, type BudgetOptions, type BudgetReport, type ContinuationOffer, type ResolvedLimits } from '../../engine/index.js';
import { classifyMessage, errorMessage, INTERNAL_ERROR, INVALID_REQUEST, RESPONSE_TOO_LARGE } from './jsonrpc-errors.js';
import { isRequestId, RequestTable, type PendingRequest, type RequestId } from './request-ids.js';
import { enforceOutputSchema, ToolCatalog } from './typed-results.js';
import { attachOffer, ConnectionContinuation, isReadCall, limitsWithOfferRoom, offerIn } from './continuation.js';
import { isObject } from './continuation-plan.js';
import { ERROR_META_KEY } from '../../shared/meta.js';
import type { ContinuationStore } from './continuation-store.js';
import type { HeldBytes, SpillWriter } from './continuation-spill.js';

/**
 * Observer of responses the budget changed (for logs and metrics). Sizes are measured only when a
 * listener is installed. `bytesAfter`: the UTF-8 bytes of the result sent (exact). `bytesBefore`:
 * the bytes of the original result when it was held whole (exact); for a response bounded while it
 * streamed, the bytes of the whole response line as read (so a few dozen bytes of envelope more).
 */
export type TruncationListener = (info: { id: RequestId; tool: string | undefined; report: BudgetReport; bytesBefore?: number; bytesAfter?: number }) => void;

/** Methods whose responses carry a tool result. */
export const BOUNDED_METHODS: ReadonlySet<string> = new Set(['tools/call', 'tasks/result']);

type Json = Record<string, unknown>;

/** What to do with one message from the server (see {@link ResponseBudget.route}). */
export type Routing =
  /** Send this (the very object given when nothing changed). */
  | { action: 'send'; message: unknown }
  /**
   * Send nothing: a response that answers nothing pending, an invalid message naming no pending
   * request, or a notification over the cap on messages (`over-cap`).
   */
  | { action: 'drop'; reason: 'unmatched' | 'invalid' | 'over-cap'; id: unknown; why?: string }
  /** A server request over the cap on messages: never sent to the client; `message`, an error, answers it to the server. */
  | { action: 'answer-server'; id: RequestId; message: Json; why: string }
  /** An invalid answer to pending request `id`: send `message`, an error, in its place. */
  | { action: 'refuse'; id: RequestId; message: Json; why: string };

/** Whom a valid response answers (see {@link ResponseBudget.claim}). */
export type Claim = { kind: 'request'; key: RequestId; request: PendingRequest } | { kind: 'orphan-error' } | { kind: 'unmatched' };

/** The members a response may carry; any other top-level key is dropped like a non-standard field. */
const RESPONSE_KEYS: ReadonlySet<string> = new Set(['jsonrpc', 'id', 'result', 'error']);

/** A response with only its standard members (the same object when it has no other). */
function responseOnly(m: Json): Json {
  // Perf: the common case (only standard members) settled by a for-in, which reads the object's
  // enum cache and builds no key array, and by comparing with the four names (a `Set` lookup costs
  // more). for-in also visits inherited members, so anything else is decided from `Object.keys`.
  let standard = true;
  for (const k in m) {
    if (k !== 'jsonrpc' && k !== 'id' && k !== 'result' && k !== 'error') {
      standard = false;
      break;
    }
  }
  if (standard) return m;
  const keys = Object.keys(m);
  if (keys.every((k) => RESPONSE_KEYS.has(k))) return m;
  const out: Json = {};
  for (const k of keys) if (RESPONSE_KEYS.has(k)) out[k] = m[k];
  return out;
}

/** Why a message is not a valid request, notification or response. */
export function invalidWhy(m: unknown): string {
  if (!isObject(m)) return 'not a JSON object';
  const answers = 'result' in m || 'error' in m;
  if ('method' in m && answers) return 'it has a method as well as a result or error';
  if ('result' in m && 'error' in m) return 'it has both a result and an error';
  return 'it has neither a result nor an error';
}

/** The error that answers pending request `id` in place of an invalid response. */
function refusal(id: RequestId, why: string): Routing {
  const text = `The MCP server's answer to this request is not a valid JSON-RPC response (${why}), so it was withheld.`;
  return { action: 'refuse', id, why, message: errorMessage(id, INTERNAL_ERROR, text) };
}

/** A `tools/list` result (`{ tools: [...] }`) or its `tools` array: what each tool declared. */
export type ToolCatalogInput = { tools: readonly unknown[] } | readonly unknown[];

export class ResponseBudget {
  readonly pending = new RequestTable();
  private readonly catalog = new ToolCatalog();
  private current: ResolvedLimits;
  /** What the budget cuts is kept and readable through the reading tool (absent: `--no-continuation`). */
  private readonly continuation: ConnectionContinuation | undefined;

  constructor(
    private readonly options: BudgetOptions,
    private readonly onTruncated?: TruncationListener,
    tools?: ToolCatalogInput,
    /** The cap on every message from the server that is not a tool result (see {@link route}). */
    readonly maxMessageBytes: number = DEFAULT_MAX_MESSAGE_BYTES,
    /** Where cut results are kept for their continuation; undefined: none is offered. */
    continuation?: ContinuationStore,
  ) {
    this.current = resolveLimits(options);
    this.continuation = continuation === undefined || !continuation.settings.enabled ? undefined : new ConnectionContinuation(continuation);
    // A catalog given up front serves transports that never see `tools/list` (stateless HTTP).
    if (tools !== undefined) this.catalog.learn(Array.isArray(tools) ? { tools } : tools);
  }

  /** Limits in force (they follow the negotiated protocol version). */
  get limits(): ResolvedLimits {
    return this.current;
  }

  /**
   * Limits for a line bounded while it streams (too long to hold, its id possibly last): the
   * budget decides in document order there and cannot bound the result again, so while a call to a
   * typed tool is pending, text blocks get at most a third of the content room, leaving the
   * structure the rest (structure before text; the in-memory path refits instead).
   */
  streamLimits(): ResolvedLimits {
    const base = this.streamBase();
    if (!this.typedPending()) return base;
    const share = Math.max(1, Math.floor((base.maxResultBytes - base.reserveBytes) / 3));
    if (base.maxTextBytes <= share && base.maxBlockBytes <= share) return base;
    const options: BudgetOptions = { notice: base.notice, protocolVersion: base.protocolVersion };
    for (const n of NUMERIC_LIMITS) options[n] = base[n];
    options.maxTextBytes = Math.min(base.maxTextBytes, share);
    options.maxBlockBytes = Math.min(base.maxBlockBytes, share);
    return resolveLimits(options);
  }

  /** The limits a streamed result is bounded within before the typed share: with a continuation, room for its offer is kept, as on the in-memory path. */
  streamBase(): ResolvedLimits {
    return this.continuation?.boundingLimits(this.current) ?? this.current;
  }

  /**
   * Where a line that streams is kept as it comes, for the continuation of its result; undefined
   * when none is offered (or the spill directory cannot be made: then `warn` says why).
   */
  spillWriter(warn: (text: string) => void): SpillWriter | undefined {
    if (this.continuation === undefined || !this.continuation.active) return undefined;
    try {
      return this.continuation.store.writer();
    } catch (e) {
      if (!isBudgetError(e)) throw e;
      warn(e.message);
      return undefined;
    }
  }

  /**
   * The continuation of a result that streamed in (`held`: the whole response line as read),
   * written into `result` (its bounded form, typed policy applied); `result` when none is offered.
   */
  offerHeld(held: Promise<HeldBytes>, result: Json, request: PendingRequest): Promise<Json> {
    if (this.continuation === undefined) {
      held.then((h) => h.release(), () => undefined);
      return Promise.resolve(result);
    }
    return this.continuation.offerHeld(held, '/result', result, this.current, request.caller);
  }

  /** A call to a typed tool is pending. A long line decides from this when it starts, since its id may come last. */
  typedPending(): boolean {
    return this.pending.ids().some((id) => {
      const name = this.pending.peek(id)?.tool;
      return name !== undefined && this.catalog.get(name)?.validate !== undefined;
    });
  }

  /**
   * A client message this connection answers itself: a call to the reading tool, answered with the
   * part it asks for (never passed on to the server). Undefined for every other message.
   * `caller`: who asked, when the transport knows.
   */
  answerLocally(message: unknown, caller?: string): Promise<Json> | undefined {
    const c = this.continuation;
    if (c === undefined || !c.active || !isReadCall(message)) return undefined;
    return c.answer(message, this.current, caller);
  }

  /** The connection closed: requests waiting are forgotten, and the continuations it was given end. */
  close(): void {
    this.pending.clear();
    this.continuation?.close();
  }

  /**
   * Look at a message from the client; remembers every request, so that a response can be told
   * from a duplicate or an unsolicited one. `caller`: who sent it, when the transport knows.
   */
  inbound(message: unknown, caller?: string): void {
    const m = message as Json | null;
    if (m === null || typeof m !== 'object') return;
    const method = m.method;
    if (typeof method !== 'string') return;
    if (isRequestId(m.id)) {
      const name = method === 'tools/call' ? (m.params as { name?: unknown } | undefined)?.name : undefined;
      this.pending.remember(m.id, { method, tool: typeof name === 'string' ? name : undefined, caller });
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
   * What to do with one message from the server, classified by all of its top-level keys
   * (`classifyMessage`). A response that answers a pending request is sent with only its standard
   * members (`jsonrpc`, `id`, `result`, `error`), bounded when it answers a tool call; the same
   * object comes back when nothing changed, so callers can pass the original bytes on. A response
   * that answers nothing pending is dropped, except an error naming no request (`id` null or
   * missing), which is bounded and sent. An invalid message (both a request and a response, both
   * `result` and `error`, neither, or a response the budget cannot read) never passes: the pending
   * request its id names is answered with an error instead, so no result goes out unbounded and no
   * request is left waiting.
   *
   * Every other message is held to one stated cap, {@link maxMessageBytes}, and never cut (a cut
   * would change what it asks or says): a server request over it is answered to the server with an
   * error and never reaches the client, a notification over it is dropped, a response to another
   * method over it is withheld with an error. `bytes`: the message's size as read, when known (it
   * is measured otherwise, only for messages that are not tool results).
   */
  route(message: unknown, bytes?: number): Routing {
    const kind = classifyMessage(message);
    if (kind === 'request' || kind === 'notification') {
      const size = bytes ?? jsonBytes(message);
      if (size <= this.maxMessageBytes) return { action: 'send', message };
      const m = message as Json;
      const why = `${size} bytes, over the ${this.maxMessageBytes}-byte cap on messages that are not tool results`;
      if (kind === 'notification') return { action: 'drop', reason: 'over-cap', id: undefined, why: `a ${String(m.method)} notification of ${why}` };
      const text = `mcp-budget: the ${String(m.method)} request (${why}) was not passed to the client. Send less, or raise --max-message-bytes.`;
      return { action: 'answer-server', id: m.id as RequestId, why, message: errorMessage(m.id as RequestId, INVALID_REQUEST, text) };
    }
    const m = message as Json;
    if (kind === 'invalid') return this.refuse(isObject(m) ? m.id : undefined, invalidWhy(m));
    const to = this.claim(m.id, !('result' in m));
    if (to.kind === 'unmatched') return { action: 'drop', reason: 'unmatched', id: m.id };
    if (to.kind === 'orphan-error') {
      try {
        return { action: 'send', message: this.boundError(responseOnly(m)) };
      } catch (e) {
        return { action: 'drop', reason: 'invalid', id: m.id, why: (e as Error).message };
      }
    }
    if (!BOUNDED_METHODS.has(to.request.method)) {
      const size = bytes ?? jsonBytes(m);
      if (size > this.maxMessageBytes) return this.withheld(to.key, to.request.method, size);
    }
    try {
      return { action: 'send', message: this.rewrite(responseOnly(m), to.request) };
    } catch (e) {
      return refusal(to.key, (e as Error).message);
    }
  }

  /** The error that answers request `id` in place of a response to `method` too large to pass (and not a tool result). */
  withheld(id: RequestId, method: string, size: number): Routing & { action: 'refuse' } {
    const why = `the ${size}-byte response to ${method} is over the ${this.maxMessageBytes}-byte cap on messages that are not tool results`;
    const text = `The MCP server's response (${size} bytes) is over mcp-budget's ${this.maxMessageBytes}-byte cap on messages that are not tool results, so it was withheld. Ask for less (use paging or filters).`;
    return { action: 'refuse', id, why, message: errorMessage(id, RESPONSE_TOO_LARGE, text) };
  }

  /**
   * Whom a valid response answers: the one rule of routing, called by the parsed path
   * ({@link route}) and by the streamed one (a line too long to hold, read by its envelope facts).
   * `id` is the response's id (`undefined` when it has none); `errorOnly`: it carries no `result`.
   * A response naming a pending request takes it (it is answered now, once); an error naming no
   * request (`id` null or absent) is an orphan error, sent bounded; anything else is unmatched
   * (a duplicate, a late answer to a cancelled request, or unsolicited) and is dropped.
   */
  claim(id: unknown, errorOnly: boolean): Claim {
    // Perf: an answer under the very id it was asked with (the common case) costs one lookup;
    // `match` would return that id first too.
    const exact = isRequestId(id) ? this.pending.take(id) : undefined;
    if (exact !== undefined) return { kind: 'request', key: id as RequestId, request: exact };
    const key = this.answers(id);
    if (key !== undefined) return { kind: 'request', key, request: this.pending.take(key)! };
    return (id === null || id === undefined) && errorOnly ? { kind: 'orphan-error' } : { kind: 'unmatched' };
  }

  /**
   * An invalid message that may name a pending request: that request is answered with an error
   * (and forgotten); with no pending request it is dropped.
   */
  refuse(id: unknown, why: string): Routing {
    const key = this.answers(id);
    if (key === undefined) return { action: 'drop', reason: 'invalid', id, why };
    this.pending.take(key);
    return refusal(key, why);
  }

  /** A JSON-RPC error that answers no request (its id is `null` or missing): bounded as an error. */
  boundError(m: Json): Json {
    const out = boundJson(m.error, this.current, 'error');
    return out.unchanged ? m : { ...m, error: JSON.parse(out.json) as unknown };
  }

  private rewrite(m: Json, request: PendingRequest): Json {
    if (request.method === 'tools/list') {
      this.catalog.learn(m.result);
      if (this.continuation === undefined) return m;
      const listed = this.continuation.listTools(m.result);
      return listed === m.result ? m : { ...m, result: listed };
    }
    if (request.method === 'initialize') {
      const v = (m.result as { protocolVersion?: unknown } | undefined)?.protocolVersion;
      if (typeof v === 'string') this.useProtocolVersion(v);
      return m;
    }
    if (!BOUNDED_METHODS.has(request.method)) return m;
    const id = m.id as RequestId;
    const limits = this.current;
    // Perf: a response that fits is passed on as the very object it was, checked without being
    // serialized (the transport serializes it; `fitsWithinBudget` serializes only a value near a
    // bound). A response that does not fit is checked again by `boundJson`, which stops at the
    // first bound broken.
    if ('error' in m) {
      if (fitsWithinBudget(m.error, limits, 'error')) return m;
      const out = boundJson(m.error, limits, 'error');
      if (out.unchanged) return m;
      if (out.report !== undefined && this.onTruncated !== undefined) {
        this.onTruncated({ id, tool: request.tool, report: out.report, bytesBefore: byteLength(m.error), bytesAfter: Buffer.byteLength(out.json) });
      }
      return { ...m, error: JSON.parse(out.json) as unknown };
    }
    if (fitsWithinBudget(m.result, limits, 'result')) return m;
    // With a continuation, the result is bounded smaller by the most the continuation adds. A
    // result that already carries an offer keeps it only from an upstream that lists the reading
    // tool (so answers it, and none is offered here): an offer from one that does not is forged or
    // stale, and is replaced by this side's own (it switched this side's offers off for the rest
    // of the connection, and sent this side's handles upstream).
    const upstreamReads = this.continuation === undefined || !this.continuation.active;
    const prior = upstreamReads ? offerIn(m.result) : undefined;
    const reduced = prior !== undefined ? limitsWithOfferRoom(limits) : this.continuation?.boundingLimits(limits);
    const out = boundJson(m.result, reduced ?? limits, 'result');
    if (out.unchanged) return m;
    const bytesBefore = this.onTruncated === undefined ? undefined : byteLength(m.result);
    const offer = reduced === undefined ? undefined : { limits: reduced, original: m.result as Json, prior };
    return { ...m, result: this.typed(request, m.result as Json, JSON.parse(out.json) as Json, out.report, id, undefined, bytesBefore, offer) };
  }

  /**
   * Apply the typed-result policy to a bounded result and report it. `receiptFrom`: the original
   * structure a mutation's receipt is taken from, when `original` is not the original (streaming).
   * `bytesBefore`: the original's size for the listener, when known. `continuation`: the result
   * was bounded under these (smaller) limits so that a continuation of this original fits too
   * (`later`: the offer is made by the caller, from the original as it was held while it streamed).
   */
  typed(request: PendingRequest, original: Json, bounded: Json, report: BudgetReport | undefined, id: RequestId, receiptFrom?: unknown, bytesBefore?: number, continuation?: { limits: ResolvedLimits; original: Json; prior?: ContinuationOffer | undefined; later?: boolean }): Json {
    if (report === undefined) return bounded;
    if (request.tool === CONTINUATION_TOOL) {
      // An upstream's reading tool answered a part larger than this layer's budget: a part cut
      // again would rebuild a wrong original, and nothing would say so.
      return {
        content: [{ type: 'text', text: `CONTINUATION_BAD_READ: the part the server's \`${CONTINUATION_TOOL}\` answered is larger than this proxy's result budget, so it was not passed on cut. Give this proxy a budget at least as large as the server's own (--max-bytes), then read again.` }],
        isError: true,
        _meta: { [ERROR_META_KEY]: { code: 'CONTINUATION_BAD_READ' } },
      };
    }
    let result = bounded;
    const limits = continuation?.limits ?? this.current;
    const tool = request.tool === undefined ? undefined : this.catalog.get(request.tool);
    if (tool !== undefined && request.tool !== undefined) {
      const from = receiptFrom === undefined ? original.structuredContent : receiptFrom;
      result = enforceOutputSchema(request.tool, tool, original, bounded, report, limits.maxResultBytes, limits, from);
    }
    // An upstream's offer is kept only when this layer cut nothing more (the counts of the earlier
    // report are the counts now): on a result cut further, its positions do not count what was cut
    // here, and reading it back would rebuild a wrong original. The notice then asks for less.
    if (continuation?.prior !== undefined) {
      const earlier = (isObject(original._meta) ? original._meta[REPORT_KEY] : undefined) as BudgetReport | undefined;
      if (earlier !== undefined && earlier.omitted_count === report.omitted_count) result = attachOffer(result, continuation.prior, this.current);
    } else if (continuation !== undefined && this.continuation !== undefined && !continuation.later) {
      result = this.continuation.offer(continuation.original, result, this.current, request.caller);
    }
    if (this.onTruncated !== undefined) {
      this.onTruncated({ id, tool: request.tool, report, ...(bytesBefore === undefined ? {} : { bytesBefore }), bytesAfter: byteLength(result) });
    }
    return result;
  }
}

/** UTF-8 bytes of a message as JSON (measured for messages that are not tool results, and for a truncation listener). */
function jsonBytes(v: unknown): number {
  return Buffer.byteLength(JSON.stringify(v) ?? '');
}

/** UTF-8 bytes of a value as JSON (only measured for a truncation listener). */
function byteLength(v: unknown): number {
  return Buffer.byteLength(JSON.stringify(v) ?? '');
}
