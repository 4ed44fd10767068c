/**
 * A batch write, all or nothing. Every cap (item count, path length, bytes per file and in total)
 * is checked before anything is written. Files are staged beside their targets with `wx` (a link
 * at the staging name is never followed), each staged descriptor's real path is checked, and only
 * then are they moved into place: `link` for new files (fails if the name appeared meanwhile) or
 * `rename` over an existing file with a backup. Any failure rolls back what was done.
 */
import { randomBytes } from 'node:crypto';
import { link, lstat, mkdir, open, rename, rm, rmdir, unlink } from 'node:fs/promises';
import { join } from 'node:path';
import { MAX_PATH_BYTES, WorkspaceError, fsError, type Workspace } from './confine.js';

/** Caps of `workspace_seed_files`; the inventory and the spec quote them. */
export const SEED_LIMITS = Object.freeze({
  maxFiles: 100,
  maxPathBytes: 1024,
  maxFileBytes: 1024 * 1024,
  maxTotalBytes: 8 * 1024 * 1024,
});

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
  temp: string;
  target: string;
  backup: string | undefined;
  rel: string;
}

export async function seedFiles(ws: Workspace, input: unknown, overwrite: boolean): Promise<SeedReceipt> {
  const files = checkSeedInput(input);
  // Resolve every target first: a path escape anywhere refuses the whole batch.
  const plans = [];
  for (const f of files) plans.push({ f, where: await ws.resolveNew(f.path) });
  const staged: Staged[] = [];
  const createdDirs: string[] = [];
  const committed: Staged[] = [];
  let bytes = 0;
  try {
    for (const { f, where } of plans) {
      let dir = where.parentReal;
      for (const seg of where.missing) {
        dir = join(dir, seg);
        try {
          await mkdir(dir);
          createdDirs.push(dir);
        } catch (e) {
          if ((e as NodeJS.ErrnoException).code !== 'EEXIST') throw fsError(e, f.path);
        }
        // A directory created (or found) here must still be inside the root and not a link.
        const st = await lstat(dir);
        if (!st.isDirectory()) throw new WorkspaceError('PATH_ESCAPES_ROOT', `${JSON.stringify(f.path)} passes through a link or a file`);
      }
      const target = join(dir, where.name);
      let exists = false;
      try {
        const st = await lstat(target);
        exists = true;
        if (!st.isFile()) throw new WorkspaceError('NOT_A_FILE', `${JSON.stringify(f.path)} exists and is not a regular file; nothing was written`);
      } catch (e) {
        if (e instanceof WorkspaceError) throw e;
      }
      if (exists && !overwrite) {
        throw new WorkspaceError('ALREADY_EXISTS', `${JSON.stringify(f.path)} already exists; pass overwrite: true to replace it. Nothing was written.`);
      }
      const temp = join(dir, `.mcp-budget-${randomBytes(6).toString('hex')}.tmp`);
      let handle;
      try {
        handle = await open(temp, 'wx', 0o644);
      } catch (e) {
        throw fsError(e, f.path); // name the file the user asked for, never the staging name
      }
      const st = await handle.stat();
      staged.push({ dev: st.dev, ino: st.ino, temp, target, backup: undefined, rel: where.rel });
      try {
        await ws.checkDescriptor(handle, temp);
        await handle.writeFile(f.content);
      } finally {
        await handle.close();
      }
      bytes += Buffer.byteLength(f.content);
    }
    for (const s of staged) {
      // The staging name must still be the file written (not swapped for a link or another file).
      const st = await lstat(s.temp);
      if (!st.isFile() || st.dev !== s.dev || st.ino !== s.ino) {
        throw new WorkspaceError('PATH_ESCAPES_ROOT', `The staged file for ${JSON.stringify(s.rel)} was replaced before it was published; nothing was written`);
      }
      try {
        await link(s.temp, s.target); // new file: fails if the name appeared meanwhile
      } catch (e) {
        if ((e as NodeJS.ErrnoException).code !== 'EEXIST' || !overwrite) throw fsError(e, s.rel);
        // Overwrite atomically: keep the old file under a second name (a hard link), then rename
        // the new one over the target, so a reader always finds one of the two.
        s.backup = `${s.temp}.bak`;
        await link(s.target, s.backup);
        await rename(s.temp, s.target); // replaces the name, never follows a link there
      }
      committed.push(s);
    }
  } catch (e) {
    await rollback(committed, staged, createdDirs);
    throw e instanceof WorkspaceError ? e : fsError(e, staged.at(-1)?.rel);
  }
  for (const s of staged) {
    await rm(s.temp, { force: true });
    if (s.backup !== undefined) await rm(s.backup, { force: true });
  }
  return { written: staged.length, bytes, paths: staged.map((s) => s.rel), created_directories: createdDirs.length };
}

async function rollback(committed: Staged[], staged: Staged[], createdDirs: string[]): Promise<void> {
  for (const s of committed.reverse()) {
    if (s.backup !== undefined) await rename(s.backup, s.target).catch(() => undefined); // atomic restore
    else await unlink(s.target).catch(() => undefined);
  }
  for (const s of staged) await rm(s.temp, { force: true }).catch(() => undefined);
  for (const d of createdDirs.reverse()) await rmdir(d).catch(() => undefined);
}
