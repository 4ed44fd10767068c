/**
 * What one page of a `serve` tool may hold so that the result budget never has to cut it: every
 * active limit, not only the total size. A page is the tool's structure plus its JSON as the text
 * block (escaped, so up to twice its size), under the report reserve; its item arrays stay within
 * `maxItems`, and its strings (cursors, names, subjects) within `maxStringBytes`. When the limits
 * are too small for any page at all, `serve` refuses to start and names the limit and its minimum.
 */
import { BudgetError } from '../engine/errors.js';
import type { ResolvedLimits } from '../engine/options.js';

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
 * Minimums `serve` needs of the other limits, each with why: a cursor or a 255-byte file name
 * escaped as JSON fits the string bound; a page object's fields fit the key bound; the deepest
 * page (a git log entry's parents) fits the depth bound.
 */
export const SERVE_MINIMUMS = Object.freeze({
  maxStringBytes: 2048,
  maxKeys: 32,
  maxDepth: 8,
});

const FLAGS: Record<string, string> = {
  maxResultBytes: '--max-bytes',
  maxTextBytes: '--max-text-bytes',
  maxBlockBytes: '--max-block-bytes',
  maxStringBytes: '--max-string-bytes',
  maxKeys: '--max-keys',
  maxDepth: '--max-depth',
};

function tooSmall(name: string, value: number, min: number, why: string): BudgetError {
  return new BudgetError(
    'LIMIT_OUT_OF_RANGE',
    `\`${name}\` (${FLAGS[name] ?? name}) is ${value}, too small for serve: it needs at least ${min} (${why})`,
    { option: name, value, min },
  );
}

/** The page budget for the active limits; throws `LIMIT_OUT_OF_RANGE` when no page could fit. */
export function pageBudgetFor(limits: ResolvedLimits): PageBudget {
  for (const [name, min] of Object.entries(SERVE_MINIMUMS) as [keyof typeof SERVE_MINIMUMS, number][]) {
    if (limits[name] < min) throw tooSmall(name, limits[name], min, 'a page holds cursors, file names and nested entries');
  }
  // The structure and its escaped mirror (≤ 2×) under the room left after the report reserve.
  const byTotal = Math.floor((limits.maxResultBytes - limits.reserveBytes - PAGE_OVERHEAD_BYTES) / 3);
  // The mirror alone (≤ 2× the structure) within one text block and the text total.
  const byText = Math.floor((Math.min(limits.maxBlockBytes, limits.maxTextBytes) - PAGE_OVERHEAD_BYTES) / 2);
  const maxPageBytes = Math.min(byTotal, byText);
  if (maxPageBytes < MIN_PAGE_BYTES) {
    const name = byTotal <= byText ? 'maxResultBytes' : limits.maxBlockBytes <= limits.maxTextBytes ? 'maxBlockBytes' : 'maxTextBytes';
    const min =
      name === 'maxResultBytes' ? 3 * MIN_PAGE_BYTES + PAGE_OVERHEAD_BYTES + limits.reserveBytes : 2 * MIN_PAGE_BYTES + PAGE_OVERHEAD_BYTES;
    throw tooSmall(name, limits[name], min, `a page of at least ${MIN_PAGE_BYTES} bytes and its text mirror must fit`);
  }
  return {
    maxPageBytes,
    // The page's own array is one of the arrays the item bound counts.
    maxPageItems: limits.maxItems,
    maxPageStringBytes: Math.min(limits.maxStringBytes, maxPageBytes),
  };
}
