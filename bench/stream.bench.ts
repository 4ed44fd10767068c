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
 *   - naive (200 MB only): read the whole file, `JSON.parse`, then the in-memory engine.
 * Fixtures (generated once under the OS temp dir, reused): a JSON-RPC response whose result is
 *   one huge text block full of escapes ("text"), or a huge structuredContent array of small
 *   objects with the id last ("array"); 200 MB, 1 GB and 4 GB.
 * Command: npm run build && npm run bench:stream   (BENCH_STREAM_SIZES=200,1024,4096 to choose)
 * Results: bench/RESULTS.md, section "Streaming path (issue 3)".
 * Reading: time ratio = apply ÷ scan floor in the same run (goal ≤ 2× on skip-dominated input),
 *   and apply ÷ sync floor;
 *   peak RSS of apply from /usr/bin/time (goal ≤ 100 MB, flat in input size).
 */
import { spawnSync } from 'node:child_process';
import { createWriteStream, existsSync, mkdirSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { Bench } from 'tinybench';
import { assert, fmt, loadLine, machineLine, rows, table } from './util.js';

const root = fileURLToPath(new URL('..', import.meta.url));
const cli = join(root, 'dist', 'cli.js');
const dir = join(tmpdir(), 'mcp-budget-bench');
const sizes = (process.env.BENCH_STREAM_SIZES ?? '200,1024,4096').split(',').map(Number);

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
  rssMiB: number;
  out: string;
}

function timed(args: string[]): Run {
  const t0 = performance.now();
  const r = spawnSync('/usr/bin/time', ['-f', '%M', ...args], { encoding: 'utf8', maxBuffer: 64 * 1024 * 1024 });
  const ms = performance.now() - t0;
  if (r.status !== 0) throw new Error(`${args.join(' ')} failed: ${r.stderr}`);
  const kb = Number(r.stderr.trim().split('\n').pop());
  return { ms, rssMiB: kb / 1024, out: r.stdout };
}

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
    const bench = new Bench({ iterations: 3, time: 0, warmupIterations: 0, throws: true });
    let rss = 0;
    let floorRss = 0;
    bench
      .add('floor', () => {
        floorRss = Math.max(floorRss, timed(['node', '-e', FLOOR, file]).rssMiB);
      })
      .add('sync floor', () => {
        timed(['node', '-e', FLOOR_SYNC, file]);
      })
      .add('apply', () => {
        rss = Math.max(rss, timed(['node', cli, 'apply', '--mode', 'stream', file]).rssMiB);
      });
    await bench.run();
    const r = rows(bench);
    const floor = r.get('floor')!.median;
    const syncFloor = r.get('sync floor')!.median;
    const apply = r.get('apply')!.median;
    results.push([
      `${mb} MB`,
      kind,
      fmt(floor),
      fmt(syncFloor),
      fmt(apply),
      (apply / floor).toFixed(2) + '×',
      (apply / syncFloor).toFixed(2) + '×',
      rss.toFixed(1),
      floorRss.toFixed(1),
    ]);
    console.log(results.at(-1)!.join('  '));
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
    ['input', 'shape', 'scan floor (median)', 'sync floor (median)', 'apply --mode stream (median)', 'ratio', 'ratio to sync floor', 'apply peak RSS MiB', 'floor peak RSS MiB'],
    results,
  ),
);
console.log(`\nat end: ${loadLine()}`);
if (naiveRows.length > 0) {
  console.log();
  console.log(table(['200 MB shape', 'naive: JSON.parse + engine', 'naive peak RSS MiB', 'stream', 'stream peak RSS MiB', 'naive ÷ stream'], naiveRows));
}
