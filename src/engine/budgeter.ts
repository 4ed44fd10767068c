/**
 * The budgeter: every rule of the result budget, applied online to a stream of JSON events
 * (object/array start and end, key, string chunks, scalars). Two sources feed it: a walk over an
 * in-memory value and a tokenizer over bytes; both get the same decisions and the same output.
 *
 * Protocol for sources: a value-start call (`openObject`, `openArray`, `stringStart`, `scalar`)
 * and `key` return false when the value is omitted; the source then skips that value without
 * feeding its events. `stringChunk` returns false once the string is cut; the source may skip to
 * the string's end but still calls `stringEnd`. See `docs` in ARCHITECTURE.md.
 */
import { ValueCapture } from './capture.js';
import { BudgetError } from './errors.js';
import { ENVELOPE_KEYS, MAX_ENVELOPE_FIELD_BYTES, MAX_KEY_UNITS, MAX_POINTER_BYTES, MIN_CUT_BYTES, NOTICE_KEY, REPORT_KEY } from './limits.js';
import type { ResolvedLimits } from './options.js';
import { Output, type ChunkSink, type Mark } from './output.js';
import { childRole, exemptKey, startsCapture, strKind, type Container, type Role, type StrKind } from './roles.js';
import {
  ReportBuilder,
  escapePointerSegment,
  serializeNotice,
  serializeReport,
  type BudgetKind,
  type BudgetReport,
  type ReportMark,
} from './report.js';
import { cutString, escapeContent, escapedLength, utf8Length } from './wire.js';
import { MAX_MIRROR_CANDIDATES, rewriteMirror, summaryNeed, type MirrorCandidate } from './text-mirror.js';
import { Base64Check, looksOpaque, scalarType, ShapeTracker, type JsonType } from './shapes.js';

export type { RootKind } from './roles.js';
export { exemptKey } from './roles.js';
import type { RootKind } from './roles.js';

interface Tx {
  mark: Mark;
  report: ReportMark;
  textUsed: number;
  parentKept: number;
  candidates: number;
}

interface Frame {
  array: boolean;
  role: Role;
  depth: number;
  /** Index of the current child (arrays) — the segment of its pointer. */
  cur: number;
  /** Key of the current member (objects). */
  key: string;
  keyJson: string;
  kept: number;
  closed: BudgetKind | undefined;
  abandoned: boolean;
  tx: Tx | undefined;
  mirror: boolean;
  /** Members kept so far, for a block or an embedded resource (checked against its shape on close). */
  shape: ShapeTracker | undefined;
  /** The first bound that cut something inside this block (names the drop of an invalid block). */
  cutKind: BudgetKind | undefined;
  /** Inside `structuredContent`: `data` and `blob` strings there are opaque. */
  inStructure: boolean;
  /**
   * A block that does not fit, or its `_meta`, read only far enough to tell whether it is the
   * notice of an earlier pass (dropped silently) or a block to report as omitted when it closes.
   */
  probe: 'block' | 'meta' | undefined;
}

interface Str {
  kind: StrKind;
  mark: Mark;
  budget: number;
  limitKind: BudgetKind;
  used: number;
  usedRaw: number;
  cut: boolean;
  pending: string;
  first: number;
  contentStart: number;
  pin: Mark | undefined;
  /** The text budget was spent before this text began: cut, it goes with its block (an empty one stays). */
  dropIfCut: boolean;
  /** Validity of a base64 member (`data`, `blob`), checked as it streams. */
  b64: Base64Check | undefined;
  /** The value of a block's `type`, collected (it is bounded by `maxStringBytes`). */
  value: string | undefined;
}

interface Slot {
  index: number;
  comma: boolean;
  wrap: '' | '_meta' | 'data';
}

const ISERROR_RESERVE = ',"isError":false'.length;
/**
 * `,"_meta":{}`: part of the report reserve, handed to the result's own `_meta` when it opens.
 * While that `_meta` is open or once it kept a member, one byte of it stays reserved for the comma
 * the report then needs.
 */
const META_WRAPPER_BYTES = ',"_meta":{}'.length;
const OPEN_BRACE = 0x7b;

