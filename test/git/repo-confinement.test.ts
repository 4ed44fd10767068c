/**
 * git confined to the workspace root (src/git/repo-shape.ts, src/git/run-git.ts, src/git/git-writes.ts):
 * hostile workspaces built at test time, each driven through every git tool's real function, each
 * asserting no outside effect (the outside repository's refs, HEAD, index and work tree unchanged,
 * files outside unchanged).
 */
import { execFileSync } from 'node:child_process';
import { linkSync, mkdirSync, readFileSync, renameSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { Workspace } from '../../src/fs/confine.js';
import { gitCommit } from '../../src/git/git-writes.js';
import { GitRunner } from '../../src/git/run-git.js';
import { git } from '../helpers/git-repo.js';
import { cleanup, codeOf, every, initRepo, repoState, runAll, tempDir } from './hostile-fixtures.js';

const dirs: string[] = [];
afterAll(() => cleanup(dirs));

interface Hostile {
  root: string;
  /** Repositories and files outside the root that must not change. */
  outside: string[];
}

/** Each break builds a workspace in `base` whose git would act outside the root, and says the code. */
const BREAKS: { name: string; code: string; build: (base: string) => Hostile }[] = [
  {
    name: 'root inside a parent repository (no .git of its own)',
    code: 'NOT_A_REPOSITORY',
    build: (base) => {
      const parent = initRepo(join(base, 'parent'));
      const root = join(parent, 'sub');
      mkdirSync(root);
      writeFileSync(join(root, 'f.txt'), 'inside\n');
      return { root, outside: [parent] };
    },
  },
  {
    name: '.git is a gitfile naming another repository',
    code: 'UNSAFE_REPOSITORY',
    build: (base) => {
      const other = initRepo(join(base, 'other'));
      const root = join(base, 'root');
      mkdirSync(root);
      writeFileSync(join(root, '.git'), `gitdir: ${join(other, '.git')}\n`);
      writeFileSync(join(root, 'f.txt'), 'changed\n');
      return { root, outside: [other] };
    },
  },
  {
    name: '.git is a symlink to another repository',
    code: 'UNSAFE_REPOSITORY',
    build: (base) => {
      const other = initRepo(join(base, 'other'));
      const root = join(base, 'root');
      mkdirSync(root);
      symlinkSync(join(other, '.git'), join(root, '.git'));
      writeFileSync(join(root, 'f.txt'), 'changed\n');
      return { root, outside: [other] };
    },
  },
  ...(['direct', 'include', 'includeIf'] as const).map((via) => ({
    name: `core.worktree names another work tree (${via})`,
    code: 'UNSAFE_REPOSITORY',
    build: (base: string): Hostile => {
      const other = initRepo(join(base, 'other'));
      writeFileSync(join(other, 'f.txt'), 'outside change\n');
      const root = initRepo(join(base, 'root'));
      const line = `[core]\n\tworktree = ${other}\n`;
      if (via === 'direct') git(root, ['config', 'core.worktree', other]);
      else {
        writeFileSync(join(root, '.git', 'wt.inc'), line);
        writeFileSync(join(root, '.git', 'config'), readFileSync(join(root, '.git', 'config'), 'utf8') + (via === 'include' ? '[include]\n' : '[includeIf "gitdir:**"]\n') + '\tpath = wt.inc\n');
      }
      return { root, outside: [other] };
    },
  })),
  {
    name: 'core.bare = true',
    code: 'UNSAFE_REPOSITORY',
    build: (base) => {
      const root = initRepo(join(base, 'root'));
      git(root, ['config', 'core.bare', 'true']);
      return { root, outside: [] };
    },
  },
  {
    name: '.git/commondir shares another repository',
    code: 'UNSAFE_REPOSITORY',
    build: (base) => {
      const other = initRepo(join(base, 'other'));
      const root = initRepo(join(base, 'root'));
      writeFileSync(join(root, '.git', 'commondir'), `${join(other, '.git')}\n`);
      return { root, outside: [other] };
    },
  },
  {
    name: 'objects/info/alternates points outside the root',
    code: 'UNSAFE_REPOSITORY',
    build: (base) => {
      const other = initRepo(join(base, 'other'));
      const root = initRepo(join(base, 'root'));
      writeFileSync(join(root, '.git', 'objects', 'info', 'alternates'), `${join(other, '.git', 'objects')}\n`);
      return { root, outside: [other] };
    },
  },
  ...[1, 2200].map((padding) => ({
    name: `objects/info/alternates names an outside directory after ${padding} comment lines (read whole or refused)`,
    code: 'UNSAFE_REPOSITORY',
    build: (base: string): Hostile => {
      const other = initRepo(join(base, 'other'));
      const root = initRepo(join(base, 'root'));
      const pad = '#'.repeat(32).concat('\n').repeat(padding);
      writeFileSync(join(root, '.git', 'objects', 'info', 'alternates'), `${pad}${join(other, '.git', 'objects')}\n`);
      return { root, outside: [other] };
    },
  })),
  ...['config', 'refs/heads', 'objects', 'logs', 'HEAD', 'packed-refs', 'index', 'info'].map((entry) => ({
    name: `.git/${entry} is a symlink out of the root`,
    code: 'UNSAFE_REPOSITORY',
    build: (base: string): Hostile => {
      const other = initRepo(join(base, 'other'));
      git(other, ['pack-refs', '--all']);
      const root = initRepo(join(base, 'root'));
      git(root, ['pack-refs', '--all']);
      mkdirSync(join(root, '.git', 'logs'), { recursive: true });
      rmSync(join(root, '.git', entry), { recursive: true, force: true });
      symlinkSync(join(other, '.git', entry), join(root, '.git', entry));
      return { root, outside: [other] };
    },
  })),
  {
    name: 'a FIFO where git reads (.git/packed-refs)',
    code: 'UNSAFE_REPOSITORY',
    build: (base) => {
      const root = initRepo(join(base, 'root'));
      execFileSync('mkfifo', [join(root, '.git', 'packed-refs')]);
      return { root, outside: [] };
    },
  },
];

describe('confinement breaks: every tool refuses, nothing outside changes', () => {
  for (const b of BREAKS) {
    it(b.name, async () => {
      const base = tempDir('break', dirs);
      const { root, outside } = b.build(base);
      const before = outside.map(repoState);
      expect(await runAll(root)).toEqual(every(b.code));
      expect(outside.map(repoState)).toEqual(before);
    });
  }

  it('an empty .git directory (no HEAD) is NOT_A_REPOSITORY', async () => {
    const root = join(tempDir('nohead', dirs), 'root');
    mkdirSync(join(root, '.git'), { recursive: true });
    expect(await runAll(root)).toEqual(every('NOT_A_REPOSITORY'));
  });

  it('control: the same root without the break works for every tool', async () => {
    const root = initRepo(join(tempDir('control', dirs), 'root'));
    expect(await runAll(root, { modify: true })).toEqual(every('ok'));
  });
});

describe('hard links where git writes in place', () => {
  it('a reflog or COMMIT_EDITMSG hard-linked to an outside file: reads work, mutations refuse, the file is unchanged', async () => {
    for (const entry of ['logs/HEAD', 'logs/refs/heads/main', 'COMMIT_EDITMSG']) {
      const base = tempDir('hardlink', dirs);
      const root = initRepo(join(base, 'root'));
      const victim = join(base, 'victim.txt');
      writeFileSync(victim, 'precious\n');
      rmSync(join(root, '.git', entry), { force: true });
      linkSync(victim, join(root, '.git', entry));
      const got = await runAll(root, { modify: true });
      expect(got, entry).toEqual({ ...every('ok'), git_commit: 'UNSAFE_REPOSITORY', git_create_branch: 'UNSAFE_REPOSITORY', git_create_tag: 'UNSAFE_REPOSITORY' });
      expect(readFileSync(victim, 'utf8')).toBe('precious\n');
    }
  });
});

describe('the root swapped after start', () => {
  for (const how of ['symlink to another repository', 'another directory renamed in'] as const) {
    it(`${how}: ROOT_CHANGED for every tool, the other repository unchanged`, async () => {
      const base = tempDir('swap', dirs);
      const root = initRepo(join(base, 'root'));
      const other = initRepo(join(base, 'other'));
      writeFileSync(join(other, 'f.txt'), 'outside change\n');
      const ws = await Workspace.open(root);
      expect(await runAll(ws, { only: ['git_log'] })).toEqual({ git_log: 'ok' });
      renameSync(root, join(base, 'root.old'));
      if (how === 'symlink to another repository') symlinkSync(other, root);
      else execFileSync('cp', ['-a', other, root]);
      const before = repoState(other);
      const beforeCopy = repoState(root);
      expect(await runAll(ws)).toEqual(every('ROOT_CHANGED'));
      expect(repoState(other)).toBe(before);
      expect(repoState(root)).toBe(beforeCopy);
      await ws.close();
    });
  }

  it('a runner scope re-checks the root before every spawn, not only at its first', async () => {
    const base = tempDir('swap-mid', dirs);
    const root = initRepo(join(base, 'root'));
    const other = initRepo(join(base, 'other'));
    const ws = await Workspace.open(root);
    const g = new GitRunner(ws).scope();
    await g.run(['rev-parse', 'HEAD']);
    renameSync(root, join(base, 'root.old'));
    symlinkSync(other, root);
    expect(await codeOf(g.run(['branch', 'x']))).toBe('ROOT_CHANGED');
    expect(git(other, ['branch', '--list', 'x'])).toBe('');
    await ws.close();
  });
});

describe('paths are literal and stay out of .git', () => {
  const MAGIC = [':(top)x.txt', ':/x.txt', ':(glob)**', ':(glob)*.txt', ':!f.txt', ':^f.txt', ':(exclude)f.txt', ':(icase)X.TXT', ':(attr:a)x.txt', '*', '*.txt', '[fx].txt', '?.txt', 'sub/**'];

  it('pathspec magic and globs match nothing (no file of that name): the commit fails; root and parent unchanged', async () => {
    const base = tempDir('magic', dirs);
    const parent = initRepo(join(base, 'parent'));
    writeFileSync(join(parent, 'x.txt'), 'parent file\n');
    const root = initRepo(join(parent, 'inner'));
    writeFileSync(join(root, 'f.txt'), 'changed\n');
    writeFileSync(join(root, 'x.txt'), 'untracked\n');
    mkdirSync(join(root, 'sub'));
    writeFileSync(join(root, 'sub', 'y.txt'), 'untracked\n');
    const ws = await Workspace.open(root);
    const parentBefore = repoState(parent);
    const rootBefore = repoState(root);
    for (const p of MAGIC) {
      expect(await codeOf(gitCommit(new GitRunner(ws).scope(), ws, { message: 'magic', paths: [p] })), p).not.toBe('ok');
      expect(repoState(root), p).toBe(rootBefore);
    }
    expect(repoState(parent)).toBe(parentBefore);
    await ws.close();
  });

  it('a file literally named like a magic pathspec is committed alone, nothing else', async () => {
    const root = initRepo(join(tempDir('literal', dirs), 'root'));
    writeFileSync(join(root, 'f.txt'), 'changed\n');
    const ws = await Workspace.open(root);
    for (const p of ['*', '[f].txt', ':(top)f.txt', ':!f.txt', '?']) {
      writeFileSync(join(root, p), `literal ${p}\n`);
      const r = await gitCommit(new GitRunner(ws).scope(), ws, { message: `literal ${p}`, paths: [p] });
      expect(r.files_changed, p).toBe(1);
      expect(git(root, ['diff-tree', '--no-commit-id', '--name-only', '-r', 'HEAD']).trim(), p).toBe(p);
    }
    expect(git(root, ['status', '--porcelain', 'f.txt']).trim()).toBe('M f.txt');
    await ws.close();
  });

  it('paths under a .git component (any case, folded spellings) are INVALID_PATH before git runs', async () => {
    const root = initRepo(join(tempDir('dotgit', dirs), 'root'));
    mkdirSync(join(root, 'sub', '.GIT'), { recursive: true });
    writeFileSync(join(root, 'sub', '.GIT', 'config'), '[core]\n\tworktree = /\n');
    const ws = await Workspace.open(root);
    const before = repoState(root);
    for (const p of ['.git', '.git/config', '.GIT/config', '.Git/hooks/pre-commit', 'sub/.GIT/config', 'sub/.git', '.git./x', '.git /x', 'git~1/config', 'a/./.git/x']) {
      expect(await codeOf(gitCommit(new GitRunner(ws).scope(), ws, { message: 'm', paths: [p] })), p).toBe('INVALID_PATH');
    }
    expect(repoState(root)).toBe(before);
    // git itself adds nothing under .git either (checked with the runner, bypassing the tool's check)
    const g = new GitRunner(ws);
    for (const p of ['.git/config', 'sub/.GIT/config']) await codeOf(g.run(['add', '--', p]));
    expect(git(root, ['ls-files', '--stage']).split('\n').filter((l) => /\.git\//i.test(l))).toEqual([]);
    await ws.close();
  });
});
