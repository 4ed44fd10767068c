/**
 * One path segment of a glob, compiled and matched against one name, in time bounded by
 * construction: no regular expression and no backtracking.
 *
 * A segment is pieces separated by stars, `P0 * P1 * ... * Pk`; every token of a piece (a literal
 * character, `?`, a class) matches exactly one code point, so a piece matches a fixed number of code
 * points. A name matches when P0 matches its start, Pk its end, and P1 … Pk-1 occur in order, without
 * overlap, in between. Placing each middle piece at its leftmost occurrence is never worse than any
 * other placement (it leaves the most room to the right), so one left-to-right pass decides:
 *
 * - P0 and Pk: one comparison each, at most n + 1 tokens apiece;
 * - a middle piece of plain characters: `indexOf` from the current position; anything else: tried at
 *   each position from there, at most (n + 1) · |Pi| steps; every search starts where the previous
 *   piece ended.
 *
 * A token costs 1, a class its range count. So one test costs at most (n + 1) · cost(segment) steps
 * for a name of n UTF-16 units, where cost(segment) = 1 + the dearest token of P0 + the dearest
 * token of Pk + every token of P1 … Pk-1: head and tail do not multiply with their length
 * (`{foo,bar}*{.test,.spec}.ts` costs 3 per segment). Perf: the plain-character search is the native
 * one, so the adversarial `*aaaa…ab` against `aaaa…a` is linear in practice; a middle piece with `?`
 * or a class is what the cost counts.
 *
 * Dotfiles (`dot: false`): a name starting with `.` matches only a segment whose first token is a
 * literal `.` (`*`, `?` and `[...]` never match a leading dot).
 */
import type { GlobToken } from './glob-parse.js';

const CHAR = 0;
const ANY = 1;
const CLASS = 2;

/** Tokens `[from, to)` between two stars. */
interface Piece {
  from: number;
  to: number;
  /** The piece as a string when every token is a literal character, else null. */
  text: string | null;
}

/** One distinct segment pattern, compiled to flat arrays. */
export interface SegmentMatcher {
  /** The segment as a plain name when every token is a literal character, else null. */
  literal: string | null;
  /** Per non-star token: kind, code point (CHAR), class (CLASS). Stars are not stored. */
  kinds: Uint8Array;
  cps: Int32Array;
  classes: ({ negated: boolean; ranges: Int32Array } | null)[];
  /** The pieces between stars (one piece when the segment has no star). */
  pieces: Piece[];
  starred: boolean;
  /** First token is a literal `.`: the only way to match a name that starts with `.`. */
  dotFirst: boolean;
  /** Steps per unit of a name, at most (see the header). */
  cost: number;
}

/** Compile one segment's tokens (stars already collapsed: no two in a row). */
export function compileSegment(tokens: GlobToken[]): SegmentMatcher {
  const units = tokens.filter((t) => t.kind !== 'star');
  const kinds = new Uint8Array(units.length);
  const cps = new Int32Array(units.length);
  const classes: SegmentMatcher['classes'] = units.map(() => null);
  units.forEach((t, k) => {
    if (t.kind === 'char') cps[k] = t.cp;
    else if (t.kind === 'any') kinds[k] = ANY;
    else if (t.kind === 'class') {
      kinds[k] = CLASS;
      classes[k] = { negated: t.negated, ranges: Int32Array.from(t.ranges) };
    }
  });
  const pieces: Piece[] = [];
  // Split at stars; piece bounds index the star-free arrays.
  let at = 0;
  let start = 0;
  for (const t of tokens) {
    if (t.kind === 'star') {
      pieces.push({ from: start, to: at, text: null });
      start = at;
    } else at++;
  }
  pieces.push({ from: start, to: at, text: null });
  for (const p of pieces) {
    const slice = units.slice(p.from, p.to);
    if (slice.every((t) => t.kind === 'char')) p.text = String.fromCodePoint(...slice.map((t) => (t as { cp: number }).cp));
  }
  // A token costs 1, a class its range count. Head and tail: one comparison each, at most n + 1
  // tokens, so (n + 1) · their dearest token. Middle pieces: up to n + 1 tries, each all its tokens.
  const tokenCost = (t: GlobToken): number => (t.kind === 'class' ? t.ranges.length / 2 : 1);
  const dearest = (p: Piece): number => Math.max(1, ...units.slice(p.from, p.to).map(tokenCost));
  const middle = pieces.slice(1, -1).reduce((sum, p) => sum + units.slice(p.from, p.to).reduce((c, t) => c + tokenCost(t), 0), 0);
  const cost = 1 + dearest(pieces[0]!) + (pieces.length > 1 ? dearest(pieces[pieces.length - 1]!) + middle : 0);
  const first = tokens[0];
  return {
    literal: pieces.length === 1 ? pieces[0]!.text : null,
    kinds,
    cps,
    classes,
    pieces,
    starred: pieces.length > 1,
    dotFirst: first?.kind === 'char' && first.cp === 0x2e,
    cost,
  };
}

