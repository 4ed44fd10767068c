/**
 * The tokenizer's kept tokens: strings decoded (escapes, UTF-8 checked, control characters
 * refused) and passed on in chunks, keys collected whole (capped), numbers checked against the
 * grammar and their length cap, literals spelled out. A cut string's rest goes to the skipper.
 */
import { isUtf8 } from 'node:buffer';
import { hexValue, isJsonNumber, MAX_NUMBER_BYTES, utf8SequenceLength } from './json-bytes.js';
import { MAX_KEY_UNITS } from './limits.js';
import { newSkipState } from './skip-scan.js';
import { S } from './tokenizer-state.js';
import { TokenizerSkip } from './tokenizer-skip.js';

/** Input bytes of a kept string decoded at most before its content is passed on. */
const STRING_PIECE_BYTES = 16 * 1024;
/** A string's first bytes read by the byte loop (where most strings end). */
const SHORT_STRING_BYTES = 256;

/**
 * Perf: the content of a string from `from` (between two characters) decoded natively, up to its
 * closing quote or about `to`: one UTF-8 check and one `JSON.parse` instead of a loop over the
 * bytes and a `toString` per run between escapes (a 16 KiB piece took 6 ms while the loop still
 * ran interpreted, and the first long line's start is read so). Undefined when the piece is short
 * or holds anything the byte loop must report (bad UTF-8, escape or control character: exact
 * offsets) or carry; `JSON.parse` refuses what the loop refuses.
 */
function decodeLong(buf: Buffer, from: number, to: number): { text: string; end: number; closes: boolean } | undefined {
  if (to - from < SHORT_STRING_BYTES) return undefined;
  const view = buf.subarray(from, to);
  let q = view.indexOf(0x22);
  while (q !== -1 && escapedAt(view, q)) q = view.indexOf(0x22, q + 1);
  const end = q !== -1 ? from + q : wholeEnd(buf, from, to);
  if (end - from < SHORT_STRING_BYTES) return undefined;
  const raw = buf.subarray(from, end);
  if (!isUtf8(raw)) return undefined;
  try {
    return { text: JSON.parse(`"${raw.toString('utf8')}"`) as string, end, closes: q !== -1 };
  } catch {
    return undefined;
  }
}

/** The quote at `q` is escaped: an odd run of backslashes before it. */
function escapedAt(view: Buffer, q: number): boolean {
  let k = q - 1;
  while (k >= 0 && view[k] === 0x5c) k--;
  return (q - 1 - k) % 2 === 1;
}

/** `to`, or the start of the UTF-8 sequence or escape that it would cut. */
function wholeEnd(buf: Buffer, from: number, to: number): number {
  let end = to;
  for (let k = 0; k < 3 && end > from && end < buf.length && (buf[end]! & 0xc0) === 0x80; k++) end--;
  for (let k = end - 1; k >= Math.max(from, end - 5); k--) {
    if (buf[k] !== 0x5c) continue;
    let run = 1;
    while (k - run >= from && buf[k - run] === 0x5c) run++;
    // The last backslash starts an escape when its run is odd: `\uXXXX` takes 6 bytes, others 2.
    if (run % 2 === 1 && k + (buf[k + 1] === 0x75 ? 6 : 2) > end) end = k;
    break;
  }
  return end;
}

