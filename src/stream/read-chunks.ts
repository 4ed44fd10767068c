/**
 * Read a file or a file descriptor into one reused buffer. Perf: a stream allocates a new Buffer
 * per chunk and their memory is returned lazily (external memory pressure), which put a plain
 * 1 GB read at ~85 MB RSS; one reused 256 KiB buffer keeps it near 50 MB. Consumers must not
 * retain a chunk after the next one is requested (the byte source copies what it keeps).
 *
 * A pipe or socket is read through the shared pipe reader (`pipe-reader.ts`), on the event loop.
 *
 * Perf: a regular file is read synchronously, yielding to the event loop every few MiB so that
 * signals and aborts are still seen. Measured on 1 GB from the page cache (2 shared cores): a
 * synchronous read loop took 140 ms against 200 ms for awaited reads, and with 80 us of work per
 * chunk 515-590 ms against 630-650 ms; a read started ahead on the thread pool (to overlap reading
 * and scanning) did not overlap there (625-665 ms).
 */
import { fstatSync, read, readSync } from 'node:fs';
import { open, type FileHandle } from 'node:fs/promises';
import { readPipe, type PipeReader } from './pipe-reader.js';

export const READ_CHUNK_BYTES = 256 * 1024;

/** Chunks read between two turns of the event loop when a file is read synchronously (4 MiB). */
const CHUNKS_PER_TURN = 16;

/** Chunks of a file (by path) or of an already open descriptor such as 0 for stdin. */
export async function* readChunks(source: string | number, chunkBytes = READ_CHUNK_BYTES): AsyncGenerator<Buffer> {
  const buf = Buffer.allocUnsafe(chunkBytes);
  if (typeof source === 'string') {
    const fh: FileHandle = await open(source, 'r');
    try {
      const regular = (await fh.stat()).isFile();
      for (let i = 1; ; i++) {
        // A FIFO or a device may block: those are awaited like any descriptor.
        const bytesRead = regular ? readSync(fh.fd, buf, 0, buf.length, null) : (await fh.read(buf, 0, buf.length, null)).bytesRead;
        if (bytesRead === 0) return;
        yield buf.subarray(0, bytesRead);
        if (regular && i % CHUNKS_PER_TURN === 0) await new Promise<void>((resolve) => setImmediate(resolve));
      }
    } finally {
      await fh.close();
    }
  }
  const st = fstatSync(source);
  if (st.isFIFO() || st.isSocket()) {
    yield* pipeChunks(source, buf);
    return;
  }
  for (;;) {
    const n = await readFd(source, buf);
    if (n === 0) return;
    yield buf.subarray(0, n);
  }
}

/**
 * A pipe or socket as chunks: the shared pipe reader gathers reads into `out` and hands it on when
 * full or at the end (the generator pauses it while the consumer works on a chunk).
 */
async function* pipeChunks(fd: number, out: Buffer): AsyncGenerator<Buffer> {
  let piece: Buffer | undefined;
  let ended = false;
  let failure: Error | undefined;
  let wake: (() => void) | undefined;
  const reader: PipeReader = readPipe(
    fd,
    {
      piece: (bytes) => {
        piece = bytes;
        reader.pause(); // `out` is lent until the consumer asks for the next chunk
        wake?.();
      },
      end: () => {
        ended = true;
        wake?.();
      },
      error: (e) => {
        failure = e;
        wake?.();
      },
    },
    { flush: 'full', out },
  );
  try {
    for (;;) {
      if (piece !== undefined) {
        const p = piece;
        piece = undefined;
        yield p;
        reader.resume();
        continue;
      }
      if (failure !== undefined) throw failure;
      if (ended) return;
      await new Promise<void>((resolve) => (wake = resolve));
      wake = undefined;
    }
  } finally {
    reader.destroy();
  }
}

function readFd(fd: number, buf: Buffer): Promise<number> {
  return new Promise((resolve, reject) => {
    const attempt = (): void => {
      read(fd, buf, 0, buf.length, null, (err, n) => {
        // A non-blocking descriptor with nothing to read yet: try again shortly.
        if (err && (err as NodeJS.ErrnoException).code === 'EAGAIN') setTimeout(attempt, 1);
        else if (err) reject(err);
        else resolve(n);
      });
    };
    attempt();
  });
}
