/**
 * An incremental JSON tokenizer over bytes that drives a {@link JsonEvents} consumer and honours
 * its decisions (the contract and its ordering rules: events.ts): a value the consumer omits is skipped by a scanner that only tracks strings,
 * escapes and brackets (no events, no strings built), and a closed container's tail is counted
 * without being tokenized. Errors name the byte offset. Chunks may split anything anywhere.
 *
 * Kept values are fully validated (grammar, UTF-8, control characters). Skipped values are checked
 * for balanced brackets, terminated strings and valid UTF-8, not for full grammar: reading what
 * will be thrown away at memory speed is the point of skipping.
 */
import { isUtf8 } from 'node:buffer';
import { BudgetError } from './errors.js';
import type { JsonEvents } from './events.js';
import { MAX_KEY_UNITS } from './limits.js';
import { SKIP_MORE, newSkipState, type SkipState } from './skip-scan.js';
import { scanSkipBest } from './skip-scan-wasm.js';

/** The skip scanner in use (a faster implementation may replace the reference one). */
const scanSkip = scanSkipBest;

const enum S {
  Value, // expecting a value
  ValueOrEnd, // after '[': a value or ']'
  KeyOrEnd, // after '{': a key or '}'
  Key, // after ',' in an object
  Colon,
  After, // after a value: ',' or the container's end
  String, // inside a kept string (value or key)
  Number,
  Literal,
  Skip, // skipping a value (depth counter)
  Bulk, // counting the rest of a closed container
  Done,
}

/** A number token longer than this is rejected. */
export const MAX_NUMBER_BYTES = 4096;

function isWs(c: number): boolean {
  return c === 0x20 || c === 0x0a || c === 0x0d || c === 0x09;
}

const NUMBER_RE = /^-?(?:0|[1-9][0-9]*)(?:\.[0-9]+)?(?:[eE][+-]?[0-9]+)?$/;

export class Tokenizer {
  private state: S = S.Value;
  /** Container stack: true = array. */
  private stack: boolean[] = [];
  /** Bytes of input before the current buffer. */
  private base = 0;
  /** Unfinished bytes of a kept token carried into the next buffer. */
  private carry: Uint8Array | undefined;
  // kept string
  private inKey = false;
  private keyParts: string[] = [];
  private keyUnits = 0;
  private wanted = true; // consumer still wants chunks of this string
  // number / literal
  private tokenText = '';
  private literal = '';
  // skip scanner
  private skip: SkipState = newSkipState(false, false);
  /** UTF-8 validation of skipped string bytes: an incomplete sequence carried to the next buffer. */
  private utfTail: Uint8Array | undefined;
  /** Set when a cut string is being skipped: its end must still be reported. */
  private skipStringEnd = false;
  private rootSeen = false;
  /** Raw-byte tap (see setTap): receives every consumed byte from `tapFrom` on. */
  private tap: ((bytes: Uint8Array) => void) | undefined;
  private tapFrom = 0;
  private buf: Buffer = Buffer.alloc(0);
  /** Index in `buf` of the byte being handled when a consumer callback runs. */
  private pos = 0;

  constructor(private readonly events: JsonEvents) {}

  /** Bytes consumed so far. */
  get offset(): number {
    return this.base + this.pos;
  }

  /**
   * Start (with a function) or stop (with undefined) receiving raw input bytes from the current
   * position. Called from consumer callbacks: an open callback's position is the bracket itself,
   * a close callback's is just after it, `stringStart`'s is after the opening quote and
   * `stringEnd`'s is the closing quote.
   */
  setTap(fn: ((bytes: Uint8Array) => void) | undefined): void {
    if (this.tap !== undefined && this.pos > this.tapFrom) this.tap(this.buf.subarray(this.tapFrom, this.pos));
    this.tap = fn;
    this.tapFrom = this.pos;
  }

  private fail(message: string, at = this.pos): never {
    const offset = this.base + at;
    throw new BudgetError('INVALID_JSON', `Invalid JSON at byte offset ${offset}: ${message}`, { offset });
  }

  /** Feed the next piece of input. */
  write(chunk: Uint8Array): void {
    let buf = Buffer.isBuffer(chunk) ? chunk : Buffer.from(chunk.buffer, chunk.byteOffset, chunk.byteLength);
    if (this.carry !== undefined) {
      const joined = Buffer.allocUnsafe(this.carry.length + buf.length);
      joined.set(this.carry, 0);
      joined.set(buf, this.carry.length);
      this.base -= this.carry.length;
      this.carry = undefined;
      buf = joined;
    }
    this.buf = buf;
    this.tapFrom = 0;
    const end = this.run(buf);
    // `end` < length only when a kept token is unfinished: carry its bytes over.
    if (end < buf.length) this.carry = Buffer.from(buf.subarray(end)); // a copy: the caller may reuse `chunk`
    if (this.tap !== undefined && end > this.tapFrom) this.tap(buf.subarray(this.tapFrom, end));
    this.tapFrom = 0;
    this.base += buf.length;
    this.pos = 0;
  }

