/**
 * What one page of a `serve` tool may hold so that the result budget never has to cut it: every
 * active limit, not only the total size. A page is the tool's structure plus its JSON as the text
 * block (escaped, so up to twice its size), under the report reserve; its item arrays stay within
 * `maxItems`, and its strings (cursors, names, subjects) within `maxStringBytes`. When the limits
 * are too small for any page at all, `serve` refuses to start and names the limit and its minimum.
 */
import { BudgetError, cutString, LIMITS, NUMERIC_LIMITS, type NumericLimit, type ResolvedLimits } from '../engine/index.js';

/** The bounds a page is built to, at the source. */
export interface PageBudget {
  /** Bytes the page's items may take as JSON (the structure, before its text mirror). */
  maxPageBytes: number;
  /** Items one page may list (a tool's `limit` is clamped to it; `has_more` continues). */
  maxPageItems: number;
  /** Bytes one string of a page may take (a read window's content is sized to it). */
  maxPageStringBytes: number;
}

/** Room kept for the page object's own fields (path, has_more, next_cursor, notes) outside its items. */
export const PAGE_OVERHEAD_BYTES = 512;
/** Smallest page worth serving: below it `serve` refuses to start. */
export const MIN_PAGE_BYTES = 512;

/**
 * Minimums `serve` needs of the other limits (declared with each limit): a cursor or a 255-byte
 * file name escaped as JSON fits the string bound; a page object's fields fit the key bound; the
 * deepest page (a git log entry's parents) fits the depth bound.
 */
export const SERVE_MINIMUMS: Readonly<Partial<Record<NumericLimit, number>>> = Object.freeze(
  Object.fromEntries(NUMERIC_LIMITS.flatMap((n) => (LIMITS[n].serveMinimum === undefined ? [] : [[n, LIMITS[n].serveMinimum.min]]))),
);

function tooSmall(name: NumericLimit, value: number, min: number, why: string): BudgetError {
  return new BudgetError(
    'LIMIT_OUT_OF_RANGE',
    `\`${name}\` (${LIMITS[name].flag}) is ${value}, too small for serve: it needs at least ${min} (${why})`,
    { option: name, value, min },
  );
}

/** Bytes of a cursor's fixed part: its signature, separator, kind, hashes, numbers and JSON punctuation. */
const CURSOR_FIXED_BYTES = 256;
/** Longest file name a walk position names (common file systems). */
const MAX_NAME_BYTES = 255;

/**
 * Bytes of directory path below a search's `path` that a search cursor can name and still fit one
 * page string: the cursor holds the walk position as base64 names inside a base64 payload (each
 * base64 layer is 4/3 of its input), plus the last entry's name. Deeper directories are not
 * entered, and the answer's note says so.
 */
export function searchPathBytes(page: PageBudget, max = 1024): number {
  const payload = Math.floor(((page.maxPageStringBytes - CURSOR_FIXED_BYTES) * 3) / 4);
  const names = Math.floor((payload * 3) / 4) - MAX_NAME_BYTES;
  return Math.max(0, Math.min(max, names));
}

/** The page budget for the active limits; throws `LIMIT_OUT_OF_RANGE` when no page could fit. */
export function pageBudgetFor(limits: ResolvedLimits): PageBudget {
  for (const name of NUMERIC_LIMITS) {
    const m = LIMITS[name].serveMinimum;
    if (m !== undefined && limits[name] < m.min) throw tooSmall(name, limits[name], m.min, m.why);
  }
  // The structure and its escaped mirror (≤ 2×) under the room left after the report reserve.
  const byTotal = Math.floor((limits.maxResultBytes - limits.reserveBytes - PAGE_OVERHEAD_BYTES) / 3);
  // The mirror alone (≤ 2× the structure) within one text block and the text total.
  const byText = Math.floor((Math.min(limits.maxBlockBytes, limits.maxTextBytes) - PAGE_OVERHEAD_BYTES) / 2);
  // Each text measure that can cut: the bytes of text its bound is sure to allow (no character
  // counts more than `maxPerByte` a byte); a page's structure is at most 1.5× the page bound as
  // JSON (see `fitItems`), and its text at most 1.5× that JSON as read (`structured` sends the
  // JSON otherwise).
  let byMeasure = Infinity;
  let tightest: (typeof limits.textMeasures)[number] | undefined;
  for (const m of limits.textMeasures) {
    const bytes = Math.floor((((m.bound / m.measure.maxPerByte) - PAGE_OVERHEAD_BYTES) * 4) / 9);
    if (bytes < byMeasure) {
      byMeasure = bytes;
      tightest = m;
    }
  }
  const maxPageBytes = Math.min(byTotal, byText, byMeasure);
  if (maxPageBytes < MIN_PAGE_BYTES) {
    const measure = tightest !== undefined && byMeasure < Math.min(byTotal, byText) ? tightest.measure : undefined;
    const name = measure?.limit ?? (byTotal <= byText ? 'maxResultBytes' : limits.maxBlockBytes <= limits.maxTextBytes ? 'maxBlockBytes' : 'maxTextBytes');
    const min =
      measure !== undefined
        ? Math.ceil(((Math.ceil((9 * MIN_PAGE_BYTES) / 4) + PAGE_OVERHEAD_BYTES) * measure.maxPerByte) / measure.perUnit)
        : name === 'maxResultBytes'
          ? 3 * MIN_PAGE_BYTES + PAGE_OVERHEAD_BYTES + limits.reserveBytes
          : 2 * MIN_PAGE_BYTES + PAGE_OVERHEAD_BYTES;
    throw tooSmall(name, limits[name], min, `a page of at least ${MIN_PAGE_BYTES} bytes and its text mirror must fit`);
  }
  return {
    maxPageBytes,
    // The page's own array is one of the arrays the item bound counts.
    maxPageItems: limits.maxItems,
    maxPageStringBytes: Math.min(limits.maxStringBytes, maxPageBytes),
  };
}

/**
 * Fit the strings a page echoes back (its `path`, a search's `query`) to the page string bound at
 * the source: a longer one is cut on a character boundary and `<key>_truncated: true` is added,
 * so the budget never has to cut it (and the report stays for real cuts).
 */
export function fitEchoes<T extends object>(page: T, budget: PageBudget, keys: readonly string[]): T {
  const out = page as Record<string, unknown>;
  for (const key of keys) {
    const v = out[key];
    if (typeof v !== 'string') continue;
    const cut = cutString(v, 0, budget.maxPageStringBytes - 16, false);
    if (cut.end >= v.length) continue;
    out[key] = v.slice(0, cut.end);
    out[`${key}_truncated`] = true;
  }
  return page;
}
