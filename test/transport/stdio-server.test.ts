/**
 * `mcp-budget serve`'s stdio transport against a hostile client, over real processes: malformed
 * lines of every class, oversized lines (the top-level id read while the line streams past),
 * a flood of requests whose answers are never read, a closed stdout and an early end of stdin.
 */
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { ensureBuilt } from '../helpers/cli.js';
import { tempTree } from '../helpers/fs-tree.js';
import { killAllPeers, StdioPeer, type JsonRpcMessage } from '../helpers/stdio-peer.js';

let tree: ReturnType<typeof tempTree>;

beforeAll(() => {
  ensureBuilt();
  tree = tempTree('stdio-server');
  for (const n of ['a.txt', 'b.txt', 'c.txt']) writeFileSync(join(tree.dir, n), n);
});
afterEach(() => killAllPeers());
afterAll(() => tree?.remove());

/** Every line read since `from`, parsed. */
function linesFrom(peer: StdioPeer, from: number): JsonRpcMessage[] {
  return peer.lines.slice(from).map((l) => JSON.parse(l.toString('utf8')) as JsonRpcMessage);
}

/**
 * Send `line` then a ping, wait for the ping's answer, and return what came before it. The
 * server answers a malformed line at once, and a ping only after a turn of the event loop.
 */
async function around(peer: StdioPeer, line: string | Buffer, tag: string): Promise<JsonRpcMessage[]> {
  const from = peer.lines.length;
  peer.send(line);
  await peer.request(`after-${tag}`, 'ping');
  return linesFrom(peer, from).filter((m) => m.id !== `after-${tag}`);
}

const PARSE_ERRORS = [
  'garbage', '{', '{"jsonrpc":"2.0","id":1,"method":"ping"', "{'id':1}", 'NaN', '{"id":1,,"method":"ping"}',
  '{"id":1}{"id":2}', '{"jsonrpc":"2.0","id":1,"method":"ping"} x', 'nul', '"unterminated',
];
/** Invalid requests whose id can be read: the answer carries it. */
const INVALID_WITH_ID: [string, string | number][] = [
  ['{"jsonrpc":"2.0","id":"s1","method":"ping","extra":1}', 's1'],
  ['{"jsonrpc":"1.0","id":2,"method":"ping"}', 2],
  ['{"id":3,"method":"ping"}', 3],
  ['{"jsonrpc":"2.0","id":4,"method":7}', 4],
  ['{"jsonrpc":"2.0","id":"five","method":"ping","params":"not an object"}', 'five'],
  ['{"jsonrpc":"2.0","id":0}', 0],
];
/** Invalid requests with no usable id: answered with `id: null`. */
const INVALID_NULL_ID = [
  '{"jsonrpc":"2.0","id":null,"method":"ping"}', '{"jsonrpc":"2.0","id":1.5,"method":"ping"}',
  '{"jsonrpc":"2.0","id":{},"method":"ping"}', '{"jsonrpc":"2.0","id":[1],"method":"ping"}',
  '{"jsonrpc":"2.0","id":true,"method":"ping"}', '1', '"ping"', 'true', 'null', '{}', '{"jsonrpc":"2.0"}',
];
const BATCHES = ['[]', '[{"jsonrpc":"2.0","id":1,"method":"ping"}]', '[1,2,3]', '[{"jsonrpc":"2.0","method":"notifications/initialized"}]'];
/** Malformed notifications and responses: never answered, reported on stderr. */
const UNANSWERED = [
  '{"jsonrpc":"2.0","method":5}', '{"jsonrpc":"1.0","method":"notifications/x"}', '{"jsonrpc":"2.0","method":"x","params":"s"}',
  '{"method":"notifications/initialized","extra":true}', '{"jsonrpc":"2.0","id":9,"result":{},"extra":1}', '{"jsonrpc":"2.0","id":9,"error":"bad"}',
];

