/**
 * Generators and drivers for the streaming (byte source) tests: CallToolResults and JSON-RPC
 * responses whose numbers survive a JS round trip, padding that pushes an input past the fit
 * window (so the tokenizer + budgeter path runs, not only the in-memory one), and helpers that
 * feed bytes to a ByteBudget in any chunking.
 */
import fc from 'fast-check';
import type { BoundedJson } from '../../src/engine/bound.js';
import type { RootKind } from '../../src/engine/budgeter.js';
import { ByteBudget, fitWindowBytes } from '../../src/engine/byte-source.js';
import { DEFAULT_LIMITS, type BudgetOptions } from '../../src/engine/limits.js';
import { minResultBytes, resolveLimits, type ResolvedLimits } from '../../src/engine/options.js';

// ------------------------------------------------------------------ chunking and drivers

/** Split `bytes` into pieces: a fixed size, or cycling through `sizes` (each ≥ 1). */
export function splitBytes(bytes: Uint8Array, sizes: number | readonly number[]): Uint8Array[] {
  const list = typeof sizes === 'number' ? [sizes] : sizes;
  if (list.length === 0 || list.some((s) => !(s >= 1))) throw new Error('chunk sizes must be ≥ 1');
  const out: Uint8Array[] = [];
  let k = 0;
  for (let at = 0; at < bytes.length; ) {
    const n = list[k++ % list.length]!;
    out.push(bytes.subarray(at, Math.min(bytes.length, at + n)));
    at += n;
  }
  return out;
}

/** Every piece is a fresh copy, so a consumer that keeps a reference to a chunk is caught. */
function copies(pieces: Uint8Array[]): Uint8Array[] {
  return pieces.map((p) => Uint8Array.from(p));
}

export type Chunking = 'whole' | number | readonly number[];

/**
 * Bound `bytes` through a ByteBudget fed in the given chunking. With `reuse`, one scratch buffer is
 * overwritten for every chunk (as a stream reading into a recycled buffer would).
 */
export function boundViaBytes(
  bytes: Uint8Array,
  limits: BudgetOptions | ResolvedLimits,
  root: RootKind = 'auto',
  chunking: Chunking = 'whole',
  reuse = false,
): BoundedJson & { streamed: boolean | undefined } {
  const resolved = resolveLimits(limits);
  const budget = new ByteBudget(resolved, root);
  if (chunking === 'whole') {
    budget.write(bytes);
  } else {
    const pieces = splitBytes(bytes, chunking);
    if (reuse) {
      let largest = 1;
      for (const p of pieces) largest = Math.max(largest, p.length);
      const scratch = new Uint8Array(largest);
      for (const p of pieces) {
        scratch.set(p, 0);
        budget.write(scratch.subarray(0, p.length));
        scratch.fill(0x5d); // ']' everywhere: a kept reference to old bytes would now read garbage
      }
    } else {
      for (const p of copies(pieces)) budget.write(p);
    }
  }
  const streamed = tookStreamingPath(budget);
  return { ...budget.end(), streamed };
}

/**
 * Whether the ByteBudget left its fit window for the tokenizer + budgeter path. Reads a private
 * field; undefined when the implementation no longer has it (the caller then relies on size alone).
 */
export function tookStreamingPath(budget: ByteBudget): boolean | undefined {
  const b = budget as unknown as { fit?: unknown; bound?: unknown };
  if (!('fit' in b) || !('bound' in b)) return undefined;
  return b.fit === undefined && b.bound !== undefined;
}

/** Outcome of a bound that may throw, comparable with `toEqual`. */
export type Outcome =
  | { ok: true; json: string; truncated: boolean; report: unknown }
  | { ok: false; code: string | undefined; name: string };

export function outcome(fn: () => BoundedJson): Outcome {
  try {
    const r = fn();
    return { ok: true, json: r.json, truncated: r.truncated, report: r.report };
  } catch (e) {
    const err = e as { code?: string; name?: string };
    return { ok: false, code: err.code, name: err.name ?? 'Error' };
  }
}

// ------------------------------------------------------------------ strings and values

