/**
 * The rules of the budget, one by one, on small hand-written inputs and small limits. Inputs go
 * through `boundJson` (fast path, then the budgeter fed by the walk).
 */
import { describe, expect, it } from 'vitest';
import { boundJson } from '../../src/engine/bound.js';
import type { RootKind } from '../../src/engine/budgeter.js';
import { BudgetError } from '../../src/engine/errors.js';
import type { BudgetOptions } from '../../src/engine/limits.js';
import { minResultBytes, resolveLimits } from '../../src/engine/options.js';
import { noticeText } from '../../src/engine/report.js';
import { DEFAULT_LIMITS } from '../../src/engine/limits.js';
import { MIRROR_SUMMARY, NOTICE_KEY, isMirrorRewrite, REPORT_KEY, boundViolations, escapedBytes, utf8 } from '../helpers/spec.js';

/* eslint-disable @typescript-eslint/no-explicit-any */
type Json = any;

function bound(input: unknown, options: BudgetOptions = {}, root: RootKind = 'result') {
  const limits = resolveLimits(options);
  const out = boundJson(input, limits, root);
  expect(utf8(out.json)).toBeLessThanOrEqual(limits.maxResultBytes);
  return { ...out, limits, parsed: JSON.parse(out.json) as Json };
}

function once(input: unknown, options: BudgetOptions = {}) {
  const first = boundJson(input, options);
  const second = boundJson(JSON.parse(first.json), options);
  return { first, second };
}

function errorCode(fn: () => unknown): string {
  try {
    fn();
  } catch (e) {
    expect(e).toBeInstanceOf(BudgetError);
    return (e as BudgetError).code;
  }
  return 'no error';
}

/** Small limits: 4 KiB results (the floor with 4 listed pointers is below that). */
const SMALL: BudgetOptions = { maxResultBytes: 4096, maxOmittedPaths: 4 };

