/**
 * The byte source (ByteBudget): chunk-boundary invariance below and above the fit window, exact
 * numbers through the streaming path, errors with byte offsets in both phases, root checks, and
 * the sink.
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { boundJson } from '../../src/engine/bound.js';
import { ByteBudget, fitWindowBytes } from '../../src/engine/byte-source.js';
import { BudgetError } from '../../src/engine/errors.js';
import { REPORT_KEY } from '../../src/engine/limits.js';
import { resolveLimits } from '../../src/engine/options.js';
import {
  boundViaBytes,
  docArb,
  outcome,
  padDoc,
  paddingArb,
  splitBytes,
  streamLimitsArb,
  type Chunking,
} from '../helpers/stream-gen.js';
import { timeBox } from '../helpers/time-box.js';

function json(value: unknown): Buffer {
  return Buffer.from(JSON.stringify(value), 'utf8');
}

function errorOf(fn: () => unknown): BudgetError {
  try {
    fn();
  } catch (e) {
    expect(e).toBeInstanceOf(BudgetError);
    return e as BudgetError;
  }
  throw new Error('expected a BudgetError, got none');
}

/** A text of `bytes` escaped bytes with every UTF-8 length and some escapes. */
function mixedText(bytes: number): string {
  const unit = 'ab"c\\d\né€😀中\u0001 ';
  const one = Buffer.byteLength(JSON.stringify(unit)) - 2;
  return unit.repeat(Math.ceil(bytes / one));
}

/** Random chunk sizes, cycled: small ones (1–64 bytes) and larger ones. */
const chunkSizes: fc.Arbitrary<number[]> = fc.array(
  fc.oneof({ weight: 3, arbitrary: fc.integer({ min: 1, max: 64 }) }, { weight: 2, arbitrary: fc.integer({ min: 1000, max: 200_000 }) }),
  { minLength: 1, maxLength: 12 },
);

/** For megabyte inputs: every small chunk is followed by a large one, so a run makes few hundred writes. */
const bigChunkSizes: fc.Arbitrary<number[]> = fc
  .array(fc.tuple(fc.integer({ min: 1, max: 64 }), fc.integer({ min: 5000, max: 200_000 })), { minLength: 1, maxLength: 8 })
  .map((pairs) => pairs.flat());

describe('byte source: chunk-boundary invariance', () => {
  it('whole, 1-byte, random chunk sizes and a reused scratch buffer give the same output (below the fit window)', () => {
    fc.assert(
      fc.property(docArb(), docArb({ mirror: true }), fc.boolean(), streamLimitsArb, chunkSizes, (plain, mirror, useMirror, options, sizes) => {
        const doc = useMirror ? mirror : plain;
        const limits = resolveLimits(options);
        const bytes = json(doc.value);
        const whole = outcome(() => boundViaBytes(bytes, limits, doc.root, 'whole'));
        const chunkings: Chunking[] = [1, sizes, [2, 1, 3]];
        for (const c of chunkings) expect(outcome(() => boundViaBytes(bytes, limits, doc.root, c))).toEqual(whole);
        expect(outcome(() => boundViaBytes(bytes, limits, doc.root, sizes, true))).toEqual(whole);
      }),
      timeBox(150, 3200),
    );
  });

  it('whole and random chunk sizes give the same output above the fit window', () => {
    fc.assert(
      fc.property(docArb(), docArb({ mirror: true }), fc.boolean(), streamLimitsArb, paddingArb, bigChunkSizes, (plain, mirror, useMirror, options, pad, sizes) => {
        const limits = resolveLimits(options);
        const doc = padDoc(useMirror ? mirror : plain, limits, pad);
        const bytes = json(doc.value);
        expect(bytes.length).toBeGreaterThan(fitWindowBytes(limits));
        const whole = outcome(() => boundViaBytes(bytes, limits, doc.root, 'whole'));
        expect(outcome(() => boundViaBytes(bytes, limits, doc.root, sizes))).toEqual(whole);
        expect(outcome(() => boundViaBytes(bytes, limits, doc.root, sizes, true))).toEqual(whole);
      }),
      timeBox(60, 3200),
    );
  });

  it('1-byte chunks on a streamed input of a few hundred KB (text, mirror, arrays, escapes)', () => {
    const structure = { rows: Array.from({ length: 300 }, (_, i) => ({ id: i, name: `n"${i}"\\é😀`, tags: ['x', 'y'] })) };
    const result = {
      content: [
        { type: 'text', text: JSON.stringify(structure) },
        { type: 'text', text: mixedText(120_000) },
        { type: 'image', data: 'QUJD'.repeat(10_000), mimeType: 'image/png' },
      ],
      structuredContent: { ...structure, more: Array.from({ length: 5000 }, (_, i) => [i, `s${i}`]) },
      isError: false,
      _meta: { trace: mixedText(20_000) },
    };
    const bytes = json({ result, jsonrpc: '2.0', id: 'req-1' });
    expect(bytes.length).toBeLessThan(400_000);
    const options = { maxResultBytes: 12_000, maxBlockBytes: 3000, maxTextBytes: 5000, maxItems: 50 };
    const whole = boundViaBytes(bytes, options, 'auto');
    expect(whole.streamed).not.toBe(false);
    const oneByte = boundViaBytes(bytes, options, 'auto', 1);
    expect(oneByte.json).toBe(whole.json);
    expect(oneByte.report).toEqual(whole.report);
    expect(whole.json).toBe(boundJson({ result, jsonrpc: '2.0', id: 'req-1' }, options, 'auto').json);
  });

  it('a huge single chunk (several fit slices) and the same bytes in 64 KiB + 1 pieces agree', () => {
    const result = { content: [{ type: 'text', text: mixedText(3 << 20) }, { type: 'text', text: 'tail' }], structuredContent: { ok: true } };
    const bytes = json(result);
    const a = boundViaBytes(bytes, {}, 'result');
    const b = boundViaBytes(bytes, {}, 'result', 64 * 1024 + 1);
    expect(a.streamed).not.toBe(false);
    expect(b.json).toBe(a.json);
    expect(a.json).toBe(boundJson(result, {}, 'result').json);
  });
});

