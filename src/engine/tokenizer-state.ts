/**
 * The tokenizer's state and its input: chunks joined with the carried bytes of an unfinished
 * token, the raw-byte tap, byte offsets in errors, and the container stack. The layers above add
 * skipping (tokenizer-skip.ts), kept tokens (tokenizer-tokens.ts) and the state loop
 * (tokenizer.ts, the class sources use).
 */
import { BudgetError } from './errors.js';
import type { JsonEvents } from './events.js';
import { newSkipState, type SkipState } from './skip-scan.js';

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
