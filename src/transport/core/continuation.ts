/**
 * The continuation of one connection: a cut result's original kept in the store under a handle
 * bound to this connection's session (and the caller), the handle written into the report and the
 * notice, the reading tool listed in `tools/list`, and its calls answered here, never passed on.
 *
 * Room: a result that may get a continuation is bounded smaller by the most a continuation adds
 * (`continuationReserveBytes`), so with its continuation it is still within the budget.
 */
import { randomBytes } from 'node:crypto';
import {
  boundJson,
  BudgetError,
  CONTINUATION_LISTED,
  CONTINUATION_TOOL,
  continuationReserveBytes,
  HANDLE_CHARS,
  isBudgetError,
  LIMITS,
  MAX_POINTER_BYTES,
  NOTICE_KEY,
  NUMERIC_LIMITS,
  noticeText,
  REPORT_KEY,
  resolveLimits,
  type BudgetOptions,
  type BudgetReport,
  type ContinuationOffer,
  type ReadStart,
  type ResolvedLimits,
} from '../../engine/index.js';
import { ERROR_META_KEY } from '../../shared/meta.js';
import { JsonBytes } from './continuation-bytes.js';
import { planReadsHeld } from './continuation-plan-bytes.js';
import { isObject, planReads, withoutBudgetParts } from './continuation-plan.js';
import { readPart, readResult } from './continuation-read.js';
import type { HeldBytes } from './continuation-spill.js';
import type { ContinuationStore, StoredResult } from './continuation-store.js';

type Json = Record<string, unknown>;

/** Any JSON value, written with a type per branch (an empty schema is refused by strict schema checkers). */
const ANY_JSON = { anyOf: ['string', 'number', 'boolean', 'null', 'object', 'array'].map((type) => ({ type })) };

/** The reading tool as `tools/list` lists it. */
export const CONTINUATION_TOOL_DEFINITION: Json = Object.freeze({
  name: CONTINUATION_TOOL,
  title: 'Read what the result budget cut',
  description:
    'Reads the parts of a tool result that were cut to fit the context budget. Call it with the `handle` a truncation notice gives; ' +
    'each answer holds one part (`text` of a string, `items` of an array or `members` of an object) of the value at `path`, starting at ' +
    '`position` (UTF-8 bytes, items or members), and `next`: the arguments of the next call. Follow `next` until an answer has none. ' +
    'To put a part in place: the value at `path` becomes its first `position` bytes, items or members, followed by the part.',
  inputSchema: {
    type: 'object',
    properties: {
      handle: { type: 'string', description: 'The handle from the notice or the report.' },
      path: { type: 'string', description: 'JSON Pointer into the original result (from a `next` or the report); absent: the first cut part.' },
      position: { type: 'integer', minimum: 0, description: 'Where to start within that value: UTF-8 bytes, items or members.' },
    },
    required: ['handle'],
    additionalProperties: false,
  },
  outputSchema: {
    type: 'object',
    properties: {
      path: { type: 'string' },
      position: { type: 'integer', minimum: 0 },
      kind: { type: 'string', enum: ['string', 'array', 'object'] },
      text: { type: 'string' },
      items: { type: 'array' },
      members: { type: 'array', items: { type: 'object', properties: { key: { type: 'string' }, value: ANY_JSON }, required: ['key', 'value'], additionalProperties: false } },
      next_position: { type: 'integer', minimum: 0 },
      total: { type: 'integer', minimum: 0 },
      done: { type: 'boolean' },
      next: {
        type: 'object',
        properties: { handle: { type: 'string' }, path: { type: 'string' }, position: { type: 'integer', minimum: 0 } },
        required: ['handle', 'path', 'position'],
        additionalProperties: false,
      },
    },
    required: ['path', 'position', 'kind', 'next_position', 'total', 'done'],
    additionalProperties: false,
  },
  annotations: { readOnlyHint: true, idempotentHint: true, openWorldHint: false },
});

