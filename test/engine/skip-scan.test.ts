/**
 * The WebAssembly SIMD skip scanner against the JavaScript reference: same return value and same
 * final state (depth, inString, escape, commas, sawValue) for any bytes, start and state, whole or
 * fed through successive buffers.
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { feed, same, split, state, type Outcome } from '../helpers/skip-feed.js';
import { SKIP_MORE, newSkipState, scanSkipJs, type SkipScan, type SkipState } from '../../src/engine/skip-scan.js';
import { scanSkipBest, scanSkipWasm, wasmSimdAvailable } from '../../src/engine/skip-scan-wasm.js';
import { timeBox } from '../helpers/time-box.js';

const RUN = timeBox(500, 2500);
const enc = new TextEncoder();

const concat = (parts: Uint8Array[]): Uint8Array => Buffer.concat(parts);
// Byte pieces, weighted toward what the scanner looks at.
const piece = fc.oneof(
  { weight: 6, arbitrary: fc.constantFrom('"', '\\', '{', '}', '[', ']', ',') },
  { weight: 2, arbitrary: fc.constantFrom('\\\\', '\\"', '\\\\\\', '""', '{}', '[]', ', ') },
  { weight: 4, arbitrary: fc.constantFrom('a', 'lorem', '12345', ' ', '\n', ':', 'true', '\t') },
  { weight: 1, arbitrary: fc.constantFrom('é', '中', '😀', '\u0000', '\u007f') },
).map((s) => enc.encode(s));
const rawByte = fc.integer({ min: 0, max: 255 }).map((b) => Uint8Array.of(b));
const noise = fc.array(fc.oneof({ weight: 9, arbitrary: piece }, { weight: 1, arbitrary: rawByte }), { maxLength: 400 }).map(concat);
const jsonText = fc.jsonValue({ maxDepth: 4 }).map((v) => enc.encode(JSON.stringify(v) ?? 'null'));
/** Long inputs that cross many 64-byte blocks: a short pattern repeated. */
const repeated = fc
  .tuple(fc.oneof(noise, jsonText), fc.integer({ min: 2, max: 60 }))
  .map(([p, k]) => concat(Array.from({ length: k }, () => p)));
const bytesArb = fc.oneof(noise, jsonText, repeated, fc.tuple(jsonText, noise).map(([a, b]) => concat([a, b])));
const stateArb = fc.record({
  depth: fc.oneof({ weight: 3, arbitrary: fc.constant(0) }, { weight: 2, arbitrary: fc.integer({ min: 1, max: 6 }) }),
  inString: fc.boolean(),
  escape: fc.oneof({ weight: 4, arbitrary: fc.constant(false) }, { weight: 1, arbitrary: fc.constant(true) }),
  bulk: fc.boolean(),
  commas: fc.integer({ min: 0, max: 5 }),
  sawValue: fc.boolean(),
});

describe.runIf(wasmSimdAvailable)('scanSkipWasm vs scanSkipJs', () => {
  it('scanSkipBest is the WebAssembly scanner here', () => {
    expect(scanSkipBest).toBe(scanSkipWasm);
  });

  it('agrees on random bytes, starts, states and split points', () => {
    fc.assert(
      fc.property(bytesArb, stateArb, fc.nat(), fc.array(fc.nat(), { maxLength: 4 }), (bytes, init, s, cuts) => {
        const chunks = split(bytes, cuts);
        same(chunks, s % (chunks[0]!.length + 1), init);
      }),
      RUN,
    );
  });

  it('agrees on every short string over the interesting bytes, at a block boundary too', () => {
    const alphabet = ['"', '\\', '{', '}', ',', 'a', ' '].map((c) => c.charCodeAt(0));
    const inits: SkipState[] = [];
    for (const bulk of [false, true])
      for (const inString of [false, true])
        for (const escape of [false, true]) for (const depth of [0, 1]) inits.push(state({ bulk, inString, escape, depth }));
    const pad = new Uint8Array(61).fill(0x20);
    for (let len = 1; len <= 4; len++) {
      for (let code = 0; code < alphabet.length ** len; code++) {
        const b = new Uint8Array(len);
        for (let k = 0, c = code; k < len; k++, c = Math.floor(c / alphabet.length)) b[k] = alphabet[c % alphabet.length]!;
        for (const init of inits) {
          same([b], 0, init);
          if (!init.escape) same([concat([pad, b])], 0, init);
        }
      }
    }
  });

  it('agrees on large inputs crossing window boundaries', () => {
    const lorem = 'lorem ipsum \\"quoted\\" and a \\\\ backslash\\n';
    const str = enc.encode('"' + lorem.repeat(150_000) + '" ,');
    same([str], 0, state({}));
    same([str], 1, state({ inString: true }));
    same(split(str, [1023, 4096 + 8191, 3_000_001]), 1, state({ inString: true }));
    const rec = (i: number): string => `{"id":${i},"name":"file-${i}.txt","tags":["a","b"],"size":1024},`;
    const arr = enc.encode('[' + Array.from({ length: 40_000 }, (_, i) => rec(i)).join('') + '{}] tail');
    const bulk = same([arr], 1, state({ bulk: true }));
    expect(bulk.results).toEqual([arr.length - 6]);
    expect(bulk.state.commas).toBe(40_000);
    expect(same([arr], 0, state({})).results).toEqual([arr.length - 5]);
    same(split(arr, [100, 5000, 70_000, 1_000_000]), 1, state({ bulk: true }));
  });

  it('carries an odd backslash run across every block and window boundary', () => {
    // Windows start at 1 KiB and double: boundaries at 1 KiB, 3 KiB, 7 KiB, 15 KiB... from start.
    for (const at of [63, 64, 127, 1023, 1024, 1025, 3071, 3072, 4096, 7167, 7168, 15_360]) {
      for (const run of [1, 2, 3, 4]) {
        for (const tail of ['"x" ,', 'x" ,', '"', '']) {
          const s = '"' + 'a'.repeat(Math.max(0, at - run)) + '\\'.repeat(run) + tail;
          same([enc.encode(s)], 0, state({}));
          same([enc.encode(s)], 0, state({ bulk: true }));
        }
      }
    }
  });
});

