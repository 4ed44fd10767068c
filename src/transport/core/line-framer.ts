/**
 * Newline-delimited framing that scans each byte once. A line's pieces are kept as a list with a
 * running length (never concatenated per chunk); a line is joined once, when it ends. A line that
 * grows past `maxLineBytes` either streams on (`long` handlers: its bytes are handed over as they
 * arrive and never held) or is refused (`overflow`: the rest of it is discarded unseen).
 *
 * A long line's handler may ask for a pause (`long.yield`): its start, held until the cap, goes on
 * in slices of 16 KiB and `push` stops between two slices or pieces when asked, so that the
 * caller can give its event loop a turn (the first long line's start is where the byte budget
 * decides and replays its fit window, 20-70 ms in one call while its code is cold).
 */

export interface LineHandlers {
  /** A complete line (without its newline or a trailing CR) of at most `maxLineBytes`. */
  line(bytes: Buffer): void;
  /** Without `long`: a line went over the cap (`head`: its first bytes); the rest is discarded. */
  overflow?(bytesSoFar: number, head: Buffer): void;
  /** After an overflow, when the discarded line ends: its last bytes (up to 512). */
  discarded?(tail: Buffer): void;
  /** With `long`: a line went over the cap and streams from here on. */
  long?: {
    start(): void;
    chunk(bytes: Buffer): void;
    end(totalBytes: number): void;
    /** Asked before a long line's slice or piece is handed on: true pauses `push` there. */
    yield?(): boolean;
  };
}

/** Slices of a long line's held start handed on at a time, when pauses may be asked (16 KiB: about 6 ms cold). */
const LONG_SLICE_BYTES = 16 * 1024;

const HEAD_BYTES = 512;
const TAIL_BYTES = 512;

export class LineFramer {
  private pieces: Buffer[] = [];
  private length = 0;
  private mode: 'line' | 'long' | 'discard' = 'line';
  /** The last bytes of a discarded line (to recover its id). */
  private tail: Buffer = Buffer.alloc(0);
  /** A long line's held start not yet handed on (a pause came first). */
  private backlog: Buffer[] = [];
  private mayYield = true;

  constructor(
    private readonly maxLineBytes: number,
    private readonly handlers: LineHandlers,
  ) {}

  /**
   * Frame `chunk`; returns how many of its bytes were taken. Fewer than all, or a held start not
   * yet handed on ({@link pending}), only when `long.yield` asked for a pause: the caller then
   * pushes the rest (still valid) later, before anything else. `mayYield` false: no pause.
   */
  push(chunk: Buffer, mayYield = true): number {
    this.mayYield = mayYield;
    if (!this.handBacklog()) return 0;
    let from = 0;
    while (from < chunk.length) {
      const nl = chunk.indexOf(0x0a, from);
      const end = nl === -1 ? chunk.length : nl;
      if (end > from) {
        const took = this.take(chunk.subarray(from, end));
        if (from + took < end || this.backlog.length > 0) return from + took;
      }
      if (nl === -1) return chunk.length;
      this.finishLine();
      from = nl + 1;
    }
    return chunk.length;
  }

  /** A long line's held start waits to be handed on: push again (an empty chunk will do). */
  get pending(): boolean {
    return this.backlog.length > 0;
  }

  /** The stream ended: a last line without a newline still counts. */
  end(): void {
    this.mayYield = false;
    this.handBacklog();
    if (this.length > 0 || this.mode !== 'line') this.finishLine();
  }

  /** Bytes of `piece` taken. */
  private take(piece: Buffer): number {
    switch (this.mode) {
      case 'line':
        this.length += piece.length;
        // Copy: the caller may reuse its chunk buffer.
        this.pieces.push(Buffer.from(piece));
        if (this.length > this.maxLineBytes) this.overCap();
        return piece.length;
      case 'long': {
        if (this.mayYield && this.handlers.long!.yield?.() === true) return 0;
        this.handlers.long!.chunk(piece);
        this.length += piece.length;
        return piece.length;
      }
      case 'discard':
        this.length += piece.length;
        if (this.handlers.discarded !== undefined) {
          const keep = Buffer.concat([this.tail, piece.subarray(Math.max(0, piece.length - TAIL_BYTES))]);
          this.tail = keep.subarray(Math.max(0, keep.length - TAIL_BYTES));
        }
        return piece.length;
    }
  }

  /** Hand on the held start of a long line (in slices when pauses may be asked); false when a pause came first. */
  private handBacklog(): boolean {
    const h = this.handlers.long!;
    const slice = h?.yield === undefined ? Infinity : LONG_SLICE_BYTES;
    while (this.backlog.length > 0) {
      if (this.mayYield && h.yield?.() === true) return false;
      const p = this.backlog[0]!;
      if (p.length <= slice) {
        this.backlog.shift();
        h.chunk(p);
      } else {
        h.chunk(p.subarray(0, slice));
        this.backlog[0] = p.subarray(slice);
      }
    }
    return true;
  }

  private overCap(): void {
    const held = this.pieces;
    this.pieces = [];
    if (this.handlers.long !== undefined) {
      this.mode = 'long';
      this.handlers.long.start();
      this.backlog = held;
      this.handBacklog();
    } else {
      this.mode = 'discard';
      const joined = Buffer.concat(held);
      this.tail = joined.subarray(Math.max(0, joined.length - TAIL_BYTES));
      this.handlers.overflow?.(this.length, joined.subarray(0, HEAD_BYTES));
    }
  }

  private finishLine(): void {
    const mode = this.mode;
    const total = this.length;
    this.mode = 'line';
    this.length = 0;
    if (mode === 'long') {
      this.handlers.long!.end(total);
      return;
    }
    if (mode === 'discard') {
      const tail = this.tail;
      this.tail = Buffer.alloc(0);
      this.handlers.discarded?.(tail);
      return;
    }
    let line = this.pieces.length === 1 ? this.pieces[0]! : Buffer.concat(this.pieces, total);
    this.pieces = [];
    if (line.length > 0 && line[line.length - 1] === 0x0d) line = line.subarray(0, line.length - 1);
    if (line.length > 0) this.handlers.line(line);
  }
}