/** Event-driven budgeter for one result. Create one per result; call `finish()` at the end. */
export class Budgeter {
  readonly report: ReportBuilder;
  private readonly out: Output;
  private readonly frames: Frame[] = [];
  /** Index of the bounded root (result or error) in `frames`, or -1 before it opens. */
  private base = -1;
  private outside = 0;
  private closing = 0;
  private exhausted = false;
  private textUsed = 0;
  private isErrorReserved = false;
  /** Cut text blocks that may mirror the structure to come (see text-mirror.ts). */
  private candidates: MirrorCandidate[] = [];
  /** While the structure is bounded after candidates: where its JSON starts, bytes held for the summary. */
  private mirror: { from: number; reserve: number } | undefined;
  /** The structure's JSON in the output, once it closed, until the source's verdict. */
  private mirrorRange: { from: number; to: number } | undefined;
  /** `structuredContent` was seen: no more candidates. */
  private mirrorDone = false;
  private str: Str | undefined;
  private capture: ValueCapture | undefined;
  private captureFrame = -1;
  private prior: BudgetReport | undefined;
  private noticeSlot: Slot | undefined;
  private reportSlot: Slot | undefined;
  private finished = false;
  private sawErrorData = false;
  /** The `,"_meta":{…}` wrapper is part of the reserve until the result's own `_meta` opens. */
  private metaWrapperReserved = true;
  /** The result's own `_meta`: not seen, open, closed with no kept member, or closed with some. */
  private ownMeta: 'none' | 'open' | 'empty' | 'members' = 'none';
  /** A probed block turned out to be an earlier pass's notice. */
  private probeNotice = false;
  /** Index in `frames` of the open content block, or -1. */
  private openBlockAt = -1;

  constructor(
    private readonly limits: ResolvedLimits,
    private readonly rootKind: RootKind = 'auto',
    sink?: ChunkSink,
  ) {
    this.report = new ReportBuilder(limits);
    this.out = new Output(sink);
  }

  // ---------------------------------------------------------------- accounting

  /** Bytes still available for content. */
  private room(): number {
    return (
      this.limits.maxResultBytes -
      (this.out.bytes - this.outside) -
      this.closing -
      this.limits.reserveBytes -
      (this.isErrorReserved ? ISERROR_RESERVE : 0) -
      (this.mirror?.reserve ?? 0) +
      (this.metaWrapperReserved ? 0 : META_WRAPPER_BYTES - (this.ownMeta === 'open' || this.ownMeta === 'members' ? 1 : 0))
    );
  }

  private cost(piece: string): number {
    return utf8Length(piece);
  }

  private emit(piece: string, outside = false): void {
    const bytes = utf8Length(piece);
    this.out.write(piece, bytes);
    if (outside) this.outside += bytes;
  }

  private get top(): Frame | undefined {
    return this.frames[this.frames.length - 1];
  }

  // ---------------------------------------------------------------- report helpers

  /** Pointer to the current child of `frames[upTo]`, relative to the bounded root. */
  private pointer(upTo: number): string | undefined {
    let length = 0;
    for (let i = this.base; i <= upTo; i++) {
      const f = this.frames[i]!;
      length += 1 + (f.array ? String(f.cur).length : f.key.length);
      if (length > MAX_POINTER_BYTES) return undefined;
    }
    let p = '';
    for (let i = this.base; i <= upTo; i++) {
      const f = this.frames[i]!;
      p += '/' + (f.array ? String(f.cur) : escapePointerSegment(f.key));
    }
    return p;
  }

  private omit(kind: BudgetKind, at = this.frames.length - 1): void {
    if (this.base < 0 || at < this.base) return; // outside the bounded root: nothing to report
    const ob = this.openBlockAt;
    if (ob >= 0 && at >= ob && this.frames[ob]!.cutKind === undefined) this.frames[ob]!.cutKind = kind;
    this.report.add(kind, () => this.pointer(at));
  }

  /** Omit the current child of the top frame and close that frame: later siblings go too. */
  private omitAndClose(kind: BudgetKind): false {
    const f = this.top!;
    this.omit(kind);
    f.closed = kind;
    if (kind === 'result_bytes') this.spend();
    return false;
  }

  // ---------------------------------------------------------------- roles

  private childRole(parent: Frame, container: Container): Role | 'drop' | 'invalid' {
    return childRole(parent.role, parent.key, container);
  }

  private strKind(parent: Frame): StrKind {
    const kind = strKind(parent.role, parent.key);
    if (kind === 'generic' && parent.inStructure && !parent.array && (parent.key === 'data' || parent.key === 'blob')) return 'opaque';
    return kind;
  }

  /** Note a kept member of a block or resource, for the shape check when it closes. */
  private noteMember(parent: Frame, type: JsonType): void {
    if (parent.shape !== undefined) parent.shape.note(parent.key, type);
  }

  /** The value is dropped by its role: a field of the wrong type, or a content item that is no block. */
  private dropRole(role: 'drop' | 'invalid'): false {
    this.omit(role === 'drop' ? 'top_level_field' : 'invalid_block');
    return false;
  }

  private startsCapture(parent: Frame): boolean {
    return startsCapture(parent.role, parent.key);
  }

  // ---------------------------------------------------------------- gating

  /**
   * Common checks before a child value of `parent` is admitted: array index bookkeeping, closed
   * and abandoned containers, item counts, exhaustion. Returns false when the value is omitted.
   */
  private gate(parent: Frame, reserved: boolean): boolean {
    if (parent.array) {
      parent.cur++;
      if (parent.abandoned) return false;
      if (parent.closed !== undefined) {
        this.omit(parent.closed);
        return false;
      }
      if (parent.role !== 'content' && parent.kept >= this.limits.maxItems) return this.omitAndClose('array_items');
    }
    if (parent.role === 'envelope') return true;
    if (this.exhausted && !reserved) return this.omitAndClose('result_bytes');
    return true;
  }

