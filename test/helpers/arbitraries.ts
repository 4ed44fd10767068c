/** fast-check generators shared by the engine tests: wire strings, JSON values, CallToolResults, limits. */
import fc from 'fast-check';
import { CallToolResultSchema } from '@modelcontextprotocol/sdk/types.js';
import { DEFAULT_LIMITS, type BudgetOptions } from '../../src/engine/limits.js';
import { minResultBytes } from '../../src/engine/options.js';

/** One UTF-16 "character" chosen to hit every escaping and encoding class of the wire format. */
export const wireChar: fc.Arbitrary<string> = fc.oneof(
  { weight: 8, arbitrary: fc.constantFrom('a', 'b', 'x', 'Z', '0', '9', ' ', '{', '}', '[', ']', ':', ',', '~', '/', '\u007f') },
  { weight: 2, arbitrary: fc.constantFrom('"', '\\') },
  { weight: 2, arbitrary: fc.constantFrom('\n', '\t', '\b', '\f', '\r', '\u0000', '\u0001', '\u001f') },
  { weight: 1, arbitrary: fc.constantFrom('é', 'ß', '\u0080', '\u07ff') },
  { weight: 1, arbitrary: fc.constantFrom('€', '\u0800', '\u2028', '\u2029', '\ufeff', '\uffff') },
  { weight: 2, arbitrary: fc.constantFrom('😀', '👍🏽', '\u{10000}', '\u{10ffff}') },
  { weight: 1, arbitrary: fc.constantFrom('\ud800', '\udbff', '\udc00', '\udfff') },
);

/** A string mixing every class of character; `repeat` makes some long ones cheaply. */
export function wireString(maxLength = 24, maxRepeat = 1, minLength = 0): fc.Arbitrary<string> {
  const base = fc.string({ unit: wireChar, minLength, maxLength });
  if (maxRepeat <= 1) return base;
  return fc.oneof(
    { weight: 3, arbitrary: base },
    { weight: 1, arbitrary: fc.tuple(base, fc.integer({ min: 2, max: maxRepeat })).map(([s, n]) => s.repeat(n)) },
  );
}

/** Object keys: plain, pointer-escaping, unicode, empty, and some longer than small maxStringBytes. */
export const keyArb: fc.Arbitrary<string> = fc.oneof(
  { weight: 6, arbitrary: fc.constantFrom('a', 'b', 'c', 'id', 'name', 'items', 'value', 'x', 'y', 'z') },
  { weight: 2, arbitrary: fc.constantFrom('', 'a/b', 'm~n', '~1', '~0/', 'ü', '😀', 'a"b', 'line\nbreak', '0', '10') },
  { weight: 1, arbitrary: fc.constantFrom('k'.repeat(40), 'ключ'.repeat(6), '\ud800key') },
  { weight: 1, arbitrary: fc.string({ unit: wireChar, maxLength: 8 }) },
);

const scalarArb: fc.Arbitrary<unknown> = fc.oneof(
  fc.constant(null),
  fc.boolean(),
  fc.integer({ min: -1000, max: 1_000_000 }),
  fc.double({ noNaN: true, noDefaultInfinity: true }),
  wireString(20, 30),
);

/** Random JSON values (depth-limited), objects with own, ordinary prototypes. */
export const jsonValue: fc.Arbitrary<unknown> = fc.letrec<{ value: unknown; array: unknown[]; object: Record<string, unknown> }>(
  (tie) => ({
    value: fc.oneof({ depthSize: 'small', maxDepth: 7, depthIdentifier: 'json' }, scalarArb, tie('array'), tie('object')),
    array: fc.array(tie('value'), { maxLength: 14, depthIdentifier: 'json' }),
    object: fc.dictionary(keyArb, tie('value'), { maxKeys: 14, noNullPrototype: true, depthIdentifier: 'json' }),
  }),
).value;

export const jsonObject: fc.Arbitrary<Record<string, unknown>> = fc.dictionary(keyArb, jsonValue, { maxKeys: 14, noNullPrototype: true });

const base64Arb = fc
  .tuple(fc.base64String({ maxLength: 64 }), fc.integer({ min: 1, max: 200 }))
  .map(([s, n]) => (s.length % 4 === 0 ? s.repeat(n) : s));

const textArb = (maxLength: number, maxRepeat: number): fc.Arbitrary<string> => wireString(maxLength, maxRepeat);

