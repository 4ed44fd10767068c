/**
 * `fitsWithinBudget` settles what its first bound cannot by measuring, never by guessing: long
 * generic strings and keys counted at their measured size, integers, booleans and null counted
 * exactly, texts measured by the escape counter, and, when the size is still in doubt, the exact
 * size member by member. These properties put every bound between the walk's lower and upper
 * bounds and at the exact size ± 1, on the values those steps measure (long strings of escapes,
 * controls, surrogates and non-ASCII; numbers of every form; many members), and require the answer
 * of the serializing check and of the spec.
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { fitsWithinBudget, serializeIfFits } from '../../src/engine/fits.js';
import { integerLength, numberLength } from '../../src/engine/fits-size.js';
import { checkRoot } from '../../src/engine/fits-walk.js';
import { resolveLimits, type ResolvedLimits } from '../../src/engine/options.js';
import { fitsSpec } from '../helpers/spec.js';
import { timeBox } from '../helpers/time-box.js';

const RUN = timeBox(300, 2500);

const FAR = 1 << 24;
/** Limits without the notice and omitted paths (so that the byte bound may go down to 1 KiB), far bounds elsewhere. */
const lim = (o: Parameters<typeof resolveLimits>[0]): ResolvedLimits =>
  resolveLimits({ notice: false, maxOmittedPaths: 0, maxTextBytes: FAR, maxBlockBytes: FAR, maxStringBytes: FAR, maxItems: 10_000, maxKeys: 10_000, ...o });

const bytesOf = (v: unknown): number => Buffer.byteLength(JSON.stringify(v), 'utf8');
const wire = (s: string): number => bytesOf(s) - 2;

/** The answer of the serializing check, of the spec, and of `fitsWithinBudget` must be one. */
function agree(v: object, l: ResolvedLimits, root: 'result' | 'error' = 'result'): boolean {
  const fits = fitsWithinBudget(v, l, root);
  expect(fits).toBe(serializeIfFits(v, l, root) !== undefined);
  if (root === 'result') expect(fits).toBe(fitsSpec(v, l));
  return fits;
}

/** The walk's lower and upper bounds of the value's JSON size (its first, unmeasured estimate). */
function walkBounds(v: object, l: ResolvedLimits): [number, number] | undefined {
  try {
    const walk = checkRoot(v, 'result', l, 'bounds', []);
    return [walk.bytes, walk.upper];
  } catch {
    return undefined;
  }
}

/** Byte bounds worth trying for a value of JSON size `size`: at it ± 1, and across the walk's gap. */
function byteBounds(v: object, size: number, l: ResolvedLimits, at: number): number[] {
  const out = [size - 1, size, size + 1];
  const b = walkBounds(v, l);
  if (b !== undefined && Number.isFinite(b[1])) out.push(Math.round(b[0] + (b[1] - b[0]) * at), b[1], b[1] - 1);
  return out.filter((n) => n >= 1024);
}

const PIECES = ['a', 'abc ', '"', '\\', '\n', '\t', '\u0001', '\u001f', '\u007f', 'é', '—', '東', '😀', '\ud800', '\udc00', '\ufffd', 'x'.repeat(40)];
/** Strings long enough to be measured (past 1/6 of the string bound), of every escape and width. */
const longString = fc
  .tuple(fc.array(fc.constantFrom(...PIECES), { minLength: 1, maxLength: 12 }), fc.integer({ min: 1, max: 120 }))
  .map(([pieces, times]) => pieces.join('').repeat(times));

