/**
 * Where a cut result's missing parts start, found by comparing the original with what the budget
 * sent, and the one rule that puts a part read back in its place.
 *
 * A read start is `(path, position)`: the value at JSON Pointer `path` in the original, from
 * `position` on (UTF-8 bytes of a string, items of an array, members of an object in their order).
 * The rule ({@link applyPart}): the value at `path` becomes its first `position` bytes, items or
 * members, followed by what was read. The plan is checked by applying it to the bounded result
 * with the original's parts: when that does not give the original back (a result the typed policy
 * replaced, a text rewritten as its structure), the plan falls back to coarser starts, at the end
 * to the whole result from its first member, so a plan always reconstructs.
 */
import { NOTICE_KEY, REPORT_KEY, type ReadStart } from '../../engine/index.js';

type Json = Record<string, unknown>;

/** A JSON object (not an array, not null). */
export function isObject(v: unknown): v is Json {
  return v !== null && typeof v === 'object' && !Array.isArray(v);
}

/** Escape one pointer segment (RFC 6901). */
export function pointerSegment(s: string): string {
  return s.replace(/~/g, '~0').replace(/\//g, '~1');
}

/** The segments of a JSON Pointer, unescaped; undefined when it is not one. */
export function parsePointer(pointer: string): string[] | undefined {
  if (pointer === '') return [];
  if (!pointer.startsWith('/')) return undefined;
  const out: string[] = [];
  for (const raw of pointer.slice(1).split('/')) {
    if (/~[^01]|~$/.test(raw)) return undefined;
    out.push(raw.replace(/~1/g, '/').replace(/~0/g, '~'));
  }
  return out;
}

/** The child of a container named by a segment: an array index (canonical digits) or an own member. */
export function childOf(parent: unknown, segment: string): { found: true; value: unknown } | { found: false } {
  if (Array.isArray(parent)) {
    if (!/^(0|[1-9]\d*)$/.test(segment)) return { found: false };
    const i = Number(segment);
    return i < parent.length ? { found: true, value: parent[i] } : { found: false };
  }
  if (isObject(parent) && Object.hasOwn(parent, segment)) return { found: true, value: parent[segment] };
  return { found: false };
}

/** The value at `pointer`, or not found. */
export function valueAt(root: unknown, pointer: string): { found: true; value: unknown } | { found: false } {
  const segments = parsePointer(pointer);
  if (segments === undefined) return { found: false };
  let cur: unknown = root;
  for (const s of segments) {
    const c = childOf(cur, s);
    if (!c.found) return c;
    cur = c.value;
  }
  return { found: true, value: cur };
}

/**
 * UTF-8 bytes of the UTF-16 unit at `i` and the units it takes: a surrogate pair is one
 * character (4 bytes, 2 units); a lone surrogate counts 3 bytes as `Buffer.byteLength` counts it,
 * and is kept as it is (never replaced), so a string read in windows comes back exactly.
 */
export function charAt(s: string, i: number): { bytes: number; units: number } {
  const c = s.charCodeAt(i);
  if (c < 0x80) return { bytes: 1, units: 1 };
  if (c < 0x800) return { bytes: 2, units: 1 };
  if (c >= 0xd800 && c <= 0xdbff && i + 1 < s.length) {
    const d = s.charCodeAt(i + 1);
    if (d >= 0xdc00 && d <= 0xdfff) return { bytes: 4, units: 2 };
  }
  return { bytes: 3, units: 1 };
}

/** The UTF-16 index where UTF-8 byte offset `bytes` falls, searching from unit `from` (at byte `fromBytes`); undefined inside a character or past the end. */
export function unitAt(s: string, bytes: number, from = 0, fromBytes = 0): number | undefined {
  let i = from;
  let b = fromBytes;
  while (b < bytes && i < s.length) {
    const c = charAt(s, i);
    b += c.bytes;
    i += c.units;
  }
  return b === bytes ? i : undefined;
}

/** The longest prefix of `s` from unit `from` that is at most `bytes` UTF-8 bytes: its end (units) and its size. */
export function windowEnd(s: string, from: number, bytes: number): { end: number; bytes: number } {
  let i = from;
  let b = 0;
  while (i < s.length) {
    const c = charAt(s, i);
    if (b + c.bytes > bytes) break;
    b += c.bytes;
    i += c.units;
  }
  return { end: i, bytes: b };
}

/** Bytes, items or members of a value (0 for a scalar). */
export function sizeOf(v: unknown): number {
  if (typeof v === 'string') return Buffer.byteLength(v, 'utf8');
  if (Array.isArray(v)) return v.length;
  if (isObject(v)) return Object.keys(v).length;
  return 0;
}

/** What a part read holds: a string window, items, or members. */
export type PartData = { text: string } | { items: unknown[] } | { members: { key: string; value: unknown }[] };

/** Set a member by definition: a key named `__proto__` is a member, never the object's prototype. */
function defineMember(obj: Json, key: string, value: unknown): void {
  Object.defineProperty(obj, key, { value, enumerable: true, writable: true, configurable: true });
}

/**
 * The reassembly rule: the value at `path` in `root` becomes its first `position` bytes, items or
 * members, followed by `data`; a value not there yet (a child read part by part) starts empty.
 * Returns the new root (the root itself changes only when `path` is `""`).
 */
export function applyPart(root: unknown, path: string, position: number, data: PartData): unknown {
  const segments = parsePointer(path);
  if (segments === undefined) throw new Error(`not a JSON Pointer: ${JSON.stringify(path)}`);
  let parent: unknown;
  let cur: unknown = root;
  for (let i = 0; i < segments.length; i++) {
    parent = cur;
    const c = childOf(cur, segments[i]!);
    cur = c.found ? c.value : undefined;
    if (!c.found && i < segments.length - 1) throw new Error(`no value at ${JSON.stringify(path)} to put a part in`);
  }
  let next: unknown;
  if ('text' in data) {
    // Perf: a part that follows the whole string (the common case) needs no walk to find its place.
    const before = typeof cur !== 'string' ? '' : Buffer.byteLength(cur) === position ? cur : cur.slice(0, windowEnd(cur, 0, position).end);
    next = before + data.text;
  } else if ('items' in data) {
    next = [...(Array.isArray(cur) ? cur.slice(0, position) : []), ...data.items];
  } else {
    // Members defined, never assigned: a member named `__proto__` is a member, not the prototype.
    const obj: Json = {};
    if (isObject(cur)) for (const k of Object.keys(cur).slice(0, position)) defineMember(obj, k, cur[k]);
    for (const m of data.members) defineMember(obj, m.key, m.value);
    next = obj;
  }
  if (segments.length === 0) return next;
  const last = segments[segments.length - 1]!;
  if (Array.isArray(parent)) parent[Number(last)] = next;
  else defineMember(parent as Json, last, next);
  return root;
}

/** The part of the original a start covers, whole (what the reading tool returns across its answers). */
function partOf(original: unknown, start: ReadStart): PartData {
  const v = valueAt(original, start.path);
  if (!v.found) throw new Error(`no value at ${start.path}`);
  const x = v.value;
  if (typeof x === 'string') {
    const from = unitAt(x, start.position);
    if (from === undefined) throw new Error(`position ${start.position} is not a character boundary of ${start.path}`);
    return { text: x.slice(from) };
  }
  if (Array.isArray(x)) return { items: x.slice(start.position) };
  const o = x as Json;
  return { members: Object.keys(o).slice(start.position).map((key) => ({ key, value: o[key] })) };
}

/** What the budget added of its own: the notice block and the report. Removed before comparing (a copy). */
export function withoutBudgetParts(bounded: Json, original: Json): Json {
  const out: Json = { ...bounded };
  if (Array.isArray(out.content)) {
    out.content = out.content.filter((b) => !(isObject(b) && isObject(b._meta) && b._meta[NOTICE_KEY] === true));
  }
  if (isObject(out._meta) && REPORT_KEY in out._meta) {
    const meta: Json = { ...out._meta };
    delete meta[REPORT_KEY];
    if (Object.keys(meta).length === 0 && !('_meta' in original)) delete out._meta;
    else out._meta = meta;
  }
  return out;
}

/**
 * Where the parts the budget cut start, in document order. `bounded`: the result as sent, with
 * the budget's notice and report removed ({@link withoutBudgetParts}).
 */
export function planReads(original: Json, bounded: Json): ReadStart[] {
  const starts: ReadStart[] = [];
  if (!diff(original, bounded, '', starts) || !reconstructs(original, bounded, starts)) {
    // Coarser: each top-level member that differs is read whole; at last the whole result.
    const coarse = topLevelStarts(original, bounded);
    return reconstructs(original, bounded, coarse) ? coarse : [{ path: '', position: 0 }];
  }
  return starts;
}

/** Whether applying every start's whole part to a copy of `bounded` gives `original` back. */
export function reconstructs(original: Json, bounded: Json, starts: readonly ReadStart[]): boolean {
  let root: unknown = structuredClone(bounded);
  try {
    for (const s of starts) root = applyPart(root, s.path, s.position, partOf(original, s));
  } catch {
    return false;
  }
  return JSON.stringify(root) === JSON.stringify(original);
}

function topLevelStarts(original: Json, bounded: Json): ReadStart[] {
  const keys = Object.keys(original);
  const kept = Object.keys(bounded);
  for (let j = 0; j < keys.length; j++) {
    if (kept[j] !== keys[j]) return [{ path: '', position: j }];
  }
  const starts: ReadStart[] = [];
  for (const k of keys) {
    if (JSON.stringify(original[k]) !== JSON.stringify(bounded[k])) starts.push({ path: '/' + pointerSegment(k), position: 0 });
  }
  if (kept.length > keys.length) starts.push({ path: '', position: keys.length });
  return starts;
}

/**
 * Compare `o` (original) with `b` (bounded) at `path`, adding read starts. False: `b` is not a
 * cut form of `o` (the parent then reads from this child on).
 */
function diff(o: unknown, b: unknown, path: string, starts: ReadStart[]): boolean {
  if (typeof o === 'string') {
    if (typeof b !== 'string' || !o.startsWith(b)) return false;
    if (b.length < o.length) starts.push({ path, position: Buffer.byteLength(b, 'utf8') });
    return true;
  }
  if (Array.isArray(o)) {
    if (!Array.isArray(b)) return false;
    for (let i = 0; i < o.length; i++) {
      if (i >= b.length || !diff(o[i], b[i], `${path}/${i}`, starts)) {
        starts.push({ path, position: i });
        return true;
      }
    }
    if (b.length > o.length) starts.push({ path, position: o.length });
    return true;
  }
  if (isObject(o)) {
    if (!isObject(b)) return false;
    const keys = Object.keys(o);
    const kept = Object.keys(b);
    for (let j = 0; j < keys.length; j++) {
      const k = keys[j]!;
      if (kept[j] !== k || !diff(o[k], b[k], `${path}/${pointerSegment(k)}`, starts)) {
        starts.push({ path, position: j });
        return true;
      }
    }
    if (kept.length > keys.length) starts.push({ path, position: keys.length });
    return true;
  }
  return Object.is(o, b) || (o === b);
}
