/**
 * Question: does `workspace_search_files` stay bounded in time and memory on a 1,000,000-entry
 * directory, against the fast-glob search it replaces? Goal: peak RSS under 150 MB for one search
 * and for 8 concurrent ones.
 *
 * Variants (same run, same fixture, warm dentry cache):
 *   - `fs.promises.readdir(big)`          — the plain baseline: the whole directory in one array
 *   - fast-glob first page                — the former search: `fg.stream('big/*.txt')` stopped at 51
 *                                           matches (fast-glob reads the whole directory before the first)
 *   - searchFiles first page              — `searchFiles('big/*.txt', limit 50)`: the confined walk
 *   - fast-glob no match                  — `fg.stream('big/*.none')` to its end (the whole directory)
 *   - searchFiles no match, one call      — `searchFiles('big/*.none')`: stops at the 100,000-entry cap
 *                                           with `truncated_scan` and a cursor
 *   - searchFiles no match, cursor walk   — every call of that walk until it ends (one timed run: each
 *                                           resume re-reads the directory to its position)
 * Asserted once before timing: the first pages hold 50 names of `big/`, the walk's page says has_more;
 * the no-match call is truncated_scan with no match; the cursor walk ends with no match.
 *
 * Memory: bench/search.child.ts, one process per reading, 1 and 8 concurrent operations per mode,
 * peak RSS = VmHWM of the child (it runs searchFiles itself; the server adds only the SDK around it).
 *
 * Fixture, under os.tmpdir()/mcp-budget-bench-search (override: BENCH_SEARCH_DIR), created once
 * (empty files, fs.openSync/closeSync in a loop) and reused while its marker file is present:
 *   big/    1,000,000 empty files `e0000000.txt` … `e0999999.txt`;  small/  100 files (warm-up)
 * Removed at the end unless BENCH_SEARCH_KEEP=1.
 *
 * Command: npm run bench:search (node --import tsx bench/search.bench.ts; it runs the sources
 * through tsx, so no build is needed). Full results: bench/RESULTS.md, section "Search".
 *
 * Results — Intel Xeon Processor (2 vCPU), 23.5 GiB RAM, Node v20.20.2, linux-x64, ext4, 2026-12-03,
 * load avg 3.1 (shared machine): first page 0.48 ms vs fast-glob 4.47 s (9,222×) and readdir 1.76 s;
 * no match, one call 106 ms (stops at the cap) vs fast-glob 3.14 s; cursor walk to the end 12 calls,
 * 13.9 s. Peak RSS: walk 79–91 MiB for 1 and 8 concurrent searches (no-op 80 MiB), fast-glob
 * 429–602 MiB for one, 1.4–1.5 GiB for 8.
 * Reading: flat memory and page-sized first pages; a cursor walk through one huge directory pays a
 * re-read to its position on every call.
 *
 * Worst-case match (run first, no fixture): what does one adversarial query cost against one
 * adversarial name, with the bounded matcher (GlobPlan: src/fs/glob-match.ts) and with the picomatch
 * regular expression the search used before (the baseline), compiled once each, in the same run?
 *   - `*a*a*ab` on 254 × `a` + `c`: 3 wildcard runs, the most the old guard let through;
 *   - `*\\*\\*\\*b` on 254 × `\` + `c`: 4 real runs that the old guard counted as 1 (an escaped
 *     backslash before a star), the defect;
 *   - the heaviest query the bounded matcher's caps accept (`**\/*[a]…{b,c,d,e}*`, 60 classes)
 *     against a 4 KiB path of 16 × 255 `a`: its own worst case (an easy one for the regex).
 * Asserted once before timing: every variant answers "no match".
 * Results — AMD EPYC (2 vCPUs), 23.5 GiB RAM, Node v20.20.2, linux-x64, 2026-12-03, shared machine.
 * Two full runs (load avg 2.0, 2.9) and two runs of this section alone (load 1.3): `*a*a*ab` 0.1–0.2
 * µs vs picomatch 1.09–1.86 ms (6,658–10,966×); `*\\*\\*\\*b` 0.1–0.2 µs vs picomatch 71–242 ms
 * (0.7–2.4 million ×; one cold call, before V8 tiers the regex up, took 0.82 s); the heaviest
 * accepted query on a 4 KiB path 5.1–5.2 ms median alone (p99 6.8–9.0 ms), 10.9–17.4 ms in the
 * loaded full runs; picomatch takes 99 µs on it (the section-alone runs).
 * Reading: on the inputs that made the old regex backtrack, the bounded matcher fails at once (its
 * last piece is anchored). Its own worst case is a few milliseconds per 4 KiB path, set by its caps,
 * and about 50× slower than the regex on that (for the regex, easy) input: the price of the bound.
 */
