/**
 * Question: does the byte-stream path bound results of any size with flat memory, at close to the
 * speed of merely reading the bytes?
 *
 * Variants (each a separate process, so memory is its own):
 *   - scan floor: read the file into one reused buffer and `indexOf` the newline (the least work
 *     any reader must do), with awaited reads (the floor of earlier runs);
 *   - sync floor: the same with synchronous reads, as `apply` reads a regular file since
 *     2026-12-03 (the stricter floor: ratios are given against both);
 *   - `mcp-budget apply --mode stream FILE` (the byte path: fit window, tokenizer, skip scanner);
 *   - baseline (only with BENCH_STREAM_BASELINE=path/to/other/dist/cli.js): the same command from
 *     another build, timed in the same rounds, for a before/after under the same load;
 *   - naive (200 MB only): read the whole file, `JSON.parse`, then the in-memory engine.
 * Fixtures (generated once under the OS temp dir, reused): a JSON-RPC response whose result is
 *   one huge text block full of escapes ("text"), or a huge structuredContent array of small
 *   objects with the id last ("array"); 200 MB, 1 GB and 4 GB.
 * Command: npm run build && npm run bench:stream   (BENCH_STREAM_SIZES=200,1024,4096 to choose,
 *   BENCH_STREAM_ROUNDS=3 rounds; the variants run in turn within a round, in a rotating order, so
 *   that load from other work falls on all of them alike)
 * Results: bench/RESULTS.md, section "Streaming path (issue 3)".
 * Reading: time ratio = apply ÷ scan floor in the same run (goal ≤ 2× on skip-dominated input),
 *   and apply ÷ sync floor (wall-clock medians), and the same ratio in CPU time (user + system),
 *   which other work on a shared machine skews less;
 *   peak RSS of apply from /usr/bin/time (goal ≤ 100 MB, flat in input size).
 */
