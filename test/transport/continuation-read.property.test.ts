/**
 * Reading what the budget cut: following the reading tool's `next` from the first cut part, and
 * putting each part in place by the one reassembly rule, gives the original result back exactly,
 * and every answer is within the budget (the budget would pass it unchanged). Time-boxed
 * (`npm run test:long` scales them up (test/helpers/time-box.ts)).
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { boundJson, DEFAULT_LIMITS, fitsWithinBudget, minResultBytes, resolveLimits, type ResolvedLimits } from '../../src/engine/index.js';
import { applyPart, planReads, withoutBudgetParts } from '../../src/transport/core/continuation-plan.js';
import { readPart, readResult, type ReadAnswer } from '../../src/transport/core/continuation-read.js';
import { ContinuationStore, type StoredResult } from '../../src/transport/core/continuation-store.js';
import { heldInMemory } from '../../src/transport/core/continuation-spill.js';
import { JsonBytes, READER_SIZES, type ReaderSizes } from '../../src/transport/core/continuation-bytes.js';
import { planReadsHeld } from '../../src/transport/core/continuation-plan-bytes.js';
import { looseJson } from '../helpers/loose-json.js';
import { prng } from '../helpers/prng.js';
import { callToolResult, jsonValue, wireString } from '../helpers/arbitraries.js';
import { timeBox } from '../helpers/time-box.js';

const RUN = timeBox(200, 2000);

type Json = Record<string, unknown>;

/** Budgets the reading tool is held to: result bytes with the scaled limits, and small counts and depths. */
const readLimits: fc.Arbitrary<ResolvedLimits> = fc
  .record({
    maxResultBytes: fc.constantFrom(8192, 16384, 32768, 65536),
    maxItems: fc.integer({ min: 1, max: 40 }),
    maxKeys: fc.integer({ min: 8, max: 40 }),
    maxDepth: fc.integer({ min: 4, max: 12 }),
    notice: fc.boolean(),
  })
  .map((l) => resolveLimits(l));

/** Follow `next` from the first cut part, putting every part in place; every answer checked against the budget. */
async function readAll(entry: StoredResult, start: unknown, limits: ResolvedLimits): Promise<{ root: unknown; answers: number }> {
  let root = structuredClone(start);
  let answer: ReadAnswer = await readPart(entry, undefined, undefined, limits);
  let answers = 0;
  for (;;) {
    answers++;
    const result = readResult(answer);
    expect(fitsWithinBudget(result, limits, 'result')).toBe(true);
    expect(boundJson(result, limits, 'result').unchanged).toBe(true);
    expect(Buffer.byteLength(JSON.stringify(result))).toBeLessThanOrEqual(limits.maxResultBytes);
    const data = answer.text !== undefined ? { text: answer.text } : answer.items !== undefined ? { items: answer.items } : { members: answer.members! };
    root = applyPart(root, answer.path, answer.position, data);
    if (answer.next === undefined) return { root, answers };
    expect(answer.next.handle).toBe(entry.handle);
    if (answers > 200_000) throw new Error('no end');
    answer = await readPart(entry, answer.next.path, answer.next.position, limits);
  }
}

/** How an original is held: written as a server might write it, read with the reader's steps made tiny. */
interface Holding {
  seed: number;
  sizes: ReaderSizes;
}

const holding: fc.Arbitrary<Holding> = fc.record({
  seed: fc.nat(),
  sizes: fc.oneof(
    fc.constant(READER_SIZES),
    fc.record({ chunk: fc.integer({ min: 1, max: 40 }), extra: fc.integer({ min: 16, max: 64 }), markEvery: fc.integer({ min: 1, max: 200 }), nodes: fc.integer({ min: 1, max: 8 }), marks: fc.integer({ min: 1, max: 6 }) }).map(
      (t): ReaderSizes => ({ window: t.chunk + t.extra, chunk: t.chunk, markEvery: t.markEvery, nodes: t.nodes, marks: t.marks }),
    ),
  ),
});

/**
 * `original` kept as a cut result's original is: its bytes held (written loosely when `how` says),
 * its read starts planned; both plans, the one on the parsed original and the one read from the
 * bytes, must agree.
 */
async function stored(original: Json, bounded: Json, how?: Holding): Promise<{ entry: StoredResult; start: Json }> {
  const start = withoutBudgetParts(bounded, original);
  const starts = planReads(original, start);
  const json = how === undefined ? JSON.stringify(original) : looseJson(original, prng(how.seed));
  const held = heldInMemory(Buffer.from(json));
  const fromBytes = await planReadsHeld(new JsonBytes(held, 0, how?.sizes), bounded);
  expect(fromBytes).toEqual(starts);
  const entry = new ContinuationStore().put('s', undefined, held, starts);
  return { entry: how === undefined ? entry : { ...entry, reader: new JsonBytes(held, 0, how.sizes) }, start };
}

