/**
 * The proxy against an upstream whose lines repeat a top-level member (`result`, `id`, `jsonrpc`,
 * `method`, `error`), on the fast path (parsed whole) and streamed (over the fast path). Parsers
 * disagree on which repeat counts (`JSON.parse` takes the last, others the first), so such a line
 * is never passed: every pending request its first or last id names is answered with -32603, and
 * nothing over the budget reaches the client. A repeat nested inside `result` is not the proxy's to
 * refuse: the line passes.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { INTERNAL_ERROR } from '../../src/transport/core/jsonrpc-errors.js';
import { killAllPeers, StdioPeer, type JsonRpcMessage } from '../helpers/stdio-peer.js';

afterEach(() => killAllPeers());

const MAX = 16 * 1024;
/** A line under the fast path (parsed whole) and one over it (streamed through the byte budget). */
const SIZES = [200 * 1024, 2 * 1024 * 1024];

/**
 * An upstream whose `tools/call` writes the lines it is given (`__ID__`: the request's id as JSON,
 * `__OTHER__`: `other` as JSON, `__PAD__`: `pad` bytes of text), then a small answer under the
 * request's id, which answers the call only when the proxy rightly dropped a crafted line that
 * named no pending request.
 */
const CRAFTER = `
const out = process.stdout;
const write = (s) => (out.write(s) ? Promise.resolve() : new Promise((r) => out.once('drain', r)));
let chain = Promise.resolve();
require('node:readline').createInterface({ input: process.stdin }).on('line', (line) => {
  const m = JSON.parse(line);
  if (m.id === undefined || m.method === undefined) return;
  chain = chain.then(async () => {
    if (m.method !== 'tools/call') return write(JSON.stringify({ jsonrpc: '2.0', id: m.id, result: {} }) + '\\n');
    const a = m.params.arguments;
    for (const l of a.lines) {
      await write(l.replaceAll('__ID__', JSON.stringify(m.id)).replaceAll('__OTHER__', JSON.stringify(a.other ?? null)).replace('__PAD__', 'p'.repeat(a.pad ?? 0)) + '\\n');
    }
    await write(JSON.stringify({ jsonrpc: '2.0', id: m.id, result: { content: [{ type: 'text', text: 'fallback' }] } }) + '\\n');
  });
});
process.stdin.on('end', () => chain.then(() => process.exit(0)));
`;

const BIG = '{"content":[{"type":"text","text":"__PAD__"}]}';
const SMALL = '{"content":[{"type":"text","text":"small"}]}';

async function proxy(): Promise<StdioPeer> {
  const p = StdioPeer.proxy(['--max-bytes', String(MAX)], {}, [process.execPath, '-e', CRAFTER]);
  await p.initialize();
  return p;
}

/** Send `requests` at once, then collect every line until a ping sent after them is answered. */
async function exchange(p: StdioPeer, requests: JsonRpcMessage[]): Promise<{ raw: Buffer; msg: JsonRpcMessage }[]> {
  const from = p.lines.length;
  for (const r of requests) p.send(r);
  const marker = `after-${from}`;
  p.send({ jsonrpc: '2.0', id: marker, method: 'ping' });
  const quoted = Buffer.from(JSON.stringify(marker));
  await p.until(() => (p.lines.slice(from).some((l) => l.includes(quoted)) ? true : undefined), `the answer to ${marker}`, 60_000);
  return p.lines
    .slice(from)
    .map((raw) => ({ raw, msg: JSON.parse(raw.toString('utf8')) as JsonRpcMessage }))
    .filter(({ msg }) => msg.id !== marker);
}

function call(id: number, lines: string[], pad: number, other?: number): JsonRpcMessage {
  return { jsonrpc: '2.0', id, method: 'tools/call', params: { name: 'craft', arguments: { lines, pad, ...(other === undefined ? {} : { other }) } } };
}

function expectRefused(got: { raw: Buffer; msg: JsonRpcMessage }[], id: number, member: string): void {
  const answers = got.filter(({ msg }) => msg.id === id);
  expect(answers, `answers to ${id}`).toHaveLength(1);
  expect(answers[0]!.msg.error?.code).toBe(INTERNAL_ERROR);
  expect(answers[0]!.msg.error?.message).toContain(`repeats the top-level member \`${member}\``);
}

describe('proxy: repeated top-level members', () => {
  for (const size of SIZES) {
    it(`proxy-repeats: a repeated result, jsonrpc or error is refused under its id, never passed (${size} B lines)`, async () => {
      const p = await proxy();
      const cases: [string, string][] = [
        ['result', `{"jsonrpc":"2.0","id":__ID__,"result":${BIG},"result":${SMALL}}`],
        ['result', `{"jsonrpc":"2.0","result":${SMALL},"id":__ID__,"result":${BIG}}`],
        ['result', `{"jsonrpc":"2.0","id":__ID__,"result":${BIG},"r\\u0065sult":${SMALL}}`],
        ['jsonrpc', `{"jsonrpc":"2.0","id":__ID__,"result":${BIG},"jsonrpc":"2.0"}`],
        ['error', `{"jsonrpc":"2.0","id":__ID__,"error":{"code":1,"message":"__PAD__"},"error":{"code":2,"message":"m"}}`],
      ];
      let id = 100;
      for (const [member, line] of cases) {
        const got = await exchange(p, [call(++id, [line], size)]);
        for (const { raw } of got) expect(raw.length).toBeLessThanOrEqual(MAX + 1024);
        expectRefused(got, id, member);
        expect(got, line).toHaveLength(1);
      }
      await expect(p.stderrMatches(/answered request 105 with an error: .*repeats the top-level member `error`/)).resolves.toBe(true);
    }, 120_000);

    it(`proxy-repeats: a repeated id answers both pending requests it names with an error (${size} B lines)`, async () => {
      const p = await proxy();
      // The ping is pending when the crafted line names it: a client that takes the first id reads
      // the call's big result, one that takes the last reads an answer to the ping.
      const line = `{"jsonrpc":"2.0","id":__ID__,"result":${BIG},"id":__OTHER__}`;
      const got = await exchange(p, [call(7, [line], size, 8), { jsonrpc: '2.0', id: 8, method: 'ping' }]);
      for (const { raw } of got) expect(raw.length).toBeLessThanOrEqual(MAX + 1024);
      expectRefused(got, 7, 'id');
      expectRefused(got, 8, 'id');
      expect(got).toHaveLength(2);
    }, 60_000);

    it(`proxy-repeats: a server notification repeating its method is dropped, not passed (${size} B lines)`, async () => {
      const p = await proxy();
      const line = '{"jsonrpc":"2.0","method":"notifications/message","params":{"level":"info","data":"__PAD__"},"method":"notifications/progress"}';
      const got = await exchange(p, [call(9, [line], size)]);
      expect(got.map(({ msg }) => msg.method)).toEqual([undefined]);
      expect(got[0]!.msg.result?.content).toEqual([{ type: 'text', text: 'fallback' }]);
      await expect(p.stderrMatches(/repeats the top-level member `method`/)).resolves.toBe(true);
    }, 60_000);
  }

  it('proxy-repeats: a repeat nested inside result is not refused (a fitting line passes byte for byte)', async () => {
    const p = await proxy();
    const line = '{"jsonrpc":"2.0","id":__ID__,"result":{"content":[],"content":[{"type":"text","text":"last"}],"isError":false}}';
    const got = await exchange(p, [call(11, [line], 0)]);
    expect(got).toHaveLength(1);
    expect(got[0]!.raw.toString('utf8')).toBe(line.replace('__ID__', '11'));
  }, 60_000);
});
