/**
 * What the budget cut, as reported in `_meta[REPORT_KEY]`, and the model-visible notice.
 * Both have a largest possible size that depends only on the limits; that size is reserved before
 * any content is written, so the report always fits.
 */
import { BUDGET_KINDS, CONTINUATION_TOOL, MAX_POINTER_BYTES, NOTICE_KEY, REPORT_KEY, type BudgetKind, type BudgetLimits, type NumericLimit } from './limits.js';
import { utf8Length } from './wire.js';

export { BUDGET_KINDS, type BudgetKind };

/** The report placed under `_meta["io.github.mcp-result-budget/budget"]`. */
export interface BudgetReport {
  truncated: true;
  /** The bound that cut first, in document order. */
  budget_kind: BudgetKind;
  /** Values removed or shortened (a dropped container counts once, not its contents). */
  omitted_count: number;
  /** RFC 6901 pointers into the original result, in document order. */
  omitted_paths: string[];
  /** True when `omitted_paths` lists fewer pointers than `omitted_count`. */
  omitted_paths_capped: boolean;
  /** Where what was cut can still be read (added after the budget, when a continuation is on). */
  continuation?: ContinuationOffer;
}

/** The bound that left no schema-valid shortened result (a withheld result's `blocked_by`). */
export interface BlockingBound {
  /** The option (`maxStringBytes`, …; `maxResultBytes` when no single other bound is to blame). */
  bound: NumericLimit;
  /** Its value in force. */
  limit: number | undefined;
  /**
   * The largest part of the smallest structure the schema accepts (every optional member dropped,
   * every array at its shortest valid length), when the original was at hand: a pointer into the
   * result, and its bytes as JSON.
   */
  needs?: { path: string; bytes: number };
}

/**
 * The report of a typed result that was withheld: no shortened result within the budget matched
 * the tool's output schema, so the tool's answer is an `isError` result with this report.
 */
export interface WithheldReport extends Omit<BudgetReport, 'continuation'> {
  error: 'result_budget_exceeded';
  blocked_by: BlockingBound;
  /**
   * A read-only tool: `narrow_with`, the arguments that ask for less (call it again with them);
   * and when the original is kept, the offer to read it back (any tool).
   */
  continuation?: { narrow_with: string[] } | ContinuationOffer | (ContinuationOffer & { narrow_with: string[] });
  /** Any other tool: its changes were applied; do not call it again. */
  applied?: true;
  /** What identifies what was applied: the result's small scalar fields. */
  receipt?: Record<string, unknown>;
}

/** What `_meta[REPORT_KEY]` holds: a cut result's report, or a withheld typed result's. */
export type ResultReport = BudgetReport | WithheldReport;

/** One place a cut part of the original starts: a JSON Pointer into it, and a position within that value. */
export interface ReadStart {
  path: string;
  /** Bytes (UTF-8) into a string, items into an array, members into an object. */
  position: number;
}

/**
 * A continuation in a report: the reading tool, the handle, when it expires, and where the cut
 * parts start (the first {@link CONTINUATION_LISTED}, document order; the tool's `next` reaches
 * them all).
 */
export interface ContinuationOffer {
  tool: string;
  handle: string;
  /** ISO 8601, UTC, to the second. */
  expires_at: string;
  paths: ReadStart[];
  /** True when more parts were cut than `paths` lists. */
  paths_capped: boolean;
  /** Present (false) when the original was over the per-result cap: only its beginning can be read. */
  complete?: false;
}

/** Read starts listed in a report's continuation (the tool's `next` answers lead to the others). */
export const CONTINUATION_LISTED = 4;
/** A handle as written: 128 random bits in base64url. */
export const HANDLE_CHARS = 22;

