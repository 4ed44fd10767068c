/**
 * The workspace gate: descriptors, not checked strings. The root is opened once (its device and
 * inode pinned); every path is reached by walking from an open descriptor one component at a
 * time with `O_NOFOLLOW | O_DIRECTORY`, so a symlink anywhere on the way is refused, and the
 * caller gets what was opened (a `DirHandle`), never a string to open again. A directory swapped
 * for a link after the walk does not matter: the handle still names the directory that was opened.
 *
 * Where it holds: Linux, where `/proc/self/fd/N/name` resolves `name` inside the open directory N
 * (Node has no `openat`). Elsewhere the gate falls back to component-wise `lstat` checks on path
 * strings for reads, which a concurrent swap can race, and refuses every mutation
 * (`UNSUPPORTED_PLATFORM`). `specs/threat-model.md` states this.
 */
import { constants, type Dir } from 'node:fs';
import { lstat, open, opendir, realpath, type FileHandle } from 'node:fs/promises';
import { isAbsolute } from 'node:path';
import { WorkspaceError, fsError } from './errors.js';

export { WorkspaceError, fsError, type WorkspaceErrorCode } from './errors.js';

/** Longest accepted user path, in UTF-8 bytes. */
export const MAX_PATH_BYTES = 4096;

/** A path inside the workspace: its path relative to the root (`.` for the root). */
export interface Resolved {
  rel: string;
}

/**
 * Linux `O_PATH` (not in Node's constants): a descriptor for walking that needs no read
 * permission, so a traversable but unlistable directory can still be passed through, as with a
 * path. Listing re-opens through `/proc/self/fd/N` and so still needs read permission.
 */
const O_PATH = process.platform === 'linux' && (process.arch === 'x64' || process.arch === 'arm64' || process.arch === 'arm' || process.arch === 'ia32') ? 0o10000000 : 0;
const DIR_FLAGS = constants.O_RDONLY | constants.O_DIRECTORY | constants.O_NOFOLLOW | O_PATH;
/** O_NONBLOCK: a FIFO or device must not block the open; the file-type check refuses it. */
const READ_FLAGS = constants.O_RDONLY | constants.O_NOFOLLOW | constants.O_NONBLOCK;

/** A name inside a directory: a string, or raw bytes for names that are not UTF-8. */
export type EntryName = string | Buffer;

/**
 * Whether a path component names `.git` on some file system: any case, trailing dots or spaces
 * (dropped by FAT and NTFS), or the 8.3 short name `git~1`. No tool writes there.
 */
export function isGitComponent(name: EntryName): boolean {
  const s = (typeof name === 'string' ? name : name.toString('latin1')).toLowerCase().replace(/[. ]+$/, '');
  return s === '.git' || s === 'git~1';
}

function checkName(name: EntryName): void {
  const s = typeof name === 'string' ? name : name.toString('latin1');
  if (s === '' || s === '.' || s === '..' || s.includes('/') || s.includes('\0')) {
    throw new WorkspaceError('INVALID_PATH', `Invalid entry name ${JSON.stringify(s.slice(0, 80))}`);
  }
}

/**
 * An open directory inside the workspace. Every operation on a child is relative to this
 * descriptor; nothing re-resolves the directory's path. Close it when done.
 */
export class DirHandle {
  constructor(
    private readonly handle: FileHandle,
    /** Path relative to the root, `/`-separated (`.` for the root). */
    readonly rel: string,
    readonly dev: number,
    readonly ino: number,
    /** Host path the handle was reached by (fallback platforms only; bytes for raw names). */
    private readonly fallbackAbs: string | Buffer | undefined,
  ) {}

  /** A path naming `name` inside this open directory (Linux: through `/proc/self/fd`). */
  at(name: EntryName): string | Buffer {
    checkName(name);
    const base = this.fallbackAbs ?? `/proc/self/fd/${this.handle.fd}`;
    if (typeof name === 'string' && typeof base === 'string') return `${base}/${name}`;
    return Buffer.concat([Buffer.from(base), Buffer.from('/'), Buffer.from(name)]);
  }

  /** A path naming this directory itself (for `opendir`). */
  get self(): string {
    return (this.fallbackAbs as string | undefined) ?? `/proc/self/fd/${this.handle.fd}`;
  }

  /** Relative path of a child. */
  childRel(name: EntryName): string {
    const s = typeof name === 'string' ? name : name.toString('utf8');
    return this.rel === '.' ? s : `${this.rel}/${s}`;
  }

