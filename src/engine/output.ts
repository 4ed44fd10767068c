/**
 * The bounded output: a list of chunks with a running byte count, marks to roll back to, and
 * holes (slots) filled at the end with what is only known then (the report, the notice, a rebuilt
 * text mirror). Chunks before the first open mark or hole can be handed to a sink early; the rest
 * is bounded by `maxResultBytes`, so holding it is cheap.
 */

/** Receives bounded output in order. */
export type ChunkSink = (chunk: string) => void;

/** A pinned chunk index; compared by identity, since a mark and a hole may share an index. */
interface Pin {
  readonly index: number;
}

/** A position to roll back to. */
export interface Mark {
  readonly index: number;
  readonly bytes: number;
  /** The pin this mark holds. */
  readonly pin: Pin;
}

/** Flush to the sink once this many UTF-16 units are ready (keeps sink calls coarse). */
const FLUSH_UNITS = 16 * 1024;

export class Output {
  private chunks: string[] = [];
  /** Chunks before this index were handed to the sink. */
  private flushed = 0;
  /** Units ready to flush but not yet flushed. */
  private pendingUnits = 0;
  /** Indexes that may still change: open marks and unfilled holes, in the order they were taken. */
  private pins: Pin[] = [];
  /** UTF-8 bytes written so far (holes count as empty until filled). */
  bytes = 0;

  constructor(private readonly sink?: ChunkSink) {}

  /** Number of chunks written; an index for {@link replaceRange}. */
  get length(): number {
    return this.chunks.length;
  }

  write(chunk: string, bytes: number): void {
    this.chunks.push(chunk);
    this.bytes += bytes;
    if (this.sink !== undefined) {
      this.pendingUnits += chunk.length;
      if (this.pendingUnits >= FLUSH_UNITS) this.flush(false);
    }
  }

  /** Remember this position; pins it until {@link rollback} or {@link release}. */
  mark(): Mark {
    const pin = { index: this.chunks.length };
    this.pins.push(pin);
    return { index: pin.index, bytes: this.bytes, pin };
  }

  /** Drop everything written since `m` and unpin it. */
  rollback(m: Mark): void {
    this.chunks.length = m.index;
    this.bytes = m.bytes;
    // Every pin taken after the mark (inner marks, holes, even one at the mark's own index) is gone
    // with its chunks; pins taken before it stay.
    const at = this.pins.indexOf(m.pin);
    if (at !== -1) this.pins.length = at;
  }

  /** Keep what was written since `m`; unpin it. */
  release(m: Mark): void {
    const at = this.pins.indexOf(m.pin);
    if (at !== -1) this.pins.splice(at, 1);
  }

  /** Open a hole at the current position; returns its index for {@link fill}. */
  hole(): number {
    const index = this.chunks.length;
    this.chunks.push('');
    this.pins.push({ index });
    return index;
  }

  /** Fill (or leave empty) a hole and unpin it. */
  fill(index: number, chunk: string, bytes: number): void {
    this.chunks[index] = chunk;
    this.bytes += bytes;
    this.unpin(index);
  }

  /** Concatenate chunks `[from, to)`; used to read back a region before the end. */
  read(from: number, to: number): string {
    return this.chunks.slice(from, to).join('');
  }

  /** Replace chunks `[from, to)` by one chunk; the caller settles the byte count. */
  replaceRange(from: number, to: number, chunk: string, bytesDelta: number): void {
    this.chunks[from] = chunk;
    for (let i = from + 1; i < to; i++) this.chunks[i] = '';
    this.bytes += bytesDelta;
  }

  /** Hand every chunk that can no longer change to the sink; with `all`, everything. */
  flush(all: boolean): void {
    if (this.sink === undefined) return;
    const limit = all ? this.chunks.length : Math.min(this.chunks.length, this.firstPin());
    for (let i = this.flushed; i < limit; i++) {
      const c = this.chunks[i]!;
      if (c.length > 0) this.sink(c);
      this.chunks[i] = '';
    }
    if (limit > this.flushed) this.flushed = limit;
    this.pendingUnits = 0;
  }

  /** The whole output as one string (only without a sink). */
  toString(): string {
    return this.chunks.join('');
  }

  private firstPin(): number {
    let min = Infinity;
    for (const p of this.pins) if (p.index < min) min = p.index;
    return min;
  }

  private unpin(index: number): void {
    for (let i = this.pins.length - 1; i >= 0; i--) {
      if (this.pins[i]!.index === index) {
        this.pins.splice(i, 1);
        return;
      }
    }
  }
}