/** Is this client message a call to the reading tool (a `tools/call` request naming it)? */
export function isReadCall(message: unknown): message is Json & { id: string | number } {
  if (!isObject(message) || message.method !== 'tools/call') return false;
  if (typeof message.id !== 'string' && typeof message.id !== 'number') return false;
  return isObject(message.params) && message.params.name === CONTINUATION_TOOL;
}

export class ConnectionContinuation {
  /** This connection's session key: handles given here are read only here. */
  readonly session = randomBytes(16).toString('base64url');
  /** The upstream lists a tool of the reading tool's name: it is not shadowed, and nothing is offered. */
  private shadowed = false;
  /** The connection closed: an offer still being made keeps nothing. */
  private closed = false;

  constructor(readonly store: ContinuationStore) {}

  get active(): boolean {
    return !this.shadowed;
  }

  /**
   * The limits to bound a cut result with so that its continuation fits too; undefined when none
   * can be offered (an upstream answers the reading tool, or the budget is too small).
   */
  boundingLimits(limits: ResolvedLimits): ResolvedLimits | undefined {
    return this.active ? limitsWithOfferRoom(limits) : undefined;
  }

  /**
   * Keep `original` and write its continuation into `sent` (the bounded result as it would be
   * sent): the report gets a `continuation`, the notice says what to call. Returns `sent` as it
   * was when nothing can be offered (no report, or the result would no longer fit `limits`).
   */
  offer(original: Json, sent: Json, limits: ResolvedLimits, caller: string | undefined): Json {
    const meta = sent._meta;
    const report = isObject(meta) ? (meta[REPORT_KEY] as BudgetReport | undefined) : undefined;
    if (!this.active || !isObject(report)) return sent;
    const cap = this.store.resultCap;
    // Kept as its JSON, which is also the snapshot (a handler may change or share the object after
    // returning: what is read back is what was cut). Serialized only when it may be within the cap
    // (the walk stops early): a 200 MB result took 3 s and 490 MB to serialize. A larger one keeps
    // its beginning, and the offer says it is not whole.
    let json = heldBytes(original, 0, 32 * cap) <= 32 * cap ? jsonOf(original) : undefined;
    const complete = json !== undefined && Buffer.byteLength(json) <= cap;
    if (!complete) {
      try {
        json = JSON.stringify(beginningOf(original, cap));
      } catch (e) {
        if (isBudgetError(e)) return sent; // a cap below the smallest budget
        throw e;
      }
    }
    // Planned on the JSON's own reading, as the reading tool will see it (a member whose value
    // JSON drops is no member there).
    const kept = JSON.parse(json!) as Json;
    const starts = planReads(kept, withoutBudgetParts(sent, kept));
    if (starts.length === 0) return sent;
    let held: HeldBytes;
    try {
      held = this.store.hold(Buffer.from(json!));
    } catch (e) {
      if (!isBudgetError(e)) throw e;
      spillWarning(e);
      return sent;
    }
    const entry = this.store.put(this.session, caller, held, starts);
    return this.offerEntry(entry, sent, limits, complete);
  }

  /**
   * Keep an original that streamed in (its bytes already held; the result is the value at
   * `rootPath` in them, such as a response line's `/result`) and write its continuation into
   * `sent`, planned by reading the original where it is held.
   */
  async offerHeld(writing: HeldBytes | Promise<HeldBytes>, rootPath: string, sent: Json, limits: ResolvedLimits, caller: string | undefined): Promise<Json> {
    // Rejects when the bytes could not all be kept (a full disk): no offer, and the caller tells the operator why.
    const held = await writing;
    const meta = sent._meta;
    const report = isObject(meta) ? (meta[REPORT_KEY] as BudgetReport | undefined) : undefined;
    if (!this.active || !isObject(report)) {
      held.release();
      return sent;
    }
    let starts: ReadStart[];
    let rootAt = 0;
    try {
      const root = await new JsonBytes(held).node(rootPath);
      if (root === undefined) throw new BudgetError('CONTINUATION_BAD_READ', 'no result in the line', {});
      rootAt = root.start;
      // Only the first start now: the answer waits for no walk past the cut (a 1 GB text took a
      // second more). The rest are found when the handle is first read.
      starts = await planReadsHeld(new JsonBytes(held, rootAt), sent, 1);
    } catch (e) {
      held.release();
      if (isBudgetError(e)) return sent;
      throw e;
    }
    if (starts.length === 0) {
      held.release();
      return sent;
    }
    // The session may have closed while the line was kept or planned: nothing is kept for it.
    if (this.closed) {
      held.release();
      return sent;
    }
    const entry = this.store.put(this.session, caller, held, starts, rootAt);
    let planned: Promise<void> | undefined;
    entry.rest = () =>
      (planned ??= planReadsHeld(entry.reader, sent).then((all) => {
        entry.starts = all;
        entry.rest = undefined;
      }));
    return this.offerEntry(entry, sent, limits, true, true);
  }

