/**
 * Glob search over the workspace, confined and bounded. The query is compiled by glob-pattern.ts
 * (one automaton, bounded in time by construction, decides matches with `dot: false` and prunes
 * directories that cannot match); the walk (glob-walk.ts) starts at the `path` directory opened
 * through the gate and enters every directory from its parent's descriptor without following
 * links, so neither a pattern's static base nor anything met on the way can lead outside the root:
 * a symlink is never entered and never listed, and a query naming an existing or a missing name
 * behind a link gets the same answer.
 *
 * One call stops at the first of: the page full (`limit` matches, or as many as its sizer takes, so
 * the result budget never has to cut it), the walk's end, or a cap on entries visited or on time
 * (`truncated_scan: true` and a `note`). `next_cursor` holds where the walk stands, so the next call
 * goes on from there: no match is repeated or lost across the pages of an unchanged tree.
 */
import { isUtf8 } from 'node:buffer';
import { createHash } from 'node:crypto';
import { WorkspaceError, type DirHandle, type Workspace } from './confine.js';
import type { CursorCodec } from '../shared/cursor.js';
import { jsonSizer, type PageSizer } from '../shared/page-meter.js';
import { GlobPlan, MAX_GLOB_MATCH_COST, MAX_QUERY_BYTES } from './glob-pattern.js';
import { GlobWalk, type WalkLimits, type WalkPosition } from './glob-walk.js';

export { MAX_QUERY_BYTES, checkQuery } from './glob-pattern.js';

/** A match whose path is not valid UTF-8: its index in `matches` (which holds a lossy rendering) and the raw bytes. */
export interface RawMatch {
  index: number;
  /** The raw path relative to `path`, base64. */
  path_base64: string;
}

export interface SearchPage {
  query: string;
  /** The glob a plain-word query was read as (absent when the query is a glob). */
  glob?: string;
  /** The directory searched, relative to the root. */
  path: string;
  /** Paths of regular files relative to `path`, in walk order (lossy UTF-8 where a name is not UTF-8). */
  matches: string[];
  has_more: boolean;
  next_cursor?: string;
  /** Present when some match's path is not valid UTF-8. */
  non_utf8?: RawMatch[];
  /** True when a cap on entries visited or on time stopped the scan before the page filled. */
  truncated_scan?: true;
  /** Why the scan stopped early or what it did not enter, in words. */
  note?: string;
}

/**
 * Caps of one search call. Entries: 100,000 at about 1–3 µs each on a warm cache is 0.1–0.3 s, so on
 * a local disk the entry cap stops a long scan (the same place every time) and the time cap only
 * catches cold caches or slow file systems.
 */
export const DEFAULT_SEARCH_LIMITS: Readonly<WalkLimits> = Object.freeze({
  /** @default 100000 entries per call */
  maxVisits: 100_000,
  /** @default 2000 ms per call */
  maxMs: 2_000,
  /** @default 1000000 entries re-read to reach a cursor's position (10× maxVisits: a cursor walk through a directory of up to ~1M entries) */
  maxResumeSkip: 1_000_000,
  /** @default 1000 entries visited after a resume before the time cap may stop the walk */
  minProgress: 1_000,
  /** @default 32 levels below `path` (two descriptors per open level) */
  maxDepth: 32,
  /** @default 1024 bytes of a directory's path below `path` (keeps the cursor under its 4096-character cap) */
  maxPathBytes: 1_024,
});

/** Binds a cursor to its query and base path without carrying them (a 1 KiB query would crowd the cursor). */
function bindingOf(query: string, rel: string): string {
  return createHash('sha256').update(query).update('\0').update(rel).digest('base64url').slice(0, 22);
}

const SLASH = 0x2f;

/**
 * Room a page keeps for its cursor (a walk a few directories deep) and its note (one of its
 * sentences). A deeper walk's cursor, or a note of every kind, can pass it: `serve` then makes the
 * page again for less (src/server/tool-kinds.ts), so the budget still never cuts it.
 */
const SEARCH_CURSOR_ROOM_BYTES = 640;
const SEARCH_NOTE_ROOM_CHARS = 200;

function encodePosition(cursors: CursorCodec, query: string, base: DirHandle, pos: WalkPosition): string {
  const w = pos.dirs.flatMap((n, k) => (k === 0 ? [n] : [Buffer.of(SLASH), n]));
  const payload: Record<string, unknown> = { b: bindingOf(query, base.rel), d: base.dev, i: base.ino, w: Buffer.concat(w).toString('base64') };
  if (pos.last !== null) payload.l = pos.last.toString('base64');
  return cursors.encode('search', payload);
}