  /** Open a child directory without following a link (a link is refused with ELOOP). */
  async openDir(name: EntryName): Promise<DirHandle> {
    const path = this.at(name);
    let h: FileHandle;
    try {
      h = await open(path as string, DIR_FLAGS);
    } catch (e) {
      throw await this.classify(e, name);
    }
    try {
      const st = await h.stat();
      return new DirHandle(h, this.childRel(name), st.dev, st.ino, this.fallbackAbs === undefined ? undefined : path);
    } catch (e) {
      await h.close();
      throw fsError(e, this.childRel(name));
    }
  }

  /** Open a child file for reading without following a link (the caller checks its type). */
  async openFile(name: EntryName, flags = READ_FLAGS): Promise<FileHandle> {
    try {
      return await open(this.at(name) as string, flags | constants.O_NOFOLLOW);
    } catch (e) {
      throw await this.classify(e, name);
    }
  }

  /**
   * `O_NOFOLLOW | O_DIRECTORY` on a link fails with ENOTDIR (or ELOOP): tell a link from a file,
   * so the caller's error says a link is never followed. Other errors pass unchanged.
   */
  private async classify(e: unknown, name: EntryName): Promise<unknown> {
    const code = (e as NodeJS.ErrnoException).code;
    if (code !== 'ENOTDIR' && code !== 'ELOOP') return e;
    try {
      if ((await lstat(this.at(name))).isSymbolicLink()) return Object.assign(new Error('symlink'), { code: 'ELOOP' });
    } catch {
      // gone meanwhile: report the original error
    }
    return e;
  }

  /** Iterate the directory (Node's `Dir`), through the open descriptor. */
  list(bufferSize = 64, raw = false): Promise<Dir> {
    return opendir(this.self, { bufferSize, ...(raw ? { encoding: 'buffer' as BufferEncoding } : {}) });
  }

  /** The descriptor still names a directory with the pinned identity. */
  async identity(): Promise<{ dev: number; ino: number }> {
    const st = await this.handle.stat();
    return { dev: st.dev, ino: st.ino };
  }

  async close(): Promise<void> {
    await this.handle.close().catch(() => undefined);
  }
}

/**
 * Open a regular file without side effects on anything else: an `O_PATH` descriptor first (opening
 * it runs no FIFO or device open routine), its type checked, and only a regular file re-opened for
 * reading through that descriptor (the magic link names the inode, not a path).
 */
async function openRegular(dir: DirHandle, name: EntryName, shown: string): Promise<FileHandle> {
  const probe = await dir.openFile(name, O_PATH);
  try {
    const st = await probe.stat();
    // With O_PATH, O_NOFOLLOW opens a link itself instead of failing: refuse it as a link.
    if (st.isSymbolicLink()) throw Object.assign(new Error('symlink'), { code: 'ELOOP' });
    if (!st.isFile()) throw new WorkspaceError('NOT_A_FILE', `${JSON.stringify(shown)} is not a regular file`);
    return await open(`/proc/self/fd/${probe.fd}`, constants.O_RDONLY);
  } finally {
    await probe.close();
  }
}

export class Workspace {
  private constructor(
    /** The root's real path, as pinned at start. */
    readonly root: string,
    private readonly rootHandle: FileHandle,
    readonly rootDev: number,
    readonly rootIno: number,
    /** True where paths are confined by descriptors (Linux `/proc/self/fd`). */
    readonly descriptorConfined: boolean,
  ) {}

  /** Open a workspace at `root` (realpath'd once; must be a directory). Its identity is pinned. */
  static async open(root: string): Promise<Workspace> {
    let real: string;
    try {
      real = await realpath(root);
    } catch (e) {
      throw new WorkspaceError('NOT_FOUND', `The workspace root ${JSON.stringify(root)} cannot be opened (${(e as NodeJS.ErrnoException).code ?? 'error'})`);
    }
    let h: FileHandle;
    try {
      h = await open(real, DIR_FLAGS);
    } catch {
      throw new WorkspaceError('NOT_A_DIRECTORY', `The workspace root ${JSON.stringify(root)} is not a directory`);
    }
    const st = await h.stat();
    let confined = false;
    try {
      confined = (await realpath(`/proc/self/fd/${h.fd}`)) === real;
    } catch {
      confined = false;
    }
    return new Workspace(real, h, st.dev, st.ino, confined);
  }

  /** Close the root descriptor (the workspace is unusable afterwards). */
  async close(): Promise<void> {
    await this.rootHandle.close().catch(() => undefined);
  }

