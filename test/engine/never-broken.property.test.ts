/**
 * The budget never emits a broken result: on both paths (in-memory and streaming bytes), for
 * results biased toward what broke real clients, the output is valid JSON, accepted by the SDK
 * client's `CallToolResultSchema`, within every bound, deterministic, a fixed point of the budget
 * (bounding it again changes nothing), and the same bytes on both paths; opaque strings are whole.
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { boundJson } from '../../src/engine/bound.js';
import { resolveLimits } from '../../src/engine/options.js';
import { base64Value, sdkIssues, trickyLimits, trickyResult } from '../helpers/arbitraries.js';
import { boundViolations, hasDuplicateKeys, isObject, utf8 } from '../helpers/spec.js';
import { boundViaBytes, padDoc } from '../helpers/stream-gen.js';
import { timeBox } from '../helpers/time-box.js';

const RUN = timeBox(1000, 2000);

/** Every string in a value, with the key it sits under. */
function strings(v: unknown, key = '', out: { key: string; s: string }[] = []): { key: string; s: string }[] {
  if (typeof v === 'string') out.push({ key, s: v });
  else if (Array.isArray(v)) for (const x of v) strings(x, key, out);
  else if (isObject(v)) for (const [k, x] of Object.entries(v)) strings(x, k, out);
  return out;
}

describe('never a broken result (property)', () => {
  it('never-broken: valid JSON, accepted by the SDK schema, within every bound, deterministic (in memory)', () => {
    fc.assert(
      fc.property(trickyResult, trickyLimits, (input, options) => {
        const limits = resolveLimits(options);
        const out = boundJson(input, limits);
        expect(utf8(out.json)).toBeLessThanOrEqual(limits.maxResultBytes);
        expect(hasDuplicateKeys(out.json)).toBe(false);
        const parsed = JSON.parse(out.json) as Record<string, unknown>;
        expect(sdkIssues(parsed)).toEqual([]);
        expect(boundViolations(parsed, limits)).toEqual([]);
        expect(boundJson(input, resolveLimits({ ...options })).json).toBe(out.json);
      }),
      RUN,
    );
  });

  it('never-broken: bounding a bounded result again changes nothing, byte for byte (in memory)', () => {
    fc.assert(
      fc.property(trickyResult, trickyLimits, (input, options) => {
        const limits = resolveLimits(options);
        const once = boundJson(input, limits);
        const twice = boundJson(JSON.parse(once.json), limits);
        expect(twice.json).toBe(once.json);
      }),
      RUN,
    );
  });

  it('never-broken: the byte path writes the same bytes as the in-memory path, and is a fixed point too', () => {
    fc.assert(
      fc.property(trickyResult, trickyLimits, fc.boolean(), (input, options, pad) => {
        const limits = resolveLimits(options);
        // Padding (a skipped unknown field) pushes the input past the fit window: the tokenizer runs.
        const value = pad ? padDoc({ value: input, root: 'result', result: input, error: undefined }, limits, { kind: 'unknown', unit: 'p', at: 1 }).value : input;
        const bytes = Buffer.from(JSON.stringify(value));
        const mem = boundJson(value, limits);
        const streamed = boundViaBytes(bytes, limits, 'result', 'whole');
        expect(streamed.json).toBe(mem.json);
        const again = boundViaBytes(Buffer.from(streamed.json), limits, 'result', [7, 64, 4096]);
        expect(again.json).toBe(streamed.json);
        expect(sdkIssues(JSON.parse(streamed.json))).toEqual([]);
      }),
      { ...RUN, numRuns: Math.ceil(RUN.numRuns / 5) },
    );
  });

  it('never-broken: base64 and data URIs are kept whole or omitted, never cut', () => {
    fc.assert(
      fc.property(trickyResult, trickyLimits, (input, options) => {
        // Structured content and `_meta` (block text is text: it may be cut).
        const opaqueHolders = (r: Record<string, unknown>): unknown => [r.structuredContent, r._meta];
        const whole = new Set(strings(opaqueHolders(input)).map((x) => x.s));
        const out = JSON.parse(boundJson(input, options).json) as Record<string, unknown>;
        for (const { s } of strings(opaqueHolders(out))) {
          if (whole.has(s)) continue;
          // A kept string that is not whole must not be a cut base64 value.
          for (const w of whole) {
            if (w.length > s.length && w.startsWith(s) && (/^data:[^,]*;base64,/.test(w) || (/^[A-Za-z0-9+/]{16,}=*$/.test(w) && /[A-Z]/.test(w) && /[a-z]/.test(w) && /[0-9]/.test(w)))) {
              expect.fail(`cut opaque string: ${s.slice(0, 40)}… of ${w.length} characters`);
            }
          }
        }
      }),
      { ...RUN, numRuns: Math.ceil(RUN.numRuns / 3) },
    );
  });

  it('never-broken: a base64 value under a structured `data` key is never cut, whatever the bound', () => {
    fc.assert(
      fc.property(base64Value, fc.integer({ min: 16, max: 200 }), (b64, maxStringBytes) => {
        const out = boundJson({ structuredContent: { image: { data: b64, mimeType: 'image/png' }, other: b64 } }, { maxStringBytes });
        const sc = (JSON.parse(out.json) as { structuredContent: { image: Record<string, unknown>; other?: string } }).structuredContent;
        if ('data' in sc.image) expect(sc.image.data).toBe(b64);
        if (sc.other !== undefined) expect(sc.other).toBe(b64);
      }),
      RUN,
    );
  });
});
