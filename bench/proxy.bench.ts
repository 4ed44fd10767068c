/**
 * Question: what does putting `mcp-budget proxy` in front of a server cost — for huge results
 * (time and memory) and for ordinary small ones (latency, throughput) — and what does the
 * `withResultBudget` decorator add to a transport's send?
 *
 * Variants:
 *   - huge results (100 MB, 1 GB; id last), the upstream writing pieces of BENCH_PROXY_PIECES KiB:
 *     a lean client process (bench/line-client.mjs) reading the upstream directly and only finding
 *     the newline (the scan floor: 'data' events, as a Node client reads; the strict floor: the same
 *     client reading into one reused buffer) vs the same client through the proxy, alternating
 *     within each round, the tools/call round trip timed after startup (peak RSS of the proxy from /usr/bin/time; its worst event-loop delay from
 *     bench/loop-lag.mjs preloaded); baseline row: the SDK `Client` over `StdioClientTransport`
 *     reading 100 MB directly with its buffer cap raised (its reader re-concatenates per chunk);
 *   - small results (1 KB): round-trip latency and messages per second, direct vs a proxy that
 *     only copies bytes (null proxy) vs through proxy, in rounds with the order rotated;
 *   - decorator: `StdioServerTransport.send` of a fitting tools/call response, plain vs wrapped.
 * Fixture: bench/proxy-upstream.mjs (answers like an SDK server, the id last).
 * Command: npm run build && npm run bench:proxy   (BENCH_PROXY_SDK=0 skips the slow SDK row;
 *   BENCH_PROXY_SIZES=100,1024 chooses the huge sizes; BENCH_PROXY_PIECES=4,64,1024 the upstream's
 *   write size in KiB; BENCH_PROXY_HUGE_ROUNDS=3 and BENCH_PROXY_SMALL_ROUNDS=5 the rounds;
 *   BENCH_PROXY_ONLY=decorator runs only the decorator-overhead section, BENCH_PROXY_DECORATOR=0
 *   skips it; BENCH_PROXY_BASELINE=<another build's dist directory> adds that build's proxy (huge
 *   results) and decorator to the same run, side by side; BENCH_PROXY_ROUNDS=5 rounds of the
 *   decorator section, task order rotated)
 * Results: bench/RESULTS.md, sections "Proxy and decorator (issue 4)" and "Pipes (issue 26)".
 * Reading: ratios in the same run; goals (issue 26): huge ≤ 1.3× floor, proxy RSS ≤ 100 MB, no
 *   event-loop delay over 10 ms; small round trip ≤ 1.1× the null proxy's (issue 4: ≤ 1.3×
 *   direct); decorator overhead ≤ 10% of the transport's own send time.
 */
import { spawn, spawnSync, type ChildProcessWithoutNullStreams } from 'node:child_process';
import { join } from 'node:path';
import { PassThrough } from 'node:stream';
import { fileURLToPath } from 'node:url';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { StdioServerTransport } from '@modelcontextprotocol/sdk/server/stdio.js';
import type { JSONRPCMessage } from '@modelcontextprotocol/sdk/types.js';
import { Bench } from 'tinybench';
import { fitsWithinBudget, resolveLimits } from '../dist/engine/index.js';
import { withResultBudget } from '../dist/transport/index.js';
import { assert, fmt, loadLine, machineLine, rows, table } from './util.js';

const root = fileURLToPath(new URL('..', import.meta.url));
const upstream = ['node', join(root, 'bench', 'proxy-upstream.mjs')];
// The proxy under /usr/bin/time (peak RSS, the last line of its stderr) with bench/loop-lag.mjs
// preloaded (its worst event-loop delay after startup).
const proxiedBy = (dist: string): string[] => ['/usr/bin/time', '-f', '%M', 'node', '--import', join(root, 'bench', 'loop-lag.mjs'), join(dist, 'cli.js'), 'proxy', '--', ...upstream];
const proxied = proxiedBy(join(root, 'dist'));
const baselineProxy = process.env.BENCH_PROXY_BASELINE === undefined ? undefined : proxiedBy(process.env.BENCH_PROXY_BASELINE);

/** bench/loop-lag.mjs counts from this long after the proxy starts; a huge call starts after it. */
const LAG_SKIP_MS = 1000;

