/**
 * Size arithmetic for the fast path (fits.ts): the length of a number, the text bounds settled
 * from lengths, and the deferred check of text blocks against the JSON built anyway.
 */
import type { ResolvedLimits } from './options.js';
import { escapedSize, utf8Size } from './escape-count.js';
import { textsWithinMeasures } from './text-measure.js';

/** Length of `String(n)` for a finite number. Perf: integers without building a string. */
export function numberLength(n: number): number {
  return integerLength(n) || String(n).length;
}

/**
 * Length of `String(n)` for an integer below 1e21 in magnitude (written out in full, `-0` as `0`),
 * else 0. Perf: comparisons only; every power of ten here is exact as a double.
 */
export function integerLength(n: number): number {
  if (n === (n | 0)) return n < 0 ? 1 + digits(-n) : digits(n);
  if (!Number.isInteger(n)) return 0;
  const a = n < 0 ? -n : n;
  if (a >= 1e21) return 0;
  return (n < 0 ? 1 : 0) + digits(a);
}

/** Decimal digits of an integer 0 <= a < 1e21. */
function digits(a: number): number {
  if (a < 1e5) return a < 10 ? 1 : a < 100 ? 2 : a < 1e3 ? 3 : a < 1e4 ? 4 : 5;
  if (a < 1e10) return a < 1e6 ? 6 : a < 1e7 ? 7 : a < 1e8 ? 8 : a < 1e9 ? 9 : 10;
  if (a < 1e15) return a < 1e11 ? 11 : a < 1e12 ? 12 : a < 1e13 ? 13 : a < 1e14 ? 14 : 15;
  return a < 1e16 ? 16 : a < 1e17 ? 17 : a < 1e18 ? 18 : a < 1e19 ? 19 : a < 1e20 ? 20 : 21;
}

/**
 * Whether a value's JSON `json` is within the result bound and its text blocks `texts` within the
 * per-block and total text bounds and every text measure's. `lower` is a lower bound of the JSON's
 * UTF-8 bytes that counted each text as its UTF-16 length plus its quotes.
 *
 * Why this is sound: every part of the JSON takes at least what `lower` counted for it, and a
 * text's escaped UTF-8 size is never below its UTF-16 length, so the undercount
 * `slack = bytes - lower` bounds the sum of every text's excess over its length: a text is within
 * `length + slack`, and all of them within `sum of lengths + slack`.
 *
 * Perf: this replaces a measuring pass over every text (a regex and a UTF-8 count or an escape)
 * with arithmetic. A small JSON is first judged with 3 bytes a UTF-16 unit as its size (no unit
 * takes more), which spares the UTF-8 count of the whole JSON; only when that does not settle it
 * is the JSON counted, and a text measured exactly only when its bound still does not settle it.
 */
export function jsonFits(json: string, texts: readonly string[], lower: number, limits: ResolvedLimits): boolean {
  if (json.length > limits.maxResultBytes) return false;
  let bytes = json.length * 3 <= limits.maxResultBytes ? undefined : utf8Size(json);
  if (bytes !== undefined && bytes > limits.maxResultBytes) return false;
  if (texts.length === 0) return true;
  let sumLength = 0;
  for (let i = 0; i < texts.length; i++) sumLength += texts[i]!.length;
  let slack = Math.max(0, (bytes ?? json.length * 3) - lower);
  if (sumLength + slack > limits.maxTextBytes) {
    if (bytes === undefined) {
      bytes = utf8Size(json);
      slack = Math.max(0, bytes - lower);
    }
    if (sumLength + slack > limits.maxTextBytes && !totalWithin(texts, limits.maxTextBytes)) return false;
  }
  for (let i = 0; i < texts.length; i++) {
    const t = texts[i]!;
    if (t.length + slack > limits.maxBlockBytes && !blockWithin(t, limits.maxBlockBytes)) return false;
  }
  return textsWithinMeasures(texts, limits.textMeasures);
}

/** One text within the block bound: 6 bytes a unit, else exactly. */
function blockWithin(t: string, bound: number): boolean {
  return t.length * 6 <= bound || escapedSize(t) <= bound;
}

/** The texts' exact escaped sizes within the total text bound. */
function totalWithin(texts: readonly string[], bound: number): boolean {
  let total = 0;
  for (let i = 0; i < texts.length; i++) {
    total += escapedSize(texts[i]!);
    if (total > bound) return false;
  }
  return true;
}

/** The text bounds, proven from lengths alone (6 bytes a UTF-16 unit at most). */
export function textsWithinByLength(texts: readonly string[], limits: ResolvedLimits): boolean {
  let sum = 0;
  for (let i = 0; i < texts.length; i++) {
    const n = texts[i]!.length * 6;
    if (n > limits.maxBlockBytes) return false;
    sum += n;
  }
  return sum <= limits.maxTextBytes;
}
