/**
 * A cut result's original read where it is held, as the bytes of its JSON, never parsed whole: the
 * value at a JSON Pointer, how long it is (UTF-8 bytes of a string, items, members), a window of a
 * string from a byte position, and the next children of a container, each parsed on its own.
 *
 * The sparse index: each value located is remembered by its pointer (up to 4,096, the oldest
 * forgotten first), and each remembers marks, pairs of positions to start from: for a
 * container, (child index, where the child starts), at least every 64 KiB walked
 * and where each read stopped; for a string, (decoded UTF-8 bytes, raw offset) at chunk
 * boundaries. Marks are laid down by every walk (counting a value's length walks all of it once),
 * so a read seeks to the nearest mark before what it wants and walks at most that far: reading a
 * result part by part from its first cut part to its end walks it about once, whatever its size.
 *
 * Positions are those of the parsed value: a string's UTF-8 bytes as `Buffer.byteLength` counts the
 * decoded text (a lone surrogate counts 3), an array's items, an object's members in the order
 * written. A member named twice is two members; a pointer names the first.
 */
import { isUtf8 } from 'node:buffer';
import { Byte, BudgetError, isWs, newSkipState, scanSkipSized, SKIP_MORE } from '../../engine/index.js';
import type { HeldBytes } from './continuation-spill.js';
import { parsePointer, unitAt } from './continuation-plan.js';

/** How far the reader reads and walks at once; tests make them tiny to put every boundary everywhere. */
export interface ReaderSizes {
  /** Bytes read from the held original at once. */
  window: number;
  /** Raw bytes of a string decoded at once (at most `window` less 16). */
  chunk: number;
  /** A container's walk leaves a mark at least this often (bytes). */
  markEvery: number;
  /** Values remembered per original. */
  nodes: number;
  /** Marks per value (pairs); past this every other one is dropped. */
  marks: number;
}

export const READER_SIZES: Readonly<ReaderSizes> = Object.freeze({ window: 256 * 1024, chunk: 64 * 1024, markEvery: 64 * 1024, nodes: 4096, marks: 1 << 15 });
/** A key longer than this is not decoded: it names no pointer segment a client can send whole. */
const MAX_KEY_BYTES = 1 << 20;
/** Member names remembered per original, to refuse a name repeated in one object. */
const MAX_NAMES = 1 << 18;
/** Bytes a walk reads before it gives the event loop a turn. */
const YIELD_EVERY = 1 << 20;
/** Pointer segments followed at most (the depth bound's greatest value is 1,000). */
export const MAX_SEGMENTS = 1024;

export type ValueKind = 'string' | 'array' | 'object' | 'scalar';

/** One value of the original, located. */
export interface JsonNode {
  readonly path: string;
  /** Offset of its first byte. */
  readonly start: number;
  readonly kind: ValueKind;
  /** Its index in its parent (array index or member order); -1 for the root. */
  readonly index: number;
  /** Bytes (a string's, decoded), items or members, once counted. */
  total?: number;
  /** Flat pairs, ascending: (child index, child start) or (decoded bytes, raw offset). */
  marks: number[];
  /** An object's member names met so far, with their index (a name met at two indexes is refused). */
  names?: Map<string, number>;
}

/** The children a read took from a container. */
export interface ChildRun {
  values: unknown[];
  /** An object's member keys, in order. */
  keys: string[];
  /** The container's end follows the last one. */
  atEnd: boolean;
  /** The child where the run stopped, when it stopped for its size: its kind, key and start. */
  stopped?: { kind: ValueKind; key?: string; start: number };
}

function corrupt(at: number): BudgetError {
  return new BudgetError('CONTINUATION_BAD_READ', `The kept original is not valid JSON at byte ${at}: it cannot be read. Call the original tool again.`, { at });
}

/** Reading ran past what was kept (the original was larger than one result may keep). */
export function pastKept(): BudgetError {
  return new BudgetError('CONTINUATION_BAD_READ', 'This part lies past the beginning of the result that was kept (the result was larger than --continuation-max-result-bytes). Raise that cap and call the original tool again, or ask it for less.', {});
}

function kindOf(c: number): ValueKind {
  return c === Byte.Quote ? 'string' : c === Byte.OpenBracket ? 'array' : c === Byte.OpenBrace ? 'object' : 'scalar';
}