  /** The input ended: anything unfinished is a truncated document. */
  end(): void {
    this.pos = 0;
    this.buf = Buffer.alloc(0);
    if (this.carry !== undefined) this.fail('unexpected end of input inside a string', 0);
    if (this.state === S.Number) this.finishNumber();
    if (this.state !== S.Done) this.fail(this.rootSeen ? 'unexpected end of input (truncated document)' : 'empty input');
  }

  private afterValue(): S {
    return this.stack.length === 0 ? S.Done : S.After;
  }

  private run(buf: Buffer): number {
    const n = buf.length;
    let i = 0;
    const ev = this.events;
    while (i < n) {
      switch (this.state) {
        case S.Value:
        case S.ValueOrEnd: {
          const c = buf[i]!;
          if (isWs(c)) {
            i++;
            break;
          }
          this.pos = i;
          if (c === 0x5d && this.state === S.ValueOrEnd) {
            i = this.closeContainer(i, true);
            break;
          }
          if (this.stack.length === 0) {
            if (this.rootSeen) this.fail('unexpected data after the end of the document');
            this.rootSeen = true;
          }
          if (this.state === S.Value && this.stack.length > 0 && ev.canSkipRest === true && this.stack[this.stack.length - 1]) {
            this.startBulk();
            break;
          }
          i = this.startValue(buf, i, c);
          break;
        }
        case S.KeyOrEnd:
        case S.Key: {
          const c = buf[i]!;
          if (isWs(c)) {
            i++;
            break;
          }
          this.pos = i;
          if (c === 0x7d && this.state === S.KeyOrEnd) {
            i = this.closeContainer(i, false);
            break;
          }
          if (c !== 0x22) this.fail(`expected a key string, got ${describe(c)}`);
          if (this.state === S.Key && ev.canSkipRest === true) {
            this.startBulk();
            break;
          }
          this.inKey = true;
          this.wanted = true;
          this.keyParts = [];
          this.keyUnits = 0;
          this.state = S.String;
          i++;
          break;
        }
        case S.Colon: {
          const c = buf[i]!;
          if (isWs(c)) {
            i++;
            break;
          }
          if (c !== 0x3a) this.fail(`expected ':' after a key, got ${describe(c)}`, i);
          i++;
          this.state = S.Value;
          break;
        }
        case S.After: {
          const c = buf[i]!;
          if (isWs(c)) {
            i++;
            break;
          }
          this.pos = i;
          const array = this.stack[this.stack.length - 1]!;
          if (c === 0x2c) {
            i++;
            this.state = array ? S.Value : S.Key;
          } else if (c === (array ? 0x5d : 0x7d)) {
            i = this.closeContainer(i, array);
          } else {
            this.fail(`expected ',' or '${array ? ']' : '}'}', got ${describe(c)}`);
          }
          break;
        }
        case S.String: {
          const r = this.scanString(buf, i);
          if (r < 0) return -r - 1; // unfinished escape or UTF-8 sequence: carry from there
          i = r;
          break;
        }
        case S.Number:
          i = this.scanNumber(buf, i);
          break;
        case S.Literal:
          i = this.scanLiteral(buf, i);
          break;
        case S.Skip:
        case S.Bulk:
          i = this.scanSkip(buf, i);
          break;
        case S.Done: {
          const c = buf[i]!;
          if (!isWs(c)) this.fail(`unexpected ${describe(c)} after the end of the document`, i);
          i++;
          break;
        }
      }
    }
    this.pos = n;
    return n;
  }

  private startValue(buf: Buffer, i: number, c: number): number {
    const ev = this.events;
    if (this.pendingSkipValue) {
      // The member's key was refused: skip its value without telling the consumer.
      this.pendingSkipValue = false;
      if (c === 0x7b || c === 0x5b) return this.beginSkip(i);
      if (c === 0x22) {
        this.skip = newSkipState(false, true);
        this.state = S.Skip;
        return i + 1;
      }
      this.silent = true;
    }
    switch (c) {
      case 0x7b: // {
        if (ev.openObject()) {
          this.stack.push(false);
          this.state = S.KeyOrEnd;
          return i + 1;
        }
        return this.beginSkip(i);
      case 0x5b: // [
        if (ev.openArray()) {
          this.stack.push(true);
          this.state = S.ValueOrEnd;
          return i + 1;
        }
        return this.beginSkip(i);
      case 0x22: // "
        this.pos = i + 1;
        this.inKey = false;
        if (ev.stringStart()) {
          this.wanted = true;
          this.state = S.String;
          return i + 1;
        }
        // Omitted: skip the string as a depth-0 value.
        this.skip = newSkipState(false, true);
        this.state = S.Skip;
        return i + 1;
      case 0x74:
      case 0x66:
      case 0x6e:
        this.literal = c === 0x74 ? 'true' : c === 0x66 ? 'false' : 'null';
        this.tokenText = '';
        this.state = S.Literal;
        return i;
      default:
        if (c === 0x2d || (c >= 0x30 && c <= 0x39)) {
          this.tokenText = '';
          this.numberStart = this.base + i;
          this.state = S.Number;
          return i;
        }
        return this.fail(`unexpected ${describe(c)} where a value was expected`, i);
    }
  }

