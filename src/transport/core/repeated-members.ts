/**
 * Repeated classifying members at a JSON-RPC line's top level (`jsonrpc`, `id`, `result`, `error`,
 * `method`): parsers disagree on which one counts (`JSON.parse` takes the last, others the first),
 * so such a message means different things to different readers and the proxy never passes it.
 * This is the fast path's check, a scan of the top level alone of a line `JSON.parse` accepted
 * (values are passed over by the skip scanner); the streamed path notes repeats in the envelope
 * scan (envelope-scan.ts). The reading itself is the member scanner's (`member-scan.ts`); this file
 * holds the policy: which members classify, and where the ids are.
 */
import { Byte, endsScalar, MemberScanner, newSkipState, scanSkipSized, skipWs, type MemberPolicy, type SkipState, type ValueTake } from '../../engine/index.js';
import { isRequestId, type RequestId } from './request-ids.js';

/** Top-level members that say what a message is and whom it answers: a repeat makes it invalid. */
export const CLASSIFYING: ReadonlySet<string> = new Set(['jsonrpc', 'id', 'result', 'error', 'method']);

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


/** The classifying members: the k-th one's bit in {@link RepeatScan.seen} is `1 << k`. */
const NAMES: readonly string[] = [...CLASSIFYING];
const ID_BIT = 1 << NAMES.indexOf('id');
/** Raw bytes of the longest key that can name one: `jsonrpc` with every character `\u`-escaped. */
const MAX_NAME_RAW = 6 * 7;
/**
 * Keys longer than any classifying name are not read; nothing is held. Perf: the line is whole, so
 * a short rest of it is skipped in JavaScript (no window copied into WebAssembly memory).
 */
const SCAN_OPTIONS = Object.freeze({ maxKeyBytes: MAX_NAME_RAW, maxHeldBytes: 0, skip: scanSkipSized });

/**
 * The fast path's check of a whole line that `JSON.parse` accepted: for each message in it (the
 * line's one object, index 0, or a batch's elements by index), the classifying member its top level
 * repeats, if any. Undefined when no message repeats one (the usual answer, at the cost of reading
 * the top level: member values are passed over by the skip scanner, none is held).
 */
export function repeatedMembers(line: Buffer): Map<number, RepeatedMember> | undefined {
  let i = skipWs(line, 0);
  if (line[i] === Byte.OpenBrace) {
    const r = new RepeatScan(line).repeated();
    return r === undefined ? undefined : new Map([[0, r]]);
  }
  if (line[i] !== Byte.OpenBracket) return undefined;
  let found: Map<number, RepeatedMember> | undefined;
  const skip = newSkipState(false, false);
  i = skipWs(line, i + 1);
  for (let index = 0; i < line.length && line[i] !== Byte.CloseBracket; index++) {
    const end = valueEnd(line, i, skip);
    if (end <= i) break; // not JSON after all: nothing more to read
    // An object element is read twice (delimited, then its members): batches are rare.
    if (line[i] === Byte.OpenBrace) {
      const r = new RepeatScan(line.subarray(i, end)).repeated();
      if (r !== undefined) (found ??= new Map()).set(index, r);
    }
    i = skipWs(line, end);
    if (line[i] === Byte.Comma) i = skipWs(line, i + 1);
  }
  return found;
}

/**
 * One message (a JSON object) read by the member scanner. The policy: top-level keys only (no
 * value is entered or held), the first classifying member named twice, and where the first and
 * the last `id` values lie.
 */
class RepeatScan implements MemberPolicy {
  private readonly scan: MemberScanner;
  /** Classifying members seen, a bit each. */
  seen = 0;
  /** The first classifying member repeated. */
  member: string | undefined = undefined;
  /** The member being read is an `id`. */
  isId = false;
  firstId = -1;
  firstIdEnd = -1;
  lastId = -1;
  lastIdEnd = -1;

  constructor(private readonly message: Buffer) {
    this.scan = new MemberScanner(this, SCAN_OPTIONS);
    this.scan.push(message);
    this.scan.end();
  }

  /** The first repeated classifying member and the ids a parser could read the message with, or undefined. */
  repeated(): RepeatedMember | undefined {
    if (this.member === undefined) return undefined;
    const ids: RequestId[] = [];
    for (const [from, to] of [[this.firstId, this.firstIdEnd], [this.lastId, this.lastIdEnd]] as const) {
      if (from < 0) continue;
      const id = JSON.parse(this.message.toString('utf8', from, to)) as unknown;
      if (isRequestId(id) && !ids.some((known) => Object.is(known, id))) ids.push(id);
    }
    return { member: this.member, ids };
  }

  key(name: string | undefined): void {
    // Perf: five short names compared, cheaper than hashing a key built for this call.
    const k = name === undefined ? -1 : NAMES.indexOf(name);
    const bit = k < 0 ? 0 : 1 << k;
    if ((this.seen & bit) !== 0) this.member ??= name;
    this.seen |= bit;
    this.isId = bit === ID_BIT;
  }

  value(): ValueTake {
    return 'pass';
  }

  valueEnd(): void {
    if (!this.isId) return;
    const span = this.scan.span;
    if (this.firstId < 0) {
      this.firstId = span.valueStart;
      this.firstIdEnd = span.valueEnd;
    }
    this.lastId = span.valueStart;
    this.lastIdEnd = span.valueEnd;
    this.isId = false;
  }
}

/** The index after the value starting at `i` (-1 or less when it does not end: not JSON). */
function valueEnd(line: Buffer, i: number, skip: SkipState): number {
  const c = line[i];
  if (c === Byte.Quote || c === Byte.OpenBrace || c === Byte.OpenBracket) {
    skip.depth = 0;
    skip.inString = false;
    skip.escape = false;
    return scanSkipSized(line, i, skip);
  }
  let j = i;
  while (j < line.length && !endsScalar(line[j]!)) j++;
  return j;
}