/** A `\\uD800`–`\\uDBFF` escape at `at`: the first half of a pair. */
function highEscape(w: Buffer, at: number): boolean {
  const d = w[at + 2];
  const h = w[at + 3];
  return w[at + 1] === 0x75 && (d === 0x64 || d === 0x44) && h !== undefined && ((h >= 0x38 && h <= 0x39) || (h >= 0x61 && h <= 0x62) || (h >= 0x41 && h <= 0x42));
}

/**
 * Where a raw string chunk from `from` may end, at `cut` or before: never inside an escape or a
 * UTF-8 sequence, never between the escaped halves of a surrogate pair. Always past `from`: a
 * first character longer than the chunk is taken whole.
 */
function safeCut(w: Buffer, from: number, cut: number): number {
  let lastEsc = -1;
  let lastLen = 0;
  for (let e = w.indexOf(Byte.Backslash, from); e >= 0 && e < cut; e = w.indexOf(Byte.Backslash, e + lastLen)) {
    lastEsc = e;
    lastLen = w[e + 1] === 0x75 ? 6 : 2;
  }
  let c = cut;
  if (lastEsc >= 0 && (lastEsc + lastLen > c || (lastEsc + 6 === c && highEscape(w, lastEsc)))) c = lastEsc;
  else for (let k = 0; k < 3 && c > from && (w[c]! & 0xc0) === 0x80; k++) c--;
  if (c > from) return c;
  // The first character is longer than a chunk.
  if (w[from] === Byte.Backslash) {
    if (w[from + 1] !== 0x75) return from + 2;
    return highEscape(w, from) && w[from + 6] === Byte.Backslash && w[from + 7] === 0x75 ? from + 12 : from + 6;
  }
  const b = w[from]!;
  return from + (b >= 0xf0 ? 4 : b >= 0xe0 ? 3 : b >= 0xc0 ? 2 : 1);
}

const OPEN = Buffer.from('[');
const CLOSE = Buffer.from(']');

export class JsonBytes {
  private win: Buffer = Buffer.alloc(0);
  private base = 0;
  /** The window's memory, reused by every read (what is sliced from it is used before the next). */
  private room: Buffer | undefined;
  /** Member names remembered (see {@link MAX_NAMES}). */
  private named = 0;
  /** Bytes walked since the last turn given to other work. */
  private walked = 0;
  /** Reads of this original, one at a time: they share the window and the marks. */
  private turn: Promise<unknown> = Promise.resolve();
  /** Map order is recency: the first is the least recently used. */
  private readonly nodes = new Map<string, JsonNode>();

  /** `rootAt`: where the document starts in the held bytes (a message's `result` member). */
  constructor(
    readonly held: HeldBytes,
    private readonly rootAt = 0,
    private readonly sizes: Readonly<ReaderSizes> = READER_SIZES,
  ) {}

  /**
   * Run `read` when the reads before it are done: two calls of the reading tool on one handle must
   * not move each other's window between their awaits.
   */
  exclusive<T>(read: () => Promise<T>): Promise<T> {
    const run = this.turn.then(read, read);
    this.turn = run.catch(() => undefined);
    return run;
  }

  /** Make `pos` readable in the window. */
  private async fill(pos: number): Promise<void> {
    if (pos >= this.held.size) throw pastKept();
    // A long walk lets other work run every megabyte (reads from memory never wait otherwise).
    this.walked += this.win.length;
    if (this.walked >= YIELD_EVERY) {
      this.walked = 0;
      await new Promise((resolve) => setImmediate(resolve));
    }
    this.room ??= Buffer.allocUnsafe(this.sizes.window);
    this.win = await this.held.read(pos, this.sizes.window, this.room);
    this.base = pos;
  }

  private async byteAt(pos: number): Promise<number> {
    const i = pos - this.base;
    if (i >= 0 && i < this.win.length) return this.win[i]!;
    await this.fill(pos);
    return this.win[0]!;
  }

  private async skipWs(pos: number): Promise<number> {
    for (;;) {
      let i = pos - this.base;
      if (i < 0 || i >= this.win.length) {
        await this.fill(pos);
        i = 0;
      }
      const w = this.win;
      while (i < w.length && isWs(w[i]!)) i++;
      if (i < w.length) return this.base + i;
      pos = this.base + i;
    }
  }