  private prefix(parent: Frame): string {
    const sep = parent.kept > 0 ? ',' : '';
    return parent.array ? sep : sep + parent.keyJson + ':';
  }

  /** Omit a block that cannot be kept whole: roll back to its start and record it once. */
  private abandonBlock(kind: BudgetKind | undefined): false {
    let b = this.frames.length - 1;
    while (b >= 0 && this.frames[b]!.role !== 'block') b--;
    for (let i = b; i < this.frames.length; i++) this.frames[i]!.abandoned = true;
    return this.dropBlock(this.frames[b]!, b - 1, kind);
  }

  /** Roll the output back to the start of `block` (a child of `frames[parentAt]`) and record it once. */
  private dropBlock(block: Frame, parentAt: number, kind: BudgetKind | undefined): false {
    const tx = block.tx!;
    this.out.rollback(tx.mark);
    this.report.rollback(tx.report);
    this.textUsed = tx.textUsed;
    this.candidates.length = tx.candidates;
    this.frames[parentAt]!.kept = tx.parentKept;
    this.str = undefined;
    this.openBlockAt = -1;
    if (kind !== undefined) this.omit(kind, parentAt);
    if (kind === 'result_bytes') this.spend();
    return false;
  }

  // ---------------------------------------------------------------- containers

  openObject(): boolean {
    return this.open(false);
  }

  openArray(): boolean {
    return this.open(true);
  }

  private open(array: boolean): boolean {
    if (this.capture !== undefined) {
      this.capture.open(array);
      return true;
    }
    const parent = this.top;
    if (parent === undefined) return this.openRoot(array);
    if (parent.role === 'block' && parent.key === '_meta' && !array && !(parent.abandoned && parent.probe === undefined)) {
      // A block's `_meta` that cannot be written may still mark the block as an earlier notice.
      if (parent.probe !== undefined || parent.closed !== undefined || this.exhausted || this.cost(this.prefix(parent)) + 2 > this.room()) {
        this.pushProbe('meta');
        return true;
      }
    }
    if (parent.abandoned && !parent.array) return false;
    if (this.startsCapture(parent)) return this.beginCapture(array);
    const role = this.childRole(parent, array ? 'array' : 'object');
    // The result's own `_meta` will hold the report: it opens on the reserved wrapper bytes.
    const ownMeta = role === 'meta' && this.metaWrapperReserved;
    // A block is let past a spent budget only to be probed for an earlier notice (below).
    if (!this.gate(parent, ownMeta || role === 'block')) return false;
    if (role === 'drop' || role === 'invalid') return this.dropRole(role);
    const depth = parent.depth + 1;
    if (depth > this.limits.maxDepth) {
      if (parent.array) return this.omitAndClose('depth');
      this.omit('depth');
      return false;
    }
    const mark = role === 'block' ? this.out.mark() : undefined;
    const pre = this.prefix(parent);
    if (ownMeta) this.metaWrapperReserved = false;
    // The structure after cut JSON-looking text blocks: bounded first, with their bytes lent to it
    // (less what the summary needs); one of them is then rewritten (see text-mirror.ts).
    const mirror = role === 'structure' && !this.mirrorDone && this.candidates.length > 0;
    if (role === 'structure') this.mirrorDone = true;
    if (mirror) this.mirror = { from: -1, reserve: this.mirrorReserve() };
    if ((role === 'block' && this.exhausted) || this.cost(pre) + 2 > this.room()) {
      if (ownMeta) this.metaWrapperReserved = true;
      if (mirror) this.mirror = undefined;
      if (mark !== undefined) this.out.release(mark);
      if (role === 'block') {
        this.pushProbe('block');
        return true;
      }
      return this.omitAndClose('result_bytes');
    }
    const outside = parent.role === 'envelope';
    const parentKept = parent.kept;
    parent.kept++;
    if (mirror) {
      this.emit(pre, outside);
      this.mirror!.from = this.out.length;
      this.emit('{');
    } else if (outside) {
      this.emit(pre, true);
      this.emit(array ? '[' : '{');
    } else {
      this.emit(pre + (array ? '[' : '{'));
    }
    this.closing++;
    this.noteMember(parent, array ? 'array' : 'object');
    const f = this.push(array, role, depth);
    f.mirror = mirror;
    f.inStructure = role === 'structure' || parent.inStructure;
    if (role === 'block' || role === 'resource') f.shape = new ShapeTracker();
    if (role === 'block') this.openBlockAt = this.frames.length - 1;
    if (ownMeta) this.ownMeta = 'open';
    if (role === 'result' || role === 'error') this.enterRoot(f);
    if (mark !== undefined) {
      f.tx = {
        mark,
        report: this.report.mark(),
        textUsed: this.textUsed,
        parentKept,
        candidates: this.candidates.length,
      };
    }
    return true;
  }

