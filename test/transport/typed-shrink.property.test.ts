/**
 * Typed shrink at every budget (the in-memory path: the decorator and `serve`): generated output
 * schemas (required and optional members at every depth, arrays of objects and of arrays, several
 * arrays with their own `minItems`, enums, long strings) and results of every size, bounded from
 * the smallest budget to 64 KiB. A typed success is always valid against its schema and within the
 * budget. A result is withheld only when no shrink of the policy's forms fits: array items dropped
 * from the end, members the schema does not require dropped whole, at any depth and per array.
 * "Fits" is what the budget itself says of the shrink with its text mirror: it passes unchanged,
 * with room left for the report. On small cases every such shrink is tried (a brute-force oracle);
 * on all cases the smallest one is, which by monotonicity decides them all.
 *
 * The streaming path (a line too long to hold, bounded as it streams) keeps only the bounded
 * result and the structure's scalar members; there a typed success is valid and within the budget
 * too, and a structure whose required members outside its arrays are scalars is never withheld
 * when an array before them can lose items.
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { boundResult, DEFAULT_LIMITS, minResultBytes, NOTICE_KEY, noticeText, REPORT_KEY, resolveLimits, type BudgetReport, type ResolvedLimits } from '../../src/engine/index.js';
import { enforceOutputSchema, ToolCatalog, TYPED_SEARCH } from '../../src/transport/core/typed-results.js';
import { structureAfterCut } from '../../src/transport/core/receipt-capture.js';
import { ResponseBudget } from '../../src/transport/core/response-budget.js';
import { LongServerLine } from '../../src/transport/proxy/long-response.js';
import { timeBox } from '../helpers/time-box.js';

const SMALLEST = minResultBytes(DEFAULT_LIMITS);
// The claims are of a search given its time: on a loaded machine a case of megabytes could run out.
TYPED_SEARCH.ms = Infinity;
const RUN = { ...timeBox(150, 3000), ...(process.env.FC_SEED ? { seed: Number(process.env.FC_SEED), path: process.env.FC_PATH, endOnFailure: true } : {}) };
/** Shrinks tried by the brute force at most; a case with more is judged by its smallest shrink only. */
const MAX_CANDIDATES = 1500;

type Json = unknown;
type Shape =
  | { t: 'str'; len: number }
  | { t: 'num' }
  | { t: 'bool' }
  | { t: 'enum' }
  | { t: 'obj'; members: { key: string; shape: Shape; required: boolean }[] }
  | { t: 'arr'; item: Shape; minItems: number; count: number };

const ENUM = ['alpha', 'beta', 'gamma'];

function schemaOf(s: Shape): Record<string, unknown> {
  switch (s.t) {
    case 'str':
      return { type: 'string' };
    case 'num':
      return { type: 'number' };
    case 'bool':
      return { type: 'boolean' };
    case 'enum':
      return { type: 'string', enum: ENUM };
    case 'obj':
      return {
        type: 'object',
        properties: Object.fromEntries(s.members.map((m) => [m.key, schemaOf(m.shape)])),
        required: s.members.filter((m) => m.required).map((m) => m.key),
      };
    case 'arr':
      return { type: 'array', items: schemaOf(s.item), ...(s.minItems > 0 ? { minItems: s.minItems } : {}) };
  }
}

function valueOf(s: Shape, seed: number): Json {
  switch (s.t) {
    case 'str':
      return `s${seed % 89}:` + 'abcdefgh'.repeat(Math.ceil(s.len / 8)).slice(0, s.len);
    case 'num':
      return (seed % 10007) * 1.5;
    case 'bool':
      return seed % 2 === 0;
    case 'enum':
      return ENUM[seed % 3];
    case 'obj':
      return Object.fromEntries(s.members.map((m, i) => [m.key, valueOf(m.shape, seed * 31 + i)]));
    case 'arr':
      return Array.from({ length: Math.max(s.count, s.minItems) }, (_, i) => valueOf(s.item, seed * 7 + i));
  }
}

