/**
 * Question: what does the Streamable HTTP front cost for a small tool call, through
 * `serve --listen` and through `proxy --listen`, against the same server without the budget?
 *
 * Variants (each a separate process on loopback, driven by one SDK `Client` over
 * `StreamableHTTPClientTransport` from this process, sessions with SSE answers):
 *   - baseline: the workspace `McpServer` on the SDK's `StreamableHTTPServerTransport` directly,
 *     no result budget (bench/http-baseline.child.ts);
 *   - serve: `mcp-budget serve --listen 127.0.0.1:0` (allow-lists, body cap, sessions, budget);
 *   - proxy: `mcp-budget proxy --listen 127.0.0.1:0 -- mcp-budget serve` (HTTP front, the stdio
 *     proxy core, and the stdio serve behind it: one more process hop).
 * Call: `workspace_list_dir` on a 10-entry directory (about 700 bytes of result).
 * Loop: 200 warm-up calls, then HTTP_BENCH_CALLS (default 2000) sequential calls timed one by one
 *   (latency median and p99; calls per second = calls / wall time), then the same count with 8
 *   calls in flight (calls per second). Rounds: HTTP_BENCH_ROUNDS (default 2), variants interleaved;
 *   the table shows the median round.
 * Command: npm run bench:http
 * Results: bench/RESULTS.md, section "Streamable HTTP front".
 * Reading: goal: serve and proxy within 1.3x of the baseline's median latency and throughput.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { machineLine } from './util.js';

const repo = fileURLToPath(new URL('..', import.meta.url));
const cli = join(repo, 'dist', 'cli.js');
const CALLS = Number(process.env.HTTP_BENCH_CALLS ?? 2000);
const ROUNDS = Number(process.env.HTTP_BENCH_ROUNDS ?? 2);
const WARMUP = 200;
const CONCURRENCY = 8;

const work = mkdtempSync(join(tmpdir(), 'mcp-budget-bench-http-'));
const root = join(work, 'root');
mkdirSync(join(root, 'small'), { recursive: true });
for (let i = 0; i < 10; i++) writeFileSync(join(root, 'small', `file-${i}.txt`), `${i}\n`);
const env = { ...process.env, XDG_STATE_HOME: join(work, 'state') };

const VARIANTS: { name: string; cmd: string[] }[] = [
  { name: 'baseline (SDK transport, no budget)', cmd: [process.execPath, '--import', 'tsx', join(repo, 'bench', 'http-baseline.child.ts'), root] },
  { name: 'serve --listen', cmd: [process.execPath, cli, 'serve', '--root', root, '--listen', '127.0.0.1:0'] },
  { name: 'proxy --listen -- serve', cmd: [process.execPath, cli, 'proxy', '--listen', '127.0.0.1:0', '--', process.execPath, cli, 'serve', '--root', root] },
];

function start(cmd: string[]): Promise<{ proc: ChildProcess; url: URL }> {
  const proc = spawn(cmd[0]!, cmd.slice(1), { cwd: repo, env, stdio: ['ignore', 'ignore', 'pipe'] });
  let err = '';
  return new Promise((resolve, reject) => {
    proc.stderr!.on('data', (b: Buffer) => {
      err += b.toString();
      const m = /listening on (http:\/\/\S+)/.exec(err);
      if (m) resolve({ proc, url: new URL(m[1]!) });
    });
    proc.once('exit', (code) => reject(new Error(`${cmd.join(' ')} exited ${code}: ${err}`)));
  });
}

interface Measured {
  median: number;
  p99: number;
  seqRps: number;
  concRps: number;
}

async function measure(url: URL): Promise<Measured> {
  const client = new Client({ name: 'bench', version: '1' });
  await client.connect(new StreamableHTTPClientTransport(url));
  const call = () => client.callTool({ name: 'workspace_list_dir', arguments: { path: 'small' } });
  const first = await call();
  if (first.isError === true || JSON.stringify(first).length > 4096) throw new Error(`unexpected result: ${JSON.stringify(first).slice(0, 300)}`);
  for (let i = 0; i < WARMUP; i++) await call();
  const lat: number[] = [];
  const t0 = performance.now();
  for (let i = 0; i < CALLS; i++) {
    const s = performance.now();
    await call();
    lat.push(performance.now() - s);
  }
  const seqMs = performance.now() - t0;
  let next = 0;
  const t1 = performance.now();
  await Promise.all(
    Array.from({ length: CONCURRENCY }, async () => {
      while (next++ < CALLS) await call();
    }),
  );
  const concMs = performance.now() - t1;
  await client.close();
  lat.sort((a, b) => a - b);
  return { median: lat[Math.floor(lat.length / 2)]!, p99: lat[Math.floor(lat.length * 0.99)]!, seqRps: (CALLS / seqMs) * 1000, concRps: (CALLS / concMs) * 1000 };
}

const results = new Map<string, Measured[]>();
try {
  console.log(machineLine());
  for (let round = 0; round < ROUNDS; round++) {
    for (const v of VARIANTS) {
      const { proc, url } = await start(v.cmd);
      try {
        const m = await measure(url);
        results.set(v.name, [...(results.get(v.name) ?? []), m]);
        console.log(`round ${round + 1} ${v.name}: median ${m.median.toFixed(3)} ms, p99 ${m.p99.toFixed(3)} ms, ${m.seqRps.toFixed(0)} calls/s sequential, ${m.concRps.toFixed(0)} calls/s with ${CONCURRENCY} in flight`);
      } finally {
        proc.kill('SIGTERM');
      }
    }
  }
} finally {
  rmSync(work, { recursive: true, force: true });
}

const mid = (xs: number[]): number => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;
const summary = (name: string): Measured => {
  const rs = results.get(name)!;
  return { median: mid(rs.map((r) => r.median)), p99: mid(rs.map((r) => r.p99)), seqRps: mid(rs.map((r) => r.seqRps)), concRps: mid(rs.map((r) => r.concRps)) };
};
const base = summary(VARIANTS[0]!.name);
console.log(`\n| variant | median | p99 | calls/s sequential | calls/s, ${CONCURRENCY} in flight | median ÷ baseline | throughput (8 in flight) baseline ÷ variant |`);
console.log('| --- | --- | --- | --- | --- | --- | --- |');
for (const v of VARIANTS) {
  const s = summary(v.name);
  console.log(`| ${v.name} | ${s.median.toFixed(2)} ms | ${s.p99.toFixed(2)} ms | ${s.seqRps.toFixed(0)} | ${s.concRps.toFixed(0)} | ${(s.median / base.median).toFixed(2)}x | ${(base.concRps / s.concRps).toFixed(2)}x |`);
}
