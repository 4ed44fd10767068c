/**
 * The streaming member scanner: reads the members of a JSON object from bytes in any chunking,
 * without holding the input, and asks a {@link MemberPolicy} what to do with each value. It is the
 * one state machine behind the envelope scan (a JSON-RPC line's top level) and the receipt capture
 * (`result.structuredContent` of a long response); each keeps only its policy.
 *
 * Per member the scanner goes: expect a key → in the key string (escapes and chunk ends anywhere;
 * at most `maxKeyBytes` raw bytes held) → expect `:` → expect a value → then, by the policy's
 * answer at the value's first byte, one of: in a scalar (read here, checked against the number and
 * literal grammar), in a string or container passed over by the engine's skip scanner (strings,
 * escapes and depth only; SIMD where available), or one level down in an entered object → after
 * the value (`,` or `}`).
 *
 * What is checked: the object's own structure (keys, colons, commas, braces, nothing but white
 * space after it), its keys (JSON strings, unless longer than `maxKeyBytes`) and its scalars, at
 * every level read. A string or container passed over is only delimited: its inside is not
 * checked. A fault does not stop the scan (the policies read past it as they always have, leniently:
 * a stray byte is passed by, an empty value is an empty scalar); the first one is kept in
 * {@link MemberScanner.error} with its byte offset. Only a closing bracket that closes nothing stops
 * it ({@link MemberScanner.broken}).
 *
 * Offsets count bytes from the start of the input. Buffers handed to the policy are views of the
 * chunk being read: valid during the call only.
 */
import { newSkipState, SKIP_MORE, type SkipScan, type SkipState } from './skip-scan.js';
import { scanSkipBest } from './skip-scan-wasm.js';
import { Byte, endsScalar, isWs } from './json-bytes.js';
import { SCALAR_START, scalarComplete, stepScalar } from './json-scalar.js';

/**
 * Perf: a string value is first looked at this far for its closing quote (most strings at the
 * levels read are short: a version, an id, a name), before any scanner is set up for it.
 */
const SHORT_STRING_BYTES = 64;

/** Perf: a plain key up to this long is built a character at a time (a longer one by `Buffer.toString`). */
const SHORT_KEY_BYTES = 16;

/** What the first non-space byte of the input opened (`empty`: none seen yet). */
export type TopShape = 'empty' | 'object' | 'array' | 'other';

/**
 * How a member's value is read, answered by {@link MemberPolicy.value} at its first byte:
 * `pass`, passed over and nothing kept; `hold`, its raw bytes kept up to `maxHeldBytes` and handed
 * to `valueEnd`; `stream`, its raw bytes handed to `piece` as they arrive; `enter`, an object's
 * members read in turn one level down (a value that is not an object is passed over instead);
 * `hand`, an object's or array's bytes handed to `hand`, whose reader finds where it ends (a value
 * that is neither is read as `stream`).
 */
export type ValueTake = 'pass' | 'hold' | 'stream' | 'enter' | 'hand';

/** {@link MemberPolicy.hand}'s answer: the value took every byte and goes on. */
export const HAND_MORE = -1;
/** {@link MemberPolicy.hand}'s answer: the bytes were not taken; the scanner skips the value itself from them. */
export const HAND_REFUSED = -2;

/** What a scan does with what it reads. Levels count entered objects: the top object is level 0. */
export interface MemberPolicy {
  /** The first non-space byte was read; `rest` is the chunk from it on. Past anything but an object, the scan is over. */
  begin?(shape: Exclude<TopShape, 'empty'>, rest: Buffer): void;
  /**
   * A member's key, once its colon is read. `name` is undefined when the key is longer than
   * `maxKeyBytes` raw bytes (`tooLong`) or not a JSON string.
   */
  key(name: string | undefined, tooLong: boolean, level: number): void;
  /** The member's value starts with byte `first`: how to read it. */
  value(first: number, level: number): ValueTake;
  /** Raw bytes of a `stream` value, in order. */
  piece?(bytes: Buffer): void;
  /**
   * A `hand` value's bytes, from its first byte, as far as the chunk goes. Returns how many of them
   * the value took when it ended among them, {@link HAND_MORE}, or {@link HAND_REFUSED}: then the
   * reader wrote into `st` where these bytes start (inside the value: depth, string, escape; it is
   * the value's start the first time, as given) and the scanner skips the rest of the value, read
   * as `stream`. Perf: the reader must find the value's end anyway (the proxy's byte budget), so
   * the scanner does not skip-scan the same bytes a second time.
   */
  hand?(bytes: Buffer, st: SkipState): number;
  /**
   * The member's value has ended (an entered object: after its members, at its closing brace).
   * `held`: a `hold` value's raw bytes, undefined past `maxHeldBytes` (and for other takes).
   */
  valueEnd(held: Buffer | undefined, level: number): void;
  /** The top object closed; `rest` is the chunk from its closing brace on. */
  close?(rest: Buffer): void;
}

