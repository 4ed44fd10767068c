/**
 * The reading tool's logic: one part of a stored original, sized to fit the budget. Given the
 * stored value, a JSON Pointer inside what the budget cut, and a position, the answer holds the
 * next window of a string (UTF-8 bytes, never splitting a character), the next items of an array
 * or the next members of an object, as many as fit; where it stops; whether the end was reached;
 * and the arguments of the next call (`next`): on in this value, into a child too large to send
 * whole, back up to the parent once a child is done, then on to the next cut part, until none is
 * left. Following `next` from the first cut part reads everything the budget cut, once.
 */
import { BudgetError, fitsWithinBudget, type ReadStart, type ResolvedLimits } from '../../engine/index.js';
import { isObject, childOf, parsePointer, pointerSegment, sizeOf, unitAt, valueAt, windowEnd } from './continuation-plan.js';
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
export function readPart(entry: StoredResult, path: string | undefined, position: number | undefined, limits: ResolvedLimits): ReadAnswer {
  const first = entry.starts[0];
  if (path === undefined) {
    if (first === undefined) throw badRead('Nothing of this result was cut, so there is nothing to read.', {});
    return readPart(entry, first.path, position ?? first.position, limits);
  }
  if (parsePointer(path) === undefined) {
    throw badRead(`\`path\` must be a JSON Pointer as the report or a \`next\` gives it (such as "/content/0/text"), got ${JSON.stringify(path.slice(0, 200))}.`, { path });
  }
  if (!inCutRegion(entry, path)) {
    throw badRead(`${JSON.stringify(path.slice(0, 200))} is not in what the budget cut from this result (the rest is in the result itself). Call with only the handle to start at the first cut part, or use a \`next\`.`, { path });
  }
  const at = valueAt(entry.value, path);
  if (!at.found) throw badRead(`The result holds no value at ${JSON.stringify(path.slice(0, 200))}.`, { path });
  const v = at.value;
  const total = sizeOf(v);
  const pos = position ?? 0;
  if (!Number.isSafeInteger(pos) || pos < 0 || pos > total) {
    throw badRead(`\`position\` must be a whole number from 0 to ${total} for this value, got ${String(position)}.`, { path, position, total });
  }
  if (typeof v === 'string') return readString(entry, path, v, pos, limits);
  if (Array.isArray(v) || isObject(v)) return readContainer(entry, path, v, pos, limits);
  throw badRead(`The value at ${JSON.stringify(path.slice(0, 200))} is a ${v === null ? 'null' : typeof v}, which the result itself shows whole.`, { path });
}

/** A path is a cut part's own path, or lies inside a cut part (its container's child from the part's position on). */
function inCutRegion(entry: StoredResult, path: string): boolean {
  for (const s of entry.starts) {
    if (path === s.path) return true;
    const prefix = s.path + '/';
    if (!path.startsWith(prefix)) continue;
    const container = valueAt(entry.value, s.path);
    if (!container.found) continue;
    const segment = parsePointer('/' + path.slice(prefix.length).split('/')[0]!)![0]!;
    const index = indexOf(container.value, segment);
    if (index !== undefined && index >= s.position) return true;
  }
  return false;
}

/** A child's index in its container (array index, or member order). */
function indexOf(container: unknown, segment: string): number | undefined {
  if (!childOf(container, segment).found) return undefined;
  return Array.isArray(container) ? Number(segment) : Object.keys(container as Json).indexOf(segment);
}

function fits(answer: ReadAnswer, limits: ResolvedLimits): boolean {
  return fitsWithinBudget(readResult(answer), limits, 'result');
}

/** Largest `n` in [0, hi] for which `ok(n)` holds, `ok` being true at 0 and monotone. */
function largest(hi: number, ok: (n: number) => boolean): number {
  let lo = 0;
  while (lo < hi) {
    const mid = Math.ceil((lo + hi) / 2);
    if (ok(mid)) lo = mid;
    else hi = mid - 1;
  }
  return lo;
}

