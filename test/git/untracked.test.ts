/**
 * The untracked listing (src/git/untracked.ts) gives exactly `git ls-files --others
 * --exclude-standard`, page after page, on the shapes that matter: ignore rules inside wholly
 * untracked directories (files and directories), a nested repository (listed as its directory),
 * symbolic links (listed, never followed), FIFOs (skipped), odd names, and nesting.
 */
import { execFileSync } from 'node:child_process';
import { mkdirSync, symlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { Workspace } from '../../src/fs/confine.js';
import { CursorCodec } from '../../src/fs/cursor.js';
import { gitStatus } from '../../src/git/git-reads.js';
import { GitRunner } from '../../src/git/run-git.js';
import { git, tempRepo, type TempRepo } from '../helpers/git-repo.js';

const cursors = new CursorCodec('untracked-test');
const repos: TempRepo[] = [];
afterAll(() => repos.forEach((r) => r.remove()));

describe('untracked listing', () => {
  it('equals ls-files --others --exclude-standard at every page size', async () => {
    const r = tempRepo('untracked');
    repos.push(r);
    const d = r.dir;
    writeFileSync(join(d, 'tracked.txt'), 'x');
    mkdirSync(join(d, 'src'));
    writeFileSync(join(d, 'src', 'kept.ts'), 'x');
    writeFileSync(join(d, '.gitignore'), '*.log\nbuild/\n');
    git(d, ['add', '.']);
    git(d, ['commit', '-q', '-m', 'base']);
    writeFileSync(join(d, 'src', 'new.ts'), '');
    writeFileSync(join(d, 'src', 'noise.log'), '');
    mkdirSync(join(d, 'out', 'build', 'x'), { recursive: true });
    mkdirSync(join(d, 'out', 'a-b'), { recursive: true });
    mkdirSync(join(d, 'out', 'a', 'b'), { recursive: true });
    mkdirSync(join(d, 'out', 'empty'));
    for (const f of ['out/build/x/hidden', 'out/a-b/1', 'out/a/b/2', 'out/a0', 'out/q"\u0001ü😀', 'out/skip.log', 'out/inner-ignored/.gitignore', 'out/inner-ignored/t.tmp', 'out/inner-ignored/k']) {
      mkdirSync(join(d, f, '..'), { recursive: true });
      writeFileSync(join(d, f), f.endsWith('.gitignore') ? '*.tmp\n' : '');
    }
    mkdirSync(join(d, 'nested'));
    git(join(d, 'nested'), ['init', '-q']);
    writeFileSync(join(d, 'nested', 'inside'), '');
    symlinkSync('/etc', join(d, 'out', 'link-out'));
    execFileSync('mkfifo', [join(d, 'out', 'fifo')]);
    const want = git(d, ['ls-files', '--others', '--exclude-standard', '-z']).split('\0').filter((s) => s !== '');
    expect(want).toContain('nested/');
    expect(want).toContain('out/link-out');
    const g = new GitRunner(await Workspace.open(d));
    for (const limit of [1, 2, 3, 100]) {
      const got: string[] = [];
      let cursor: string | undefined;
      for (let i = 0; i < 100; i++) {
        const p = await gitStatus(g.scope(), cursors, { limit, cursor });
        got.push(...p.entries.filter((e) => e.kind === 'untracked').map((e) => e.path));
        cursor = p.next_cursor;
        if (cursor === undefined) break;
      }
      expect(got, `limit ${limit}`).toEqual(want);
    }
  });
});
