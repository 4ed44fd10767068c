/**
 * The ways the text the model reads is measured besides its bytes, declared once: the budgeter
 * (budgeter-strings.ts), the text mirror (text-mirror.ts), the fast path (fits*.ts), serve's page
 * budget and the reading tool iterate over this list instead of naming a measure. Each measure
 * names its limit in the limits table (which gives its flag, variable, range and report kind) and
 * brings its counting rule. The bytes are not in the list: they are the wire's own measure (the
 * result bound, the text total and the block bound all count them), written as the output is.
 *
 * A measure bounds all text blocks together (a block's count is its text's, a running total is
 * kept across blocks); a text is cut at the tightest of the byte bounds and every measure, and the
 * report names the one that cut.
 */
import { LIMITS, type BudgetKind, type BudgetLimits, type NumericLimit } from './limits.js';
import { TOKEN_COUNT_RULE } from './token-estimate.js';

/** A running count over one text read in pieces: where the counting rule stands, and the count so far. */
export interface MeasureTally {
  /** The rule's own state between pieces (0 at a text's start). */
  state: number;
  /** The count so far, in the measure's own units (see {@link TextMeasure.perUnit}). */
  cost: number;
}

/** A counting rule: additive (a text read in pieces counts as the whole) and cut without splitting a character. */
export interface CountRule {
  /**
   * Counts `text[from, to)` onto `tally`, stopping before the first character that would take
   * the count past `limit`; updates `tally` to what was counted and returns where it stopped.
   * Never stops inside a surrogate pair (a high surrogate at `to` counts as a lone one).
   */
  readonly scan: (tally: MeasureTally, text: string, from: number, to: number, limit: number) => number;
  /** Counts in one unit of the limit (the token estimate counts hundredths of a token). */
  readonly perUnit: number;
  /**
   * No character counts more than this per UTF-8 byte it takes: a bound at or above the text
   * bound's bytes at this rate is never reached (nothing is counted), and serve sizes pages by it.
   */
  readonly maxPerByte: number;
  /** Every UTF-16 unit counts at least this much: a text too long for a bound is refused unread. */
  readonly minPerUnit: number;
}

/** One way to measure text: the limit that bounds it and the rule that counts it. */
export interface TextMeasure extends CountRule {
  /** The limit of the table that bounds all text blocks together, in its units. */
  readonly limit: NumericLimit;
  /** What is counted, in words, for messages that name the bound (`… 2000 estimated tokens of text`). */
  readonly what: string;
}

/** The measures, in the order they are tried: on a tie, the first names the cut. */
export const TEXT_MEASURES: readonly TextMeasure[] = [{ limit: 'maxTokens', what: 'estimated tokens of text', ...TOKEN_COUNT_RULE }];

/** A measure whose bound can cut under the resolved limits. */
export interface ActiveMeasure {
  readonly measure: TextMeasure;
  /** The bound in the measure's own units. */
  readonly bound: number;
  /** The report kind that names it as the bound that cut (its limit's, from the table). */
  readonly kind: BudgetKind;
}

/**
 * The measures that can cut under `limits`: a bound at or above what the text bound's bytes can
 * count is never reached, so it is left out and nothing is counted for it.
 */
export function activeMeasures(limits: Readonly<BudgetLimits>): readonly ActiveMeasure[] {
  const out: ActiveMeasure[] = [];
  for (const measure of TEXT_MEASURES) {
    const bound = limits[measure.limit] * measure.perUnit;
    if (bound >= limits.maxTextBytes * measure.maxPerByte) continue;
    out.push({ measure, bound, kind: LIMITS[measure.limit].kinds[0]! });
  }
  return Object.freeze(out);
}

/** Fresh tallies, one per active measure, for a text about to be read. */
export function startTallies(measures: readonly ActiveMeasure[]): MeasureTally[] {
  const out: MeasureTally[] = [];
  for (let i = 0; i < measures.length; i++) out.push({ state: 0, cost: 0 });
  return out;
}

/** A whole text's count by each measure. */
export function countText(measures: readonly ActiveMeasure[], text: string): number[] {
  const out: number[] = [];
  for (let i = 0; i < measures.length; i++) {
    const t: MeasureTally = { state: 0, cost: 0 };
    measures[i]!.measure.scan(t, text, 0, text.length, Infinity);
    out.push(t.cost);
  }
  return out;
}

/**
 * Whether texts read as separate blocks stay within every active bound together (the fast path's
 * check, on the same texts its byte checks read). Stops at the first text past a bound.
 */
export function textsWithinMeasures(texts: readonly string[], measures: readonly ActiveMeasure[]): boolean {
  for (let m = 0; m < measures.length; m++) {
    const { measure, bound } = measures[m]!;
    let cost = 0;
    const t: MeasureTally = { state: 0, cost: 0 };
    for (let i = 0; i < texts.length; i++) {
      const text = texts[i]!;
      // Perf: a text too long for the bound at the least a unit counts is refused before it is read.
      if (cost + text.length * measure.minPerUnit > bound) return false;
      t.state = 0;
      t.cost = cost;
      if (measure.scan(t, text, 0, text.length, bound) < text.length) return false;
      cost = t.cost;
    }
  }
  return true;
}