function classHas(c: { negated: boolean; ranges: Int32Array }, cp: number): boolean {
  const r = c.ranges;
  for (let k = 0; k < r.length; k += 2) if (cp >= r[k]! && cp <= r[k + 1]!) return !c.negated;
  return c.negated;
}

/** Match a piece at unit `i` of `s`; the unit after it, or -1. At most |piece| steps. */
function matchPiece(seg: SegmentMatcher, p: Piece, s: string, i: number): number {
  const { kinds, cps, classes } = seg;
  for (let k = p.from; k < p.to; k++) {
    if (i >= s.length) return -1;
    const c = s.codePointAt(i)!;
    const kind = kinds[k];
    if (kind === CHAR ? c !== cps[k] : kind === CLASS && !classHas(classes[k]!, c)) return -1;
    i += c > 0xffff ? 2 : 1;
  }
  return i;
}

const isHigh = (u: number): boolean => u >= 0xd800 && u <= 0xdbff;
const isLow = (u: number): boolean => u >= 0xdc00 && u <= 0xdfff;

/** Whether unit `i` is the second half of a surrogate pair (not a code point boundary). */
function splitsPair(s: string, i: number): boolean {
  return i > 0 && isLow(s.charCodeAt(i)) && isHigh(s.charCodeAt(i - 1));
}

/** Whether one name (no `/`) matches one segment; at most (n + 1) · cost steps (see the header). */
export function testSegment(seg: SegmentMatcher, s: string): boolean {
  if (seg.literal !== null) return s === seg.literal;
  if (s.charCodeAt(0) === 0x2e && !seg.dotFirst) return false;
  const { pieces } = seg;
  const n = s.length;
  const head = pieces[0]!;
  if (!seg.starred) return matchPiece(seg, head, s, 0) === n;
  let i = matchPiece(seg, head, s, 0);
  if (i < 0) return false;
  // The last piece ends the name: find where it starts by stepping back its code points.
  const tail = pieces[pieces.length - 1]!;
  let limit = n;
  for (let k = tail.from; k < tail.to; k++) {
    if (limit <= i) return false;
    limit -= limit >= 2 && isLow(s.charCodeAt(limit - 1)) && isHigh(s.charCodeAt(limit - 2)) ? 2 : 1;
  }
  if (limit < i || matchPiece(seg, tail, s, limit) !== n) return false;
  for (let m = 1; m < pieces.length - 1; m++) {
    const p = pieces[m]!;
    if (p.text !== null) {
      let j = s.indexOf(p.text, i);
      // Only at code point boundaries (a lone surrogate in the piece never takes half a pair).
      while (j >= 0 && (splitsPair(s, j) || splitsPair(s, j + p.text.length))) j = s.indexOf(p.text, j + 1);
      if (j < 0 || j + p.text.length > limit) return false;
      i = j + p.text.length;
      continue;
    }
    let end = -1;
    for (let j = i; j < limit && end < 0; j += s.codePointAt(j)! > 0xffff ? 2 : 1) end = matchPiece(seg, p, s, j);
    // The leftmost occurrence ends first: if it ends past the tail's start, every other does too.
    if (end < 0 || end > limit) return false;
    i = end;
  }
  return true;
}