  private push(array: boolean, role: Role, depth: number): Frame {
    const f: Frame = {
      array,
      role,
      depth,
      cur: -1,
      key: '',
      keyJson: '',
      kept: 0,
      closed: undefined,
      abandoned: false,
      tx: undefined,
      mirror: false,
      shape: undefined,
      cutKind: undefined,
      inStructure: false,
      probe: undefined,
    };
    this.frames.push(f);
    return f;
  }

  /** Open a probe frame: nothing of it is written; see {@link Frame.probe}. */
  private pushProbe(probe: 'block' | 'meta'): void {
    const f = this.push(false, probe === 'block' ? 'block' : 'blockmeta', 0);
    f.abandoned = true;
    f.probe = probe;
    this.closing++;
    this.probeNotice = false;
  }

  /** A probed block closed: unless it was an earlier notice, it is omitted and the budget is spent. */
  private endProbe(): void {
    if (this.probeNotice) return;
    this.omitAndClose('result_bytes');
  }

  /** A probed block `_meta` closed: an earlier notice goes silently, any other `_meta` did not fit. */
  private endMetaProbe(): void {
    const block = this.top!;
    if (block.probe !== undefined) return; // the probed block decides when it closes
    if (this.probeNotice) {
      this.abandonBlock(undefined);
      return;
    }
    this.omitAndClose('result_bytes');
  }

  private openRoot(array: boolean): boolean {
    if (array) throw new BudgetError('INVALID_RESULT', 'Expected a JSON object (a CallToolResult or a JSON-RPC response), got an array');
    const role: Role = this.rootKind === 'auto' ? 'auto' : this.rootKind;
    const envelope = role === 'envelope';
    this.emit('{', envelope);
    const f = this.push(false, role, envelope ? 0 : 1);
    if (!envelope) {
      this.closing++;
      if (role !== 'auto') this.enterRoot(f);
    }
    return true;
  }

  private enterRoot(f: Frame): void {
    this.base = this.frames.length - 1;
    this.isErrorReserved = f.role === 'result';
  }

  /** The root's first key decides whether it is a response envelope or a result. */
  private resolveAuto(f: Frame, firstKey: string): void {
    if (ENVELOPE_KEYS.has(firstKey)) {
      f.role = 'envelope';
      f.depth = 0;
      this.outside += 1;
      this.closing--;
    } else {
      f.role = 'result';
      this.enterRoot(f);
    }
  }

  closeObject(): void {
    this.close();
  }

  closeArray(): void {
    this.close();
  }

  private close(): void {
    if (this.capture !== undefined) {
      this.capture.close();
      if (this.capture.done) this.endCapture();
      return;
    }
    const f = this.frames.pop();
    if (f === undefined) throw new BudgetError('INVALID_RESULT', 'Unbalanced end of container');
    if (f.role === 'auto') {
      f.role = 'result';
      this.enterRoot(f);
    }
    if (f.role === 'envelope') {
      this.emit('}', true);
      return;
    }
    this.closing--;
    if (f.abandoned) {
      if (f.probe === 'block') this.endProbe();
      else if (f.probe === 'meta') this.endMetaProbe();
      return; // rolled back already: nothing of it remains in the output
    }
    switch (f.role) {
      case 'content':
        if (this.limits.notice) this.noticeSlot = { index: this.out.hole(), comma: f.kept > 0, wrap: '' };
        break;
      case 'meta':
      case 'errdata':
        if (this.frames.length - 1 === this.base) this.reportSlot = { index: this.out.hole(), comma: f.kept > 0, wrap: '' };
        if (f.role === 'meta' && this.ownMeta === 'open') this.ownMeta = f.kept > 0 ? 'members' : 'empty';
        break;
      case 'result':
        if (this.reportSlot === undefined) this.reportSlot = { index: this.out.hole(), comma: f.kept > 0, wrap: '_meta' };
        this.isErrorReserved = false;
        break;
      case 'error':
        // A non-object `data` gets no report (there is nowhere to put one without a second key).
        if (this.reportSlot === undefined && !this.sawErrorData) {
          this.reportSlot = { index: this.out.hole(), comma: f.kept > 0, wrap: 'data' };
        }
        break;
      case 'block':
        this.openBlockAt = -1;
        if (!f.shape!.blockOk()) {
          // A block the client's schema rejects (a required member missing, cut or of the wrong
          // type) is never sent: it goes whole, reported under the bound that cut it, if any.
          const byBudget = f.cutKind !== undefined && f.shape!.completeInInput();
          this.dropBlock(f, this.frames.length - 1, byBudget ? f.cutKind : 'invalid_block');
          return;
        }
        this.out.release(f.tx!.mark);
        break;
      case 'resource': {
        const block = this.top!;
        if (block.shape !== undefined) block.shape.resourceOk = f.shape!.resourceContentsOk();
        break;
      }
      default:
        break;
    }
    this.emit(f.array ? ']' : '}');
    if (f.mirror) this.endMirror();
  }