  /** `more`: more parts than `entry.starts` may have been cut (they are found at the first read). */
  private offerEntry(entry: StoredResult, sent: Json, limits: ResolvedLimits, complete: boolean, more = false): Json {
    const starts = entry.starts;
    const listed = starts.filter((s) => Buffer.byteLength(JSON.stringify(s.path)) <= MAX_POINTER_BYTES).slice(0, CONTINUATION_LISTED);
    const offer: ContinuationOffer = {
      tool: CONTINUATION_TOOL,
      handle: entry.handle,
      expires_at: new Date(entry.expiresAt).toISOString().replace(/\.\d{3}Z$/, 'Z'),
      paths: listed,
      paths_capped: more || listed.length < starts.length,
      ...(complete ? {} : { complete: false }),
    };
    const out = attachOffer(sent, offer, limits);
    // No room for the offer: nothing refers to the entry, so it is let go now, not at its expiry.
    if (out === sent) this.store.discard(entry);
    return out;
  }

  /** The tools/list result with the reading tool appended on its last page (once, when the upstream does not list that name). */
  listTools(result: unknown): unknown {
    if (!isObject(result) || !Array.isArray(result.tools)) return result;
    if (result.tools.some((t) => isObject(t) && t.name === CONTINUATION_TOOL)) {
      this.shadowed = true;
      return result;
    }
    if (!this.active || (result.nextCursor !== undefined && result.nextCursor !== null)) return result;
    return { ...result, tools: [...result.tools, CONTINUATION_TOOL_DEFINITION] };
  }

  /** The JSON-RPC response to a call of the reading tool, answered here within `limits`. */
  async answer(message: Json & { id: string | number }, limits: ResolvedLimits, caller: string | undefined): Promise<Json> {
    return { jsonrpc: '2.0', id: message.id, result: await this.readResultOf(message.params, limits, caller) };
  }

  private async readResultOf(params: unknown, limits: ResolvedLimits, caller: string | undefined): Promise<Json> {
    try {
      const args = isObject(params) ? params.arguments : undefined;
      if (!isObject(args) || typeof args.handle !== 'string') {
        throw new BudgetError('CONTINUATION_BAD_READ', 'Expected `handle`, a string as the truncation notice gives it (with `path` and `position` from a `next`, or neither).', {});
      }
      for (const k of Object.keys(args)) {
        if (k !== 'handle' && k !== 'path' && k !== 'position') throw new BudgetError('CONTINUATION_BAD_READ', `Unknown argument \`${k.slice(0, 64)}\`: the accepted ones are handle, path and position.`, {});
      }
      if (args.path !== undefined && typeof args.path !== 'string') throw new BudgetError('CONTINUATION_BAD_READ', 'Expected `path` to be a JSON Pointer string, as a `next` gives it.', {});
      if (args.position !== undefined && typeof args.position !== 'number') throw new BudgetError('CONTINUATION_BAD_READ', 'Expected `position` to be a whole number, as a `next` gives it.', {});
      if (!this.active) throw new BudgetError('CONTINUATION_UNKNOWN', 'No continuation is offered on this connection.', {});
      const entry = this.store.get(args.handle, this.session, caller);
      return readResult(
        await entry.reader.exclusive(async () => {
          await entry.rest?.();
          return readPart(entry, args.path as string | undefined, args.position as number | undefined, limits);
        }),
      );
    } catch (e) {
      // Any failure is answered: a call the client made must not wait forever.
      const err = isBudgetError(e) ? e : new BudgetError('CONTINUATION_BAD_READ', `Reading the kept result failed (${String((e as Error)?.message ?? e).slice(0, 200)}). Call the original tool again.`, {});
      return { content: [{ type: 'text', text: `${err.code}: ${err.message}` }], isError: true, _meta: { [ERROR_META_KEY]: { code: err.code } } };
    }
  }

