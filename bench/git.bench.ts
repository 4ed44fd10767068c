/**
 * Question: do the bounded git reads (gitLog, gitRefs, gitStatus) answer one page in a time and
 * memory that do not grow with the repository, and how much cheaper is that than the unbounded
 * git command a naive tool would run?
 *
 * Variants (each against its plain baseline, the unbounded git command read to the end through the
 * same hardened `GitRunner`, in the same run; every call takes its own `scope()`, as a serve tool
 * call does: repository checks and the config read once per call):
 *   - log: `gitLog` first page (limit 30), the page at depth via its cursor (page 30, and page 100
 *     on the large repository), and a path-filtered first call on a path touched only by the first
 *     commit (one bounded window of 2,000 commits) — vs `git log --format=%H` (all commits) and
 *     `git log --format=%H -- rare/needle.txt` (walks all history);
 *   - refs: `gitRefs('heads')` first page (limit 50) and with a `match` that matches nothing (one
 *     bounded candidate page), each read from the files (packed-refs searched and streamed, loose
 *     refs merged) and, as "before", through `git for-each-ref` — vs `git for-each-ref` of all
 *     branches;
 *   - status: `gitStatus` first page (limit 100) with the own untracked walk and, as "before", with
 *     one `ls-files --others` — vs `git status --porcelain=v2 -z -uall`, and the tracked part
 *     (`--untracked-files=no`) alone, which is O(tracked files) by nature;
 *   - memory: peak RSS of a child process doing the first log page vs one reading all of `git log`
 *     (and a no-op child), each under `/usr/bin/time -f %M`.
 * Fixture (generated once under os.tmpdir()/mcp-budget-bench-git-v2, reused while its marker is
 *   present): "large" — 50,000 commits from `git fast-import` (each touching one of 100 files;
 *   `rare/needle.txt` only in the first), 100,000 branches (`git update-ref --stdin`, one call, no
 *   reflogs, then `git pack-refs --all`) plus 10 loose branches, 5 modified tracked files and
 *   100,000 untracked empty files in 100 directories; "medium" — 5,000 commits, 10,000 branches,
 *   10,000 untracked; "small" — 1,000 commits, 1,000 branches, 1,000 untracked (100 directories).
 * Command: npm run bench:git   (npm run build && node --import tsx bench/git.bench.ts;
 *   BENCH_GIT_MEM_RUNS sets the memory runs per mode, default 3)
 * Results: bench/RESULTS.md, section "Git surfaces (issue 6)".
 * Reading: ratio = baseline median ÷ variant median in the same run; goals: a log page ≤ 60 ms, and
 *   each page flat in history / ref / tree size (large ÷ small median ≤ 1.5× counted as flat).
 */
