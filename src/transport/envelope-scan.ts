/**
 * A streaming scan of a JSON-RPC envelope's top level: which keys it has and the value of its
 * top-level `id`, read from bytes in any chunking without holding the line. It tracks only
 * depth, strings and escapes, so a nested `"id"` (inside `params`, `result`, an argument) is never
 * taken for the envelope's. Used where a line is too long to parse whole: refusing an oversized
 * request with the right id, and streaming a huge response whose id may be of any length.
 *
 * Like `JSON.parse`, the last top-level `id` wins. The scan is lenient: it does not validate the
 * JSON, it only reads what a parser would read if the JSON were valid. The reading itself is the
 * member scanner's (`member-scan.ts`); this file holds the policy: which keys, the id, what passes.
 *
 * Every top-level key is noted, wherever it comes: a line is classified by all of its keys
 * (`classifyEnvelope`), never by the first one, since a response may carry `method` or `params`
 * after (or before) a huge `result`.
 *
 * A repeated classifying member (`jsonrpc`, `id`, `result`, `error`, `method`) is noted too: parsers
 * disagree on which one counts (`JSON.parse` takes the last, others the first), so such a message
 * means different things to different readers and the proxy never passes it. The streamed path
 * reads it from {@link EnvelopeFacts.repeated}; the fast path, whose lines are parsed whole, from
 * {@link repeatedMembers}, a scan of the top level alone (values are passed over by the skip
 * scanner), run on every line that `JSON.parse` accepted.
 */
import { newSkipState, scanSkipBest, scanSkipJs } from '../engine/index.js';
import { MemberScanner, type MemberPolicy, type TopShape, type ValueTake } from './member-scan.js';
import { isRequestId, type RequestId } from './request-ids.js';

/** What the top level of a line turned out to be. */
export type EnvelopeShape = TopShape;

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
  /** The first classifying member the top level repeats (`jsonrpc`, `id`, `result`, `error`, `method`). */
  repeated: string | undefined;
  /** The first top-level id, when the top level repeats `id` and that one was read whole as an id. */
  firstId: RequestId | undefined;
  /** The scan met a stray closing bracket: not JSON, and nothing after it was read. */
  broken: boolean;
}

/** Top-level members that say what a message is and whom it answers: a repeat makes it invalid. */
const CLASSIFYING: ReadonlySet<string> = new Set(['jsonrpc', 'id', 'result', 'error', 'method']);

/** Top-level members passed on by an emitting scan (a response's standard members). */
const PASSED = new Set(['jsonrpc', 'result', 'error']);

