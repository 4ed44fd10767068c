/**
 * `fitsWithinBudget` says "fits" without serializing when an upper bound of the value's JSON (every
 * string at 6 bytes a UTF-16 unit, other generic scalars at 25 bytes) is within every bound, and
 * serializes only otherwise. The answer must be the one the serializing check gives, for any
 * limits: these properties aim the byte and text bounds at the gap between the bound and the
 * exact size (long number representations, escapes, multi-byte and astral characters).
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { fitsWithinBudget, serializeIfFits } from '../../src/engine/fits.js';
import { resolveLimits } from '../../src/engine/options.js';
import { callToolResult, limitsArb, protocolVersionArb } from '../helpers/arbitraries.js';
import { timeBox } from '../helpers/time-box.js';

const RUN = timeBox(400, 2500);

/** Limits without the notice and omitted paths, so that the byte bound may go down to 1 KiB. */
const lim = (o: Parameters<typeof resolveLimits>[0]): ReturnType<typeof resolveLimits> => resolveLimits({ notice: false, maxOmittedPaths: 0, ...o });

/** The serializing check's answer. */
const exact = (v: unknown, l: ReturnType<typeof resolveLimits>, root: 'result' | 'error' = 'result'): boolean => serializeIfFits(v, l, root) !== undefined;