export interface MemberScanOptions {
  /** Longest raw key, in bytes, read as a name (a longer one is `tooLong`). */
  maxKeyBytes: number;
  /** Longest raw `hold` value, in bytes. */
  maxHeldBytes: number;
  /**
   * The skip scanner values are passed over with (default: {@link scanSkipBest}). Perf: for input
   * given whole and short, `scanSkipSized` (no window copied into WebAssembly memory).
   */
  skip?: SkipScan;
}

/** The first fault in the input: its byte offset and what was wrong. */
export interface ScanError {
  at: number;
  reason: string;
}

const enum At {
  Start,
  /** After `{`: a key or `}`. */
  FirstKey,
  /** After `,`: a key. */
  NextKey,
  InKey,
  Colon,
  Value,
  /** Inside a string or container value: the skip scanner finds its end. */
  Skipping,
  /** Inside a `hand` value: the policy's reader finds its end. */
  Handing,
  /** Inside a number, true, false or null. */
  InScalar,
  AfterValue,
  /** The top object closed: only white space may follow. */
  Trailing,
  Done,
}

/** Feed the input with {@link push} in any chunking, then call {@link end}. */
export class MemberScanner {
  private top: TopShape = 'empty';
  private at = At.Start;
  private lvl = 0;
  /** Offset of the current chunk's first byte. */
  private base = 0;
  private fault: ScanError | undefined;
  private stopped = false;
  private readonly key: Buffer;
  private keyLength = 0;
  private keyTooLong = false;
  private escaped = false;
  private take: ValueTake = 'pass';
  private held: Buffer[] | undefined;
  private heldBytes = 0;
  private readonly skip: SkipState = newSkipState(false, false);
  private readonly scanSkip: SkipScan;
  private scalar = SCALAR_START;
  private readonly spans = { keyStart: 0, keyEnd: 0, valueStart: 0, valueEnd: 0 };

  constructor(
    private readonly policy: MemberPolicy,
    private readonly options: MemberScanOptions,
  ) {
    this.key = Buffer.allocUnsafe(options.maxKeyBytes);
    this.scanSkip = options.skip ?? scanSkipBest;
  }

  /** What the input's top level is. */
  get shape(): TopShape {
    return this.top;
  }

  /** The scan has nothing more to read: the top object closed, the input is not an object, or it broke. */
  get done(): boolean {
    return this.at >= At.Trailing;
  }

  /** A closing bracket closed nothing: not JSON, and nothing after it was read. */
  get broken(): boolean {
    return this.stopped;
  }

  /** The first fault seen (the scan went on past it unless {@link broken}). */
  get error(): ScanError | undefined {
    return this.fault;
  }

  /**
   * Byte offsets of the member being read, each valid from the call that reports it: the key from
   * its opening quote to after its closing one (`key`), the value's first byte (`value`; an entered
   * object's members overwrite it) and the offset after its last (`valueEnd`).
   */
  get span(): Readonly<{ keyStart: number; keyEnd: number; valueStart: number; valueEnd: number }> {
    return this.spans;
  }