describe('byte source: exact numbers', () => {
  const BIG = '123456789012345678901234567890';

  it('a 30-digit integer in structuredContent survives unchanged below the fit window', () => {
    const text = `{"content":[{"type":"text","text":"hi"}],"structuredContent":{"n":${BIG},"m":[${BIG},-${BIG}]}}`;
    const out = boundViaBytes(Buffer.from(text), {}, 'auto');
    expect(out.json).toBe(text);
    expect(out.truncated).toBe(false);
    expect(out.report).toBeUndefined();
    // 1-byte chunks too.
    expect(boundViaBytes(Buffer.from(text), {}, 'auto', 1).json).toBe(text);
  });

  it('a 30-digit integer survives in a result that is cut, and in an envelope', () => {
    const text = `{"jsonrpc":"2.0","id":1,"result":{"content":[{"type":"text","text":"${'t'.repeat(100_000)}"}],"structuredContent":{"n":${BIG}}}}`;
    const out = boundViaBytes(Buffer.from(text), {}, 'auto');
    expect(out.truncated).toBe(true);
    expect(out.json).toContain(`"structuredContent":{"n":${BIG}}`);
    expect(out.json.startsWith('{"jsonrpc":"2.0","id":1,"result":{')).toBe(true);
  });

  it('a 30-digit integer survives above the fit window, before and after the padding, in any chunking', () => {
    const limits = resolveLimits({});
    const pad = 'p'.repeat(fitWindowBytes(limits) + 1000);
    const text = `{"structuredContent":{"n":${BIG}},"content":[{"type":"text","text":"${pad}"}],"_meta":{"big":${BIG},"neg":-${BIG}.5e-7}}`;
    const bytes = Buffer.from(text);
    for (const chunking of ['whole', 65_537, [1, 7, 100_000]] as Chunking[]) {
      const out = boundViaBytes(bytes, limits, 'result', chunking);
      expect(out.streamed).not.toBe(false);
      expect(out.json).toContain(`"structuredContent":{"n":${BIG}}`);
      expect(out.json).toContain(`"_meta":{"big":${BIG},"neg":-${BIG}.5e-7,"${REPORT_KEY}":`);
    }
  });

  it('every number form JSON allows is passed as written (not as JS would print it)', () => {
    const forms = ['1.0', '1e5', '1E+5', '-0', '0.10', '1.5e-3', '12345678901234567890.5', '9007199254740993', '5e-324', '1e400', '-1e-400'];
    const text = `{"content":[],"structuredContent":{"n":[${forms.join(',')}]}}`;
    expect(boundViaBytes(Buffer.from(text), {}, 'result').json).toBe(text);
    // Numbers JS writes back exactly still take the in-memory path and come back as written.
    const plain = '{"content":[],"structuredContent":{"n":[1,-2,3.5,1e+21,1.5e-7]}}';
    const out = boundViaBytes(Buffer.from(plain), {}, 'result');
    expect(out.json).toBe(plain);
    expect(out.unchanged).toBe(true);
  });
});