  /** The connection closed: its handles end. */
  close(): void {
    this.closed = true;
    this.store.dropSession(this.session);
  }
}

/**
 * The limits to bound a result with so that an offer fits beside it (the most an offer adds taken
 * from `maxResultBytes`, the scaled bounds kept within it); undefined when the budget is too small.
 */
export function limitsWithOfferRoom(limits: ResolvedLimits): ResolvedLimits | undefined {
  const options: BudgetOptions = { notice: limits.notice, protocolVersion: limits.protocolVersion };
  for (const n of NUMERIC_LIMITS) options[n] = limits[n];
  options.maxResultBytes = limits.maxResultBytes - continuationReserveBytes(limits);
  for (const n of NUMERIC_LIMITS) {
    if (n !== 'maxResultBytes' && LIMITS[n].scale !== undefined) options[n] = Math.min(options[n]!, options.maxResultBytes);
  }
  try {
    return resolveLimits(options);
  } catch {
    return undefined;
  }
}

/** A handle as a store makes it (16 random bytes, base64url), an expiry as an offer writes it, a pointer of plain key characters. */
const HANDLE = new RegExp(`^[A-Za-z0-9_-]{${HANDLE_CHARS}}$`);
const EXPIRY = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}Z$/;
const PLAIN_POINTER = /^(\/[A-Za-z0-9_.~-]{0,64}){0,16}$/;

/**
 * The offer an earlier pass wrote into this result's report (an upstream that bounds too), if any,
 * rebuilt from its fields as an offer has them: its words reach the notice this layer writes, so
 * an upstream's text can never pass for the budget's own (a handle of another form, an expiry that
 * is not a time, or a path of other characters is no offer; a path that is not plain is left out).
 */
export function offerIn(result: unknown): ContinuationOffer | undefined {
  if (!isObject(result) || !isObject(result._meta)) return undefined;
  const report = result._meta[REPORT_KEY];
  const c = isObject(report) ? report.continuation : undefined;
  if (!isObject(c) || c.tool !== CONTINUATION_TOOL || typeof c.handle !== 'string' || !HANDLE.test(c.handle)) return undefined;
  if (typeof c.expires_at !== 'string' || !EXPIRY.test(c.expires_at) || !Array.isArray(c.paths)) return undefined;
  const paths = c.paths
    .filter((p): p is ReadStart => isObject(p) && typeof p.path === 'string' && PLAIN_POINTER.test(p.path) && Number.isSafeInteger(p.position) && (p.position as number) >= 0)
    .map((p) => ({ path: p.path, position: p.position }))
    .slice(0, CONTINUATION_LISTED);
  return {
    tool: CONTINUATION_TOOL,
    handle: c.handle,
    expires_at: c.expires_at,
    paths,
    paths_capped: c.paths_capped === true || paths.length < c.paths.length,
    ...(c.complete === false ? { complete: false } : {}),
  };
}

/**
 * `sent` with `offer` written into its report and its notice (a notice block added to a typed
 * tool's guidance or receipt, which has none, when it fits); `sent` itself when it has no report
 * or the offer would not fit `limits`.
 */
