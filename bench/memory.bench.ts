/**
 * Question: how much memory does bounding an oversized in-memory result add on top of holding the
 * input? (The input is the caller's; the budget should add memory that follows the budget, not the
 * input.) Measured in separate processes: peak RSS of "build the input" vs "build it, then bound it
 * once", same steps otherwise (bench/memory.child.ts).
 *
 * Variants (each its own process, BENCH_MEM_RUNS runs each, default 2, modes interleaved):
 *   array:build           — build the 10M-item array result, full GC              (the baseline)
 *   array:bound           — same, then boundJson(x, defaults)
 *   array:bound-maxitems  — same, then boundJson(x, {maxItems: 10_000_000})      (bytes bind)
 *   text:build            — build the 500 MB text result (flattened), full GC    (the baseline)
 *   text:bound            — same, then boundJson(x, defaults)
 *
 * Fixture: arrayResult(10_000_000) (≈ 1.19 GB as JSON) and textResult(500_000_000), bench/fixtures.ts.
 * Measure: process.resourceUsage().maxRSS at the end of each child; "extra" = median peak RSS of
 * the bound mode − median peak RSS of the build mode. Also shown: how far the child's own peak
 * rose during the bound (peak after bound − peak before it). Caveat: on Linux a child's maxRSS
 * starts from the parent's RSS at spawn (printed; ~0.1 GB), far below the children's 0.5–3 GB peaks.
 *
 * Command: npm run bench:memory   (node --import tsx bench/memory.bench.ts; children run with
 * node --expose-gc --max-old-space-size=8192 --import tsx bench/memory.child.ts <mode>)
 *
 * Results — Intel(R) Xeon(R) Processor, 2 vCPU, 23.5 GiB RAM, Node v20.20.2, linux-x64, 2026-12-02,
 * engine at commit 45f787d, parent RSS 75 MiB, 2 runs each (medians, MiB):
 *
 * | mode | peak RSS per run | median peak | extra vs build | peak rise during bound | heap used Δ |
 * | --- | --- | --- | --- | --- | --- |
 * | array:build | 2478, 2510 | 2494 | — | — | — |
 * | array:bound | 2468, 2484 | 2476 | −18 (noise) | 0 | 1 |
 * | array:bound-maxitems | 3726, 3753 | 3740 | +1246 | +1243 | +1305 |
 * | text:build | 560, 558 | 559 | — | — | — |
 * | text:bound | 559, 565 | 562 | +3 (noise) | 0 | 0 |
 *
 * Reading: with default limits bounding adds nothing measurable to the 2.5 GB of holding the 10M
 * items (or the 0.56 GB of the 500 MB string). With maxItems 10M it adds ≈ 1.2 GB at peak: the fits
 * check's work stack gets one entry per item, in each of its two passes.
 */
import { spawnSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { fmt, loadLine, machineLine, table } from './util.js';

const RUNS = Number(process.env.BENCH_MEM_RUNS ?? 2);
const child = fileURLToPath(new URL('./memory.child.ts', import.meta.url));
const root = fileURLToPath(new URL('..', import.meta.url));
const FLAGS = ['--expose-gc', '--max-old-space-size=8192', '--import', 'tsx'];

interface Reading {
  mode: string;
  buildMs: number;
  boundMs?: number;
  outBytes?: number;
  maxRssAfterBuildMiB: number;
  rssAfterBuildMiB: number;
  heapUsedAfterBuildMiB: number;
  maxRssMiB: number;
  rssEndMiB: number;
  heapUsedEndMiB: number;
}

function run(mode: string): Reading {
  const r = spawnSync(process.execPath, [...FLAGS, child, mode], { cwd: root, encoding: 'utf8', maxBuffer: 1 << 20 });
  if (r.status !== 0) throw new Error(`child ${mode} failed (${r.status}): ${r.stderr}`);
  const line = r.stdout.trim().split('\n').pop()!;
  return JSON.parse(line) as Reading;
}

const median = (xs: number[]): number => {
  const s = [...xs].sort((a, b) => a - b);
  const m = s.length >> 1;
  return s.length % 2 === 1 ? s[m]! : (s[m - 1]! + s[m]!) / 2;
};

console.log(`# memory: peak RSS of bounding vs building, separate processes (${RUNS} runs each)\n${machineLine()}\n`);
// Linux carries the pre-exec high-water mark into a child's maxRSS (fork copies this process's
// mappings), so a child's maxRSS is at least about this process's RSS: it must stay far below the
// children's own peaks for maxRSS to be theirs.
console.log(`this (parent) process RSS: ${(process.memoryUsage().rss / 1024 / 1024).toFixed(0)} MiB\n`);

const groups: [string, string[]][] = [
  ['array', ['array:build', 'array:bound', 'array:bound-maxitems']],
  ['text', ['text:build', 'text:bound']],
];
const all = new Map<string, Reading[]>();
for (const [, modes] of groups) {
  for (let i = 0; i < RUNS; i++) {
    for (const mode of modes) {
      const r = run(mode);
      console.log(JSON.stringify(r));
      all.set(mode, [...(all.get(mode) ?? []), r]);
    }
  }
}

const body: (string | number)[][] = [];
const verdicts: string[] = [];
for (const [, modes] of groups) {
  const base = all.get(modes[0]!)!;
  const basePeak = median(base.map((r) => r.maxRssMiB));
  const spread = Math.max(...base.map((r) => r.maxRssMiB)) - Math.min(...base.map((r) => r.maxRssMiB));
  for (const mode of modes) {
    const rs = all.get(mode)!;
    const peak = median(rs.map((r) => r.maxRssMiB));
    const bound = mode === modes[0] ? undefined : median(rs.map((r) => r.boundMs ?? 0));
    const rise = median(rs.map((r) => r.maxRssMiB - r.maxRssAfterBuildMiB));
    body.push([
      mode,
      rs.map((r) => r.maxRssMiB).join(', '),
      peak,
      mode === modes[0] ? '—' : `${peak - basePeak >= 0 ? '+' : ''}${peak - basePeak}`,
      mode === modes[0] ? '—' : `+${rise}`,
      median(rs.map((r) => r.rssAfterBuildMiB)),
      median(rs.map((r) => r.heapUsedEndMiB - r.heapUsedAfterBuildMiB)),
      bound === undefined ? '—' : fmt(bound),
    ]);
    if (mode !== modes[0]) {
      const extra = peak - basePeak;
      // No number in the issue; judged against the run-to-run spread of the build-only peak (≥ 16 MiB).
      const noise = Math.max(16, spread);
      verdicts.push(
        `${mode}: extra peak RSS ${extra} MiB over ${modes[0]} (peak rose ${rise} MiB during the bound; ` +
          `noise ±${noise} MiB) — ${extra <= noise && rise <= noise ? 'no measurable extra' : 'MEASURABLE extra memory'}`,
      );
    }
  }
}
console.log(
  '\n' +
    table(
      [
        'mode',
        'peak RSS per run (MiB)',
        'median peak RSS (MiB)',
        'extra vs build (MiB)',
        'peak rise during bound (MiB)',
        'RSS after build+GC (MiB)',
        'heap used Δ over bound (MiB)',
        'bound time (one cold call)',
      ],
      body,
    ),
);
console.log('\n' + verdicts.join('\n'));
console.log(`\nat end: ${loadLine()}`);