  // ---------------------------------------------------------------- keys

  /** An object member's key. False: the member is omitted and its value must be skipped. */
  key(name: string): boolean {
    if (this.capture !== undefined) {
      this.capture.key(name);
      return true;
    }
    const f = this.top!;
    if (f.role === 'auto') this.resolveAuto(f, name);
    f.key = name;
    f.shape?.seen.add(name);
    if (f.abandoned) return f.probe === 'block' ? name === '_meta' : f.probe === 'meta' && name === NOTICE_KEY;
    if (f.closed !== undefined && !(f.role === 'result' && name === 'isError') && !(f.role === 'block' && name === '_meta')) {
      this.omit(f.closed);
      return false;
    }
    if (f.role === 'error' && name === 'data') this.sawErrorData = true;
    switch (f.role) {
      case 'envelope':
        if (name === 'method' || name === 'params') {
          throw new BudgetError('INVALID_RESULT', 'Expected a JSON-RPC response, got a request or notification', { message: 'request' });
        }
        if (name !== 'result' && name !== 'error' && name !== 'id' && name !== 'jsonrpc') return false;
        break;
      case 'result':
        if (!this.limits.allowedFields.has(name)) {
          this.omit('top_level_field');
          return false;
        }
        break;
      case 'generic':
      case 'structure':
      case 'meta':
      case 'errdata':
      case 'blockmeta':
        if (this.startsCapture(f) || (f.role === 'blockmeta' && name === NOTICE_KEY)) break;
        if (f.kept >= this.limits.maxKeys) return this.omitAndClose('object_keys');
        break;
      default:
        break;
    }
    if (!exemptKey(f.role, name) && (name.length > this.limits.maxStringBytes || name.length > MAX_KEY_UNITS || escapedLength(name) > this.limits.maxStringBytes)) {
      this.omit('string_bytes');
      return false;
    }
    f.keyJson = JSON.stringify(name);
    return true;
  }

  // ---------------------------------------------------------------- scalars

  /** A number (as written), `true`, `false` or `null`. */
  scalar(raw: string): void {
    if (this.capture !== undefined) {
      this.capture.scalar(raw);
      if (this.capture.done) this.endCapture();
      return;
    }
    const parent = this.top;
    if (parent === undefined) throw new BudgetError('INVALID_RESULT', `Expected a JSON object, got ${raw.slice(0, 32)}`);
    if (parent.probe === 'meta' && raw === 'true') this.probeNotice = true;
    if (parent.abandoned && !parent.array) return;
    if (this.startsCapture(parent)) {
      this.beginCapture(undefined);
      this.capture!.scalar(raw);
      this.endCapture();
      return;
    }
    if (parent.role === 'blockmeta' && parent.key === NOTICE_KEY && raw === 'true') {
      // The notice an earlier pass appended: drop it silently; a fresh one is written at the end.
      this.abandonBlock(undefined);
      return;
    }
    const onIsError = parent.role === 'result' && parent.key === 'isError';
    const isError = onIsError && (raw === 'true' || raw === 'false');
    const role = onIsError && !isError ? 'drop' : this.childRole(parent, 'other');
    if (!this.gate(parent, isError)) return;
    if (role === 'drop' || role === 'invalid') {
      this.dropRole(role);
      return;
    }
    if (isError) this.isErrorReserved = false;
    const piece = this.prefix(parent) + raw;
    if (parent.role === 'envelope') {
      if (raw.length > MAX_ENVELOPE_FIELD_BYTES) throw this.envelopeTooLarge(parent.key);
      parent.kept++;
      this.emit(piece, true);
      return;
    }
    if (this.cost(piece) > this.room()) {
      this.omitAndClose('result_bytes');
      return;
    }
    parent.kept++;
    this.noteMember(parent, scalarType(raw));
    this.emit(piece);
  }

  private envelopeTooLarge(field: string): BudgetError {
    return new BudgetError(
      'INVALID_ENVELOPE',
      `JSON-RPC \`${field}\` is larger than ${MAX_ENVELOPE_FIELD_BYTES} bytes`,
      { field, max: MAX_ENVELOPE_FIELD_BYTES },
    );
  }

  // ---------------------------------------------------------------- strings