describe('continuation reading', () => {
  it('continuation read: a cut result read to the end through next is the original, every answer within the budget', async () => {
    await fc.assert(
      fc.asyncProperty(callToolResult({ unknownFields: false }), fc.integer({ min: 1200, max: 6000 }), readLimits, holding, async (original, budget, limits, how) => {
        const l = { maxItems: 6, maxKeys: 6, maxDepth: 6, maxOmittedPaths: 4 };
        const cut = resolveLimits({ ...l, maxResultBytes: Math.max(budget, minResultBytes({ ...DEFAULT_LIMITS, ...l })) });
        const out = boundJson(original, cut, 'result');
        if (out.unchanged) return;
        const canonical = JSON.parse(JSON.stringify(original)) as Json;
        const { entry, start } = await stored(canonical, JSON.parse(out.json) as Json, how);
        expect(entry.starts.length).toBeGreaterThan(0);
        const { root } = await readAll(entry, start, limits);
        expect(JSON.stringify(root)).toBe(JSON.stringify(canonical));
      }),
      RUN,
    );
  });

  it('continuation read: a long string, array and object read from their cut to the end come back exactly', async () => {
    const value = fc.oneof(
      wireString(400, 300, 1),
      fc.array(jsonValue, { minLength: 1, maxLength: 300 }),
      fc.dictionary(wireString(12, 1, 1), jsonValue, { minKeys: 1, maxKeys: 300, noNullPrototype: true }),
    );
    await fc.assert(
      fc.asyncProperty(value, readLimits, fc.nat(), holding, async (v, limits, at, how) => {
        const original: Json = { content: [], structuredContent: { v } };
        const canonical = JSON.parse(JSON.stringify(original)) as Json;
        const cv = (canonical.structuredContent as Json).v;
        // A cut of the value at some position, as the budget would leave it.
        let kept: unknown;
        if (typeof cv === 'string') {
          const units = at % (cv.length + 1);
          const unit = units > 0 && /[\udc00-\udfff]/.test(cv[units]!) && /[\ud800-\udbff]/.test(cv[units - 1]!) ? units - 1 : units;
          kept = cv.slice(0, unit);
        } else if (Array.isArray(cv)) kept = cv.slice(0, at % (cv.length + 1));
        else kept = Object.fromEntries(Object.entries(cv as Json).slice(0, at % (Object.keys(cv as Json).length + 1)));
        const bounded: Json = { content: [], structuredContent: { v: kept } };
        const { entry, start } = await stored(canonical, bounded, how);
        if (entry.starts.length === 0) {
          expect(JSON.stringify(bounded)).toBe(JSON.stringify(canonical));
          return;
        }
        const { root } = await readAll(entry, start, limits);
        expect(JSON.stringify(root)).toBe(JSON.stringify(canonical));
      }),
      RUN,
    );
  });

  it('continuation read: strings are windowed by UTF-8 bytes and never split a character', async () => {
    const s = 'a€😀'.repeat(5000) + '\ud800z';
    const original: Json = { content: [{ type: 'text', text: s }] };
    const entry = new ContinuationStore().put('s', undefined, heldInMemory(Buffer.from(JSON.stringify(original))), [{ path: '/content/0/text', position: 0 }]);
    const limits = resolveLimits({ maxResultBytes: 8192 });
    let text = '';
    let a = await readPart(entry, undefined, undefined, limits);
    for (;;) {
      expect(a.position).toBe(Buffer.byteLength(text));
      text += a.text!;
      expect(a.next_position - a.position).toBe(Buffer.byteLength(a.text!));
      if (a.next === undefined) break;
      a = await readPart(entry, a.next.path, a.next.position, limits);
    }
    expect(text).toBe(s);
    await expect(readPart(entry, '/content/0/text', 2, limits)).rejects.toThrow(/inside a character/);
  });

  it('continuation read: a path outside what was cut, a bad pointer or position is refused saying what to send', async () => {
    const original: Json = { content: [{ type: 'text', text: 'x'.repeat(100) }], structuredContent: { a: [1, 2, 3], b: 'kept' } };
    const entry = new ContinuationStore().put('s', undefined, heldInMemory(Buffer.from(JSON.stringify(original))), [{ path: '/structuredContent/a', position: 1 }]);
    const limits = resolveLimits({});
    expect((await readPart(entry, '/structuredContent/a', 1, limits)).items).toEqual([2, 3]);
    await expect(readPart(entry, '/structuredContent/b', 0, limits)).rejects.toThrow(/not in what the budget cut/);
    await expect(readPart(entry, 'content', 0, limits)).rejects.toThrow(/must be a JSON Pointer/);
    await expect(readPart(entry, '/structuredContent/a', 9, limits)).rejects.toThrow(/from 0 to 3/);
    await expect(readPart(entry, '/structuredContent/a', 0.5, limits)).rejects.toThrow(/whole number/);
  });
});

it('reassembly defines members: one named __proto__ is a member, never the prototype', () => {
  const rebuilt = applyPart({}, '', 0, { members: [{ key: '__proto__', value: { polluted: 'yes' } }, { key: 'a', value: 1 }] }) as Record<string, unknown>;
  expect(Object.keys(rebuilt)).toEqual(['__proto__', 'a']);
  expect(Object.getPrototypeOf(rebuilt)).toBe(Object.prototype);
  expect(JSON.stringify(rebuilt)).toBe('{"__proto__":{"polluted":"yes"},"a":1}');
});
