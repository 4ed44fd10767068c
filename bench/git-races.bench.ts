/**
 * Question: under a writer racing every program source git could read, does any program run, and
 * does every call still answer? The suite runs the same loops for 10 s each
 * (`test/git/config-races.test.ts`); this runs them for a minute each (BENCH_RACE_MS).
 *
 * Loops (test/helpers/git-races.ts):
 *   - config: `.git/config` exchanged (renameat2) with a copy naming every program key git honours
 *     and hooks, and an included file inside `.git` exchanged with a filter driver, while commit,
 *     status and log run through the tool functions in this process;
 *   - include-target (serve): the config includes a work tree file that `workspace_seed_files`
 *     turns into a filter driver and back, while `git_commit`, `git_status` and `git_log` run on the
 *     same `mcp-budget serve`;
 *   - attributes (serve): the config names work tree files as hooks, attributes and ignore files
 *     and defines drivers; `.gitattributes`, those files and a hooks directory flipped through
 *     `workspace_seed_files`.
 * A program run is a marker file outside the repository. Goal: zero program runs, every call
 * answered (a result or a coded refusal).
 * Command: npm run bench:git-races   (BENCH_RACE_MS, default 60000)
 * Results: bench/RESULTS.md, section "git under races (issue 19)".
 */
import { mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { initRepo } from '../test/git/hostile-fixtures.js';
import { configSwapLoop, serveFlipLoop, type RaceStats } from '../test/helpers/git-races.js';
import { machineLine, table } from './util.js';

const MS = Number(process.env.BENCH_RACE_MS ?? 60_000);

async function run(name: string, loop: (root: string, markers: string, work: string) => Promise<RaceStats>): Promise<(string | number)[]> {
  const base = mkdtempSync(join(tmpdir(), 'mcp-budget-bench-race-'));
  try {
    const root = initRepo(join(base, 'root'));
    const markers = join(base, 'markers');
    mkdirSync(markers);
    const s = await loop(root, markers, base);
    const calls = Object.values(s.outcomes).reduce((a, b) => a + b, 0);
    const outcomes = Object.entries(s.outcomes).map(([k, v]) => `${k} ${v}`).join(', ');
    return [name, (s.ms / 1000).toFixed(1) + ' s', s.flips, calls, outcomes, s.failures.length, s.programRuns, s.programRuns === 0 && s.failures.length === 0 ? 'met' : `MISSED (${(s.ran ?? []).join(', ')})`];
  } finally {
    rmSync(base, { recursive: true, force: true });
  }
}

console.log(machineLine());
const body = [
  await run('config + include exchanged (in process)', (root, markers, work) => configSwapLoop(root, markers, work, MS)),
  await run('include target flipped (serve tools)', (root, markers) => serveFlipLoop(root, markers, 'include-target', MS)),
  await run('attributes, hooks, named files flipped (serve tools)', (root, markers) => serveFlipLoop(root, markers, 'attributes', MS)),
];
console.log(table(['loop', 'time', 'exchanges / rewrites', 'calls', 'outcomes', 'unanswered or uncoded', 'program runs', 'goal'], body));
