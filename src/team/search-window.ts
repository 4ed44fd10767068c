/**
 * The windowed message search's paging rule, one home for both engines: a window's ranked rows
 * (limit+1 read, by (score, id)) give the page and where the next one starts (after the page's last
 * row in this window; else the next older window, below `lo`; else nowhere), and an empty page with
 * a next window moves on to it within the same call, up to `searchWindowsPerCall` windows.
 */
import { TEAM_READ_LIMITS } from './limits.js';
import type { SearchPos } from './types.js';

/** One ranked row of a window. */
export interface RankedRow {
  id: number;
  score: number;
}

/** The page of a window's `ranked` rows and where the next page starts. */
export function windowPage<T extends RankedRow>(ranked: readonly T[], limit: number, hi: number, lo: number): { page: T[]; next?: SearchPos } {
  const page = ranked.slice(0, limit);
  const last = page[page.length - 1];
  const next: SearchPos | undefined = ranked.length > limit && last !== undefined ? { hi, after: { score: last.score, id: last.id } } : lo > 0 ? { hi: lo } : undefined;
  return next === undefined ? { page } : { page, next };
}

/** Go on to the next window in this call: the page is empty, there is one, and `windows` is under the cap. */
export function nextWindow(page: readonly RankedRow[], next: SearchPos | undefined, windows: number): next is SearchPos {
  return page.length === 0 && next !== undefined && windows < TEAM_READ_LIMITS.searchWindowsPerCall;
}
