/**
 * Brace expansion on the parsed query (glob-parse.ts reads the string; this works on what it read):
 * `{a,b}` groups (nested) and ranges (`{1..3}`, `{01..10}`, `{a..e}`) become alternatives, counted
 * before any is built so that a query over MAX_GLOB_ALTERNATIVES is refused without expanding it.
 * Ranges follow bash: integers with zero padding when an end is written with a leading zero, or
 * letters of one case; no step.
 */
import { WorkspaceError } from './errors.js';

/** Brace alternatives a query may expand to; more is refused (`INPUT_TOO_LARGE`). */
export const MAX_GLOB_ALTERNATIVES = 256;

/** One token of a segment. `src` is its text in the query (for showing alternatives). */
export type GlobToken =
  | { kind: 'char'; cp: number; src: string }
  | { kind: 'any'; src: string }
  | { kind: 'star'; src: string }
  /** `ranges` holds inclusive code point pairs `[lo0, hi0, lo1, hi1, ...]`. */
  | { kind: 'class'; negated: boolean; ranges: number[]; src: string };

/** One segment of an alternative: `**` alone, or tokens (stars already collapsed). */
export type GlobSegment = { kind: 'globstar' } | { kind: 'tokens'; tokens: GlobToken[] };

/** What the reader produces: tokens, separators, and brace groups of alternatives. */
export type Item = GlobToken | { kind: 'slash' } | { kind: 'group'; alts: Item[][] };
/** One alternative before it is split into segments. */
export type Flat = GlobToken | { kind: 'slash' };

const INT_RANGE = /^(-?\d+)\.\.(-?\d+)$/;
const CHAR_RANGE = /^([a-z]\.\.[a-z]|[A-Z]\.\.[A-Z])$/;

/** A refused query (`INVALID_PARAMS`). */
export const invalid = (message: string, data: Record<string, unknown> = {}): WorkspaceError => new WorkspaceError('INVALID_PARAMS', message, data);
/** A query with an alternative outside the workspace (`PATH_ESCAPES_ROOT`). */
export const escapes = (): WorkspaceError =>
  new WorkspaceError('PATH_ESCAPES_ROOT', '`query` must stay inside the workspace: no leading `/` and no `..` segments (in any brace alternative)');
const notARange = (src: string): WorkspaceError =>
  invalid(`\`{${src.slice(0, 40)}}\` is not a supported range: write \`{1..5}\`, \`{01..10}\` or \`{a..e}\` (no step), or escape the braces (\`\\{\`)`);

const charsOf = (s: string): Item[] => [...s].map((ch) => ({ kind: 'char', cp: ch.codePointAt(0)!, src: ch }));

/**
 * The alternatives of a range body (`1..3`, `01..10`, `-2..2`, `a..e`, `E..A`); `body` is null when
 * it holds more than plain characters, `src` is its text as written (for messages).
 */
export function rangeOf(body: string | null, src: string): Item[][] {
  if (body === '..') throw escapes(); // `{..}`: a parent segment to any reader that drops one-item braces
  if (body === null) throw notARange(src);
  const int = INT_RANGE.exec(body);
  const out: string[] = [];
  if (int !== null) {
    const [a, b] = [Number(int[1]), Number(int[2])];
    if (!Number.isSafeInteger(a) || !Number.isSafeInteger(b)) throw invalid(`Range \`{${src.slice(0, 40)}}\`: its ends must be integers of at most 15 digits`);
    tooMany(Math.abs(b - a) + 1);
    // Zero padding as bash does it: an end written with a leading zero pads every value to the longer end.
    const padded = /^-?0\d/.test(int[1]!) || /^-?0\d/.test(int[2]!);
    const width = padded ? Math.max(int[1]!.length, int[2]!.length) : 0;
    for (let v = a; ; v += a <= b ? 1 : -1) {
      const digits = String(Math.abs(v)).padStart(width - (v < 0 ? 1 : 0), '0');
      out.push(v < 0 ? `-${digits}` : digits);
      if (v === b) break;
    }
  } else if (CHAR_RANGE.test(body)) {
    const [a, b] = [body.charCodeAt(0), body.charCodeAt(3)];
    for (let v = a; ; v += a <= b ? 1 : -1) {
      out.push(String.fromCharCode(v));
      if (v === b) break;
    }
  } else throw notARange(src);
  return out.map(charsOf);
}

function tooMany(count: number): void {
  if (count > MAX_GLOB_ALTERNATIVES) {
    throw new WorkspaceError(
      'INPUT_TOO_LARGE',
      `Expected \`query\` to expand to at most ${MAX_GLOB_ALTERNATIVES} brace alternatives, got ${count > 1e9 ? 'more than 1e9' : count}; split it into several queries`,
      { max: MAX_GLOB_ALTERNATIVES, value: count },
    );
  }
}

/** How many alternatives `items` expand to, saturated just above the cap (so products stay small). */
function countOf(items: Item[]): number {
  let n = 1;
  for (const it of items) {
    if (it.kind !== 'group') continue;
    let sum = 0;
    for (const alt of it.alts) sum = Math.min(sum + countOf(alt), MAX_GLOB_ALTERNATIVES + 1);
    n = Math.min(n * sum, MAX_GLOB_ALTERNATIVES + 1);
  }
  return n;
}

/** Every alternative of `items`, in bash order (leftmost group varies slowest). */
function expand(items: Item[]): Flat[][] {
  let out: Flat[][] = [[]];
  for (const it of items) {
    if (it.kind !== 'group') {
      for (const o of out) o.push(it);
      continue;
    }
    const tails = it.alts.flatMap(expand);
    out = out.flatMap((o) => tails.map((t) => [...o, ...t]));
  }
  return out;
}

/** Every alternative of what the reader read, refused first if there would be too many. */
export function expandItems(items: Item[]): Flat[][] {
  tooMany(countOf(items));
  return expand(items);
}
