/**
 * A streaming scan of a JSON-RPC envelope's top level: which keys it has and the value of its
 * top-level `id`, read from bytes in any chunking without holding the line. It tracks only
 * depth, strings and escapes, so a nested `"id"` (inside `params`, `result`, an argument) is never
 * taken for the envelope's. Used where a line is too long to parse whole: refusing an oversized
 * request with the right id, and streaming a huge response whose id may be of any length.
 *
 * Like `JSON.parse`, the last top-level `id` wins. The scan is lenient: it does not validate the
 * JSON, it only reads what a parser would read if the JSON were valid.
 *
 * Every top-level key is noted, wherever it comes: a line is classified by all of its keys
 * (`classifyEnvelope`), never by the first one, since a response may carry `method` or `params`
 * after (or before) a huge `result`.
 */
import { newSkipState, scanSkipBest, SKIP_MORE, type SkipState } from '../engine/index.js';
import type { RequestId } from './request-ids.js';

/** What the top level of a line turned out to be. */
export type EnvelopeShape = 'empty' | 'object' | 'array' | 'other';

/**
 * The state of the top-level `id`: absent, read whole (`value` holds it), `null`, something that
 * is not an id (object, array, boolean, bad JSON), or longer than the scan was allowed to hold.
 */
export type IdState = 'absent' | 'value' | 'null' | 'invalid' | 'too-long';

/** What a scan learned, readable at any time (final once the line has ended). */
export interface EnvelopeFacts {
  shape: EnvelopeShape;
  idState: IdState;
  /** The id, when `idState` is `value` (a string, or a number as `JSON.parse` reads it). */
  id: RequestId | undefined;
  /** Top-level keys seen that classify a message. */
  hasMethod: boolean;
  hasResult: boolean;
  hasError: boolean;
  /** The scan met a stray closing bracket: not JSON, and nothing after it was read. */
  broken: boolean;
}

/** Top-level members passed on by an emitting scan (a response's standard members). */
const PASSED = new Set(['jsonrpc', 'result', 'error']);

/** Longest raw key read at the top level: `"id"` with every character `\u`-escaped is 12 bytes. */
const MAX_KEY_BYTES = 64;
const QUOTE = 0x22;
const BACKSLASH = 0x5c;

const enum At {
  Start,
  Key,
  InKey,
  Colon,
  Value,
  /** Inside a top-level string or container value: the engine's skip scanner finds its end. */
  Skipping,
  /** Inside a top-level scalar (number, true, false, null). */
  InScalar,
  AfterValue,
  Done,
}

/** Bytes that end a scalar. */
function endsScalar(c: number): boolean {
  return c === 0x2c || c === 0x7d || c === 0x5d || c === 0x20 || c === 0x0a || c === 0x0d || c === 0x09;
}

function isSpace(c: number): boolean {
  return c === 0x20 || c === 0x0a || c === 0x0d || c === 0x09;
}

/**
 * Feed bytes with `push`; read `facts` when the line is over. With `emit`, `push` also passes on
 * the line as a response envelope: its first `jsonrpc`, `result` and `error` members and one `id`
 * of `0`, re-keyed, and no other member. The budget that follows then sees an id of constant size
 * whatever the peer sent (the real id is put back from `facts`), and never a member that would
 * make it refuse a response (`method`, `params`) or that a response drops anyway (extra keys).
 * Whether the line is a response at all is decided from `facts` once it has ended.
 */
export class EnvelopeScanner {
  readonly facts: EnvelopeFacts = {
    shape: 'empty',
    idState: 'absent',
    id: undefined,
    hasMethod: false,
    hasResult: false,
    hasError: false,
    broken: false,
  };
  private at = At.Start;
  private escaped = false;
  private skip: SkipState = newSkipState(false, false);
  private key: number[] = [];
  private keyTooLong = false;
  /** The value being read belongs to a top-level `id`. */
  private isId = false;
  private idBytes: Buffer[] = [];
  private idLength = 0;
  private idOver = false;
  /** The emitting scan: the current value is passed on, and how many members were. */
  private passing = false;
  private emitted = new Set<string>();
  /** Bytes after the top level closed (or of a line that is not an object) are passed on raw. */
  private tailRaw = false;

  /** @param maxIdBytes longest raw id held (longer ones are `too-long`). */
  constructor(private readonly maxIdBytes: number) {}

  /** The scan has nothing more to learn (the top level closed, or is not an object). */
  get done(): boolean {
    return this.at === At.Done;
  }

