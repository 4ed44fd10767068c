/**
 * Typed shrink at every budget (the in-memory path: the decorator and `serve`): generated output
 * schemas (required and optional members, arrays of objects, nested objects, `minItems`, enums) and
 * results of every size, bounded from the smallest budget to 64 KiB. A typed success is always
 * valid against its schema; a result is withheld only when no valid shrink of the forms the policy
 * makes fits, checked against the smallest of them: every optional member of the structure dropped
 * whole, every array kept to its first `max(minItems, 1)` items, whole. (Not made, so not asked for:
 * optional members dropped inside items, and arrays cut to different counts.)
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { boundResult, DEFAULT_LIMITS, minResultBytes, REPORT_KEY, resolveLimits } from '../../src/engine/index.js';
import { enforceOutputSchema, ToolCatalog } from '../../src/transport/core/typed-results.js';
import { timeBox } from '../helpers/time-box.js';

/** The smallest budget the default limits accept. */
const SMALLEST = minResultBytes(DEFAULT_LIMITS);
const RUN = timeBox(200, 2500);

type Schema = Record<string, unknown>;
type Json = unknown;

/** A schema, how to make values of it (`n`: items per array), and its smallest shrink the policy makes (of a value made with `n`, `seed`). */
interface Gen {
  schema: Schema;
  value: (n: number, seed: number) => Json;
  minimal: (n: number, seed: number) => Json;
}

const word = (seed: number): string => `w${seed % 97}-${'x'.repeat(seed % 23)}`;

const scalarGen = fc.constantFrom<Gen>(
  { schema: { type: 'number' }, value: (_n, s) => s * 1.5, minimal: (_n, s) => s * 1.5 },
  { schema: { type: 'string' }, value: (_n, s) => word(s), minimal: (_n, s) => word(s) },
  { schema: { type: 'string', enum: ['alpha', 'beta', 'gamma'] }, value: (_n, s) => ['alpha', 'beta', 'gamma'][s % 3], minimal: (_n, s) => ['alpha', 'beta', 'gamma'][s % 3] },
  { schema: { type: 'boolean' }, value: (_n, s) => s % 2 === 0, minimal: (_n, s) => s % 2 === 0 },
);

/**
 * An object schema over `members` generators, each required or not. `top`: the structure itself,
 * whose optional members the policy drops; an item or nested object stays whole.
 */
function objectGen(members: [string, Gen, boolean][], top = false): Gen {
  const properties = Object.fromEntries(members.map(([k, g]) => [k, g.schema]));
  const required = members.filter(([, , r]) => r).map(([k]) => k);
  const value = (n: number, s: number): Json => Object.fromEntries(members.map(([k, g], i) => [k, g.value(n, s * 31 + i)]));
  return {
    schema: { type: 'object', properties, required },
    value,
    minimal: top ? (n, s) => Object.fromEntries(members.flatMap(([k, g, r], i) => (r ? [[k, g.minimal(n, s * 31 + i)]] : []))) : value,
  };
}

function arrayGen(item: Gen, minItems: number): Gen {
  const value = (n: number, s: number): Json[] => Array.from({ length: Math.max(n, minItems) }, (_, i) => item.value(n, s * 7 + i));
  return {
    schema: { type: 'array', items: item.schema, ...(minItems > 0 ? { minItems } : {}) },
    value,
    minimal: (n, s) => value(n, s).slice(0, Math.max(minItems, 1)),
  };
}

const key = fc.constantFrom('id', 'name', 'path', 'total', 'kind', 'note', 'entries', 'meta');
const memberList = (g: fc.Arbitrary<Gen>): fc.Arbitrary<[string, Gen, boolean][]> =>
  fc.uniqueArray(fc.tuple(key, g, fc.boolean()), { minLength: 1, maxLength: 4, selector: (m) => m[0] });

/** An item: an object of scalars. A structure: members that are scalars, arrays of items, or an object of scalars. */
const itemGen = memberList(scalarGen).map((m) => objectGen(m));
const structureGen: fc.Arbitrary<Gen> = memberList(
  fc.oneof(
    { weight: 2, arbitrary: scalarGen },
    { weight: 3, arbitrary: fc.tuple(itemGen, fc.constantFrom(0, 0, 1, 3)).map(([g, m]) => arrayGen(g, m)) },
    { weight: 1, arbitrary: itemGen },
  ),
).map((m) => objectGen(m, true));

function catalogOf(schema: Schema): ToolCatalog {
  const c = new ToolCatalog();
  c.learn({ tools: [{ name: 't', inputSchema: { type: 'object' }, outputSchema: schema, annotations: { readOnlyHint: true } }] });
  return c;
}

describe('typed shrink at every budget (in memory)', () => {
  it('a typed success validates; a result is withheld only when even the smallest valid shrink cannot fit', () => {
    fc.assert(
      fc.property(structureGen, fc.integer({ min: 0, max: 3000 }), fc.integer({ min: 1, max: 1_000_000 }), fc.constantFrom(SMALLEST, 8192, 16384, 32768, 65536), (gen, n, seed, maxResultBytes) => {
        const tool = catalogOf(gen.schema).get('t')!;
        const sc = gen.value(n, seed) as Record<string, unknown>;
        expect(tool.validate!(sc)).toBe(true);
        const original = { content: [{ type: 'text', text: JSON.stringify(sc) }], structuredContent: sc };
        const limits = resolveLimits({ maxResultBytes });
        const { result, report } = boundResult(original, limits, 'result');
        if (report === undefined) return; // fits: unchanged
        const out = enforceOutputSchema('t', tool, original, result as Record<string, unknown>, report, maxResultBytes, limits);
        if (out.isError !== true) {
          expect(tool.validate!(out.structuredContent), JSON.stringify(out.structuredContent).slice(0, 300)).toBe(true);
          expect(Buffer.byteLength(JSON.stringify(out))).toBeLessThanOrEqual(maxResultBytes);
          return;
        }
        // Withheld: the smallest valid shrink, with its mirror, must not fit the room the budget leaves.
        const minimal = gen.minimal(n, seed);
        const smallest = Buffer.byteLength(JSON.stringify({ content: [{ type: 'text', text: JSON.stringify(minimal) }], structuredContent: minimal }));
        expect(smallest, `withheld although ${JSON.stringify(minimal).slice(0, 200)} fits: ${JSON.stringify((out._meta as Record<string, unknown>)[REPORT_KEY]).slice(0, 300)}`).toBeGreaterThan(
          maxResultBytes - limits.reserveBytes,
        );
      }),
      RUN,
    );
  });
});