import { spawnSync } from 'node:child_process';
import { createWriteStream, existsSync, mkdirSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { assert, fmt, loadLine, machineLine, table } from './util.js';

const root = fileURLToPath(new URL('..', import.meta.url));
const cli = join(root, 'dist', 'cli.js');
const dir = join(tmpdir(), 'mcp-budget-bench');
const sizes = (process.env.BENCH_STREAM_SIZES ?? '200,1024,4096').split(',').map(Number);
const rounds = Number(process.env.BENCH_STREAM_ROUNDS ?? 3);
const baseline = process.env.BENCH_STREAM_BASELINE;

async function generate(kind: 'text' | 'array', mb: number): Promise<string> {
  const file = join(dir, `${kind}-${mb}m.json`);
  if (existsSync(file) && statSync(file).size >= mb * 1024 * 1024) return file;
  mkdirSync(dir, { recursive: true });
  const out = createWriteStream(file);
  const w = (s: string): Promise<void> => (out.write(s) ? Promise.resolve() : new Promise((r) => out.once('drain', () => r())));
  const total = mb * 1024 * 1024;
  if (kind === 'text') {
    await w('{"jsonrpc":"2.0","id":1,"result":{"content":[{"type":"text","text":"');
    const chunk = 'lorem ipsum dolor sit amet \\"quoted\\" and a \\\\ backslash\\n'.repeat(20000);
    for (let n = 0; n < total; n += chunk.length) await w(chunk);
    await w('"}]}}\n');
  } else {
    await w('{"result":{"content":[{"type":"text","text":"listing"}],"structuredContent":{"items":[');
    const chunk = '{"id":12345,"name":"file-12345.txt","tags":["a","b"],"size":1024},'.repeat(10000);
    for (let n = 0; n < total; n += chunk.length) await w(chunk);
    await w('{"id":0}]}},"jsonrpc":"2.0","id":1}\n');
  }
  await new Promise<void>((r) => out.end(r));
  return file;
}

const FLOOR = `
const { open } = require('node:fs/promises');
(async () => {
  const fh = await open(process.argv[1]); const buf = Buffer.allocUnsafe(256 * 1024); let nl = 0;
  for (;;) { const { bytesRead } = await fh.read(buf, 0, buf.length, null); if (!bytesRead) break;
    if (buf.subarray(0, bytesRead).indexOf(10) !== -1) nl++; }
  if (nl !== 1) throw new Error('expected one newline');
})();`;

const NAIVE = `
const { readFileSync } = require('node:fs');
const { boundJson } = require(process.argv[2]);
const v = JSON.parse(readFileSync(process.argv[1], 'utf8'));
process.stdout.write(boundJson(v, {}, 'auto').json);`;

const FLOOR_SYNC = `
const { openSync, readSync } = require('node:fs');
const fd = openSync(process.argv[1]); const buf = Buffer.allocUnsafe(256 * 1024); let nl = 0;
for (;;) { const n = readSync(fd, buf, 0, buf.length, null); if (!n) break;
  if (buf.subarray(0, n).indexOf(10) !== -1) nl++; }
if (nl !== 1) throw new Error('expected one newline');`;

interface Run {
  ms: number;
  /** User + system CPU time. */
  cpuMs: number;
  rssMiB: number;
  out: string;
}

function timed(args: string[]): Run {
  const t0 = performance.now();
  const r = spawnSync('/usr/bin/time', ['-f', '%M %U %S', ...args], { encoding: 'utf8', maxBuffer: 64 * 1024 * 1024 });
  const ms = performance.now() - t0;
  if (r.status !== 0) throw new Error(`${args.join(' ')} failed: ${r.stderr}`);
  const [kb, user, sys] = r.stderr.trim().split('\n').pop()!.split(' ').map(Number);
  return { ms, cpuMs: (user! + sys!) * 1000, rssMiB: kb! / 1024, out: r.stdout };
}

const median = (xs: number[]): number => {
  const s = [...xs].sort((a, b) => a - b);
  return s.length % 2 ? s[s.length >> 1]! : (s[s.length / 2 - 1]! + s[s.length / 2]!) / 2;
};

const results: string[][] = [];
const naiveRows: string[][] = [];
console.log(machineLine());
for (const mb of sizes) {
  for (const kind of ['text', 'array'] as const) {
    const file = await generate(kind, mb);
    // Agree before timing: the bounded output is valid JSON with a report and within the budget.
    const check = timed(['node', cli, 'apply', '--mode', 'stream', file]);
    const parsed = JSON.parse(check.out) as { result: { _meta: Record<string, { truncated: boolean }> } };
    assert(parsed.result._meta['io.github.mcp-result-budget/budget']?.truncated === true, 'apply reports a truncation');
    assert(Buffer.byteLength(check.out) <= 65536 + 64, 'output within the default budget');
    const variants: Record<string, string[]> = {
      floor: ['node', '-e', FLOOR, file],
      'sync floor': ['node', '-e', FLOOR_SYNC, file],
      apply: ['node', cli, 'apply', '--mode', 'stream', file],
    };
    if (baseline) variants.baseline = ['node', baseline, 'apply', '--mode', 'stream', file];
    const names = Object.keys(variants);
    const runs = new Map<string, Run[]>(names.map((n) => [n, []]));
    for (let round = 0; round < rounds; round++) {
      for (let k = 0; k < names.length; k++) {
        const name = names[(round + k) % names.length]!;
        const run = timed(variants[name]!);
        if (name === 'baseline') assert(run.out === check.out, 'the baseline build gives the same output');
        runs.get(name)!.push(run);
      }
    }
    const wall = (name: string): number => median(runs.get(name)!.map((r) => r.ms));
    const cpu = (name: string): number => median(runs.get(name)!.map((r) => r.cpuMs));
    const peak = (name: string): number => Math.max(...runs.get(name)!.map((r) => r.rssMiB));
    const floor = wall('floor');
    const syncFloor = wall('sync floor');
    const apply = wall('apply');
    const rss = peak('apply');
    results.push([
      `${mb} MB`,
      kind,
      fmt(floor),
      fmt(syncFloor),
      fmt(apply),
      (apply / floor).toFixed(2) + '×',
      (apply / syncFloor).toFixed(2) + '×',
      (cpu('apply') / cpu('sync floor')).toFixed(2) + '×',
      ...(baseline ? [fmt(wall('baseline')), (wall('baseline') / syncFloor).toFixed(2) + '×', (cpu('baseline') / cpu('sync floor')).toFixed(2) + '×'] : []),
      rss.toFixed(1),
      peak('floor').toFixed(1),
    ]);
    console.log(results.at(-1)!.join('  '), ` (${loadLine()})`);
    if (mb === 200) {
      const naive = timed(['node', '-e', NAIVE, file, join(root, 'dist', 'index.js')]);
      naiveRows.push([kind, fmt(naive.ms), naive.rssMiB.toFixed(1), fmt(apply), rss.toFixed(1), (naive.ms / apply).toFixed(2) + '×']);
      console.log('naive', naiveRows.at(-1)!.join('  '));
    }
  }
}
console.log();
console.log(
  table(
    [
      'input',
      'shape',
      'scan floor (median)',
      'sync floor (median)',
      'apply --mode stream (median)',
      'ratio',
      'ratio to sync floor',
      'CPU ratio to sync floor',
      ...(baseline ? ['baseline apply (median)', 'baseline ratio to sync floor', 'baseline CPU ratio to sync floor'] : []),
      'apply peak RSS MiB',
      'floor peak RSS MiB',
    ],
    results,
  ),
);
console.log(`\nat end: ${loadLine()}`);
if (naiveRows.length > 0) {
  console.log();
  console.log(table(['200 MB shape', 'naive: JSON.parse + engine', 'naive peak RSS MiB', 'stream', 'stream peak RSS MiB', 'naive ÷ stream'], naiveRows));
}
