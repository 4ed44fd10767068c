/**
 * A search query compiled for a confined walk. The query is parsed once (glob-parse.ts: syntax,
 * braces, no leading `/`, no `..` in any alternative) and compiled once (glob-match.ts: a segment
 * automaton over the brace alternatives, with bounded segment matchers). The walk uses that one
 * automaton for everything:
 *
 * - pruning: stepped one directory name at a time, it lets the walk enter only directories under
 *   which some alternative can still match (`src/**\/*.ts` never leaves `src`);
 * - literal lookups: when every live state names a plain segment, the walk looks those names up
 *   instead of listing the directory;
 * - the match itself: a file matches when the step on its name reaches an end state, so what the
 *   walk reaches and what `matches` accepts are the same set by construction.
 *
 * Confinement does not depend on any of this: the walker opens every directory itself, one
 * component at a time, without following links.
 *
 * No limit on wildcard runs: the old matcher was a backtracking regular expression whose cost grew
 * as a name's length to the power of the runs, so runs were capped at 3. The automaton's cost is
 * linear in the query's size for each character of a path (glob-match.ts), so the caps that remain
 * are on size: MAX_QUERY_BYTES, MAX_GLOB_ALTERNATIVES, MAX_GLOB_BUILD_NODES, MAX_GLOB_STATES and
 * MAX_GLOB_MATCH_COST.
 */
import { CompiledGlob } from './glob-match.js';
import { parseGlob, renderAlternative } from './glob-parse.js';
import { WorkspaceError } from './errors.js';
import { BudgetError } from '../engine/index.js';

export { MAX_GLOB_ALTERNATIVES, MAX_QUERY_BYTES } from './glob-parse.js';
export { MAX_GLOB_BUILD_NODES, MAX_GLOB_MATCH_COST, MAX_GLOB_STATES } from './glob-match.js';

/** Check a query (type, size, NUL, syntax, escapes from the root) and return it. */
export function checkQuery(query: unknown): string {
  parseGlob(query);
  return query as string;
}

/**
 * The brace alternatives of a glob as the matcher reads them, each written back as a glob (ranges
 * expanded, leading `./` dropped, star runs collapsed); null when there are more than `max`.
 * Throws for a query the parser refuses.
 */
export function expandBraces(query: string, max: number): string[] | null {
  let alternatives;
  try {
    alternatives = parseGlob(query).alternatives;
  } catch (e) {
    if (e instanceof BudgetError && e.code === 'INPUT_TOO_LARGE' && e.data.value !== undefined) return null;
    throw e;
  }
  return alternatives.length > max ? null : alternatives.map(renderAlternative);
}

/** A compiled query: the walk's automaton (states are numbers, stepped one name at a time). */
export class GlobPlan {
  /** The states at the search base. */
  readonly initial: number[];

  private constructor(private readonly glob: CompiledGlob) {
    this.initial = glob.initial;
  }

  /** Check and compile a query (`INVALID_PARAMS`, `INPUT_TOO_LARGE`, `PATH_ESCAPES_ROOT`). */
  static compile(query: string, maxBytes?: number): GlobPlan {
    return new GlobPlan(CompiledGlob.compile(query, maxBytes));
  }

  /** Whether a path relative to the base matches the query (`dot: false`). */
  matches(path: string): boolean {
    return this.glob.matches(path);
  }

  /** The states after entering a directory named `name` (empty: nothing below can match). */
  stepDir(states: number[], name: string): number[] {
    return this.glob.step(states, name).filter((s) => this.glob.hasNext(s));
  }

  /** Whether a file named `name` here matches (exact: the same step as `matches`). */
  fileMayMatch(states: number[], name: string): boolean {
    return this.glob.accepts(this.glob.step(states, name));
  }

  /**
   * When every live state names a plain segment, the only names worth looking at here, sorted
   * by their UTF-8 bytes (the walk looks them up instead of listing the directory); else null.
   */
  literalNames(states: number[]): Buffer[] | null {
    const names = new Map<string, Buffer>();
    for (const s of states) {
      const next = this.glob.literalNext(s);
      if (next === null) return null;
      for (const name of next) {
        // A name with U+FFFD may be the lossy rendering of raw bytes: only a listing finds those.
        if (name.includes('\uFFFD')) return null;
        if (name !== '' && name !== '.') names.set(name, Buffer.from(name)); // never a directory entry
      }
    }
    return [...names.values()].sort(Buffer.compare);
  }
}
