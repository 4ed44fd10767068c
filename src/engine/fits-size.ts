/**
 * Size arithmetic for the fast path (fits.ts): cheap upper bounds of a string's wire size, the
 * length of a number, and the deferred check of text blocks against the JSON built anyway.
 */
import type { ResolvedLimits } from './options.js';
import { escapedLength, utf8Length } from './wire.js';

/**
 * Characters whose escape can take more than one extra byte (control characters other than
 * \b \t \n \f \r, and surrogates, which may be lone): with none present, a string's wire size is
 * at most its UTF-8 length plus its length (every other escape adds one byte).
 */
const RARE = /[\x00-\x07\x0b\x0e-\x1f\ud800-\udfff]/;

/**
 * Cheap upper bound of a string's escaped UTF-8 size. Perf: short strings are measured exactly
 * (cheap at this length); longer ones by one native UTF-8 count plus one extra byte a unit when
 * no rarely-escaped character occurs.
 */
export function upperBound(s: string): number {
  if (s.length <= 256) return escapedLength(s);
  if (RARE.test(s)) return escapedLength(s);
  return Buffer.byteLength(s, 'utf8') + s.length;
}

/** UTF-8 length plus one escape byte a unit, valid when no rarely-escaped character occurs. */
export function cheapUpper(s: string): number {
  return RARE.test(s) ? Infinity : Buffer.byteLength(s, 'utf8') + s.length;
}

/** Length of `String(n)` for a finite number. Perf: small integers without building a string. */
export function numberLength(n: number): number {
  if (Number.isInteger(n) && n >= 0 && n < 1e9) return n < 10 ? 1 : n < 100 ? 2 : n < 1e3 ? 3 : n < 1e4 ? 4 : n < 1e5 ? 5 : n < 1e6 ? 6 : n < 1e7 ? 7 : n < 1e8 ? 8 : 9;
  return String(n).length;
}

/**
 * Whether a value's JSON `json` is within the result bound and its text blocks `texts` within the
 * per-block and total text bounds. `lower` is a lower bound of the JSON's UTF-8 bytes that counted
 * each text as its UTF-16 length plus its quotes.
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
  let bytes = json.length * 3 <= limits.maxResultBytes ? undefined : utf8Length(json);
  if (bytes !== undefined && bytes > limits.maxResultBytes) return false;
  if (texts.length === 0) return true;
  let sumLength = 0;
  for (let i = 0; i < texts.length; i++) sumLength += texts[i]!.length;
  let slack = Math.max(0, (bytes ?? json.length * 3) - lower);
  if (sumLength + slack > limits.maxTextBytes) {
    if (bytes === undefined) {
      bytes = utf8Length(json);
      slack = Math.max(0, bytes - lower);
    }
    if (sumLength + slack > limits.maxTextBytes && !totalWithin(texts, limits.maxTextBytes)) return false;
  }
  for (let i = 0; i < texts.length; i++) {
    const t = texts[i]!;
    if (t.length + slack > limits.maxBlockBytes && !blockWithin(t, limits.maxBlockBytes)) return false;
  }
  return true;
}

/** One text within the block bound: 6 bytes a unit, then a cheap upper bound, then exactly. */
function blockWithin(t: string, bound: number): boolean {
  return t.length * 6 <= bound || cheapUpper(t) <= bound || escapedLength(t) <= bound;
}

/** The texts' exact escaped sizes within the total text bound. */
function totalWithin(texts: readonly string[], bound: number): boolean {
  let total = 0;
  for (let i = 0; i < texts.length; i++) {
    total += escapedLength(texts[i]!);
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

/**
 * The bounds settled again with long texts at a tighter upper bound (`cheapUpper`: UTF-8 length
 * plus one byte a unit, when no rarely-escaped character occurs) in place of 6 bytes a unit.
 * `upper`: the walk's upper bound, which counted each text at 6 bytes a unit plus its quotes.
 *
 * Perf: a long text (a command's output) is the usual reason the first bound is too loose; one
 * native UTF-8 count and one regex over it cost a fraction of serializing the value. Skipped, at no
 * cost, when even the tighter bound (at least 2 bytes a unit) cannot settle it.
 */
export function fitsWithTextUpper(texts: readonly string[], upper: number, limits: ResolvedLimits): boolean {
  let sumLength = 0;
  for (let i = 0; i < texts.length; i++) {
    const n = texts[i]!.length;
    if (n * 2 > limits.maxBlockBytes) return false;
    sumLength += n;
  }
  if (sumLength * 2 > limits.maxTextBytes || upper - 4 * sumLength > limits.maxResultBytes) return false;
  let total = upper;
  let text = 0;
  for (let i = 0; i < texts.length; i++) {
    const t = texts[i]!;
    let n = t.length * 6;
    if (t.length > SHORT_TEXT_UNITS) {
      n = cheapUpper(t);
      if (n > limits.maxBlockBytes) return false;
      total -= t.length * 6 - n;
    } else if (n > limits.maxBlockBytes) return false;
    text += n;
  }
  return total <= limits.maxResultBytes && text <= limits.maxTextBytes;
}

/** A text this short keeps its 6 bytes a unit (a regex call costs more than it would save). */
const SHORT_TEXT_UNITS = 64;