/** The JSON size of a shape's value, roughly (cases past a few megabytes are left out). */
function sizeOf(s: Shape): number {
  if (s.t === 'str') return s.len + 8;
  if (s.t === 'obj') return s.members.reduce((n, m) => n + m.key.length + 4 + sizeOf(m.shape), 2);
  if (s.t === 'arr') return 2 + Math.max(s.count, s.minItems) * (sizeOf(s.item) + 1);
  return 8;
}
const MAX_CASE_BYTES = 4_000_000;

/** The smallest shrink of `v`: optional members gone, arrays at `minItems`, recursively. */
function smallest(s: Shape, v: Json): Json {
  if (s.t === 'obj') {
    const o = v as Record<string, Json>;
    return Object.fromEntries(s.members.filter((m) => m.required).map((m) => [m.key, smallest(m.shape, o[m.key])]));
  }
  if (s.t === 'arr') return (v as Json[]).slice(0, s.minItems).map((x) => smallest(s.item, x));
  return v;
}

/** Every shrink of `v` of the policy's forms (undefined past `cap`). */
function shrinks(s: Shape, v: Json, cap: number): Json[] | undefined {
  if (s.t === 'obj') {
    const o = v as Record<string, Json>;
    let acc: [string, Json][][] = [[]];
    for (const m of s.members) {
      const own = shrinks(m.shape, o[m.key], cap);
      if (own === undefined) return undefined;
      const next: [string, Json][][] = [];
      for (const a of acc) {
        if (!m.required) next.push(a);
        for (const x of own) next.push([...a, [m.key, x]]);
        if (next.length > cap) return undefined;
      }
      acc = next;
    }
    return acc.map((e) => Object.fromEntries(e));
  }
  if (s.t === 'arr') {
    const items = v as Json[];
    const out: Json[] = [];
    let prefixes: Json[][] = [[]];
    for (let k = 0; k <= items.length; k++) {
      if (k >= s.minItems) out.push(...prefixes);
      if (k === items.length) break;
      const own = shrinks(s.item, items[k], cap);
      if (own === undefined) return undefined;
      const next: Json[][] = [];
      for (const p of prefixes) for (const x of own) next.push([...p, x]);
      if (next.length + out.length > cap) return undefined;
      prefixes = next;
    }
    return out;
  }
  return [v];
}

/** The shrink with its text mirror passes the budget unchanged, with room for the report. */
function fits(structure: Json, limits: ResolvedLimits): boolean {
  const result = { content: [{ type: 'text', text: JSON.stringify(structure) }], structuredContent: structure };
  if (boundResult(result, limits, 'result').report !== undefined) return false;
  return Buffer.byteLength(JSON.stringify(result)) <= limits.maxResultBytes - limits.reserveBytes;
}

/** A success's report says it was cut, and its notice (when there is one) is the report's. */
function expectReported(out: Record<string, unknown>): void {
  const report = (out._meta as Record<string, BudgetReport>)[REPORT_KEY]!;
  expect(report.truncated).toBe(true);
  const notice = (out.content as { text?: string; _meta?: Record<string, unknown> }[]).find((b) => b._meta?.[NOTICE_KEY] === true);
  if (notice !== undefined) expect(notice.text).toBe(noticeText(report));
}

const key = fc.constantFrom('id', 'name', 'path', 'total', 'kind', 'note', 'entries', 'meta', 'tags');
const scalar: fc.Arbitrary<Shape> = fc.oneof(
  { weight: 3, arbitrary: fc.constantFrom<Shape>({ t: 'num' }, { t: 'bool' }, { t: 'enum' }) },
  { weight: 3, arbitrary: fc.integer({ min: 0, max: 40 }).map((len): Shape => ({ t: 'str', len })) },
  { weight: 4, arbitrary: fc.integer({ min: 500, max: 24_000 }).map((len): Shape => ({ t: 'str', len })) },
);
const members = (g: fc.Arbitrary<Shape>): fc.Arbitrary<{ key: string; shape: Shape; required: boolean }[]> =>
  fc.uniqueArray(fc.record({ key, shape: g, required: fc.boolean() }), { minLength: 1, maxLength: 4, selector: (m) => m.key });
const count = fc.oneof({ weight: 4, arbitrary: fc.integer({ min: 0, max: 4 }) }, { weight: 1, arbitrary: fc.integer({ min: 5, max: 3000 }) });