/** One UTF-16 unit or pair, chosen to hit every escaping and UTF-8 length class. */
export const streamChar: fc.Arbitrary<string> = fc.oneof(
  { weight: 10, arbitrary: fc.constantFrom('a', 'b', 'z', 'Q', '0', '7', ' ', '{', '}', '[', ']', ':', ',', '/', '~', '\u007f') },
  { weight: 2, arbitrary: fc.constantFrom('"', '\\') },
  { weight: 2, arbitrary: fc.constantFrom('\n', '\r', '\t', '\b', '\f', '\u0000', '\u0001', '\u001f') },
  { weight: 2, arbitrary: fc.constantFrom('é', 'ß', '\u0080', '\u07ff', 'Ж') },
  { weight: 2, arbitrary: fc.constantFrom('€', '\u0800', '\u2028', '\u2029', '\ufeff', '\uffff', '中') },
  { weight: 2, arbitrary: fc.constantFrom('😀', '👍🏽', '\u{10000}', '\u{10ffff}') },
  { weight: 1, arbitrary: fc.constantFrom('\ud800', '\udbff', '\udc00', '\udfff') },
);

export function streamString(maxLength = 20, maxRepeat = 1, minLength = 0): fc.Arbitrary<string> {
  const base = fc.string({ unit: streamChar, minLength, maxLength });
  if (maxRepeat <= 1) return base;
  return fc.oneof(
    { weight: 4, arbitrary: base },
    { weight: 1, arbitrary: fc.tuple(base, fc.integer({ min: 2, max: maxRepeat })).map(([s, n]) => s.repeat(n)) },
  );
}

const keyArb: fc.Arbitrary<string> = fc.oneof(
  { weight: 6, arbitrary: fc.constantFrom('a', 'b', 'id', 'name', 'items', 'value', 'x', 'text', 'type', 'data', 'content') },
  { weight: 2, arbitrary: fc.constantFrom('', 'a/b', 'm~n', '~1', 'ü', '😀', 'a"b', 'tab\there', '0', '10', '_meta') },
  { weight: 1, arbitrary: fc.constantFrom('k'.repeat(40), 'ключ'.repeat(8), '\ud800key') },
  { weight: 1, arbitrary: fc.string({ unit: streamChar, maxLength: 6 }) },
);

/** Numbers whose `String` is exactly what `JSON.stringify` writes and what parses back to them. */
export const exactNumber: fc.Arbitrary<number> = fc.oneof(
  fc.integer({ min: -1000, max: 100_000 }),
  fc.maxSafeInteger(),
  fc
    .double({ noNaN: true, noDefaultInfinity: true })
    .filter((n) => Number.isFinite(n) && !Object.is(n, -0) && Number(String(n)) === n),
);

const scalarArb: fc.Arbitrary<unknown> = fc.oneof(
  { weight: 1, arbitrary: fc.constant(null) },
  { weight: 1, arbitrary: fc.boolean() },
  { weight: 2, arbitrary: exactNumber },
  { weight: 3, arbitrary: streamString(16, 24) },
);

export const streamValue: fc.Arbitrary<unknown> = fc.letrec<{ value: unknown; array: unknown[]; object: Record<string, unknown> }>(
  (tie) => ({
    value: fc.oneof({ depthSize: 'small', maxDepth: 6, depthIdentifier: 'sv' }, scalarArb, tie('array'), tie('object')),
    array: fc.array(tie('value'), { maxLength: 12, depthIdentifier: 'sv' }),
    object: fc.dictionary(keyArb, tie('value'), { maxKeys: 12, noNullPrototype: true, depthIdentifier: 'sv' }),
  }),
).value;

export const streamObject: fc.Arbitrary<Record<string, unknown>> = fc.dictionary(keyArb, streamValue, {
  maxKeys: 12,
  noNullPrototype: true,
});

/** A structure of a few KB: big enough that small limits cut it (used for the text mirror). */
export const cuttableStructure: fc.Arbitrary<Record<string, unknown>> = fc
  .record({
    rows: fc.array(
      fc.record({ id: fc.nat(100_000), name: streamString(12, 8), tags: fc.array(streamString(6), { maxLength: 4 }), ok: fc.boolean() }),
      { minLength: 5, maxLength: 60 },
    ),
    meta: streamObject,
    note: streamString(30, 40),
  })
  .chain((r) => fc.shuffledSubarray(Object.keys(r), { minLength: 3, maxLength: 3 }).map((ks) => Object.fromEntries(ks.map((k) => [k, r[k as keyof typeof r]]))));

// ------------------------------------------------------------------ CallToolResults