describe('byte source: paths and errors', () => {
  it('fitWindowBytes is max(4 × maxResultBytes, 1 MiB)', () => {
    expect(fitWindowBytes(resolveLimits({}))).toBe(1024 * 1024);
    expect(fitWindowBytes(resolveLimits({ maxResultBytes: 512 * 1024 }))).toBe(2 * 1024 * 1024);
  });

  it('a small result that fits comes back as JSON.stringify writes it, unchanged', () => {
    const result = { content: [{ type: 'text', text: 'hello é😀 "q"' }], structuredContent: { a: [1, 2, { b: null }] }, isError: false };
    const out = boundViaBytes(json(result), {}, 'auto', 3);
    expect(out).toMatchObject({ json: JSON.stringify(result), unchanged: true, truncated: false, report: undefined });
    // Whitespace in the input does not survive: the output is compact.
    expect(boundViaBytes(Buffer.from(JSON.stringify(result, null, 2)), {}, 'auto').json).toBe(JSON.stringify(result));
  });

  it('invalid JSON names the byte offset in the fit phase and in the streaming phase', () => {
    const limits = resolveLimits({});
    const small = Buffer.from('{"content":[{"type":"text","text":"abc"}],"x":tru}');
    for (const c of ['whole', 1, 5] as Chunking[]) {
      const err = errorOf(() => boundViaBytes(small, limits, 'auto', c));
      expect(err.code).toBe('INVALID_JSON');
      expect(err.data?.offset).toBe(small.indexOf('tru}') + 3);
    }
    // Deep in a streamed input: garbage after a 2 MiB text block, and invalid UTF-8 inside the
    // part of that block that is skipped (cut by maxBlockBytes).
    const head = '{"content":[{"type":"text","text":"' + 'x'.repeat(2 << 20);
    const garbage = Buffer.from(head + '"}] }x');
    const badUtf8 = Buffer.concat([Buffer.from(head), Buffer.from([0xe2, 0x28, 0xa1]), Buffer.from('"}]}')]);
    for (const c of ['whole', 65_536, [1, 9999, 70_001]] as Chunking[]) {
      const e1 = errorOf(() => boundViaBytes(garbage, limits, 'auto', c));
      expect(e1.message).toBe(`Invalid JSON at byte offset ${garbage.length - 1}: unexpected 'x' after the end of the document`);
      const e2 = errorOf(() => boundViaBytes(badUtf8, limits, 'auto', c));
      expect(e2.message).toBe(`Invalid JSON at byte offset ${head.length}: invalid UTF-8`);
      expect(e2.data).toEqual({ offset: head.length });
    }
  });

  it('empty and truncated input', () => {
    expect(errorOf(() => boundViaBytes(Buffer.alloc(0), {}, 'auto')).message).toBe('Invalid JSON at byte offset 0: empty input');
    const cut = json({ content: [{ type: 'text', text: 'y'.repeat(3 << 20) }] }).subarray(0, 2 << 20);
    const err = errorOf(() => boundViaBytes(cut, {}, 'auto'));
    expect(err.code).toBe('INVALID_JSON');
    expect(err.data?.offset).toBe(2 << 20);
  });

  it('the root must be an object: same error code on both paths', () => {
    const pad = 'z'.repeat(1 << 21);
    const cases: unknown[] = [[1, 2], 'str', 12, null, [pad], pad];
    for (const v of cases) {
      const memory = outcome(() => boundJson(v, {}, 'auto'));
      const stream = outcome(() => boundViaBytes(json(v), {}, 'auto'));
      expect(memory.ok).toBe(false);
      expect(stream).toEqual(memory);
    }
  });

  it('envelope errors: a request, a non-object result, an oversized id — same code on both paths', () => {
    const pad = { content: [{ type: 'text', text: 'p'.repeat(1 << 21) }] };
    const cases: [unknown, string][] = [
      [{ jsonrpc: '2.0', id: 1, method: 'tools/call', params: {} }, 'INVALID_RESULT'],
      [{ jsonrpc: '2.0', id: 1, result: [pad] }, 'INVALID_RESULT'],
      [{ jsonrpc: '2.0', id: 'i'.repeat(2000), result: pad }, 'INVALID_ENVELOPE'],
      [{ jsonrpc: '2.0', id: { x: 1 }, result: pad }, 'INVALID_ENVELOPE'],
    ];
    for (const [v, code] of cases) {
      const memory = outcome(() => boundJson(v, {}, 'auto'));
      const stream = outcome(() => boundViaBytes(json(v), {}, 'auto'));
      expect(memory).toMatchObject({ ok: false, code });
      expect(stream).toEqual(memory);
    }
  });

  it('a sink receives the whole output on both paths; end() then returns empty json', () => {
    for (const value of [
      { content: [{ type: 'text', text: 'small' }] },
      { content: [{ type: 'text', text: 'big'.repeat(1 << 19) }], structuredContent: { a: 1 } },
    ]) {
      const limits = resolveLimits({ maxResultBytes: 8192 });
      const pieces: string[] = [];
      const bb = new ByteBudget(limits, 'result', (chunk: string) => void pieces.push(chunk));
      for (const p of splitBytes(json(value), 100_000)) bb.write(p);
      const r = bb.end();
      expect(r.json).toBe('');
      expect(pieces.join('')).toBe(boundJson(value, limits, 'result').json);
    }
  });

  /**
   * Regression (a fixed bug): below the fit window the byte source builds the value with a capture that assigns members
   * with `obj[key] = value`, so a `"__proto__"` member sets the prototype instead of creating a
   * property and is lost; JSON.parse (and the streaming path above the window) keep it.
   * Minimal: `{"content":[],"structuredContent":{"__proto__":{"a":1},"b":2}}` with default limits
   * → `{"content":[],"structuredContent":{"b":2}}` (expected unchanged).
   */
  it('a "__proto__" member is kept below the fit window, as JSON.parse keeps it', () => {
    const text = '{"content":[],"structuredContent":{"__proto__":{"a":1},"b":2}}';
    expect(boundJson(JSON.parse(text), {}, 'auto').json).toBe(text);
    expect(boundViaBytes(Buffer.from(text), {}, 'auto').json).toBe(text);
  });

  it('a "__proto__" member is kept on the streaming path (above the fit window)', () => {
    const text = `{"content":[{"type":"text","text":"${'q'.repeat(2 << 20)}"}],"structuredContent":{"__proto__":{"a":1},"b":2}}`;
    const out = boundViaBytes(Buffer.from(text), {}, 'auto');
    expect(out.json).toContain('"structuredContent":{"__proto__":{"a":1},"b":2}');
    expect(out.json).toBe(boundJson(JSON.parse(text), {}, 'auto').json);
  });

  /**
   * Regression (a fixed bug): the tokenizer passes keys longer than MAX_KEY_UNITS (1 MiB units) cut to 1 048 577 units,
   * and the budgeter only compares a key with maxStringBytes (which may be up to 1 GiB): on the
   * streaming path such a key is silently renamed — no report, `truncated: false`. The in-memory
   * path keeps it whole. Minimal: maxStringBytes 2 MiB, maxResultBytes 4 MiB,
   * `{"content":[],"structuredContent":{"<1.5M × k>":1.0}}` (the `1.0` forces streaming).
   */
  it('a key longer than 1 MiB is never silently renamed on the streaming path', () => {
    const key = 'k'.repeat(1_500_000);
    const options = { maxStringBytes: 2 << 20, maxResultBytes: 4 << 20 };
    const out = boundViaBytes(Buffer.from(`{"content":[],"structuredContent":{"${key}":1.0}}`), options, 'result');
    const kept = Object.keys((JSON.parse(out.json) as { structuredContent: object }).structuredContent);
    // Either the key is kept whole, or it is omitted and reported.
    expect(kept[0] === key || (out.truncated && kept.length === 0)).toBe(true);
  });
});
