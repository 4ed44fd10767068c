/**
 * The fast path's text bounds are settled from the JSON it builds (fits-size.ts: a text is within
 * its length plus the walk's undercount of the whole JSON). These properties aim at the edges:
 * plain text blocks whose escaped UTF-8 size straddles the block and total bounds (escapes,
 * controls, multi-byte and astral characters, lone surrogates), next to structured content that
 * changes the undercount. The fast path must say "fits" exactly when the spec does.
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { fitsWithinBudget, serializeIfFits } from '../../src/engine/fits.js';
import { resolveLimits } from '../../src/engine/options.js';
import { fitsSpec } from '../helpers/spec.js';
import { timeBox } from '../helpers/time-box.js';

const RUN = timeBox(400, 2500);

const piece = fc.constantFrom('a', 'abc ', '"', '\\', '\n', '\u0001', 'é', '—', '😀', '\ud800', 'x'.repeat(20));
const text = fc.array(piece, { maxLength: 40 }).map((p) => p.join(''));
const scalar = fc.oneof(fc.integer(), fc.double({ noNaN: true }), fc.boolean(), fc.constant(null), fc.string({ maxLength: 8 }));
const block = fc.oneof(
  text.map((t) => ({ type: 'text', text: t })),
  fc.tuple(text, fc.boolean()).map(([t, first]) => (first ? { text: t, type: 'text' } : { type: 'text', text: t, annotations: { priority: 1 } })),
  text.map((t) => ({ type: 'resource', resource: { uri: 'file:///a', text: t } })),
);
const result = fc.record(
  {
    content: fc.array(block, { maxLength: 4 }),
    structuredContent: fc.dictionary(fc.string({ maxLength: 4 }), fc.oneof(scalar, fc.array(scalar, { maxLength: 4 })), { maxKeys: 6 }),
    isError: fc.boolean(),
  },
  { requiredKeys: ['content'] },
);
const limits = fc
  .record({ block: fc.integer({ min: 1, max: 200 }), text: fc.integer({ min: 1, max: 300 }), result: fc.integer({ min: 600, max: 1400 }) })
  .map((l) => resolveLimits({ maxBlockBytes: l.block, maxTextBytes: l.text, maxStringBytes: 64, maxResultBytes: 5000 + l.result }));

describe('fits near the text bounds', () => {
  it('fits-text-bounds: fits exactly when the spec says so, with escaped and multi-byte texts at the bounds', () => {
    fc.assert(
      fc.property(result, limits, (input, l) => {
        const fast = serializeIfFits(input, l, 'result');
        expect(fast !== undefined).toBe(fitsSpec(input, l));
        expect(fitsWithinBudget(input, l, 'result')).toBe(fast !== undefined);
        if (fast !== undefined) expect(fast).toBe(JSON.stringify(input));
      }),
      RUN,
    );
  });

  it('fits-text-bounds: a text one escaped byte over the block bound is not a fit, one under is', () => {
    const l = resolveLimits({ maxBlockBytes: 100, maxTextBytes: 1000 });
    const at = (n: number): unknown => ({ content: [{ type: 'text', text: '"'.repeat(n) }], structuredContent: { big: 'x'.repeat(900) } });
    expect(serializeIfFits(at(50), l, 'result')).toBeDefined(); // 100 escaped bytes
    expect(serializeIfFits(at(51), l, 'result')).toBeUndefined(); // 102
    const total = (n: number): unknown => ({ content: [{ type: 'text', text: 'é'.repeat(n) }, { type: 'text', text: 'é'.repeat(n) }] });
    const lt = resolveLimits({ maxBlockBytes: 1000, maxTextBytes: 200 });
    expect(serializeIfFits(total(50), lt, 'result')).toBeDefined(); // 2 × 100 bytes
    expect(serializeIfFits(total(51), lt, 'result')).toBeUndefined(); // 2 × 102
  });
});