const base64Arb = fc
  .tuple(fc.base64String({ minLength: 4, maxLength: 48 }), fc.integer({ min: 1, max: 120 }))
  .map(([s, n]) => (s.length % 4 === 0 ? s.repeat(n) : s));

const textBlock = fc.record(
  {
    type: fc.constant('text'),
    text: streamString(30, 150, 1),
    annotations: fc.record({ audience: fc.constant(['user']), priority: fc.double({ min: 0, max: 1, noNaN: true }).filter((n) => !Object.is(n, -0)) }),
    _meta: streamObject,
  },
  { requiredKeys: ['type', 'text'] },
);
const binaryBlock = fc.record(
  { type: fc.constantFrom('image', 'audio'), data: base64Arb, mimeType: fc.constantFrom('image/png', 'audio/wav') },
  { requiredKeys: ['type', 'data', 'mimeType'] },
);
const resourceBlock = fc.record({
  type: fc.constant('resource'),
  resource: fc.oneof(
    fc.record({ uri: fc.constantFrom('file:///a.txt', 'mem://x'), mimeType: fc.constant('text/plain'), text: streamString(30, 60, 1) }),
    fc.record({ uri: fc.constant('file:///a.bin'), blob: base64Arb }),
  ),
});
const linkBlock = fc.record({ type: fc.constant('resource_link'), uri: fc.constant('file:///x'), name: streamString(10, 3) });
const blockArb: fc.Arbitrary<unknown> = fc.oneof(
  { weight: 6, arbitrary: textBlock },
  { weight: 2, arbitrary: binaryBlock },
  { weight: 2, arbitrary: resourceBlock },
  { weight: 1, arbitrary: linkBlock },
  { weight: 1, arbitrary: streamValue },
);

/**
 * Random CallToolResults in random field order. With `mirror`, one text block is exactly
 * `JSON.stringify(structuredContent)` and the structure is big enough to be cut.
 *
 * `isErrorFirst` (default true) puts `isError` first when present: an `isError` that follows the
 * point where the result object is closed is kept by the streaming path but dropped by the
 * in-memory one (see "isError after the result is closed" in stream-differential.property.test.ts).
 */
export function resultArb(options: { mirror?: boolean; isErrorFirst?: boolean } = {}): fc.Arbitrary<Record<string, unknown>> {
  return fc
    .record(
      {
        content: fc.oneof({ weight: 10, arbitrary: fc.array(blockArb, { maxLength: 6 }) }, { weight: 1, arbitrary: streamValue }),
        structuredContent: options.mirror
          ? cuttableStructure
          : fc.oneof({ weight: 4, arbitrary: streamObject }, { weight: 1, arbitrary: fc.array(streamValue, { maxLength: 16 }) }),
        isError: fc.oneof({ weight: 5, arbitrary: fc.boolean() }, { weight: 1, arbitrary: streamValue }),
        _meta: fc.oneof({ weight: 6, arbitrary: streamObject }, { weight: 1, arbitrary: streamValue }),
        task: fc.record({ taskId: fc.constant('t-1'), status: fc.constant('working') }),
        resultType: fc.constant('complete'),
        unknownField: streamValue,
        nextCursor: fc.constant('c'),
      },
      { requiredKeys: options.mirror ? ['content', 'structuredContent'] : [] },
    )
    .chain((record) => {
      const r = record as Record<string, unknown>;
      const keys = Object.keys(r);
      return fc.tuple(fc.shuffledSubarray(keys, { minLength: keys.length, maxLength: keys.length }), fc.nat(7), fc.boolean()).map(
        ([order, at, contentFirst]) => {
          let ks = order;
          if (options.mirror && contentFirst) ks = ['content', ...order.filter((k) => k !== 'content')];
          if (options.isErrorFirst !== false && ks.includes('isError')) ks = ['isError', ...ks.filter((k) => k !== 'isError')];
          const out: Record<string, unknown> = {};
          for (const k of ks) out[k] = r[k];
          if (options.mirror) {
            const content = Array.isArray(out.content) ? [...(out.content as unknown[])] : [];
            const i = content.length === 0 ? 0 : at % (content.length + 1);
            content.splice(i, 0, { type: 'text', text: JSON.stringify(out.structuredContent) });
            out.content = content;
          }
          return out;
        },
      );
    });
}

export type Root = 'auto' | 'result' | 'envelope' | 'error';