/** Numbers of every form: integers at each digit count and sign, the int32 edges, past 2^53 and 1e21, the shortest and longest doubles, NaN, infinities, -0. */
const NUMBERS = [
  0, -0, 1, -1, 9, 10, -10, 99_999, 100_000, 999_999_999, 1e9, 2_147_483_647, 2_147_483_648, -2_147_483_648, -2_147_483_649,
  2 ** 53 - 1, 2 ** 53, 2 ** 53 + 2, -(2 ** 53), 1e15, 1e16, 123_456_789_012_345_680_000, 1e20, 999_999_999_999_999_900_000, 1e21, -1e21, 1e22, 2 ** 70,
  5e-324, -5e-324, Number.MIN_VALUE, Number.MAX_VALUE, -Number.MAX_VALUE, 0.1, 1.5, -1.5, 1 / 3, 1e-6, 1e-7, 1.2345678901234567e-6,
  -1.2345678901234567e-7, -0.0000012345678901234567, 123.456, 1e300, NaN, Infinity, -Infinity,
  // Every power of ten to 1e22 and the integer below it, with both signs (digit counts change there).
  ...Array.from({ length: 23 }, (_, k) => [10 ** k, 10 ** k - 1, -(10 ** k), 1 - 10 ** k]).flat(),
];
const number = fc.oneof(fc.constantFrom(...NUMBERS), fc.integer(), fc.double(), fc.maxSafeInteger());
const scalar = fc.oneof(number, fc.boolean(), fc.constant(null), fc.string({ maxLength: 12 }));