import { spawnSync } from 'node:child_process';
import { closeSync, existsSync, mkdirSync, openSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { Bench } from 'tinybench';
import { CursorCodec } from '../dist/shared/cursor.js';
import { Workspace } from '../dist/fs/confine.js';
import { gitLog, gitRefs, gitStatus } from '../dist/git/git-reads.js';
import { GitRunner } from '../dist/git/run-git.js';
import { assert, fmt, loadLine, machineLine, rows, table, type Row } from './util.js';

const root = fileURLToPath(new URL('..', import.meta.url));
const base = join(tmpdir(), 'mcp-budget-bench-git-v2');
const RARE = 'rare/needle.txt';
const MODIFIED = 5;

interface Spec {
  name: 'large' | 'medium' | 'small';
  commits: number;
  refs: number;
  untracked: number;
  dirs: number;
}

const SPECS: Spec[] = [
  { name: 'small', commits: 1_000, refs: 1_000, untracked: 1_000, dirs: 100 },
  { name: 'medium', commits: 5_000, refs: 10_000, untracked: 10_000, dirs: 100 },
  { name: 'large', commits: 50_000, refs: 100_000, untracked: 100_000, dirs: 100 },
];
/** Loose refs created after packing, so the reader merges both sources. */
const LOOSE = 10;

function sh(args: string[], cwd: string, input?: string): string {
  const r = spawnSync('git', args, { cwd, input, encoding: 'utf8', maxBuffer: 1 << 30, env: { ...process.env, GIT_CONFIG_GLOBAL: '/dev/null', GIT_CONFIG_NOSYSTEM: '1' } });
  if (r.status !== 0) throw new Error(`git ${args[0]} failed: ${r.stderr}`);
  return r.stdout;
}

function generate(spec: Spec): { repo: string; seconds: number; generated: boolean } {
  const repo = join(base, spec.name);
  const marker = join(base, `${spec.name}.ready`);
  if (existsSync(marker)) return { repo, seconds: Number(readFileSync(marker, 'utf8')), generated: false };
  const t0 = performance.now();
  rmSync(repo, { recursive: true, force: true });
  mkdirSync(repo, { recursive: true });
  sh(['init', '-q', '-b', 'main'], repo);
  const parts: string[] = [];
  const data = (s: string): string => `data ${Buffer.byteLength(s)}\n${s}\n`;
  for (let i = 1; i <= spec.commits; i++) {
    parts.push(`commit refs/heads/main\nmark :${i}\ncommitter Bench <bench@example.com> ${1_700_000_000 + i * 60} +0000\n${data(`commit ${i}`)}`);
    parts.push(`M 100644 inline src/f${String(i % 100).padStart(2, '0')}.txt\n${data(`line ${i}\n`)}`);
    if (i === 1) parts.push(`M 100644 inline ${RARE}\n${data('needle\n')}`);
    parts.push('\n');
  }
  const marks = join(base, `${spec.name}.marks`);
  sh(['fast-import', '--quiet', `--export-marks=${marks}`], repo, parts.join(''));
  const shaOf = new Map(readFileSync(marks, 'utf8').trim().split('\n').map((l) => l.split(' ') as [string, string]));
  const refs: string[] = [];
  for (let k = 0; k < spec.refs; k++) refs.push(`create refs/heads/b-${String(k).padStart(6, '0')} ${shaOf.get(`:${((k * 7) % spec.commits) + 1}`)}\n`);
  // No reflogs: 100,000 of them would exceed the repository-shape walk's entry cap (as a clone's
  // packed remote refs have none).
  sh(['-c', 'core.logAllRefUpdates=false', 'update-ref', '--stdin'], repo, refs.join(''));
  sh(['pack-refs', '--all'], repo);
  sh(['-c', 'core.logAllRefUpdates=false', 'update-ref', '--stdin'], repo, Array.from({ length: LOOSE }, (_, k) => `create refs/heads/loose-${k} ${shaOf.get(':1')}\n`).join(''));
  sh(['reset', '-q', '--hard'], repo);
  for (let f = 0; f < MODIFIED; f++) writeFileSync(join(repo, 'src', `f${String(f).padStart(2, '0')}.txt`), 'modified\n');
  const per = spec.untracked / spec.dirs;
  for (let d = 0; d < spec.dirs; d++) {
    const dir = join(repo, `u${String(d).padStart(3, '0')}`);
    mkdirSync(dir);
    for (let n = 0; n < per; n++) closeSync(openSync(join(dir, `n${String(n).padStart(4, '0')}`), 'w'));
  }
  const seconds = (performance.now() - t0) / 1000;
  writeFileSync(marker, seconds.toFixed(1));
  return { repo, seconds, generated: true };
}

const BIG = { maxBytes: 1 << 30, timeoutMs: 120_000 };
const lines = (b: Buffer, sep: string): number => b.toString('utf8').split(sep).filter((x) => x.trim() !== '').length;

interface Case {
  group: string;
  variant: string;
  baseline: boolean;
  fn: () => Promise<unknown>;
}

async function casesFor(spec: Spec, repo: string): Promise<Case[]> {
  const ws = await Workspace.open(repo);
  // One scope per call, as serve takes per tool call: repository checks and config read once.
  const git = new GitRunner(ws);
  const cursors = new CursorCodec('fixed-key');
  const logPage = (cursor?: string) => gitLog(git.scope(), ws, cursors, { limit: 30, cursor });
  const allLog = () => git.scope().run(['log', '--no-color', '--format=%H'], BIG);
  const rareLog = () => git.scope().run(['log', '--no-color', '--format=%H', '--', RARE], BIG);
  const rarePage = () => gitLog(git.scope(), ws, cursors, { path: RARE, limit: 30, cursor: undefined });
  const refsPage = () => gitRefs(git.scope(), cursors, 'heads', { limit: 50, cursor: undefined });
  const refsNone = () => gitRefs(git.scope(), cursors, 'heads', { match: 'zzz-no-such-branch', limit: 50, cursor: undefined });
  const refsPagePlain = () => gitRefs(git.scope(), cursors, 'heads', { limit: 50, cursor: undefined, plainGit: true });
  const refsNonePlain = () => gitRefs(git.scope(), cursors, 'heads', { match: 'zzz-no-such-branch', limit: 50, cursor: undefined, plainGit: true });
  const allRefs = () => git.scope().run(['for-each-ref', '--format=%(refname)%00%(objectname)%00', 'refs/heads/'], BIG);
  const statusPage = () => gitStatus(git.scope(), cursors, { limit: 100, cursor: undefined });
  const statusPagePlain = () => gitStatus(git.scope(), cursors, { limit: 100, cursor: undefined, plainGit: true });
  const trackedOnly = () => git.scope().run(['status', '--porcelain=v2', '-z', '--untracked-files=no', '--no-renames', '--ignore-submodules=all'], BIG);
  const fullStatus = () => git.scope().run(['status', '--porcelain=v2', '-z', '-uall'], BIG);

  // Agreement checks before timing.
  const all = (await allLog()).stdout.toString('utf8').split('\n').filter((h) => h !== '');
  assert(all.length === spec.commits, `${spec.name}: git log gives ${all.length} commits`);
  const first = await logPage();
  assert(first.commits.length === 30 && first.has_more && first.commits[0]!.hash === all[0], `${spec.name}: first log page`);
  const deep = new Map<number, string>();
  let cursor = first.next_cursor;
  const lastPage = spec.name === 'large' ? 100 : 30;
  for (let p = 2; p <= lastPage; p++) {
    deep.set(p, cursor!);
    const page = await logPage(cursor);
    assert(page.commits[0]!.hash === all[(p - 1) * 30], `${spec.name}: page ${p} starts at commit ${(p - 1) * 30}`);
    cursor = page.next_cursor;
  }
  const rare = await rarePage();
  const rareAll = lines((await rareLog()).stdout, '\n');
  assert(rareAll === 1, `${spec.name}: git log -- rare gives ${rareAll}`);
  if (spec.commits > 2000) assert(rare.examined === 2000 && rare.commits.length === 0 && rare.has_more, `${spec.name}: rare first call examines one window`);
  else assert(rare.examined === spec.commits && rare.commits.length === 1 && !rare.has_more, 'small: rare first call finds the commit');
  const rp = await refsPage();
  assert(rp.refs.length === 50 && rp.has_more, `${spec.name}: refs page`);
  assert(JSON.stringify(rp) === JSON.stringify(await refsPagePlain()), `${spec.name}: refs page from files = for-each-ref page`);
  const rn = await refsNone();
  const refCount = spec.refs + 1 + LOOSE;
  assert(rn.refs.length === 0 && rn.examined === Math.min(1000, refCount) && rn.has_more === refCount > 1000, `${spec.name}: refs match-nothing`);
  assert(JSON.stringify(rn) === JSON.stringify(await refsNonePlain()), `${spec.name}: refs match-nothing from files = for-each-ref`);
  assert(lines((await allRefs()).stdout, '\0') === 2 * refCount, `${spec.name}: for-each-ref count (branches + main + loose)`);
  const sp = await statusPage();
  assert(sp.entries.length === 100 && sp.has_more && sp.entries.filter((e) => e.kind === 'tracked').length === MODIFIED, `${spec.name}: status page`);
  assert(JSON.stringify(sp.entries) === JSON.stringify((await statusPagePlain()).entries), `${spec.name}: status page = ls-files page`);
  const fullCount = lines((await fullStatus()).stdout, '\0');
  assert(fullCount === MODIFIED + spec.untracked, `${spec.name}: status -uall gives ${fullCount}`);

  const s = spec.name;
  const c: Case[] = [
    { group: `${s}: log`, variant: 'git log --format=%H, all (baseline)', baseline: true, fn: allLog },
    { group: `${s}: log`, variant: 'gitLog first page (30)', baseline: false, fn: () => logPage() },
    { group: `${s}: log`, variant: 'gitLog page 30 via cursor', baseline: false, fn: () => logPage(deep.get(30)) },
  ];
  if (s === 'large') c.push({ group: `${s}: log`, variant: 'gitLog page 100 via cursor', baseline: false, fn: () => logPage(deep.get(100)) });
  c.push(
    { group: `${s}: log -- rare`, variant: 'git log -- rare/needle.txt (baseline)', baseline: true, fn: rareLog },
    { group: `${s}: log -- rare`, variant: 'gitLog path first call', baseline: false, fn: rarePage },
    { group: `${s}: refs`, variant: 'git for-each-ref refs/heads/ (baseline)', baseline: true, fn: allRefs },
    { group: `${s}: refs`, variant: 'gitRefs first page (50), before: for-each-ref', baseline: false, fn: refsPagePlain },
    { group: `${s}: refs`, variant: 'gitRefs first page (50), files', baseline: false, fn: refsPage },
    { group: `${s}: refs`, variant: 'gitRefs match nothing, before: for-each-ref', baseline: false, fn: refsNonePlain },
    { group: `${s}: refs`, variant: 'gitRefs match nothing, files', baseline: false, fn: refsNone },
    { group: `${s}: status`, variant: 'git status --porcelain=v2 -uall (baseline)', baseline: true, fn: fullStatus },
    { group: `${s}: status`, variant: 'git status -uno alone (tracked part)', baseline: false, fn: trackedOnly },
    { group: `${s}: status`, variant: 'gitStatus first page (100), before: ls-files --others', baseline: false, fn: statusPagePlain },
    { group: `${s}: status`, variant: 'gitStatus first page (100), own walk', baseline: false, fn: statusPage },
  );
  return c;
}

function median(xs: number[]): number {
  const s = [...xs].sort((a, b) => a - b);
  return s.length % 2 ? s[(s.length - 1) / 2]! : (s[s.length / 2 - 1]! + s[s.length / 2]!) / 2;
}

function memory(repo: string, runs: number): string {
  const child = join(root, 'bench', 'git.child.ts');
  const res: Record<string, { ms: number[]; tree: number[]; own: number[] }> = {};
  for (let r = 0; r < runs; r++) {
    for (const mode of ['noop', 'page', 'full']) {
      const p = spawnSync('/usr/bin/time', ['-f', '%M', process.execPath, '--import', 'tsx', child, mode, repo], { cwd: root, encoding: 'utf8' });
      if (p.status !== 0) throw new Error(`child ${mode} failed: ${p.stderr}`);
      const out = JSON.parse(p.stdout.trim()) as { ms: number; n: number; ownMaxRssKiB: number };
      assert(mode !== 'page' || out.n === 30, 'child page has 30 commits');
      assert(mode !== 'full' || out.n === 50_000, 'child full has all commits');
      const e = (res[mode] ??= { ms: [], tree: [], own: [] });
      e.ms.push(out.ms);
      e.tree.push(Number(p.stderr.trim().split('\n').pop()) / 1024);
      e.own.push(out.ownMaxRssKiB / 1024);
    }
  }
  const noop = median(res.noop!.own);
  return table(
    ['mode', 'op time', 'peak RSS, /usr/bin/time (max of node and its git)', "node's own maxRSS", 'own − noop'],
    Object.entries(res).map(([mode, e]) => [
      mode,
      fmt(median(e.ms)),
      `${median(e.tree).toFixed(1)} MiB`,
      `${median(e.own).toFixed(1)} MiB`,
      mode === 'noop' ? '—' : `${(median(e.own) - noop).toFixed(1)} MiB`,
    ]),
  );
}

console.log(`# git surfaces — ${machineLine()}, git ${sh(['--version'], root).trim().replace('git version ', '')}\n`);
const repos = new Map<string, string>();
for (const spec of SPECS) {
  const g = generate(spec);
  repos.set(spec.name, g.repo);
  console.log(`fixture ${spec.name}: ${g.generated ? 'generated' : 'reused'} (creation ${g.seconds.toFixed(1)} s)`);
}
const all: Case[] = [];
for (const spec of SPECS) all.push(...(await casesFor(spec, repos.get(spec.name)!)));
console.log(`checks passed; ${loadLine()} before timing`);

const bench = new Bench({ time: 1000, iterations: 5, warmupTime: 200, warmupIterations: 1, throws: true });
for (const c of all) bench.add(`${c.group} | ${c.variant}`, c.fn);
await bench.run();
const r = rows(bench);
const get = (c: Case): Row => r.get(`${c.group} | ${c.variant}`)!;
console.log(`${loadLine()} after timing\n`);

const body: (string | number)[][] = [];
for (const c of all) {
  const row = get(c);
  const b = all.find((x) => x.group === c.group && x.baseline)!;
  body.push([c.group, c.variant, fmt(row.median), fmt(row.p75), row.samples, c.baseline ? '1×' : `${(get(b).median / row.median).toFixed(1)}×`]);
}
console.log(table(['case', 'variant', 'median', 'p75', 'samples', 'baseline / variant'], body));

console.log('\nFlatness (same run): large ÷ small median\n');
const flat: (string | number)[][] = [];
for (const c of all.filter((x) => x.group.startsWith('large'))) {
  const small = all.find((x) => x.group === c.group.replace('large', 'small') && x.variant === c.variant);
  const medium = all.find((x) => x.group === c.group.replace('large', 'medium') && x.variant === c.variant);
  if (small === undefined || medium === undefined) continue;
  const ratio = get(c).median / get(small).median;
  flat.push([
    c.group.replace('large: ', ''),
    c.variant,
    fmt(get(small).median),
    fmt(get(medium).median),
    fmt(get(c).median),
    `${(get(medium).median / get(small).median).toFixed(2)}×`,
    `${ratio.toFixed(2)}×`,
    c.baseline ? '(baseline)' : ratio <= 1.5 ? 'flat' : 'grows',
  ]);
}
console.log(table(['surface', 'variant', 'small', 'medium', 'large', 'medium ÷ small', 'large ÷ small', 'verdict'], flat));

const runs = Number(process.env.BENCH_GIT_MEM_RUNS ?? 3);
console.log(`\nMemory, large repository, separate processes (noop / page / full interleaved, ${runs} each, medians):\n`);
console.log(memory(repos.get('large')!, runs));