/** A document and the root kind to bound it as (`auto` or the explicit kind). */
export interface Doc {
  value: Record<string, unknown>;
  root: Root;
  /** Where padding goes: the result object inside the document. */
  result: Record<string, unknown> | undefined;
  /** The error object, for error responses. */
  error: Record<string, unknown> | undefined;
}

const idArb: fc.Arbitrary<string | number | null> = fc.oneof(fc.nat(1_000_000), streamString(8), fc.constant(null));

/** JSON-RPC error object with a message and data to bound. */
export const errorObjectArb: fc.Arbitrary<Record<string, unknown>> = fc.record(
  {
    code: fc.integer({ min: -32768, max: -32000 }),
    message: streamString(30, 60),
    data: fc.oneof({ weight: 3, arbitrary: streamObject }, { weight: 1, arbitrary: streamValue }),
  },
  { requiredKeys: ['code', 'message'] },
);

/**
 * Documents: a bare result (root auto or result), a response envelope with `id` last or first
 * (auto or envelope), an error response (auto or envelope), or a bare error object (error).
 */
export function docArb(options: { mirror?: boolean; isErrorFirst?: boolean } = {}): fc.Arbitrary<Doc> {
  const result = resultArb(options);
  return fc.oneof(
    { weight: 4, arbitrary: fc.tuple(result, fc.constantFrom<Root>('auto', 'result')).map(([r, root]) => ({ value: r, root, result: r, error: undefined })) },
    {
      weight: 4,
      arbitrary: fc.tuple(result, idArb, fc.boolean(), fc.constantFrom<Root>('auto', 'envelope')).map(([r, id, idLast, root]) => ({
        value: idLast ? { result: r, jsonrpc: '2.0', id } : { jsonrpc: '2.0', id, result: r },
        root,
        result: r,
        error: undefined,
      })),
    },
    {
      weight: options.mirror ? 0 : 2,
      arbitrary: fc.tuple(errorObjectArb, idArb, fc.constantFrom<Root>('auto', 'envelope')).map(([e, id, root]) => ({
        value: { jsonrpc: '2.0', id, error: e },
        root,
        result: undefined,
        error: e,
      })),
    },
    {
      weight: options.mirror ? 0 : 1,
      arbitrary: errorObjectArb.map((e) => ({ value: e, root: 'error' as Root, result: undefined, error: e })),
    },
  );
}

// ------------------------------------------------------------------ limits

/** Small valid limits so every bound engages; `maxResultBytes` is the floor plus some slack. */
export const streamLimitsArb: fc.Arbitrary<BudgetOptions> = fc
  .record({
    maxTextBytes: fc.integer({ min: 1, max: 3000 }),
    maxBlockBytes: fc.integer({ min: 1, max: 1500 }),
    maxTokens: fc.oneof({ weight: 2, arbitrary: fc.constant(1024 ** 3) }, { weight: 1, arbitrary: fc.integer({ min: 256, max: 1500 }) }),
    maxItems: fc.integer({ min: 1, max: 12 }),
    maxKeys: fc.integer({ min: 1, max: 12 }),
    maxStringBytes: fc.integer({ min: 16, max: 300 }),
    maxDepth: fc.integer({ min: 4, max: 9 }),
    maxOmittedPaths: fc.integer({ min: 0, max: 24 }),
    notice: fc.boolean(),
    protocolVersion: fc.constantFrom(undefined, '2025-06-18', '2025-11-25', '2026-07-28'),
    slack: fc.oneof({ weight: 4, arbitrary: fc.nat(6000) }, { weight: 1, arbitrary: fc.nat(60_000) }),
  })
  .map(({ slack, ...l }) => ({ ...l, maxResultBytes: minResultBytes({ ...DEFAULT_LIMITS, ...l }) + slack }));

// ------------------------------------------------------------------ padding past the fit window

export type PadKind = 'text' | 'array' | 'unknown' | 'meta' | 'image' | 'mirror' | 'errdata';

export interface Padding {
  kind: PadKind;
  /** A short string repeated to fill the padding (escapes and multi-byte characters included). */
  unit: string;
  /** Where in its container the padding goes (taken modulo the container's size). */
  at: number;
}

export const paddingArb: fc.Arbitrary<Padding> = fc.record({
  kind: fc.constantFrom<PadKind>('text', 'array', 'unknown', 'meta', 'image', 'mirror', 'errdata'),
  unit: streamString(12, 1, 1),
  at: fc.nat(20),
});

