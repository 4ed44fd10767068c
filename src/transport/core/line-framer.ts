/**
 * Newline-delimited framing that scans each byte once. A line's pieces are kept as a list with a
 * running length (never concatenated per chunk); a line is joined once, when it ends. A line that
 * grows past `maxLineBytes` either streams on (`long` handlers: its bytes are handed over as they
 * arrive and never held) or is refused (`overflow`: the rest of it is discarded unseen).
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
  };
}

const HEAD_BYTES = 512;
const TAIL_BYTES = 512;

export class LineFramer {
  private pieces: Buffer[] = [];
  private length = 0;
  private mode: 'line' | 'long' | 'discard' = 'line';
  /** The last bytes of a discarded line (to recover its id). */
  private tail: Buffer = Buffer.alloc(0);

  constructor(
    private readonly maxLineBytes: number,
    private readonly handlers: LineHandlers,
  ) {}

  push(chunk: Buffer): void {
    let from = 0;
    while (from < chunk.length) {
      const nl = chunk.indexOf(0x0a, from);
      const end = nl === -1 ? chunk.length : nl;
      if (end > from) this.take(chunk.subarray(from, end));
      if (nl === -1) return;
      this.finishLine();
      from = nl + 1;
    }
  }

  /** The stream ended: a last line without a newline still counts. */
  end(): void {
    if (this.length > 0 || this.mode !== 'line') this.finishLine();
  }

  private take(piece: Buffer): void {
    this.length += piece.length;
    switch (this.mode) {
      case 'line':
        // Copy: the caller may reuse its chunk buffer.
        this.pieces.push(Buffer.from(piece));
        if (this.length > this.maxLineBytes) this.overCap();
        return;
      case 'long':
        this.handlers.long!.chunk(piece);
        return;
      case 'discard':
        if (this.handlers.discarded !== undefined) {
          const keep = Buffer.concat([this.tail, piece.subarray(Math.max(0, piece.length - TAIL_BYTES))]);
          this.tail = keep.subarray(Math.max(0, keep.length - TAIL_BYTES));
        }
        return;
    }
  }

  private overCap(): void {
    const held = this.pieces;
    this.pieces = [];
    if (this.handlers.long !== undefined) {
      this.mode = 'long';
      this.handlers.long.start();
      for (const p of held) this.handlers.long.chunk(p);
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