export abstract class TokenizerTokens extends TokenizerSkip {
  /** Returns the index after the string, or -(index+1) of an unfinished sequence to carry. */
  protected scanString(buf: Buffer, start: number): number {
    const n = buf.length;
    let i = start;
    let runStart = i;
    let out = '';
    const flushRun = (to: number): void => {
      if (to > runStart) out += buf.toString('utf8', runStart, to);
    };
    // Perf: content goes on every STRING_PIECE_BYTES of input, so that a string the consumer cuts
    // is not decoded to the end of a large buffer first (a 256 KiB piece cost 10 ms cold). The byte
    // loop reads a string's first SHORT_STRING_BYTES (most strings end there); past them a piece is
    // decoded natively when nothing in it is to be reported or carried (`decodeLong`).
    let pieceEnd = Math.min(n, start + STRING_PIECE_BYTES);
    let stop = Math.min(pieceEnd, start + SHORT_STRING_BYTES);
    for (;;) {
      while (i < stop) {
        const c = buf[i]!;
        if (c === 0x22) {
          flushRun(i);
          this.emitString(out, i);
          this.pos = i;
          this.endString();
          return i + 1;
        }
        if (c === 0x5c) {
          flushRun(i);
          if (i + 1 >= n) return this.carryFrom(out, i);
          const e = buf[i + 1]!;
          let ch: number;
          let len = 2;
          switch (e) {
            case 0x22: ch = 0x22; break;
            case 0x5c: ch = 0x5c; break;
            case 0x2f: ch = 0x2f; break;
            case 0x62: ch = 0x08; break;
            case 0x66: ch = 0x0c; break;
            case 0x6e: ch = 0x0a; break;
            case 0x72: ch = 0x0d; break;
            case 0x74: ch = 0x09; break;
            case 0x75: {
              if (i + 6 > n) return this.carryFrom(out, i);
              ch = 0;
              for (let k = i + 2; k < i + 6; k++) {
                const h = hexValue(buf[k]!);
                if (h < 0) this.fail('invalid \\u escape', k);
                ch = ch * 16 + h;
              }
              len = 6;
              break;
            }
            default:
              return this.fail(`invalid escape \\${String.fromCharCode(e)}`, i);
          }
          out += String.fromCharCode(ch);
          i += len;
          runStart = i;
          continue;
        }
        if (c < 0x20) this.fail('unescaped control character in a string', i);
        if (c >= 0x80) {
          const len = utf8SequenceLength(buf, i, n);
          if (len === 0) {
            flushRun(i);
            return this.carryFrom(out, i);
          }
          if (len < 0) this.fail('invalid UTF-8 in a string', i);
          i += len;
          continue;
        }
        i++;
      }
      if (i >= n) break;
      flushRun(i);
      runStart = i;
      if (i >= pieceEnd) {
        // A whole piece read inside the string (`i` is between two characters): pass it on.
        this.emitString(out, i);
        if (!this.wanted) {
          this.skipRestOfString();
          return i;
        }
        out = '';
        pieceEnd = Math.min(n, i + STRING_PIECE_BYTES);
      }
      const long = decodeLong(buf, i, pieceEnd);
      if (long === undefined) {
        stop = pieceEnd; // the byte loop reads this piece: what it must report or carry, exactly
        continue;
      }
      out += long.text;
      i = runStart = long.end;
      if (long.closes) {
        this.emitString(out, i);
        this.pos = i;
        this.endString();
        return i + 1;
      }
      stop = i; // the piece's end, or a sequence it would cut: read on from there
    }
    flushRun(n);
    this.emitString(out, n);
    if (!this.wanted) this.skipRestOfString();
    return n;
  }

  private carryFrom(out: string, at: number): number {
    this.emitString(out, at);
    if (!this.wanted) {
      // Cut: the unfinished sequence is skipped with the rest, not carried.
      this.skipRestOfString();
      return at;
    }
    return -(at + 1);
  }

  private skipRestOfString(): void {
    this.state = S.Skip;
    this.skip = newSkipState(false, true);
    this.skipStringEnd = true;
  }

  /** Pass decoded string content on (or collect a key). Sets `wanted` false once cut. */
  private emitString(piece: string, at: number): void {
    if (piece.length === 0) return;
    if (this.inKey) {
      if (this.keyUnits < MAX_KEY_UNITS) {
        const room = MAX_KEY_UNITS + 1 - this.keyUnits;
        const p = piece.length > room ? piece.slice(0, room) : piece;
        this.keyParts.push(p);
        this.keyUnits += p.length;
      }
      return;
    }
    if (!this.wanted) return;
    this.pos = at;
    if (!this.events.stringChunk(piece)) this.wanted = false;
  }

  private endString(): void {
    if (this.inKey) {
      this.inKey = false;
      const name = this.keyParts.length === 1 ? this.keyParts[0]! : this.keyParts.join('');
      this.keyParts = [];
      this.state = S.Colon;
      if (!this.events.key(name)) this.pendingSkipValue = true;
      return;
    }
    this.events.stringEnd();
    this.state = this.afterValue();
  }

  protected scanNumber(buf: Buffer, start: number): number {
    const n = buf.length;
    let i = start;
    while (i < n) {
      const c = buf[i]!;
      if ((c >= 0x30 && c <= 0x39) || c === 0x2d || c === 0x2b || c === 0x2e || c === 0x65 || c === 0x45) {
        i++;
        continue;
      }
      break;
    }
    this.tokenText += buf.toString('latin1', start, i);
    if (this.tokenText.length > MAX_NUMBER_BYTES) this.fail(`number longer than ${MAX_NUMBER_BYTES} bytes`, this.numberStart - this.base);
    if (i < n) {
      this.pos = i;
      this.finishNumber();
    }
    return i;
  }

  protected finishNumber(): void {
    const raw = this.tokenText;
    if (!isJsonNumber(raw)) this.fail(`invalid number ${JSON.stringify(raw.slice(0, 40))}`, this.numberStart - this.base);
    this.tokenText = '';
    if (this.silent) this.silent = false;
    else this.events.scalar(raw);
    this.state = this.afterValue();
  }

  protected scanLiteral(buf: Buffer, start: number): number {
    const want = this.literal;
    let i = start;
    while (i < buf.length && this.tokenText.length < want.length) {
      const c = buf[i]!;
      if (c !== want.charCodeAt(this.tokenText.length)) this.fail(`invalid literal (expected ${want})`, i);
      this.tokenText += String.fromCharCode(c);
      i++;
    }
    if (this.tokenText.length === want.length) {
      this.pos = i;
      this.tokenText = '';
      if (this.silent) this.silent = false;
      else this.events.scalar(want);
      this.state = this.afterValue();
    }
    return i;
  }
}
