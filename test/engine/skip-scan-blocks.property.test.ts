/**
 * The WebAssembly skip scanner's block paths against the JavaScript reference: long inputs that
 * cross many 64-byte blocks, blocks full of brackets, dense quotes and backslashes, depth-0 runs
 * (bulk commas and values) on both sides of block edges, and every alignment mod 64 of the input
 * and of the buffer boundaries. Same return values and same final state, whole or fed in pieces.
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { feed, same, split, state, type Outcome } from '../helpers/skip-feed.js';
import { SKIP_MORE, newSkipState, scanSkipJs, type SkipScan, type SkipState } from '../../src/engine/skip-scan.js';
import { scanSkipWasm, wasmSimdAvailable } from '../../src/engine/skip-scan-wasm.js';
import { timeBox } from '../helpers/time-box.js';

const RUN = timeBox(300, 2500);
const enc = new TextEncoder();

const SKIP = state({});
const BULK = state({ bulk: true });

/** Cuts that put a buffer boundary at offset `mod` of a 64-byte block, and random ones. */
const cutsArb = fc.oneof(
  fc.array(fc.nat(), { maxLength: 5 }),
  fc.tuple(fc.integer({ min: 0, max: 63 }), fc.integer({ min: 0, max: 20 })).map(([mod, n]) =>
    Array.from({ length: n }, (_, i) => 64 * (i + 1) + mod),
  ),
);

/** An array of JSON values as text, compact or indented, as tool results print them. */
const arrayText = fc
  .tuple(
    fc.array(fc.jsonValue({ maxDepth: 3 }), { minLength: 1, maxLength: 40 }),
    fc.constantFrom(undefined, 1, 2, '\t'),
  )
  .map(([items, indent]) => enc.encode(JSON.stringify(items, null, indent)));

/** Records like a listing's, whose closing brackets and commas fall at every offset of a block. */
const recordsText = fc
  .tuple(
    fc.array(fc.record({ id: fc.nat(), name: fc.string({ maxLength: 12 }), tags: fc.array(fc.string({ maxLength: 3 }), { maxLength: 3 }) }), {
      minLength: 1,
      maxLength: 30,
    }),
    fc.constantFrom('', ' ', '\n  '),
  )
  .map(([recs, sep]) => enc.encode('[' + recs.map((r) => JSON.stringify(r)).join(',' + sep) + ']'));

/** Blocks full of brackets (and commas), nested in any order, valid or not. */
const bracketsText = fc
  .array(fc.constantFrom('[', ']', '{', '}', ',', ' ', '[]', '{}', '],[', '1'), { minLength: 1, maxLength: 400 })
  .map((parts) => enc.encode(parts.join('')));

/** Dense quotes and backslashes (runs of every parity) among brackets. */
const quotesText = fc
  .array(
    fc.oneof(
      { weight: 4, arbitrary: fc.constantFrom('"', '\\', '\\\\', '\\"', '\\\\"', '\\\\\\"') },
      { weight: 2, arbitrary: fc.constantFrom('[', ']', '{', '}', ',') },
      { weight: 2, arbitrary: fc.constantFrom('a', ' ', 'é', '😀', ':1') },
    ),
    { minLength: 1, maxLength: 400 },
  )
  .map((parts) => enc.encode(parts.join('')));

/** The input moved to every alignment: `pad` spaces first (outside strings they change nothing). */
const padded = (bytes: Uint8Array, pad: number): Uint8Array => Buffer.concat([Buffer.alloc(pad, 0x20), bytes]);