  push(chunk: Buffer, emit?: (piece: Buffer) => void): void {
    this.chunk = chunk;
    // Start of the range being passed on in this chunk (-1: none).
    let from = this.passing || this.tailRaw ? 0 : -1;
    const flush = (to: number): void => {
      if (from >= 0 && to > from) emit!(chunk.subarray(from, to));
      from = -1;
    };
    const put = (text: string): void => emit!(Buffer.from(text));
    let i = 0;
    const n = chunk.length;
    while (i < n && this.at !== At.Done) {
      const c = chunk[i]!;
      switch (this.at) {
        case At.Start:
          if (isSpace(c)) break;
          if (c === 0x7b) {
            this.facts.shape = 'object';
            this.at = At.Key;
            if (emit !== undefined) put('{');
          } else {
            this.facts.shape = c === 0x5b ? 'array' : 'other';
            this.at = At.Done;
            this.raw(emit, i, (at) => (from = at));
            continue;
          }
          break;
        case At.Key:
          if (c === QUOTE) {
            this.at = At.InKey;
            this.key = [];
            this.keyTooLong = false;
          } else if (c === 0x7d) {
            this.closeTop(emit, i, (at) => (from = at));
            continue;
          }
          break;
        case At.InKey:
          if (this.escaped) this.escaped = false;
          else if (c === BACKSLASH) this.escaped = true;
          else if (c === QUOTE) {
            this.at = At.Colon;
            break;
          }
          if (this.key.length < MAX_KEY_BYTES) this.key.push(c);
          else this.keyTooLong = true;
          break;
        case At.Colon:
          if (c === 0x3a) {
            this.at = At.Value;
            const name = this.keyName();
            this.startValue(name);
            if (emit !== undefined) this.passing = this.openMember(name, put);
          }
          break;
        case At.Value:
          if (isSpace(c)) break;
          if (this.isId) {
            if (emit !== undefined && this.passing) put('0');
            this.passing = false;
            this.idBytes = [];
            this.idLength = 0;
            this.idOver = false;
          }
          // A passed value starts here (bytes before it, and an id's, are not passed).
          from = this.passing ? i : -1;
          // A string or container is skipped from its first byte; a scalar is read here.
          if (c === QUOTE || c === 0x7b || c === 0x5b) {
            this.at = At.Skipping;
            this.skip = newSkipState(false, false);
          } else {
            this.at = At.InScalar;
          }
          continue;
        case At.Skipping: {
          // Perf: the skip scanner tracks only strings, escapes and depth (SIMD where available).
          const end = scanSkipBest(chunk, i, this.skip);
          if (end === SKIP_MORE) {
            this.collect(i, n);
            i = n;
            continue;
          }
          if (end < 0) {
            // A stray closing bracket: not JSON; nothing more can be read reliably.
            if (this.isId) this.facts.idState = 'invalid';
            this.facts.broken = true;
            this.isId = false;
            this.at = At.Done;
            continue;
          }
          this.collect(i, end);
          i = end;
          this.endValue();
          flush(i);
          continue;
        }
        case At.InScalar:
          if (endsScalar(c)) {
            this.endValue();
            flush(i);
            continue; // the delimiter is read again after the value
          }
          this.collect(i, i + 1);
          break;
        case At.AfterValue:
          if (c === 0x2c) this.at = At.Key;
          else if (c === 0x7d) {
            this.closeTop(emit, i, (at) => (from = at));
            continue;
          }
          break;
      }
      i++;
    }
    if (emit !== undefined) flush(n);
    this.chunk = EMPTY;
  }

  /** The top level closed at `i`: the brace and whatever follows pass on raw. */
  private closeTop(emit: ((piece: Buffer) => void) | undefined, i: number, setFrom: (at: number) => void): void {
    this.at = At.Done;
    this.raw(emit, i, setFrom);
  }

  /** From `i` on, bytes pass on as they are (the budget then judges them). */
  private raw(emit: ((piece: Buffer) => void) | undefined, i: number, setFrom: (at: number) => void): void {
    if (emit === undefined) return;
    this.tailRaw = true;
    setFrom(i);
  }

  /** An emitting scan starts a member: write its key if it is passed on, and say so. */
  private openMember(name: string | undefined, put: (text: string) => void): boolean {
    if (name === undefined || (name !== 'id' && !PASSED.has(name)) || this.emitted.has(name)) return false;
    put(`${this.emitted.size > 0 ? ',' : ''}${JSON.stringify(name)}:`);
    this.emitted.add(name);
    return true;
  }

  /** The line is over: an id still being read (a number at the very end) is complete. */
  end(): EnvelopeFacts {
    if (this.isId && this.inValue()) {
      if (this.at === At.InScalar) this.finishId();
      else this.facts.idState = 'invalid'; // cut inside a string or container
      this.isId = false;
    }
    return this.facts;
  }

  private chunk: Buffer = EMPTY;

  private inValue(): boolean {
    return this.at === At.Skipping || this.at === At.InScalar;
  }

  private keyName(): string | undefined {
    if (this.keyTooLong) return undefined;
    try {
      return JSON.parse(`"${Buffer.from(this.key).toString('utf8')}"`) as string;
    } catch {
      return undefined;
    }
  }

  private startValue(name: string | undefined): void {
    this.isId = name === 'id';
    if (name === 'method') this.facts.hasMethod = true;
    else if (name === 'result') this.facts.hasResult = true;
    else if (name === 'error') this.facts.hasError = true;
  }

  /** Hold bytes of an id value, up to the cap. */
  private collect(from: number, to: number): void {
    if (!this.isId || this.idOver || to <= from) return;
    this.idLength += to - from;
    if (this.idLength > this.maxIdBytes) {
      this.idOver = true;
      this.idBytes = [];
      return;
    }
    this.idBytes.push(Buffer.from(this.chunk.subarray(from, to)));
  }

  /** A value has just ended. */
  private endValue(): void {
    if (this.isId) this.finishId();
    this.isId = false;
    this.passing = false;
    this.at = At.AfterValue;
  }

  private finishId(): void {
    const f = this.facts;
    f.id = undefined;
    if (this.idOver) {
      f.idState = 'too-long';
      return;
    }
    let v: unknown;
    try {
      v = JSON.parse(Buffer.concat(this.idBytes).toString('utf8'));
    } catch {
      f.idState = 'invalid';
      return;
    }
    this.idBytes = [];
    if (v === null) f.idState = 'null';
    else if (typeof v === 'string' || (typeof v === 'number' && Number.isFinite(v))) {
      f.idState = 'value';
      f.id = v;
    } else f.idState = 'invalid';
  }
}

const EMPTY = Buffer.alloc(0);