function decodePosition(cursors: CursorCodec, cursor: string, query: string, base: DirHandle): WalkPosition {
  const c = cursors.decode('search', cursor);
  if (c.b !== bindingOf(query, base.rel)) {
    throw new WorkspaceError('INVALID_CURSOR', 'Invalid params: `cursor` belongs to another query or path. Start again without a cursor.');
  }
  if (c.d !== base.dev || c.i !== base.ino) {
    throw new WorkspaceError('INVALID_CURSOR', 'Invalid params: the directory was replaced since the cursor was issued. Start again without a cursor.');
  }
  if (typeof c.w !== 'string' || (c.l !== undefined && typeof c.l !== 'string')) {
    throw new WorkspaceError('INVALID_CURSOR', 'Invalid params: `cursor` is malformed. Start again without a cursor.');
  }
  const raw = Buffer.from(c.w, 'base64');
  const dirs: Buffer[] = [];
  for (let at = 0; raw.length > 0; ) {
    const end = raw.indexOf(SLASH, at);
    dirs.push(raw.subarray(at, end < 0 ? raw.length : end));
    if (end < 0) break;
    at = end + 1;
  }
  return { dirs, last: typeof c.l === 'string' ? Buffer.from(c.l, 'base64') : null };
}

function noteOf(walk: GlobWalk, outcome: string, limits: WalkLimits): string | undefined {
  const parts: string[] = [];
  if (outcome === 'visits' || outcome === 'time') {
    const cap = outcome === 'visits' ? `${limits.maxVisits} entries visited` : `${limits.maxMs} ms`;
    parts.push(
      `The scan stopped at its per-call cap (${cap}) before the page filled; call again with next_cursor to scan on from where it stopped, or narrow \`query\` or \`path\`.`,
    );
  }
  if (walk.tooDeep > 0) {
    parts.push(
      `${walk.tooDeep} director${walk.tooDeep === 1 ? 'y was' : 'ies were'} not entered: deeper than ${limits.maxDepth} levels or ${limits.maxPathBytes} bytes below \`path\`; search from a deeper \`path\` to reach them.`,
    );
  }
  if (walk.unreadable > 0) {
    parts.push(`${walk.unreadable} director${walk.unreadable === 1 ? 'y' : 'ies'} could not be read (permission denied, removed, or replaced while the search ran) and ${walk.unreadable === 1 ? 'was' : 'were'} skipped.`);
  }
  return parts.length > 0 ? parts.join(' ') : undefined;
}

/**
 * What makes a query a glob: a wildcard, a class, a brace, an escape or a `/`; `|` and `"` (the
 * regular-expression alternation and the quoting other matchers read, refused as a glob with
 * advice); an extglob's `@(`, `!(` or `+(`. Any other character, `(`, `@`, `!`, `+` and `,` among
 * them, is a character a plain word may hold (`notes (1)`, `c++`, `!important`): a negation needs a
 * glob to negate, and a glob is refused there.
 */
