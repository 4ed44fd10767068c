/**
 * The proxy against an upstream that answers with ids a client may still accept (`"7"` for 7, as
 * the SDK client reads every response id with Number()), answers twice, or answers nothing that
 * was asked; and requests whose ids are long. Every response a client could take for a
 * `tools/call` must arrive bounded; the rest must not arrive at all.
 */
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { afterEach, describe, expect, it } from 'vitest';
import { REPORT_KEY } from '../../src/engine/limits.js';
import { CLI, killAllPeers, REPO_ROOT, StdioPeer, UPSTREAM, type JsonRpcMessage } from '../helpers/stdio-peer.js';

const MAX = 16 * 1024;
/** One result under the fast path (parsed whole), one over it (streamed through the byte budget). */
const SIZES = [200 * 1024, 2 * 1024 * 1024];

afterEach(() => killAllPeers());

async function proxy(): Promise<StdioPeer> {
  const p = StdioPeer.proxy(['--max-bytes', String(MAX)]);
  await p.initialize();
  return p;
}

/** Call `reply_as` and collect every line the proxy writes until a ping sent after it is answered. */
async function replies(p: StdioPeer, id: string | number, args: Record<string, unknown>): Promise<{ raw: Buffer; msg: JsonRpcMessage }[]> {
  const from = p.lines.length;
  p.send({ jsonrpc: '2.0', id, method: 'tools/call', params: { name: 'reply_as', arguments: args } });
  // The upstream answers in order, so its answer to this ping comes after every reply above.
  // Perf: found by a byte search of the new lines only (they may hold ids of 1 MiB).
  const ping = `ping-after-${typeof id === 'string' ? id.length : id}`;
  const marker = Buffer.from(JSON.stringify(ping));
  p.send({ jsonrpc: '2.0', id: ping, method: 'ping' });
  await p.until(() => (p.lines.slice(from).some((l) => l.includes(marker)) ? true : undefined), `the answer to ${ping}`, 60_000);
  return p.lines
    .slice(from)
    .map((raw) => ({ raw, msg: JSON.parse(raw.toString('utf8')) as JsonRpcMessage }))
    .filter(({ msg }) => msg.id !== ping);
}

function expectBounded(raw: Buffer, msg: JsonRpcMessage): void {
  expect(raw.length).toBeLessThanOrEqual(MAX + 200);
  expect((msg.result?._meta as Record<string, { truncated?: boolean }> | undefined)?.[REPORT_KEY]?.truncated).toBe(true);
}

/** Response id forms a Number()-reading client matches to the request id they are written for. */
const ACCEPTED: { request: string | number; forms: string[] }[] = [
  { request: 7, forms: ['exact', 'string', 'padded', 'exp', 'hex', 'plus', 'decimal'] },
  { request: 0, forms: ['empty', 'string', 'raw:"-0"', 'raw:" "', 'raw:-0'] },
  { request: '12', forms: ['exact', 'number'] },
];

describe('proxy matching', () => {
  for (const bytes of SIZES) {
    it(`proxy-matching: every id form a client could accept is bounded (${bytes} B results)`, async () => {
      const p = await proxy();
      for (const { request, forms } of ACCEPTED) {
        for (const form of forms) {
          const got = await replies(p, request, { forms: [form], bytes });
          expect(got, `${JSON.stringify(request)} answered as ${form}`).toHaveLength(1);
          expectBounded(got[0]!.raw, got[0]!.msg);
        }
      }
      expect(p.stderrText).not.toMatch(/dropped a response/);
    }, 60_000);

    it(`proxy-matching: duplicates and unsolicited responses are dropped with a warning (${bytes} B results)`, async () => {
      const p = await proxy();
      const cases: { request: string | number; forms: string[]; kept: number }[] = [
        { request: 21, forms: ['exact', 'exact'], kept: 1 },
        { request: 22, forms: ['string', 'exact', 'padded'], kept: 1 },
        { request: 23, forms: ['other'], kept: 0 },
        { request: 24, forms: ['null'], kept: 0 },
        { request: 'abc', forms: ['other', 'raw:0', 'raw:{"a":1}', 'raw:true', 'raw:[24]', 'raw:"ABC"'], kept: 0 },
        { request: 25, forms: ['raw:"twenty-five"', 'raw:25.5', 'raw:"25x"', 'exact'], kept: 1 },
      ];
      let dropped = 0;
      for (const { request, forms, kept } of cases) {
        const got = await replies(p, request, { forms, bytes });
        expect(got, `${JSON.stringify(request)} answered as ${forms.join(', ')}`).toHaveLength(kept);
        for (const g of got) expectBounded(g.raw, g.msg);
        dropped += forms.length - kept;
      }
      await p.until(() => ((p.stderrText.match(/dropped a response/g) ?? []).length >= dropped ? true : undefined), `${dropped} warnings`);
      expect((p.stderrText.match(/dropped a response/g) ?? []).length).toBe(dropped);
    }, 60_000);
  }

  it('proxy-matching: an error naming no request (id null) passes, bounded', async () => {
    const p = await proxy();
    const got = await replies(p, 31, { forms: ['exact'], bytes: 10, errorNull: 3 * 1024 * 1024 });
    const err = got.find((g) => g.msg.id === null)!;
    expect(err.msg.error?.code).toBe(-32700);
    expect(err.raw.length).toBeLessThanOrEqual(MAX + 200);
  });

  it('proxy-matching: the SDK client takes string-form answers, and they arrive bounded', async () => {
    const transport = new StdioClientTransport({ command: process.execPath, args: [CLI, 'proxy', '--max-bytes', String(MAX), '--', process.execPath, UPSTREAM], cwd: REPO_ROOT, stderr: 'pipe' });
    const client = new Client({ name: 'matching', version: '1.0.0' });
    await client.connect(transport);
    try {
      for (const form of ['string', 'padded', 'hex', 'exp']) {
        for (const bytes of SIZES) {
          const r = await client.callTool({ name: 'reply_as', arguments: { forms: [form], bytes } }, undefined, { timeout: 20_000 });
          expect(Buffer.byteLength(JSON.stringify(r))).toBeLessThanOrEqual(MAX);
          expect((r._meta as Record<string, { truncated?: boolean }>)[REPORT_KEY]?.truncated).toBe(true);
        }
      }
    } finally {
      await client.close();
    }
  }, 60_000);
});

