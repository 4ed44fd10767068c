/**
 * Where a cut result's original is held, as the bytes of its JSON: in memory, or in a spill file
 * of a private directory. Either way the original is written once, as it is produced or streams
 * in, and read back by offset (`continuation-bytes.ts` finds the parts in it), so a result of any
 * size never becomes one value or one string in memory.
 *
 * The spill directory: one per process, made with `mkdtemp` (mode 0700, a fresh name no other
 * user can take first) under the base directory (the system's temporary directory unless set),
 * files created exclusively (mode 0600, never following a link), unlinked when their entry goes,
 * the directory removed when the process exits. Directories that processes of this user left
 * behind (killed before they could clean up) are removed at start-up: only real directories of
 * this user, named by a process that no longer runs.
 */
import { closeSync, constants, existsSync, mkdtempSync, openSync, read as readFd, rmSync, writeSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { randomBytes } from 'node:crypto';
import { BudgetError } from '../../engine/index.js';
import { removeStaleDirs } from '../../shared/stale-dirs.js';

declare module '../../engine/errors.js' {
  interface ErrorCodes {
    /** An original could not be kept for its continuation (the disk is full, the directory is gone). */
    CONTINUATION_SPILL_FAILED: true;
  }
}

/** An original's bytes, however they are held. */
export interface HeldBytes {
  readonly size: number;
  /**
   * `length` bytes from `offset`, fewer only at the end. `into`: a buffer the bytes may be read
   * into (perf: a reader that walks far reuses one window, not a fresh buffer per read); the
   * result is then valid until the next read into it.
   */
  read(offset: number, length: number, into?: Buffer): Promise<Buffer>;
  /** Let the bytes go (the entry was removed). */
  release(): void;
}

/** Bytes written as they come, then held: {@link SpillWriter.finish} gives them to read. */
export interface SpillWriter {
  readonly size: number;
  /**
   * Throws `CONTINUATION_SPILL_FAILED` when the bytes cannot be kept (the writer is then
   * released); a failure of a write still in flight is told by `finish`. The caller may reuse
   * `chunk` once this returns.
   */
  write(chunk: Uint8Array): void;
  /** The bytes, once every write landed (rejects with the first failure, the writer released). */
  finish(): Promise<HeldBytes>;
  /** Write in place: the bytes are on disk (or held) when this returns. */
  writeNow?(chunk: Uint8Array): void;
  /** The bytes, when every write was made in place. */
  finishNow?(): HeldBytes;
  /** Give up: nothing is kept. */
  abort(): void;
}

/** Bytes held in memory, as the chunks they came in (never joined: a large original is not copied). */
class MemoryWriter implements SpillWriter, HeldBytes {
  private chunks: Buffer[] = [];
  /** Where each chunk starts. */
  private starts: number[] = [];
  private released = false;
  size = 0;

  constructor(whole?: Buffer) {
    if (whole !== undefined && whole.length > 0) {
      this.chunks.push(whole);
      this.starts.push(0);
      this.size = whole.length;
    }
  }

  write(chunk: Uint8Array): void {
    // Copied: the caller's buffer is reused for its next read.
    this.starts.push(this.size);
    this.chunks.push(Buffer.from(chunk));
    this.size += chunk.length;
  }

  finish(): Promise<HeldBytes> {
    return Promise.resolve(this);
  }

  finishNow(): HeldBytes {
    return this;
  }

  abort(): void {
    this.release();
  }

  read(offset: number, length: number): Promise<Buffer> {
    if (this.released) return Promise.reject(gone());
    const end = Math.min(this.size, offset + length);
    const parts: Buffer[] = [];
    // The chunk holding `offset`, by bisection.
    let lo = 0;
    let hi = this.starts.length - 1;
    while (lo < hi) {
      const mid = (lo + hi + 1) >> 1;
      if (this.starts[mid]! <= offset) lo = mid;
      else hi = mid - 1;
    }
    for (let i = lo; i < this.chunks.length && this.starts[i]! < end; i++) {
      const s = this.starts[i]!;
      parts.push(this.chunks[i]!.subarray(Math.max(0, offset - s), Math.min(this.chunks[i]!.length, end - s)));
    }
    return Promise.resolve(parts.length === 1 ? parts[0]! : Buffer.concat(parts));
  }

  release(): void {
    this.chunks = [];
    this.starts = [];
    this.released = true;
  }
}

/** Bytes held in memory only. */
export function memoryWriter(): SpillWriter {
  return new MemoryWriter();
}

/** Bytes held in memory, from one buffer. */
export function heldInMemory(bytes: Buffer): HeldBytes {
  return new MemoryWriter(bytes);
}

/** A spill file: written once through its descriptor, read by offset, unlinked when released. */
class SpillFile implements SpillWriter, HeldBytes {
  size = 0;
  private fd: number | undefined;
  /** Reads in flight on the descriptor. */
  private reading = 0;
  /** The descriptor of a released file, closed once no read is in flight. */
  private closing: number | undefined;
  /** The write that failed. */
  private failed: BudgetError | undefined;

  constructor(private readonly path: string) {
    try {
      this.fd = openSync(path, constants.O_RDWR | constants.O_CREAT | constants.O_EXCL | constants.O_NOFOLLOW, 0o600);
    } catch (e) {
      throw spillFailed(e, path);
    }
  }

  /**
   * Written in place (tried: copies written by the thread pool while the loop reads on took as long
   * on two cores, 1.2-1.4 against 1.2-1.4 s on 1 GB, and held 30 MB more).
   */
  write(chunk: Uint8Array): void {
    if (this.failed !== undefined) throw this.failed;
    this.writeNow(chunk);
  }

  writeNow(chunk: Uint8Array): void {
    const fd = this.fd;
    if (fd === undefined) throw this.failed ?? new BudgetError('CONTINUATION_SPILL_FAILED', 'The spill file was already released.', {});
    const at = this.size;
    this.size += chunk.length;
    try {
      let off = 0;
      while (off < chunk.length) off += writeSync(fd, chunk, off, chunk.length - off, at + off);
    } catch (e) {
      throw this.fail(spillFailed(e, this.path));
    }
  }

  /** Release the file and give the failure to throw. */
  private fail(e: BudgetError): BudgetError {
    this.failed = e;
    this.release();
    return e;
  }

  finish(): Promise<HeldBytes> {
    return this.failed !== undefined ? Promise.reject(this.failed) : Promise.resolve(this);
  }

  finishNow(): HeldBytes {
    if (this.failed !== undefined) throw this.failed;
    return this;
  }

  abort(): void {
    this.release();
  }

  read(offset: number, length: number, into?: Buffer): Promise<Buffer> {
    const fd = this.fd;
    if (fd === undefined) return Promise.reject(gone());
    const n = Math.max(0, Math.min(length, this.size - offset));
    const buf = into !== undefined && into.length >= n ? into.subarray(0, n) : Buffer.allocUnsafe(n);
    // The descriptor stays open while a read is in flight: closed under it, its number could be
    // reused by the next spill file opened, and the read would return that file's bytes.
    this.reading++;
    return new Promise<Buffer>((resolve, reject) => {
      let got = 0;
      const more = (): void => {
        if (got === n) return resolve(buf);
        if (this.fd === undefined) return reject(gone());
        readFd(fd, buf, got, n - got, offset + got, (e, k) => {
          if (e) return reject(spillFailed(e, this.path));
          if (k === 0) return reject(new BudgetError('CONTINUATION_SPILL_FAILED', 'The spill file is shorter than what was written to it: it was changed outside this process. Call the original tool again.', {}));
          got += k;
          more();
        });
      };
      more();
    }).finally(() => {
      if (--this.reading === 0 && this.fd === undefined && this.closing !== undefined) this.close();
    });
  }

  release(): void {
    if (this.fd === undefined) return;
    this.closing = this.fd;
    this.fd = undefined;
    try {
      rmSync(this.path, { force: true });
    } catch {
      // The directory is removed at exit anyway.
    }
    if (this.reading === 0) this.close();
  }

  private close(): void {
    const fd = this.closing!;
    this.closing = undefined;
    closeSync(fd);
  }
}

function gone(): BudgetError {
  return new BudgetError('CONTINUATION_EVICTED', 'The original was let go while it was being read. Call the original tool again.', {});
}

function spillFailed(e: unknown, path: string): BudgetError {
  const code = (e as NodeJS.ErrnoException)?.code;
  const why =
    code === 'ENOSPC' || code === 'EDQUOT'
      ? 'the disk holding the spill directory is full'
      : code === 'ENOENT'
        ? 'the spill directory was removed'
        : `writing the spill file failed (${String(code ?? (e as Error)?.message ?? e)})`;
  return new BudgetError('CONTINUATION_SPILL_FAILED', `The original of this result could not be kept for its continuation: ${why}. Free space in ${dirOf(path)} (or set --continuation-dir, or --continuation-memory), or call the tool again asking for less.`, { code });
}

function dirOf(path: string): string {
  return path.slice(0, path.lastIndexOf('/'));
}

const PREFIX = 'mcp-budget-spill-';

/** One process's private spill directory, made on first use. */
export class SpillDirectory {
  private dir: string | undefined;

  constructor(readonly base: string = tmpdir()) {}

  /** A new spill file in the directory. */
  writer(): SpillWriter {
    return new SpillFile(join(this.path(), randomBytes(12).toString('base64url')));
  }

  /** The directory (made on first use, stale ones of this user swept first; made again if it was removed). */
  path(): string {
    if (this.dir !== undefined && existsSync(this.dir)) return this.dir;
    removeStaleDirs(this.base, /^mcp-budget-spill-(\d+)-[A-Za-z0-9]{6}$/);
    try {
      this.dir = mkdtempSync(join(this.base, `${PREFIX}${process.pid}-`));
    } catch (e) {
      throw spillFailed(e, join(this.base, 'x'));
    }
    const dir = this.dir;
    process.once('exit', () => rmSync(dir, { recursive: true, force: true }));
    return dir;
  }

  /** Remove the directory now (tests; the process does it at exit). */
  remove(): void {
    if (this.dir !== undefined) rmSync(this.dir, { recursive: true, force: true });
    this.dir = undefined;
  }
}
