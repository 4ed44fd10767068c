/**
 * A search query compiled for a confined walk. The query is checked (no leading `/`, no `..`
 * anywhere, including inside braces and after brace expansion), then turned into two things:
 *
 * - the exact matcher: picomatch on the whole path relative to the search base (`dot: false`), which
 *   decides every match;
 * - a pruning automaton: the query's brace alternatives split into segments (literal name, one-segment
 *   glob, `**`), stepped one directory name at a time, so the walk enters only directories under
 *   which some alternative can still match (`src/**\/*.ts` never leaves `src`), and looks literal
 *   names up directly instead of listing a directory when every live alternative names one.
 *
 * The automaton only prunes: it may let the walk into a directory that yields nothing (anything it
 * cannot model becomes "anything below here"), never keep it out of one the matcher would accept.
 * Confinement does not depend on it at all: the walker opens every directory itself, one component
 * at a time, without following links.
 */
import { createRequire } from 'node:module';
import { WorkspaceError } from './errors.js';

/** Longest accepted glob, in bytes. */
export const MAX_QUERY_BYTES = 1024;
/** Brace alternatives modelled for pruning; a query expanding to more is pruned only up to its first brace. */
export const MAX_GLOB_ALTERNATIVES = 64;

type Matcher = (path: string) => boolean;
/** picomatch 2.x ships no types; the one call used here. */
type Picomatch = (glob: string, options: { dot: boolean }) => Matcher;
const picomatch = createRequire(import.meta.url)('picomatch') as Picomatch;

/** A `..` segment anywhere in a glob, including inside braces (`{..,x}`). */
const PARENT_SEGMENT = /(^|[/{,])\.\.($|[/},])/;
/** Characters that make a segment more than a plain name (for picomatch, or escapes). */
const SPECIAL = /[*?[\]{}()!+@|\\]/;

/** Check a query's syntax (required, size, NUL, leading `/`, `..`, negation). */
export function checkQuery(query: unknown): string {
  if (typeof query !== 'string' || query.trim() === '') {
    throw new WorkspaceError('INVALID_PARAMS', 'Expected `query` to be a non-empty glob such as "**/*.ts"');
  }
  if (Buffer.byteLength(query) > MAX_QUERY_BYTES) {
    throw new WorkspaceError('INPUT_TOO_LARGE', `Expected \`query\` to be at most ${MAX_QUERY_BYTES} bytes`, { max: MAX_QUERY_BYTES });
  }
  if (query.includes('\0')) throw new WorkspaceError('INVALID_PARAMS', '`query` contains a NUL byte');
  if (query.startsWith('/') || PARENT_SEGMENT.test(query)) {
    throw new WorkspaceError('PATH_ESCAPES_ROOT', '`query` must stay inside the workspace: no leading `/` and no `..` segments');
  }
  if (query.startsWith('!') && !query.startsWith('!(')) {
    throw new WorkspaceError('INVALID_PARAMS', 'Negated queries (a leading `!`) are not supported; give the glob of the files to find');
  }
  // The matcher is a backtracking regular expression: its worst case grows as a name's length to
  // the power of the wildcard runs, and one match cannot be interrupted. Nested quantifiers
  // (extglobs) and more than MAX_GLOB_WILDCARD_RUNS runs are refused so one entry costs at most
  // milliseconds (measured: 3 runs ≈ 10–20 ms on a crafted 255-byte name, 4 runs ≈ 1 s, 5 ≈ 60 s).
  if (EXTGLOB.test(query)) {
    throw new WorkspaceError('INVALID_PARAMS', 'Extended globs such as `+(a|b)` or `@(x)` are not supported; use braces `{a,b}` instead');
  }
  const runs = query.match(WILDCARD_RUN)?.length ?? 0;
  if (runs > MAX_GLOB_WILDCARD_RUNS) {
    throw new WorkspaceError(
      'INVALID_PARAMS',
      `Expected \`query\` to have at most ${MAX_GLOB_WILDCARD_RUNS} wildcard runs (\`*\`, \`**\` or \`?\`, brace alternatives counted), got ${runs}; narrow it with a literal directory or name`,
      { max: MAX_GLOB_WILDCARD_RUNS, value: runs },
    );
  }
  return query;
}

