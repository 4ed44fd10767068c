/**
 * A batch write, all or nothing. Every cap (item count, path length, bytes per file and in total)
 * and every path (confinement, no `.git` component in any case) is checked before anything is
 * written. Directories are opened (or created) from the root descriptor one component at a time
 * without following links, and every later step — staging with `O_EXCL | O_NOFOLLOW`, publishing
 * with `link` (new files; fails if the name appeared meanwhile) or `rename` over an existing file
 * with a backup, rollback and cleanup — names entries relative to those open directories, so a
 * directory swapped for a link mid-batch cannot redirect a write. Any failure rolls back.
 */
import { randomBytes } from 'node:crypto';
import { constants } from 'node:fs';
import { link, lstat, mkdir, open, rename, rmdir, unlink } from 'node:fs/promises';
import { MAX_PATH_BYTES, WorkspaceError, fsError, isGitComponent, type DirHandle, type Workspace } from './confine.js';
import { BudgetError } from '../engine/index.js';

/** Caps of `workspace_seed_files`; the inventory and the spec quote them. */
export const SEED_LIMITS = Object.freeze({
  maxFiles: 100,
  maxPathBytes: 1024,
  maxFileBytes: 1024 * 1024,
  maxTotalBytes: 8 * 1024 * 1024,
  /** Components of one path: each open directory is a descriptor held for the batch. */
  maxPathDepth: 32,
  /** Distinct directories one batch may walk or create (each is a descriptor held for the batch). */
  maxDirectories: 256,
});

/**
 * A file named `HEAD` makes its directory a git directory once `objects/` and `refs/` sit beside
 * it (git finds bare repositories by that shape), so seeding never writes one, in any case.
 */
function isGitHead(name: string): boolean {
  return name.toUpperCase() === 'HEAD';
}

export interface SeedFile {
  path: string;
  content: string;
}

export interface SeedReceipt {
  written: number;
  bytes: number;
  paths: string[];
  created_directories: number;
}

function tooLarge(what: string, cap: number, value: number): WorkspaceError {
  return new WorkspaceError('INPUT_TOO_LARGE', `${what}: the cap is ${cap}, got ${value}; nothing was written. Split the batch.`, {
    cap,
    value,
  });
}

/** Check every cap before anything touches the disk. */
export function checkSeedInput(files: unknown): SeedFile[] {
  if (!Array.isArray(files) || files.length === 0) {
    throw new WorkspaceError('INVALID_PARAMS', 'Expected `files` to be a non-empty array of {path, content}');
  }
  if (files.length > SEED_LIMITS.maxFiles) throw tooLarge('Too many files in one batch (`files`)', SEED_LIMITS.maxFiles, files.length);
  let total = 0;
  const seen = new Set<string>();
  for (const [i, f] of files.entries()) {
    const { path, content } = (f ?? {}) as Partial<SeedFile>;
    if (typeof path !== 'string' || typeof content !== 'string') {
      throw new WorkspaceError('INVALID_PARAMS', `Expected \`files[${i}]\` to be {path: string, content: string}`);
    }
    const pathBytes = Buffer.byteLength(path);
    if (pathBytes > Math.min(SEED_LIMITS.maxPathBytes, MAX_PATH_BYTES)) {
      throw tooLarge(`Path of \`files[${i}]\` in bytes`, SEED_LIMITS.maxPathBytes, pathBytes);
    }
    const bytes = Buffer.byteLength(content);
    if (bytes > SEED_LIMITS.maxFileBytes) throw tooLarge(`Content of \`files[${i}]\` in bytes`, SEED_LIMITS.maxFileBytes, bytes);
    total += bytes;
    if (total > SEED_LIMITS.maxTotalBytes) throw tooLarge('Total content of the batch in bytes', SEED_LIMITS.maxTotalBytes, total);
    const key = path.split('/').filter((s) => s !== '' && s !== '.').join('/');
    if (seen.has(key)) throw new WorkspaceError('INVALID_PARAMS', `\`files\` names ${JSON.stringify(path)} twice`);
    seen.add(key);
  }
  // A file cannot also be a directory of another file in the same batch (`a` and `a/b`).
  for (const key of seen) {
    const parts = key.split('/');
    for (let i = 1; i < parts.length; i++) {
      const dir = parts.slice(0, i).join('/');
      if (seen.has(dir)) {
        throw new WorkspaceError('INVALID_PARAMS', `\`files\` names ${JSON.stringify(dir)} both as a file and as a directory of ${JSON.stringify(key)}; nothing was written`);
      }
    }
  }
  return files as SeedFile[];
}

interface Staged {
  dev: number;
  ino: number;
  /** The directory the file is published in, held open: every name below is relative to it. */
  dir: DirHandle;
  temp: string;
  name: string;
  backup: string | undefined;
  rel: string;
}

interface CreatedDir {
  parent: DirHandle;
  name: string;
}