describe('malformed lines', () => {
  for (const version of ['2025-03-26', '2025-06-18']) {
    it(`stdio-server: every malformed class is answered as JSON-RPC says, and the next call still works (protocol ${version})`, async () => {
      const peer = StdioPeer.serve(tree.dir);
      await peer.initialize(version);
      let n = 0;
      for (const line of PARSE_ERRORS) {
        const got = await around(peer, line, `p${n++}`);
        expect(got, line).toMatchObject([{ id: null, error: { code: -32700 } }]);
      }
      for (const [line, id] of INVALID_WITH_ID) {
        expect(await around(peer, line, `i${n++}`), line).toMatchObject([{ id, error: { code: -32600 } }]);
      }
      for (const line of INVALID_NULL_ID) {
        expect(await around(peer, line, `n${n++}`), line).toMatchObject([{ id: null, error: { code: -32600 } }]);
      }
      for (const line of BATCHES) {
        const got = await around(peer, line, `b${n++}`);
        expect(got, line).toMatchObject([{ id: null, error: { code: -32600 } }]);
        expect(got[0]!.error!.message).toContain(version);
      }
      const warned = peer.stderrText.length;
      for (const line of UNANSWERED) expect(await around(peer, line, `u${n++}`), line).toEqual([]);
      // stderr is another pipe: its lines may arrive after the answers on stdout.
      const warningsNow = (): string[] => peer.stderrText.slice(warned).trim().split('\n').filter((l) => l !== '');
      await peer.until(() => (warningsNow().length >= UNANSWERED.length ? true : undefined), 'the warnings');
      const warnings = warningsNow();
      expect(warnings).toHaveLength(UNANSWERED.length);
      for (const w of warnings) expect(w).toMatch(/^mcp-budget serve: ignored a malformed (notification|response)/);
      // Invalid UTF-8 inside a string is replaced, not fatal.
      const bad = Buffer.concat([Buffer.from('{"jsonrpc":"2.0","id":"utf","method":"ping","params":{"x":"'), Buffer.from([0xff, 0xc3]), Buffer.from('"}}')]);
      expect(await around(peer, bad, 'utf8')).toMatchObject([{ id: 'utf', result: {} }]);
      peer.endInput();
      expect(await peer.waitExit()).toEqual({ code: 0, signal: null });
    }, 60_000);
  }
});

const CAP = 4096;

/** Oversized lines: where the top-level id hides, and what the answer must carry. */
function oversized(): { line: string; id: string | number | null | 'none' }[] {
  const pad = (n: number) => 'p'.repeat(n);
  const nested = `{"id":"nested","list":[{"id":1},"\\"id\\":2"],"s":"${pad(CAP)}"}`;
  return [
    { line: `{"jsonrpc":"2.0","id":101,"method":"tools/call","params":{"name":"x","arguments":${nested}}}`, id: 101 },
    { line: `{"jsonrpc":"2.0","method":"tools/call","params":{"name":"x","arguments":${nested}},"id":"last"}`, id: 'last' },
    { line: `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":${nested},"id":"dup-wins"}`, id: 'dup-wins' },
    { line: `{"jsonrpc":"2.0","\\u0069d":"escaped-key","method":"m","params":${nested}}`, id: 'escaped-key' },
    { line: `{"jsonrpc":"2.0","id":"${'i'.repeat(CAP * 2)}","method":"m"}`, id: 'i'.repeat(CAP * 2) },
    { line: `{"jsonrpc":"2.0","id":null,"method":"m","params":${nested}}`, id: null },
    { line: `{"jsonrpc":"2.0","id":{"a":1},"method":"m","params":${nested}}`, id: null },
    { line: `{"jsonrpc":"2.0","method":"m","params":${nested}`, id: 'none' }, // cut short, no id: a notification
    { line: `[{"jsonrpc":"2.0","id":7,"method":"m","params":${nested}}]`, id: null },
    { line: `not json ${pad(CAP)}`, id: null },
    { line: `{"jsonrpc":"2.0","method":"notifications/x","params":${nested}}`, id: 'none' },
    { line: `{"jsonrpc":"2.0","id":5,"result":${nested}}`, id: 'none' },
  ];
}

describe('oversized lines', () => {
  it('stdio-server: a line over the cap is answered under its top-level id (never a nested one), or null', async () => {
    const peer = StdioPeer.serveWith(tree.dir, { maxRequestBytes: CAP });
    await peer.initialize();
    let n = 0;
    for (const { line, id } of oversized()) {
      expect(Buffer.byteLength(line)).toBeGreaterThan(CAP);
      const got = await around(peer, line, `o${n++}`);
      if (id === 'none') expect(got, line.slice(0, 80)).toEqual([]);
      else expect(got, line.slice(0, 80)).toMatchObject([{ id, error: { code: -32600 } }]);
    }
    await peer.stderrMatches(/ignored a notification of \d+ bytes/);
    await peer.stderrMatches(/ignored a response of \d+ bytes/);
    peer.endInput();
    expect(await peer.waitExit()).toEqual({ code: 0, signal: null });
  }, 60_000);

  it('stdio-server: a 256 MiB line is never held (peak RSS stays flat) and an id over 1 MiB is answered with null', async () => {
    const peer = StdioPeer.serveWith(tree.dir, { maxRequestBytes: CAP });
    await peer.initialize();
    // The bound is against the server's own peak once it is running (about 85 MiB, and it grows
    // with what the server loads): holding the line would add 256 MiB, streaming past it adds little.
    const started = peakRssMiB(peer.pid);
    const piece = Buffer.alloc(1 << 20, 'q');
    peer.send('{"jsonrpc":"2.0","id":"huge","method":"tools/call","params":{"s":"', false);
    for (let i = 0; i < 256; i++) peer.send(piece, false);
    peer.send('"}}');
    expect((await peer.response('huge')).msg.error).toMatchObject({ code: -32600 });
    peer.send(`{"jsonrpc":"2.0","id":"${'L'.repeat((1 << 20) + 1)}","method":"m"}`);
    expect((await peer.response(null)).msg.error).toMatchObject({ code: -32600 });
    const hwm = peakRssMiB(peer.pid);
    expect(hwm - started, `peak ${hwm} MiB, ${started} MiB once started`).toBeLessThan(64);
    await peer.request('still-alive', 'ping');
    peer.endInput();
    await peer.waitExit();
  }, 60_000);

  it('stdio-server: the default cap refuses a 65 MiB line and accepts the largest valid seed batch, escaped 6x (48 MiB)', async () => {
    const root = tempTree('seed-max');
    try {
      const peer = StdioPeer.serve(root.dir);
      await peer.initialize();
      const huge = { jsonrpc: '2.0', id: 'too-big', method: 'tools/call', params: { name: 'workspace_list_dir', arguments: { path: '.', pad: 'x'.repeat(65 * 1024 * 1024) } } };
      peer.send(JSON.stringify(huge));
      expect((await peer.response('too-big', 30_000)).msg.error).toMatchObject({ code: -32600 });
      // 8 files of 1 MiB of U+0001: JSON.stringify writes each byte as \u0001.
      const files = Array.from({ length: 8 }, (_, i) => ({ path: `f${i}.bin`, content: '\u0001'.repeat(1024 * 1024) }));
      const line = JSON.stringify({ jsonrpc: '2.0', id: 'seed', method: 'tools/call', params: { name: 'workspace_seed_files', arguments: { files } } });
      expect(Buffer.byteLength(line)).toBeGreaterThan(48 * 1024 * 1024);
      peer.send(line);
      const { msg } = await peer.response('seed', 60_000);
      expect(msg.result?.isError).not.toBe(true);
      expect(readFileSync(join(root.dir, 'f7.bin')).length).toBe(1024 * 1024);
      peer.endInput();
      expect(await peer.waitExit()).toEqual({ code: 0, signal: null });
    } finally {
      root.remove();
    }
  }, 120_000);
});