const textBlock = fc.record(
  { type: fc.constant('text'), text: textArb(40, 200), annotations: fc.record({ priority: fc.double({ min: 0, max: 1, noNaN: true }) }), _meta: jsonObject },
  { requiredKeys: ['type', 'text'] },
);
const binaryBlock = fc.record(
  { type: fc.constantFrom('image', 'audio'), data: base64Arb, mimeType: fc.constantFrom('image/png', 'audio/wav') },
  { requiredKeys: ['type', 'data', 'mimeType'] },
);
const resourceBlock = fc.record({
  type: fc.constant('resource'),
  resource: fc.oneof(
    fc.record({ uri: fc.constantFrom('file:///a.txt', 'mem://x'), mimeType: fc.constant('text/plain'), text: textArb(40, 100) }),
    fc.record({ uri: fc.constantFrom('file:///a.bin'), blob: base64Arb }),
  ),
});
const linkBlock = fc.record({ type: fc.constant('resource_link'), uri: fc.constant('file:///x'), name: wireString(10, 4) });
export const blockArb: fc.Arbitrary<unknown> = fc.oneof(
  { weight: 5, arbitrary: textBlock },
  { weight: 2, arbitrary: binaryBlock },
  { weight: 2, arbitrary: resourceBlock },
  { weight: 1, arbitrary: linkBlock },
  { weight: 1, arbitrary: jsonValue },
);

/**
 * Random CallToolResults: text/image/audio/resource blocks, random structuredContent, `_meta`,
 * `isError`, version-dependent and unknown fields, and sometimes a text block that is exactly the
 * JSON of `structuredContent` (the mirror). `contentFirst` fixes `content` before `structuredContent`.
 */
export function callToolResult(options: { contentFirst?: boolean; unknownFields?: boolean } = {}): fc.Arbitrary<Record<string, unknown>> {
  const unknown = options.unknownFields ?? true;
  return fc
    .record(
      {
        content: fc.oneof({ weight: 8, arbitrary: fc.array(blockArb, { maxLength: 7 }) }, { weight: 1, arbitrary: jsonValue }),
        structuredContent: fc.oneof({ weight: 4, arbitrary: jsonObject }, { weight: 1, arbitrary: fc.array(jsonValue, { maxLength: 20 }) }),
        isError: fc.oneof({ weight: 5, arbitrary: fc.boolean() }, { weight: 1, arbitrary: jsonValue }),
        _meta: fc.oneof({ weight: 6, arbitrary: jsonObject }, { weight: 1, arbitrary: jsonValue }),
        task: fc.record({ taskId: fc.constant('t-1'), status: fc.constant('working') }),
        resultType: fc.constant('complete'),
        foo: jsonValue,
        nextCursor: fc.constant('c'),
      },
      { requiredKeys: [] },
    )
    .chain((record) => {
      const r = record as Record<string, unknown>;
      const keys: string[] = Object.keys(r).filter((k) => unknown || (k !== 'foo' && k !== 'nextCursor'));
      const order = options.contentFirst
        ? fc.constant([...keys.filter((k) => k === 'content'), ...keys.filter((k) => k !== 'content')])
        : fc.shuffledSubarray(keys, { minLength: keys.length, maxLength: keys.length });
      return fc.tuple(order, fc.boolean(), fc.nat(7)).map(([ks, mirror, at]) => {
        const out: Record<string, unknown> = {};
        for (const k of ks) out[k] = r[k];
        if (mirror && out.structuredContent !== undefined && Array.isArray(out.content)) {
          const i = out.content.length === 0 ? 0 : at % out.content.length;
          const content = [...(out.content as unknown[])];
          content[i] = { type: 'text', text: JSON.stringify(out.structuredContent) };
          out.content = content;
        }
        return out;
      });
    });
}

/** The protocol versions that change the allowed top-level fields. */
export const protocolVersionArb = fc.constantFrom(undefined, '2025-03-26', '2025-06-18', '2025-11-25', '2026-07-28');

/**
 * Random valid limits, small enough that every bound engages on the generated results.
 * `maxResultBytes` is the floor (`minResultBytes`) plus a random slack. `bigResult` lifts it out of
 * play; `tight` makes it the bound that cuts first (roomy other limits, little slack).
 */
