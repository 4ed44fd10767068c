/**
 * Workspace confinement. The root is realpath'd once; every user path is checked for syntax,
 * resolved through symlinks, and compared with the root on separator boundaries (so `root2` or
 * `root.bak` beside the root never pass). Files are opened without following a final symlink and
 * the opened descriptor's real path is checked again, so a file swapped for a link between the
 * check and the open is refused. New files are created with `wx` (never through a link) and
 * checked the same way.
 */
import { constants } from 'node:fs';
import { lstat, open, realpath, stat, type FileHandle } from 'node:fs/promises';
import { isAbsolute, join, relative, sep } from 'node:path';

/** Longest accepted user path, in UTF-8 bytes. */
export const MAX_PATH_BYTES = 4096;

/** Workspace failures; `code` is stable, the message says what happened and what to do. */
export type WorkspaceErrorCode =
  | 'INVALID_PATH'
  | 'PATH_ESCAPES_ROOT'
  | 'NOT_FOUND'
  | 'NOT_A_DIRECTORY'
  | 'NOT_A_FILE'
  | 'INVALID_CURSOR'
  | 'INVALID_PARAMS'
  | 'INPUT_TOO_LARGE'
  | 'ALREADY_EXISTS'
  | 'IO_ERROR';

export class WorkspaceError extends Error {
  override readonly name = 'WorkspaceError';
  constructor(
    readonly code: WorkspaceErrorCode,
    message: string,
    readonly data: Record<string, unknown> = {},
  ) {
    super(message);
  }
}

/** A path inside the workspace: its real absolute path and its path relative to the root. */
export interface Resolved {
  abs: string;
  rel: string;
}

export class Workspace {
  private constructor(readonly root: string) {}

  /** Open a workspace at `root` (realpath'd; must be a directory). */
  static async open(root: string): Promise<Workspace> {
    const real = await realpath(root);
    if (!(await stat(real)).isDirectory()) {
      throw new WorkspaceError('NOT_A_DIRECTORY', `The workspace root ${JSON.stringify(root)} is not a directory`);
    }
    return new Workspace(real);
  }

  /** Whether a real absolute path is the root or inside it (separator-boundary check). */
  contains(real: string): boolean {
    if (real === this.root) return true;
    const base = this.root.endsWith(sep) ? this.root : this.root + sep;
    return real.startsWith(base);
  }