/** Escape one pointer segment (RFC 6901: `~` → `~0`, `/` → `~1`). */
export function escapePointerSegment(segment: string): string {
  if (segment.indexOf('~') === -1 && segment.indexOf('/') === -1) return segment;
  return segment.replace(/~/g, '~0').replace(/\//g, '~1');
}

/** Snapshot used to undo report entries made inside a rolled-back region. */
export interface ReportMark {
  readonly count: number;
  readonly paths: number;
  readonly pathBytes: number;
  readonly capped: boolean;
  readonly kind: BudgetKind | undefined;
}

/** Collects omissions in document order. */
export class ReportBuilder {
  kind: BudgetKind | undefined;
  count = 0;
  paths: string[] = [];
  capped = false;
  /** Bytes of the listed pointers as written (quotes and commas included). */
  private pathBytes = 0;
  private readonly maxPaths: number;

  constructor(limits: Pick<BudgetLimits, 'maxOmittedPaths'>) {
    this.maxPaths = limits.maxOmittedPaths;
  }

  get truncated(): boolean {
    return this.count > 0;
  }

  /** Whether another pointer could still be listed (lets callers skip building one). */
  get wantsPaths(): boolean {
    return !this.capped && this.paths.length < this.maxPaths;
  }

  /**
   * Record one omitted or shortened value. `pointer` is built only when it can still be listed;
   * it returns undefined when the pointer would be longer than {@link MAX_POINTER_BYTES}.
   */
  add(kind: BudgetKind, pointer: () => string | undefined): void {
    if (this.kind === undefined) this.kind = kind;
    this.count++;
    if (!this.wantsPaths) {
      if (!this.capped) this.capped = true;
      return;
    }
    const p = pointer();
    const bytes = p === undefined ? Infinity : utf8Length(JSON.stringify(p));
    if (bytes > MAX_POINTER_BYTES) {
      this.capped = true;
      return;
    }
    this.paths.push(p!);
    this.pathBytes += bytes + 1;
  }

  /** Record `n` omissions at once; `pointerAt(i)` is asked only while pointers can be listed. */
  addMany(kind: BudgetKind, n: number, pointerAt: (i: number) => string | undefined): void {
    if (n <= 0) return;
    let i = 0;
    while (i < n && this.wantsPaths) {
      const at = i;
      this.add(kind, () => pointerAt(at));
      i++;
    }
    if (i < n) {
      if (this.kind === undefined) this.kind = kind;
      this.count += n - i;
      this.capped = true;
    }
  }

  /** Fold in a report found in the input (an earlier pass): its entries come first. */
  absorb(prior: BudgetReport): void {
    const mine = this.paths;
    const mineCapped = this.capped;
    this.kind = prior.budget_kind;
    this.count += prior.omitted_count;
    this.paths = [];
    this.pathBytes = 0;
    this.capped = false;
    for (const p of [...prior.omitted_paths, ...mine]) {
      if (!this.wantsPaths) {
        this.capped = true;
        break;
      }
      this.paths.push(p);
    }
    this.capped ||= prior.omitted_paths_capped || mineCapped;
  }

  mark(): ReportMark {
    return { count: this.count, paths: this.paths.length, pathBytes: this.pathBytes, capped: this.capped, kind: this.kind };
  }

  rollback(m: ReportMark): void {
    this.count = m.count;
    this.paths.length = m.paths;
    this.pathBytes = m.pathBytes;
    this.capped = m.capped;
    this.kind = m.kind;
  }

  build(): BudgetReport {
    return {
      truncated: true,
      budget_kind: this.kind ?? 'result_bytes',
      omitted_count: this.count,
      omitted_paths: this.paths,
      omitted_paths_capped: this.capped,
    };
  }
}

/** The report as written; key order is fixed so that output is deterministic. */
export function serializeReport(r: BudgetReport): string {
  return (
    `{"truncated":true,"budget_kind":${JSON.stringify(r.budget_kind)},"omitted_count":${r.omitted_count},` +
    `"omitted_paths":${JSON.stringify(r.omitted_paths)},"omitted_paths_capped":${r.omitted_paths_capped}}`
  );
}

/** The model-visible notice text: deterministic, derived from the report alone. */
export function noticeText(r: BudgetReport): string {
  const what = r.omitted_count === 1 ? '1 value was' : `${r.omitted_count} values were`;
  const head = `[mcp-result-budget] This result was truncated to fit the context budget: ${what} omitted or shortened (first limit hit: ${r.budget_kind}).`;
  const c = r.continuation;
  if (c !== undefined) {
    return (
      `${head} Nothing is lost until ${c.expires_at}: call the tool ${c.tool} with ${JSON.stringify({ handle: c.handle })}, ` +
      `then again with the \`next\` arguments each answer gives, until an answer has no \`next\`; each answer says where its part goes ` +
      `(path and position in this result).${c.complete === false ? ' Only the beginning of the original was kept (it is over the per-result cap of the continuation store).' : ''} Details: _meta["${REPORT_KEY}"].`
    );
  }
  return (
    `${head} To see the rest, call the tool again asking for less: use its ` +
    `paging or narrowing arguments (limit, cursor, offset, path, query). Details: _meta["${REPORT_KEY}"].`
  );
}

/**
 * The most a continuation adds to a cut result: its member in the report, and what it adds to the
 * notice. A result is bounded that much smaller when a continuation may be offered, so that the
 * result with its continuation is still within the budget.
 */
export function continuationReserveBytes(limits: Pick<BudgetLimits, 'maxOmittedPaths' | 'notice'>): number {
  const r = largestReport(limits);
  const offer: ContinuationOffer = {
    tool: CONTINUATION_TOOL,
    handle: 'x'.repeat(HANDLE_CHARS),
    expires_at: '+275760-09-13T00:00:00Z',
    paths: new Array<ReadStart>(CONTINUATION_LISTED).fill({ path: 'x'.repeat(MAX_POINTER_BYTES - 2), position: Number.MAX_SAFE_INTEGER }),
    paths_capped: false,
    complete: false,
  };
  const member = utf8Length(`,"continuation":${JSON.stringify(offer)}`);
  const notice = limits.notice ? utf8Length(serializeNotice({ ...r, continuation: offer })) - utf8Length(serializeNotice(r)) : 0;
  return member + Math.max(0, notice);
}

/** The notice as a content block; `_meta` comes before `text` so a later pass recognizes it early. */
export function serializeNotice(r: BudgetReport): string {
  return `{"type":"text","_meta":{${JSON.stringify(NOTICE_KEY)}:true},"text":${JSON.stringify(noticeText(r))}}`;
}

/** Largest report a result can carry under these limits. */
function largestReport(limits: Pick<BudgetLimits, 'maxOmittedPaths'>): BudgetReport {
  const longestKind = BUDGET_KINDS.reduce((a, b) => (b.length > a.length ? b : a));
  // A listed pointer is at most MAX_POINTER_BYTES as a JSON string; 'x' * (n-2) is such a string.
  const pointer = 'x'.repeat(MAX_POINTER_BYTES - 2);
  return {
    truncated: true,
    budget_kind: longestKind,
    omitted_count: Number.MAX_SAFE_INTEGER,
    omitted_paths: new Array<string>(limits.maxOmittedPaths).fill(pointer),
    omitted_paths_capped: false,
  };
}

/**
 * Bytes reserved up front for what is added at the end: the report with its `_meta` wrapper
 * (`,"_meta":{"…/budget":{…}}`, or `,"data":{…}` for an error) and the notice block with its comma.
 */
export function maxReserveBytes(limits: Pick<BudgetLimits, 'maxOmittedPaths' | 'notice'>): number {
  const r = largestReport(limits);
  const report = utf8Length(serializeReport(r));
  const wrapper = ',"_meta":{'.length + JSON.stringify(REPORT_KEY).length + 1 + '}'.length;
  const notice = limits.notice ? 1 + utf8Length(serializeNotice(r)) : 0;
  return report + wrapper + notice;
}
