/**
 * What a mutation's receipt needs, captured from a response line too long to hold while it
 * streams: the top-level members of `result.structuredContent` that `receiptOf` may keep (small
 * strings, numbers, booleans, null), read from the ORIGINAL bytes. The bounded result cannot serve:
 * the byte budget decides in document order, so an id written after a large log is already gone
 * from it. Memory stays flat whatever the line holds: only the path envelope → `result` →
 * `structuredContent` → its direct members is followed, every other value is passed over by the
 * engine's skip scanner, and at most {@link MAX_MEMBERS} members are held, each a key of at most
 * `MAX_RECEIPT_KEY` characters and a scalar of at most `MAX_RECEIPT_STRING` characters (or none).
 * Every key longer than `MAX_RECEIPT_KEY` is one member, {@link LONG_KEY}, placed once: `receiptOf`
 * stops at the first such key, so which one it was never matters, and a new key placed after it is
 * never read (an index-like key excepted: those come first). The capture runs only while a typed
 * call is pending; other long lines never construct it. What it holds also serves the typed policy
 * after a cut ({@link structureAfterCut}).
 *
 * Members are read as `JSON.parse` would read the line: the last `result` and the last
 * `structuredContent` in it win, and a repeated member keeps its first position with its last
 * value; the object built at the end orders its keys as `JSON.parse` does (index-like keys first),
 * so `receiptOf` picks exactly what it would pick from the parsed original. The reading itself is
 * the member scanner's (`member-scan.ts`); this file holds the policy: which objects are entered,
 * which values held, what a member becomes.
 */
import { Byte, isDigit, MemberScanner, type MemberPolicy, type ValueTake } from '../../engine/index.js';
import { MAX_RECEIPT_FIELDS, MAX_RECEIPT_KEY, MAX_RECEIPT_STRING } from './typed-results.js';

/** Scalar members held (a margin over the receipt's fields for repeats that replace a value). */
export const MAX_HELD = 4 * MAX_RECEIPT_FIELDS;
/**
 * Other members whose place is held (their key only): a repeat that makes one a scalar keeps that
 * place, as in `JSON.parse`. Past this many, such a repeat is placed last instead.
 */
export const MAX_PLACES = 256;
/** Members held at most: scalars, places, and the one {@link LONG_KEY}. */
export const MAX_MEMBERS = MAX_HELD + MAX_PLACES + 1;
/** Raw bytes of a key or scalar held: past these, its text is longer than `receiptOf` keeps (a `\uXXXX` escape is 6 bytes per character). */
const MAX_KEY_RAW = 6 * MAX_RECEIPT_KEY;
const MAX_VALUE_RAW = 6 * MAX_RECEIPT_STRING + 2;
/** A member `receiptOf` never keeps: a container, a long string or number. */
const NOT_SCALAR: Readonly<Record<string, never>> = Object.freeze({});
/** Stands for every key longer than `MAX_RECEIPT_KEY`: `receiptOf` stops at any key over its limit. */
export const LONG_KEY = '\u0000'.repeat(MAX_RECEIPT_KEY + 1);

/** Levels of the followed path: the envelope, its `result`, the result's `structuredContent`. */
const ENVELOPE = 0;
const RESULT = 1;
const STRUCTURE = 2;

type Scalar = string | number | boolean | null;

/** Feed a line's bytes with `push` in any chunking; read {@link structure} once it has ended. */
export class ReceiptCapture {
  private readonly scan: MemberScanner;
  private name: string | undefined;
  private keyOver = false;
  /** The members of the structure in force (null: the last result has none, or it is not an object). */
  private members: Map<string, Scalar | typeof NOT_SCALAR> | null = null;
  private scalars = 0;
  private places = 0;
  /** {@link LONG_KEY} is placed in the structure in force. */
  private longPlaced = false;

  constructor() {
    this.scan = new MemberScanner(this.policy, { maxKeyBytes: MAX_KEY_RAW, maxHeldBytes: MAX_VALUE_RAW });
  }

  push(chunk: Buffer): void {
    this.scan.push(chunk);
  }

  /**
   * The original `structuredContent` as far as a receipt reads it: an object of its receipt
   * candidates (other members stand in as `{}`), `null` when the line's result has none, and
   * undefined when the line was not JSON the capture could follow.
   */
  structure(): Record<string, unknown> | null | undefined {
    // A stray closing bracket: not JSON; the line is refused, nothing is captured.
    if (this.scan.broken || !this.scan.done) return undefined;
    return this.members === null ? null : Object.fromEntries(this.members);
  }

