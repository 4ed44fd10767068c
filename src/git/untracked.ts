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
import type { GitRunner } from './run-git.js';
import { checkDeadline, isPrefix, listLevel, MAX_HELD_NAME_BYTES, NOT_UTF8, pathOf, release, UNTRACKED_TIMEOUT_MS, type Entry, type Level, type UntrackedBounds, type Walk } from './untracked-level.js';

export { MAX_HELD_NAME_BYTES, MAX_LEVEL_ENTRIES, UNTRACKED_TIMEOUT_MS, type UntrackedBounds } from './untracked-level.js';

/** Entries checked against the ignore rules per git call. */
const IGNORE_BATCH = 256;
/** Bytes of paths per git call at most (they go on its command line). */
const MAX_BATCH_BYTES = 128 * 1024;
/** Wholly untracked directories listed ahead, so that one git call checks several of them. */
const MAX_QUEUED_DIRS = 64;

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
  let level: Level | undefined;
  try {
    level = await listLevel(walk, dir, key);
  } catch (e) {
    await dir.close(); // not handed over yet: the deadline (or a read) ended the listing
    throw e;
  }
  if (level === undefined) {
    await dir.close();
    return { path: key.toString('utf8') };
  }
  return level;
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
