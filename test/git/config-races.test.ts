/**
 * git runs no program, whatever is written when (issue: git never runs a program, by
 * construction). Each loop runs for RACE_MS (4 s by default: the previous runner ran a program
 * about twice a second under them; `bench/git-races.bench.ts` runs them for a minute) while
 * commit, status and log keep going; a marker file is a program run. Controls
 * first: plain git on the same hostile content does run its programs, so the fixtures are live.
 */
import { execFileSync } from 'node:child_process';
import { cpSync, mkdirSync, readdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ensureBuilt } from '../helpers/cli.js';
import { git } from '../helpers/git-repo.js';
import { configSwapLoop, filterConfig, hostileConfig, plantHooks, serveFlipLoop } from '../helpers/git-races.js';
import { cleanup, initRepo, tempDir } from './hostile-fixtures.js';

const RACE_MS = Number(process.env.MCP_BUDGET_RACE_MS ?? 4_000);
const dirs: string[] = [];
beforeAll(() => ensureBuilt());
afterAll(() => cleanup(dirs));

/** Plain git (no policy, no private copy) on `root`: status and a commit. */
function plainGit(root: string): void {
  const env = { PATH: process.env.PATH, HOME: '/nonexistent', GIT_CONFIG_NOSYSTEM: '1', GIT_AUTHOR_NAME: 't', GIT_AUTHOR_EMAIL: 't@e', GIT_COMMITTER_NAME: 't', GIT_COMMITTER_EMAIL: 't@e' };
  writeFileSync(join(root, 'f.txt'), 'control\n');
  for (const args of [['status'], ['commit', '-q', '-am', 'control']]) {
    try {
      execFileSync('git', args, { cwd: root, env, stdio: 'ignore', timeout: 10_000 });
    } catch {
      // a signing program that only touches its marker fails the commit: the run is what counts
    }
  }
}

describe('control: plain git honours the hostile content', () => {
  it('the hostile config, its hooks and the filter run programs under plain git', () => {
    const base = tempDir('race-control', dirs);
    const root = initRepo(join(base, 'root'));
    const markers = join(base, 'markers');
    mkdirSync(markers);
    plantHooks(join(base, 'hooks'), markers);
    writeFileSync(join(root, '.git', 'config'), hostileConfig(markers, join(base, 'hooks'), filterConfig(markers)));
    writeFileSync(join(root, '.gitattributes'), '* filter=evil\n');
    plainGit(root);
    const ran = readdirSync(markers);
    expect(ran).toEqual(expect.arrayContaining(['fsmonitor', 'filter-process', 'hook-pre-commit']));
  });
});

describe('races: zero program runs, every call answered', () => {
  it(`.git/config and an included file exchanged with hostile copies while commit, status and log run (${RACE_MS} ms)`, async () => {
    const base = tempDir('race-config', dirs);
    const root = initRepo(join(base, 'root'));
    const markers = join(base, 'markers');
    mkdirSync(markers);
    const stats = await configSwapLoop(root, markers, base, RACE_MS);
    expect(stats.failures).toEqual([]);
    expect(stats.ran ?? [], JSON.stringify(stats)).toEqual([]);
    expect(stats.programRuns).toBe(0);
    // Both sides of the race were seen: calls under the clean config and refusals under the filter.
    expect(stats.outcomes.ok ?? 0).toBeGreaterThan(0);
    expect(stats.flips).toBeGreaterThan(1000);
    expect(Object.keys(stats.outcomes).every((k) => k === 'ok' || k === 'UNSAFE_REPOSITORY')).toBe(true);
  }, RACE_MS + 60_000);

  it(`an include target in the work tree flipped through serve's own tools (${RACE_MS} ms): refused, nothing runs`, async () => {
    const base = tempDir('race-include', dirs);
    const root = initRepo(join(base, 'root'));
    const markers = join(base, 'markers');
    mkdirSync(markers);
    const stats = await serveFlipLoop(root, markers, 'include-target', RACE_MS);
    expect(stats.failures).toEqual([]);
    expect(stats.ran ?? [], JSON.stringify(stats)).toEqual([]);
    expect(stats.programRuns).toBe(0);
    expect(stats.flips).toBeGreaterThan(10);
    expect(Object.keys(stats.outcomes)).toEqual(['UNSAFE_REPOSITORY']);
  }, RACE_MS + 60_000);

  it(`attributes, hooks and files the config names flipped through serve's own tools (${RACE_MS} ms): calls succeed, nothing runs`, async () => {
    const base = tempDir('race-attrs', dirs);
    const root = initRepo(join(base, 'root'));
    const markers = join(base, 'markers');
    mkdirSync(markers);
    // control on a copy: plain git would run the drivers and hooks this content names
    const copy = join(base, 'copy');
    cpSync(root, copy, { recursive: true });
    writeFileSync(join(copy, '.git', 'config'), hostileConfig(markers, '.hooks', ''));
    const stats = await serveFlipLoop(root, markers, 'attributes', RACE_MS);
    expect(stats.failures).toEqual([]);
    expect(stats.ran ?? [], JSON.stringify(stats)).toEqual([]);
    expect(stats.programRuns).toBe(0);
    expect(stats.flips).toBeGreaterThan(10);
    expect(stats.outcomes.ok ?? 0).toBeGreaterThan(10);
    expect(Object.keys(stats.outcomes)).toEqual(['ok']);
    expect(git(root, ['log', '--format=%s', '-1']).trim()).toMatch(/^race /);
  }, RACE_MS + 60_000);
});