  /** What the capture holds now: members, and the characters of their keys and string values (for tests). */
  held(): { members: number; chars: number } {
    let chars = 0;
    for (const [k, v] of this.members ?? []) chars += k.length + (typeof v === 'string' ? v.length : 0);
    return { members: this.members?.size ?? 0, chars };
  }

  private readonly policy: MemberPolicy = {
    key: (name, tooLong) => {
      this.name = name;
      this.keyOver = tooLong;
    },
    value: (first, level) => this.startValue(first, level),
    valueEnd: (held, level) => {
      if (level !== STRUCTURE) return;
      this.member(this.keyOver ? LONG_KEY : this.name, held === undefined ? NOT_SCALAR : scalarOf(held));
    },
  };

  /** A value starts with byte `c`: enter a followed object, or hold a structure member's scalar, or pass it over. */
  private startValue(c: number, level: number): ValueTake {
    const name = this.name;
    if (level === ENVELOPE && name === 'result') this.members = null;
    const follows = (level === ENVELOPE && name === 'result') || (level === RESULT && name === 'structuredContent');
    if (follows && c === Byte.OpenBrace) {
      if (level === RESULT) {
        this.members = new Map();
        this.scalars = 0;
        this.places = 0;
        this.longPlaced = false;
      }
      return 'enter';
    }
    if (level === RESULT && name === 'structuredContent') this.members = null;
    // Only a structure member's scalar text is held; a container never is.
    return level === STRUCTURE && c !== Byte.OpenBrace && c !== Byte.OpenBracket ? 'hold' : 'pass';
  }

  /** Note one member of the structure: a repeat keeps its place and takes the new value. */
  private member(name: string | undefined, value: Scalar | typeof NOT_SCALAR): void {
    const members = this.members;
    if (name === undefined || members === null) return;
    if (name.length > MAX_RECEIPT_KEY) {
      // `receiptOf` stops at the first key over the limit, whatever its value: one stands for all.
      if (!this.longPlaced) members.set(LONG_KEY, NOT_SCALAR);
      this.longPlaced = true;
    } else if (members.has(name)) {
      members.set(name, value);
    } else if (this.longPlaced && !isIndexKey(name)) {
      return; // a new key placed after LONG_KEY is never read by `receiptOf`
    } else if (value !== NOT_SCALAR) {
      if (this.scalars < MAX_HELD) members.set(name, value);
      this.scalars++;
    } else if (this.places < MAX_PLACES) {
      members.set(name, value);
      this.places++;
    }
  }
}

/**
 * The original result as far as the streamed line lets it be known, for the typed-result policy:
 * the bounded result, with the structure's scalar members the budget had no room left for put back
 * from the capture, in the original's order. The budget decides in document order, so a required
 * `total` written after a long array is gone from the bounded result; with it back, the policy
 * can drop items to make room for it instead of withholding the result. Undefined when nothing
 * was captured or nothing is missing.
 */
export function structureAfterCut(bounded: Record<string, unknown>, captured: Record<string, unknown> | null | undefined): Record<string, unknown> | undefined {
  const sc = bounded.structuredContent;
  if (captured === null || captured === undefined || sc === null || typeof sc !== 'object' || Array.isArray(sc)) return undefined;
  const kept = sc as Record<string, unknown>;
  const entries: [string, unknown][] = [];
  let added = 0;
  for (const [k, v] of Object.entries(captured)) {
    if (Object.hasOwn(kept, k)) entries.push([k, kept[k]]);
    else if (k !== LONG_KEY && v !== NOT_SCALAR) {
      entries.push([k, v]);
      added++;
    }
  }
  if (added === 0) return undefined;
  for (const [k, v] of Object.entries(kept)) if (!Object.hasOwn(captured, k)) entries.push([k, v]);
  return { ...bounded, structuredContent: Object.fromEntries(entries) };
}

/** A key `JSON.parse` orders first: an array index (a canonical integer below 2^32 - 1). */
function isIndexKey(name: string): boolean {
  const c = name.charCodeAt(0);
  if (!isDigit(c) || name.length > 10) return false;
  const n = Number(name);
  return Number.isInteger(n) && n < 0xffffffff && String(n) === name;
}

/** A held value as `receiptOf` would judge it. */
function scalarOf(raw: Buffer): Scalar | typeof NOT_SCALAR {
  let v: unknown;
  try {
    v = JSON.parse(raw.toString('utf8'));
  } catch {
    return NOT_SCALAR;
  }
  if (typeof v === 'string') return v.length <= MAX_RECEIPT_STRING ? v : NOT_SCALAR;
  return v === null || typeof v === 'number' || typeof v === 'boolean' ? v : NOT_SCALAR;
}
