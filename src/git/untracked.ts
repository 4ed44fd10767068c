/**
 * Untracked files in git's order (`ls-files --others` order: paths by bytes), read for one page.
 * git is asked only for the top of the listing, with wholly untracked directories collapsed
 * (`ls-files --others --exclude-standard --directory`: it does not read inside them); each such
 * directory the page reaches is then listed here, one level at a time through the workspace gate
 * (no link followed), sorted, and its entries checked against the ignore rules in batches (the
 * same `ls-files` call limited to exactly those paths, so git reads that one level), entering
 * only the directories where the page's paths can be.
 *
 * Bounds (a hostile workspace decides the tree): one call holds at most
 * {@link MAX_HELD_NAME_BYTES} of names (levels keep names, not paths, so depth costs nothing) and
 * {@link MAX_LEVEL_ENTRIES} entries per level, and ends within {@link UNTRACKED_TIMEOUT_MS}.
 *
 * Perf: `ls-files --others` (git 2.39) walks and sorts every untracked file before its first line;
 * this reads the tracked directories, one entry per untracked directory, and the levels the page
 * touches. Not flat when a huge number of untracked files sit directly in tracked directories
 * (git lists those itself).
 */
import { Workspace, type DirHandle } from '../fs/confine.js';
import { WorkspaceError } from '../fs/errors.js';
import type { GitRunner } from './run-git.js';

/** One untracked listing (git's calls and the walk together) ends within this long. */
export const UNTRACKED_TIMEOUT_MS = 5000;
/** Entries checked against the ignore rules per git call. */
const IGNORE_BATCH = 256;
/** Bytes of paths per git call at most (they go on its command line). */
const MAX_BATCH_BYTES = 128 * 1024;
/** Entries of one directory level listed at most (a level is sorted whole to keep git's order). */
export const MAX_LEVEL_ENTRIES = 200_000;
/** Bytes of entry names one listing holds at once, over every open level (each name counts 64 bytes more). */
export const MAX_HELD_NAME_BYTES = 16 * 1024 * 1024;
/** Wholly untracked directories listed ahead, so that one git call checks several of them. */
const MAX_QUEUED_DIRS = 64;
/** Entries of a `.git` directory read to tell a repository from a stray directory of that name. */
const MAX_GIT_DIR_ENTRIES = 4096;

const NOT_UTF8 = 'An untracked name that is not UTF-8 is not listed.';
const SLASH = Buffer.from('/');

/** One entry of a level: its name (a directory's ends with `/`), sorted by these bytes. */
interface Entry {
  name: Buffer;
  isDir: boolean;
}

/** One listed directory level: its path from the root (ends with `/`), its open handle, its entries. */
interface Level {
  base: Buffer;
  dir: DirHandle;
  entries: Entry[];
  /** Bytes this level counts against {@link MAX_HELD_NAME_BYTES}. */
  held: number;
}