/** A minimal line client: counts a response's bytes without holding it. */
class RawClient {
  private readonly p: ChildProcessWithoutNullStreams;
  private waiting: ((r: { bytes: number; head: string }) => void) | undefined;
  private bytes = 0;
  private head = '';
  private nextId = 1;
  stderr = '';

  constructor(cmd: string[]) {
    this.p = spawn(cmd[0]!, cmd.slice(1), { stdio: ['pipe', 'pipe', 'pipe'] });
    this.p.stderr.on('data', (d: Buffer) => (this.stderr += d.toString()));
    this.p.stdout.on('data', (chunk: Buffer) => {
      let from = 0;
      for (;;) {
        const nl = chunk.indexOf(10, from);
        const end = nl === -1 ? chunk.length : nl;
        if (this.head.length < 200) this.head += chunk.subarray(from, Math.min(end, from + 200)).toString();
        this.bytes += end - from;
        if (nl === -1) return;
        const done = { bytes: this.bytes, head: this.head };
        this.bytes = 0;
        this.head = '';
        from = nl + 1;
        this.waiting?.(done);
      }
    });
  }

  request(method: string, params: object): Promise<{ bytes: number; head: string }> {
    return new Promise((resolve) => {
      this.waiting = resolve;
      this.p.stdin.write(JSON.stringify({ jsonrpc: '2.0', id: this.nextId++, method, params }) + '\n');
    });
  }

  async init(): Promise<void> {
    await this.request('initialize', { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'bench', version: '1' } });
  }

  close(): Promise<void> {
    return new Promise((resolve) => {
      this.p.on('close', () => resolve()); // after exit and the end of its output (stderr's last lines)
      this.p.stdin.end();
    });
  }
}

console.log(machineLine());
const onlyDecorator = process.env.BENCH_PROXY_ONLY === 'decorator';
const sizes = onlyDecorator ? [] : (process.env.BENCH_PROXY_SIZES ?? '100,1024').split(',').filter((x) => x !== '').map(Number);

