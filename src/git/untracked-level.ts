/**
 * One level of the untracked listing, read through the workspace gate: a directory's entries as
 * names (not paths: depth costs nothing), pruned to the page, sorted in git's order, within the
 * listing's bounds (entries per level, names held per call, one deadline), and whether a `.git`
 * entry makes it a nested repository as git judges one. Used by untracked.ts.
 */
import type { DirHandle } from '../fs/confine.js';
import { WorkspaceError } from '../fs/errors.js';
import type { GitRunner } from './run-git.js';
import { BudgetError } from '../engine/index.js';

/** Entries of one directory level listed at most (a level is sorted whole to keep git's order). */
export const MAX_LEVEL_ENTRIES = 200_000;

/** Bytes of entry names one listing holds at once, over every open level (each name counts 64 bytes more). */
export const MAX_HELD_NAME_BYTES = 16 * 1024 * 1024;

/** Entries of a `.git` directory read to tell a repository from a stray directory of that name. */
export const MAX_GIT_DIR_ENTRIES = 4096;

export const NOT_UTF8 = 'An untracked name that is not UTF-8 is not listed.';

export const SLASH = Buffer.from('/');

/** One untracked listing (git's calls and the walk together) ends within this long. */
export const UNTRACKED_TIMEOUT_MS = 5000;

/** One entry of a level: its name (a directory's ends with `/`), sorted by these bytes. */
export interface Entry {
  name: Buffer;
  isDir: boolean;
}

/** One listed directory level: its path from the root (ends with `/`), its open handle, its entries. */
export interface Level {
  base: Buffer;
  dir: DirHandle;
  entries: Entry[];
  /** Bytes this level counts against {@link MAX_HELD_NAME_BYTES}. */
  held: number;
}

/** What one listing shares: git, the page's first path, warnings, the deadline and the names held. */
export interface Walk {
  git: GitRunner;
  from: Buffer;
  warn: (w: string) => void;
  deadline: number;
  timeoutMs: number;
  held: number;
  maxHeld: number;
}

/** The bounds of one listing (defaults: {@link UNTRACKED_TIMEOUT_MS}, {@link MAX_HELD_NAME_BYTES}). */
export interface UntrackedBounds {
  timeoutMs?: number;
  maxHeldNameBytes?: number;
}

/** `p` is a prefix of `b`. */
export function isPrefix(p: Buffer, b: Buffer): boolean {
  return b.length >= p.length && b.subarray(0, p.length).equals(p);
}

/**
 * The path `base` + `raw` (+ `/` for a directory) sorts wholly before `from`: before it, and (for
 * a directory) not a prefix of it. Compared without building the path.
 */
export function beforeFrom(base: Buffer, raw: Buffer, isDir: boolean, from: Buffer): boolean {
  const n = base.length + raw.length + (isDir ? 1 : 0);
  const m = Math.min(n, from.length);
  for (let i = 0; i < m; i++) {
    const b = i < base.length ? base[i]! : i - base.length < raw.length ? raw[i - base.length]! : 0x2f;
    if (b !== from[i]) return b < from[i]!;
  }
  // Equal over the shorter: a shorter path sorts first; a directory that is a prefix of `from` holds it.
  if (n < from.length) return !isDir;
  return false;
}

/** The listing's deadline, checked between entries and levels. */
export function checkDeadline(walk: Walk): void {
  if (Date.now() > walk.deadline) {
    throw new WorkspaceError(
      'IO_ERROR',
      `Listing untracked files took longer than ${walk.timeoutMs} ms (a very large or deep untracked tree); ignore it in .gitignore, or list it with workspace_list_dir`,
    );
  }
}

/** Close a level's handle and give back the bytes its names held. */
export async function release(walk: Walk, level: Level): Promise<void> {
  walk.held -= level.held;
  level.held = 0;
  await level.dir.close();
}

/** An entry's path from the root: its level's base and its name (built only when needed). */
export function pathOf(level: Level, e: Entry): Buffer {
  return Buffer.concat([level.base, e.name]);
}