  /** The bytes [a, b). */
  private async slice(a: number, b: number): Promise<Buffer> {
    if (a >= this.base && b <= this.base + this.win.length) return this.win.subarray(a - this.base, b - this.base);
    if (b > this.held.size) throw pastKept();
    return this.held.read(a, b - a);
  }

  /** Offset just after the value at `pos`; -1 when it is longer than `limit` bytes. */
  async skipValue(pos: number, limit = Infinity): Promise<number> {
    const c = await this.byteAt(pos);
    const kind = kindOf(c);
    if (kind === 'scalar') return this.scalarEnd(pos);
    const st = newSkipState(false, kind === 'string');
    let at = kind === 'string' ? pos + 1 : pos;
    for (;;) {
      if (at - pos > limit) return -1;
      let i = at - this.base;
      if (i < 0 || i >= this.win.length) {
        await this.fill(at);
        i = 0;
      }
      const r = scanSkipSized(this.win, i, st);
      if (r >= 0) {
        const end = this.base + r;
        return end - pos > limit ? -1 : end;
      }
      if (r !== SKIP_MORE) throw corrupt(this.base - r - 2);
      at = this.base + this.win.length;
    }
  }

  private async scalarEnd(pos: number): Promise<number> {
    let p = pos;
    for (;;) {
      const c = p < this.held.size ? await this.byteAt(p) : Byte.Space;
      if (c === Byte.Comma || c === Byte.CloseBrace || c === Byte.CloseBracket || isWs(c)) return p;
      if (++p - pos > 8192) throw corrupt(pos);
    }
  }

  /** A key at `pos` (its opening quote), decoded; undefined when longer than a key is read. */
  private async keyAt(pos: number): Promise<{ key: string | undefined; end: number }> {
    const end = await this.skipValue(pos, MAX_KEY_BYTES);
    if (end < 0) return { key: undefined, end: await this.skipValue(pos) };
    return { key: this.parse(await this.slice(pos, end), pos) as string, end };
  }

  private parse(raw: Buffer, at: number): unknown {
    try {
      return JSON.parse(raw.toString('utf8'));
    } catch {
      throw corrupt(at);
    }
  }

  /** From a member's key to its value. */
  private async memberValue(keyStart: number): Promise<number> {
    const ke = await this.skipValue(keyStart);
    const p = await this.skipWs(ke);
    if ((await this.byteAt(p)) !== Byte.Colon) throw corrupt(p);
    return this.skipWs(p + 1);
  }

  private remember(path: string, start: number, kind: ValueKind, index: number): JsonNode {
    const node: JsonNode = { path, start, kind, index, marks: [] };
    this.nodes.set(path, node);
    if (this.nodes.size > this.sizes.nodes) this.nodes.delete(this.nodes.keys().next().value!);
    return node;
  }

  /** The value at `path`, or undefined when the original has none there. */
  async node(path: string): Promise<JsonNode | undefined> {
    const hit = this.nodes.get(path);
    if (hit !== undefined) {
      this.nodes.delete(path);
      this.nodes.set(path, hit);
      return hit;
    }
    const segments = parsePointer(path);
    // Deeper than any value the budget reads (its depth bound is at most 1,000): no such value.
    if (segments === undefined || segments.length > MAX_SEGMENTS) return undefined;
    // From the deepest ancestor already located, one segment at a time (never once per ancestor).
    const prefixes: string[] = [];
    let at = 0;
    for (const s of segments) {
      at = path.indexOf('/', at + 1);
      prefixes.push(at < 0 ? path : path.slice(0, at));
      if (at < 0) break;
    }
    let depth = prefixes.length - 1;
    while (depth >= 0 && !this.nodes.has(prefixes[depth]!)) depth--;
    let cur = depth >= 0 ? this.nodes.get(prefixes[depth]!)! : await this.rootNode();
    for (let i = depth + 1; i < segments.length; i++) {
      const next = await this.child(cur, segments[i]!);
      if (next === undefined) return undefined;
      cur = next;
    }
    return cur;
  }

  private async rootNode(): Promise<JsonNode> {
    const hit = this.nodes.get('');
    if (hit !== undefined) return hit;
    const start = await this.skipWs(this.rootAt);
    return this.remember('', start, kindOf(await this.byteAt(start)), -1);
  }