describe('fits, measured exactly', () => {
  it('fits-exact: numbers of every form, as members and items, at the byte bound', () => {
    const value = fc
      .tuple(fc.array(number, { maxLength: 40 }), fc.dictionary(fc.string({ maxLength: 6 }), number, { maxKeys: 30 }), fc.string({ maxLength: 3000 }))
      .map(([items, members, text]) => ({ content: [{ type: 'text', text }], structuredContent: { items, ...members } }));
    fc.assert(
      fc.property(value, fc.double({ min: 0, max: 1, noNaN: true }), (v, at) => {
        const size = bytesOf(v);
        for (const bound of byteBounds(v, size, lim({ maxResultBytes: 1 << 20 }), at)) {
          expect(agree(v, lim({ maxResultBytes: bound })), `bound ${bound}, size ${size}`).toBe(bound >= size);
        }
      }),
      RUN,
    );
    // Each form alone, filling a result to the byte bound.
    for (const n of NUMBERS) {
      const v = { structuredContent: { values: Array.from({ length: 60 }, () => n), o: Object.fromEntries(Array.from({ length: 40 }, (_, i) => [`k${i}`, n])) } };
      const size = bytesOf(v);
      for (const bound of [size - 1, size, size + 1]) {
        if (bound < 1024) continue;
        expect(agree(v, lim({ maxResultBytes: bound })), `${n} at ${bound}`).toBe(bound >= size);
      }
    }
  });

  it('fits-exact: number lengths are the lengths JSON writes', () => {
    fc.assert(
      fc.property(number, (n) => {
        if (!Number.isFinite(n)) return;
        expect(numberLength(n)).toBe(JSON.stringify(n).length);
        expect(integerLength(n)).toBe(Number.isInteger(n) && Math.abs(n) < 1e21 ? JSON.stringify(n).length : 0);
      }),
      { ...RUN, numRuns: 2000 },
    );
    for (const n of NUMBERS) if (Number.isFinite(n)) expect(numberLength(n), String(n)).toBe(JSON.stringify(n).length);
  });

  it('fits-exact: the walk bounds the size from below and above, exactly where it counts exactly', () => {
    // Integers, booleans, null and measured strings and keys (past 1/6 of the string bound) are
    // counted exactly: the lower bound falls short by the braces of generic objects (1 each, 2
    // when empty) and by the escapes and UTF-8 of short strings and keys, nothing else.
    const exactPart = fc.oneof(fc.constantFrom(...NUMBERS.filter((n) => Number.isInteger(n) && Math.abs(n) < 1e21)), fc.integer(), fc.boolean(), fc.constant(null), longString);
    const item = fc.oneof(exactPart, fc.array(exactPart, { maxLength: 5 }), fc.tuple(longString, exactPart).map(([k, x]) => ({ [k]: x })), fc.constant({}));
    fc.assert(
      fc.property(fc.array(item, { maxLength: 60 }), (items) => {
        const v = { structuredContent: { v: items } };
        const strings: string[] = ['v'];
        const visit = (x: unknown): void => {
          if (typeof x === 'string') strings.push(x);
          else if (Array.isArray(x)) x.forEach(visit);
          else if (x !== null && typeof x === 'object') for (const [k, y] of Object.entries(x)) strings.push(k), visit(y);
        };
        visit(items);
        const maxStringBytes = Math.max(16, ...strings.map(wire));
        const l = lim({ maxResultBytes: FAR, maxStringBytes });
        // Short strings and keys: their escapes and UTF-8 under the lower bound, up to 6 bytes a unit in the upper.
        let under = 0;
        let over = 5 * 'structuredContent'.length; // a member of the result: never measured
        for (const t of strings) {
          if (t.length > maxStringBytes / 6) continue;
          under += wire(t) - t.length;
          over += 6 * t.length - wire(t);
        }
        const objects = items.filter((x): x is object => x !== null && typeof x === 'object' && !Array.isArray(x));
        const empty = objects.filter((o) => Object.keys(o).length === 0).length;
        const nonEmpty = 1 + objects.length - empty;
        const [lower, upper] = walkBounds(v, l)!;
        const size = bytesOf(v);
        expect(size - lower).toBe(nonEmpty + 2 * empty + under);
        expect(upper - size).toBe(nonEmpty + over);
      }),
      RUN,
    );
    // Each number form many times over: a miscount of one byte shows.
    for (const n of NUMBERS) {
      const v = { structuredContent: { v: Array.from({ length: 300 }, () => n) } };
      const [lower, upper] = walkBounds(v, lim({ maxResultBytes: FAR }))!;
      const size = bytesOf(v);
      expect(lower, String(n)).toBeLessThanOrEqual(size);
      expect(upper, String(n)).toBeGreaterThanOrEqual(size);
      if (Number.isInteger(n) && Math.abs(n) < 1e21) expect(size - lower, String(n)).toBe(1);
      if (!Number.isFinite(n)) expect(size - lower, String(n)).toBe(1);
    }
  });

  it('fits-exact: long strings and keys at the string bound and the byte bound', () => {
    fc.assert(
      fc.property(longString, fc.constantFrom('value', 'key', 'item', 'error'), fc.double({ min: 0, max: 1, noNaN: true }), (s, where, at) => {
        const w = wire(s);
        const v: object =
          where === 'value' ? { structuredContent: { k: s } } : where === 'key' ? { structuredContent: { [s]: 1 } } : where === 'item' ? { structuredContent: { a: [1, s, true, s, s] } } : { code: 1, message: 'm', data: { d: s } };
        const root = where === 'error' ? 'error' : 'result';
        // The string bound at the string's size ± 1 (and a 16-unit floor), every other bound far.
        for (const sb of [w - 1, w, w + 1]) {
          if (sb < 16) continue;
          expect(agree(v, lim({ maxResultBytes: FAR, maxStringBytes: sb }), root), `string bound ${sb}, wire ${w}`).toBe(sb >= w);
        }
        const size = bytesOf(v);
        for (const bound of byteBounds(v, size, lim({ maxResultBytes: FAR }), at)) {
          expect(agree(v, lim({ maxResultBytes: bound }), root), `bound ${bound}, size ${size}`).toBe(bound >= size);
        }
      }),
      RUN,
    );
  });

  it('fits-exact: texts measured next to other members, at the block, text and byte bounds', () => {
    const text = fc.oneof(longString, fc.string({ maxLength: 40 }));
    const block = fc.oneof(
      text.map((t) => ({ type: 'text', text: t })),
      text.map((t) => ({ type: 'text', text: t, annotations: { priority: 0.5 } })),
      text.map((t) => ({ type: 'resource', resource: { uri: 'file:///a', text: t } })),
      fc.constant({ type: 'image', data: 'iVBORw0KGgo=', mimeType: 'image/png' }),
    );
    const value = fc
      .tuple(fc.array(block, { minLength: 1, maxLength: 4 }), fc.option(fc.dictionary(fc.string({ maxLength: 8 }), fc.oneof(scalar, longString), { maxKeys: 12 })), fc.option(fc.boolean()))
      .map(([content, structuredContent, isError]) => ({
        content,
        ...(structuredContent === null ? {} : { structuredContent }),
        ...(isError === null ? {} : { isError }),
        _meta: { 'example.com/id': 'r-1' },
      }));
    fc.assert(
      fc.property(value, fc.double({ min: 0, max: 1, noNaN: true }), (v, at) => {
        const texts = v.content.map((b) => ('text' in b ? b.text : 'resource' in b ? b.resource.text : undefined)).filter((t): t is string => t !== undefined);
        const sizes = texts.map(wire);
        const largest = Math.max(1, ...sizes);
        const total = sizes.reduce((a, b) => a + b, 0);
        for (const bb of [largest - 1, largest, largest + 1]) if (bb >= 1) expect(agree(v, lim({ maxResultBytes: FAR, maxBlockBytes: bb }))).toBe(bb >= largest);
        for (const tb of [total - 1, total, total + 1]) if (tb >= 1) expect(agree(v, lim({ maxResultBytes: FAR, maxTextBytes: tb }))).toBe(tb >= total);
        const size = bytesOf(v);
        for (const bound of byteBounds(v, size, lim({ maxResultBytes: FAR }), at)) {
          expect(agree(v, lim({ maxResultBytes: bound })), `bound ${bound}, size ${size}`).toBe(bound >= size);
        }
      }),
      RUN,
    );
  });

  it('fits-exact: many members whose estimates add up past the bound, measured one by one', () => {
    const member = fc.oneof(scalar, fc.array(scalar, { maxLength: 4 }), fc.record({ id: fc.nat(), name: fc.string({ maxLength: 16 }) }));
    const value = fc
      .tuple(fc.dictionary(fc.string({ minLength: 1, maxLength: 10 }), member, { minKeys: 20, maxKeys: 150 }), fc.array(fc.constantFrom(...PIECES), { maxLength: 30 }), fc.nat({ max: 200 }))
      .map(([structuredContent, pieces, times]) => ({ content: [{ type: 'text', text: pieces.join('').repeat(times) }], structuredContent }));
    fc.assert(
      fc.property(value, fc.double({ min: 0, max: 1, noNaN: true }), (v, at) => {
        const size = bytesOf(v);
        for (const bound of byteBounds(v, size, lim({ maxResultBytes: FAR }), at)) {
          expect(agree(v, lim({ maxResultBytes: bound })), `bound ${bound}, size ${size}`).toBe(bound >= size);
        }
      }),
      { ...RUN, numRuns: Math.ceil(RUN.numRuns / 2) },
    );
  });

  it('fits-exact: plain text results decided by arithmetic, at every bound ± 1', () => {
    const value = fc
      .tuple(fc.array(longString, { minLength: 1, maxLength: 3 }), fc.option(fc.boolean()))
      .map(([texts, isError]) => ({ content: texts.map((text) => ({ type: 'text', text })), ...(isError === null ? {} : { isError }) }));
    fc.assert(
      fc.property(value, (v) => {
        const sizes = v.content.map((b) => wire(b.text));
        const largest = Math.max(...sizes);
        const total = sizes.reduce((a, b) => a + b, 0);
        const size = bytesOf(v);
        for (const d of [-1, 0, 1]) {
          if (largest + d >= 1) expect(agree(v, lim({ maxResultBytes: FAR, maxBlockBytes: largest + d }))).toBe(d >= 0);
          if (total + d >= 1) expect(agree(v, lim({ maxResultBytes: FAR, maxTextBytes: total + d }))).toBe(d >= 0);
          if (size + d >= 1024) expect(agree(v, lim({ maxResultBytes: size + d }))).toBe(d >= 0);
        }
      }),
      RUN,
    );
  });

  it('fits-exact: generic data at the depth, item and key bounds ± 1, and values with toJSON', () => {
    // Nesting of arrays, objects or both to a depth of `d` (the result is depth 1, its structure 2).
    const nest = (d: number, kind: 'array' | 'object' | 'mixed', leaf: unknown): unknown => {
      let v = leaf;
      for (let i = 0; i < d; i++) v = kind === 'array' || (kind === 'mixed' && i % 2 === 0) ? [v] : { k: v };
      return v;
    };
    for (const maxDepth of [4, 5, 9]) {
      for (const kind of ['array', 'object', 'mixed'] as const) {
        for (const leaf of [1, 'x', null]) {
          for (const d of [maxDepth - 3, maxDepth - 2, maxDepth - 1]) {
            const v = { content: [{ type: 'text', text: 'a"b'.repeat(3000) }], structuredContent: { s: nest(d, kind, leaf) } };
            const deepest = 2 + d; // the structure, then d containers
            expect(agree(v, lim({ maxResultBytes: FAR, maxDepth })), `${kind} ${d} in ${maxDepth}`).toBe(deepest <= maxDepth);
          }
        }
      }
    }
    for (const n of [4, 5, 6]) {
      const items = { content: [], structuredContent: { a: Array.from({ length: n }, (_, i) => i) } };
      expect(agree(items, lim({ maxResultBytes: FAR, maxItems: 5 }))).toBe(n <= 5);
      const keys = { structuredContent: { o: Object.fromEntries(Array.from({ length: n }, (_, i) => [`k${i}`, i])) } };
      expect(agree(keys, lim({ maxResultBytes: FAR, maxKeys: 5 }))).toBe(n <= 5);
    }
    // A value with toJSON serializes as something else: the budgeter decides.
    const arr = Object.assign([1, 2], { toJSON: () => 'x' });
    const obj = { toJSON: () => 'x' };
    for (const v of [{ structuredContent: { a: arr } }, { structuredContent: { a: [arr] } }, { structuredContent: { o: obj } }, { structuredContent: { a: [obj] } }]) {
      expect(fitsWithinBudget(v, lim({ maxResultBytes: FAR }), 'result')).toBe(false);
      expect(serializeIfFits(v, lim({ maxResultBytes: FAR }), 'result')).toBeUndefined();
    }
  });

  it('fits-exact: a getter that runs another check midway changes nothing', () => {
    // The inner check walks with other limits and other counts; the outer must go on with its own.
    const inner = { structuredContent: { big: 'x'.repeat(5000), n: [1, 2, 3] }, content: [{ type: 'text', text: 'é'.repeat(3000) }] };
    const make = (reenter: boolean): object => ({
      content: [{ type: 'text', text: 'line "a"\n'.repeat(100) }],
      structuredContent: {
        a: 'y'.repeat(600),
        get b(): object {
          if (reenter) expect(fitsWithinBudget(inner, lim({ maxResultBytes: 1 << 20, maxStringBytes: 100 }), 'result')).toBe(false);
          return { c: 1, d: [true, null] };
        },
        e: '"'.repeat(300),
      },
    });
    const size = bytesOf(make(false));
    for (const bound of [size - 1, size, size + 1, size + 500]) {
      const l = lim({ maxResultBytes: bound, maxStringBytes: 700 });
      expect(fitsWithinBudget(make(true), l, 'result'), `bound ${bound}`).toBe(bound >= size);
      expect(serializeIfFits(make(true), l, 'result') !== undefined).toBe(bound >= size);
    }
  });

  it('fits-exact: other prototypes inside a value measured member by member', () => {
    const text = '"quoted"\n'.repeat(500);
    const boxed = { structuredContent: { n: new Number(-1.2345678901234567e-7), s: new String('abc'), b: new Boolean(false), d: Object.create(null) as object }, content: [{ type: 'text', text }] };
    const size = bytesOf(boxed);
    for (const bound of [size - 1, size, size + 1, size + 100]) {
      const l = lim({ maxResultBytes: bound });
      expect(fitsWithinBudget(boxed, l, 'result')).toBe(serializeIfFits(boxed, l, 'result') !== undefined);
    }
  });
});