const CREATE_FLAGS = constants.O_WRONLY | constants.O_CREAT | constants.O_EXCL | constants.O_NOFOLLOW;

/**
 * Open (creating what is missing) the directories of `parts` from the root, one component at a
 * time without following a link; opened handles are cached by relative path for the batch.
 */
async function openParent(
  root: DirHandle,
  parts: string[],
  cache: Map<string, DirHandle>,
  created: CreatedDir[],
  shown: string,
  checked: Set<DirHandle>,
): Promise<DirHandle> {
  let dir = root;
  await refuseGitDirectory(dir, shown, checked);
  for (const seg of parts) {
    const rel = dir.childRel(seg);
    const cached = cache.get(rel);
    if (cached !== undefined) {
      dir = cached;
      continue;
    }
    let next: DirHandle;
    try {
      next = await dir.openDir(seg);
    } catch (e) {
      if ((e as NodeJS.ErrnoException).code !== 'ENOENT') throw fsError(e, shown);
      try {
        await mkdir(dir.at(seg));
        created.push({ parent: dir, name: seg });
      } catch (m) {
        if ((m as NodeJS.ErrnoException).code !== 'EEXIST') throw fsError(m, shown);
      }
      try {
        next = await dir.openDir(seg); // refuses a link that appeared in its place
      } catch (o) {
        throw fsError(o, shown);
      }
    }
    cache.set(rel, next);
    dir = next;
    await refuseGitDirectory(dir, shown, checked);
  }
  return dir;
}

/**
 * No write into, or below, a directory that holds a `HEAD` (a git directory: a repository's own
 * `.git` under another name, or a bare repository), so nothing seeded can change what a plain
 * `git` reads there (config, hooks, objects, refs).
 */
async function refuseGitDirectory(dir: DirHandle, shown: string, checked: Set<DirHandle>): Promise<void> {
  if (checked.has(dir)) return;
  checked.add(dir);
  for (const name of ['HEAD', 'head']) {
    try {
      await lstat(dir.at(name));
    } catch {
      continue;
    }
    throw new WorkspaceError(
      'INVALID_PATH',
      `${JSON.stringify(shown)} is inside a git directory (${JSON.stringify(dir.rel)} holds a HEAD); no tool writes there. Nothing was written.`,
    );
  }
}

/** Test seams: a step run before the batch publishes its `index`-th file (after the earlier ones were published). */
export interface SeedFaults {
  beforePublish?(index: number): Promise<void> | void;
}