  /** Start of a string value. False: omitted, skip it (no chunks, no `stringEnd`). */
  stringStart(): boolean {
    if (this.capture !== undefined) {
      this.capture.stringStart();
      return true;
    }
    const parent = this.top;
    if (parent === undefined) throw new BudgetError('INVALID_RESULT', 'Expected a JSON object, got a string');
    if (parent.abandoned && !parent.array) return false;
    if (this.startsCapture(parent)) {
      this.beginCapture(undefined);
      this.capture!.stringStart();
      return true;
    }
    const role = parent.role === 'result' && parent.key === 'isError' ? 'drop' : this.childRole(parent, 'other');
    const kind = this.strKind(parent);
    if (!this.gate(parent, false)) return false;
    if (role === 'drop' || role === 'invalid') return this.dropRole(role);
    const l = this.limits;
    let limit: number;
    let limitKind: BudgetKind;
    if (kind === 'text') {
      const textLeft = l.maxTextBytes - this.textUsed;
      // Spent: an empty text still fits; any other goes with its block (see cutHere).
      limit = Math.max(0, Math.min(l.maxBlockBytes, textLeft));
      limitKind = l.maxBlockBytes <= textLeft ? 'text_block_bytes' : 'text_total_bytes';
    } else if (kind === 'envelope') {
      limit = MAX_ENVELOPE_FIELD_BYTES;
      limitKind = 'string_bytes';
    } else if (kind === 'atomic') {
      limit = Infinity;
      limitKind = 'binary_block';
    } else {
      limit = l.maxStringBytes;
      limitKind = 'string_bytes';
    }
    const mark = this.out.mark();
    const pre = this.prefix(parent) + '"';
    const quote = this.cost('"');
    if (kind !== 'envelope' && this.cost(pre) + quote > this.room()) {
      this.out.release(mark);
      if (kind === 'text') return this.abandonBlock('result_bytes');
      if (kind === 'atomic') return this.abandonBlock('binary_block');
      return this.omitAndClose('result_bytes');
    }
    parent.kept++;
    this.emit(pre, kind === 'envelope');
    let budget = limit;
    if (kind !== 'envelope') {
      const room = this.room() - quote;
      if (room < limit) {
        budget = room;
        limitKind = kind === 'atomic' ? 'binary_block' : 'result_bytes';
      }
    }
    this.str = {
      kind,
      mark,
      budget,
      limitKind,
      used: 0,
      usedRaw: 0,
      cut: false,
      pending: '',
      first: -1,
      contentStart: this.out.length,
      pin: kind === 'text' && parent.role === 'block' ? this.out.mark() : undefined,
      dropIfCut: kind === 'text' && l.maxTextBytes - this.textUsed <= 0,
      b64: kind === 'atomic' ? new Base64Check() : undefined,
      value: kind === 'opaque' && parent.role === 'block' && parent.key === 'type' ? '' : undefined,
    };
    return true;
  }

  /** A piece of the current string's content (decoded). False: cut, the rest may be skipped. */
  stringChunk(chunk: string): boolean {
    if (this.capture !== undefined) {
      this.capture.stringChunk(chunk);
      return true;
    }
    const s = this.str;
    if (s === undefined || s.cut) return false;
    let text = s.pending.length > 0 ? s.pending + chunk : chunk;
    s.pending = '';
    if (text.length === 0) return true;
    const last = text.charCodeAt(text.length - 1);
    if (last >= 0xd800 && last <= 0xdbff) {
      // Perf: hold a trailing high surrogate until the next chunk says whether it pairs.
      s.pending = text[text.length - 1]!;
      text = text.slice(0, -1);
      if (text.length === 0) return true;
    }
    return this.take(s, text);
  }

  private take(s: Str, text: string): boolean {
    if (s.first < 0) s.first = text.charCodeAt(0);
    if (s.value !== undefined && s.value.length <= 64) s.value += text.slice(0, 65);
    const left = s.budget - s.used;
    // Perf: a chunk whose worst case (7 bytes per unit) fits is escaped natively in one go.
    if (text.length * 7 <= left) {
      s.b64?.feed(text);
      const esc = escapeContent(text);
      this.emitContent(s, esc);
      return true;
    }
    const cut = cutString(text, 0, left, false);
    if (cut.end === text.length) {
      // Perf: base64 is checked only once it is known to be kept (a cut one goes whole).
      s.b64?.feed(text);
      this.emitContent(s, escapeContent(text));
      return true;
    }
    if (cut.end > 0) this.emitContent(s, escapeContent(text.slice(0, cut.end)));
    return this.cutHere(s);
  }

  private emitContent(s: Str, esc: string): void {
    const bytes = utf8Length(esc);
    this.out.write(esc, bytes);
    if (s.kind === 'envelope') this.outside += bytes;
    s.usedRaw += bytes;
    s.used += bytes;
  }

