/**
 * The budgeter's state and its container, key and scalar rules: accounting, reports, roles,
 * gating, block shapes and probes, an earlier report's capture, and the text mirror's room. The
 * string rules, the mirror's verdict and the end are in budgeter.ts, which extends this class.
 */
import { ValueCapture } from './capture.js';
import { BudgetError } from './errors.js';
import { ENVELOPE_KEYS, MAX_ENVELOPE_FIELD_BYTES, MAX_KEY_UNITS, MAX_POINTER_BYTES, NOTICE_KEY } from './limits.js';
import type { ResolvedLimits } from './options.js';
import { Output, type ChunkSink, type Mark } from './output.js';
import {
  childRole,
  countsItems,
  countsKeys,
  exemptKey,
  isNoticeKey,
  scalarRole,
  startsCapture,
  strKind,
  type Container,
  type Role,
  type StrKind,
} from './roles.js';
import {
  ReportBuilder,
  escapePointerSegment,
  type BudgetKind,
  type BudgetReport,
  type ReportMark,
} from './report.js';
import { escapedLength, utf8Length } from './wire.js';
import { MAX_MIRROR_CANDIDATES, summaryNeed, type MirrorCandidate } from './text-mirror.js';
import { Base64Check, scalarType, ShapeTracker, type JsonType } from './shapes.js';

import type { RootKind } from './roles.js';

/** @internal */
export interface Tx {
  mark: Mark;
  report: ReportMark;
  textUsed: number;
  parentKept: number;
  candidates: number;
  /** Whether the budget was spent when the block began (an earlier notice dropped gives it back). */
  exhausted: boolean;
}

/** @internal A container being bounded. */
export interface Frame {
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

/** @internal The string being bounded. */
export interface Str {
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

/** @internal A hole for the report or the notice. */
export interface Slot {
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


/** The state and the container, key and scalar rules of the budgeter; strings and the end are in budgeter.ts. */
export abstract class BudgeterBase {
  readonly report: ReportBuilder;
  protected readonly out: Output;
  protected readonly frames: Frame[] = [];
  /** Index of the bounded root (result or error) in `frames`, or -1 before it opens. */
  protected base = -1;
  protected outside = 0;
  protected closing = 0;
  protected exhausted = false;
  protected textUsed = 0;
  protected isErrorReserved = false;
  /** Cut text blocks that may mirror the structure to come (see text-mirror.ts). */
  protected candidates: MirrorCandidate[] = [];
  /** While the structure is bounded after candidates: where its JSON starts, bytes held for the summary. */
  protected mirror: { from: number; reserve: number; spent: boolean } | undefined;
  /** The structure's JSON in the output, once it closed, until the source's verdict. */
  protected mirrorRange: { from: number; to: number } | undefined;
  /** `structuredContent` was seen: no more candidates. */
  protected mirrorDone = false;
  protected str: Str | undefined;
  protected capture: ValueCapture | undefined;
  protected captureFrame = -1;
  protected prior: BudgetReport | undefined;
  protected noticeSlot: Slot | undefined;
  protected reportSlot: Slot | undefined;
  protected finished = false;
  protected sawErrorData = false;
  /** The `,"_meta":{…}` wrapper is part of the reserve until the result's own `_meta` opens. */
  protected metaWrapperReserved = true;
  /** The result's own `_meta`: not seen, open, closed with no kept member, or closed with some. */
  protected ownMeta: 'none' | 'open' | 'empty' | 'members' = 'none';
  /** A probed block turned out to be an earlier pass's notice. */
  protected probeNotice = false;
  /** Index in `frames` of the open content block, or -1. */
  protected openBlockAt = -1;

  constructor(
    protected readonly limits: ResolvedLimits,
    protected readonly rootKind: RootKind = 'auto',
    sink?: ChunkSink,
  ) {
    this.report = new ReportBuilder(limits);
    this.out = new Output(sink);
  }

  // ---------------------------------------------------------------- accounting