describe('budgeter', () => {
  // ------------------------------------------------------------------ top-level fields

  it('budgeter: keeps content, structuredContent, isError and _meta, and drops other fields', () => {
    const input = { content: [], foo: 1, structuredContent: { a: 1 }, nextCursor: 'c', isError: false, _meta: { m: 1 } };
    const { parsed, report } = bound(input, { protocolVersion: '2025-06-18', notice: false });
    expect(parsed).toEqual({
      content: [],
      structuredContent: { a: 1 },
      isError: false,
      _meta: { m: 1, [REPORT_KEY]: report },
    });
    expect(report).toEqual({
      truncated: true,
      budget_kind: 'top_level_field',
      omitted_count: 2,
      omitted_paths: ['/foo', '/nextCursor'],
      omitted_paths_capped: false,
    });
  });

  it('budgeter: keeps task from 2025-11-25 and resultType from 2026-07-28 (both when no version is set)', () => {
    const input = { content: [], task: { taskId: 't' }, resultType: 'complete' };
    const keys = (v: string | undefined) => Object.keys(bound(input, { protocolVersion: v, notice: false }).parsed);
    expect(keys(undefined)).toEqual(['content', 'task', 'resultType']);
    expect(keys('2026-07-28')).toEqual(['content', 'task', 'resultType']);
    expect(keys('2025-11-25')).toEqual(['content', 'task', '_meta']);
    expect(keys('2025-06-18')).toEqual(['content', '_meta']);
    expect(bound(input, { protocolVersion: '2025-06-18' }).report?.omitted_paths).toEqual(['/task', '/resultType']);
  });

  it('budgeter: drops a non-object _meta and reports it', () => {
    for (const meta of [1, null, true, [1, 2]]) {
      const { parsed, report } = bound({ isError: true, _meta: meta });
      expect(parsed).toEqual({ isError: true, _meta: { [REPORT_KEY]: report } });
      expect(report).toMatchObject({ budget_kind: 'top_level_field', omitted_paths: ['/_meta'] });
    }
  });

  // ------------------------------------------------------------------ content text

  it('budgeter: cuts a text block to maxBlockBytes, measured as escaped bytes', () => {
    const { parsed, report } = bound({ content: [{ type: 'text', text: '"'.repeat(100) }] }, { maxBlockBytes: 11 });
    expect(parsed.content[0].text).toBe('"'.repeat(5)); // 5 × \" = 10 bytes; a sixth would be 12
    expect(report).toMatchObject({ budget_kind: 'text_block_bytes', omitted_count: 1, omitted_paths: ['/content/0/text'] });
  });

  it('budgeter: bounds the total text greedily in document order and removes a block whose text budget is spent', () => {
    const t = (c: string) => ({ type: 'text', text: c.repeat(30) });
    const { parsed, report } = bound({ content: [t('a'), t('b'), t('c'), { type: 'image', data: 'AAAA', mimeType: 'image/png' }] }, { maxTextBytes: 50 });
    expect(parsed.content.slice(0, 3)).toEqual([t('a'), { type: 'text', text: 'b'.repeat(20) }, { type: 'image', data: 'AAAA', mimeType: 'image/png' }]);
    expect(report).toMatchObject({ budget_kind: 'text_total_bytes', omitted_count: 2, omitted_paths: ['/content/1/text', '/content/2'] });
  });

  it('budgeter: counts embedded resource text as block text', () => {
    const input = { content: [{ type: 'resource', resource: { uri: 'file:///a', text: 'é'.repeat(50) } }] };
    const { parsed, report } = bound(input, { maxBlockBytes: 21 });
    expect(parsed.content[0].resource).toEqual({ uri: 'file:///a', text: 'é'.repeat(10) });
    expect(report?.omitted_paths).toEqual(['/content/0/resource/text']);
  });

  it('budgeter: never splits a surrogate pair, a UTF-8 sequence or an escape at the cut', () => {
    const text = (s: string, max: number) => bound({ content: [{ type: 'text', text: s }] }, { maxBlockBytes: max }).parsed.content[0].text;
    expect(text('a😀😀', 5)).toBe('a😀');
    expect(text('a😀😀', 8)).toBe('a😀');
    expect(text('a😀😀', 9)).toBe('a😀😀');
    expect(text('a€€', 6)).toBe('a€');
    expect(text('a\u0001b', 6)).toBe('a');
    expect(text('a\ud800b', 6)).toBe('a');
    expect(text('a\ud800b', 7)).toBe('a\ud800');
  });

  // ------------------------------------------------------------------ binary blocks

  it('budgeter: never cuts base64 and removes a binary block that does not fit whole, keeping later blocks', () => {
    const big = 'A'.repeat(10_000);
    const input = {
      content: [
        { type: 'image', data: big, mimeType: 'image/png' },
        { type: 'text', text: 'after' },
        { type: 'resource', resource: { uri: 'file:///b', blob: big } },
        { type: 'audio', data: 'AAAA', mimeType: 'audio/wav' },
      ],
    };
    const { parsed, report } = bound(input, SMALL);
    expect(parsed.content.slice(0, 2)).toEqual([{ type: 'text', text: 'after' }, { type: 'audio', data: 'AAAA', mimeType: 'audio/wav' }]);
    expect(report).toMatchObject({ budget_kind: 'binary_block', omitted_count: 2, omitted_paths: ['/content/0', '/content/2'] });
  });

  it('budgeter: keeps base64 longer than maxStringBytes whole', () => {
    const data = 'QUJD'.repeat(250);
    const input = { content: [{ type: 'image', data, mimeType: 'image/png' }, { type: 'resource', resource: { uri: 'u', blob: data } }] };
    const { json, unchanged } = bound(input, { maxStringBytes: 16 });
    expect(unchanged).toBe(true);
    expect(json).toBe(JSON.stringify(input));
  });

  // ------------------------------------------------------------------ text mirror

  it('budgeter: rebuilds a cut text mirror from the bounded structuredContent', () => {
    const sc = { rows: Array.from({ length: 40 }, (_, i) => ({ id: i, name: `row "${i}"` })) };
    const input = { content: [{ type: 'text', text: JSON.stringify(sc) }], structuredContent: sc };
    const { parsed, report, limits } = bound(input, { maxBlockBytes: 300, maxItems: 5 });
    expect(parsed.content[0].text).toBe(JSON.stringify(parsed.structuredContent));
    expect(escapedBytes(parsed.content[0].text)).toBeLessThanOrEqual(300);
    expect(parsed.structuredContent.rows).toHaveLength(5);
    expect(report?.budget_kind).toBe('text_block_bytes');
    expect(report?.omitted_paths[0]).toBe('/content/0/text');
    expect(boundViolations(parsed, limits)).toEqual([]);
  });

  it('budgeter: structure first: a mirror whose rebuilt JSON does not fit becomes the marked summary', () => {
    // The structure is not shrunk to fit the text bounds: it keeps all it can, and the text says where to look.
    const sc = { rows: Array.from({ length: 40 }, (_, i) => ({ id: i, name: `row "${i}"` })) };
    const input = { content: [{ type: 'text', text: JSON.stringify(sc) }], structuredContent: sc };
    const { parsed, limits } = bound(input, { maxBlockBytes: 300 });
    expect(parsed.structuredContent).toEqual(sc);
    expect(parsed.content[0].text).toBe(MIRROR_SUMMARY);
    expect(boundViolations(parsed, limits)).toEqual([]);
    // Under a block bound too small even for the summary, the text is empty (never cut JSON).
    expect(bound(input, { maxBlockBytes: 40 }).parsed.content[0].text).toBe('');
  });

  it('budgeter: structure first: under a small maxResultBytes the structure takes the room, the mirror the summary', () => {
    const sc = { rows: Array.from({ length: 400 }, (_, i) => ({ id: i, name: `row ${i}` })) };
    const input = { content: [{ type: 'text', text: JSON.stringify(sc) }], structuredContent: sc };
    const { parsed, report } = bound(input, { maxResultBytes: 8 * 1024, maxItems: 1000 });
    // The text came first and was cut by the result bound; the structure then borrowed its bytes.
    expect(report?.budget_kind).toBe('result_bytes');
    expect(parsed.structuredContent.rows.length).toBeGreaterThan(50);
    expect(parsed.content[0].text).toBe(MIRROR_SUMMARY);
    expect(utf8(JSON.stringify(parsed))).toBeLessThanOrEqual(8 * 1024);
  });

  it('budgeter: a cut JSON-looking text that cannot be the mirror stays a plain cut', () => {
    // '[' cannot mirror an object. (A '{' text that is not the mirror still makes an object
    // structuredContent be bounded as a pending mirror: no rule looks ahead.)
    const sc = { a: 'x'.repeat(100) };
    const input = { content: [{ type: 'text', text: JSON.stringify(['y'.repeat(100)]) }], structuredContent: sc };
    const { parsed } = bound(input, { maxBlockBytes: 20 });
    expect(parsed.content[0].text).toBe('["' + 'y'.repeat(17)); // [\" is 3 escaped bytes, 17 y fill the 20
    expect(parsed.structuredContent).toEqual(sc);
  });

  // ------------------------------------------------------------------ structure bounds

  it('budgeter: keeps the first N array items', () => {
    const { parsed, report } = bound({ structuredContent: { list: [0, 1, 2, 3, 4, 5, 6] } }, { maxItems: 3 });
    expect(parsed.structuredContent.list).toEqual([0, 1, 2]);
    expect(report).toMatchObject({ budget_kind: 'array_items', omitted_count: 4, omitted_paths: ['/structuredContent/list/3', '/structuredContent/list/4', '/structuredContent/list/5', '/structuredContent/list/6'] });
  });

  it('budgeter: keeps the first N object members, in _meta and structuredContent alike', () => {
    const obj = { a: 1, b: 2, c: 3, d: 4 };
    const { parsed, report } = bound({ structuredContent: obj, _meta: obj }, { maxKeys: 2, maxOmittedPaths: 10 });
    expect(parsed.structuredContent).toEqual({ a: 1, b: 2 });
    expect(parsed._meta).toEqual({ a: 1, b: 2, [REPORT_KEY]: report });
    expect(report?.omitted_paths).toEqual(['/structuredContent/c', '/structuredContent/d', '/_meta/c', '/_meta/d']);
  });

  it('budgeter: a structuredContent that is no object is dropped (the client rejects it)', () => {
    const { parsed, report } = bound({ structuredContent: [1, 2, 3, 4], content: [] }, { maxItems: 2 });
    expect(parsed.structuredContent).toBeUndefined();
    expect(report).toMatchObject({ budget_kind: 'top_level_field', omitted_paths: ['/structuredContent'] });
  });

  it('budgeter: cuts a long string to a prefix of maxStringBytes escaped bytes', () => {
    const { parsed, report } = bound({ structuredContent: { s: 'ab\n'.repeat(20), q: 'é'.repeat(20) } }, { maxStringBytes: 18 });
    expect(parsed.structuredContent.s).toBe('ab\nab\nab\nab\nab'); // 4 × ab\n (4 bytes escaped) + ab = 18
    expect(escapedBytes(parsed.structuredContent.s)).toBe(18);
    expect(parsed.structuredContent.q).toBe('é'.repeat(9));
    expect(report).toMatchObject({ budget_kind: 'string_bytes', omitted_count: 2, omitted_paths: ['/structuredContent/s', '/structuredContent/q'] });
  });

  it('budgeter: drops a member whose key is longer than maxStringBytes and keeps later members', () => {
    const { parsed, report } = bound({ structuredContent: { ['k'.repeat(40)]: 1, ok: 2 } }, { maxStringBytes: 32 });
    expect(parsed.structuredContent).toEqual({ ok: 2 });
    expect(report).toMatchObject({ budget_kind: 'string_bytes', omitted_paths: ['/structuredContent/' + 'k'.repeat(40)] });
  });

  it('budgeter: drops containers deeper than maxDepth (the result is depth 1); in an array that ends the array', () => {
    // result 1, structuredContent 2, a and list 3, b and list[1] 4, deep and list[1][1] 5
    const sc = { a: { b: { deep: { x: 1 }, flat: 2 } }, list: [1, [2, [3], 4], 5] };
    const { parsed, report } = bound({ structuredContent: sc }, { maxDepth: 4, maxOmittedPaths: 10 });
    expect(parsed.structuredContent).toEqual({ a: { b: { flat: 2 } }, list: [1, [2], 5] });
    expect(report).toMatchObject({
      budget_kind: 'depth',
      omitted_count: 3,
      omitted_paths: ['/structuredContent/a/b/deep', '/structuredContent/list/1/1', '/structuredContent/list/1/2'],
    });
    expect(bound({ structuredContent: sc }, { maxDepth: 5 }).unchanged).toBe(true);
  });

  // ------------------------------------------------------------------ result bytes

  it('budgeter: stays within maxResultBytes and omits every later value once the budget is spent', () => {
    // (isError after a dropped member: see "walk: keeps isError after the budget is spent and a later member was dropped")
    const input = { structuredContent: { rows: Array.from({ length: 500 }, (_, i) => `row ${i}`) }, _meta: { later: 1 } };
    const { parsed, report, json, limits } = bound(input, { ...SMALL, maxItems: 1000 });
    expect(utf8(json)).toBeLessThanOrEqual(4096);
    expect(report?.budget_kind).toBe('result_bytes');
    const rows = parsed.structuredContent.rows as string[];
    expect(rows).toEqual(input.structuredContent.rows.slice(0, rows.length));
    expect(parsed._meta).toEqual({ [REPORT_KEY]: report }); // _meta.later came after the budget was spent
    expect(boundViolations(parsed, limits)).toEqual([]);
  });

  it('budgeter: a string cut for result bytes keeps at least 16 bytes or is dropped', () => {
    for (let pad = 0; pad < 60; pad++) {
      const input = { structuredContent: { pad: 'p'.repeat(3000 + pad), s: 'x'.repeat(5000) } };
      const { parsed } = bound(input, { ...SMALL, maxStringBytes: 100_000 });
      const s = parsed.structuredContent?.s as string | undefined;
      if (s !== undefined) expect(s.length).toBeGreaterThanOrEqual(16);
    }
  });

  it('budgeter: the floor of maxResultBytes is accepted and holds a report', () => {
    const floor = minResultBytes({ ...DEFAULT_LIMITS, maxOmittedPaths: 4 });
    const input = { content: [{ type: 'text', text: 'x'.repeat(10_000) }], structuredContent: { a: 'y'.repeat(10_000) } };
    const { json, report } = bound(input, { maxOmittedPaths: 4, maxResultBytes: floor });
    expect(utf8(json)).toBeLessThanOrEqual(floor);
    expect(report?.budget_kind).toBe('result_bytes');
  });

  // ------------------------------------------------------------------ report and notice

  it('budgeter: writes the report at the end of an existing _meta, or appends _meta at the end', () => {
    const withMeta = bound({ _meta: { a: 1 }, structuredContent: { l: [1, 2, 3] }, isError: false }, { maxItems: 1 });
    expect(withMeta.json.startsWith('{"_meta":{"a":1,"io.github.mcp-result-budget/budget":{')).toBe(true);
    const without = bound({ structuredContent: { l: [1, 2, 3] }, isError: false }, { maxItems: 1 });
    expect(without.json.endsWith(`,"isError":false,"_meta":{${JSON.stringify(REPORT_KEY)}:${JSON.stringify(without.report)}}}`)).toBe(true);
  });

  it('budgeter: appends the notice block to an array content, after the last kept block', () => {
    const { parsed, report } = bound({ content: [{ type: 'text', text: 'hi' }], structuredContent: { l: [1, 2, 3] } }, { maxItems: 1 });
    expect(parsed.content).toEqual([{ type: 'text', text: 'hi' }, { type: 'text', _meta: { [NOTICE_KEY]: true }, text: noticeText(report!) }]);
    expect(bound({ content: [], structuredContent: { l: [1, 2, 3] } }, { maxItems: 1 }).parsed.content).toHaveLength(1);
  });

  it('budgeter: no notice when notice is off, content is not an array or nothing was cut', () => {
    expect(bound({ content: [], structuredContent: { l: [1, 2, 3] } }, { maxItems: 1, notice: false }).parsed.content).toEqual([]);
    // A content that is no array is dropped (the client's schema), so it gets no notice either.
    expect(bound({ content: 'text', structuredContent: { l: [1, 2, 3] } }, { maxItems: 1 }).parsed.content).toBeUndefined();
    expect(bound({ content: [{ type: 'text', text: 'a' }] }).parsed.content).toEqual([{ type: 'text', text: 'a' }]);
  });

  it('budgeter: lists pointers into the original input even after earlier blocks were removed', () => {
    const input = {
      content: [
        { type: 'image', data: 'A'.repeat(10_000), mimeType: 'image/png' },
        { type: 'text', text: 'x'.repeat(100) },
      ],
    };
    expect(bound(input, { ...SMALL, maxBlockBytes: 10 }).report?.omitted_paths).toEqual(['/content/0', '/content/1/text']);
  });

  // ------------------------------------------------------------------ errors and envelopes

  it('budgeter: bounds an error object and reports in its data', () => {
    const withData = bound({ code: -32000, message: 'boom', data: { list: [1, 2, 3] } }, { maxItems: 1 }, 'error');
    expect(withData.parsed).toEqual({ code: -32000, message: 'boom', data: { list: [1], [REPORT_KEY]: withData.report } });
    const noData = bound({ code: -32000, message: 'm'.repeat(100) }, { maxStringBytes: 16 }, 'error');
    expect(noData.parsed).toEqual({ code: -32000, message: 'm'.repeat(16), data: { [REPORT_KEY]: noData.report } });
  });

  // Regression (a fixed bug): of the 'error' role): when `data` is not an object, it is kept as a
  // generic value and, at the end, `reportSlot` is still undefined, so `,"data":{report}` is
  // appended: the output has the key "data" twice. Spec §2: "a non-object data gets no report".
  // Input (root 'error') {code:1,message:'m',data:[0,1,2,3,4]} with maxItems 2: expected
  // '{"code":1,"message":"m","data":[0,1]}' (one "data"); actual
  // '{"code":1,"message":"m","data":[0,1],"data":{"io.github.mcp-result-budget/budget":{…}}}',
  // which JSON.parse reads as data = the report, losing the real data. Same with a string data.
  it('budgeter: a non-object error data gets no report and no second data key', () => {
    const out = boundJson({ code: 1, message: 'm', data: [0, 1, 2, 3, 4] }, { maxItems: 2 }, 'error');
    expect(out.json).toBe('{"code":1,"message":"m","data":[0,1]}');
  });

  it('budgeter: a JSON-RPC response keeps jsonrpc and id as written and drops other envelope members', () => {
    const result = { content: [{ type: 'text', text: 'x'.repeat(100) }] };
    const { parsed, json } = bound({ id: 7, extra: true, result, jsonrpc: '2.0' }, { maxBlockBytes: 10 }, 'auto');
    expect(Object.keys(parsed)).toEqual(['id', 'result', 'jsonrpc']);
    expect(json.startsWith('{"id":7,"result":{"content":[{"type":"text","text":"xxxxxxxxxx"}')).toBe(true);
    const err = bound({ jsonrpc: '2.0', id: 'a', error: { code: 1, message: 'x'.repeat(100) } }, { maxStringBytes: 16 }, 'envelope');
    expect(err.parsed.error.message).toBe('x'.repeat(16));
    expect(err.parsed.error.data[REPORT_KEY].omitted_paths).toEqual(['/message']);
  });

  it('budgeter: rejects requests, malformed and oversized envelope members', () => {
    expect(errorCode(() => boundJson({ jsonrpc: '2.0', id: 1, method: 'tools/call', params: {} }, {}, 'auto'))).toBe('INVALID_RESULT');
    expect(errorCode(() => boundJson({ jsonrpc: '2.0', id: { a: 1 }, result: {} }, {}, 'auto'))).toBe('INVALID_ENVELOPE');
    expect(errorCode(() => boundJson({ jsonrpc: '2.0', id: 'x'.repeat(2000), result: { content: [] } }, {}, 'auto'))).toBe('INVALID_ENVELOPE');
    expect(errorCode(() => boundJson({ jsonrpc: '2.0', id: 1, result: [] }, {}, 'auto'))).toBe('INVALID_RESULT');
    expect(boundJson({ jsonrpc: '2.0', id: 'x'.repeat(1000), result: {} }, {}, 'auto').unchanged).toBe(true);
  });

  // Regression (a fixed bug): the content of a string envelope member (`jsonrpc`, a string
  // `id`) is written with `out.write` and never added to `outside`, so it is charged to the
  // result's maxResultBytes, while a numeric id (written by `scalar` with `outside`) is not.
  // Spec §4: the result "is bounded as above"; the id should not change how the result is cut.
  // Input {jsonrpc:'2.0', id:'x'.repeat(500), result:{structuredContent:{items:[300 strings]}}},
  // limits {maxItems:1000, maxOmittedPaths:0, notice:false, maxResultBytes:1024}: expected the
  // bounded result equal to bounding the bare result (984 bytes); actual 474 bytes (503 bytes of
  // `"2.0"` and the id charged to it).
  it('budgeter: string JSON-RPC members are not charged to the result', () => {
    const result = { structuredContent: { items: Array.from({ length: 300 }, (_, i) => `item number ${i}`) } };
    const limits = { maxItems: 1000, maxOmittedPaths: 0, notice: false, maxResultBytes: 1024 };
    const bare = boundJson(result, limits).json;
    const inEnvelope = boundJson({ jsonrpc: '2.0', id: 'x'.repeat(500), result }, limits, 'envelope').json;
    expect(JSON.stringify((JSON.parse(inEnvelope) as { result: unknown }).result)).toBe(bare);
  });

  // ------------------------------------------------------------------ fits, determinism, idempotence

  it('budgeter: a result within every bound comes back unchanged, byte for byte', () => {
    const input = {
      content: [{ type: 'text', text: 'é"\n😀' }, { type: 'image', data: 'AAAA', mimeType: 'image/png' }],
      structuredContent: { a: [1, 2.5, null, true], b: { c: 'd' } },
      isError: false,
      _meta: { trace: 'x' },
    };
    for (const options of [{}, SMALL]) {
      const out = boundJson(input, options);
      expect(out).toEqual({ json: JSON.stringify(input), unchanged: true, truncated: false, report: undefined });
    }
  });

  it('budgeter: deterministic for the same input and limits', () => {
    const input = { content: [{ type: 'text', text: 'x'.repeat(50_000) }], structuredContent: { rows: Array.from({ length: 1000 }, (_, i) => i) } };
    expect(boundJson(input, SMALL).json).toBe(boundJson(input, resolveLimits(SMALL)).json);
  });

  it('budgeter: idempotent when count, string and text bounds cut', () => {
    const input = {
      content: [{ type: 'text', text: 'x'.repeat(500) }, { type: 'text', text: 'y'.repeat(500) }],
      structuredContent: { list: Array.from({ length: 50 }, (_, i) => ({ id: i, s: 'z'.repeat(100) })) },
      _meta: { a: 1, b: 2, c: 3 },
      extra: 1,
    };
    const { first, second } = once(input, { maxTextBytes: 700, maxBlockBytes: 400, maxItems: 5, maxKeys: 2, maxStringBytes: 40 });
    expect(second.json).toBe(first.json);
    expect(second.report).toEqual(first.report);
  });

  // Regression (a fixed bug): pass 1 fills the content room and
  // writes the `_meta` wrapper and the notice out of the reserve. Pass 2 has to admit the `_meta`
  // object (`,"_meta":{`, 10 bytes) and the notice block (`,{"type":"text","_meta":{`) from the
  // content room before it can recognize them, and there is no room left: `_meta` is dropped as
  // result_bytes before the earlier report inside it is read, so the earlier report is lost and
  // replaced by one that only lists "/_meta". Spec §2 "Idempotence". Input (default limits):
  // {content:[{type:'text',text:'hello'}], structuredContent:{rows:100 × ('row i ' + 'x'*1000)}}.
  // Expected pass 2 === pass 1; actual pass 2 report {budget_kind:'result_bytes',
  // omitted_count:1, omitted_paths:['/_meta']} instead of the 40 omissions of pass 1.
  it('budgeter: idempotent after a result_bytes cut under the default limits', () => {
    const input = { content: [{ type: 'text', text: 'hello' }], structuredContent: { rows: Array.from({ length: 100 }, (_, i) => `row ${i} ` + 'x'.repeat(1000)) } };
    const { first, second } = once(input);
    expect(first.report?.budget_kind).toBe('result_bytes');
    expect(second.report).toEqual(first.report);
    expect(second.json).toBe(first.json);
  });

  // Regression (a fixed bug): `name.length > maxStringBytes` applies to the result's own keys).
  // maxStringBytes accepts 16, but "structuredContent" is 17 bytes, so the standard field is
  // dropped whole and reported as string_bytes. Spec §1: structuredContent is always kept (rule 4
  // bounds keys *inside* other values). Input {content:[{type:'text',text:'hi'}],
  // structuredContent:{a:1}} with maxStringBytes 16: expected unchanged; actual structuredContent
  // removed, report {budget_kind:'string_bytes', omitted_paths:['/structuredContent']}.
  it('budgeter: keeps structuredContent under the smallest maxStringBytes', () => {
    const input = { content: [{ type: 'text', text: 'hi' }], structuredContent: { a: 1 } };
    expect(boundJson(input, { maxStringBytes: 16 }).json).toBe(JSON.stringify(input));
  });

  // Regression (a fixed bug): the maxStringBytes check also applies to our own keys). The report key
  // and the notice key are 34 bytes ("io.github.mcp-result-budget/budget"). With maxStringBytes
  // from 16 to 33 a second pass drops both: the earlier notice block is no longer recognized (its
  // `_meta` key is dropped, so it stays as a plain text block and a second notice is appended) and
  // the earlier report is dropped and reported as string_bytes. Spec §2 "Idempotence". Input
  // {content:[{type:'text',text:'hello'}], structuredContent:{a:'q'.repeat(100)}}, maxStringBytes 20:
  // expected pass 2 === pass 1; actual two notice blocks and omitted_count 2 with paths
  // ['/content/1/_meta/io.github.mcp-result-budget~1notice', '/_meta/io.github.mcp-result-budget~1budget'].
  it('budgeter: idempotent when maxStringBytes is below the report key length', () => {
    const input = { content: [{ type: 'text', text: 'hello' }], structuredContent: { a: 'q'.repeat(100) } };
    const { first, second } = once(input, { maxStringBytes: 20 });
    expect(second.json).toBe(first.json);
  });

  // Regression (a fixed bug):): the early length check adds 8 bytes per array level
  // (`f.array ? 8 : f.key.length`) and gives up above 256, so a short pointer through many arrays
  // is treated as too long: not listed, and the list is capped (no later pointer is listed either).
  // Spec §2: only "a pointer longer than 256 bytes is not listed". Input structuredContent =
  // 34 nested arrays around 'y'.repeat(100), maxDepth 64, maxStringBytes 40: expected
  // omitted_paths ['/structuredContent/0/0/…/0'] (86 bytes); actual [] with omitted_paths_capped true.
  it('budgeter: lists a short pointer under deeply nested arrays', () => {
    let v: unknown = 'y'.repeat(100);
    for (let i = 0; i < 34; i++) v = [v];
    const out = boundJson({ structuredContent: { a: v } }, { maxDepth: 64, maxStringBytes: 40 });
    expect(out.report?.omitted_paths).toEqual(['/structuredContent/a' + '/0'.repeat(34)]);
  });

  // Regression (a fixed bug): of a mirrored structure): the mirror budget can be 1 byte (the cut
  // text kept only `{` and no text budget is left), but `{}` is 2: the rebuilt text goes one byte
  // over maxTextBytes (or over maxBlockBytes when that is 1). Spec §1.3: structuredContent "is
  // bounded so that its JSON, escaped as a string, also fits the block and text limits". Input
  // {content:[{type:'text',text:'x'.repeat(9)},{type:'text',text:'{"a":1}'}], structuredContent:{a:1}}
  // with maxTextBytes 10, notice off: expected total text ≤ 10; actual 11 (second text is "{}").
  it('budgeter: the rebuilt mirror text stays within maxTextBytes', () => {
    const sc = { a: 1 };
    const input = { content: [{ type: 'text', text: 'x'.repeat(9) }, { type: 'text', text: JSON.stringify(sc) }], structuredContent: sc };
    const { parsed, limits } = bound(input, { maxTextBytes: 10, notice: false });
    expect(boundViolations(parsed, limits)).toEqual([]);
  });

  // Regression (a fixed bug: only the first cut text starting with { or [ became the mirror
  // candidate). When an earlier text block that looks like JSON is cut, the real mirror later in
  // `content` is cut as plain text and never rebuilt. Spec §1.3: a cut text block that starts with
  // { or [, comes before structuredContent and is exactly its JSON is rebuilt. Input
  // {content:[{text:'{"note":"' + 'n'*100 + '"}'}, {text: JSON.stringify(sc)}], structuredContent: sc}
  // with sc = {rows:[0..59]} and maxBlockBytes 60: expected content[1].text ===
  // JSON.stringify(output.structuredContent); actual the first 60 bytes of the original JSON.
  it('budgeter: rebuilds the mirror even after another JSON-looking text block was cut', () => {
    // maxItems keeps the bounded structure small enough that its JSON fits the block again.
    const sc = { rows: Array.from({ length: 60 }, (_, i) => i) };
    const input = {
      content: [
        { type: 'text', text: JSON.stringify({ note: 'n'.repeat(100) }) },
        { type: 'text', text: JSON.stringify(sc) },
      ],
      structuredContent: sc,
    };
    const { parsed } = bound(input, { maxBlockBytes: 60, maxItems: 10 });
    expect(JSON.stringify({ note: 'n'.repeat(100) }).startsWith(parsed.content[0].text)).toBe(true);
    expect(parsed.content[1].text).toBe(JSON.stringify(parsed.structuredContent));
  });

  // Regression (a fixed bug): while a mirror is rebuilt, room() is the
  // mirror budget, so a cut inside structuredContent is recorded as result_bytes and sets
  // `exhausted`; after the structure ends every later member is dropped as result_bytes although
  // the result is far below maxResultBytes. Spec: result_bytes means "the whole result ran out of
  // room". Input {content:[{type:'text',text:JSON.stringify(sc)}], structuredContent: sc,
  // _meta:{a:1}} with sc = {items:[0..49]}, maxBlockBytes 40 (defaults otherwise, result ~0.7 KB of
  // 64 KB): expected _meta.a kept; actual _meta holds only the report and "/_meta" is listed as omitted.
  it('budgeter: a mirror rebuild does not spend the result budget', () => {
    const sc = { items: Array.from({ length: 50 }, (_, i) => i) };
    const input = { content: [{ type: 'text', text: JSON.stringify(sc) }], structuredContent: sc, _meta: { a: 1 } };
    const { parsed, report } = bound(input, { maxBlockBytes: 40, maxOmittedPaths: 100 });
    // Structure first: all 50 items are kept; their JSON and the summary exceed the block bound.
    expect(parsed.structuredContent).toEqual(sc);
    expect(parsed.content[0].text).toBe('');
    expect(report?.omitted_paths).not.toContain('/_meta');
    expect(parsed._meta.a).toBe(1);
  });

  // Regression (a fixed bug: the mirror rebuild was charged to the text total after later blocks): a cut mirror
  // is charged its cut size when it ends, later text blocks are admitted against that, and the
  // rebuild's extra size is charged only when structuredContent ends. If the rebuild uses the last
  // text bytes, a later empty text block was kept in pass 1 but is "a text block whose text budget
  // is already spent" in pass 2 and removed. Spec §2 "Idempotence" and §1.2 (greedy in document
  // order). Input {content:[{type:'text',text:JSON.stringify(sc)},{type:'text',text:''}],
  // structuredContent: sc}, sc = {a:'x"'.repeat(6)}, maxTextBytes 38, notice off: expected
  // pass 2 === pass 1; actual pass 2 removes content[1] and adds "/content/1" to the report.
  it('budgeter: idempotent when a rebuilt mirror spends the text total before a later empty block', () => {
    const sc = { a: 'x"'.repeat(6) };
    const input = { content: [{ type: 'text', text: JSON.stringify(sc) }, { type: 'text', text: '' }], structuredContent: sc };
    const { first, second } = once(input, { maxTextBytes: 38, notice: false, maxOmittedPaths: 4 });
    expect(second.json).toBe(first.json);
  });

  // ------------------------------------------------------------------ sink

  it('budgeter: a sink receives the same bytes as the returned JSON for a large result with a rebuilt mirror', () => {
    const sc = { rows: Array.from({ length: 3000 }, (_, i) => ({ id: i, v: `value ${i}` })) };
    const input = {
      content: [{ type: 'text', text: 'a'.repeat(20_000) }, { type: 'text', text: JSON.stringify(sc) }, { type: 'image', data: 'B'.repeat(30_000), mimeType: 'image/png' }],
      structuredContent: sc,
      _meta: { m: 'x'.repeat(20_000) },
      isError: false,
    };
    const options = { maxItems: 5000, maxStringBytes: 30_000 };
    const plain = boundJson(input, options);
    const chunks: string[] = [];
    const sunk = boundJson(input, options, 'result', (c) => chunks.push(c));
    expect(chunks.length).toBeGreaterThan(1);
    expect(chunks.join('')).toBe(plain.json);
    expect(sunk.report).toEqual(plain.report);
    const parsed = JSON.parse(plain.json) as Json;
    expect(isMirrorRewrite(parsed.content[1].text, parsed.structuredContent)).toBe(true);
  });
});