describe('fits without serializing', () => {
  it('fits-upper: agrees with the serializing check on random results and limits', () => {
    fc.assert(
      fc.property(callToolResult(), limitsArb(), (input, options) => {
        const l = resolveLimits(options);
        expect(fitsWithinBudget(input, l, 'result')).toBe(exact(input, l));
      }),
      RUN,
    );
  });

  it('fits-upper: agrees when the byte bound sits between the exact size and its upper bound', () => {
    const piece = fc.constantFrom('a', '"', '\\', '\n', '\u0001', 'é', '—', '😀', '\ud800', 'x'.repeat(30));
    const text = fc.array(piece, { maxLength: 30 }).map((p) => p.join(''));
    const scalar = fc.oneof(fc.integer(), fc.double({ noNaN: true }), fc.constant(-1.2345678901234567e-7), fc.constant(1.2345678901234567e-6), fc.boolean(), fc.constant(null), text);
    const result = fc.record({
      content: fc.array(text.map((t) => ({ type: 'text', text: t })), { maxLength: 3 }),
      structuredContent: fc.dictionary(text, fc.oneof(scalar, fc.array(scalar, { maxLength: 6 })), { maxKeys: 6 }),
    });
    fc.assert(
      fc.property(result, fc.double({ min: 0, max: 1, noNaN: true }), (input, at) => {
        const size = Buffer.byteLength(JSON.stringify(input));
        // A byte bound anywhere from the exact size to six times it (never under the floor).
        const bound = Math.max(1024, Math.round(size * (0.9 + 5 * at)));
        const l = lim({ maxResultBytes: bound, maxTextBytes: bound, maxBlockBytes: bound, maxStringBytes: bound });
        expect(fitsWithinBudget(input, l, 'result')).toBe(exact(input, l));
        const lt = lim({ maxTextBytes: Math.max(1, Math.round(size * at)), maxBlockBytes: Math.max(1, Math.round(size * at)) });
        expect(fitsWithinBudget(input, lt, 'result')).toBe(exact(input, lt));
      }),
      RUN,
    );
  });

  it('fits-upper: text-only results (the shape settled without the general walk), at every bound', () => {
    const piece = fc.constantFrom('a', '"', '\n', '\u0001', 'é', '😀', 'x'.repeat(40));
    const text = fc.array(piece, { maxLength: 12 }).map((p) => p.join(''));
    const block = fc.oneof(text.map((t) => ({ type: 'text', text: t })), text.map((t) => ({ text: t, type: 'text' })), text.map((t) => ({ type: 'text', text: t, _meta: {} })));
    const result = fc.tuple(fc.array(block, { maxLength: 5 }), fc.constantFrom(undefined, true, false, 'yes'), fc.boolean()).map(([content, isError, first]) => {
      if (isError === undefined) return { content };
      return first ? { isError, content } : { content, isError };
    });
    fc.assert(
      fc.property(result, fc.double({ min: 0, max: 1, noNaN: true }), fc.constantFrom('bytes', 'block', 'text'), protocolVersionArb, (input, at, which, protocolVersion) => {
        const size = Buffer.byteLength(JSON.stringify(input));
        const bound = Math.max(1024, Math.round(size * (0.9 + 6 * at)));
        const small = Math.max(1, Math.round(size * 6 * at));
        const far = 1 << 20;
        const l = lim({
          protocolVersion,
          maxResultBytes: which === 'bytes' ? bound : far,
          maxBlockBytes: which === 'block' ? small : far,
          maxTextBytes: which === 'text' ? small : far,
        });
        expect(fitsWithinBudget(input, l, 'result')).toBe(exact(input, l));
      }),
      RUN,
    );
    // Texts of control characters take the 6 bytes a unit the shortcut counts: its sum is exact.
    for (const isError of [true, false, undefined]) {
      for (const c of ['x', '\u0001']) {
        const v = { content: [{ type: 'text', text: c.repeat(c === 'x' ? 1000 : 200) }], ...(isError === undefined ? {} : { isError }) };
        const size = Buffer.byteLength(JSON.stringify(v));
        for (const bound of [size - 1, size]) {
          const l = lim({ maxResultBytes: bound, maxTextBytes: 1 << 20, maxBlockBytes: 1 << 20 });
          expect(fitsWithinBudget(v, l, 'result')).toBe(bound >= size);
        }
      }
    }
  });

  it('fits-upper: numbers with the longest representations are measured, not guessed', () => {
    const n = -1.2345678901234567e-7; // 25 characters in JSON would be the worst case
    const values = Array.from({ length: 60 }, () => n);
    const size = Buffer.byteLength(JSON.stringify({ structuredContent: { values } }));
    for (const bound of [1024, size - 1, size, size + 1]) {
      const l = lim({ maxResultBytes: Math.max(1024, bound), maxItems: 100 });
      expect(fitsWithinBudget({ structuredContent: { values } }, l, 'result')).toBe(exact({ structuredContent: { values } }, l));
    }
  });

  it('fits-upper: strings and keys of the widest escapes, at the byte bound', () => {
    for (const c of ['\u0001', '\ud800', '"', '\n', 'é', '—', 'a—', '😀']) {
      const s = c.repeat(Math.ceil(1300 / (Buffer.byteLength(JSON.stringify(c)) - 2)));
      for (const v of [{ structuredContent: { k: s } }, { structuredContent: { [s]: 1 } }, { structuredContent: { a: [s] } }, { content: [{ type: 'text', text: s }] }]) {
        const size = Buffer.byteLength(JSON.stringify(v));
        for (const bound of [size - 1, size, size + 1]) {
          const l = lim({ maxResultBytes: bound, maxStringBytes: bound, maxTextBytes: bound, maxBlockBytes: bound });
          expect(fitsWithinBudget(v, l, 'result')).toBe(exact(v, l));
          expect(fitsWithinBudget(v, l, 'result')).toBe(bound >= size);
          // Only the byte bound near the size (text and string bounds far away).
          const lb = lim({ maxResultBytes: bound, maxStringBytes: 1 << 20, maxTextBytes: 1 << 20, maxBlockBytes: 1 << 20 });
          expect(fitsWithinBudget(v, lb, 'result')).toBe(bound >= size);
        }
      }
      // The total text bound near the texts' size (two blocks, every other bound far away).
      const half = s.slice(0, Math.ceil(s.length / 2));
      const two = { content: [{ type: 'text', text: half }, { type: 'text', text: half }] };
      const textBytes = 2 * (Buffer.byteLength(JSON.stringify(half)) - 2);
      for (const bound of [textBytes - 1, textBytes, textBytes + 1]) {
        const l = lim({ maxResultBytes: 1 << 20, maxStringBytes: 1 << 20, maxTextBytes: bound, maxBlockBytes: 1 << 20 });
        expect(fitsWithinBudget(two, l, 'result')).toBe(exact(two, l));
        expect(fitsWithinBudget(two, l, 'result')).toBe(bound >= textBytes);
      }
      const e = { code: 1, message: s };
      const size = Buffer.byteLength(JSON.stringify(e));
      for (const bound of [size - 1, size, size + 1]) {
        const l = lim({ maxResultBytes: bound, maxStringBytes: bound });
        expect(fitsWithinBudget(e, l, 'error')).toBe(exact(e, l, 'error'));
        expect(fitsWithinBudget(e, l, 'error')).toBe(bound >= size);
      }
    }
  });

  it('fits-upper: boxed primitives and other prototypes are measured from their JSON', () => {
    const l = lim({ maxResultBytes: 1024 });
    // A boxed number has no own keys but serializes as its digits; far more digits than `{}`.
    const many = Object.fromEntries(Array.from({ length: 60 }, (_, i) => [`k${i}`, new Number(-1.2345678901234567e-7)]));
    expect(fitsWithinBudget({ structuredContent: many }, l, 'result')).toBe(exact({ structuredContent: many }, l));
    expect(fitsWithinBudget({ structuredContent: many }, l, 'result')).toBe(false);
    class Point {
      constructor(
        readonly x: number,
        readonly y: number,
      ) {}
    }
    const pts = { structuredContent: { points: [new Point(1, 2), new Point(3, 4)] } };
    expect(fitsWithinBudget(pts, l, 'result')).toBe(exact(pts, l));
    expect(fitsWithinBudget(pts, l, 'result')).toBe(true);
  });

  it('fits-upper: an error object takes the same check', () => {
    fc.assert(
      fc.property(fc.string({ maxLength: 300 }), fc.integer({ min: 1024, max: 2000 }), (message, bound) => {
        const l = lim({ maxResultBytes: bound });
        const e = { code: -32000, message, data: { detail: message } };
        expect(fitsWithinBudget(e, l, 'error')).toBe(exact(e, l, 'error'));
      }),
      RUN,
    );
  });
});