  /**
   * The child of `parent` a pointer segment names; a member is looked for from child `from` on
   * (a caller that needs only members from there need not walk those before).
   */
  async child(parent: JsonNode, segment: string, from = 0): Promise<JsonNode | undefined> {
    const path = `${parent.path}/${segment.replace(/~/g, '~0').replace(/\//g, '~1')}`;
    const hit = this.nodes.get(path);
    if (hit !== undefined) return hit;
    if (parent.kind === 'array') {
      if (!/^(0|[1-9]\d*)$/.test(segment) || segment.length > 15) return undefined;
      const index = Number(segment);
      const start = await this.childAt(parent, index);
      return start === undefined ? undefined : this.remember(path, start, kindOf(await this.byteAt(start)), index);
    }
    if (parent.kind !== 'object') return undefined;
    let pos = await this.childAt(parent, from);
    for (let j = from; pos !== undefined; j++) {
      const { key } = await this.keyAt(pos);
      this.noteName(parent, key, j);
      if (key === segment) {
        const start = await this.memberValue(pos);
        return this.remember(path, start, kindOf(await this.byteAt(start)), j);
      }
      const next = await this.nextChild(parent, pos);
      if (next < 0) return undefined;
      pos = next;
      this.markWalk(parent, j + 1, pos);
    }
    return undefined;
  }

  /** The children of a container from the first, each remembered as a node, walking it once; `key` undefined for a key too long to read. */
  async *walk(node: JsonNode): AsyncGenerator<{ node: JsonNode; key: string | undefined }> {
    let pos = await this.childAt(node, 0);
    for (let j = 0; pos !== undefined; j++) {
      let key: string | undefined;
      let value = pos;
      if (node.kind === 'object') {
        key = (await this.keyAt(pos)).key;
        this.noteName(node, key, j);
        value = await this.memberValue(pos);
      }
      const segment = node.kind === 'object' ? (key ?? '') : String(j);
      yield { node: this.adopt(node, segment, value, kindOf(await this.byteAt(value)), j), key };
      const next = await this.after(node, await this.skipValue(value));
      if (next < 0) {
        node.total = j + 1;
        return;
      }
      pos = next;
      this.markWalk(node, j + 1, pos);
    }
  }

  /** A scalar's value. */
  async scalar(node: JsonNode): Promise<unknown> {
    return this.parse(await this.slice(node.start, await this.scalarEnd(node.start)), node.start);
  }

  /**
   * Note member `key` at index `j` of `node`. A name met at two indexes of one object makes the
   * original unreadable: a pointer names one value, and positions count both (`JSON.parse` keeps
   * the last), so its parts could not be put in place. Past {@link MAX_NAMES} names, no more are
   * remembered.
   */
  private noteName(node: JsonNode, key: string | undefined, j: number): void {
    if (key === undefined) return;
    const names = (node.names ??= new Map());
    const at = names.get(key);
    if (at !== undefined && at !== j) {
      throw new BudgetError('CONTINUATION_BAD_READ', `The result repeats the member name ${JSON.stringify(key.slice(0, 64))} in one object, so its parts cannot be named by path and it cannot be read back. Call the original tool again, asking for less.`, {});
    }
    if (at === undefined && this.named < MAX_NAMES) {
      names.set(key, j);
      this.named++;
    }
  }

  /** Remember a child the caller found where it starts (a read that stopped at it). */
  adopt(parent: JsonNode, segment: string, start: number, kind: ValueKind, index: number): JsonNode {
    return this.remember(`${parent.path}/${segment.replace(/~/g, '~0').replace(/\//g, '~1')}`, start, kind, index);
  }

  private closer(node: JsonNode): number {
    return node.kind === 'array' ? Byte.CloseBracket : Byte.CloseBrace;
  }

  /** Add a mark, keeping the pairs ascending and within {@link MAX_MARKS}. */
  private mark(node: JsonNode, key: number, at: number): void {
    const m = node.marks;
    const n = m.length;
    if (n > 0 && m[n - 2]! >= key) {
      // Out of order (a read behind the last mark): inserted where it belongs, unless known.
      let lo = 0;
      let hi = n / 2;
      while (lo < hi) {
        const mid = (lo + hi) >> 1;
        if (m[2 * mid]! < key) lo = mid + 1;
        else hi = mid;
      }
      if (m[2 * lo] !== key) m.splice(2 * lo, 0, key, at);
    } else m.push(key, at);
    if (m.length > 2 * this.sizes.marks) node.marks = m.filter((_, i) => i % 4 < 2);
  }

