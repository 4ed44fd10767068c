/**
 * Question: does `apply --mode stream` read a pipe on stdin at close to the speed of the cheapest
 * reader of the same pipe, whatever the piece size the writer uses, with flat memory and without
 * starving its event loop?
 *
 * Setup, as users run it: `node bench/pipe-writer.mjs PIECE MB | READER`, a shell pipeline (a real
 * pipe between two processes). The writer sends one JSON-RPC response whose result is one text
 * block of MB mebibytes (escapes included), one write call per PIECE bytes.
 * Variants (the same writer and pipe each time):
 *   - floor: `wc -c` reading the pipe;
 *   - `mcp-budget apply --mode stream -` (the built CLI) reading it on stdin;
 *   - baseline (only with BENCH_PIPES_BASELINE=path/to/other/dist/cli.js): the same command from
 *     another build, in the same rounds, for a before/after under the same load.
 * Each round runs every variant once, in a rotating order, so load from other work falls on all
 * alike; the figure is the median of the rounds and the range is given.
 * Startup: apply less the floor, both fed a 0 MiB result, in each round (what starting the CLI
 * costs under that load), and apply's median less it, against the floor's median.
 * Memory: the reader's peak RSS from /usr/bin/time (a separate process). Event loop: bench/loop-lag.mjs
 * preloaded into apply reports its worst event-loop delay after startup.
 * Command: npm run bench:pipes   (BENCH_PIPES_MB=200 size, 1024 for 1 GB; BENCH_PIPES_PIECES=4,64,1024
 *   writer pieces in KiB; BENCH_PIPES_ROUNDS=5)
 * Results: bench/RESULTS.md, section "Pipes (issue 26)".
 * Goals: apply ≤ 1.5× the floor for 4 KiB, 64 KiB and 1 MiB pieces; peak RSS ≤ 100 MB; worst
 *   event-loop delay ≤ 10 ms.
 */
import { spawnSync } from 'node:child_process';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { assert, fmt, loadLine, machineLine, table } from './util.js';

const root = fileURLToPath(new URL('..', import.meta.url));
const cli = join(root, 'dist', 'cli.js');
const writer = join(root, 'bench', 'pipe-writer.mjs');
const lag = join(root, 'bench', 'loop-lag.mjs');
const mb = Number(process.env.BENCH_PIPES_MB ?? 200);
const pieces = (process.env.BENCH_PIPES_PIECES ?? '4,64,1024').split(',').map(Number);
const rounds = Number(process.env.BENCH_PIPES_ROUNDS ?? 5);
const baseline = process.env.BENCH_PIPES_BASELINE;

interface Run {
  ms: number;
  rssMiB: number;
  lagMs: number | undefined;
  out: string;
}

const q = (s: string): string => `'${s.replace(/'/g, `'\\''`)}'`;

/** One pipeline: the writer into `reader` (argv), timed whole; the reader's RSS and loop lag. */
function run(pieceBytes: number, reader: string[], size = mb): Run {
  const cmd = `{ node ${q(writer)} ${pieceBytes} ${size} || echo "writer failed: $?" >&2; } | /usr/bin/time -f 'rss-kb %M' ${reader.map(q).join(' ')}`;
  const t0 = performance.now();
  const r = spawnSync('sh', ['-c', cmd], { encoding: 'utf8', maxBuffer: 64 * 1024 * 1024 });
  const ms = performance.now() - t0;
  assert(r.status === 0, `pipeline exited ${r.status}: ${r.stderr}`);
  assert(!r.stderr.includes('writer failed'), `the writer failed: ${r.stderr}`);
  const rss = /rss-kb (\d+)/.exec(r.stderr);
  const l = /loop-lag-max-ms ([\d.]+)/.exec(r.stderr);
  return { ms, rssMiB: Number(rss![1]) / 1024, lagMs: l === null ? undefined : Number(l[1]), out: r.stdout };
}

const variants: [string, string[]][] = [
  ['floor (wc -c)', ['wc', '-c']],
  ['apply --mode stream', ['node', '--import', lag, cli, 'apply', '--mode', 'stream', '-']],
];
if (baseline !== undefined) variants.push(['baseline apply', ['node', '--import', lag, baseline, 'apply', '--mode', 'stream', '-']]);

const mid = (xs: number[]): number => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;
const range = (xs: number[], f: (x: number) => string): string => `${f(Math.min(...xs))}–${f(Math.max(...xs))}`;

console.log(machineLine());
console.log(`${mb} MiB text result, ${rounds} rounds`);
const body: string[][] = [];
for (const kib of pieces) {
  const piece = kib * 1024;
  const runs = new Map<string, Run[]>(variants.map(([n]) => [n, []]));
  const ratios = new Map<string, number[]>(variants.map(([n]) => [n, []]));
  const loads: string[] = [];
  const startup: number[] = [];
  for (let round = 0; round < rounds; round++) {
    const got = new Map<string, Run>();
    for (let i = 0; i < variants.length; i++) {
      const [name, reader] = variants[(i + round) % variants.length]!;
      got.set(name, run(piece, reader));
    }
    // What starting the CLI costs under this round's load: apply on a result of 0 MiB, less the
    // floor on the same (both pipelines start the writer).
    startup.push(run(piece, variants[1]![1], 0).ms - run(piece, variants[0]![1], 0).ms);
    const floor = got.get('floor (wc -c)')!;
    assert(Number(floor.out.trim()) >= mb * 1024 * 1024, 'the floor read the whole response');
    for (const [name, r] of got) {
      if (name !== 'floor (wc -c)') assert(r.out.length > 0 && r.out.length <= 65536 + 64, `${name} wrote a bounded response`);
      runs.get(name)!.push(r);
      ratios.get(name)!.push(r.ms / floor.ms);
    }
    loads.push(loadLine());
  }
  const floorMs = runs.get('floor (wc -c)')!.map((r) => r.ms);
  for (const [name] of variants) {
    const rs = runs.get(name)!;
    const ms = rs.map((r) => r.ms);
    const lags = rs.map((r) => r.lagMs).filter((x): x is number => x !== undefined);
    const first = name === 'floor (wc -c)';
    body.push([
      `${kib} KiB`,
      name,
      `${fmt(mid(ms))} (${range(ms, fmt)})`,
      first ? '1.00×' : `${mid(ratios.get(name)!).toFixed(2)}× (${range(ratios.get(name)!, (x) => x.toFixed(2))})`,
      `${Math.max(...rs.map((r) => r.rssMiB)).toFixed(1)}`,
      lags.length === 0 ? '—' : `${Math.max(...lags).toFixed(1)}`,
    ]);
  }
  const applyMs = runs.get('apply --mode stream')!.map((r) => r.ms);
  body.push([`${kib} KiB`, 'startup: apply less the floor on a 0 MiB result', `${fmt(mid(startup))} (${range(startup, fmt)})`, `apply less startup: ${((mid(applyMs) - mid(startup)) / mid(floorMs)).toFixed(2)}× the floor`, '', '']);
  console.log(`${kib} KiB pieces: floor median ${fmt(mid(floorMs))}; ${loads.at(-1)}`);
}
console.log();
console.log(table(['writer piece', 'reader', 'time, median (range)', 'ratio to floor, median of rounds (range)', 'peak RSS MiB (max)', 'worst loop delay ms'], body));
console.log(loadLine());
