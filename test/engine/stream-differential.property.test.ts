/**
 * Differential property: the byte source (ByteBudget over the bytes of `JSON.stringify(input)`)
 * writes exactly what the in-memory path (`boundJson(input, limits, root)`) writes.
 *
 * Below the fit window the byte source parses the input and calls boundJson itself, so most
 * properties here also pad the input past `fitWindowBytes(limits)`: then the tokenizer drives the
 * budgeter directly (skip scanner, bulk tail counting, text-mirror hashing), which is what is
 * being compared.
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { boundJson } from '../../src/engine/bound.js';
import { fitWindowBytes } from '../../src/engine/byte-source.js';
import { resolveLimits } from '../../src/engine/options.js';
import { isMirrorRewrite } from '../helpers/spec.js';
import {
  boundViaBytes,
  docArb,
  outcome,
  padDoc,
  paddingArb,
  streamLimitsArb,
  type Doc,
} from '../helpers/stream-gen.js';
import { timeBox } from '../helpers/time-box.js';
import { prng } from '../helpers/prng.js';
import { looseJson } from '../helpers/loose-json.js';

const RUN = timeBox(200, 3200);

function compare(doc: Doc, options: object, expectStreamed: boolean): void {
  const limits = resolveLimits(options);
  const text = JSON.stringify(doc.value);
  const bytes = Buffer.from(text, 'utf8');
  if (expectStreamed) expect(bytes.length).toBeGreaterThan(fitWindowBytes(limits));
  const expected = outcome(() => boundJson(doc.value, limits, doc.root));
  let streamed: boolean | undefined;
  const actual = outcome(() => {
    const r = boundViaBytes(bytes, limits, doc.root);
    streamed = r.streamed;
    return r;
  });
  if (expectStreamed && streamed !== undefined) expect(streamed).toBe(true);
  if (!expected.ok || !actual.ok || expected.json !== actual.json) {
    // Keep the failure message small: a padded input is over a megabyte.
    expect({ root: doc.root, limits: options, outcome: actual }).toEqual({ root: doc.root, limits: options, outcome: expected });
  }
  expect(actual).toEqual(expected);
}

describe('byte source vs in-memory bound (differential)', () => {
  it('same output below the fit window (small path and early switch to streaming)', () => {
    fc.assert(
      fc.property(docArb(), streamLimitsArb, (doc, options) => compare(doc, options, false)),
      RUN,
    );
  });

  it('same output above the fit window (tokenizer + budgeter path)', () => {
    fc.assert(
      fc.property(docArb(), streamLimitsArb, paddingArb, (doc, options, pad) => {
        const limits = resolveLimits(options);
        compare(padDoc(doc, limits, pad), options, true);
      }),
      RUN,
    );
  });

  it('same output for a text mirror of a structure that is cut (below the fit window)', () => {
    fc.assert(
      fc.property(docArb({ mirror: true }), streamLimitsArb, (doc, options) => compare(doc, options, false)),
      RUN,
    );
  });

  it('same output for a text mirror of a structure that is cut (above the fit window)', () => {
    fc.assert(
      fc.property(docArb({ mirror: true }), streamLimitsArb, paddingArb, (doc, options, pad) => {
        const limits = resolveLimits(options);
        compare(padDoc(doc, limits, pad), options, true);
      }),
      RUN,
    );
  });

  it('same output when the mirrored structure itself is larger than the fit window', () => {
    fc.assert(
      fc.property(docArb({ mirror: true }), streamLimitsArb, paddingArb, (doc, options, pad) => {
        const limits = resolveLimits(options);
        const padded = padDoc(doc, limits, { ...pad, kind: 'mirror' });
        const r = padded.result!;
        const json = JSON.stringify(r.structuredContent);
        expect((r.content as { text?: string }[]).some((b) => b?.text === json)).toBe(true);
        compare(padded, options, true);
      }),
      timeBox(40, 2500),
    );
  });

  it('same output for insignificant whitespace (pretty-printed input, no mirror), above the fit window', () => {
    fc.assert(
      fc.property(docArb(), streamLimitsArb, paddingArb, fc.constantFrom(1, 2, '\t', ' \r\n '), (doc, options, pad, indent) => {
        const limits = resolveLimits(options);
        const padded = padDoc(doc, limits, { ...pad, kind: pad.kind === 'mirror' ? 'unknown' : pad.kind });
        let text = JSON.stringify(padded.value, null, indent);
        if (typeof indent === 'string' && indent.includes('\r')) text = text.replace(/\n/g, '\r\n');
        const expected = outcome(() => boundJson(padded.value, limits, padded.root));
        const actual = outcome(() => boundViaBytes(Buffer.from(`\n ${text} \t\n`), limits, padded.root));
        if (!actual.ok || !expected.ok || actual.json !== expected.json) expect(actual).toEqual(expected);
      }),
      timeBox(60, 2000),
    );
  });

  it('same output for a mirror and its structure written loosely (escapes, whitespace), above the fit window', () => {
    fc.assert(
      fc.property(docArb({ mirror: true }), streamLimitsArb, paddingArb, fc.integer({ min: 1, max: 2 ** 31 - 1 }), (doc, options, pad, seed) => {
        const limits = resolveLimits(options);
        const padded = padDoc(doc, limits, pad);
        const text = looseJson(padded.value, prng(seed));
        const value = JSON.parse(text) as unknown;
        const expected = outcome(() => boundJson(value, limits, padded.root));
        const actual = outcome(() => boundViaBytes(Buffer.from(text), limits, padded.root));
        if (!actual.ok || !expected.ok || actual.json !== expected.json) expect(actual).toEqual(expected);
      }),
      timeBox(80, 2500),
    );
  });

  it('a mirror written with escapes is recognized as in memory: `\\u007b` for `{`, `\\u00e9`, `\\/`, spaces', () => {
    const structure = { rows: Array.from({ length: 400 }, (_, i) => ({ id: i, name: `row é/${i}`, n: 1 })) };
    const json = JSON.stringify(structure);
    const line = JSON.stringify({ content: [{ type: 'text', text: json }], structuredContent: structure })
      .replace('"text":"{', '"text":"\\u007b')
      .replace(/é/g, '\\u00e9')
      .replace(/\//g, '\\/')
      .replace(/"n":1/g, '"n" : 1');
    const limits = resolveLimits({ maxResultBytes: 8192 });
    const expected = boundJson(JSON.parse(line), limits, 'result');
    const actual = boundViaBytes(Buffer.from(line), limits, 'result');
    expect(actual.json).toBe(expected.json);
    // Both took the text for the structure's mirror: never a cut piece of the original JSON.
    const out = JSON.parse(actual.json) as { content: { text: string }[]; structuredContent: unknown };
    expect(out.content[0]!.text).not.toMatch(/^\{"rows"/);
    expect(out.content[0]!.text).toMatch(/^\[mcp-result-budget\] The JSON text of this result did not fit/);
  });

  it('same output when bounding an already bounded result (earlier report and notice inside), padded', () => {
    fc.assert(
      fc.property(docArb(), streamLimitsArb, paddingArb, (doc, options, pad) => {
        const limits = resolveLimits(options);
        const first = boundJson(doc.value, limits, doc.root);
        const value = JSON.parse(first.json) as Record<string, unknown>;
        const isResponse = doc.root === 'envelope' || (doc.root === 'auto' && doc.value !== doc.result && doc.value !== doc.error);
        const again: typeof doc = {
          value,
          root: doc.root,
          result: doc.result === undefined ? undefined : isResponse ? (value.result as Record<string, unknown>) : value,
          error: doc.error === undefined ? undefined : doc.value === doc.error ? value : (value.error as Record<string, unknown>),
        };
        compare(again, options, false);
        compare(padDoc(again, limits, { ...pad, kind: pad.kind === 'mirror' ? 'unknown' : pad.kind }), options, true);
      }),
      timeBox(100, 2500),
    );
  });

  it('a known example: a cut mirror text, envelope with id last, streamed', () => {
    const structure = { rows: Array.from({ length: 40 }, (_, i) => ({ id: i, name: `row "${i}" é😀\n`, tags: ['a', 'b'] })) };
    const result = {
      content: [{ type: 'text', text: JSON.stringify(structure) }, { type: 'text', text: 'x'.repeat(2 << 20) }],
      structuredContent: structure,
    };
    const options = { maxResultBytes: 8192, maxItems: 100, maxBlockBytes: 1000, maxTextBytes: 1500 };
    const value = { result, jsonrpc: '2.0', id: 42 };
    compare({ value, root: 'auto', result, error: undefined }, options, true);
    const r = boundViaBytes(Buffer.from(JSON.stringify(value)), options);
    expect(r.streamed).not.toBe(false);
    const out = JSON.parse(r.json) as { result: { content: { text: string }[]; structuredContent: { rows: unknown[] } }; id: number };
    expect(Object.keys(out)).toEqual(['result', 'jsonrpc', 'id']);
    expect(out.id).toBe(42);
    // Structure first: the rows are kept; their JSON does not fit the block, so the mirror block
    // now holds the marked summary, never JSON cut in the middle.
    expect(out.result.structuredContent.rows.length).toBeGreaterThan(0);
    expect(isMirrorRewrite(out.result.content[0]!.text, out.result.structuredContent)).toBe(true);
  });

  /**
   * Regression: `isError` after the point where the result object was closed (budget used up) is
   * kept by both paths; the result object is never skipped in bulk.
   */
  it('isError after the result is closed: kept by both paths, whatever maxOmittedPaths is', () => {
    const input = { structuredContent: { s: 'x'.repeat(100_000) }, content: [], isError: true };
    const bytes = Buffer.from(JSON.stringify(input));
    for (const maxOmittedPaths of [0, 4]) {
      const options = { maxResultBytes: 6000, maxStringBytes: 1 << 20, notice: false, maxOmittedPaths };
      const memory = boundJson(input, options, 'result').json;
      const stream = boundViaBytes(bytes, options, 'result').json;
      expect({ maxOmittedPaths, stream: JSON.parse(stream).isError }).toEqual({ maxOmittedPaths, stream: true });
      expect({ maxOmittedPaths, memory: JSON.parse(memory).isError }).toEqual({ maxOmittedPaths, memory: true });
      expect(stream).toBe(memory);
    }
  });
});