const GLOB_SYNTAX = /[*?[\]{}\\/|"]|[@!+]\(/;

/** Characters the glob parser reads as syntax somewhere, escaped when a plain word is written as a glob. */
const PLAIN_ESCAPED = /[()!@+^$,]/g;

/**
 * The longest plain word: its contains-glob (`*word*`, or `{*.word*,.word*}` for a dot word) costs
 * about its length and a few steps more, within the glob's matching cost.
 */
export const MAX_PLAIN_WORD_CHARS = MAX_GLOB_MATCH_COST - 6;

/** The most bytes a plain word's glob may take: up to four a letter (`[aA]`) and five more. */
const PLAIN_GLOB_BYTES = MAX_QUERY_BYTES * 4 + 5;

/**
 * How a query is read: a glob as written, or for a plain word (no glob syntax, no `/`) every file
 * under the directory whose name contains it, ASCII letters in any case: `readme` finds
 * `docs/README.md`. (As a glob, a plain word names one file at the top and finds nothing below
 * it, which is not what a person typing a word means.) The word is read without the spaces around
 * it, and with every character as itself (`c++`, `notes (1)`, `a,b`). A word too long for the
 * case-folding glob's matching cost (over about 120 letters) is matched in its own case; one over
 * {@link MAX_PLAIN_WORD_CHARS} is refused (as a glob it would name one file at the top, silently).
 * A word of dots only (`..`) is read as written, and refused there as a path out of the root.
 */
export function readQuery(query: string): { glob: string; plain: boolean; plan: GlobPlan } {
  if (typeof query !== 'string') return { glob: query, plain: false, plan: GlobPlan.compile(query) }; // refused there
  const word = query.trim();
  if (GLOB_SYNTAX.test(query) || /^\.*$/.test(word)) return { glob: query, plain: false, plan: GlobPlan.compile(query) };
  if (Buffer.byteLength(query) > MAX_QUERY_BYTES) return { glob: query, plain: false, plan: GlobPlan.compile(query) }; // refused there, by size
  const chars = [...word].length;
  if (chars > MAX_PLAIN_WORD_CHARS) {
    throw new WorkspaceError(
      'INPUT_TOO_LARGE',
      `A plain word finds the files whose name contains it, up to ${MAX_PLAIN_WORD_CHARS} characters; this one has ${chars}. Give a shorter part of the name, or a glob (\`**/NAME\` for a file of that exact name anywhere).`,
      { max: MAX_PLAIN_WORD_CHARS, value: chars },
    );
  }
  const escaped = word.replace(PLAIN_ESCAPED, (c) => `\\${c}`);
  let folded = '';
  // only ASCII letters fold: the Kelvin sign lower-cases to `k`, and must still match itself
  for (const ch of escaped) folded += /^[A-Za-z]$/.test(ch) ? `[${ch.toLowerCase()}${ch.toUpperCase()}]` : ch;
  // a word that starts with a dot names the dot: it also finds the dot files that start with it (`.env`)
  const globOf = (w: string): string => (w.startsWith('.') ? `**/{*${w}*,${w}*}` : `**/*${w}*`);
  for (const glob of [globOf(folded), globOf(escaped)]) {
    try {
      return { glob, plain: true, plan: GlobPlan.compile(glob, PLAIN_GLOB_BYTES) };
    } catch (e) {
      if (!(e instanceof WorkspaceError && e.code === 'INPUT_TOO_LARGE') || glob === globOf(escaped)) throw e;
    }
  }
  throw new Error('unreachable');
}

/**
 * One page of files under `path` whose path relative to it matches the glob `query` (or, for a
 * plain word, whose name contains it: see {@link globOfQuery}).
 * `options` overrides the per-call caps (tests and benchmarks).
 */
export async function searchFiles(
  ws: Workspace,
  cursors: CursorCodec,
  query: string,
  path: string | undefined,
  limit: number,
  cursor: string | undefined,
  size?: number | PageSizer,
  options: Partial<WalkLimits> = {},
): Promise<SearchPage> {
  const read = readQuery(query);
  const plan = read.plan;
  const limits: WalkLimits = { ...DEFAULT_SEARCH_LIMITS, ...options };
  const base = await ws.openDir(path);
  const walk = new GlobWalk(base, plan, limits); // owns `base` from here
  try {
    const rel = base.rel;
    if (cursor !== undefined) await walk.resume(decodePosition(cursors, cursor, query, base));
    const matches: string[] = [];
    const raws: RawMatch[] = [];
    const sizer = typeof size === 'object' ? size : jsonSizer(size ?? Infinity);
    // The page's own fields at their largest: echoes, flags, a cursor and a note of every kind.
    const fixed = {
      query,
      query_truncated: true,
      ...(read.plain ? { glob: read.glob, glob_truncated: true } : {}),
      path: rel,
      path_truncated: true,
      matches: [],
      has_more: true,
      next_cursor: 'c'.repeat(SEARCH_CURSOR_ROOM_BYTES),
      non_utf8: [],
      truncated_scan: true,
      note: 'n'.repeat(SEARCH_NOTE_ROOM_CHARS),
    };
    const meter = sizer.meter(fixed, 'matches');
    const outcome = await walk.run((m, raw) => {
      const utf8 = isUtf8(raw);
      // A name that is not UTF-8 adds its raw form to non_utf8.
      const rawForm = utf8 ? undefined : { index: matches.length, path_base64: raw.toString('base64') };
      if (matches.length >= limit || !meter.take(m, rawForm === undefined ? 0 : Buffer.byteLength(JSON.stringify(rawForm)) + 1)) return false;
      if (rawForm !== undefined) raws.push(rawForm);
      matches.push(m);
      return true;
    });
    const page: SearchPage = { query, ...(read.plain ? { glob: read.glob } : {}), path: rel, matches, has_more: outcome !== 'done' };
    if (raws.length > 0) page.non_utf8 = raws;
    if (outcome !== 'done') page.next_cursor = encodePosition(cursors, query, base, walk.position());
    if (outcome === 'visits' || outcome === 'time') page.truncated_scan = true;
    const note = noteOf(walk, outcome, limits);
    if (note !== undefined) page.note = note;
    return page;
  } finally {
    await walk.close();
  }
}