  /** The current string does not fit: apply the rule of its kind. */
  private cutHere(s: Str): false {
    s.cut = true;
    if (s.kind === 'atomic') return this.abandonBlock('binary_block');
    if (s.kind === 'envelope') throw this.envelopeTooLarge(this.top!.key);
    if (s.dropIfCut) return this.abandonBlock('text_total_bytes');
    const opaque = s.kind === 'opaque' || (s.kind === 'generic' && looksOpaque(this.out.read(s.contentStart, this.out.length)));
    if (opaque && s.limitKind !== 'result_bytes') {
      // Opaque strings are kept whole or not at all: the member goes, later siblings stay.
      this.out.rollback(s.mark);
      this.str = undefined;
      this.top!.kept--;
      this.omit(s.limitKind);
      return false;
    }
    if (s.limitKind === 'result_bytes' && (opaque || s.usedRaw < MIN_CUT_BYTES)) {
      if (s.kind === 'text') return this.abandonBlock('result_bytes');
      this.out.rollback(s.mark);
      this.str = undefined;
      this.top!.kept--;
      return this.omitAndClose('result_bytes');
    }
    this.omit(s.limitKind);
    if (s.limitKind === 'result_bytes' && !this.mayMirror(s)) this.spend();
    return false;
  }

  /**
   * The budget is spent: every later value is omitted. Not while cut texts that may mirror the
   * structure to come are held: the structure borrows their bytes (structure first).
   */
  private spend(): void {
    if (!this.mirrorDone && this.candidates.length > 0) return;
    this.exhausted = true;
  }

  /** Whether the current string, once ended cut, becomes a mirror candidate. */
  private mayMirror(s: Str): boolean {
    return s.pin !== undefined && s.first === OPEN_BRACE && !this.mirrorDone && this.candidates.length < MAX_MIRROR_CANDIDATES;
  }

  /** End of the current string. */
  stringEnd(): void {
    if (this.capture !== undefined) {
      this.capture.stringEnd();
      if (this.capture.done) this.endCapture();
      return;
    }
    const s = this.str;
    if (s === undefined) return; // omitted or rolled back
    if (!s.cut && s.pending.length > 0) {
      const lone = s.pending;
      s.pending = '';
      this.take(s, lone);
    }
    if (this.str === undefined) return; // the lone surrogate did not fit
    this.str = undefined;
    this.emit('"', s.kind === 'envelope');
    const shape = this.top!.shape;
    if (shape !== undefined) {
      const key = this.top!.key;
      shape.note(key, 'string');
      if (s.value !== undefined) shape.type = s.value;
      if (s.b64 !== undefined && !s.b64.valid) shape.badBase64.add(key);
    }
    if (s.kind === 'text') {
      this.textUsed += s.usedRaw;
      if (s.pin !== undefined) {
        // A structure is an object: only a cut text that starts with `{` can be its mirror.
        const isCandidate = s.cut && this.mayMirror(s);
        if (isCandidate) {
          const block = this.frames[this.frames.length - 2]!.cur;
          this.candidates.push({ block, from: s.contentStart, to: this.out.length - 1, pin: s.pin, raw: s.usedRaw });
        } else {
          this.out.release(s.pin);
        }
      }
    }
    this.out.release(s.mark);
  }

  /** Convenience for a whole string (the in-memory source). */
  string(value: string): void {
    if (!this.stringStart()) return;
    this.stringChunk(value);
    this.stringEnd();
  }

  // ---------------------------------------------------------------- capture of an earlier report

  private beginCapture(array: boolean | undefined): true {
    this.capture = new ValueCapture();
    this.captureFrame = this.frames.length - 1;
    if (array !== undefined) this.capture.open(array);
    return true;
  }

  private endCapture(): void {
    const c = this.capture!;
    this.capture = undefined;
    const prior = this.prior === undefined ? c.asReport(this.limits.maxOmittedPaths) : undefined;
    if (prior !== undefined) this.prior = prior;
    else this.omit('top_level_field', this.captureFrame);
  }

  // ---------------------------------------------------------------- text mirror

  /** After `structuredContent` ends: is there a mirror candidate waiting for the source's verdict? */
  get mirrorPending(): boolean {
    return this.mirrorRange !== undefined && this.candidates.length > 0;
  }

  /** Indexes in `content` of the cut text blocks that may mirror `structuredContent`. */
  get mirrorBlocks(): readonly number[] {
    return this.candidates.map((c) => c.block);
  }

  /**
   * Bytes held back while the structure is bounded: what the summary will need, less the bytes of
   * the candidates (they are rewritten or emptied afterwards); negative when they are lent.
   */
  private mirrorReserve(): number {
    const l = this.limits;
    let lent = 0;
    for (const c of this.candidates) lent += c.raw;
    return summaryNeed(this.candidates, l.maxBlockBytes, l.maxTextBytes - this.textUsed) - lent;
  }

  private endMirror(): void {
    this.mirrorRange = { from: this.mirror!.from, to: this.out.length };
    this.mirror = undefined;
  }

