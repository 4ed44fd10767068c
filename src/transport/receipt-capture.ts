/**
 * What a mutation's receipt needs, captured from a response line too long to hold while it
 * streams: the top-level members of `result.structuredContent` that `receiptOf` may keep (small
 * strings, numbers, booleans, null), read from the ORIGINAL bytes. The bounded result cannot serve:
 * the byte budget decides in document order, so an id written after a large log is already gone
 * from it. Memory stays flat: only the path envelope → `result` → `structuredContent` → its direct
 * members is followed, every other value is passed over by the engine's skip scanner, and at most
 * {@link MAX_HELD} scalars of at most 1.2 KiB each and {@link MAX_PLACES} other keys are held. The
 * capture runs only while a typed mutation is pending; other long lines never construct it.
 *
 * Members are read as `JSON.parse` would read the line: the last `result` and the last
 * `structuredContent` in it win, and a repeated member keeps its first position with its last
 * value; the object built at the end orders its keys as `JSON.parse` does (index-like keys first),
 * so `receiptOf` picks exactly what it would pick from the parsed original.
 */
import { newSkipState, scanSkipBest, SKIP_MORE, type SkipState } from '../engine/index.js';
import { MAX_RECEIPT_FIELDS, MAX_RECEIPT_KEY, MAX_RECEIPT_STRING } from './typed-results.js';

/** Scalar members held (a margin over the receipt's fields for repeats that replace a value). */
export const MAX_HELD = 4 * MAX_RECEIPT_FIELDS;
/**
 * Other members whose place is held (their key only): a repeat that makes one a scalar keeps that
 * place, as in `JSON.parse`. Past this many, such a repeat is placed last instead.
 */
export const MAX_PLACES = 256;
/** Raw bytes of a key or scalar held: past these, its text is longer than `receiptOf` keeps (a `\uXXXX` escape is 6 bytes per character). */
const MAX_KEY_RAW = 6 * MAX_RECEIPT_KEY;
const MAX_VALUE_RAW = 6 * MAX_RECEIPT_STRING + 2;
/** A member `receiptOf` never keeps: a container, a long string or number. */
const NOT_SCALAR: Readonly<Record<string, never>> = Object.freeze({});
/** Stands for a key too long to hold: `receiptOf` stops at any key over its limit. */
const LONG_KEY = '\u0000'.repeat(MAX_RECEIPT_KEY + 1);

const QUOTE = 0x22;
const BACKSLASH = 0x5c;
const OPEN_BRACE = 0x7b;
const CLOSE_BRACE = 0x7d;

const enum At {
  Start,
  Key,
  InKey,
  Colon,
  Value,
  /** Inside a string or container value: the skip scanner finds its end. */
  Skipping,
  /** Inside a number, true, false or null. */
  InScalar,
  AfterValue,
  Done,
}

/** Levels of the followed path: the envelope, its `result`, the result's `structuredContent`. */
const ENVELOPE = 0;
const RESULT = 1;
const STRUCTURE = 2;

function isSpace(c: number): boolean {
  return c === 0x20 || c === 0x0a || c === 0x0d || c === 0x09;
}

function endsScalar(c: number): boolean {
  return c === 0x2c || c === CLOSE_BRACE || c === 0x5d || isSpace(c);
}

type Scalar = string | number | boolean | null;

/** Feed a line's bytes with `push` in any chunking; read {@link structure} once it has ended. */
export class ReceiptCapture {
  private at = At.Start;
  private level = ENVELOPE;
  private skip: SkipState = newSkipState(false, false);
  private escaped = false;
  private key: number[] = [];
  private keyOver = false;
  private name: string | undefined;
  /** Raw bytes of the structure member being read (undefined: not held). */
  private raw: Buffer[] | undefined;
  private rawBytes = 0;
  /** The members of the structure in force (null: the last result has none, or it is not an object). */
  private members: Map<string, Scalar | typeof NOT_SCALAR> | null = null;
  private scalars = 0;
  private places = 0;
  private broken = false;

