/**
 * The budgeter's state and the helpers every rule uses: accounting (room, emitting), the report's
 * pointers and omissions, roles, the gate before a child value, frames. The rules are layered on
 * top, one class each: blocks and an earlier pass's leftovers (budgeter-blocks.ts), the text mirror
 * (budgeter-mirror.ts), containers, keys and scalars (budgeter-values.ts), strings
 * (budgeter-strings.ts), the end and the hooks for sources (budgeter.ts, the class sources use).
 */
import type { ValueCapture } from './capture.js';
import { BudgetError } from './errors.js';
import { MAX_ENVELOPE_FIELD_BYTES, MAX_POINTER_BYTES } from './limits.js';
import type { ResolvedLimits } from './options.js';
import { Output, type ChunkSink, type Mark } from './output.js';
import { childRole, countsItems, startsCapture, strKind, type Container, type Role, type RootKind, type StrKind } from './roles.js';
import { ReportBuilder, escapePointerSegment, type BudgetKind, type BudgetReport, type ReportMark } from './report.js';
import { utf8Length } from './wire.js';
import type { MirrorCandidate } from './text-mirror.js';
import type { MeasureTally } from './text-measure.js';
import type { Base64Check, JsonType, ShapeTracker } from './shapes.js';

/** @internal */
export interface Tx {
  mark: Mark;
  report: ReportMark;
  textUsed: number;
  /** The text measures' totals when the block began (see {@link BudgeterState.textCounts}). */
  textCounts: readonly number[];
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
  /** A text's count so far by each text measure that can cut (undefined: none can, or not a text). */
  tallies: MeasureTally[] | undefined;
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

/** No counts: the snapshot of the text measures' totals when none can cut (shared, never changed). */
export const NO_COUNTS: readonly number[] = Object.freeze([]);

const ISERROR_RESERVE = ',"isError":false'.length;
/**
 * `,"_meta":{}`: part of the report reserve, handed to the result's own `_meta` when it opens.
 * While that `_meta` is open or once it kept a member, one byte of it stays reserved for the comma
 * the report then needs.
 */
const META_WRAPPER_BYTES = ',"_meta":{}'.length;

/**
 * Every field of the budgeter is declared here, so that its layers share one object shape.
 * Perf: the layers are one class chain and one concrete class: calls between them stay monomorphic.
 */
export abstract class BudgeterState {
  readonly report: ReportBuilder;
  protected readonly out: Output;
  protected readonly frames: Frame[] = [];
  /** Index of the bounded root (result or error) in `frames`, or -1 before it opens. */
  protected base = -1;
  protected outside = 0;
  protected closing = 0;
  protected exhausted = false;
  protected textUsed = 0;
  /**
   * The texts kept so far by each text measure that can cut (`limits.textMeasures`, same order), in
   * the measure's own units.
   */
  protected readonly textCounts: number[];
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
    this.textCounts = limits.textMeasures.map(() => 0);
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

  /**
   * The budget is spent: every later value is omitted, except the structure that follows held
   * mirror candidates (it borrows their bytes: structure first) and the reserved `isError`.
   */
  protected spend(): void {
    this.exhausted = true;
  }

  protected envelopeTooLarge(field: string): BudgetError {
    return new BudgetError(
      'INVALID_ENVELOPE',
      `JSON-RPC \`${field}\` is larger than ${MAX_ENVELOPE_FIELD_BYTES} bytes`,
      { field, max: MAX_ENVELOPE_FIELD_BYTES },
    );
  }
}
