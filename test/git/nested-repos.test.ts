/**
 * Nested repositories (a submodule's work tree inside the root, or a gitfile there naming a
 * repository outside): its config, attributes and filters are the attacker's and were never read
 * by the policy, so no git tool may make git run a child `git status` inside it. Every tool runs
 * against each layout; a marker file proves that no filter ran, and the outside repository is
 * unchanged.
 */
import { existsSync, mkdirSync, rmSync, utimesSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { git } from '../helpers/git-repo.js';
import { OPERATIONS, cleanup, initRepo, repoState, runAll, tempDir } from './hostile-fixtures.js';

const dirs: string[] = [];
afterAll(() => cleanup(dirs));

/** A nested repository at `sub` whose filter writes `marker`, recorded in the root as a gitlink. */
function nestedLayout(base: string, marker: string, gitfile: boolean): { root: string; outside: string[] } {
  const root = initRepo(join(base, 'root'));
  const sub = join(root, 'sub');
  const outside: string[] = [];
  if (gitfile) {
    const victim = initRepo(join(base, 'victim'));
    writeFileSync(join(victim, '.gitattributes'), '* filter=evil\n');
    git(victim, ['add', '.gitattributes']);
    git(victim, ['commit', '-q', '-m', 'attrs']);
    git(victim, ['config', 'filter.evil.clean', `sh -c "touch '${marker}'; cat"`]);
    mkdirSync(sub);
    writeFileSync(join(sub, '.git'), `gitdir: ${join(victim, '.git')}\n`);
    outside.push(victim);
  } else {
    initRepo(sub);
    writeFileSync(join(sub, '.gitattributes'), '* filter=evil\n');
    git(sub, ['add', '.gitattributes']);
    git(sub, ['commit', '-q', '-m', 'attrs']);
    git(sub, ['config', 'filter.evil.clean', `sh -c "touch '${marker}'; cat"`]);
  }
  // A gitlink in the root's index, and a stat-dirty file inside so git would look into it.
  const head = gitfile ? git(outside[0]!, ['rev-parse', 'HEAD']).trim() : git(sub, ['rev-parse', 'HEAD']).trim();
  git(root, ['update-index', '--add', '--cacheinfo', `160000,${head},sub`]);
  git(root, ['commit', '-q', '-m', 'sub']);
  const f = gitfile ? join(outside[0]!, 'f.txt') : join(sub, 'f.txt');
  utimesSync(f, new Date('2000-01-01'), new Date('2000-01-01'));
  rmSync(marker, { force: true }); // building the layout with a plain git may have run it
  return { root, outside };
}

describe('nested repositories never run a child git', () => {
  for (const gitfile of [false, true]) {
    it(`${gitfile ? 'a gitfile naming an outside repository' : 'a nested repository with its own filter'}: every tool, no filter run, nothing outside changed`, async () => {
      const base = tempDir('nested', dirs);
      const marker = join(base, 'MARKER');
      const { root, outside } = nestedLayout(base, marker, gitfile);
      const before = outside.map(repoState);
      rmSync(marker, { force: true }); // the snapshot's own plain `git status` may have run it
      const outcomes: Record<string, string> = {};
      for (const op of OPERATIONS) {
        Object.assign(outcomes, await runAll(root, { modify: true, only: [op.tool] }));
        if (existsSync(marker)) outcomes[op.tool] += ' RAN THE FILTER';
        rmSync(marker, { force: true });
      }
      expect(Object.values(outcomes).join(' '), JSON.stringify(outcomes)).not.toContain('RAN THE FILTER');
      expect(outside.map(repoState)).toEqual(before);
      // the tools keep working on the root's own repository
      expect(outcomes.git_log).toBe('ok');
      expect(outcomes.git_merge_status).toBe('ok');
      rmSync(marker, { force: true });
    });
  }
});