  push(chunk: Buffer): void {
    const p = this.policy;
    const n = chunk.length;
    let i = 0;
    while (i < n && this.at < At.Done) {
      const c = chunk[i]!;
      switch (this.at) {
        case At.Start:
          if (isWs(c)) break;
          this.top = c === Byte.OpenBrace ? 'object' : c === Byte.OpenBracket ? 'array' : 'other';
          this.at = c === Byte.OpenBrace ? At.FirstKey : At.Done;
          p.begin?.(this.top, chunk.subarray(i));
          break;
        case At.FirstKey:
        case At.NextKey:
          if (c === Byte.Quote) {
            this.at = At.InKey;
            this.spans.keyStart = this.base + i;
            this.keyLength = 0;
            this.keyTooLong = false;
          } else if (c === Byte.CloseBrace) {
            if (this.at === At.NextKey) this.note(i, 'a comma before `}`');
            this.closeObject(chunk, i);
          } else if (!isWs(c)) {
            this.note(i, 'expected a key');
          }
          break;
        case At.InKey: {
          // Perf: the key is read in one pass to its closing quote, not a byte per turn.
          let j = i;
          let escaped = this.escaped;
          for (; j < n; j++) {
            const b = chunk[j]!;
            if (escaped) escaped = false;
            else if (b === Byte.Backslash) escaped = true;
            else if (b === Byte.Quote) break;
          }
          this.escaped = escaped;
          this.holdKey(chunk, i, j);
          if (j === n) {
            i = n;
            continue;
          }
          this.spans.keyEnd = this.base + j + 1;
          this.at = At.Colon;
          i = j + 1;
          continue;
        }
        case At.Colon:
          if (c === Byte.Colon) {
            this.at = At.Value;
            p.key(this.keyName(), this.keyTooLong, this.lvl);
          } else if (!isWs(c)) {
            this.note(i, 'expected `:` after a key');
          }
          break;
        case At.Value: {
          if (isWs(c)) break;
          this.spans.valueStart = this.base + i;
          let take = p.value(c, this.lvl);
          if (take === 'enter') {
            if (c === Byte.OpenBrace) {
              this.lvl++;
              this.at = At.FirstKey;
              break;
            }
            take = 'pass';
          }
          if (take === 'hand') {
            const skip = this.skip;
            skip.depth = 0;
            skip.inString = false;
            skip.escape = false;
            if (c === Byte.OpenBrace || c === Byte.OpenBracket) {
              this.take = take;
              this.at = At.Handing;
              continue;
            }
            take = 'stream';
          }
          this.take = take;
          if (take === 'hold') {
            this.held = [];
            this.heldBytes = 0;
          }
          // A string or container is skipped from its first byte; a scalar is read from it.
          if (c === Byte.Quote) {
            const end = shortStringEnd(chunk, i);
            if (end > 0) {
              this.give(chunk, i, end);
              i = end;
              this.endValue(this.base + end);
              continue;
            }
          }
          if (c === Byte.Quote || c === Byte.OpenBrace || c === Byte.OpenBracket) {
            this.at = At.Skipping;
            const skip = this.skip;
            skip.depth = 0;
            skip.inString = false;
            skip.escape = false;
          } else {
            this.at = At.InScalar;
            this.scalar = SCALAR_START;
          }
          continue;
        }
        case At.Skipping: {
          // Perf: the skip scanner tracks only strings, escapes and depth (SIMD where available).
          const end = this.scanSkip(chunk, i, this.skip);
          if (end === SKIP_MORE) {
            this.give(chunk, i, n);
            i = n;
            continue;
          }
          if (end < 0) {
            // The skip scanner's answer to a closing bracket that closes nothing: not JSON.
            this.note(-end - 2, 'a closing bracket that closes nothing');
            this.stopped = true;
            this.at = At.Done;
            continue;
          }
          this.give(chunk, i, end);
          i = end;
          this.endValue(this.base + end);
          continue;
        }
        case At.Handing: {
          const r = p.hand!(chunk.subarray(i), this.skip);
          if (r === HAND_MORE) {
            i = n;
            continue;
          }
          if (r === HAND_REFUSED) {
            // Read on as `stream` from the state the reader wrote: the skip scanner takes over.
            this.take = 'stream';
            this.at = At.Skipping;
            continue;
          }
          i += r;
          this.endValue(this.base + i);
          continue;
        }
        case At.InScalar: {
          let j = i;
          let s = this.scalar;
          for (; j < n; j++) {
            const b = chunk[j]!;
            if (endsScalar(b)) break;
            s = stepScalar(s, b);
          }
          this.scalar = s;
          this.give(chunk, i, j);
          i = j;
          if (j < n) this.endScalar(this.base + j); // the delimiter is read again after the value
          continue;
        }
        case At.AfterValue:
          if (c === Byte.Comma) this.at = At.NextKey;
          else if (c === Byte.CloseBrace) this.closeObject(chunk, i);
          else if (!isWs(c)) this.note(i, 'expected `,` or `}` after a value');
          break;
        case At.Trailing:
          if (!isWs(c)) {
            this.note(i, 'bytes after the object');
            this.at = At.Done;
          }
          break;
      }
      i++;
    }
    this.base += n;
  }