describe.runIf(wasmSimdAvailable)('scanSkipWasm edge cases', () => {
  const scan = (s: string, init: Partial<SkipState>, start = 0): Outcome => same([enc.encode(s)], start, state(init));

  it('ends a string value on its closing quote, past escaped quotes', () => {
    expect(scan('ab\\"c\\\\" rest', { inString: true }).results).toEqual([8]);
  });

  it('reports a buffer that ends mid-string, on an odd backslash run, or mid-escape', () => {
    expect(scan('"abc', {}).state).toMatchObject({ inString: true, escape: false });
    expect(scan('"abc\\', {}).state).toMatchObject({ inString: true, escape: true });
    expect(scan('"abc\\\\', {}).state).toMatchObject({ inString: true, escape: false });
    expect(scan('"x' + '\\'.repeat(63), {}).state).toMatchObject({ inString: true, escape: true });
    // A pending escape consumes the next byte, even a quote.
    expect(scan('" more" x', { inString: true, escape: true }).results).toEqual([7]);
    expect(scan('\\"', { inString: true, escape: true }).results).toEqual([2]);
  });

  it('returns after the closing bracket, or -(index + 2) for a bracket closing nothing', () => {
    expect(scan('  {"a":[1,"]"]} x', {}).results).toEqual([15]);
    expect(scan(' ] x', {}).results).toEqual([-(1 + 2)]);
    expect(scan(' ] x', { depth: 1 }).results).toEqual([2]);
  });

  it('bulk: stops at the container close, counts commas at depth 0 only, tracks sawValue', () => {
    const r = scan('1, "a,b", [1,2], {"k":","} , ] x', { bulk: true });
    expect(r.results).toEqual([29]);
    expect(r.state).toMatchObject({ commas: 4, sawValue: false, depth: 0 });
    expect(scan(' , é', { bulk: true }).state).toMatchObject({ commas: 1, sawValue: true });
    expect(scan(' , "', { bulk: true }).state).toMatchObject({ commas: 1, sawValue: true, inString: true });
    // A string opened before this buffer: its closing quote is not a value.
    expect(scan('x", ', { bulk: true, inString: true }).state).toMatchObject({ commas: 1, sawValue: false });
    expect(scan('x" ', { bulk: true, inString: true }).state).toMatchObject({ commas: 0, sawValue: false });
  });

  it('ignores backslashes outside strings like the reference (invalid JSON)', () => {
    expect(scan('\\"a"', {}).results).toEqual([4]);
    expect(scan(' '.repeat(70) + '\\"a" , \\ ]', { bulk: true }).state).toMatchObject({ commas: 1, sawValue: true });
    // An escape pending outside a string applies to the first byte inside the next one.
    expect(scan('ab "\\"x" ', { escape: true }).results).toEqual([6]);
  });

  it('leaves the state alone when start is at or past the end', () => {
    for (const start of [3, 4]) expect(scan('abc', { inString: true, escape: true }, start).results).toEqual([SKIP_MORE]);
  });
});
