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
import { MemberScanner, type MemberPolicy, type SkipState, type TopShape, type ValueTake } from '../../engine/index.js';
import { isRequestId, type RequestId } from './request-ids.js';
import { CLASSIFYING } from './repeated-members.js';

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
  /** Where a passed member's object or array value goes during a `push`, if its reader finds its end. */
  private hand: ((bytes: Buffer, st: SkipState) => number) | undefined;

  /** @param maxIdBytes longest raw id held (longer ones are `too-long`). */
  constructor(maxIdBytes: number) {
    this.scan = new MemberScanner(this.policy, { maxKeyBytes: MAX_KEY_BYTES, maxHeldBytes: maxIdBytes });
  }

  /** The scan has nothing more to learn (the top level closed, or is not an object). */
  get done(): boolean {
    return this.scan.done;
  }

  /**
   * With `hand`, a passed member's object or array value goes to it instead of `emit` (the
   * {@link MemberPolicy.hand} contract: it says where the value ends, or gives it back); a line's
   * every push must then give it.
   */
  push(chunk: Buffer, emit?: (piece: Buffer) => void, hand?: (bytes: Buffer, st: SkipState) => number): void {
    if (this.tailRaw) {
      if (emit !== undefined && chunk.length > 0) emit(chunk);
      return;
    }
    this.emit = emit;
    this.hand = emit === undefined ? undefined : hand;
    this.scan.push(chunk);
    this.emit = undefined;
    this.hand = undefined;
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
      if (!this.isId) return !this.passing ? 'pass' : this.hand !== undefined ? 'hand' : 'stream';
      // The id is held, never passed: the budget sees `0` in its place.
      if (this.passing) this.emit?.(Buffer.from('0'));
      this.passing = false;
      return 'hold';
    },
    piece: (bytes) => this.emit?.(bytes),
    hand: (bytes, st) => this.hand!(bytes, st),
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