describe.runIf(wasmSimdAvailable)('scanSkipWasm block paths vs scanSkipJs', () => {
  it('skips and bulk-counts arrays of any values, at every alignment and cut', () => {
    fc.assert(
      fc.property(fc.oneof(arrayText, recordsText), fc.integer({ min: 0, max: 63 }), cutsArb, (text, pad, cuts) => {
        const bytes = padded(text, pad);
        same(split(bytes, cuts), pad, SKIP);
        same(split(bytes, cuts), pad + 1, BULK);
      }),
      RUN,
    );
  });

  it('agrees on blocks full of brackets from any depth, skip and bulk', () => {
    fc.assert(
      fc.property(bracketsText, fc.integer({ min: 0, max: 63 }), fc.integer({ min: 0, max: 4 }), cutsArb, (text, pad, depth, cuts) => {
        const chunks = split(padded(text, pad), cuts);
        same(chunks, 0, state({ depth }));
        same(chunks, 0, state({ depth, bulk: true }));
      }),
      RUN,
    );
  });

  it('agrees on dense quotes and backslashes from every string state', () => {
    fc.assert(
      fc.property(quotesText, fc.integer({ min: 0, max: 63 }), fc.boolean(), fc.boolean(), fc.boolean(), cutsArb, (text, pad, inString, escape, bulk, cuts) => {
        const bytes = Buffer.concat([Buffer.alloc(pad, 0x61), text]);
        same(split(bytes, cuts), 0, state({ inString, escape, bulk, depth: bulk ? 0 : 1 }));
      }),
      RUN,
    );
  });

  it('agrees on long inputs: many kilobytes of records, strings and brackets', () => {
    fc.assert(
      fc.property(
        fc.array(fc.oneof(recordsText, arrayText, bracketsText), { minLength: 20, maxLength: 60 }),
        fc.integer({ min: 0, max: 63 }),
        cutsArb,
        (parts, pad, cuts) => {
          // One long array whose elements are the parts (some of them malformed on purpose).
          const bytes = padded(Buffer.concat([enc.encode('['), ...parts.flatMap((p, i) => (i ? [enc.encode(','), p] : [p])), enc.encode(']')]), pad);
          same(split(bytes, cuts), pad, SKIP);
          same(split(bytes, cuts), pad + 1, BULK);
        },
      ),
      { ...RUN, numRuns: Math.ceil(RUN.numRuns / 3) },
    );
  });
});

describe.runIf(wasmSimdAvailable)('scanSkipWasm at block edges', () => {
  const scanAt = (s: string, pad: number, init: SkipState, start = pad): Outcome => same([padded(enc.encode(s), pad)], start, init);

  it('ends a value whose closing bracket is the last or first byte of a block', () => {
    for (let pad = 0; pad < 140; pad++) {
      expect(scanAt('{"a":[1,"]"],"b":{}} x', pad, SKIP).results).toEqual([pad + 20]);
      expect(scanAt('[[],[[]],{}] x', pad, SKIP).results).toEqual([pad + 12]);
      expect(scanAt(' ] x', pad, SKIP).results).toEqual([-(pad + 1 + 2)]);
    }
  });

  it('bulk: a comma, the next element and the container close on both sides of a block edge', () => {
    for (let pad = 0; pad < 140; pad++) {
      const r = scanAt('{"a":1},{"b":[2]}, [3] ,"s", 4 , {} ] x', pad, BULK);
      expect(r.results).toEqual([pad + 36]);
      expect(r.state).toMatchObject({ commas: 5, sawValue: true });
      // The buffer ends right after a comma (or before the next element): no value seen since.
      expect(scanAt('{"a":1},', pad, BULK).state).toMatchObject({ commas: 1, sawValue: false, depth: 0 });
      expect(scanAt('{"a":1}, ', pad, BULK).state).toMatchObject({ commas: 1, sawValue: false });
      expect(scanAt('{"a":1},{', pad, BULK).state).toMatchObject({ commas: 1, sawValue: true, depth: 1 });
      expect(scanAt('[1],[2],', pad, BULK).state).toMatchObject({ commas: 2, sawValue: false });
    }
  });

  it('carries a string with escapes across every block and buffer edge', () => {
    const text = '"' + 'ab\\\\\\"c\\\\'.repeat(40) + '" , ]';
    const bytes = enc.encode(text);
    for (let cut = 0; cut < 130; cut++) {
      same(split(bytes, [cut]), 0, SKIP);
      same(split(bytes, [cut, cut + 64, cut + 65]), 0, BULK);
    }
  });
});
