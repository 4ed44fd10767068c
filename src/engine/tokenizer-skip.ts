/**
 * The tokenizer's skipping: a value the consumer omitted, the rest of a cut string, or the tail of
 * a closed container is handed to the skip scanner, which builds nothing; the skipped bytes are
 * still checked for valid UTF-8, natively, once per buffer region.
 */
import { isUtf8 } from 'node:buffer';
import { describeByte, firstInvalidUtf8 } from './json-bytes.js';
import { SKIP_MORE, newSkipState } from './skip-scan.js';
import { scanSkipBest } from './skip-scan-wasm.js';
import { S, TokenizerState } from './tokenizer-state.js';

/** The skip scanner in use (a faster implementation may replace the reference one). */
const scanSkip = scanSkipBest;

export abstract class TokenizerSkip extends TokenizerState {
  /** Skip the value (a container) that starts at `i`. */
  protected beginSkip(i: number): number {
    this.skip = newSkipState(false, false);
    this.state = S.Skip;
    return i;
  }

  /** Count the rest of the innermost (closed) container without tokenizing it. */
  protected startBulk(): void {
    this.skip = newSkipState(true, false);
    this.state = S.Bulk;
  }

  /**
   * Skip a value (Skip) or count the rest of a closed container (Bulk) with the skip scanner;
   * UTF-8 of the skipped bytes is validated once per buffer region, natively.
   */
  protected scanSkip(buf: Buffer, start: number): number {
    const st = this.skip;
    const r = scanSkip(buf, start, st);
    if (r === SKIP_MORE) {
      this.checkSkippedUtf8(buf, start, buf.length, true);
      return buf.length;
    }
    if (r < -1) this.fail(`unexpected ${describeByte(buf[-r - 2]!)}`, -r - 2);
    this.checkSkippedUtf8(buf, start, r, false);
    if (st.bulk) {
      const c = buf[r]!;
      const array = this.stack[this.stack.length - 1]!;
      if ((c === 0x5d) !== array) this.fail(`unexpected ${describeByte(c)}`, r);
      this.pos = r;
      this.events.omitRest?.(st.commas + (st.sawValue ? 1 : 0));
      return this.closeContainer(r, array);
    }
    if (this.skipStringEnd) {
      // A kept string that was cut: its end is still an event (at its closing quote).
      this.skipStringEnd = false;
      this.pos = r - 1;
      this.events.stringEnd();
    }
    this.pos = r;
    this.finishSkip();
    return r;
  }

  private finishSkip(): void {
    this.state = this.afterValue();
  }

  /** Validate skipped bytes `[from, to)` as UTF-8 (native), carrying an incomplete tail when `open`. */
  private checkSkippedUtf8(buf: Buffer, from: number, to: number, open: boolean): void {
    let start = from;
    if (this.utfTail !== undefined) {
      // Complete the sequence carried from the last buffer with just the bytes it needs.
      // Perf: joining the tail with the whole region would copy every buffer of multi-byte text.
      const tail = this.utfTail;
      this.utfTail = undefined;
      const need = (tail[0]! >= 0xf0 ? 4 : tail[0]! >= 0xe0 ? 3 : 2) - tail.length;
      const have = Math.min(need, to - from);
      const seq = new Uint8Array(tail.length + have);
      seq.set(tail, 0);
      seq.set(buf.subarray(from, from + have), tail.length);
      if (have < need) {
        if (open) this.utfTail = seq;
        else this.fail('invalid UTF-8', from - tail.length);
        return;
      }
      if (!isUtf8(seq)) this.fail('invalid UTF-8', from - tail.length);
      start = from + have;
    }
    let end = to;
    if (open) {
      // Leave an incomplete trailing sequence for the next buffer.
      let k = end - 1;
      let back = 0;
      while (k >= start && back < 3 && (buf[k]! & 0xc0) === 0x80) {
        k--;
        back++;
      }
      if (k >= start && buf[k]! >= 0xc0) {
        const need = buf[k]! >= 0xf0 ? 4 : buf[k]! >= 0xe0 ? 3 : 2;
        if (end - k < need) {
          this.utfTail = new Uint8Array(buf.subarray(k, end));
          end = k;
        }
      }
    }
    if (end > start && !isUtf8(buf.subarray(start, end))) {
      this.fail('invalid UTF-8', start + firstInvalidUtf8(buf.subarray(start, end)));
    }
  }
}