export function limitsArb(options: { minStringBytes?: number; bigResult?: boolean; tight?: boolean } = {}): fc.Arbitrary<BudgetOptions> {
  const tight = options.tight ?? false;
  return fc
    .record({
      maxTextBytes: fc.integer({ min: 1, max: tight ? 50_000 : 3000 }),
      maxBlockBytes: fc.integer({ min: 1, max: tight ? 50_000 : 1500 }),
      maxTokens: fc.oneof({ weight: 2, arbitrary: fc.constant(1024 ** 3) }, { weight: 1, arbitrary: fc.integer({ min: 256, max: 1500 }) }),
      maxItems: fc.integer({ min: 1, max: tight ? 60 : 12 }),
      maxKeys: fc.integer({ min: 1, max: tight ? 60 : 12 }),
      maxStringBytes: fc.integer({ min: options.minStringBytes ?? 16, max: tight ? 5000 : 300 }),
      maxDepth: fc.integer({ min: 4, max: 9 }),
      maxOmittedPaths: fc.integer({ min: 0, max: 24 }),
      notice: fc.boolean(),
      protocolVersion: protocolVersionArb,
      slack: fc.nat(tight ? 400 : 6000),
    })
    .map(({ slack, ...l }) => {
      const floor = minResultBytes({ ...DEFAULT_LIMITS, ...l });
      return { ...l, maxResultBytes: options.bigResult ? 1024 * 1024 * 1024 : floor + slack };
    });
}

// ------------------------------------------------------------------ never a broken result
// Results biased toward what broke real clients: thousands of tiny blocks, blocks missing required
// fields, big ids, base64-looking strings in structured content, typed structures; limits down to
// the smallest valid ones.

/** Base64 strings (valid for `atob`), long enough to be cut by small bounds. */
export const base64Value: fc.Arbitrary<string> = fc
  .tuple(fc.base64String({ minLength: 8, maxLength: 64 }), fc.integer({ min: 1, max: 40 }), fc.boolean())
  .map(([s, n, padded]) => {
    // Repeat the unpadded core (padding only at the very end), then pad to a multiple of 4.
    let core = s.replace(/=+$/, '').repeat(n);
    if (core.length % 4 === 1) core = core.slice(0, -1);
    return padded && core.length % 4 !== 0 ? core + '='.repeat(4 - (core.length % 4)) : core;
  })
  // Realistic payloads mix letter cases and digits early (a run of one class is not detected as base64).
  .filter((s) => /[A-Z]/.test(s.slice(0, 16)) && /[a-z]/.test(s.slice(0, 16)) && /[0-9]/.test(s.slice(0, 16)));

/** A base64 data URI. */
const dataUri = base64Value.map((b) => `data:image/png;base64,${b}`);

const bigId: fc.Arbitrary<unknown> = fc.oneof(
  fc.constant(Number.MAX_SAFE_INTEGER),
  fc.bigInt({ min: 10n ** 18n, max: 10n ** 30n }).map((n) => `id-${n}`),
  fc.string({ minLength: 40, maxLength: 300 }),
  fc.uuid(),
);

const tinyText = fc.oneof(
  { weight: 6, arbitrary: fc.string({ maxLength: 6 }) },
  { weight: 1, arbitrary: fc.string({ maxLength: 200 }) },
  { weight: 1, arbitrary: fc.constantFrom('{"a":1}', '[1,2', 'é😀"\\\n') },
);

const annotations = fc.record(
  { audience: fc.constantFrom(['user'], ['assistant'], ['user', 'assistant']), priority: fc.double({ min: 0, max: 1, noNaN: true }) },
  { requiredKeys: [] },
);

/** Valid blocks of every type, and some the schema rejects (which the budget must drop). */
export const trickyBlock: fc.Arbitrary<unknown> = fc.oneof(
  { weight: 12, arbitrary: fc.record({ type: fc.constant('text'), text: tinyText, annotations }, { requiredKeys: ['type', 'text'] }) },
  { weight: 2, arbitrary: fc.record({ type: fc.constantFrom('image', 'audio'), data: base64Value, mimeType: fc.constantFrom('image/png', 'audio/wav') }) },
  {
    weight: 2,
    arbitrary: fc.record({
      type: fc.constant('resource'),
      resource: fc.oneof(
        fc.record({ uri: fc.constantFrom('file:///a.txt', 'mem://x'), mimeType: fc.constant('text/plain'), text: tinyText }),
        fc.record({ uri: fc.constant('file:///a.bin'), blob: base64Value }),
      ),
    }),
  },
  {
    weight: 2,
    arbitrary: fc.record(
      { type: fc.constant('resource_link'), uri: fc.oneof(fc.constant('file:///x'), bigId.map((i) => `file:///${String(i)}`)), name: fc.string({ maxLength: 30 }), size: fc.nat(), description: fc.string({ maxLength: 40 }) },
      { requiredKeys: ['type', 'uri', 'name'] },
    ),
  },
  // Rejected by the client's schema: the budget drops them.
  { weight: 1, arbitrary: fc.constantFrom({}, { type: 'resource_link', uri: 'file:///x' }, { type: 'image', data: 'QUJD' }, { type: 'text' }, { type: 'bogus', text: 'x' }, { type: 'image', data: 'not base64!', mimeType: 'image/png' }, 'a string', [1]) },
);