/** What one listing shares: git, the page's first path, warnings, the deadline and the names held. */
interface Walk {
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

/** One record of the top listing: a path git listed, or a collapsed directory listed through the gate. */
type Job = { path: string } | Level;

/**
 * Untracked paths from the first one at or after `from` (raw bytes; a coarse bound, the caller
 * skips exactly). A nested repository is listed as its directory with a trailing `/`, as git does.
 *
 * Perf: collapsed directories that follow one another are listed ahead (at most
 * {@link MAX_QUEUED_DIRS}, until `want` entries wait for the first check, then
 * {@link IGNORE_BATCH}), so one `ls-files` call checks the first level of many small directories
 * instead of one call each; `want` is how many paths the caller expects to take (a page and one).
 * They are opened from one root handle, and a nested repository is told from the listing itself.
 */
export async function* untrackedPaths(
  git: GitRunner,
  from: Buffer,
  warn: (w: string) => void,
  plainGit = false,
  want = IGNORE_BATCH,
  bounds: UntrackedBounds = {},
): AsyncGenerator<string> {
  const ws = git.ws;
  // Without the gate (a bare root guard) nothing is opened here: git lists everything.
  const collapse = ws instanceof Workspace && !plainGit;
  const args = ['ls-files', '--others', '--exclude-standard', '-z', ...(collapse ? ['--directory'] : [])];
  const timeoutMs = bounds.timeoutMs ?? UNTRACKED_TIMEOUT_MS;
  const walk: Walk = { git, from, warn, deadline: Date.now() + timeoutMs, timeoutMs, held: 0, maxHeld: bounds.maxHeldNameBytes ?? MAX_HELD_NAME_BYTES };
  const queue: Job[] = [];
  let waiting = 0;
  let threshold = Math.max(1, Math.min(want, IGNORE_BATCH));
  let root: DirHandle | undefined;
  try {
    for await (const key of git.rawRecords(args, timeoutMs)) {
      if (key.length === 0) continue;
      const rec = key.toString('utf8');
      const isCollapsed = collapse && rec.endsWith('/');
      if (isCollapsed && !Buffer.from(rec).equals(key)) {
        // Opened by its text form, such a name would open another directory (or none).
        warn(NOT_UTF8);
        continue;
      }
      // A file git lists is shown as text, as tracked changes are (a name that is not UTF-8 shows
      // replacement characters).
      if (!isCollapsed) {
        if (Buffer.compare(key, from) < 0 && !isPrefix(from, key)) continue;
        if (queue.length === 0) yield rec;
        else queue.push({ path: rec });
        continue;
      }
      if (Buffer.compare(key, from) < 0 && !isPrefix(key, from)) continue;
      root ??= await (ws as Workspace).openRoot();
      const job = await listCollapsed(walk, root, key);
      if (job === undefined) continue;
      queue.push(job);
      if ('entries' in job) waiting += job.entries.length;
      if (waiting >= threshold || queue.length >= MAX_QUEUED_DIRS) {
        yield* drain(walk, queue.splice(0));
        waiting = 0;
        threshold = IGNORE_BATCH;
      }
    }
    yield* drain(walk, queue.splice(0));
  } catch (e) {
    checkDeadline(walk); // git cut by the deadline says so
    throw e;
  } finally {
    for (const job of queue) if ('dir' in job) await release(walk, job);
    await root?.close();
  }
}

/** `p` is a prefix of `b`. */
function isPrefix(p: Buffer, b: Buffer): boolean {
  return b.length >= p.length && b.subarray(0, p.length).equals(p);
}

/**
 * The path `base` + `raw` (+ `/` for a directory) sorts wholly before `from`: before it, and (for
 * a directory) not a prefix of it. Compared without building the path.
 */
function beforeFrom(base: Buffer, raw: Buffer, isDir: boolean, from: Buffer): boolean {
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
function checkDeadline(walk: Walk): void {
  if (Date.now() > walk.deadline) {
    throw new WorkspaceError(
      'IO_ERROR',
      `Listing untracked files took longer than ${walk.timeoutMs} ms (a very large or deep untracked tree); ignore it in .gitignore, or list it with workspace_list_dir`,
    );
  }
}

/**
 * A collapsed directory `key` (ending in `/`) opened from the root handle, one component at a time
 * without following links, and its first level listed; a nested repository is the path itself
 * (git lists the directory, never its files); undefined when it cannot be opened (warned).
 */
async function listCollapsed(walk: Walk, root: DirHandle, key: Buffer): Promise<Job | undefined> {
  let dir: DirHandle | undefined;
  try {
    for (const seg of key.toString('utf8').slice(0, -1).split('/')) {
      const next: DirHandle = await (dir ?? root).openDir(seg);
      await dir?.close();
      dir = next;
    }
  } catch {
    await dir?.close();
    walk.warn('An untracked directory could not be opened; its files are not listed.');
    return undefined;
  }
  if (dir === undefined) return undefined;
  const level = await listLevel(walk, dir, key);
  if (level === undefined) {
    await dir.close();
    return { path: key.toString('utf8') };
  }
  return level;
}

/** Close a level's handle and give back the bytes its names held. */
async function release(walk: Walk, level: Level): Promise<void> {
  walk.held -= level.held;
  level.held = 0;
  await level.dir.close();
}

/** An entry's path from the root: its level's base and its name (built only when needed). */
function pathOf(level: Level, e: Entry): Buffer {
  return Buffer.concat([level.base, e.name]);
}

/**
 * The jobs in order: paths as they are; each directory's entries checked against the ignore rules
 * in batches that may span directories, then yielded in git's order, entering kept directories.
 * Every directory handle is closed, also when the consumer stops early.
 */
async function* drain(walk: Walk, jobs: Job[]): AsyncGenerator<string> {
  try {
    // The directories' entries in output order, with the level each belongs to.
    const items: { job: number; entry: Entry }[] = [];
    jobs.forEach((job, j) => {
      if ('entries' in job) for (const entry of job.entries) items.push({ job: j, entry });
    });
    const pairs = items.map((x) => [jobs[x.job] as Level, x.entry] as const);
    let next = 0; // the next job not yet yielded from
    for (let i = 0; i < items.length || next < jobs.length; ) {
      const paths = takeBatch(pairs, i);
      const kept = paths.length === 0 ? new Set<string>() : await untrackedOf(walk, paths);
      for (let j = 0; j < paths.length; j++, i++) {
        const { job, entry } = items[i]!;
        for (; next < job; next++) {
          const before = jobs[next]!;
          if ('path' in before) yield before.path;
        }
        if (kept.has(paths[j]!.toString('latin1'))) yield* enter(walk, jobs[job] as Level, entry, 0);
      }
      if (i >= items.length) {
        // Paths after the last directory's entries.
        for (; next < jobs.length; next++) {
          const after = jobs[next]!;
          if ('path' in after) yield after.path;
        }
      }
    }
  } finally {
    for (const job of jobs) if ('dir' in job) await release(walk, job);
  }
}

/** Paths of the entries from `start`, bounded in count and bytes (they are git's command line). */
function takeBatch(entries: readonly (readonly [Level, Entry])[], start: number): Buffer[] {
  const batch: Buffer[] = [];
  for (let i = start, bytes = 0; i < entries.length && batch.length < IGNORE_BATCH && bytes < MAX_BATCH_BYTES; i++) {
    const path = pathOf(entries[i]![0], entries[i]![1]);
    batch.push(path);
    bytes += path.length + 1;
  }
  return batch;
}

/**
 * Whether a `.git` entry makes its directory a nested repository, as git decides it: a directory
 * holding `HEAD`, `objects` and `refs`; a file (a gitfile) or a link is taken to be one, since
 * following it is not ours to do (so its directory is listed as `dir/`, never dropped).
 */
async function isRepository(dir: DirHandle, isDir: boolean): Promise<boolean> {
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
async function listLevel(walk: Walk, dir: DirHandle, base: Buffer): Promise<Level | undefined> {
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
    if (e instanceof WorkspaceError) throw e;
    walk.warn('An untracked directory could not be read; its files are not listed.');
  }
  // A level cut short may hold its `.git` further on.
  if (gitEntryIsDir === undefined && cut !== undefined) gitEntryIsDir = (await isRepository(dir, true)) ? true : undefined;
  if (gitEntryIsDir !== undefined && (await isRepository(dir, gitEntryIsDir))) return undefined;
  if (cut !== undefined) walk.warn(cut);
  walk.held += held;
  return { base, dir, entries: entries.sort((x, y) => Buffer.compare(x.name, y.name)), held };
}

/** One level below a kept directory: listed, checked in batches, and entered in git's order (a nested repository: its own path). */
async function* level(walk: Walk, dir: DirHandle, base: Buffer, depth: number): AsyncGenerator<string> {
  checkDeadline(walk);
  const lv = await listLevel(walk, dir, base);
  if (lv === undefined) {
    yield base.toString('utf8');
    return;
  }
  try {
    const pairs = lv.entries.map((e) => [lv, e] as const);
    for (let i = 0; i < pairs.length; ) {
      const paths = takeBatch(pairs, i);
      const kept = await untrackedOf(walk, paths);
      for (let j = 0; j < paths.length; j++, i++) {
        if (kept.has(paths[j]!.toString('latin1'))) yield* enter(walk, lv, lv.entries[i]!, depth);
      }
    }
  } finally {
    // The names go; the handle is the caller's.
    walk.held -= lv.held;
    lv.held = 0;
  }
}

/** A kept entry of `parent`: a file is yielded; a directory is a nested repository (yielded) or entered. */
async function* enter(walk: Walk, parent: Level, e: Entry, depth: number): AsyncGenerator<string> {
  const path = pathOf(parent, e);
  if (!e.isDir) {
    yield path.toString('utf8');
    return;
  }
  if (depth > 64) {
    walk.warn('Untracked directories nested too deep are not listed.');
    return;
  }
  let sub: DirHandle;
  try {
    sub = await parent.dir.openDir(e.name.subarray(0, -1));
  } catch {
    walk.warn('An untracked directory could not be opened; its files are not listed.');
    return;
  }
  try {
    yield* level(walk, sub, path, depth + 1);
  } finally {
    await sub.close();
  }
}

/**
 * Which of the paths git lists as untracked (not ignored; a directory collapsed to `dir/`):
 * `ls-files --others --exclude-standard --directory` limited to exactly these paths (literal
 * pathspecs), so git reads this level and nothing below it. Paths as latin1 strings.
 */
async function untrackedOf(walk: Walk, paths: Buffer[]): Promise<Set<string>> {
  checkDeadline(walk);
  const args = paths.map((p) => (p[p.length - 1] === 0x2f ? p.subarray(0, -1) : p).toString('utf8'));
  const timeoutMs = Math.max(1, walk.deadline - Date.now());
  let r;
  try {
    r = await walk.git.run(['ls-files', '--others', '--exclude-standard', '--directory', '-z', '--', ...args], { timeoutMs });
  } catch (e) {
    checkDeadline(walk); // a call cut by the deadline says so
    throw e;
  }
  const out = new Set<string>();
  let at = 0;
  for (let nul = r.stdout.indexOf(0); nul !== -1; nul = r.stdout.indexOf(0, at)) {
    out.add(r.stdout.subarray(at, nul).toString('latin1'));
    at = nul + 1;
  }
  return out;
}