/** Wildcard runs a query may hold (each `*`, `**` or `?` run, in any brace alternative). */
export const MAX_GLOB_WILDCARD_RUNS = 3;
/** A run of wildcard characters not escaped by a backslash. */
const WILDCARD_RUN = /(?<!\\)[*?]+/g;
/** An extglob: a quantifier or `@`/`!` right before a parenthesis. */
const EXTGLOB = /[@!+*?]\(/;

type Segment = { kind: 'literal'; name: string } | { kind: 'glob'; test: Matcher } | { kind: 'globstar' } | { kind: 'any' };

/**
 * Expand `{a,b}` groups (nested, escapes and `[...]` respected), bash-style; groups without a
 * top-level comma (`{1..3}`, `{x}`) stay for picomatch. Null when there would be more than `max`.
 */
export function expandBraces(p: string, max: number): string[] | null {
  for (let i = 0; i < p.length; i++) {
    const c = p[i];
    if (c === '\\') {
      i++;
      continue;
    }
    if (c === '[') {
      const close = p.indexOf(']', i + 2);
      if (close > 0) i = close;
      continue;
    }
    if (c !== '{') continue;
    let depth = 0;
    const commas: number[] = [];
    let end = -1;
    for (let j = i; j < p.length && end < 0; j++) {
      const d = p[j];
      if (d === '\\') j++;
      else if (d === '{') depth++;
      else if (d === '}' && --depth === 0) end = j;
      else if (d === ',' && depth === 1) commas.push(j);
    }
    if (end < 0 || commas.length === 0) continue; // not a list: literal, a range, or unbalanced
    const out: string[] = [];
    const cuts = [i, ...commas, end];
    for (let k = 0; k + 1 < cuts.length; k++) {
      const alt = p.slice(cuts[k]! + 1, cuts[k + 1]);
      const sub = expandBraces(p.slice(0, i) + alt + p.slice(end + 1), max - out.length);
      if (sub === null) return null;
      out.push(...sub);
      if (out.length > max) return null;
    }
    return out;
  }
  return [p];
}

/**
 * Split one alternative at `/` outside brackets, parentheses and braces. A `/` inside one of those
 * (or an unbalanced opener) cannot be modelled per segment: from that segment on it is `any`.
 */
function splitSegments(alt: string, braceIsOpaque: boolean): { parts: string[]; anyFrom: number } {
  const parts: string[] = [];
  let cur = '';
  let depth = 0;
  let opaque = false;
  for (let i = 0; i < alt.length; i++) {
    const c = alt[i]!;
    if (c === '\\') {
      cur += c + (alt[i + 1] ?? '');
      i++;
      continue;
    }
    if (c === '[' || c === '(' || c === '{') depth++;
    else if ((c === ']' || c === ')' || c === '}') && depth > 0) depth--;
    if (c === '{' && braceIsOpaque) opaque = true;
    if (c === '/' && depth > 0) return { parts, anyFrom: parts.length };
    if (c === '/') {
      if (opaque) return { parts, anyFrom: parts.length };
      parts.push(cur);
      cur = '';
    } else cur += c;
  }
  if (opaque) return { parts, anyFrom: parts.length };
  parts.push(cur);
  return { parts, anyFrom: -1 };
}

function segmentOf(part: string): Segment {
  if (part === '**') return { kind: 'globstar' };
  if (!SPECIAL.test(part)) return { kind: 'literal', name: part };
  return { kind: 'glob', test: picomatch(part, { dot: false }) };
}

/** A state of the pruning automaton: alternative `a`, next segment `i`, packed as `a * STRIDE + i`. */
const STRIDE = 4096;

/** A compiled query: the exact matcher and the pruning automaton. */
export class GlobPlan {
  /** The states at the search base (closed under `**` matching nothing). */
  readonly initial: number[];
  private readonly acceptFrom: boolean[][];

  private constructor(
    private readonly alts: Segment[][],
    /** Whether a path relative to the base matches the query (picomatch, `dot: false`). */
    readonly matches: Matcher,
  ) {
    this.acceptFrom = alts.map((segs) => {
      const acc: boolean[] = new Array<boolean>(segs.length + 1).fill(false);
      acc[segs.length] = true;
      for (let i = segs.length - 1; i >= 0; i--) {
        const k = segs[i]!.kind;
        acc[i] = k === 'any' || (k === 'globstar' && acc[i + 1]!);
      }
      return acc;
    });
    this.initial = this.close(alts.map((_, a) => a * STRIDE));
  }

  /** Check and compile a query (throws `PATH_ESCAPES_ROOT` for an alternative that climbs or is absolute). */
  static compile(query: string): GlobPlan {
    checkQuery(query);
    const expanded = expandBraces(query, MAX_GLOB_ALTERNATIVES);
    const alts: Segment[][] = [];
    for (const alt of expanded ?? [query]) {
      if (expanded !== null && (alt.startsWith('/') || alt.split('/').includes('..'))) {
        throw new WorkspaceError('PATH_ESCAPES_ROOT', '`query` must stay inside the workspace: it expands to a pattern outside the root');
      }
      // Too many alternatives: model the static part before the first brace, then anything.
      const { parts, anyFrom } = splitSegments(alt, expanded === null);
      const segs = parts.filter((s) => s !== '' && s !== '.').map(segmentOf);
      if (anyFrom >= 0) segs.push({ kind: 'any' });
      alts.push(segs);
    }
    return new GlobPlan(alts, picomatch(query, { dot: false }));
  }

  /** Add the states reached by letting `**` match no segment. */
  private close(states: number[]): number[] {
    const out: number[] = [];
    const add = (s: number): void => {
      if (out.includes(s)) return;
      out.push(s);
      const seg = this.alts[Math.floor(s / STRIDE)]![s % STRIDE];
      if (seg?.kind === 'globstar') add(s + 1);
    };
    for (const s of states) add(s);
    return out;
  }

  private segAt(s: number): Segment | undefined {
    return this.alts[Math.floor(s / STRIDE)]![s % STRIDE];
  }

  /** The states after entering a directory named `name` (empty: nothing below can match). */
  stepDir(states: number[], name: string): number[] {
    const next: number[] = [];
    for (const s of states) {
      const seg = this.segAt(s);
      if (seg === undefined) continue;
      if (seg.kind === 'any' || (seg.kind === 'globstar' && name[0] !== '.')) next.push(s);
      else if ((seg.kind === 'literal' && seg.name === name) || (seg.kind === 'glob' && seg.test(name))) next.push(s + 1);
    }
    // Only states with a segment left can match something below.
    return this.close(next).filter((s) => this.segAt(s) !== undefined);
  }

  /** Whether a file named `name` here can match some alternative (the exact matcher decides). */
  fileMayMatch(states: number[], name: string): boolean {
    for (const s of states) {
      const seg = this.segAt(s);
      if (seg === undefined) continue;
      const a = Math.floor(s / STRIDE);
      const i = s % STRIDE;
      if (seg.kind === 'any') return true;
      if (seg.kind === 'globstar') {
        if (name[0] !== '.' && this.acceptFrom[a]![i]) return true;
      } else if ((seg.kind === 'literal' && seg.name === name) || (seg.kind === 'glob' && seg.test(name))) {
        if (this.acceptFrom[a]![i + 1]) return true;
      }
    }
    return false;
  }

  /**
   * When every live state names a literal segment, the only names worth looking at here, sorted
   * by their UTF-8 bytes (the walk looks them up instead of listing the directory); else null.
   */
  literalNames(states: number[]): Buffer[] | null {
    const names = new Map<string, Buffer>();
    for (const s of states) {
      const seg = this.segAt(s);
      if (seg === undefined) continue;
      // A name with U+FFFD may be the lossy rendering of raw bytes: only a listing finds those.
      if (seg.kind !== 'literal' || seg.name.includes('\uFFFD')) return null;
      names.set(seg.name, Buffer.from(seg.name));
    }
    return [...names.values()].sort(Buffer.compare);
  }
}