  /** Bytes still available for content. */
  protected room(): number {
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

  protected cost(piece: string): number {
    return utf8Length(piece);
  }

  protected emit(piece: string, outside = false): void {
    const bytes = utf8Length(piece);
    this.out.write(piece, bytes);
    if (outside) this.outside += bytes;
  }

  protected get top(): Frame | undefined {
    return this.frames[this.frames.length - 1];
  }

  // ---------------------------------------------------------------- report helpers

  /** Pointer to the current child of `frames[upTo]`, relative to the bounded root. */
  protected pointer(upTo: number): string | undefined {
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

  protected omit(kind: BudgetKind, at = this.frames.length - 1): void {
    if (this.base < 0 || at < this.base) return; // outside the bounded root: nothing to report
    const ob = this.openBlockAt;
    if (ob >= 0 && at >= ob && this.frames[ob]!.cutKind === undefined) this.frames[ob]!.cutKind = kind;
    this.report.add(kind, () => this.pointer(at));
  }

  /** Omit the current child of the top frame and close that frame: later siblings go too. */
  protected omitAndClose(kind: BudgetKind): false {
    const f = this.top!;
    this.omit(kind);
    f.closed = kind;
    if (kind === 'result_bytes') this.spend();
    return false;
  }

  // ---------------------------------------------------------------- roles

  protected childRole(parent: Frame, container: Container): Role | 'drop' | 'invalid' {
    return childRole(parent.role, parent.key, container);
  }

  protected strKind(parent: Frame): StrKind {
    const kind = strKind(parent.role, parent.key);
    if (kind === 'generic' && parent.inStructure && !parent.array && (parent.key === 'data' || parent.key === 'blob')) return 'opaque';
    return kind;
  }

  /** Note a kept member of a block or resource, for the shape check when it closes. */
  protected noteMember(parent: Frame, type: JsonType): void {
    if (parent.shape !== undefined) parent.shape.note(parent.key, type);
  }

  /** The value is dropped by its role: a field of the wrong type, or a content item that is no block. */
  protected dropRole(role: 'drop' | 'invalid'): false {
    this.omit(role === 'drop' ? 'top_level_field' : 'invalid_block');
    return false;
  }

  protected startsCapture(parent: Frame): boolean {
    return startsCapture(parent.role, parent.key);
  }

  // ---------------------------------------------------------------- gating

  /**
   * Common checks before a child value of `parent` is admitted: array index bookkeeping, closed
   * and abandoned containers, item counts, exhaustion. Returns false when the value is omitted.
   */
  protected gate(parent: Frame, reserved: boolean): boolean {
    if (parent.array) {
      parent.cur++;
      if (parent.abandoned) return false;
      if (parent.closed !== undefined) {
        this.omit(parent.closed);
        return false;
      }
      if (countsItems(parent.role) && parent.kept >= this.limits.maxItems) return this.omitAndClose('array_items');
    }
    if (parent.role === 'envelope') return true;
    if (this.exhausted && !reserved) return this.omitAndClose('result_bytes');
    return true;
  }

  protected prefix(parent: Frame): string {
    const sep = parent.kept > 0 ? ',' : '';
    return parent.array ? sep : sep + parent.keyJson + ':';
  }

  /** Omit a block that cannot be kept whole: roll back to its start and record it once. */
  protected abandonBlock(kind: BudgetKind | undefined): false {
    let b = this.frames.length - 1;
    while (b >= 0 && this.frames[b]!.role !== 'block') b--;
    for (let i = b; i < this.frames.length; i++) this.frames[i]!.abandoned = true;
    return this.dropBlock(this.frames[b]!, b - 1, kind);
  }

  /** Roll the output back to the start of `block` (a child of `frames[parentAt]`) and record it once. */
  protected dropBlock(block: Frame, parentAt: number, kind: BudgetKind | undefined): false {
    const tx = block.tx!;
    this.out.rollback(tx.mark);
    this.report.rollback(tx.report);
    this.textUsed = tx.textUsed;
    this.candidates.length = tx.candidates;
    this.exhausted = tx.exhausted;
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

  protected open(array: boolean): boolean {
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
    // The structure after cut JSON-looking text blocks: bounded first, with their bytes lent to it
    // (less what the summary needs), even past a spent budget; one of them is then rewritten.
    const mirror = role === 'structure' && !this.mirrorDone && this.candidates.length > 0;
    // A block is let past a spent budget only to be probed for an earlier notice (below).
    if (!this.gate(parent, ownMeta || role === 'block' || mirror)) return false;
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
    if (role === 'structure') this.mirrorDone = true;
    if (mirror) {
      // A budget spent before the structure does not apply inside it (it is spent again after).
      this.mirror = { from: -1, reserve: this.mirrorReserve(), spent: this.exhausted };
      this.exhausted = false;
    }
    if ((role === 'block' && this.exhausted) || this.cost(pre) + 2 > this.room()) {
      if (ownMeta) this.metaWrapperReserved = true;
      if (mirror) {
        this.exhausted = this.mirror!.spent;
        this.mirror = undefined;
      }
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
        exhausted: this.exhausted,
      };
    }
    return true;
  }

  protected push(array: boolean, role: Role, depth: number): Frame {
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
  protected pushProbe(probe: 'block' | 'meta'): void {
    const f = this.push(false, probe === 'block' ? 'block' : 'blockmeta', 0);
    f.abandoned = true;
    f.probe = probe;
    this.closing++;
    this.probeNotice = false;
  }

  /** A probed block closed: unless it was an earlier notice, it is omitted and the budget is spent. */
  protected endProbe(): void {
    if (this.probeNotice) return;
    this.omitAndClose('result_bytes');
  }

  /** A probed block `_meta` closed: an earlier notice goes silently, any other `_meta` did not fit. */
  protected endMetaProbe(): void {
    const block = this.top!;
    if (block.probe !== undefined) return; // the probed block decides when it closes
    if (this.probeNotice) {
      this.abandonBlock(undefined);
      return;
    }
    this.omitAndClose('result_bytes');
  }

  protected openRoot(array: boolean): boolean {
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

  protected enterRoot(f: Frame): void {
    this.base = this.frames.length - 1;
    this.isErrorReserved = f.role === 'result';
  }

  /** The root's first key decides whether it is a response envelope or a result. */
  protected resolveAuto(f: Frame, firstKey: string): void {
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

  protected close(): void {
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
      default:
        if (!countsKeys(f.role) || this.startsCapture(f) || isNoticeKey(f.role, name)) break;
        if (f.kept >= this.limits.maxKeys) return this.omitAndClose('object_keys');
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
    if (isNoticeKey(parent.role, parent.key) && raw === 'true') {
      // The notice an earlier pass appended: drop it silently; a fresh one is written at the end.
      this.abandonBlock(undefined);
      return;
    }
    const isError = parent.role === 'result' && parent.key === 'isError' && (raw === 'true' || raw === 'false');
    const role = scalarRole(parent.role, parent.key, raw === 'true' || raw === 'false');
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

  protected envelopeTooLarge(field: string): BudgetError {
    return new BudgetError(
      'INVALID_ENVELOPE',
      `JSON-RPC \`${field}\` is larger than ${MAX_ENVELOPE_FIELD_BYTES} bytes`,
      { field, max: MAX_ENVELOPE_FIELD_BYTES },
    );
  }

  // ---------------------------------------------------------------- capture of an earlier report

  protected beginCapture(array: boolean | undefined): true {
    this.capture = new ValueCapture();
    this.captureFrame = this.frames.length - 1;
    if (array !== undefined) this.capture.open(array);
    return true;
  }

  protected endCapture(): void {
    const c = this.capture!;
    this.capture = undefined;
    const prior = this.prior === undefined ? c.asReport(this.limits.maxOmittedPaths) : undefined;
    if (prior !== undefined) this.prior = prior;
    else this.omit('top_level_field', this.captureFrame);
  }

  // ---------------------------------------------------------------- spending and the text mirror

  /**
   * The budget is spent: every later value is omitted, except the structure that follows held
   * mirror candidates (it borrows their bytes: structure first) and the reserved `isError`.
   */
  protected spend(): void {
    this.exhausted = true;
  }

  /** Whether the current string, once ended cut, becomes a mirror candidate. */
  protected mayMirror(s: Str): boolean {
    return s.pin !== undefined && s.first === OPEN_BRACE && !this.mirrorDone && this.candidates.length < MAX_MIRROR_CANDIDATES;
  }

  /**
   * Bytes held back while the structure is bounded: what the summary will need, less the bytes of
   * the candidates (they are rewritten or emptied afterwards); negative when they are lent.
   */
  protected mirrorReserve(): number {
    const l = this.limits;
    let lent = 0;
    for (const c of this.candidates) lent += c.raw;
    return summaryNeed(this.candidates, l.maxBlockBytes, l.maxTextBytes - this.textUsed) - lent;
  }

  protected endMirror(): void {
    const m = this.mirror!;
    this.mirrorRange = { from: m.from, to: this.out.length };
    if (m.spent) this.exhausted = true;
    this.mirror = undefined;
  }
}