function readString(entry: StoredResult, path: string, s: string, pos: number, limits: ResolvedLimits): ReadAnswer {
  const total = Buffer.byteLength(s, 'utf8');
  const c = entry.cursor;
  const from = c !== undefined && c.path === path && c.bytes <= pos ? unitAt(s, pos, c.unit, c.bytes) : unitAt(s, pos);
  if (from === undefined) {
    throw badRead(`\`position\` ${pos} is inside a character of the string at ${JSON.stringify(path.slice(0, 200))}; use a position an answer or the report gave.`, { path, position: pos });
  }
  const answerOf = (n: number): ReadAnswer => {
    const w = windowEnd(s, from, n);
    const end = pos + w.bytes;
    return withNext(entry, { path, position: pos, kind: 'string', text: s.slice(from, w.end), next_position: end, total, done: end === total }, end > pos || pos === total);
  };
  const n = largest(Math.min(total - pos, limits.maxResultBytes), (k) => fits(answerOf(k), limits));
  const answer = answerOf(n);
  if ((answer.next_position === pos && pos < total) || !fits(answer, limits)) throw tooSmall(path, limits);
  entry.cursor = { path, bytes: answer.next_position, unit: from + answer.text!.length };
  return answer;
}

function readContainer(entry: StoredResult, path: string, v: unknown[] | Json, pos: number, limits: ResolvedLimits): ReadAnswer {
  const array = Array.isArray(v);
  const keys = array ? undefined : Object.keys(v);
  const total = array ? v.length : keys!.length;
  const child = (i: number): unknown => (array ? v[i] : (v as Json)[keys![i]!]);
  // A bound on how many could fit: sizes summed while under the result bound, and the item or key count.
  let hi = 0;
  let bytes = 0;
  const cap = array ? limits.maxItems : limits.maxKeys;
  while (pos + hi < total && hi < cap && bytes <= limits.maxResultBytes) {
    bytes += (JSON.stringify(child(pos + hi))?.length ?? 4) + (array ? 0 : keys![pos + hi]!.length);
    hi++;
  }
  const answerOf = (n: number): ReadAnswer => {
    const part: ReadAnswer = array
      ? { path, position: pos, kind: 'array', items: v.slice(pos, pos + n), next_position: pos + n, total, done: pos + n === total }
      : { path, position: pos, kind: 'object', members: keys!.slice(pos, pos + n).map((key) => ({ key, value: (v as Json)[key] })), next_position: pos + n, total, done: pos + n === total };
    return withNext(entry, part, n > 0 || pos === total);
  };
  const n = largest(hi, (k) => fits(answerOf(k), limits));
  const answer = answerOf(n);
  if (!fits(answer, limits)) throw tooSmall(path, limits);
  if (n === 0 && pos < total) {
    const c = child(pos);
    if (!(typeof c === 'string' || Array.isArray(c) || isObject(c))) throw tooSmall(path, limits);
  }
  return answer;
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
 * is too large to send whole, so the next call reads it part by part).
 */
function withNext(entry: StoredResult, part: ReadAnswer, progressed: boolean): ReadAnswer {
  const handle = entry.handle;
  if (!part.done) {
    if (progressed) return { ...part, next: { handle, path: part.path, position: part.next_position } };
    if (part.kind === 'string') return part; // no room for a single character: refused by the caller
    const container = valueAt(entry.value, part.path);
    const c = container.found ? container.value : undefined;
    const segment = Array.isArray(c) ? String(part.position) : pointerSegment(Object.keys(c as Json)[part.position]!);
    return { ...part, next: { handle, path: `${part.path}/${segment}`, position: 0 } };
  }
  const next = after(entry, part.path);
  return next === undefined ? part : { ...part, next: { handle, ...next } };
}

/** Where reading goes once the value at `path` is done: the parent's next child, or the next cut part. */
function after(entry: StoredResult, path: string): ReadStart | undefined {
  let p = path;
  for (;;) {
    const i = entry.starts.findIndex((s) => s.path === p);
    if (i >= 0) return entry.starts[i + 1];
    const cut = p.lastIndexOf('/');
    if (cut < 0) return undefined;
    const parentPath = p.slice(0, cut);
    const parent = valueAt(entry.value, parentPath);
    if (!parent.found) return undefined;
    const index = indexOf(parent.value, parsePointer('/' + p.slice(cut + 1))![0]!);
    if (index === undefined) return undefined;
    if (index + 1 < sizeOf(parent.value)) return { path: parentPath, position: index + 1 };
    p = parentPath;
  }
}
