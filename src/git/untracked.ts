/**
 * Untracked files in git's order (`ls-files --others` order: paths by bytes), read for one page.
 * git is asked only for the top of the listing, with wholly untracked directories collapsed
 * (`ls-files --others --exclude-standard --directory`: it does not read inside them); each such
 * directory the page reaches is then listed here, one level at a time through the workspace gate
 * (no link followed), sorted, and its entries checked against the ignore rules in batches (the
 * same `ls-files` call limited to exactly those paths, so git reads that one level), entering
 * only the directories where the page's paths can be.
 *
 * Perf: `ls-files --others` (git 2.39) walks and sorts every untracked file before its first line;
 * this reads the tracked directories, one entry per untracked directory, and the levels the page
 * touches. Not flat when a huge number of untracked files sit directly in tracked directories
 * (git lists those itself).
 */
import { Workspace, type DirHandle } from '../fs/confine.js';
import type { GitRunner } from './run-git.js';

/** Untracked listings are capped in time. */
export const UNTRACKED_TIMEOUT_MS = 5000;
/** Entries checked against the ignore rules per git call. */
const IGNORE_BATCH = 256;
/** Bytes of paths per git call at most (they go on its command line). */
const MAX_BATCH_BYTES = 128 * 1024;
/** Entries of one directory level listed at most (a level is sorted whole to keep git's order). */
export const MAX_LEVEL_ENTRIES = 200_000;

interface Entry {
  /** Path relative to the root, raw bytes (a directory ends with `/`). */
  key: Buffer;
  raw: Buffer;
  isDir: boolean;
}

const SLASH = Buffer.from('/');

/** Wholly untracked directories listed ahead, so that one git call checks several of them. */
const MAX_QUEUED_DIRS = 64;

/** One record of the top listing: a path git listed, or a collapsed directory listed through the gate. */
type Job = { path: string } | { dir: DirHandle; entries: Entry[] };

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
export async function* untrackedPaths(git: GitRunner, from: Buffer, warn: (w: string) => void, plainGit = false, want = IGNORE_BATCH): AsyncGenerator<string> {
  const ws = git.ws;
  // Without the gate (a bare root guard) nothing is opened here: git lists everything.
  const collapse = ws instanceof Workspace && !plainGit;
  const args = ['ls-files', '--others', '--exclude-standard', '-z', ...(collapse ? ['--directory'] : [])];
  const queue: Job[] = [];
  let waiting = 0;
  let threshold = Math.max(1, Math.min(want, IGNORE_BATCH));
  let root: DirHandle | undefined;
  try {
    for await (const rec of git.records(args, UNTRACKED_TIMEOUT_MS)) {
      if (rec === '') continue;
      const key = Buffer.from(rec);
      if (!collapse || !rec.endsWith('/')) {
        if (Buffer.compare(key, from) < 0 && !isPrefix(from, key)) continue;
        if (queue.length === 0) yield rec;
        else queue.push({ path: rec });
        continue;
      }
      if (Buffer.compare(key, from) < 0 && !isPrefix(key, from)) continue;
      root ??= await (ws as Workspace).openRoot();
      const job = await listCollapsed(root, rec, from, warn);
      if (job === undefined) continue;
      queue.push(job);
      if ('entries' in job) waiting += job.entries.length;
      if (waiting >= threshold || queue.length >= MAX_QUEUED_DIRS) {
        yield* drain(git, queue.splice(0), from, warn);
        waiting = 0;
        threshold = IGNORE_BATCH;
      }
    }
    yield* drain(git, queue.splice(0), from, warn);
  } finally {
    for (const job of queue) if ('dir' in job) await job.dir.close();
    await root?.close();
  }
}

/** `p` is a prefix of `b`. */
function isPrefix(p: Buffer, b: Buffer): boolean {
  return b.length >= p.length && b.subarray(0, p.length).equals(p);
}

/**
 * A collapsed directory `rel` (ending in `/`) opened from the root handle, one component at a time
 * without following links, and its first level listed; a nested repository is the path itself
 * (git lists the directory, never its files); undefined when it cannot be opened (warned).
 */
async function listCollapsed(root: DirHandle, rel: string, from: Buffer, warn: (w: string) => void): Promise<Job | undefined> {
  let dir: DirHandle | undefined;
  try {
    for (const seg of rel.slice(0, -1).split('/')) {
      const next: DirHandle = await (dir ?? root).openDir(seg);
      await dir?.close();
      dir = next;
    }
  } catch {
    await dir?.close();
    warn('An untracked directory could not be opened; its files are not listed.');
    return undefined;
  }
  if (dir === undefined) return undefined;
  try {
    const level = await listLevel(dir, Buffer.from(rel), from, warn);
    if (level.nested) {
      await dir.close();
      return { path: rel };
    }
    return { dir, entries: level.entries };
  } catch (e) {
    await dir.close();
    throw e;
  }
}

/**
 * The jobs in order: paths as they are; each directory's entries checked against the ignore rules
 * in batches that may span directories, then yielded in git's order, entering kept directories.
 * Every directory handle is closed, also when the consumer stops early.
 */
