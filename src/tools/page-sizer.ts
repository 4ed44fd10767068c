/**
 * Pages sized by what they weigh as sent. An answer is its structure (`structuredContent`) and a
 * text block with the structure's compact rendering, or its JSON when that is no larger
 * (`structured`); a page's items cost their JSON once in the structure and their line once in the
 * text. The meter starts from the page with its own fields at their largest and no items (rendered
 * and measured exactly, inside exec's envelope when the call is an exec action), and adds each
 * item's JSON and line as `renderText` writes it (a table row, or the item as JSON), so a page
 * stops where the answer would pass a bound: the result's bytes, the text block's and the text's
 * bytes (escaped, as the budget counts them), the token bound, the item bound, and exec's envelope.
 * Nothing is assumed of escaping or of the rendering's size: a page of short names and one of
 * heavily escaped bodies both fill to the bound that binds them.
 */
import { countText, fitsWithinBudget, mirrorLength, type ResolvedLimits } from '../engine/index.js';
import type { PageMeter, PageSizer } from '../shared/page-meter.js';
import { structured } from './pipeline.js';
import { itemLine, listHeader, renderText, rowKeys } from './text-render.js';

/** How the answer of a page is sent. */
export interface AnswerShape {
  /** The exec action the page answers as: it goes out as `{action, ok: true, result: page}`. @default the page alone */
  execAction?: string | undefined;
  /** Bytes exec's envelope may take as JSON (its own limit). @default no bound */
  maxEnvelopeBytes?: number;
  /** Share of every bound a page may use (a page that did not fit is made again for less). @default 1 */
  share?: number;
}

/** Bytes of an answer around its text and its structure: `{"content":[{"type":"text","text":""}],"structuredContent":}`. */
const ANSWER_FRAME_BYTES = JSON.stringify({ content: [{ type: 'text', text: '' }], structuredContent: 0 }).length - 1;

/** UTF-8 bytes of `s` written inside a JSON string (its escapes), without the quotes. */
const escaped = (s: string): number => Buffer.byteLength(JSON.stringify(s)) - 2;
const utf8 = (s: string): number => Buffer.byteLength(s);

/** Pages sized to the active limits, as the answer is sent. */
export function answerSizer(limits: ResolvedLimits, shape: AnswerShape = {}): PageSizer {
  return { meter: (fixed, list) => new AnswerMeter(limits, shape, fixed, list) };
}

/**
 * Whether `page`, answered as `shape` says, fits every active limit: the check the budget makes
 * (`fitsWithinBudget` on the answer `structured` builds, its text rendering `view` when given), and
 * exec's envelope limit (exec renders the page itself).
 */
export function answerFits(page: object, limits: ResolvedLimits, shape: AnswerShape = {}, view?: object): boolean {
  if (shape.execAction === undefined) return fitsWithinBudget(structured(page, view), limits, 'result');
  const sent = { action: shape.execAction, ok: true, result: page };
  if (shape.maxEnvelopeBytes !== undefined && utf8(JSON.stringify(sent)) > shape.maxEnvelopeBytes) return false;
  return fitsWithinBudget(structured(sent), limits, 'result');
}

/**
 * Shares of the bounds a page is made for, in turn, until its answer fits: every bound whole,
 * then less when the page's own fields passed what its source kept for them (a search cursor
 * deep in a tree, a note of every kind). A page that fits at none is sent as made (the budget then
 * cuts it, and says so).
 */
export const PAGE_SHARES: readonly number[] = [1, 0.85, 0.6, 0.3];

/** The sums a page's text is made of, for one form of its list. */
interface TextSums {
  escaped: number;
  raw: number;
  /** Its count by each text measure that can cut (`limits.textMeasures`), in the measure's units. */
  counts: number[];
}

/** Each active text measure's count of `text`, plus `margin` whole units of each (none when no measure can cut). */
function counted(limits: ResolvedLimits, text: string, margin = 0): number[] {
  if (limits.textMeasures.length === 0) return [];
  return countText(limits.textMeasures, text).map((c, i) => c + margin * limits.textMeasures[i]!.measure.perUnit);
}

const plus = (a: number[], b: number[]): number[] => a.map((x, i) => x + b[i]!);

class AnswerMeter implements PageMeter {
  count = 0;
  /** JSON bytes the items added elsewhere in the page. */
  private extra = 0;
  /** Bytes of the structure (with exec's envelope), of its JSON written as text, and that text's counts. */
  private json: number;
  private mirror: number;
  private jsonCounts: number[];
  /** The rendering without the list's items (and with the empty list's header). */
  private readonly base: TextSums;
  private readonly baseHeader: string;
  /** The table's columns so far; undefined once an item is not a flat object (then each item is its JSON). */
  private columns: string[] | undefined = [];
  /** Table rows: their cells (without the tabs between them) and their line breaks and indentation. */
  private readonly cells: TextSums = { escaped: 0, raw: 0, counts: [] };
  /** Items as JSON lines, with their line breaks and indentation. */
  private readonly lines: TextSums = { escaped: 0, raw: 0, counts: [] };
  private readonly indent: number;
  private readonly share: number;