  /** The input is over: a scalar still being read (a number at the very end) ends here. */
  end(): void {
    if (this.at === At.InScalar) this.endScalar(this.base);
    if (this.at >= At.FirstKey && this.at < At.Trailing && this.fault === undefined) {
      this.fault = { at: this.base, reason: 'the input ended inside the object' };
    }
  }

  /** Note the first fault, at byte `i` of the current chunk. */
  private note(i: number, reason: string): void {
    this.fault ??= { at: this.base + i, reason };
  }

  /** A closing brace at byte `i`: the top object is over, or an entered one is its member's value. */
  private closeObject(chunk: Buffer, i: number): void {
    if (this.lvl === 0) {
      this.at = At.Trailing;
      this.policy.close?.(chunk.subarray(i));
      return;
    }
    this.lvl--;
    this.take = 'pass';
    this.endValue(this.base + i + 1);
  }

  /** Bytes `from`..`to` of the chunk belong to the value being read. */
  private give(chunk: Buffer, from: number, to: number): void {
    if (to <= from || this.take === 'pass') return;
    if (this.take === 'stream') {
      this.policy.piece?.(chunk.subarray(from, to));
      return;
    }
    if (this.held === undefined) return;
    this.heldBytes += to - from;
    if (this.heldBytes > this.options.maxHeldBytes) this.held = undefined;
    else this.held.push(Buffer.from(chunk.subarray(from, to)));
  }

  private endScalar(end: number): void {
    if (!scalarComplete(this.scalar)) {
      this.fault ??= { at: this.spans.valueStart, reason: this.scalar === SCALAR_START ? 'expected a value' : 'not a JSON number, true, false or null' };
    }
    this.endValue(end);
  }

  /** The value ended before offset `end`. */
  private endValue(end: number): void {
    this.spans.valueEnd = end;
    this.at = At.AfterValue;
    let held: Buffer | undefined;
    if (this.take === 'hold' && this.held !== undefined) held = this.held.length === 1 ? this.held[0] : Buffer.concat(this.held);
    this.held = undefined;
    this.take = 'pass';
    this.policy.valueEnd(held, this.lvl);
  }

  /** Hold raw key bytes `from`..`to`, up to `maxKeyBytes`. */
  private holdKey(chunk: Buffer, from: number, to: number): void {
    const room = this.options.maxKeyBytes - this.keyLength;
    const count = Math.min(room, to - from);
    // Perf: keys are short; a loop copies them faster than `Buffer.copy`, a native call.
    const key = this.key;
    for (let k = 0, at = this.keyLength; k < count; k++) key[at + k] = chunk[from + k]!;
    this.keyLength += count;
    if (to - from > count) this.keyTooLong = true;
  }

  private keyName(): string | undefined {
    if (this.keyTooLong) return undefined;
    const key = this.key;
    const length = this.keyLength;
    // Perf: a plain ASCII key (no escape, no control character) is its own name; a short one is
    // built here, which costs less than a native call.
    let plain = true;
    let name = '';
    for (let k = 0; k < length && plain; k++) {
      const b = key[k]!;
      plain = b >= Byte.Space && b < 0x80 && b !== Byte.Backslash;
      if (length <= SHORT_KEY_BYTES) name += String.fromCharCode(b);
    }
    if (plain) return length <= SHORT_KEY_BYTES ? name : key.toString('latin1', 0, length);
    try {
      return JSON.parse(`"${key.toString('utf8', 0, length)}"`) as string;
    } catch {
      this.fault ??= { at: this.spans.keyStart, reason: 'a key that is not a JSON string' };
      return undefined;
    }
  }
}

/** The end of the string whose opening quote is at `i` when it closes within {@link SHORT_STRING_BYTES} of this chunk, else -1. */
function shortStringEnd(chunk: Buffer, i: number): number {
  const stop = Math.min(chunk.length, i + SHORT_STRING_BYTES);
  for (let j = i + 1; j < stop; j++) {
    const c = chunk[j];
    if (c === Byte.Backslash) j++;
    else if (c === Byte.Quote) return j + 1;
  }
  return -1;
}