async function* drain(git: GitRunner, jobs: Job[], from: Buffer, warn: (w: string) => void): AsyncGenerator<string> {
  try {
    // The directories' entries in output order, with the job each belongs to.
    const items: { job: number; entry: Entry }[] = [];
    jobs.forEach((job, j) => {
      if ('entries' in job) for (const entry of job.entries) items.push({ job: j, entry });
    });
    const entries = items.map((x) => x.entry);
    let next = 0; // the next job not yet yielded from
    for (let i = 0; i < items.length || next < jobs.length; ) {
      const batch = takeBatch(entries, i);
      const kept = batch.length === 0 ? new Set<string>() : await untrackedOf(git, batch);
      const end = i + batch.length;
      for (; i < end; i++) {
        const { job, entry } = items[i]!;
        for (; next < job; next++) {
          const before = jobs[next]!;
          if ('path' in before) yield before.path;
        }
        if (kept.has(entry.key.toString('latin1'))) yield* enter(git, (jobs[job] as { dir: DirHandle }).dir, entry, from, warn, 0);
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
    for (const job of jobs) if ('dir' in job) await job.dir.close();
  }
}

/** Entries from `start`, bounded in count and bytes (they are git's command line). */
function takeBatch(entries: readonly Entry[], start: number): Entry[] {
  const batch: Entry[] = [];
  for (let i = start, bytes = 0; i < entries.length && batch.length < IGNORE_BATCH && bytes < MAX_BATCH_BYTES; i++) {
    batch.push(entries[i]!);
    bytes += entries[i]!.key.length + 1;
  }
  return batch;
}

async function hasGitDir(dir: DirHandle): Promise<boolean> {
  try {
    const d = await dir.openDir('.git');
    await d.close();
    return true;
  } catch {
    return false;
  }
}

/**
 * One directory level, pruned to what can hold the page's paths, in git's order; `nested`: it
 * holds a `.git` directory (not a link), so it is a nested repository and git lists it whole.
 */
async function listLevel(dir: DirHandle, base: Buffer, from: Buffer, warn: (w: string) => void): Promise<{ entries: Entry[]; nested: boolean }> {
  const entries: Entry[] = [];
  let seen = 0;
  let nested = false;
  let cut = false;
  for await (const d of await dir.list(256, true)) {
    if (++seen > MAX_LEVEL_ENTRIES) {
      cut = true;
      break;
    }
    const raw = d.name as unknown as Buffer;
    if (raw.length === 4 && raw.toString('latin1') === '.git') {
      // git never lists a `.git` entry; a `.git` directory makes this a nested repository.
      nested ||= d.isDirectory();
      continue;
    }
    const isDir = d.isDirectory();
    if (!isDir && !d.isFile() && !d.isSymbolicLink()) continue; // FIFOs, sockets, devices: git skips them
    if (!Buffer.from(raw.toString('utf8')).equals(raw)) {
      // git is given paths as command-line strings, which cannot carry such bytes.
      warn('An untracked name that is not UTF-8 is not listed.');
      continue;
    }
    const key = Buffer.concat([base, raw, isDir ? SLASH : Buffer.alloc(0)]);
    // Prune what sorts wholly before the page's first path.
    if (Buffer.compare(key, from) < 0 && !(isDir && isPrefix(key, from))) continue;
    entries.push({ key, raw, isDir });
  }
  // A level cut short may hold its `.git` further on.
  if (cut) nested ||= await hasGitDir(dir);
  if (cut && !nested) warn(`An untracked directory holds more than ${MAX_LEVEL_ENTRIES} entries; the rest are not listed.`);
  return { entries: nested ? [] : entries.sort((x, y) => Buffer.compare(x.key, y.key)), nested };
}

/** One level below a kept directory: listed, checked in batches, and entered in git's order (a nested repository: its own path). */
async function* level(git: GitRunner, dir: DirHandle, base: Buffer, from: Buffer, warn: (w: string) => void, depth: number): AsyncGenerator<string> {
  const { entries, nested } = await listLevel(dir, base, from, warn);
  if (nested) {
    yield base.toString('utf8');
    return;
  }
  for (let i = 0; i < entries.length; ) {
    const batch = takeBatch(entries, i);
    i += batch.length;
    const kept = await untrackedOf(git, batch);
    for (const e of batch) {
      if (kept.has(e.key.toString('latin1'))) yield* enter(git, dir, e, from, warn, depth);
    }
  }
}

/** A kept entry of `dir`: a file is yielded; a directory is a nested repository (yielded) or entered. */
async function* enter(git: GitRunner, dir: DirHandle, e: Entry, from: Buffer, warn: (w: string) => void, depth: number): AsyncGenerator<string> {
  if (!e.isDir) {
    yield e.key.toString('utf8');
    return;
  }
  if (depth > 64) {
    warn('Untracked directories nested too deep are not listed.');
    return;
  }
  let sub: DirHandle;
  try {
    sub = await dir.openDir(e.raw);
  } catch {
    warn('An untracked directory could not be opened; its files are not listed.');
    return;
  }
  try {
    yield* level(git, sub, e.key, from, warn, depth + 1);
  } finally {
    await sub.close();
  }
}

/**
 * Which of the entries git lists as untracked (not ignored; a directory collapsed to `dir/`):
 * `ls-files --others --exclude-standard --directory` limited to exactly these paths (literal
 * pathspecs), so git reads this level and nothing below it. Raw paths as latin1 strings.
 */
async function untrackedOf(git: GitRunner, batch: Entry[]): Promise<Set<string>> {
  const paths = batch.map((e) => (e.isDir ? e.key.subarray(0, -1) : e.key).toString('utf8'));
  const r = await git.run(['ls-files', '--others', '--exclude-standard', '--directory', '-z', '--', ...paths], { timeoutMs: UNTRACKED_TIMEOUT_MS });
  const out = new Set<string>();
  let at = 0;
  for (let nul = r.stdout.indexOf(0); nul !== -1; nul = r.stdout.indexOf(0, at)) {
    out.add(r.stdout.subarray(at, nul).toString('latin1'));
    at = nul + 1;
  }
  return out;
}