  constructor(
    private readonly limits: ResolvedLimits,
    private readonly shape: AnswerShape,
    fixed: object,
    private readonly list: string,
  ) {
    const page = { ...fixed, [list]: [] };
    const sent = shape.execAction === undefined ? page : { action: shape.execAction, ok: true, result: page };
    const json = JSON.stringify(sent);
    this.json = utf8(json);
    this.mirror = mirrorLength(json);
    const text = renderText(sent);
    this.jsonCounts = counted(limits, json);
    this.base = { escaped: escaped(text), raw: utf8(text), counts: counted(limits, text) };
    this.cells.counts = this.base.counts.map(() => 0);
    this.lines.counts = this.base.counts.map(() => 0);
    this.baseHeader = listHeader(list, 0);
    // A list member's items sit one level deeper than it; exec's envelope nests the page one level.
    this.indent = shape.execAction === undefined ? 2 : 4;
    this.share = shape.share ?? 1;
  }

  take(item: unknown, extraBytes = 0): boolean {
    const json = JSON.stringify(item) ?? 'null';
    const comma = this.count > 0 ? 1 : 0;
    const own = this.columns === undefined ? undefined : rowKeys(item);
    const columns = own === undefined ? undefined : union(this.columns!, own);
    // The line break (`\n` escaped) and the indentation before each item's line.
    const lead = { escaped: 2 + this.indent, raw: 1 + this.indent };
    const asLine = itemLine(item);
    const line: TextSums = { escaped: this.lines.escaped + lead.escaped + escaped(asLine), raw: this.lines.raw + lead.raw + utf8(asLine), counts: plus(this.lines.counts, counted(this.limits, `\n${asLine}`, 1)) };
    let cells = this.cells;
    if (own !== undefined) {
      const row = itemLine(item, own);
      // The tabs of its own row come off: every row gets the tabs of every column (below).
      const tabs = Math.max(0, own.length - 1);
      cells = { escaped: cells.escaped + lead.escaped + escaped(row) - 2 * tabs, raw: cells.raw + lead.raw + utf8(row) - tabs, counts: plus(cells.counts, counted(this.limits, `\n${row}`, 1)) };
    }
    const n = this.count + 1;
    const structure = this.json + utf8(json) + comma + extraBytes;
    const mirror = this.mirror + mirrorLength(json) + comma + 2 * extraBytes;
    // The rendering: the base, the list's header for n items in place of the empty one, then the items.
    const header = listHeader(this.list, n, columns);
    const tabs = columns === undefined ? 0 : n * Math.max(0, columns.length - 1);
    const items = columns === undefined ? line : { escaped: cells.escaped + 2 * tabs, raw: cells.raw + tabs, counts: cells.counts };
    // What the item adds elsewhere is counted in the text as its JSON escaped (at most twice it).
    const rendered = {
      escaped: this.base.escaped + escaped(header) - escaped(this.baseHeader) + items.escaped + 2 * this.extra + 2 * extraBytes,
      raw: this.base.raw + utf8(header) - utf8(this.baseHeader) + items.raw + this.extra + extraBytes,
      counts: plus(this.base.counts, items.counts),
    };
    // `structured` sends the JSON instead of a rendering larger than it (escaped, or 1.5× as read).
    const jsonCounts = plus(this.jsonCounts, counted(this.limits, json, 1 + Math.ceil(extraBytes / 2)));
    const asRendered = rendered.escaped <= mirror && rendered.raw <= 1.5 * structure;
    if (this.count > 0 && !this.fits(n, structure, asRendered ? rendered.escaped : mirror, asRendered ? rendered.counts : jsonCounts)) return false;
    this.count = n;
    this.extra += extraBytes;
    this.json = structure;
    this.mirror = mirror;
    this.jsonCounts = jsonCounts;
    this.lines.escaped = line.escaped;
    this.lines.raw = line.raw;
    this.lines.counts = line.counts;
    if (own === undefined) this.columns = undefined;
    else {
      this.columns = columns;
      this.cells.escaped = cells.escaped;
      this.cells.raw = cells.raw;
      this.cells.counts = cells.counts;
    }
    return true;
  }

  private fits(n: number, structure: number, text: number, counts: number[]): boolean {
    const l = this.limits;
    const s = this.share;
    if (n > l.maxItems) return false;
    if (ANSWER_FRAME_BYTES + structure + text > s * l.maxResultBytes) return false;
    if (text > s * Math.min(l.maxBlockBytes, l.maxTextBytes)) return false;
    // Each text measure's bound, in its own units.
    if (counts.some((c, i) => c > s * l.textMeasures[i]!.bound)) return false;
    return this.shape.maxEnvelopeBytes === undefined || this.shape.execAction === undefined || structure <= s * this.shape.maxEnvelopeBytes;
  }
}

/** `columns` with the keys of `own` it lacks, in first-seen order (a new array when it grows). */
function union(columns: readonly string[], own: readonly string[]): string[] {
  const missing = own.filter((k) => !columns.includes(k));
  return missing.length === 0 ? (columns as string[]) : [...columns, ...missing];
}