export function attachOffer(sent: Json, offer: ContinuationOffer, limits: ResolvedLimits): Json {
  const meta = sent._meta;
  const report = isObject(meta) ? (meta[REPORT_KEY] as BudgetReport | undefined) : undefined;
  if (!isObject(report)) return sent;
  // A typed tool's guidance already names the arguments that narrow it under `continuation`: kept beside the offer.
  const prior = (report as { continuation?: unknown }).continuation;
  const withOffer: BudgetReport = { ...report, continuation: isObject(prior) ? ({ ...prior, ...offer } as ContinuationOffer) : offer };
  const out: Json = { ...sent, _meta: { ...(meta as Json), [REPORT_KEY]: withOffer } };
  const text = noticeText(withOffer);
  let added: Json | undefined;
  if (Array.isArray(sent.content)) {
    let noticed = false;
    out.content = sent.content.map((b) => {
      if (!(isObject(b) && isObject(b._meta) && b._meta[NOTICE_KEY] === true)) return b;
      noticed = true;
      return { ...b, text };
    });
    // A typed tool's guidance or receipt has no notice block: one is added when it fits, so the
    // model reads where the rest is.
    if (!noticed && limits.notice) {
      added = { ...out, content: [...(out.content as unknown[]), { type: 'text', _meta: { [NOTICE_KEY]: true }, text }] };
    }
  }
  // The budget's own report and notice are never judged as content (a result carrying them never
  // "fits": a later pass replaces them), so the whole is measured: the reserve guarantees it.
  for (const candidate of added === undefined ? [out] : [added, out]) {
    if (Buffer.byteLength(JSON.stringify(candidate)) <= limits.maxResultBytes) return candidate;
  }
  return sent;
}

/**
 * Bytes `value` holds in memory, estimated from above for V8 (an object's header and each of its
 * properties, an array's slots, a string's characters at one byte, or two beyond Latin-1, a
 * number's box), and never less
 * than its JSON (`jsonBytes`); the walk stops once past `stopAt`. Iterative: any depth.
 */
const TWO_BYTE = /[^\u0000-\u00ff]/;

export function heldBytes(value: unknown, jsonBytes: number, stopAt: number): number {
  let bytes = 0;
  const stack: unknown[] = [value];
  while (stack.length > 0 && bytes <= stopAt) {
    const v = stack.pop();
    if (typeof v === 'string') bytes += 24 + (TWO_BYTE.test(v) ? 2 : 1) * v.length;
    else if (typeof v === 'number') bytes += 16;
    else if (Array.isArray(v)) {
      bytes += 32 + 8 * v.length;
      if (bytes > stopAt) break; // a huge array is not pushed item by item to learn that
      for (const x of v) stack.push(x);
    } else if (v !== null && typeof v === 'object') {
      const keys = Object.keys(v);
      bytes += 64 + 24 * keys.length;
      if (bytes > stopAt) break;
      for (const k of keys) {
        bytes += 2 * k.length;
        stack.push((v as Json)[k]);
      }
    } else bytes += 8;
  }
  return Math.max(bytes, jsonBytes);
}

/** The JSON of `original`; undefined when it is over V8's string length. */
function jsonOf(original: Json): string | undefined {
  try {
    return JSON.stringify(original);
  } catch (e) {
    if (e instanceof RangeError) return undefined;
    throw e;
  }
}

/** An original that could not be kept: the result goes out without a continuation, and the operator is told why. */
function spillWarning(e: BudgetError): void {
  process.emitWarning(`mcp-budget: ${e.message}`, { code: e.code });
}

/** The beginning of a result too large to keep whole: bounded to `bytes` with no other bound in the way, its own report and notice removed. */
function beginningOf(original: Json, bytes: number): Json {
  const big: BudgetOptions = { maxResultBytes: bytes, notice: false, maxOmittedPaths: 0 };
  for (const n of NUMERIC_LIMITS) if (n !== 'maxResultBytes' && n !== 'maxOmittedPaths') big[n] = n === 'maxDepth' ? LIMITS.maxDepth.max : Math.min(LIMITS[n].max, bytes);
  const out = JSON.parse(boundJson(original, resolveLimits(big), 'result').json) as Json;
  return withoutBudgetParts(out, original);
}