// ---- huge results: floor and proxy alternate within each round (rotating order), so load from
// other work falls on both alike; the ratio is the median of the rounds' ratios.
const hugeRows: string[][] = [];
const hugeRounds = Number(process.env.BENCH_PROXY_HUGE_ROUNDS ?? 3);
const pieces = (process.env.BENCH_PROXY_PIECES ?? '1024').split(',').map(Number);
const mid = (xs: number[]): number => [...xs].sort((x, y) => x - y)[Math.floor(xs.length / 2)]!;
const span = (xs: number[], f: (x: number) => string): string => `${f(Math.min(...xs))}–${f(Math.max(...xs))}`;
for (const kib of pieces) {
  process.env.BENCH_UPSTREAM_PIECE = String(kib * 1024);
  for (const mb of sizes) {
    let proxyRss = 0;
    let proxyLag = 0;
    let bounded = 0;
    const times = { floor: [] as number[], proxy: [] as number[], ratio: [] as number[], base: [] as number[], baseRatio: [] as number[], strict: [] as number[], strictRatio: [] as number[] };
    // The client is a separate lean process (bench/line-client.mjs): the bench's own process would
    // weigh on the direct read, which is the floor.
    const once = async (cmd: string[], reader = 'data'): Promise<{ ms: number; bytes: number; stderr: string }> => {
      const r = spawnSync('node', [join(root, 'bench', 'line-client.mjs'), reader, String(mb), String(LAG_SKIP_MS + 100), ...cmd], {
        encoding: 'utf8',
        env: { ...process.env, LOOP_LAG_SKIP_MS: String(LAG_SKIP_MS) },
      });
      assert(r.status === 0, `the client exited ${r.status}: ${r.stderr}`);
      return JSON.parse(r.stdout) as { ms: number; bytes: number; stderr: string };
    };
    for (let round = 0; round < hugeRounds; round++) {
      const got: Record<string, { ms: number; bytes: number; stderr: string }> = {};
      const order: string[] = baselineProxy === undefined ? ['floor', 'strict', 'proxy'] : ['floor', 'strict', 'proxy', 'baseline'];
      for (let i = 0; i < order.length; i++) {
        const which = order[(i + round) % order.length]!;
        got[which] = which === 'strict' ? await once(upstream, 'reused') : await once(which === 'floor' ? upstream : which === 'proxy' ? proxied : baselineProxy!);
      }
      assert(got.strict!.bytes >= mb * 1024 * 1024, 'the strict floor read the whole result');
      assert(got.floor!.bytes >= mb * 1024 * 1024, 'the floor read the whole result');
      bounded = got.proxy!.bytes;
      assert(bounded > 0 && bounded <= 65536 + 64, `the proxy returned a bounded response: ${got.proxy!.stderr}`);
      proxyRss = Math.max(proxyRss, Number(/(\d+)\s*$/.exec(got.proxy!.stderr)![1]) / 1024);
      proxyLag = Math.max(proxyLag, Number(/loop-lag-max-ms ([\d.]+)/.exec(got.proxy!.stderr)![1]));
      times.floor.push(got.floor!.ms);
      times.proxy.push(got.proxy!.ms);
      times.ratio.push(got.proxy!.ms / got.floor!.ms);
      times.strict.push(got.strict!.ms);
      times.strictRatio.push(got.proxy!.ms / got.strict!.ms);
      if (got.baseline !== undefined) {
        assert(got.baseline.bytes > 0 && got.baseline.bytes <= 65536 + 64, `the baseline proxy returned a bounded response: ${got.baseline.stderr}`);
        times.base.push(got.baseline.ms);
        times.baseRatio.push(got.baseline.ms / got.floor!.ms);
      }
    }
    hugeRows.push([
      `${mb} MB`,
      `${kib} KiB`,
      `${fmt(mid(times.floor))} (${span(times.floor, fmt)})`,
      `${fmt(mid(times.proxy))} (${span(times.proxy, fmt)})`,
      `${mid(times.ratio).toFixed(2)}× (${span(times.ratio, (x) => x.toFixed(2))})`,
      `${fmt(mid(times.strict))} (${span(times.strict, fmt)})`,
      `${mid(times.strictRatio).toFixed(2)}× (${span(times.strictRatio, (x) => x.toFixed(2))})`,
      proxyRss.toFixed(1),
      proxyLag.toFixed(1),
      String(bounded),
      loadLine(),
      ...(times.base.length === 0 ? [] : [`${fmt(mid(times.base))} (${span(times.base, fmt)})`, `${mid(times.baseRatio).toFixed(2)}× (${span(times.baseRatio, (x) => x.toFixed(2))})`]),
    ]);
    console.log(hugeRows.at(-1)!.join('  '));
  }
}
delete process.env.BENCH_UPSTREAM_PIECE;

let sdkRow: string[] | undefined;
if (!onlyDecorator && process.env.BENCH_PROXY_SDK !== '0') {
  // One run: the SDK's stdio reader concatenates its whole backlog per chunk (quadratic).
  const t = new StdioClientTransport({ command: upstream[0]!, args: upstream.slice(1) });
  (t as unknown as { _readBuffer?: { _maxBufferSize: number } })._readBuffer!._maxBufferSize = 512 * 1024 * 1024;
  const client = new Client({ name: 'bench', version: '1' });
  await client.connect(t);
  const t0 = performance.now();
  const res = await client.callTool({ name: 'huge_text', arguments: { mb: 100 } }, undefined, { timeout: 30 * 60_000 });
  const ms = performance.now() - t0;
  const got = (res.content as { text: string }[])[0]!.text.length;
  await client.close();
  sdkRow = ['100 MB', 'SDK Client direct (cap raised)', fmt(ms), `${(got / 1024 / 1024).toFixed(0)} MB of text held`];
  console.log(sdkRow.join('  '));
}