describe('long request ids', () => {
  const LENGTHS = [1, 1023, 1025, 4096, 64 * 1024, 1024 * 1024];
  for (const idFirst of [false, true]) {
    it(`proxy-matching: a response is bounded and answered whatever the id's length, 1 B to 1 MiB (id ${idFirst ? 'first' : 'last'})`, async () => {
      const p = await proxy();
      for (const n of LENGTHS) {
        for (const bytes of SIZES) {
          const id = 'i'.repeat(n);
          const got = await replies(p, id, { forms: ['exact'], bytes, idFirst });
          expect(got, `id of ${n} B, ${bytes} B result`).toHaveLength(1);
          expect(got[0]!.msg.id).toBe(id);
          expect(got[0]!.raw.length).toBeLessThanOrEqual(MAX + n + 200);
          expect((got[0]!.msg.result?._meta as Record<string, { truncated?: boolean }>)[REPORT_KEY]?.truncated).toBe(true);
        }
      }
      // Numeric ids of every length JSON allows, written back as the server wrote them.
      for (const id of [1, 12345678901234, -5, 2 ** 53]) {
        const got = await replies(p, id, { forms: ['exact'], bytes: SIZES[1], idFirst });
        expect(got.map((g) => g.msg.id)).toEqual([id]);
      }
    }, 120_000);
  }
});

describe('oversized client messages', () => {
  const CAP = 2048;
  const nested = `{"id":"nested","list":[{"id":1},"\\"id\\":2"],"s":"${'p'.repeat(CAP)}"}`;
  /** Where the top-level id hides in a refused line, and the id the refusal must carry. */
  const LINES: [string, string | number | null][] = [
    [`{"jsonrpc":"2.0","id":41,"method":"tools/call","params":{"name":"small","arguments":${nested}}}`, 41],
    [`{"jsonrpc":"2.0","method":"tools/call","params":{"name":"small","arguments":${nested}},"id":"last"}`, 'last'],
    [`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":${nested},"id":"dup-wins"}`, 'dup-wins'],
    [`{"jsonrpc":"2.0","\\u0069d":"escaped","method":"tools/call","params":${nested}}`, 'escaped'],
    [`{"jsonrpc":"2.0","id":{"x":1},"method":"tools/call","params":${nested}}`, null],
    [`[{"jsonrpc":"2.0","id":42,"method":"tools/call","params":${nested}}]`, null],
  ];

  it('proxy-matching: a refused message is answered under its top-level id, never a nested one', async () => {
    const p = StdioPeer.proxy(['--max-request-bytes', String(CAP)]);
    await p.initialize();
    for (const [line, id] of LINES) {
      const from = p.lines.length;
      p.send(line);
      await p.request(`after-${String(id)}`, 'ping');
      const got = p.lines.slice(from).map((l) => JSON.parse(l.toString('utf8')) as JsonRpcMessage).filter((m) => m.id !== `after-${String(id)}`);
      expect(got, line.slice(0, 60)).toMatchObject([{ id, error: { code: -32600 } }]);
    }
    // Nothing refused reached the server: it saw none of these ids.
    expect(p.lines.some((l) => /"nested"/.test(l.toString()))).toBe(false);
  });

  it("proxy-matching: an oversized client response to a server request is refused toward the server, which is not left waiting", async () => {
    const p = StdioPeer.proxy(['--max-request-bytes', String(CAP)]);
    await p.initialize();
    p.send({ jsonrpc: '2.0', id: 'ask', method: 'tools/call', params: { name: 'ask_client', arguments: {} } });
    const { msg } = await p.takeLine((m) => m.method === 'roots/list', 'the server request');
    p.send({ jsonrpc: '2.0', id: msg.id, result: { roots: [{ uri: `file:///${'r'.repeat(CAP)}` }] } });
    const answer = await p.response('ask');
    const text = (answer.msg.result!.content as { text: string }[])[0]!.text;
    expect(JSON.parse(text)).toMatchObject({ id: msg.id, error: { code: -32600 } });
    await p.stderrMatches(/dropped a client message of \d+ bytes .*: a response, which gets no answer/);
  });
});
