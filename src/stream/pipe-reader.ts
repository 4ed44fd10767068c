/**
 * A pipe or socket read on the event loop into one reused buffer: `apply`'s stdin and the proxy's
 * server stdout read the same way. Perf: a Node stream allocates a fresh 64 KiB buffer per read and
 * V8 frees their memory only when a collection runs, and it runs its stream machinery and a
 * `'data'` event per read; on 1 GB that was about 60 us a read. Reading through the socket's
 * `onread` allocates nothing and calls back directly; each read lands in `out` after the bytes
 * already gathered (Node asks for the buffer of every next read), so that the consumer, whose own
 * cost is per call, is called as few times as a file's reader calls it, and nothing is copied.
 *
 * When the gathered bytes go on: `full` hands them on only when `out` cannot take another read (or
 * at the end): for one document read to its end. `lines` also hands them on at once when a read
 * that emptied the socket (shorter than the buffer) ends with a newline, and otherwise once the
 * reads ready in this turn of the event loop are done (a `setImmediate`): for newline-delimited
 * messages, which must not wait for bytes that may never come, and whose answer should not wait a
 * turn either.
 *
 * Backpressure: a piece stays valid while the consumer keeps the reader paused, so a consumer that
 * pauses in `piece` may hold it until it resumes; otherwise only during the call. While paused the
 * reader reads nothing, and a piece gathered meanwhile waits for `resume`.
 */
import { Socket, type SocketConstructorOpts } from 'node:net';
import type { Readable } from 'node:stream';

/** Bytes one read of a pipe returns at most (a pipe holds 64 KiB). */
export const PIPE_READ_BYTES = 64 * 1024;

const NEWLINE = 0x0a;

/** Bytes handed to the consumer at most at once. */
export const PIPE_PIECE_BYTES = 256 * 1024;

export interface PipeHandlers {
  /** Bytes read, in order; see the module comment for how long they stay valid. */
  piece(bytes: Buffer): void;
  /** The writer closed; every byte was handed on before. */
  end(): void;
  error(e: Error): void;
}

export interface PipeReader {
  pause(): void;
  resume(): void;
  /** Stop reading and release the descriptor (no more calls). */
  destroy(): void;
}

export interface PipeReaderOptions {
  flush: 'full' | 'lines';
  /** Where pieces are gathered (its length is the largest piece). @default 256 KiB */
  out?: Buffer;
}

type OnRead = { buffer: Uint8Array | (() => Uint8Array); callback: (n: number, piece: Uint8Array) => boolean };

/**
 * Read `source`: a descriptor (a pipe or socket, such as stdin), or a stream Node opened over a pipe
 * or socket (a child's stdout). Such a stream is taken over: its handle is read by this reader from
 * now on, and the stream itself is left inert. A stream without such a handle is read through its
 * `'data'` events instead (same calls, one per chunk).
 */
export function readPipe(source: number | Readable, handlers: PipeHandlers, opts: PipeReaderOptions): PipeReader {
  const handle = typeof source === 'number' ? undefined : pipeHandle(source);
  if (typeof source !== 'number' && handle === undefined) return readStream(source, handlers);
  return new GatheringReader(source, handle, handlers, opts);
}

class GatheringReader implements PipeReader {
  private readonly out: Buffer;
  private filled = 0;
  private paused = false;
  /** A piece was handed on and the consumer paused in it: `out` is lent until resume. */
  private lent = false;
  /** Bytes read while `out` was lent (only when something restarts reading against our pause). */
  private spill: Buffer[] = [];
  /** Where a read goes when it cannot go straight into `out`. */
  private readonly spare = Buffer.allocUnsafe(PIPE_READ_BYTES);
  private ended = false;
  private endSent = false;
  private destroyed = false;
  private scheduled: NodeJS.Immediate | undefined;
  private readonly socket: Socket;