const { shape } = fc.letrec<{ shape: Shape; obj: Shape; arr: Shape }>((tie) => ({
  shape: fc.oneof({ maxDepth: 3, depthSize: 'small', withCrossShrink: true }, scalar, tie('obj'), tie('arr')),
  obj: members(tie('shape')).map((m): Shape => ({ t: 'obj', members: m })),
  arr: fc.record({ item: tie('shape'), minItems: fc.constantFrom(0, 1, 1, 2, 3), count }).map((a): Shape => ({ t: 'arr', ...a })),
}));
/**
 * Items heavy with optional members, in arrays that must keep some: where the budget fills the
 * first items whole and leaves too few, and only dropping optional members inside items fits.
 */
const heavyItems: fc.Arbitrary<Shape> = fc
  .record({
    optional: fc.uniqueArray(fc.constantFrom('a', 'b', 'c', 'd', 'e'), { minLength: 2, maxLength: 5 }),
    len: fc.integer({ min: 300, max: 9000 }),
    minItems: fc.integer({ min: 1, max: 4 }),
    extra: fc.integer({ min: 0, max: 3 }),
    arrays: fc.integer({ min: 1, max: 2 }),
  })
  .map(({ optional, len, minItems, extra, arrays }): Shape => {
    const item: Shape = {
      t: 'obj',
      members: [...optional.map((k) => ({ key: k, shape: { t: 'str', len } as Shape, required: false })), { key: 'id', shape: { t: 'num' }, required: true }],
    };
    const lists = Array.from({ length: arrays }, (_, i) => ({ key: `list${i}`, shape: { t: 'arr', item, minItems: minItems + i, count: minItems + i + extra } as Shape, required: true }));
    return { t: 'obj', members: [...lists, { key: 'total', shape: { t: 'num' }, required: true }] };
  });
/** The structure: an object, with at least one array in most cases. */
const structure: fc.Arbitrary<Shape> = fc.oneof(
  { weight: 3, arbitrary: members(shape).map((m): Shape => ({ t: 'obj', members: m })) },
  { weight: 2, arbitrary: heavyItems },
).filter((s) => sizeOf(s) <= MAX_CASE_BYTES);

function toolOf(schema: Record<string, unknown>) {
  const c = new ToolCatalog();
  c.learn({ tools: [{ name: 't', inputSchema: { type: 'object' }, outputSchema: schema, annotations: { readOnlyHint: true } }] });
  return c.get('t')!;
}

describe('typed shrink at every budget (in memory)', () => {
  it('a success validates and fits; a result is withheld only when no shrink of the policy’s forms fits (brute force on small cases)', () => {
    const seen = { runs: 0, cut: 0, successes: 0, withheld: 0, bruteForced: 0, shrinksTried: 0 };
    fc.assert(
      fc.property(structure, fc.integer({ min: 1, max: 1_000_000 }), fc.constantFrom(SMALLEST, 8192, 16384, 32768, 65536), (s, seed, maxResultBytes) => {
        const tool = toolOf(schemaOf(s));
        const sc = valueOf(s, seed) as Record<string, unknown>;
        expect(tool.validate!(sc)).toBe(true);
        seen.runs++;
        const original = { content: [{ type: 'text', text: JSON.stringify(sc) }], structuredContent: sc };
        const limits = resolveLimits({ maxResultBytes });
        const { result, report } = boundResult(original, limits, 'result');
        if (report === undefined) return; // fits: unchanged
        seen.cut++;
        const out = enforceOutputSchema('t', tool, original, result as Record<string, unknown>, report, maxResultBytes, limits);
        if (out.isError !== true) {
          seen.successes++;
          expect(tool.validate!(out.structuredContent), JSON.stringify(out.structuredContent).slice(0, 300)).toBe(true);
          expect(Buffer.byteLength(JSON.stringify(out))).toBeLessThanOrEqual(maxResultBytes);
          expectReported(out);
          return;
        }
        seen.withheld++;
        const why = (x: Json): string => `withheld although ${JSON.stringify(x).slice(0, 200)} fits: ${JSON.stringify((out._meta as Record<string, unknown>)[REPORT_KEY]).slice(0, 300)}`;
        const least = smallest(s, sc);
        expect(fits(least, limits), why(least)).toBe(false);
        const all = shrinks(s, sc, MAX_CANDIDATES);
        if (all === undefined) return;
        seen.bruteForced++;
        seen.shrinksTried += all.length;
        for (const x of all) expect(fits(x, limits), why(x)).toBe(false);
      }),
      RUN,
    );
    if (process.env.SHOW_STATS) console.log(seen);
    expect(seen.runs).toBeGreaterThan(0);
  });
});