// ---- small results
let smallRows: string[][] | undefined;
if (!onlyDecorator && process.env.BENCH_PROXY_SMALL_ROUNDS !== '0') {
  // A proxy that does nothing but pipe bytes both ways: what any extra process hop costs.
  const NULL_PROXY = `const { spawn } = require('node:child_process');
const c = spawn(process.argv[1], process.argv.slice(2), { stdio: ['pipe', 'pipe', 'inherit'] });
process.stdin.pipe(c.stdin); c.stdout.pipe(process.stdout); c.on('exit', (code) => process.exit(code ?? 0));`;
  const direct = new RawClient(upstream);
  const through = new RawClient(proxied);
  const nullHop = new RawClient(['node', '-e', NULL_PROXY, ...upstream]);
  await direct.init();
  await through.init();
  await nullHop.init();
  const a = await direct.request('tools/call', { name: 'small', arguments: {} });
  const b = await through.request('tools/call', { name: 'small', arguments: {} });
  assert(a.bytes === b.bytes && a.head === b.head, 'a fitting 1 KB result passes the proxy byte for byte');
  // Rounds of 1 s per variant, the order rotated each round; a ratio is the median of the
  // rounds' ratios (each from the same round), with its range.
  const smallRounds = Number(process.env.BENCH_PROXY_SMALL_ROUNDS ?? 5);
  const clients: [string, RawClient][] = [
    ['direct', direct],
    ['null proxy', nullHop],
    ['proxy', through],
  ];
  if (baselineProxy !== undefined) {
    const base = new RawClient(baselineProxy);
    await base.init();
    clients.push(['baseline proxy', base]);
  }
  const med = new Map<string, number[]>(clients.map(([n]) => [n, []]));
  const toDirect = new Map<string, number[]>(clients.map(([n]) => [n, []]));
  const toNull: number[] = [];
  const baseToNull: number[] = [];
  for (let round = 0; round < smallRounds; round++) {
    const small = new Bench({ time: 1000, warmupTime: 200 });
    for (let i = 0; i < clients.length; i++) {
      const [name, c] = clients[(i + round) % clients.length]!;
      small.add(name, async () => void (await c.request('tools/call', { name: 'small', arguments: {} })));
    }
    await small.run();
    const sr = rows(small);
    for (const [name] of clients) {
      med.get(name)!.push(sr.get(name)!.median);
      toDirect.get(name)!.push(sr.get(name)!.median / sr.get('direct')!.median);
    }
    toNull.push(sr.get('proxy')!.median / sr.get('null proxy')!.median);
    if (sr.has('baseline proxy')) baseToNull.push(sr.get('baseline proxy')!.median / sr.get('null proxy')!.median);
  }
  for (const [, c] of clients) await c.close();
  const ratio = (xs: number[]): string => `${mid(xs).toFixed(2)}× (${span(xs, (x) => x.toFixed(2))})`;
  smallRows = clients.map(([name]) => [
    name === 'null proxy' ? 'null proxy (pipes only)' : name === 'proxy' ? 'through proxy' : name,
    fmt(mid(med.get(name)!)),
    (1000 / mid(med.get(name)!)).toFixed(0),
    ratio(toDirect.get(name)!),
    name === 'proxy' ? ratio(toNull) : name === 'baseline proxy' ? ratio(baseToNull) : '—',
  ]);
  smallRows.push(['load', loadLine(), '', '', '']);
}

