/**
 * Receipts of typed mutations whose results stream through the proxy's byte budget (lines over
 * the fast path): the receipt is taken from the original structure's members captured while the
 * line streamed, so every identifier is in it wherever it came in `structuredContent` and wherever
 * the envelope's id came. First `ReceiptCapture` against `receiptOf` of the parsed line on fuzzed
 * lines in any chunking, then the real proxy process against test/fixtures/receipt-upstream.mjs.
 */
import { createHash } from 'node:crypto';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { REPORT_KEY } from '../../src/engine/index.js';
import { MAX_MEMBERS, ReceiptCapture } from '../../src/transport/core/receipt-capture.js';
import { MAX_RECEIPT_KEY, MAX_RECEIPT_STRING, receiptOf } from '../../src/transport/core/typed-results.js';
import { StdioPeer } from '../helpers/stdio-peer.js';
import { prng } from '../helpers/prng.js';

const RECEIPTS = fileURLToPath(new URL('../fixtures/receipt-upstream.mjs', import.meta.url));
const DEFAULT_MAX = 64 * 1024;

// ------------------------------------------------------------------ the capture alone

/** A JSON string for `s`, some of its characters written as `\uXXXX` escapes. */
function jsonString(s: string, rnd: () => number): string {
  const plain = JSON.stringify(s);
  if (rnd() < 0.7) return plain;
  return '"' + [...s].map((ch) => (ch.length === 1 && rnd() < 0.3 ? `\\u${ch.charCodeAt(0).toString(16).padStart(4, '0')}` : JSON.stringify(ch).slice(1, -1))).join('') + '"';
}

const KEYS = ['id', 'path', 'commit', 'count', '0', '7', '12', 'é', 'k"q', 'a\\b', '__proto__', 'x'.repeat(64), 'L'.repeat(65), 'L'.repeat(400)];

function value(rnd: () => number): string {
  const pick = Math.floor(rnd() * 13);
  switch (pick) {
    case 0: return jsonString(`v${Math.floor(rnd() * 1000)}`, rnd);
    case 1: return jsonString('s'.repeat(200), rnd);
    case 2: return jsonString('s'.repeat(201), rnd);
    case 3: return jsonString('é"\\\n\u{1F600}'.repeat(20 + Math.floor(rnd() * 30)), rnd);
    case 4: return ['0', '-0', '12.5e3', '1e400', '-7', '3.25E-2'][Math.floor(rnd() * 6)]!;
    case 5: return rnd() < 0.5 ? 'true' : 'false';
    case 6: return 'null';
    case 7: return '{"id":"nested","a":[1,{"b":"}"}]}';
    case 8: return '["]", "{", {"x": null}]';
    case 9: return jsonString('}{"], ' + 'w'.repeat(Math.floor(rnd() * 3000)), rnd);
    case 10: return '[' + Array.from({ length: 50 }, (_, i) => `"item ${i}"`).join(',') + ']';
    case 11: return '{}';
    default: return jsonString('', rnd);
  }
}

const ws = (rnd: () => number): string => (rnd() < 0.2 ? ' \n\t'.slice(0, 1 + Math.floor(rnd() * 3)) : '');

/**
 * A key over `MAX_RECEIPT_KEY`, distinct for each `i`: mostly 65 to 96 characters, sometimes up to
 * 500 (over the raw bytes a key is read from).
 */
const longKey = (i: number, rnd: () => number): string => `L${i}-`.padEnd(65 + Math.floor(rnd() * (rnd() < 0.05 ? 436 : 32)), 'L');

function structureText(rnd: () => number): string {
  if (rnd() < 0.05) return value(rnd);
  // Sometimes hundreds of members, most of them distinct long keys (more than the places held).
  const many = rnd() < 0.2;
  const n = Math.floor(rnd() * (many ? 400 : 24));
  const members: string[] = [];
  for (let i = 0; i < n; i++) {
    const r = rnd();
    const key =
      many && r < 0.7 ? longKey(i, rnd)
      : many && r < 0.75 ? String(Math.floor(rnd() * 20))
      : rnd() < 0.5 ? KEYS[Math.floor(rnd() * KEYS.length)]!
      : `k${Math.floor(rnd() * 30)}`;
    members.push(`${ws(rnd)}${jsonString(key, rnd)}${ws(rnd)}:${ws(rnd)}${value(rnd)}${ws(rnd)}`);
  }
  return `{${members.join(',')}}`;
}