  /**
   * Check a user path's syntax and return its segments. Refused: non-strings, empty-after-trim
   * oddities, NUL bytes, absolute paths, `..` segments (names like `..test` or `te..st` are fine),
   * trailing whitespace or quotes (almost always a quoting mistake), and paths over 4096 bytes.
   */
  segments(path: string | undefined): string[] {
    if (path === undefined || path === '' || path === '.') return [];
    if (typeof path !== 'string') throw new WorkspaceError('INVALID_PATH', 'Expected `path` to be a string');
    if (Buffer.byteLength(path) > MAX_PATH_BYTES) {
      throw new WorkspaceError('INVALID_PATH', `Expected \`path\` to be at most ${MAX_PATH_BYTES} bytes`, { max: MAX_PATH_BYTES });
    }
    if (path.includes('\0')) throw new WorkspaceError('INVALID_PATH', '`path` contains a NUL byte');
    if (/[\s"'`]$/.test(path)) {
      throw new WorkspaceError('INVALID_PATH', `\`path\` ends with whitespace or a quote: ${JSON.stringify(path)}; remove it`);
    }
    if (isAbsolute(path)) {
      throw new WorkspaceError('PATH_ESCAPES_ROOT', `\`path\` must be relative to the workspace root, got ${JSON.stringify(path)}`);
    }
    const parts = path.split('/').filter((s) => s !== '' && s !== '.');
    if (parts.includes('..')) {
      throw new WorkspaceError('PATH_ESCAPES_ROOT', `\`path\` may not contain \`..\` segments, got ${JSON.stringify(path)}`);
    }
    return parts;
  }

  private rel(abs: string): string {
    const r = relative(this.root, abs);
    return r === '' ? '.' : r.split(sep).join('/');
  }

  /** Resolve an existing path (following symlinks) and check it stays inside the root. */
  async resolve(path: string | undefined): Promise<Resolved> {
    const abs = join(this.root, ...this.segments(path));
    let real: string;
    try {
      real = await realpath(abs);
    } catch (e) {
      throw fsError(e, path);
    }
    if (!this.contains(real)) {
      throw new WorkspaceError('PATH_ESCAPES_ROOT', `${JSON.stringify(path)} resolves outside the workspace root (through a symlink)`);
    }
    return { abs: real, rel: this.rel(real) };
  }

  /** Resolve a directory. */
  async resolveDirectory(path: string | undefined): Promise<Resolved & { dev: number; ino: number }> {
    const r = await this.resolve(path);
    let st;
    try {
      st = await stat(r.abs);
    } catch (e) {
      throw fsError(e, path);
    }
    if (!st.isDirectory()) throw new WorkspaceError('NOT_A_DIRECTORY', `${JSON.stringify(path ?? '.')} is not a directory`);
    return { ...r, dev: st.dev, ino: st.ino };
  }

  /**
   * Open an existing regular file for reading. The final component is opened with O_NOFOLLOW
   * and the descriptor's real path is checked, so a swap to a symlink after the check is refused.
   */
  async openFile(path: string): Promise<{ handle: FileHandle; rel: string; size: number }> {
    const r = await this.resolve(path);
    let handle: FileHandle;
    try {
      // O_NONBLOCK: a FIFO or device must not block the open; the file-type check refuses it.
      handle = await open(r.abs, constants.O_RDONLY | constants.O_NOFOLLOW | constants.O_NONBLOCK);
    } catch (e) {
      throw fsError(e, path);
    }
    try {
      await this.checkDescriptor(handle, r.abs);
      const st = await handle.stat();
      if (!st.isFile()) throw new WorkspaceError('NOT_A_FILE', `${JSON.stringify(path)} is not a regular file`);
      return { handle, rel: r.rel, size: st.size };
    } catch (e) {
      await handle.close();
      throw e;
    }
  }

  /**
   * Where a new file would go: the deepest existing ancestor is realpath'd and checked; the rest
   * of the path must not exist yet as anything but directories we create.
   */
  async resolveNew(path: string): Promise<{ parentReal: string; missing: string[]; name: string; rel: string }> {
    const parts = this.segments(path);
    if (parts.length === 0) throw new WorkspaceError('INVALID_PATH', 'Expected `path` to name a file, got the root');
    const name = parts[parts.length - 1]!;
    let i = parts.length - 1;
    let existing = join(this.root, ...parts.slice(0, i));
    for (;;) {
      try {
        await lstat(existing);
        break;
      } catch (e) {
        if ((e as NodeJS.ErrnoException).code !== 'ENOENT') throw fsError(e, path);
        if (i === 0) throw new WorkspaceError('IO_ERROR', 'The workspace root is gone');
        i--;
        existing = join(this.root, ...parts.slice(0, i));
      }
    }
    let real: string;
    try {
      real = await realpath(existing);
    } catch (e) {
      throw fsError(e, path); // a dangling or looping link on the way
    }
    if (!this.contains(real)) {
      throw new WorkspaceError('PATH_ESCAPES_ROOT', `${JSON.stringify(path)} is under a symlink that leads outside the workspace root`);
    }
    if (!(await stat(real)).isDirectory()) {
      throw new WorkspaceError('NOT_A_DIRECTORY', `${JSON.stringify(parts.slice(0, i).join('/'))} is not a directory`);
    }
    return { parentReal: real, missing: parts.slice(i, parts.length - 1), name, rel: parts.join('/') };
  }

  /** The real path an open descriptor refers to must be `expected` (Linux: /proc/self/fd). */
  async checkDescriptor(handle: FileHandle, expected: string): Promise<void> {
    let real: string;
    try {
      real = await realpath(`/proc/self/fd/${handle.fd}`);
    } catch {
      return; // no /proc: the O_NOFOLLOW open is the protection left
    }
    if (real !== expected || !this.contains(real)) {
      throw new WorkspaceError('PATH_ESCAPES_ROOT', 'The file changed while it was being opened (swapped for a link); nothing was read or written');
    }
  }
}

/** Map a file-system error to a workspace error with a message that says what to do. */
export function fsError(e: unknown, path: string | undefined): WorkspaceError {
  if (e instanceof WorkspaceError) return e;
  const err = e as NodeJS.ErrnoException;
  const p = JSON.stringify(path ?? '.');
  switch (err.code) {
    case 'ENOENT':
      return new WorkspaceError('NOT_FOUND', `${p} does not exist in the workspace`);
    case 'ENOTDIR':
      return new WorkspaceError('NOT_A_DIRECTORY', `A parent of ${p} is not a directory`);
    case 'ELOOP':
      return new WorkspaceError('PATH_ESCAPES_ROOT', `${p} is a symlink (or a symlink loop) and is not followed here`);
    case 'EACCES':
    case 'EPERM':
      return new WorkspaceError('IO_ERROR', `Permission denied for ${p}`);
    case 'EEXIST':
      return new WorkspaceError('ALREADY_EXISTS', `${p} already exists; pass overwrite: true to replace it`);
    default:
      // Never the host path: only the user's path and the error code.
      return new WorkspaceError('IO_ERROR', `Cannot access ${p} (${err.code ?? 'error'})`);
  }
}