/**
 * Whether a `.git` entry makes its directory a nested repository, as git decides it: a directory
 * holding `HEAD`, `objects` and `refs`; a file (a gitfile) or a link is taken to be one, since
 * following it is not ours to do (so its directory is listed as `dir/`, never dropped).
 */
export async function isRepository(dir: DirHandle, isDir: boolean): Promise<boolean> {
  if (!isDir) return true;
  let gitDir: DirHandle;
  try {
    gitDir = await dir.openDir('.git');
  } catch {
    return false;
  }
  try {
    const found = new Set<string>();
    let seen = 0;
    for await (const d of await gitDir.list(64)) {
      if (++seen > MAX_GIT_DIR_ENTRIES) break;
      if (d.name === 'HEAD' || d.name === 'objects' || d.name === 'refs') found.add(d.name);
    }
    return found.size === 3;
  } catch {
    return false;
  } finally {
    await gitDir.close();
  }
}

/**
 * One directory level (`base` ends with `/`), pruned to what can hold the page's paths, in git's
 * order; undefined when it is a nested repository (git lists it whole). Names only are held, and
 * counted against the listing's byte budget; a level over it, or over
 * {@link MAX_LEVEL_ENTRIES}, is listed in part, with a warning.
 */
export async function listLevel(walk: Walk, dir: DirHandle, base: Buffer): Promise<Level | undefined> {
  const entries: Entry[] = [];
  let seen = 0;
  let held = 0;
  /** A `.git` entry was seen: whether it is a directory (a file or link: false). */
  let gitEntryIsDir: boolean | undefined;
  let cut: string | undefined;
  try {
    for await (const d of await dir.list(256, true)) {
      if ((++seen & 1023) === 0) checkDeadline(walk);
      if (seen > MAX_LEVEL_ENTRIES) {
        cut = `An untracked directory holds more than ${MAX_LEVEL_ENTRIES} entries; the rest are not listed.`;
        break;
      }
      const raw = d.name as unknown as Buffer;
      if (raw.length === 4 && raw.toString('latin1') === '.git') {
        // git never lists a `.git` entry; it may make this a nested repository.
        if (d.isDirectory() || d.isFile() || d.isSymbolicLink()) gitEntryIsDir = d.isDirectory();
        continue;
      }
      const isDir = d.isDirectory();
      if (!isDir && !d.isFile() && !d.isSymbolicLink()) continue; // FIFOs, sockets, devices: git skips them
      if (!Buffer.from(raw.toString('utf8')).equals(raw)) {
        // git is given paths as command-line strings, which cannot carry such bytes.
        walk.warn(NOT_UTF8);
        continue;
      }
      // Prune what sorts wholly before the page's first path (compared in place: a deep base is
      // long, and a level may hold many entries).
      if (walk.from.length > 0 && beforeFrom(base, raw, isDir, walk.from)) continue;
      const name = isDir ? Buffer.concat([raw, SLASH]) : Buffer.from(raw);
      const cost = name.length + 64;
      if (walk.held + held + cost > walk.maxHeld) {
        cut = 'An untracked directory holds more names than one listing may hold; the rest are not listed.';
        break;
      }
      held += cost;
      entries.push({ name, isDir });
    }
  } catch (e) {
    if (e instanceof BudgetError) throw e;
    walk.warn('An untracked directory could not be read; its files are not listed.');
  }
  // A level cut short may hold its `.git` further on.
  if (gitEntryIsDir === undefined && cut !== undefined) gitEntryIsDir = (await isRepository(dir, true)) ? true : undefined;
  if (gitEntryIsDir !== undefined && (await isRepository(dir, gitEntryIsDir))) return undefined;
  if (cut !== undefined) walk.warn(cut);
  walk.held += held;
  return { base, dir, entries: entries.sort((x, y) => Buffer.compare(x.name, y.name)), held };
}