/** A response line: the envelope's members in any order, sometimes a repeated result or structure. */
function line(rnd: () => number): string {
  const result = (): string => {
    const parts = ['"content":[{"type":"text","text":"{\\"id\\":\\"not this\\"}"}]', `"structuredContent":${structureText(rnd)}`, '"_meta":{"id":"nor this"}'];
    if (rnd() < 0.1) parts.push(`"structuredContent":${structureText(rnd)}`);
    if (rnd() < 0.1) parts.shift();
    return `{${parts.sort(() => rnd() - 0.5).join(',')}}`;
  };
  const top = ['"jsonrpc":"2.0"', `"id":${rnd() < 0.5 ? 7 : '"req-7"'}`, `"result":${result()}`];
  if (rnd() < 0.1) top.push(`"result":${result()}`);
  if (rnd() < 0.05) top.push('"result":"not an object"');
  return `{${ws(rnd)}${top.sort(() => rnd() - 0.5).join(',')}${ws(rnd)}}`;
}

describe('ReceiptCapture', () => {
  it('keeps what receiptOf keeps from the parsed line, in the same order, in any chunking (fuzzed)', () => {
    for (let seed = 1; seed <= 600; seed++) {
      const rnd = prng(seed);
      const text = line(rnd);
      const bytes = Buffer.from(text);
      const parsed = JSON.parse(text) as { result?: { structuredContent?: unknown } };
      const want = Object.entries(receiptOf(parsed.result?.structuredContent));
      const capture = new ReceiptCapture();
      const pieceMax = rnd() < 0.3 ? 1 : 1 + Math.floor(rnd() * 64);
      for (let at = 0; at < bytes.length; ) {
        const next = Math.min(bytes.length, at + 1 + Math.floor(rnd() * pieceMax));
        capture.push(bytes.subarray(at, next));
        at = next;
      }
      const got = capture.structure();
      expect(got, `seed ${seed}: ${text.slice(0, 300)}`).not.toBeUndefined();
      expect(Object.entries(receiptOf(got)), `seed ${seed}: ${text.slice(0, 300)}`).toEqual(want);
    }
  });

  it('holds a bounded state whatever the keys: a million distinct long keys in chunks', () => {
    const capture = new ReceiptCapture();
    capture.push(Buffer.from('{"jsonrpc":"2.0","result":{"content":[],"structuredContent":{"id":"op-1",'));
    const rnd = prng(7);
    let most = 0;
    const keys = 1_000_000;
    for (let i = 0; i < keys; i += 10_000) {
      let text = '';
      for (let j = i; j < i + 10_000; j++) {
        // Plain or escaped, within and over the raw bytes a key is read from, with containers and
        // scalars as values; short and index keys between them.
        const key = j % 16 === 0 ? jsonString(longKey(j, rnd), rnd) : `"${longKey(j, rnd)}"`;
        text += `${key}:${j % 3 === 0 ? '[]' : j % 3 === 1 ? `"v${j}"` : String(j)},`;
        if (j % 1000 === 0) text += `"s${j}":${j},"${j}":{},`;
      }
      const bytes = Buffer.from(text);
      // Odd chunk sizes: keys and values cut anywhere.
      for (let at = 0; at < bytes.length; at += 65_521) capture.push(bytes.subarray(at, at + 65_521));
      const held = capture.held();
      most = Math.max(most, held.members);
      expect(held.members).toBeLessThanOrEqual(MAX_MEMBERS);
      expect(held.chars).toBeLessThanOrEqual(MAX_MEMBERS * (MAX_RECEIPT_KEY + MAX_RECEIPT_STRING));
    }
    capture.push(Buffer.from('"n":3}},"id":1}'));
    // `id` first, LONG_KEY in place of a million keys, then index keys (JSON.parse orders them first).
    expect(most).toBeLessThan(MAX_MEMBERS);
    const got = capture.structure() as Record<string, unknown>;
    expect(Object.keys(got).length).toBeLessThan(MAX_MEMBERS);
    expect(receiptOf(got)).toEqual({ id: 'op-1' });
  }, 60_000);

  it('holds only the receipt candidates: a 20 MB member is passed over, not held', () => {
    const capture = new ReceiptCapture();
    capture.push(Buffer.from('{"result":{"structuredContent":{"log":"'));
    const piece = Buffer.alloc(1 << 20, 0x77);
    for (let i = 0; i < 20; i++) capture.push(piece);
    capture.push(Buffer.from('","id":"op-1","n":3}},"id":1}'));
    expect(capture.structure()).toEqual({ log: {}, id: 'op-1', n: 3 });
  });
});

// ------------------------------------------------------------------ through the proxy process