/** Peak resident set of a live process, in MiB (VmHWM). */
function peakRssMiB(pid: number): number {
  const m = /VmHWM:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'));
  return Number(m![1]) / 1024;
}

describe('flow control', () => {
  it('stdio-server: 10k calls written while stdout is not read keep serve under 200 MB, then all are answered', async () => {
    const peer = StdioPeer.serve(tree.dir);
    await peer.initialize();
    const N = 10_000;
    // Stop reading the answers: the pipe fills and serve must stop reading requests.
    peer.child.stdout.pause();
    const call = (i: number) => JSON.stringify({ jsonrpc: '2.0', id: i, method: 'tools/call', params: { name: 'workspace_list_dir', arguments: { path: '.' } } });
    const lines: string[] = [];
    for (let i = 0; i < N; i++) lines.push(call(i));
    peer.child.stdin.write(lines.join('\n') + '\n');
    // Wait until serve stops taking input (what is left stays in our buffer).
    let before = -1;
    for (;;) {
      await new Promise((r) => setTimeout(r, 300));
      const left = peer.child.stdin.writableLength;
      if (left === before && left > 0) break;
      before = left;
    }
    const hwm = peakRssMiB(peer.pid);
    expect(hwm).toBeLessThan(200);
    const from = peer.lines.length;
    peer.child.stdout.resume();
    await peer.until(() => (peer.lines.length - from >= N ? true : undefined), `${N} answers`, 60_000);
    const ids = new Set(linesFrom(peer, from).map((m) => m.id));
    expect(ids.size).toBe(N);
    peer.endInput();
    expect(await peer.waitExit()).toEqual({ code: 0, signal: null });
    console.log(`flood: peak RSS ${hwm.toFixed(1)} MiB with ${N} requests unread`);
  }, 120_000);

  it('stdio-server: stdin ending with requests in flight answers them all, then exits 0', async () => {
    const peer = StdioPeer.serve(tree.dir);
    await peer.initialize();
    const from = peer.lines.length;
    for (let i = 0; i < 200; i++) peer.send({ jsonrpc: '2.0', id: `e${i}`, method: 'tools/call', params: { name: 'workspace_list_dir', arguments: { path: '.' } } });
    peer.endInput();
    expect(await peer.waitExit()).toEqual({ code: 0, signal: null });
    // Answers come as handlers finish, not necessarily in order.
    expect(linesFrom(peer, from).map((m) => m.id).sort()).toEqual(Array.from({ length: 200 }, (_, i) => `e${i}`).sort());
  }, 60_000);

  it('stdio-server: a closed stdout (EPIPE) ends serve quietly', async () => {
    const peer = StdioPeer.serve(tree.dir);
    await peer.initialize();
    peer.child.stdout.destroy();
    for (let i = 0; i < 50; i++) peer.send({ jsonrpc: '2.0', id: i, method: 'tools/call', params: { name: 'workspace_list_dir', arguments: { path: '.' } } });
    expect(await peer.waitExit()).toEqual({ code: 0, signal: null });
    await peer.stderrEnded;
    expect(peer.stderrText).toBe('');
  }, 30_000);
});
