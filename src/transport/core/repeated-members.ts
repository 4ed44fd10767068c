/**
 * Repeated classifying members at a JSON-RPC line's top level (`jsonrpc`, `id`, `result`, `error`,
 * `method`): parsers disagree on which one counts (`JSON.parse` takes the last, others the first),
 * so such a message means different things to different readers and the proxy never passes it.
 * This is the fast path's check, a scan of the top level alone of a line `JSON.parse` accepted
 * (values are passed over by the skip scanner); the streamed path notes repeats in the envelope
 * scan (envelope-scan.ts).
 */
import { Byte, endsScalar, newSkipState, scanSkipBest, scanSkipJs, skipWs } from '../../engine/index.js';
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
  let i = skipWs(line, 0);
  if (line[i] === Byte.OpenBrace) {
    const r = repeatIn(line, i);
    return r === undefined ? undefined : new Map([[0, r]]);
  }
  if (line[i] !== Byte.OpenBracket) return undefined;
  let found: Map<number, RepeatedMember> | undefined;
  i = skipWs(line, i + 1);
  for (let index = 0; i < line.length && line[i] !== Byte.CloseBracket; index++) {
    // An object element is read twice (its members, then its end): batches are rare.
    if (line[i] === Byte.OpenBrace) {
      const r = repeatIn(line, i);
      if (r !== undefined) (found ??= new Map()).set(index, r);
    }
    const end = valueEnd(line, i);
    if (end <= i) break; // not JSON after all: nothing more to read
    i = skipWs(line, end);
    if (line[i] === Byte.Comma) i = skipWs(line, i + 1);
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
  let i = skipWs(line, at + 1);
  while (line[i] === Byte.Quote) {
    const keyEnd = stringEnd(line, i);
    if (keyEnd <= i) break;
    const named = classifyingKey(line, i, keyEnd);
    i = skipWs(line, skipWs(line, keyEnd) + 1); // past the colon
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
    i = skipWs(line, end);
    if (line[i] !== Byte.Comma) break;
    i = skipWs(line, i + 1);
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
    if (line[k] === Byte.Backslash) {
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
  if (c === Byte.Quote) return stringEnd(line, i);
  if (c === Byte.OpenBrace || c === Byte.OpenBracket) return skipValue(line, i);
  let j = i;
  while (j < line.length && !endsScalar(line[j]!)) j++;
  return j;
}

/** The index after the string whose opening quote is at `i`. */
function stringEnd(line: Buffer, i: number): number {
  // Perf: most strings at the top level are short (a version, an id, a key) and read here; a long
  // one is passed over by the skip scanner.
  const stop = Math.min(line.length, i + 64);
  for (let j = i + 1; j < stop; j++) {
    const c = line[j];
    if (c === Byte.Backslash) j++;
    else if (c === Byte.Quote) return j + 1;
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