/** Longest raw key read at the top level: `"id"` with every character `\u`-escaped is 12 bytes. */
const MAX_KEY_BYTES = 64;

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
    repeated: undefined,
    firstId: undefined,
    broken: false,
  };
  private readonly scan: MemberScanner;
  /** The key of the member being read. */
  private name: string | undefined;
  /** The value being read is a top-level `id`. */
  private isId = false;
  /** Classifying members seen (for {@link EnvelopeFacts.repeated}). */
  private readonly seen = new Set<string>();
  /** Top-level ids ended so far. */
  private ids = 0;
  /** The emitting scan: the current member is passed on, and which members were. */
  private passing = false;
  private emitted = new Set<string>();
  /** Bytes after the top level closed (or of a line that is not an object) are passed on raw. */
  private tailRaw = false;
  /** Where passed bytes go during a `push` (undefined: a scan that only reads). */
  private emit: ((piece: Buffer) => void) | undefined;

  /** @param maxIdBytes longest raw id held (longer ones are `too-long`). */
  constructor(maxIdBytes: number) {
    this.scan = new MemberScanner(this.policy, { maxKeyBytes: MAX_KEY_BYTES, maxHeldBytes: maxIdBytes });
  }

  /** The scan has nothing more to learn (the top level closed, or is not an object). */
  get done(): boolean {
    return this.scan.done;
  }

  push(chunk: Buffer, emit?: (piece: Buffer) => void): void {
    if (this.tailRaw) {
      if (emit !== undefined && chunk.length > 0) emit(chunk);
      return;
    }
    this.emit = emit;
    this.scan.push(chunk);
    this.emit = undefined;
    if (this.scan.broken && !this.facts.broken) {
      // A stray closing bracket: not JSON; nothing more can be read reliably.
      if (this.isId) this.facts.idState = 'invalid';
      this.facts.broken = true;
      this.isId = false;
    }
  }

  /** The line is over: an id still being read (a number at the very end) is complete. */
  end(): EnvelopeFacts {
    this.scan.end(); // ends a scalar cut by the end of the line: `valueEnd` reads the id
    if (this.isId) {
      this.facts.idState = 'invalid'; // cut inside a string or container
      this.isId = false;
    }
    return this.facts;
  }

  private readonly policy: MemberPolicy = {
    begin: (shape, rest) => {
      this.facts.shape = shape;
      if (shape === 'object') this.emit?.(Buffer.from('{'));
      else this.passRaw(rest);
    },
    key: (name) => {
      this.name = name;
      if (name !== undefined && CLASSIFYING.has(name)) {
        if (this.seen.has(name)) this.facts.repeated ??= name;
        else this.seen.add(name);
      }
      if (name === 'method') this.facts.hasMethod = true;
      else if (name === 'result') this.facts.hasResult = true;
      else if (name === 'error') this.facts.hasError = true;
      if (this.emit !== undefined) this.passing = this.openMember(name);
    },
    value: (): ValueTake => {
      this.isId = this.name === 'id';
      if (!this.isId) return this.passing ? 'stream' : 'pass';
      // The id is held, never passed: the budget sees `0` in its place.
      if (this.passing) this.emit?.(Buffer.from('0'));
      this.passing = false;
      return 'hold';
    },
    piece: (bytes) => this.emit?.(bytes),
    valueEnd: (held) => {
      if (this.isId) this.finishId(held);
      this.isId = false;
      this.passing = false;
    },
    close: (rest) => this.passRaw(rest),
  };

  /** From `rest` on, bytes pass on as they are (the budget then judges them). */
  private passRaw(rest: Buffer): void {
    if (this.emit === undefined) return;
    this.tailRaw = true;
    if (rest.length > 0) this.emit(rest);
  }

  /** An emitting scan starts a member: write its key if it is passed on, and say so. */
  private openMember(name: string | undefined): boolean {
    if (name === undefined || (name !== 'id' && !PASSED.has(name)) || this.emitted.has(name)) return false;
    this.emit!(Buffer.from(`${this.emitted.size > 0 ? ',' : ''}${JSON.stringify(name)}:`));
    this.emitted.add(name);
    return true;
  }

  /** An id value ended: `held` is its raw text, undefined when longer than the scan may hold. */
  private finishId(held: Buffer | undefined): void {
    const f = this.facts;
    if (this.ids++ === 1 && f.idState === 'value') f.firstId = f.id; // a second id: keep the first
    f.id = undefined;
    if (held === undefined) {
      f.idState = 'too-long';
      return;
    }
    let v: unknown;
    try {
      v = JSON.parse(held.toString('utf8'));
    } catch {
      f.idState = 'invalid';
      return;
    }
    if (v === null) f.idState = 'null';
    else if (typeof v === 'string' || (typeof v === 'number' && Number.isFinite(v))) {
      f.idState = 'value';
      f.id = v;
    } else f.idState = 'invalid';
  }
}

/** Why a message whose top level repeats `member` is not passed on. */
export function repeatWhy(member: string): string {
  return `it repeats the top-level member \`${member}\`, which parsers read differently`;
}

/** A message whose top level repeats a classifying member, and the ids a parser could read it with. */
export interface RepeatedMember {
  /** The first classifying member repeated. */
  member: string;
  /** The first top-level id (where the first wins) and the last (as `JSON.parse` reads it), as far as they are ids; each once. */
  ids: RequestId[];
}

const QUOTE = 0x22;
const BACKSLASH = 0x5c;
const OPEN_BRACE = 0x7b;
const CLOSE_BRACE = 0x7d;
const OPEN_BRACKET = 0x5b;
const CLOSE_BRACKET = 0x5d;
const COMMA = 0x2c;

/** The classifying members' names as bytes, and their bits in {@link repeatIn}. */
const NAMES: readonly { name: string; bytes: Buffer; bit: number }[] = [...CLASSIFYING].map((name, k) => ({ name, bytes: Buffer.from(name), bit: 1 << k }));
/** Raw bytes of the longest key that can name one: `jsonrpc` with every character `\u`-escaped. */
const MAX_NAME_RAW = 6 * 7;
/** Perf: one skip state reused by {@link repeatedMembers} (a call never nests in another). */
const skip = newSkipState(false, false);
/**
 * Perf: below this many bytes to the end of the line the JavaScript skip scanner is faster than the
 * SIMD one, which first copies its input into WebAssembly memory (1 KB: 0.15 vs 0.28 us; 16 KB:
 * 10.5 vs 2.1 us, measured on a result line).
 */
const SHORT_SKIP_BYTES = 2048;

/**
 * The fast path's check of a whole line that `JSON.parse` accepted: for each message in it (the
 * line's one object, index 0, or a batch's elements by index), the classifying member its top level
 * repeats, if any. Undefined when no message repeats one (the usual answer, at the cost of reading
 * the top level: member values are passed over by the skip scanner, nothing is allocated).
 */