  push(chunk: Buffer): void {
    let i = 0;
    const n = chunk.length;
    while (i < n && this.at !== At.Done) {
      const c = chunk[i]!;
      switch (this.at) {
        case At.Start:
          if (isSpace(c)) break;
          this.at = c === OPEN_BRACE ? At.Key : At.Done;
          break;
        case At.Key:
          if (c === QUOTE) {
            this.at = At.InKey;
            this.key = [];
            this.keyOver = false;
          } else if (c === CLOSE_BRACE) {
            this.close();
          }
          break;
        case At.InKey:
          if (this.escaped) this.escaped = false;
          else if (c === BACKSLASH) this.escaped = true;
          else if (c === QUOTE) {
            this.at = At.Colon;
            break;
          }
          if (this.key.length < MAX_KEY_RAW) this.key.push(c);
          else this.keyOver = true;
          break;
        case At.Colon:
          if (c === 0x3a) {
            this.at = At.Value;
            this.name = this.keyName();
          }
          break;
        case At.Value:
          if (isSpace(c)) break;
          if (this.startValue(c)) break; // descended into a followed object: its brace is read
          continue; // the value's first byte is read by its state
        case At.Skipping: {
          // Perf: the skip scanner tracks only strings, escapes and depth (SIMD where available).
          const end = scanSkipBest(chunk, i, this.skip);
          if (end === SKIP_MORE) {
            this.hold(chunk, i, n);
            i = n;
            continue;
          }
          if (end < 0) {
            // A stray closing bracket: not JSON; the line is refused, nothing is captured.
            this.broken = true;
            this.at = At.Done;
            continue;
          }
          this.hold(chunk, i, end);
          i = end;
          this.endValue();
          continue;
        }
        case At.InScalar:
          if (endsScalar(c)) {
            this.endValue();
            continue; // the delimiter is read again after the value
          }
          this.hold(chunk, i, i + 1);
          break;
        case At.AfterValue:
          if (c === 0x2c) this.at = At.Key;
          else if (c === CLOSE_BRACE) this.close();
          break;
      }
      i++;
    }
  }

  /**
   * The original `structuredContent` as far as a receipt reads it: an object of its receipt
   * candidates (other members stand in as `{}`), `null` when the line's result has none, and
   * undefined when the line was not JSON the capture could follow.
   */
  structure(): Record<string, unknown> | null | undefined {
    if (this.broken || this.at !== At.Done) return undefined;
    return this.members === null ? null : Object.fromEntries(this.members);
  }

  /** A value starts with byte `c`: descend into a followed object (true), or read or pass over the value. */
  private startValue(c: number): boolean {
    const name = this.name;
    if (this.level === ENVELOPE && name === 'result') this.members = null;
    const follows = (this.level === ENVELOPE && name === 'result') || (this.level === RESULT && name === 'structuredContent');
    if (follows && c === OPEN_BRACE) {
      this.level++;
      if (this.level === STRUCTURE) {
        this.members = new Map();
        this.scalars = 0;
        this.places = 0;
      }
      this.at = At.Key;
      return true;
    }
    if (this.level === RESULT && name === 'structuredContent') this.members = null;
    // Only a structure member's scalar text is held; a container never is.
    const held = this.level === STRUCTURE && c !== OPEN_BRACE && c !== 0x5b;
    this.raw = held ? [] : undefined;
    this.rawBytes = 0;
    if (c === QUOTE || c === OPEN_BRACE || c === 0x5b) {
      this.at = At.Skipping;
      this.skip = newSkipState(false, false);
    } else {
      this.at = At.InScalar;
    }
    return false;
  }

  /** Hold bytes of a structure member's value, up to what a receipt could keep. */
  private hold(chunk: Buffer, from: number, to: number): void {
    if (this.raw === undefined || to <= from) return;
    this.rawBytes += to - from;
    if (this.rawBytes > MAX_VALUE_RAW) this.raw = undefined;
    else this.raw.push(Buffer.from(chunk.subarray(from, to)));
  }

  private endValue(): void {
    this.at = At.AfterValue;
    if (this.level !== STRUCTURE) return;
    const value = this.raw === undefined ? NOT_SCALAR : scalarOf(this.raw);
    this.raw = undefined;
    this.member(this.keyOver ? LONG_KEY : this.name, value);
  }

  /** Note one member of the structure: a repeat keeps its place and takes the new value. */
  private member(name: string | undefined, value: Scalar | typeof NOT_SCALAR): void {
    const members = this.members;
    if (name === undefined || members === null) return;
    if (members.has(name)) {
      members.set(name, value);
    } else if (value !== NOT_SCALAR) {
      if (this.scalars < MAX_HELD) members.set(name, value);
      this.scalars++;
    } else if (this.places < MAX_PLACES || name.length > MAX_RECEIPT_KEY) {
      // A key over the limit is always placed: `receiptOf` stops there.
      members.set(name, value);
      this.places++;
    }
  }

  /** A closing brace of the followed path: its object is the value of the level above. */
  private close(): void {
    if (this.level === ENVELOPE) {
      this.at = At.Done;
      return;
    }
    this.level--;
    this.at = At.AfterValue;
  }

  private keyName(): string | undefined {
    if (this.keyOver) return undefined;
    try {
      return JSON.parse(`"${Buffer.from(this.key).toString('utf8')}"`) as string;
    } catch {
      return undefined;
    }
  }
}

/** A held value as `receiptOf` would judge it. */
function scalarOf(raw: Buffer[]): Scalar | typeof NOT_SCALAR {
  let v: unknown;
  try {
    v = JSON.parse(Buffer.concat(raw).toString('utf8'));
  } catch {
    return NOT_SCALAR;
  }
  if (typeof v === 'string') return v.length <= MAX_RECEIPT_STRING ? v : NOT_SCALAR;
  return v === null || typeof v === 'number' || typeof v === 'boolean' ? v : NOT_SCALAR;
}
