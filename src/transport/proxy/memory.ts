/**
 * Keeping RSS flat while large data streams through. Perf: every socket read allocates a fresh
 * 64 KiB buffer, and V8 returns their memory only when a collection runs; by default that lets
 * ~50 MB of dead buffers pile up while a 1 GB line streams. A minor collection every few MiB of
 * streamed bytes frees them at a cost of well under a millisecond each.
 */
import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';

type Gc = (options?: { type?: 'minor' | 'major' }) => void;

let gc: Gc | undefined | null = null;

function getGc(): Gc | undefined {
  if (gc === null) {
    try {
      setFlagsFromString('--expose-gc');
      gc = runInNewContext('gc') as Gc;
    } catch {
      gc = undefined;
    }
  }
  return gc;
}

/** Counts streamed bytes and runs a minor collection every `everyBytes`. */
export class StreamedBytesCollector {
  private since = 0;

  constructor(private readonly everyBytes = 8 * 1024 * 1024) {}

  add(n: number): void {
    this.since += n;
    if (this.since < this.everyBytes) return;
    this.since = 0;
    getGc()?.({ type: 'minor' });
  }
}