  /**
   * The root path still names the directory pinned at start (not renamed away, not swapped for a
   * link or another directory). Checked on every tool call; a changed root is refused.
   */
  async checkRoot(): Promise<void> {
    let ok = false;
    try {
      const st = await lstat(this.root);
      ok = st.isDirectory() && st.dev === this.rootDev && st.ino === this.rootIno;
    } catch {
      ok = false;
    }
    if (!ok) {
      throw new WorkspaceError(
        'ROOT_CHANGED',
        'The workspace root was moved, removed or replaced since the server started; nothing was read or written. Restart the server on the intended directory.',
      );
    }
  }

  /** Refuse a mutation where the gate cannot confine it by descriptors. */
  requireDescriptorConfinement(what: string): void {
    if (!this.descriptorConfined) {
      throw new WorkspaceError(
        'UNSUPPORTED_PLATFORM',
        `${what} is refused on this platform: writes are confined by open descriptors only on Linux (/proc/self/fd).`,
      );
    }
  }

  /**
   * Check a user path's syntax and return its segments. Refused: non-strings, NUL bytes, absolute
   * paths, `..` segments (names like `..test` are fine), trailing whitespace or quotes (almost
   * always a quoting mistake), and paths over 4096 bytes.
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
    if (isAbsolute(path) || path.startsWith('\\')) {
      throw new WorkspaceError('PATH_ESCAPES_ROOT', `\`path\` must be relative to the workspace root, got ${JSON.stringify(path)}`);
    }
    const parts = path.split('/').filter((s) => s !== '' && s !== '.');
    if (parts.includes('..')) {
      throw new WorkspaceError('PATH_ESCAPES_ROOT', `\`path\` may not contain \`..\` segments, got ${JSON.stringify(path)}`);
    }
    return parts;
  }

  /** The root as an open directory handle (a new descriptor; close it when done). */
  async openRoot(): Promise<DirHandle> {
    await this.checkRoot();
    if (!this.descriptorConfined) {
      let h: FileHandle;
      try {
        h = await open(this.root, DIR_FLAGS);
      } catch (e) {
        throw fsError(e, '.');
      }
      return new DirHandle(h, '.', this.rootDev, this.rootIno, this.root);
    }
    let h: FileHandle;
    try {
      h = await open(`/proc/self/fd/${this.rootHandle.fd}`, constants.O_RDONLY | constants.O_DIRECTORY);
    } catch (e) {
      throw fsError(e, '.'); // EMFILE and the like: the code only, never the descriptor path
    }
    return new DirHandle(h, '.', this.rootDev, this.rootIno, undefined);
  }

  /**
   * Open a directory by walking from the root, one component at a time, never following a link.
   * `path` is a user path (checked) or segments already checked.
   */
  async openDir(path: string | undefined | string[]): Promise<DirHandle> {
    const parts = Array.isArray(path) ? path : this.segments(path);
    const shown = Array.isArray(path) ? parts.join('/') : path;
    let dir = await this.openRoot();
    try {
      for (const seg of parts) {
        const next = await dir.openDir(seg);
        await dir.close();
        dir = next;
      }
      return dir;
    } catch (e) {
      await dir.close();
      throw fsError(e, shown);
    }
  }

  /** Open the directory that holds the last component of `path`, and that component's name. */
  async openParent(path: string): Promise<{ dir: DirHandle; name: string; rel: string }> {
    const parts = this.segments(path);
    if (parts.length === 0) throw new WorkspaceError('INVALID_PATH', 'Expected `path` to name an entry, got the root');
    const dir = await this.openDir(parts.slice(0, -1));
    return { dir, name: parts[parts.length - 1]!, rel: parts.join('/') };
  }

  /**
   * Open an existing regular file for reading: the walk refuses links on the way, the final open
   * refuses a link, and the descriptor's type is checked (FIFOs and devices are refused).
   */
  async openFile(path: string): Promise<{ handle: FileHandle; rel: string; size: number }> {
    if (this.segments(path).length === 0) throw new WorkspaceError('NOT_A_FILE', `${JSON.stringify(path)} is the workspace root, not a file`);
    const { dir, name, rel } = await this.openParent(path);
    let handle: FileHandle;
    try {
      handle = O_PATH !== 0 ? await openRegular(dir, name, path) : await dir.openFile(name);
    } catch (e) {
      throw fsError(e, path);
    } finally {
      await dir.close();
    }
    try {
      const st = await handle.stat();
      if (!st.isFile()) throw new WorkspaceError('NOT_A_FILE', `${JSON.stringify(path)} is not a regular file`);
      return { handle, rel, size: st.size };
    } catch (e) {
      await handle.close();
      throw fsError(e, path);
    }
  }

}