  /** Absolute offset where the current number started (errors name it whatever the chunking). */
  private numberStart = 0;
  /** The current number or literal belongs to a refused member: parse it, report nothing. */
  private silent = false;

  private beginSkip(i: number): number {
    this.skip = newSkipState(false, false);
    this.state = S.Skip;
    return i;
  }

  private startBulk(): void {
    this.skip = newSkipState(true, false);
    this.state = S.Bulk;
  }

  private closeContainer(i: number, array: boolean): number {
    this.stack.pop();
    this.pos = i + 1;
    if (array) this.events.closeArray();
    else this.events.closeObject();
    this.state = this.afterValue();
    return i + 1;
  }

  /**
   * Skip a value (Skip) or count the rest of a closed container (Bulk) with the skip scanner;
   * UTF-8 of the skipped bytes is validated once per buffer region, natively.
   */
  private scanSkip(buf: Buffer, start: number): number {
    const st = this.skip;
    const r = scanSkip(buf, start, st);
    if (r === SKIP_MORE) {
      this.checkSkippedUtf8(buf, start, buf.length, true);
      return buf.length;
    }
    if (r < -1) this.fail(`unexpected ${describe(buf[-r - 2]!)}`, -r - 2);
    this.checkSkippedUtf8(buf, start, r, false);
    if (st.bulk) {
      const c = buf[r]!;
      const array = this.stack[this.stack.length - 1]!;
      if ((c === 0x5d) !== array) this.fail(`unexpected ${describe(c)}`, r);
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

  /** Returns the index after the string, or -(index+1) of an unfinished sequence to carry. */
  private scanString(buf: Buffer, start: number): number {
    const n = buf.length;
    let i = start;
    let runStart = i;
    let out = '';
    const flushRun = (to: number): void => {
      if (to > runStart) out += buf.toString('utf8', runStart, to);
    };
    while (i < n) {
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

  private pendingSkipValue = false;

  private scanNumber(buf: Buffer, start: number): number {
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

  private finishNumber(): void {
    const raw = this.tokenText;
    if (!NUMBER_RE.test(raw)) this.fail(`invalid number ${JSON.stringify(raw.slice(0, 40))}`, this.numberStart - this.base);
    this.tokenText = '';
    if (this.silent) this.silent = false;
    else this.events.scalar(raw);
    this.state = this.afterValue();
  }

  private scanLiteral(buf: Buffer, start: number): number {
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

function describe(c: number): string {
  if (c >= 0x21 && c < 0x7f) return `'${String.fromCharCode(c)}'`;
  return `byte 0x${c.toString(16).padStart(2, '0')}`;
}

function hexValue(c: number): number {
  if (c >= 0x30 && c <= 0x39) return c - 0x30;
  if (c >= 0x61 && c <= 0x66) return c - 0x57;
  if (c >= 0x41 && c <= 0x46) return c - 0x37;
  return -1;
}

/**
 * Length of the UTF-8 sequence at `i` (2–4), 0 when it is cut off by the end of the buffer,
 * -1 when invalid (bad lead, bad continuation, overlong, surrogate, above U+10FFFF).
 */
export function utf8SequenceLength(buf: Uint8Array, i: number, n: number): number {
  const c = buf[i]!;
  let len: number;
  let min: number;
  if (c >= 0xc2 && c <= 0xdf) {
    len = 2;
    min = 0x80;
  } else if (c >= 0xe0 && c <= 0xef) {
    len = 3;
    min = 0x800;
  } else if (c >= 0xf0 && c <= 0xf4) {
    len = 4;
    min = 0x10000;
  } else {
    return -1;
  }
  let cp = c & (len === 2 ? 0x1f : len === 3 ? 0x0f : 0x07);
  for (let k = 1; k < len; k++) {
    if (i + k >= n) return 0;
    const d = buf[i + k]!;
    if ((d & 0xc0) !== 0x80) return -1;
    cp = (cp << 6) | (d & 0x3f);
  }
  if (cp < min || cp > 0x10ffff || (cp >= 0xd800 && cp <= 0xdfff)) return -1;
  return len;
}

function firstInvalidUtf8(buf: Uint8Array): number {
  let i = 0;
  while (i < buf.length) {
    if (buf[i]! < 0x80) {
      i++;
      continue;
    }
    const len = utf8SequenceLength(buf, i, buf.length);
    if (len <= 0) return i;
    i += len;
  }
  return buf.length;
}