  /** A mark when the walk has gone far enough past the last one. */
  private markWalk(node: JsonNode, key: number, at: number): void {
    const m = node.marks;
    if (m.length === 0 || at - m[m.length - 1]! >= this.sizes.markEvery) this.mark(node, key, at);
  }

  /** The nearest mark at or before `key`: [key, at], or undefined. */
  private before(node: JsonNode, key: number): [number, number] | undefined {
    const m = node.marks;
    let lo = 0;
    let hi = m.length / 2 - 1;
    if (hi < 0 || m[0]! > key) return undefined;
    while (lo < hi) {
      const mid = (lo + hi + 1) >> 1;
      if (m[2 * mid]! <= key) lo = mid;
      else hi = mid - 1;
    }
    return [m[2 * lo]!, m[2 * lo + 1]!];
  }

  /** Where child `i` of a container starts (a member at its key); undefined past the end. */
  private async childAt(node: JsonNode, i: number): Promise<number | undefined> {
    if (node.total !== undefined && i >= node.total) return undefined;
    let [j, pos] = this.before(node, i) ?? [0, -1];
    if (pos < 0) {
      pos = await this.skipWs(node.start + 1);
      if ((await this.byteAt(pos)) === this.closer(node)) {
        node.total = 0;
        return undefined;
      }
      this.mark(node, 0, pos);
    }
    while (j < i) {
      const next = await this.nextChild(node, pos);
      if (next < 0) {
        node.total = j + 1;
        return undefined;
      }
      j++;
      pos = next;
      this.markWalk(node, j, pos);
    }
    return pos;
  }

  /** From the child at `pos` to the next one's start; -1 when the container closes after it. */
  private async nextChild(node: JsonNode, pos: number): Promise<number> {
    const value = node.kind === 'object' ? await this.memberValue(pos) : pos;
    return this.after(node, await this.skipValue(value));
  }

  /** After a child ending at `end`: the next child's start, or -1 at the container's end. */
  private async after(node: JsonNode, end: number): Promise<number> {
    const p = await this.skipWs(end);
    const c = await this.byteAt(p);
    if (c === Byte.Comma) return this.skipWs(p + 1);
    if (c === this.closer(node)) return -1;
    throw corrupt(p);
  }

  /** Bytes of a string (decoded), items of an array, members of an object, 0 for a scalar: counted once, laying marks. */
  async size(node: JsonNode): Promise<number> {
    if (node.total !== undefined) return node.total;
    if (node.kind === 'scalar') return (node.total = 0);
    if (node.kind === 'string') {
      let [d, r] = this.before(node, Infinity) ?? [0, node.start + 1];
      for (;;) {
        const c = await this.chunk(r, false);
        d += c.bytes;
        r = c.next;
        if (c.last) return (node.total = d);
        this.mark(node, d, r);
      }
    }
    // A container's children counted by the skip scanner in bulk: commas at its own depth.
    let [j, pos] = this.before(node, Infinity) ?? [0, node.start + 1];
    const st = newSkipState(true, false);
    for (let at = pos; ; ) {
      let i = at - this.base;
      if (i < 0 || i >= this.win.length) {
        await this.fill(at);
        i = 0;
      }
      const r = scanSkipSized(this.win, i, st);
      if (r >= 0) return (node.total = j + st.commas + (st.sawValue ? 1 : 0));
      if (r !== SKIP_MORE) throw corrupt(this.base - r - 2);
      at = this.base + this.win.length;
    }
  }