  /**
   * The source's verdict: which candidate block (if any) was exactly the JSON of
   * `structuredContent`. That block's cut text is replaced by the JSON of the bounded structure,
   * or the summary when that does not fit (see text-mirror.ts); the other candidates stay as cut.
   */
  resolveMirror(block: number | undefined): void {
    const r = this.mirrorRange;
    const c = r === undefined || block === undefined ? undefined : this.candidates.find((x) => x.block === block);
    const others = this.candidates.filter((x) => x !== c);
    if (c !== undefined) {
      const l = this.limits;
      let spare = this.room();
      for (const o of others) spare += o.raw;
      const rw = rewriteMirror(this.out.read(r!.from, r!.to), c, { maxBlockBytes: l.maxBlockBytes, textLeft: l.maxTextBytes - this.textUsed, room: spare });
      this.rewriteCandidate(c, rw.text, rw.delta);
    }
    // Bytes lent to the structure come back from the other candidates, last first: emptied.
    for (let i = others.length - 1; i >= 0 && this.room() < 0; i--) this.rewriteCandidate(others[i]!, '', -others[i]!.raw);
    for (const x of this.candidates) this.out.release(x.pin);
    this.candidates = [];
    this.mirrorRange = undefined;
  }

  private rewriteCandidate(c: MirrorCandidate, text: string, delta: number): void {
    this.out.replaceRange(c.from, c.to, text, delta);
    this.textUsed += delta;
  }

  // ---------------------------------------------------------------- end

  /** Close the output: fill in the report and the notice. Returns the report, if anything was cut. */
  finish(): BudgetReport | undefined {
    if (this.finished) throw new Error('Budgeter.finish() called twice');
    if (this.frames.length > 0 || this.str !== undefined || this.capture !== undefined) {
      throw new BudgetError('INVALID_RESULT', 'The result ended before its last value was complete');
    }
    this.finished = true;
    if (this.candidates.length > 0) this.resolveMirror(undefined);
    if (this.prior !== undefined) this.report.absorb(this.prior);
    const report = this.report.truncated ? this.report.build() : undefined;
    const fill = (slot: Slot | undefined, piece: string): void => {
      if (slot === undefined) return;
      this.out.fill(slot.index, piece, utf8Length(piece));
    };
    if (report !== undefined) {
      const body = JSON.stringify(REPORT_KEY) + ':' + serializeReport(report);
      const rs = this.reportSlot;
      if (rs !== undefined) {
        const comma = rs.comma ? ',' : '';
        fill(rs, rs.wrap === '' ? comma + body : `${comma}"${rs.wrap}":{${body}}`);
      }
      const ns = this.noticeSlot;
      if (ns !== undefined) fill(ns, (ns.comma ? ',' : '') + serializeNotice(report));
    } else {
      fill(this.reportSlot, '');
      fill(this.noticeSlot, '');
    }
    this.out.flush(true);
    return report;
  }

  /** The bounded output as one string (when no sink was given). */
  toString(): string {
    return this.out.toString();
  }

  // ---------------------------------------------------------------- hooks for the byte source

  /** True while `structuredContent` is being bounded as the rebuild of a text mirror. */
  get mirroring(): boolean {
    return this.mirror !== undefined;
  }

  /** True while the current string is a content block's `text` (a possible mirror). */
  get inBlockText(): boolean {
    return this.str?.pin !== undefined;
  }

  /** The innermost container takes no more children and no more pointers: skip its tail unseen. */
  get canSkipRest(): boolean {
    const f = this.top;
    if (f === undefined || this.capture !== undefined || f.role === 'result' || f.probe !== undefined) return false;
    // A closed block's `_meta` may still mark it as an earlier notice: its members are looked at.
    if (f.role === 'block' && !f.abandoned) return false;
    return f.abandoned || (f.closed !== undefined && !this.report.wantsPaths);
  }

  // ---------------------------------------------------------------- bulk skipping for sources

  /** Whether the innermost container takes no more children (a source may skip the rest). */
  get topClosed(): boolean {
    const f = this.top;
    // The result object is never skipped in bulk: its reserved `isError` may still follow.
    if (f === undefined || this.capture !== undefined || f.role === 'result' || f.probe !== undefined) return false;
    // A closed block's `_meta` may still mark it as an earlier notice: its members are looked at.
    return f.role === 'block' ? f.abandoned : f.closed !== undefined || f.abandoned;
  }

  /**
   * Record `n` further children of the innermost (closed) container as omitted without feeding
   * them; `keyAt(i)` names the i-th of them for objects. Same report as feeding them one by one.
   */
  omitRest(n: number, keyAt?: (i: number) => string): void {
    const f = this.top!;
    if (f.abandoned || n <= 0) {
      if (f.array) f.cur += n;
      return;
    }
    const kind = f.closed!;
    const at = this.frames.length - 1;
    const first = f.cur + 1;
    this.report.addMany(kind, n, (i) => {
      if (f.array) f.cur = first + i;
      else f.key = keyAt!(i);
      return this.pointer(at);
    });
    if (f.array) f.cur = first + n - 1;
  }
}
