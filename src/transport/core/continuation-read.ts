/**
 * The reading tool's logic: one part of a stored original, sized to fit the budget. Given the
 * stored value, a JSON Pointer inside what the budget cut, and a position, the answer holds the
 * next window of a string (UTF-8 bytes, never splitting a character), the next items of an array
 * or the next members of an object, as many as fit; where it stops; whether the end was reached;
 * and the arguments of the next call (`next`): on in this value, into a child too large to send
 * whole, back up to the parent once a child is done, then on to the next cut part, until none is
 * left. Following `next` from the first cut part reads everything the budget cut, once.
 *
 * The original is read where it is held (`continuation-bytes.ts`): each answer walks from the
 * nearest mark to what it sends, so it costs about what it sends, whatever the original's size.
 */
import { BudgetError, fitsWithinBudget, type ReadStart, type ResolvedLimits } from '../../engine/index.js';
import { MAX_SEGMENTS, type JsonNode } from './continuation-bytes.js';
import { parsePointer, pointerSegment, windowEnd } from './continuation-plan.js';
import type { StoredResult } from './continuation-store.js';

type Json = Record<string, unknown>;

/** The arguments of a call to the reading tool. */
export interface ReadArguments {
  handle: string;
  path: string;
  position: number;
}

/** One answer of the reading tool (its `structuredContent`). */
export interface ReadAnswer {
  path: string;
  position: number;
  kind: 'string' | 'array' | 'object';
  text?: string;
  items?: unknown[];
  members?: { key: string; value: unknown }[];
  /** Where the next part of this value starts. */
  next_position: number;
  /** Bytes, items or members of this value in the original. */
  total: number;
  /** This value was read to its end. */
  done: boolean;
  /** The next call to make; absent once everything cut was read. */
  next?: ReadArguments;
}

function badRead(message: string, data: Record<string, unknown>): BudgetError {
  return new BudgetError('CONTINUATION_BAD_READ', message, data);
}

/** The tool result an answer is sent as: the structure, and its JSON as text for clients that show only text. */
export function readResult(answer: ReadAnswer): Json {
  return { content: [{ type: 'text', text: JSON.stringify(answer) }], structuredContent: answer };
}

/**
 * The next part of `entry`'s original at `path` from `position`, as large as fits `limits`.
 * `path` absent: the first cut part. Throws `CONTINUATION_BAD_READ` (what was wrong and what to
 * send instead) for a path outside what was cut, a position out of range or inside a character.
 */
export async function readPart(entry: StoredResult, path: string | undefined, position: number | undefined, limits: ResolvedLimits): Promise<ReadAnswer> {
  const first = entry.starts[0];
  if (path === undefined) {
    if (first === undefined) throw badRead('Nothing of this result was cut, so there is nothing to read.', {});
    return readPart(entry, first.path, position ?? first.position, limits);
  }
  // A path an answer can carry (its string bound), of no more segments than any depth bound allows.
  if (Buffer.byteLength(path) > limits.maxStringBytes || path.split('/').length > MAX_SEGMENTS + 1) {
    throw badRead(`\`path\` is longer than any part of this result can be named (${limits.maxStringBytes} bytes, ${MAX_SEGMENTS} segments); use a path a \`next\` or the report gave.`, { path: path.slice(0, 200) });
  }
  if (parsePointer(path) === undefined) {
    throw badRead(`\`path\` must be a JSON Pointer as the report or a \`next\` gives it (such as "/content/0/text"), got ${JSON.stringify(path.slice(0, 200))}.`, { path });
  }
  if (!(await inCutRegion(entry, path))) {
    throw badRead(`${JSON.stringify(path.slice(0, 200))} is not in what the budget cut from this result (the rest is in the result itself). Call with only the handle to start at the first cut part, or use a \`next\`.`, { path });
  }
  const node = await entry.reader.node(path);
  if (node === undefined) throw badRead(`The result holds no value at ${JSON.stringify(path.slice(0, 200))}.`, { path });
  const total = await entry.reader.size(node);
  const pos = position ?? 0;
  if (!Number.isSafeInteger(pos) || pos < 0 || pos > total) {
    throw badRead(`\`position\` must be a whole number from 0 to ${total} for this value, got ${String(position)}.`, { path, position, total });
  }
  if (node.kind === 'string') return readString(entry, node, pos, total, limits);
  if (node.kind === 'array' || node.kind === 'object') return readContainer(entry, node, pos, total, limits);
  throw badRead(`The value at ${JSON.stringify(path.slice(0, 200))} is a scalar, which the result itself shows whole.`, { path });
}

