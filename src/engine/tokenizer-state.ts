/**
 * The tokenizer's state and its input: chunks joined with the carried bytes of an unfinished
 * token, the raw-byte tap, byte offsets in errors, and the container stack. The layers above add
 * skipping (tokenizer-skip.ts), kept tokens (tokenizer-tokens.ts) and the state loop
 * (tokenizer.ts, the class sources use).
 */
import { BudgetError } from './errors.js';
import type { JsonEvents } from './events.js';
import { newSkipState, scanSkipJs, type SkipState } from './skip-scan.js';

/** What the tokenizer expects next. */
export const enum S {
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

/**
 * Every field of the tokenizer is declared here, so that its layers share one object shape.
 * Perf: the layers are one class chain and one concrete class: calls between them stay monomorphic.
 */
export abstract class TokenizerState {
  protected state: S = S.Value;
  /** Container stack: true = array. */
  protected stack: boolean[] = [];
  /** Bytes of input before the current buffer. */
  protected base = 0;
  /** Unfinished bytes of a kept token carried into the next buffer. */
  protected carry: Uint8Array | undefined;
  // kept string
  protected inKey = false;
  protected keyParts: string[] = [];
  protected keyUnits = 0;
  protected wanted = true; // consumer still wants chunks of this string
  // number / literal
  protected tokenText = '';
  protected literal = '';
  // skip scanner
  protected skip: SkipState = newSkipState(false, false);
  /** UTF-8 validation of skipped string bytes: an incomplete sequence carried to the next buffer. */
  protected utfTail: Uint8Array | undefined;
  /** Set when a cut string is being skipped: its end must still be reported. */
  protected skipStringEnd = false;
  protected rootSeen = false;
  /** Raw-byte tap (see setTap): receives every consumed byte from `tapFrom` on. */
  protected tap: ((bytes: Uint8Array) => void) | undefined;
  protected tapFrom = 0;
  protected buf: Buffer = Buffer.alloc(0);
  /** Index in `buf` of the byte being handled when a consumer callback runs. */
  protected pos = 0;
  /** Absolute offset where the current number started (errors name it whatever the chunking). */
  protected numberStart = 0;
  /** The current number or literal belongs to a refused member: parse it, report nothing. */
  protected silent = false;
  /** The current member's key was refused: its value is skipped unseen. */
  protected pendingSkipValue = false;
  /** {@link writeUntil}: a value inside a container at this depth ended the input taken (-1: none). */
  protected stopDepth = -1;
  /** `run` stopped at such a value's end. */
  protected halted = false;

  constructor(protected readonly events: JsonEvents) {}

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

  /**
   * Stop the tap without handing it the bytes consumed since its last call. Perf: a text found not
   * to be a mirror candidate at its first chunk is not hashed, and that chunk can be a whole piece.
   */
  dropTap(): void {
    this.tap = undefined;
    this.tapFrom = this.pos;
  }

  /** Throw `INVALID_JSON` naming the absolute byte offset of `buf[at]`. */
  protected fail(message: string, at = this.pos): never {
    const offset = this.base + at;
    throw new BudgetError('INVALID_JSON', `Invalid JSON at byte offset ${offset}: ${message}`, { offset });
  }

  /** Feed the next piece of input. */
  write(chunk: Uint8Array): void {
    this.feed(chunk, -1);
  }

  /**
   * Feed bytes of a value held by a container at stack depth `depth` (the value itself started,
   * or starts, in them): the bytes after the value's end are not taken. Returns how many bytes of
   * `chunk` were taken when the value ended in it, or -1 when all were and it goes on.
   */
  writeUntil(chunk: Uint8Array, depth: number): number {
    if (this.state !== S.Bulk || this.stack.length !== depth) return this.feed(chunk, depth);
    // Counting the rest of that container passes its members' ends: the value's end is found as a
    // skip scanner finds it, from the state here, and the bytes up to it are taken.
    const st = newSkipState(false, false);
    this.skipStateIn(depth, st);
    const end = scanSkipJs(chunk, 0, st);
    if (end < 0) {
      this.feed(chunk, -1);
      return -1;
    }
    this.feed(chunk.subarray(0, end), -1);
    return end;
  }

  /**
   * Write into `st` the skip scanner's state at the input taken so far, inside a value held by a
   * container at stack depth `depth`: what a scanner that skipped that value from its first byte
   * would hold here. A reader that let this tokenizer find the value's end can take over from it.
   */
  skipStateIn(depth: number, st: SkipState): void {
    const skipping = this.state === S.Skip || this.state === S.Bulk;
    st.depth = this.stack.length - depth + (skipping ? this.skip.depth : 0);
    st.inString = this.state === S.String || (skipping && this.skip.inString);
    // Outside the skip scanner, only a carried lone backslash escapes the next byte (a carried
    // `\u` escape or UTF-8 sequence has passed its escaped byte).
    const carry = this.carry;
    st.escape = skipping ? this.skip.escape : carry !== undefined && carry.length === 1 && carry[0] === 0x5c;
    st.bulk = false;
    st.commas = 0;
    st.sawValue = false;
  }

  private feed(chunk: Uint8Array, stopDepth: number): number {
    let buf = Buffer.isBuffer(chunk) ? chunk : Buffer.from(chunk.buffer, chunk.byteOffset, chunk.byteLength);
    if (this.carry !== undefined) {
      const joined = Buffer.allocUnsafe(this.carry.length + buf.length);
      joined.set(this.carry, 0);
      joined.set(buf, this.carry.length);
      this.base -= this.carry.length;
      this.carry = undefined;
      buf = joined;
    }
    const carried = buf.length - chunk.length;
    this.buf = buf;
    this.tapFrom = 0;
    this.stopDepth = stopDepth;
    this.halted = false;
    const end = this.run(buf);
    this.stopDepth = -1;
    // `end` < length when the value to stop at ended (nothing is unfinished there), or else when a
    // kept token is unfinished: carry its bytes over.
    if (end < buf.length && !this.halted) this.carry = Buffer.from(buf.subarray(end)); // a copy: the caller may reuse `chunk`
    if (this.tap !== undefined && end > this.tapFrom) this.tap(buf.subarray(this.tapFrom, end));
    this.tapFrom = 0;
    this.base += this.halted ? end : buf.length;
    this.pos = 0;
    if (this.halted || (stopDepth >= 0 && this.state === S.After && this.stack.length === stopDepth)) return end - carried;
    return -1;
  }

  /** Tokenize `buf`; returns where an unfinished kept token starts (its bytes are carried), else its length. */
  protected abstract run(buf: Buffer): number;

  protected afterValue(): S {
    return this.stack.length === 0 ? S.Done : S.After;
  }

  protected closeContainer(i: number, array: boolean): number {
    this.stack.pop();
    this.pos = i + 1;
    if (array) this.events.closeArray();
    else this.events.closeObject();
    this.state = this.afterValue();
    return i + 1;
  }
}