/** `unit` repeated until its JSON is at least `bytes` long (lone surrogates may pair up when repeated). */
function repeatTo(unit: string, bytes: number): string {
  const one = Buffer.byteLength(JSON.stringify(unit)) - 2;
  let s = unit.repeat(Math.ceil(bytes / Math.max(1, one)));
  while (Buffer.byteLength(JSON.stringify(s)) - 2 < bytes) s += s;
  return s;
}

function insertKey(obj: Record<string, unknown>, key: string, value: unknown, at: number): Record<string, unknown> {
  const entries = Object.entries(obj).filter(([k]) => k !== key);
  entries.splice(at % (entries.length + 1), 0, [key, value]);
  return Object.fromEntries(entries);
}

/**
 * Return a copy of `doc` grown past `fitWindowBytes(limits)` (plus `extra` bytes) by padding of
 * the given kind, placed where the budgeter will skip it, cut it or count it unseen.
 */
export function padDoc(doc: Doc, limits: ResolvedLimits, pad: Padding, extra = 4096): Doc {
  const size = fitWindowBytes(limits) + extra;
  const big = (): string => repeatTo(pad.unit, size);
  const bigArray = (): unknown[] => {
    const item = { i: pad.at, s: pad.unit.slice(0, 4) };
    const n = Math.ceil(size / Buffer.byteLength(JSON.stringify(item) + ','));
    return new Array<unknown>(n).fill(item);
  };

  if (doc.result === undefined) {
    // Error object (bare or in a response): pad its data or its message.
    const e = doc.error!;
    const data = e.data !== null && typeof e.data === 'object' && !Array.isArray(e.data) ? (e.data as Record<string, unknown>) : {};
    const padded =
      pad.kind === 'text' || pad.kind === 'image'
        ? { ...e, message: big() }
        : insertKey(e, 'data', insertKey(data, 'padding', pad.kind === 'array' ? bigArray() : big(), pad.at), pad.at);
    const value = doc.value === e ? padded : { ...doc.value, error: padded };
    return { ...doc, value, error: padded };
  }

  let r: Record<string, unknown> = { ...doc.result };
  const content = Array.isArray(r.content) ? [...(r.content as unknown[])] : undefined;
  switch (pad.kind) {
    case 'text':
    case 'image': {
      const block = pad.kind === 'text' ? { type: 'text', text: big() } : { type: 'image', mimeType: 'image/png', data: 'QUJD'.repeat(Math.ceil(size / 4)) };
      if (content !== undefined) {
        content.splice(pad.at % (content.length + 1), 0, block);
        r.content = content;
      } else {
        r = insertKey(r, 'padding', big(), pad.at);
      }
      break;
    }
    case 'array':
    case 'mirror': {
      const sc = r.structuredContent;
      if (sc !== null && typeof sc === 'object' && !Array.isArray(sc)) {
        r.structuredContent = insertKey(sc as Record<string, unknown>, 'padding', bigArray(), pad.at);
      } else if (Array.isArray(sc)) {
        const arr = [...sc];
        arr.splice(pad.at % (arr.length + 1), 0, bigArray());
        r.structuredContent = arr;
      } else {
        r = insertKey(r, 'structuredContent', { padding: bigArray() }, pad.at);
      }
      if (pad.kind === 'mirror' && content !== undefined) {
        // Keep (or make) a text block that mirrors the grown structure.
        const json = JSON.stringify(r.structuredContent);
        const was = JSON.stringify(doc.result.structuredContent);
        const i = content.findIndex((b) => (b as { text?: unknown } | null)?.text === was);
        if (i >= 0) content[i] = { type: 'text', text: json };
        else content.splice(pad.at % (content.length + 1), 0, { type: 'text', text: json });
        r.content = content;
      }
      break;
    }
    case 'unknown':
      r = insertKey(r, 'padding', big(), pad.at);
      break;
    case 'meta':
    case 'errdata': {
      const m = r._meta !== null && typeof r._meta === 'object' && !Array.isArray(r._meta) ? (r._meta as Record<string, unknown>) : {};
      r = insertKey(r, '_meta', insertKey(m, 'padding', pad.kind === 'meta' ? big() : bigArray(), pad.at), pad.at);
      break;
    }
  }
  const value = doc.value === doc.result ? r : { ...doc.value, result: r };
  return { ...doc, value, result: r };
}