/** A path is a cut part's own path, or lies inside a cut part (its container's child from the part's position on). */
async function inCutRegion(entry: StoredResult, path: string, from = 0): Promise<boolean> {
  for (const s of entry.starts.slice(from)) {
    if (path === s.path) return true;
    const prefix = s.path + '/';
    if (!path.startsWith(prefix)) continue;
    const container = await entry.reader.node(s.path);
    if (container === undefined) continue;
    const segment = parsePointer('/' + path.slice(prefix.length).split('/')[0]!)![0]!;
    // Only children from the part's position on are in it: the search starts there.
    const child = await entry.reader.child(container, segment, container.kind === 'object' ? s.position : 0);
    if (child !== undefined && child.index >= s.position) return true;
  }
  return false;
}

function fits(answer: ReadAnswer, limits: ResolvedLimits): boolean {
  return fitsWithinBudget(readResult(answer), limits, 'result');
}

/**
 * Largest `n` in [0, hi] for which `ok(n)` holds, `ok` being true at 0 and monotone; within
 * `slack` of it (perf: each try of a long window serializes the whole answer, so a string window
 * is found to within 1/128 of the most that could fit, in about 8 tries rather than 17).
 */
function largest(hi: number, ok: (n: number) => boolean, slack = 0): number {
  let lo = 0;
  if (hi > 0 && ok(hi)) return hi;
  hi--;
  while (lo + slack < hi) {
    const mid = Math.ceil((lo + hi) / 2);
    if (ok(mid)) lo = mid;
    else hi = mid - 1;
  }
  return lo;
}

async function readString(entry: StoredResult, node: JsonNode, pos: number, total: number, limits: ResolvedLimits): Promise<ReadAnswer> {
  const path = node.path;
  // An answer's text is one string of the structure: never more than the string bound.
  // The answer's text block repeats it (its JSON): at most half the result bound.
  const most = Math.min(total - pos, limits.maxStringBytes, Math.floor(limits.maxResultBytes / 2));
  const s = await entry.reader.text(node, pos, most);
  if (s === undefined) {
    throw badRead(`\`position\` ${pos} is inside a character of the string at ${JSON.stringify(path.slice(0, 200))}; use a position an answer or the report gave.`, { path, position: pos });
  }
  // Perf: a window of well-formed text is cut by its UTF-8 bytes natively (a character's bytes are
  // never split: the cut backs off continuation bytes); text with a lone surrogate is walked.
  const utf8 = (s as unknown as { isWellFormed(): boolean }).isWellFormed() ? Buffer.from(s.length > 2 * most + 8 ? s.slice(0, 2 * most + 8) : s) : undefined;
  const windowOf = (n: number): { text: string; bytes: number } => {
    if (utf8 === undefined) {
      const w = windowEnd(s, 0, n);
      return { text: s.slice(0, w.end), bytes: w.bytes };
    }
    let cut = Math.min(n, utf8.length);
    while (cut > 0 && cut < utf8.length && (utf8[cut]! & 0xc0) === 0x80) cut--;
    return { text: utf8.toString('utf8', 0, cut), bytes: cut };
  };
  // Where reading goes once this string is done, needed only when this answer may reach its end.
  const done = most === total - pos ? await after(entry, path) : undefined;
  const answerOf = (n: number): ReadAnswer => {
    const w = windowOf(n);
    const end = pos + w.bytes;
    const part: ReadAnswer = { path, position: pos, kind: 'string', text: w.text, next_position: end, total, done: end === total };
    return withNext(entry, part, end > pos || pos === total, done);
  };
  const n = largest(most, (k) => fits(answerOf(k), limits), most >> 7);
  const answer = answerOf(n);
  if ((answer.next_position === pos && pos < total) || !fits(answer, limits)) throw tooSmall(path, limits);
  return answer;
}