// ---- decorator overhead on send: the transport writes into a real pipe, as it does in production
const drain = spawn('sh', ['-c', 'cat > /dev/null'], { stdio: ['pipe', 'ignore', 'ignore'] });
const sink = drain.stdin;
const plain = new StdioServerTransport(new PassThrough(), sink);
const innerForWrap = new StdioServerTransport(new PassThrough(), sink);
const wrapped = withResultBudget(innerForWrap);
wrapped.onmessage = () => undefined;
const deliver = innerForWrap.onmessage!;
// An earlier build's decorator in the same run, for a before/after ratio under the same load.
const baselineDir = process.env.BENCH_PROXY_BASELINE;
let baseWrapped: ReturnType<typeof withResultBudget> | undefined;
let baseDeliver: ((m: JSONRPCMessage) => void) | undefined;
if (baselineDir !== undefined && process.env.BENCH_PROXY_DECORATOR !== '0') {
  const mod = (await import(join(baselineDir, 'transport', 'index.js'))) as { withResultBudget: typeof withResultBudget };
  const inner = new StdioServerTransport(new PassThrough(), sink);
  baseWrapped = mod.withResultBudget(inner);
  baseWrapped.onmessage = () => undefined;
  baseDeliver = inner.onmessage!;
}
const decoratorRows: string[][] = [];
const rounds = Number(process.env.BENCH_PROXY_ROUNDS ?? 5);
// Fitting responses (text plus structured content within the defaults). The third keeps the name
// "60 KB" of earlier results but is a 42.7 KB line; what makes it costly to check is its text block,
// 30,000 bytes escaped, within 9% of the 32 KiB block bound.
const items = (n: number): { id: number; name: string }[] => Array.from({ length: n }, (_, i) => ({ id: i, name: `entry-${i}.txt` }));
for (const [label, result] of [
  ['1 KB', { content: [{ type: 'text', text: 'x'.repeat(1000) }] }],
  ['16 KB', { content: [{ type: 'text', text: 'line of output\n'.repeat(700) }], structuredContent: { items: items(150) } }],
  ['60 KB', { content: [{ type: 'text', text: 'line of "output"\n'.repeat(1500) }], structuredContent: { items: items(200), note: 'n'.repeat(6000) } }],
] as const) {
  if (process.env.BENCH_PROXY_DECORATOR === '0') break;
  const response = (id: number): JSONRPCMessage => ({ jsonrpc: '2.0', id, result }) as unknown as JSONRPCMessage;
  assert(fitsWithinBudget(result, resolveLimits({}), 'result'), `the ${label} response fits the default budget`);
  let id = 0;
  const tasks: [string, () => Promise<void>][] = [
    ['plain send', async () => void (await plain.send(response(++id)))],
    [
      'decorated send',
      async () => {
        const n = ++id;
        deliver({ jsonrpc: '2.0', id: n, method: 'tools/call', params: { name: 't' } });
        await wrapped.send(response(n));
      },
    ],
  ];
  if (baseWrapped !== undefined) {
    tasks.push([
      'baseline decorated send',
      async () => {
        const n = ++id;
        baseDeliver!({ jsonrpc: '2.0', id: n, method: 'tools/call', params: { name: 't' } });
        await baseWrapped!.send(response(n));
      },
    ]);
  }
  // Rounds with the task order rotated (a task that runs first or last is not always the same
  // one); the figure is the median of the rounds' medians, the overhead the median of the rounds'.
  const medians = new Map<string, number[]>();
  const overheads = new Map<string, number[]>();
  for (let round = 0; round < rounds; round++) {
    const bench = new Bench({ time: 1000, warmupTime: 200 });
    for (let i = 0; i < tasks.length; i++) {
      const [name, fn] = tasks[(i + round) % tasks.length]!;
      bench.add(name, fn);
    }
    await bench.run();
    const r = rows(bench);
    const pl = r.get('plain send')!.median;
    for (const [name] of tasks) {
      const t = r.get(name)!.median;
      medians.set(name, [...(medians.get(name) ?? []), t]);
      overheads.set(name, [...(overheads.get(name) ?? []), (t - pl) / pl]);
    }
  }
  const pct = (name: string): string => {
    const o = overheads.get(name)!;
    return `${(mid(o) * 100).toFixed(1)}% (${(Math.min(...o) * 100).toFixed(0)}…${(Math.max(...o) * 100).toFixed(0)}%)`;
  };
  // The label is the fixture's name; the row also gives the response line's real size.
  const bytes = Buffer.byteLength(JSON.stringify(response(0)));
  const row = [`${label} (${bytes} B)`, fmt(mid(medians.get('plain send')!)), fmt(mid(medians.get('decorated send')!)), pct('decorated send')];
  if (medians.has('baseline decorated send')) row.push(fmt(mid(medians.get('baseline decorated send')!)), pct('baseline decorated send'));
  decoratorRows.push(row);
}

drain.stdin.end();

if (hugeRows.length > 0) {
  console.log();
  console.log(
    table(['upstream result', 'upstream piece', 'floor: client reads the server directly, median (range)', 'through proxy, median (range)', 'ratio, median of rounds (range)', 'strict floor: the client reads into one reused buffer', 'ratio to the strict floor', 'proxy peak RSS MiB', 'proxy worst loop delay ms', 'bounded bytes', 'load at the end', ...(baselineProxy === undefined ? [] : ['baseline proxy', 'baseline ratio'])], hugeRows),
  );
}
if (sdkRow !== undefined) {
  console.log();
  console.log(table(['result', 'baseline', 'time', 'memory'], [sdkRow]));
}
if (smallRows !== undefined) {
  console.log();
  console.log(table(['1 KB tools/call', 'round trip (median of rounds)', 'messages/s', 'ratio to direct', 'ratio to null proxy'], smallRows));
}
const baseCols = baseWrapped === undefined ? [] : ['baseline build', 'baseline overhead'];
if (decoratorRows.length > 0) console.log('\n' + table(['fitting response', 'StdioServerTransport.send', 'withResultBudget(…).send', 'overhead', ...baseCols], decoratorRows));