export function repeatedMembers(line: Buffer): Map<number, RepeatedMember> | undefined {
  let i = skipSpace(line, 0);
  if (line[i] === OPEN_BRACE) {
    const r = repeatIn(line, i);
    return r === undefined ? undefined : new Map([[0, r]]);
  }
  if (line[i] !== OPEN_BRACKET) return undefined;
  let found: Map<number, RepeatedMember> | undefined;
  i = skipSpace(line, i + 1);
  for (let index = 0; i < line.length && line[i] !== CLOSE_BRACKET; index++) {
    // An object element is read twice (its members, then its end): batches are rare.
    if (line[i] === OPEN_BRACE) {
      const r = repeatIn(line, i);
      if (r !== undefined) (found ??= new Map()).set(index, r);
    }
    const end = valueEnd(line, i);
    if (end <= i) break; // not JSON after all: nothing more to read
    i = skipSpace(line, end);
    if (line[i] === COMMA) i = skipSpace(line, i + 1);
  }
  return found;
}

/** The object at `at` (valid JSON): its first repeated classifying member and its ids, or undefined. */
function repeatIn(line: Buffer, at: number): RepeatedMember | undefined {
  let seen = 0;
  let member: string | undefined;
  let firstId = -1;
  let firstIdEnd = -1;
  let lastId = -1;
  let lastIdEnd = -1;
  let i = skipSpace(line, at + 1);
  while (line[i] === QUOTE) {
    const keyEnd = stringEnd(line, i);
    if (keyEnd <= i) break;
    const named = classifyingKey(line, i, keyEnd);
    i = skipSpace(line, skipSpace(line, keyEnd) + 1); // past the colon
    const end = valueEnd(line, i);
    if (end <= i) break; // not JSON after all: nothing more to read
    if (named !== undefined) {
      if ((seen & named.bit) !== 0) member ??= named.name;
      seen |= named.bit;
      if (named.name === 'id') {
        if (firstId < 0) {
          firstId = i;
          firstIdEnd = end;
        }
        lastId = i;
        lastIdEnd = end;
      }
    }
    i = skipSpace(line, end);
    if (line[i] !== COMMA) break;
    i = skipSpace(line, i + 1);
  }
  if (member === undefined) return undefined;
  const ids: RequestId[] = [];
  for (const [from, to] of [[firstId, firstIdEnd], [lastId, lastIdEnd]] as const) {
    if (from < 0) continue;
    const id = JSON.parse(line.toString('utf8', from, to)) as unknown;
    if (isRequestId(id) && !ids.some((known) => Object.is(known, id))) ids.push(id);
  }
  return { member, ids };
}

/** Which classifying member the key from quote `from` to after its closing quote `to` names, if any. */
function classifyingKey(line: Buffer, from: number, to: number): (typeof NAMES)[number] | undefined {
  const start = from + 1;
  const length = to - 1 - start;
  if (length < 2 || length > MAX_NAME_RAW) return undefined;
  // Perf: a plain key is compared by its bytes; only a key with an escape is decoded.
  for (let k = start; k < start + length; k++) {
    if (line[k] === BACKSLASH) {
      const name = JSON.parse(line.toString('utf8', from, to)) as string;
      return NAMES.find((n) => n.name === name);
    }
  }
  for (const n of NAMES) {
    if (n.bytes.length !== length) continue;
    let k = 0;
    while (k < length && line[start + k] === n.bytes[k]) k++;
    if (k === length) return n;
  }
  return undefined;
}

/** The index after the value starting at `i` (-1 or less when it does not end: not JSON). */
function valueEnd(line: Buffer, i: number): number {
  const c = line[i];
  if (c === QUOTE) return stringEnd(line, i);
  if (c === OPEN_BRACE || c === OPEN_BRACKET) return skipValue(line, i);
  let j = i;
  while (j < line.length && !isDelimiter(line[j]!)) j++;
  return j;
}

/** The index after the string whose opening quote is at `i`. */
function stringEnd(line: Buffer, i: number): number {
  // Perf: most strings at the top level are short (a version, an id, a key) and read here; a long
  // one is passed over by the skip scanner.
  const stop = Math.min(line.length, i + 64);
  for (let j = i + 1; j < stop; j++) {
    const c = line[j];
    if (c === BACKSLASH) j++;
    else if (c === QUOTE) return j + 1;
  }
  return skipValue(line, i);
}

/** The skip scanner from byte `i` (a quote or an opening bracket) to after the value's end. */
function skipValue(line: Buffer, i: number): number {
  skip.depth = 0;
  skip.inString = false;
  skip.escape = false;
  return line.length - i < SHORT_SKIP_BYTES ? scanSkipJs(line, i, skip) : scanSkipBest(line, i, skip);
}

function skipSpace(line: Buffer, i: number): number {
  while (i < line.length) {
    const c = line[i]!;
    if (c !== 0x20 && c !== 0x0a && c !== 0x0d && c !== 0x09) break;
    i++;
  }
  return i;
}

function isDelimiter(c: number): boolean {
  return c === COMMA || c === CLOSE_BRACE || c === CLOSE_BRACKET || c === 0x20 || c === 0x0a || c === 0x0d || c === 0x09;
}