async function readContainer(entry: StoredResult, node: JsonNode, pos: number, total: number, limits: ResolvedLimits): Promise<ReadAnswer> {
  const path = node.path;
  const array = node.kind === 'array';
  // The children that could fit: their raw bytes within the result bound, and the item or key count.
  // The answer's text block repeats them (its JSON): their bytes are at most half the result bound.
  const run = await entry.reader.children(node, pos, Math.floor(limits.maxResultBytes / 2), array ? limits.maxItems : limits.maxKeys);
  const reachesEnd = pos + run.values.length === total;
  const done = reachesEnd ? await after(entry, path) : undefined;
  // The child a read that cannot send it whole goes into: the one at `pos`.
  const into = array ? String(pos) : run.values.length > 0 ? run.keys[0] : run.stopped?.key;
  const answerOf = (n: number): ReadAnswer => {
    const part: ReadAnswer = array
      ? { path, position: pos, kind: 'array', items: run.values.slice(0, n), next_position: pos + n, total, done: pos + n === total }
      : { path, position: pos, kind: 'object', members: run.keys.slice(0, n).map((key, i) => ({ key, value: run.values[i] })), next_position: pos + n, total, done: pos + n === total };
    return withNext(entry, part, n > 0 || pos === total, done, into);
  };
  const n = largest(run.values.length, (k) => fits(answerOf(k), limits), run.values.length >> 7);
  const answer = answerOf(n);
  if (!fits(answer, limits)) throw tooSmall(path, limits);
  if (n === 0 && pos < total) {
    const first = run.values.length > 0 ? run.values[0] : undefined;
    const kind = run.values.length > 0 ? kindOfValue(first) : run.stopped?.kind;
    if (into === undefined || !(kind === 'string' || kind === 'array' || kind === 'object')) throw tooSmall(path, limits);
    // The run stopped at the child at `pos` itself: where it starts is known (otherwise the run read past it).
    if (run.values.length === 0 && run.stopped !== undefined) entry.reader.adopt(node, into, run.stopped.start, run.stopped.kind, pos);
  }
  return answer;
}

function kindOfValue(v: unknown): string {
  return typeof v === 'string' ? 'string' : Array.isArray(v) ? 'array' : v !== null && typeof v === 'object' ? 'object' : 'scalar';
}

function tooSmall(path: string, limits: ResolvedLimits): BudgetError {
  // Every text measure that can cut is named too: an answer's text is held to it.
  const measures = limits.textMeasures.map(({ measure: m }) => `, ${limits[m.limit]} ${m.what} (${m.limit})`).join('');
  return badRead(
    `A part of ${JSON.stringify(path.slice(0, 200))} cannot be answered within the budget (${limits.maxResultBytes} bytes, strings of ${limits.maxStringBytes}, ${limits.maxKeys} members${measures}): ` +
      'an answer needs 8 members, its path and a key whole. Raise the budget to read it.',
    {
      path,
      maxResultBytes: limits.maxResultBytes,
      maxStringBytes: limits.maxStringBytes,
      maxKeys: limits.maxKeys,
      ...Object.fromEntries(limits.textMeasures.map(({ measure: m }) => [m.limit, limits[m.limit]])),
    },
  );
}

/**
 * The answer with its `next`. `progressed`: this answer moved on (false: the child at the position
 * is too large to send whole, so the next call reads it part by part: `into` is its segment).
 * `done`: where reading goes once this value is done (when it may be).
 */
function withNext(entry: StoredResult, part: ReadAnswer, progressed: boolean, done: ReadStart | undefined, into?: string): ReadAnswer {
  const handle = entry.handle;
  if (!part.done) {
    if (progressed) return { ...part, next: { handle, path: part.path, position: part.next_position } };
    if (part.kind === 'string' || into === undefined) return part; // no room for a single character: refused by the caller
    return { ...part, next: { handle, path: `${part.path}/${pointerSegment(into)}`, position: 0 } };
  }
  return done === undefined ? part : { ...part, next: { handle, ...done } };
}

/** Where reading goes once the value at `path` is done: the parent's next child, or the next cut part. */
async function after(entry: StoredResult, path: string): Promise<ReadStart | undefined> {
  let p = path;
  for (;;) {
    const i = entry.starts.findIndex((s) => s.path === p);
    if (i >= 0) {
      // The cut parts do not overlap: a path that is one part's and lies in a later one names two
      // values (the server's result repeats a member name), and following it would go round.
      if (await inCutRegion(entry, p, i + 1)) {
        throw badRead(`${JSON.stringify(p.slice(0, 200))} names two values of this result (it repeats a member name), so its parts cannot be told apart by their path. Call the original tool again, asking for less.`, { path: p });
      }
      return entry.starts[i + 1];
    }
    const cut = p.lastIndexOf('/');
    if (cut < 0) return undefined;
    const parentPath = p.slice(0, cut);
    const parent = await entry.reader.node(parentPath);
    const node = await entry.reader.node(p);
    if (parent === undefined || node === undefined) return undefined;
    if (node.index + 1 < (await entry.reader.size(parent))) return { path: parentPath, position: node.index + 1 };
    p = parentPath;
  }
}