import { spawnSync } from 'node:child_process';
import { createRequire } from 'node:module';
import { closeSync, existsSync, mkdirSync, openSync, rmSync, writeFileSync } from 'node:fs';
import { readdir } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Bench } from 'tinybench';
import { Workspace } from '../src/fs/confine.js';
import { CursorCodec } from '../src/shared/cursor.js';
import { GlobPlan } from '../src/fs/glob-pattern.js';
import { searchFiles } from '../src/fs/search.js';
import { fastGlobSearch } from './search-fast-glob.js';
import { assert, fmt, machineLine, rows, table } from './util.js';

const ROOT = process.env.BENCH_SEARCH_DIR ?? join(tmpdir(), 'mcp-budget-bench-search');
const BIG = 1_000_000;
const MARKER = join(ROOT, '.complete');
const CHILD = join(import.meta.dirname, 'search.child.ts');

console.log(machineLine());

// Worst-case match: the bounded matcher against the former picomatch regex, same inputs, same run.
type Picomatch = (glob: string, options: { dot: boolean }) => (path: string) => boolean;
const picomatch = createRequire(import.meta.url)('picomatch') as Picomatch;
const WORST = [
  { label: '3 runs (the old cap): `*a*a*ab` on a×254+c', query: '*a*a*ab', path: `${'a'.repeat(254)}c`, slow: false },
  { label: 'guard bypass: `*\\\\*\\\\*\\\\*b` on \\×254+c', query: '*\\\\*\\\\*\\\\*b', path: `${'\\'.repeat(254)}c`, slow: true },
];
const HEAVIEST = { query: `**/*${'[a]'.repeat(60)}{b,c,d,e}*`, path: Array.from({ length: 16 }, () => 'a'.repeat(255)).join('/') };
const quick = new Bench({ name: 'worst-case match, bounded matcher', time: 1000, warmupTime: 100 });
const regex = new Bench({ name: 'worst-case match, picomatch regex', time: 0, iterations: 5, warmupTime: 0, warmupIterations: 1 });
for (const w of WORST) {
  const plan = GlobPlan.compile(w.query);
  const re = picomatch(w.query, { dot: false });
  assert(!plan.matches(w.path) && !re(w.path), `no match: ${w.query}`);
  quick.add(`GlobPlan: ${w.label}`, () => {
    plan.matches(w.path);
  });
  (w.slow ? regex : quick).add(`picomatch: ${w.label}`, () => {
    re(w.path);
  });
}
const heavy = GlobPlan.compile(HEAVIEST.query);
assert(!heavy.matches(HEAVIEST.path), 'no match: the heaviest accepted query');
const heavyRe = picomatch(HEAVIEST.query, { dot: false });
assert(!heavyRe(HEAVIEST.path), 'no match (picomatch): the heaviest accepted query');
quick.add('GlobPlan: heaviest accepted query on a 4 KiB path', () => {
  heavy.matches(HEAVIEST.path);
});
quick.add('picomatch: heaviest accepted query on a 4 KiB path', () => {
  heavyRe(HEAVIEST.path);
});
for (const b of [quick, regex]) await b.run();
const worst = [...rows(quick).values(), ...rows(regex).values()];
console.log(table(['variant', 'median', 'p99', 'samples'], worst.map((x) => [x.name, fmt(x.median), fmt(x.p99), x.samples])));
for (const w of WORST) {
  const ours = worst.find((x) => x.name === `GlobPlan: ${w.label}`)!.median;
  const theirs = worst.find((x) => x.name === `picomatch: ${w.label}`)!.median;
  console.log(`${w.label}: picomatch / GlobPlan = ${(theirs / ours).toFixed(0)}×`);
}
console.log('');

if (!existsSync(MARKER)) {
  const t0 = performance.now();
  rmSync(ROOT, { recursive: true, force: true });
  mkdirSync(join(ROOT, 'big'), { recursive: true });
  mkdirSync(join(ROOT, 'small'));
  for (let i = 0; i < 100; i++) closeSync(openSync(join(ROOT, 'small', `s${i}.txt`), 'w'));
  for (let i = 0; i < BIG; i++) closeSync(openSync(join(ROOT, 'big', `e${String(i).padStart(7, '0')}.txt`), 'w'));
  writeFileSync(MARKER, '');
  console.log(`fixture: ${BIG} files created in ${fmt(performance.now() - t0)}`);
}