export async function seedFiles(ws: Workspace, input: unknown, overwrite: boolean, faults: SeedFaults = {}): Promise<SeedReceipt> {
  const files = checkSeedInput(input);
  ws.requireDescriptorConfinement('Writing files');
  // Check every path first: an escape or a `.git` component anywhere refuses the whole batch.
  const plans = files.map((f) => {
    const parts = ws.segments(f.path);
    if (parts.length === 0) throw new WorkspaceError('INVALID_PATH', 'Expected `path` to name a file, got the root');
    if (parts.some(isGitComponent)) {
      throw new WorkspaceError('INVALID_PATH', `${JSON.stringify(f.path)} is inside a \`.git\` directory; no tool writes there. Nothing was written.`);
    }
    if (isGitHead(parts[parts.length - 1]!)) {
      throw new WorkspaceError('INVALID_PATH', `${JSON.stringify(f.path)} would make its directory a git repository (a \`HEAD\` file); no tool writes one. Nothing was written.`);
    }
    if (parts.length > SEED_LIMITS.maxPathDepth) throw tooLarge(`Depth of ${JSON.stringify(f.path)} in path components`, SEED_LIMITS.maxPathDepth, parts.length);
    return { f, parts };
  });
  const directories = new Set<string>();
  for (const { parts } of plans) for (let i = 1; i < parts.length; i++) directories.add(parts.slice(0, i).join('/'));
  if (directories.size > SEED_LIMITS.maxDirectories) {
    throw tooLarge('Distinct directories in one batch', SEED_LIMITS.maxDirectories, directories.size);
  }
  const root = await ws.openRoot();
  const cache = new Map<string, DirHandle>([['.', root]]);
  const checked = new Set<DirHandle>();
  const staged: Staged[] = [];
  const createdDirs: CreatedDir[] = [];
  const committed: Staged[] = [];
  let bytes = 0;
  try {
    try {
      for (const { f, parts } of plans) {
        const dir = await openParent(root, parts.slice(0, -1), cache, createdDirs, f.path, checked);
        const name = parts[parts.length - 1]!;
        let exists = false;
        try {
          const st = await lstat(dir.at(name));
          exists = true;
          if (!st.isFile()) throw new WorkspaceError('NOT_A_FILE', `${JSON.stringify(f.path)} exists and is not a regular file; nothing was written`);
        } catch (e) {
          if (e instanceof BudgetError) throw e;
        }
        if (exists && !overwrite) {
          throw new WorkspaceError('ALREADY_EXISTS', `${JSON.stringify(f.path)} already exists; pass overwrite: true to replace it. Nothing was written.`);
        }
        const temp = `.mcp-budget-${randomBytes(6).toString('hex')}.tmp`;
        let handle;
        try {
          handle = await open(dir.at(temp) as string, CREATE_FLAGS, 0o644);
        } catch (e) {
          throw fsError(e, f.path); // name the file the user asked for, never the staging name
        }
        try {
          const st = await handle.stat();
          staged.push({ dev: st.dev, ino: st.ino, dir, temp, name, backup: undefined, rel: parts.join('/') });
          await handle.writeFile(f.content);
        } finally {
          await handle.close();
        }
        bytes += Buffer.byteLength(f.content);
      }
      for (const [index, s] of staged.entries()) {
        await faults.beforePublish?.(index);
        // The directory must still be where the user named it: a directory moved away meanwhile
        // (a rename never escapes the descriptor, but the user asked for this path) fails the batch.
        await checkStillPlaced(ws, s);
        // The staging name must still be the file written (not swapped for a link or another file).
        const st = await lstat(s.dir.at(s.temp));
        if (!st.isFile() || st.dev !== s.dev || st.ino !== s.ino) {
          throw new WorkspaceError('PATH_ESCAPES_ROOT', `The staged file for ${JSON.stringify(s.rel)} was replaced before it was published; nothing was written`);
        }
        try {
          await link(s.dir.at(s.temp), s.dir.at(s.name)); // new file: fails if the name appeared meanwhile
        } catch (e) {
          if ((e as NodeJS.ErrnoException).code !== 'EEXIST' || !overwrite) throw fsError(e, s.rel);
          // Overwrite atomically: keep the old file under a second name (a hard link), then rename
          // the new one over the target, so a reader always finds one of the two. A link at the
          // target is replaced, never followed (rename works on names).
          const backup = `${s.temp}.bak`;
          await link(s.dir.at(s.name), s.dir.at(backup));
          s.backup = backup; // from here on, a rollback or cleanup removes it
          await rename(s.dir.at(s.temp), s.dir.at(s.name));
        }
        committed.push(s);
      }
    } catch (e) {
      const failure = e instanceof BudgetError ? e : fsError(e, staged.at(-1)?.rel);
      const left = await rollback(committed, staged, createdDirs);
      if (left.length === 0) throw failure;
      // Published files the rollback could not take back: the batch is neither done nor undone.
      throw new WorkspaceError(
        'OUTCOME_UNKNOWN',
        `The batch failed (${failure.message}) after ${committed.length} of ${staged.length} files were published, and ${left.length} could not be rolled back: they may hold the new content. Read them before writing again.`,
        { paths: left.slice(0, 20), unrestored: left.length },
      );
    }
    // Published: from here on nothing decides the answer (a leftover staging name is only untidy).
    for (const s of staged) {
      await unlink(s.dir.at(s.temp)).catch(() => undefined);
      if (s.backup !== undefined) await unlink(s.dir.at(s.backup)).catch(() => undefined);
    }
  } finally {
    for (const h of cache.values()) await h.close().catch(() => undefined);
  }
  return { written: staged.length, bytes, paths: staged.map((s) => s.rel), created_directories: createdDirs.length };
}

/** The path of a staged file's directory, walked again from the root, reaches the same directory. */
async function checkStillPlaced(ws: Workspace, s: Staged): Promise<void> {
  const again = await ws.openDir(s.dir.rel === '.' ? [] : s.dir.rel.split('/'));
  await again.close();
  if (again.dev !== s.dir.dev || again.ino !== s.dir.ino) {
    throw new WorkspaceError('IO_ERROR', `The directory of ${JSON.stringify(s.rel)} was replaced while the batch was written; nothing was written`);
  }
}

/** Undo a failed batch, every step relative to the directory handles it was done in; the paths it could not restore. */
async function rollback(committed: Staged[], staged: Staged[], createdDirs: CreatedDir[]): Promise<string[]> {
  const left: string[] = [];
  for (const s of committed.reverse()) {
    try {
      if (s.backup !== undefined) await rename(s.dir.at(s.backup), s.dir.at(s.name)); // atomic restore
      else await unlink(s.dir.at(s.name));
    } catch (e) {
      if ((e as NodeJS.ErrnoException).code !== 'ENOENT' || s.backup !== undefined) left.push(s.rel);
    }
  }
  for (const s of staged) {
    await unlink(s.dir.at(s.temp)).catch(() => undefined);
    // A backup made for an overwrite whose rename then failed: the target still holds the old file.
    if (s.backup !== undefined && !committed.includes(s)) await unlink(s.dir.at(s.backup)).catch(() => undefined);
  }
  for (const d of createdDirs.reverse()) await rmdir(d.parent.at(d.name)).catch(() => undefined);
  return left;
}