const structureValue: fc.Arbitrary<unknown> = fc.letrec<{ value: unknown; object: Record<string, unknown> }>((tie) => ({
  value: fc.oneof(
    { depthSize: 'small', maxDepth: 4, depthIdentifier: 'sv' },
    fc.integer(),
    fc.string({ maxLength: 40 }),
    base64Value,
    dataUri,
    bigId,
    fc.array(tie('value'), { maxLength: 30, depthIdentifier: 'sv' }),
    tie('object'),
  ),
  object: fc.dictionary(fc.constantFrom('id', 'name', 'data', 'blob', 'path', 'items', 'entries', 'size', 'mimeType', 'x'), tie('value'), {
    maxKeys: 8,
    noNullPrototype: true,
    depthIdentifier: 'sv',
  }),
})).value;

/** A structure shaped like a typed tool's output: a list of entries with ids and media. */
export const typedStructure: fc.Arbitrary<Record<string, unknown>> = fc.record({
  entries: fc.array(fc.record({ id: bigId, name: fc.string({ maxLength: 30 }), data: fc.option(base64Value, { nil: undefined }) }), { maxLength: 200 }),
  total: fc.nat(),
});

/** Results biased toward many tiny blocks, base64 in structure, big ids; keys in random order. */
export const trickyResult: fc.Arbitrary<Record<string, unknown>> = fc
  .record(
    {
      content: fc.oneof(
        { weight: 3, arbitrary: fc.array(trickyBlock, { maxLength: 12 }) },
        { weight: 2, arbitrary: fc.array(trickyBlock, { minLength: 200, maxLength: 3000 }) },
      ),
      structuredContent: fc.oneof(typedStructure, fc.dictionary(fc.string({ maxLength: 8 }), structureValue, { maxKeys: 8, noNullPrototype: true })),
      isError: fc.boolean(),
      _meta: fc.dictionary(fc.constantFrom('a', 'trace', 'data'), structureValue, { maxKeys: 3, noNullPrototype: true }),
    },
    { requiredKeys: [] },
  )
  .chain((r) => {
    const keys = Object.keys(r);
    return fc.tuple(fc.shuffledSubarray(keys, { minLength: keys.length, maxLength: keys.length }), fc.boolean()).map(([order, mirror]) => {
      const out: Record<string, unknown> = {};
      for (const k of order) out[k] = (r as Record<string, unknown>)[k];
      if (mirror && out.structuredContent !== undefined && Array.isArray(out.content)) {
        out.content = [{ type: 'text', text: JSON.stringify(out.structuredContent) }, ...(out.content as unknown[])];
      }
      return out;
    });
  });

/** Limits from the smallest valid ones up to the defaults; sometimes only `maxResultBytes`. */
export const trickyLimits: fc.Arbitrary<BudgetOptions> = fc.oneof(
  fc
    .record({
      maxTextBytes: fc.integer({ min: 1, max: 4000 }),
      maxBlockBytes: fc.integer({ min: 1, max: 2000 }),
      maxTokens: fc.oneof({ weight: 2, arbitrary: fc.constant(1024 ** 3) }, { weight: 1, arbitrary: fc.integer({ min: 256, max: 1500 }) }),
      maxItems: fc.integer({ min: 1, max: 50 }),
      maxKeys: fc.integer({ min: 1, max: 20 }),
      maxStringBytes: fc.integer({ min: 16, max: 400 }),
      maxDepth: fc.integer({ min: 4, max: 8 }),
      maxOmittedPaths: fc.integer({ min: 0, max: 20 }),
      notice: fc.boolean(),
      protocolVersion: fc.constantFrom(undefined, '2025-06-18', '2025-11-25'),
      slack: fc.oneof(fc.nat(300), fc.nat(20_000)),
    })
    .map(({ slack, ...l }) => ({ ...l, maxResultBytes: minResultBytes({ ...DEFAULT_LIMITS, ...l }) + slack })),
  fc.integer({ min: 8 * 1024, max: 96 * 1024 }).map((maxResultBytes) => ({ maxResultBytes })),
);

/** Issues the SDK client would raise for this result (empty when it accepts it). */
export function sdkIssues(result: unknown): string[] {
  const parsed = CallToolResultSchema.safeParse(result);
  return parsed.success ? [] : parsed.error.issues.slice(0, 3).map((i) => `${i.path.join('/')}: ${i.message}`);
}