/** The receipt the fixture's identifiers make (see `identifiers` in the fixture). */
function expectedReceipt(token: string): Record<string, unknown> {
  return {
    id: `op-${token}`,
    path: `reports/${token}/naïve "quoted" \\ tab\t.csv`,
    commit: createHash('sha1').update(token).digest('hex'),
    count: 1000,
    dryRun: false,
    parent: null,
  };
}

interface ToolResult {
  isError?: boolean;
  structuredContent?: unknown;
  content?: { type: string; text?: string }[];
  _meta?: Record<string, Record<string, unknown>>;
}

describe('proxy: typed results streamed through the budget: whole receipts, required members after a list', () => {
  let p: StdioPeer;
  beforeAll(async () => {
    p = StdioPeer.proxy([], {}, [process.execPath, RECEIPTS]);
    await p.initialize('2025-06-18', true);
  });
  afterAll(async () => {
    await p.kill();
  });

  it.each([1.5, 3, 20])('%s MB: identifiers first, in the middle and last; the envelope id first and last', async (mb) => {
    for (const at of ['first', 'middle', 'last']) {
      for (const idFirst of [true, false]) {
        const token = `${mb}-${at}-${idFirst ? 'idfirst' : 'idlast'}`;
        const { msg } = await p.callTool(`w-${token}`, 'receipt_write', { mb, at, idFirst, token }, 60_000);
        const r = msg.result as ToolResult;
        const report = r._meta?.[REPORT_KEY];
        expect(r.isError, token).toBe(true);
        expect(r.structuredContent, token).toBeUndefined();
        expect(report?.error, token).toBe('result_budget_exceeded');
        expect(report?.applied, token).toBe(true);
        expect(report?.receipt, token).toEqual(expectedReceipt(token));
        expect(r.content?.[0]?.text, token).toMatch(/Do not call it again/);
        expect(Buffer.byteLength(JSON.stringify(r)), token).toBeLessThanOrEqual(DEFAULT_MAX);
      }
    }
  }, 120_000);

  it('a read-only typed tool in the same run gets guidance, not a receipt, also while a mutation is pending', async () => {
    // Both pending at once: the read's line streams with the capture on (a mutation is pending).
    p.send({ jsonrpc: '2.0', id: 'read-1', method: 'tools/call', params: { name: 'receipt_read', arguments: { mb: 3, at: 'last', token: 'r' } } });
    p.send({ jsonrpc: '2.0', id: 'write-1', method: 'tools/call', params: { name: 'receipt_write', arguments: { mb: 3, at: 'middle', token: 'w' } } });
    const [read, write] = await Promise.all([p.response('read-1', 60_000), p.response('write-1', 60_000)]);
    const r = read.msg.result as ToolResult;
    const report = r._meta?.[REPORT_KEY];
    expect(r.isError).toBe(true);
    expect(report?.error).toBe('result_budget_exceeded');
    expect(report?.applied).toBeUndefined();
    expect(report?.receipt).toBeUndefined();
    // The narrowing arguments, and a handle to read what was cut (the line was kept as it streamed).
    expect(report?.continuation).toMatchObject({ narrow_with: ['limit'], tool: 'mcp_result_budget__read', handle: expect.stringMatching(/^[\w-]{22}$/) });
    expect(r.content?.[0]?.text).toMatch(/Call `receipt_read` again asking for less, using `limit`/);
    expect(Buffer.byteLength(JSON.stringify(r))).toBeLessThanOrEqual(DEFAULT_MAX);
    expect((write.msg.result as ToolResult)._meta?.[REPORT_KEY]?.receipt).toEqual(expectedReceipt('w'));
  }, 60_000);

  // A typed page streamed through the budget keeps its required members written after the list.
  it.each([
    ['last', 1.5],
    ['last', 8],
    ['first', 3],
  ])('required members %s, %s MB: a typed success with whole items, the members, within the budget', async (at, mb) => {
    const { msg } = await p.callTool(`list-${at}-${mb}`, 'typed_list', { mb, at }, 60_000);
    const r = msg.result as ToolResult;
    expect(r.isError).toBeUndefined();
    const sc = r.structuredContent as { entries: { name: string; size: number }[]; total: number; next_cursor: string };
    expect(sc.total).toBe(Math.ceil((mb * 1024 * 1024) / 550));
    expect(sc.next_cursor).toBe(`c-${'q'.repeat(80)}`);
    expect(sc.entries.length).toBeGreaterThan(10);
    sc.entries.forEach((e, i) => expect(e).toMatchObject({ name: `file-${i}.txt`, size: i }));
    expect(r._meta?.[REPORT_KEY]?.truncated).toBe(true);
    expect(Buffer.byteLength(JSON.stringify(r))).toBeLessThanOrEqual(DEFAULT_MAX);
  }, 60_000);
});