  constructor(
    source: number | Readable,
    handle: object | undefined,
    private readonly h: PipeHandlers,
    private readonly opts: PipeReaderOptions,
  ) {
    // `out` must take at least two reads (a smaller one is not used).
    this.out = opts.out !== undefined && opts.out.length >= 2 * PIPE_READ_BYTES ? opts.out : Buffer.allocUnsafe(PIPE_PIECE_BYTES);
    // A function as `buffer`: Node asks it for the buffer of every next read, so reads land in `out`.
    const onread: OnRead = { buffer: () => this.target(), callback: (n, piece) => this.read(n, piece) };
    // `onread` is taken by the constructor as by `connect` (Node 12+); the types declare it on
    // `connect` only, and `handle` (a stream's own handle) not at all.
    const options: SocketConstructorOpts & { onread: OnRead; handle?: object } =
      typeof source === 'number' ? { fd: source, readable: true, writable: false, onread } : { handle, readable: true, writable: false, onread };
    if (typeof source !== 'number') {
      // The stream Node made must not read the handle, close it, or restart it against a pause.
      (source as unknown as { _handle: unknown })._handle = null;
      source.destroy();
    }
    this.socket = new Socket(options);
    this.socket.on('end', () => {
      this.ended = true;
      this.flush();
    });
    this.socket.on('error', (e: Error) => {
      if (this.destroyed) return;
      this.destroy();
      this.h.error(e);
    });
  }

  /** The buffer of the next read: `out` after what is gathered, or the spare one while `out` is lent or nearly full. */
  private target(): Buffer {
    if (this.lent || this.spill.length > 0 || this.out.length - this.filled < PIPE_READ_BYTES) return this.spare;
    return this.out.subarray(this.filled);
  }

  private read(n: number, piece: Uint8Array): boolean {
    const bytes = piece.subarray(0, n);
    if (this.lent || this.spill.length > 0 || this.filled + n > this.out.length) {
      this.spill.push(Buffer.from(bytes)); // kept in order behind what is waiting
      return !this.paused;
    }
    // Copied only when it went to the spare buffer, or `out` was handed on since the read was aimed.
    if (piece.buffer !== this.out.buffer || piece.byteOffset !== this.out.byteOffset + this.filled) this.out.set(bytes, this.filled);
    this.filled += n;
    if (this.out.length - this.filled < PIPE_READ_BYTES) this.flush();
    else if (this.opts.flush === 'lines') {
      if (n < piece.length && piece[n - 1] === NEWLINE) this.flush();
      else this.scheduled ??= setImmediate(() => this.flush());
    }
    return !this.paused && !this.destroyed;
  }

  /** Hand on what is gathered (and the end once everything went), unless paused. */
  private flush(): void {
    if (this.scheduled !== undefined) {
      clearImmediate(this.scheduled);
      this.scheduled = undefined;
    }
    while (!this.paused && !this.destroyed) {
      if (this.filled > 0) {
        const n = this.filled;
        this.filled = 0;
        this.lent = true;
        this.h.piece(this.out.subarray(0, n));
        if (this.paused) return; // lent until resume
        this.lent = false;
      }
      if (this.spill.length > 0) {
        // A copy of its own: valid for as long as the consumer keeps it.
        this.h.piece(this.spill.shift()!);
        if (this.paused) return;
        continue;
      }
      if (this.ended && !this.endSent) {
        this.endSent = true;
        this.h.end();
        this.destroy();
      }
      return;
    }
  }

  pause(): void {
    if (this.paused || this.destroyed) return;
    this.paused = true;
    this.socket.pause();
  }

  resume(): void {
    if (!this.paused || this.destroyed) return;
    this.paused = false;
    this.lent = false;
    this.socket.resume();
    // What was gathered meanwhile goes on in a later turn (never inside the consumer's call).
    if (this.filled > 0 || this.spill.length > 0 || this.ended) this.scheduled ??= setImmediate(() => this.flush());
  }

  destroy(): void {
    if (this.destroyed) return;
    this.destroyed = true;
    if (this.scheduled !== undefined) clearImmediate(this.scheduled);
    this.socket.destroy();
  }
}

/** A stream Node opened over a pipe or socket handle that `onread` can read, if it is one. */
function pipeHandle(stream: Readable): object | undefined {
  // Bytes the stream already holds would be lost to a reader of its handle.
  if (!(stream instanceof Socket) || stream.readableLength > 0) return undefined;
  const handle = (stream as unknown as { _handle?: { readStart?: unknown; useUserBuffer?: unknown } | null })._handle;
  if (handle === null || handle === undefined) return undefined;
  if (typeof handle.readStart !== 'function' || typeof handle.useUserBuffer !== 'function') return undefined;
  return handle;
}

/** The fallback: a stream's own chunks, one call each. */
function readStream(stream: Readable, h: PipeHandlers): PipeReader {
  stream.on('data', (chunk: Buffer) => h.piece(chunk));
  stream.on('end', () => h.end());
  stream.on('error', (e: Error) => h.error(e));
  return {
    pause: () => void stream.pause(),
    resume: () => void stream.resume(),
    destroy: () => void stream.destroy(),
  };
}