const ws = await Workspace.open(ROOT);
const cursors = new CursorCodec('bench-key');
const first = await searchFiles(ws, cursors, 'big/*.txt', undefined, 50, undefined);
assert(first.matches.length === 50 && first.has_more && first.matches.every((m) => m.startsWith('big/e')), 'walk first page');
const fgFirst = await fastGlobSearch(ws.root, 'big/*.txt', 50);
assert(fgFirst.length === 51, 'fast-glob first page');
const none = await searchFiles(ws, cursors, 'big/*.none', undefined, 50, undefined);
assert(none.truncated_scan === true && none.matches.length === 0 && none.next_cursor !== undefined, 'no-match call is cut by the cap');

let calls = 0;
const tw = performance.now();
let cursor: string | undefined;
do {
  const page = await searchFiles(ws, cursors, 'big/*.none', undefined, 50, cursor);
  assert(page.matches.length === 0, 'no match in the cursor walk');
  cursor = page.next_cursor;
  calls++;
} while (cursor !== undefined);
const walkMs = performance.now() - tw;

const fast = new Bench({ name: 'search first pages', time: 2000, warmupTime: 200 });
fast.add('searchFiles first page', async () => {
  await searchFiles(ws, cursors, 'big/*.txt', undefined, 50, undefined);
});
const slow = new Bench({ name: 'search whole directory', time: 0, iterations: 7, warmupTime: 0, warmupIterations: 1 });
slow.add('readdir(big)', async () => {
  await readdir(join(ROOT, 'big'));
});
slow.add('fast-glob first page', async () => {
  await fastGlobSearch(ws.root, 'big/*.txt', 50);
});
slow.add('fast-glob no match', async () => {
  await fastGlobSearch(ws.root, 'big/*.none', 50);
});
slow.add('searchFiles no match, one call', async () => {
  await searchFiles(ws, cursors, 'big/*.none', undefined, 50, undefined);
});
for (const b of [fast, slow]) await b.run();
const r = new Map([...rows(fast), ...rows(slow)]);
const med = (n: string): number => r.get(n)!.median;

const mem: string[][] = [];
for (const [mode, n] of [['noop', 1], ['walk-first', 1], ['walk-first', 8], ['walk-none', 1], ['walk-none', 8], ['fg-first', 1], ['fg-first', 8], ['fg-none', 1], ['fg-none', 8]] as const) {
  const out = spawnSync(process.execPath, ['--import', 'tsx', CHILD, mode, ROOT, String(n)], { encoding: 'utf8', maxBuffer: 1 << 20 });
  const line = out.stdout.trim().split('\n').pop() ?? '';
  if (out.status !== 0 || !line.startsWith('{')) {
    mem.push([mode, String(n), '—', `failed (exit ${out.status}, signal ${out.signal}): ${out.stderr.slice(-200).replace(/\n/g, ' ')}`, '']);
    continue;
  }
  const j = JSON.parse(line) as { ms: number; rssBeforeMiB: number; hwmMiB: number };
  mem.push([mode, String(n), `${j.ms} ms`, `${j.hwmMiB} MiB (${(j.hwmMiB * 1.048576).toFixed(1)} MB)`, j.hwmMiB * 1.048576 < 150 ? 'yes' : 'no']);
}

console.log(
  table(
    ['variant', 'median', 'p75', 'samples', 'vs searchFiles first page'],
    [...r.values()].map((x) => [x.name, fmt(x.median), fmt(x.p75), x.samples, `${(x.median / med('searchFiles first page')).toFixed(1)}×`]),
  ),
);
console.log(`\nfast-glob first page / searchFiles first page: ${(med('fast-glob first page') / med('searchFiles first page')).toFixed(0)}×`);
console.log(`fast-glob no match / searchFiles no match one call: ${(med('fast-glob no match') / med('searchFiles no match, one call')).toFixed(1)}×`);
console.log(`searchFiles no-match cursor walk to the end: ${calls} calls, ${fmt(walkMs)} (fast-glob whole directory: ${fmt(med('fast-glob no match'))})\n`);
console.log(table(['mode', 'concurrent', 'op time', 'peak RSS (VmHWM)', '< 150 MB'], mem));

await ws.close();
if (process.env.BENCH_SEARCH_KEEP !== '1') {
  const t0 = performance.now();
  rmSync(ROOT, { recursive: true, force: true });
  console.log(`fixture removed in ${fmt(performance.now() - t0)}`);
}