/** Required scalar members after one long list whose items may all go: the streaming path's class. */
const listThenScalars: fc.Arbitrary<Shape> = fc
  .record({
    item: members(scalar).map((m): Shape => ({ t: 'obj', members: m })),
    count: fc.integer({ min: 5, max: 3000 }),
    after: fc.uniqueArray(fc.record({ key: fc.constantFrom('total', 'kind', 'note', 'id'), shape: fc.constantFrom<Shape>({ t: 'num' }, { t: 'bool' }, { t: 'enum' }, { t: 'str', len: 30 }), required: fc.boolean() }), { minLength: 1, maxLength: 3, selector: (m) => m.key }),
  })
  .map(({ item, count, after }): Shape => ({ t: 'obj', members: [{ key: 'entries', shape: { t: 'arr', item, minItems: 0, count }, required: true }, ...after] }))
  .filter((s) => sizeOf(s) <= MAX_CASE_BYTES);

describe('typed shrink at every budget (streamed)', () => {
  it('a success validates and fits; required scalars after a list that can lose items are never lost', () => {
    fc.assert(
      fc.property(fc.oneof(listThenScalars, structure), fc.integer({ min: 1, max: 1_000_000 }), fc.constantFrom(SMALLEST, 8192, 32768, 65536), fc.integer({ min: 1, max: 70_000 }), (s, seed, maxResultBytes, piece) => {
        const schema = schemaOf(s);
        const sc = valueOf(s, seed);
        const b = new ResponseBudget({ maxResultBytes }, undefined, [{ name: 't', inputSchema: { type: 'object' }, outputSchema: schema, annotations: { readOnlyHint: true } }]);
        b.inbound({ jsonrpc: '2.0', id: 1, method: 'tools/call', params: { name: 't', arguments: {} } });
        const line = Buffer.from(JSON.stringify({ jsonrpc: '2.0', id: 1, result: { content: [{ type: 'text', text: JSON.stringify(sc) }], structuredContent: sc } }));
        // As the proxy does for a line over its fast path (server-output.ts, longLine).
        const long = new LongServerLine(b.streamLimits(), 1024, b.typedPending());
        const step = Math.max(piece, Math.ceil(line.length / 2000)); // any chunking, at most 2000 chunks
        for (let at = 0; at < line.length; at += step) long.chunk(line.subarray(at, at + step));
        const outcome = long.end();
        if (outcome.kind !== 'response') throw new Error(`not a response: ${outcome.kind}`);
        const claim = b.claim(1, false);
        if (claim.kind !== 'request') throw new Error('unclaimed');
        const r = outcome.message.result as Record<string, unknown>;
        const report = (r._meta as Record<string, unknown> | undefined)?.[REPORT_KEY];
        const out = b.typed(claim.request, (structureAfterCut(r, outcome.receiptFrom) ?? r) as never, r as never, report as never, 1, outcome.receiptFrom) as Record<string, unknown>;
        const tool = toolOf(schema);
        if (out.isError !== true) {
          expect(tool.validate!(out.structuredContent), JSON.stringify(out.structuredContent).slice(0, 300)).toBe(true);
          expect(Buffer.byteLength(JSON.stringify(out))).toBeLessThanOrEqual(maxResultBytes);
          if (report !== undefined) expectReported(out); // else it passed whole
          return;
        }
        if (s.t !== 'obj' || s.members[0]?.key !== 'entries' || s.members[0].shape.t !== 'arr' || s.members[0].shape.minItems !== 0) return;
        // The list can go whole; its scalars after it must then fit (all are small).
        const least = smallest(s, sc);
        if (fits(least, b.limits)) expect.fail(`withheld although ${JSON.stringify(least)} fits: ${JSON.stringify((out._meta as Record<string, unknown>)[REPORT_KEY]).slice(0, 300)}`);
      }),
      RUN,
    );
  });
});