  /**
   * One chunk of a string's content from raw offset `pos` (a chunk boundary): its text (when
   * wanted, or when it has escapes), its decoded bytes, where the next starts, and whether the
   * string ends with it.
   */
  private async chunk(pos: number, wantText: boolean): Promise<{ text: string; bytes: number; next: number; last: boolean }> {
    let i = pos - this.base;
    const ahead = this.win.length - i;
    if (i < 0 || ahead <= 0 || (ahead < this.sizes.chunk + 16 && this.base + this.win.length < this.held.size)) {
      await this.fill(pos);
      i = 0;
    }
    const w = this.win;
    const lim = Math.min(w.length, i + this.sizes.chunk);
    let end = -1;
    for (let q = w.indexOf(Byte.Quote, i); q >= 0 && q < lim; q = w.indexOf(Byte.Quote, q + 1)) {
      let bs = 0;
      for (let k = q - 1; k >= i && w[k] === Byte.Backslash; k--) bs++;
      if (bs % 2 === 0) {
        end = q;
        break;
      }
    }
    if (end < 0 && lim === w.length && this.base + w.length >= this.held.size) throw pastKept();
    const cut = end >= 0 ? end : safeCut(w, i, lim);
    const raw = w.subarray(i, cut);
    let text = '';
    let bytes: number;
    if (raw.indexOf(Byte.Backslash) < 0 && isUtf8(raw)) {
      bytes = raw.length;
      if (wantText) text = raw.toString('utf8');
    } else {
      try {
        text = JSON.parse(`"${raw.toString('utf8')}"`) as string;
      } catch {
        throw corrupt(this.base + i);
      }
      bytes = Buffer.byteLength(text);
    }
    return { text, bytes, next: this.base + cut, last: end >= 0 };
  }

  /**
   * A string's text from decoded byte `pos`, at least `want` bytes of it (or to its end).
   * Undefined when `pos` falls inside a character.
   */
  async text(node: JsonNode, pos: number, want: number): Promise<string | undefined> {
    let [d, r] = this.before(node, pos) ?? [0, node.start + 1];
    let out = '';
    let got = 0;
    let started = false;
    for (;;) {
      const c = await this.chunk(r, true);
      if (!started && d + c.bytes > pos) {
        const from = unitAt(c.text, pos - d);
        if (from === undefined) return undefined;
        out = c.text.slice(from);
        got = d + c.bytes - pos;
        started = true;
      } else if (started) {
        out += c.text;
        got += c.bytes;
      }
      d += c.bytes;
      r = c.next;
      if (c.last) {
        node.total = d;
        return started || d === pos ? out : undefined;
      }
      this.mark(node, d, r);
      if (started && got >= want) return out;
    }
  }

  /**
   * The children of a container from index `from`, parsed, while they number under `maxCount`
   * and their raw bytes stay within `maxBytes` (a child that would pass it stops the run and is
   * named in `stopped`).
   */
  async children(node: JsonNode, from: number, maxBytes: number, maxCount: number): Promise<ChildRun> {
    const run: ChildRun = { values: [], keys: [], atEnd: false };
    let pos = await this.childAt(node, from);
    if (pos === undefined) {
      run.atEnd = true;
      return run;
    }
    const array = node.kind === 'array';
    // Perf: an array's items are parsed together, as one array of the bytes from the first to the last.
    let first = -1;
    let last = -1;
    let used = 0;
    let count = 0;
    try {
      for (let j = from; ; j++) {
        if (count >= maxCount) break;
        let key: string | undefined;
        let value = pos;
        if (!array) {
          key = (await this.keyAt(pos)).key;
          this.noteName(node, key, j);
          value = await this.memberValue(pos);
        }
        const end = key === undefined && !array ? -1 : await this.skipValue(value, maxBytes - used);
        if (end < 0) {
          run.stopped = { kind: kindOf(await this.byteAt(value)), ...(key === undefined ? {} : { key }), start: value };
          break;
        }
        used += end - pos;
        count++;
        if (array) {
          if (first < 0) first = value;
          last = end;
        } else {
          run.values.push(this.parse(await this.slice(value, end), value));
          run.keys.push(key!);
        }
        const next = await this.after(node, end);
        if (next < 0) {
          node.total = j + 1;
          run.atEnd = true;
          return run;
        }
        pos = next;
        this.markWalk(node, j + 1, pos);
      }
    } finally {
      if (first >= 0) {
        const raw = await this.slice(first, last);
        run.values = this.parse(Buffer.concat([OPEN, raw, CLOSE]), first) as unknown[];
      }
    }
    // Where the next read of this container starts.
    this.mark(node, from + run.values.length, pos);
    return run;
  }
}
