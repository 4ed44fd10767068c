import { execFileSync } from 'node:child_process';
import { chmodSync, existsSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { Workspace, WorkspaceError } from '../../src/fs/confine.js';
import { GIT_WRITE_LIMITS, gitCommit, gitCreateBranch, gitCreateTag } from '../../src/git/git-writes.js';
import { GitRunner } from '../../src/git/run-git.js';

let dir: string;
let marker: string;
let ws: Workspace;
let git: GitRunner;

const sh = (...args: string[]): string =>
  execFileSync('git', ['-c', 'user.name=t', '-c', 'user.email=t@example.com', ...args], { cwd: dir, encoding: 'utf8' });

async function codeOf(p: Promise<unknown>): Promise<string> {
  try {
    await p;
    return 'ok';
  } catch (e) {
    return e instanceof WorkspaceError ? e.code : String(e);
  }
}

beforeEach(async () => {
  dir = mkdtempSync(join(tmpdir(), 'git-writes-'));
  marker = join(dir, '..', `${dir.split('/').pop()}-marker`);
  sh('init', '-q');
  writeFileSync(join(dir, 'a.txt'), 'a\n');
  sh('add', 'a.txt');
  sh('commit', '-qm', 'first');
  ws = await Workspace.open(dir);
  git = new GitRunner(ws);
});

afterEach(async () => {
  await ws.close();
  rmSync(dir, { recursive: true, force: true });
  rmSync(marker, { force: true });
});

describe('git mutations', () => {
  it('git-writes: commit stages exactly the paths given and returns a receipt', async () => {
    writeFileSync(join(dir, 'b.txt'), 'b\n');
    writeFileSync(join(dir, 'c.txt'), 'c\n');
    const r = await gitCommit(git, ws, { message: 'add b', paths: ['b.txt'] });
    expect(r.files_changed).toBe(1);
    expect(r.commit).toBe(sh('rev-parse', 'HEAD').trim());
    expect(sh('status', '--porcelain')).toContain('?? c.txt');
    expect(sh('log', '-1', '--format=%s').trim()).toBe('add b');
  });

  it('git-writes: oversized or invalid input is refused before git runs, naming the cap', async () => {
    const head = sh('rev-parse', 'HEAD');
    await expect(gitCommit(git, ws, { message: 'x'.repeat(GIT_WRITE_LIMITS.maxMessageBytes + 1) })).rejects.toMatchObject({
      code: 'INPUT_TOO_LARGE',
      data: { cap: GIT_WRITE_LIMITS.maxMessageBytes },
    });
    await expect(gitCommit(git, ws, { message: 'l\n'.repeat(GIT_WRITE_LIMITS.maxMessageLines) })).rejects.toMatchObject({ code: 'INPUT_TOO_LARGE' });
    const paths = Array.from({ length: GIT_WRITE_LIMITS.maxPaths + 1 }, (_, i) => `f${i}`);
    await expect(gitCommit(git, ws, { message: 'm', paths })).rejects.toMatchObject({ code: 'INPUT_TOO_LARGE' });
    expect(await codeOf(gitCommit(git, ws, { message: 'm', paths: ['../outside'] }))).toBe('PATH_ESCAPES_ROOT');
    expect(await codeOf(gitCommit(git, ws, { message: '   ' }))).toBe('INVALID_PARAMS');
    expect(sh('rev-parse', 'HEAD')).toBe(head);
  });

  it('git-writes: ref names follow git rules and never read as options', async () => {
    for (const bad of ['bad..name', 'a b', 'end.lock', 'x~1', 'HEAD', '']) {
      expect(await codeOf(gitCreateBranch(git, { name: bad })), bad).toBe('INVALID_PARAMS');
    }
    for (const opt of ['-f', '--force', '-D']) {
      expect(await codeOf(gitCreateBranch(git, { name: opt })), opt).toBe('INVALID_PARAMS');
      expect(await codeOf(gitCreateTag(git, { name: opt })), opt).toBe('INVALID_PARAMS');
    }
    expect(await codeOf(gitCreateBranch(git, { name: 'ok', start_point: '--orphan' }))).toBe('INVALID_PARAMS');
    expect(await codeOf(gitCreateBranch(git, { name: 'ok', start_point: 'nope' }))).toBe('NOT_FOUND');
    expect(await gitCreateBranch(git, { name: 'topic/one' })).toMatchObject({ branch: 'topic/one' });
    expect(await codeOf(gitCreateBranch(git, { name: 'topic/one' }))).toBe('IO_ERROR'); // exists already
    expect(await gitCreateTag(git, { name: 'v1', message: 'release 1' })).toMatchObject({ tag: 'v1', annotated: true });
    expect(sh('cat-file', '-t', 'v1').trim()).toBe('tag');
  });

  it('git-writes: hooks and repository-configured programs never run', async () => {
    const hook = join(dir, '.git', 'hooks', 'pre-commit');
    writeFileSync(hook, `#!/bin/sh\ntouch '${marker}'\n`);
    chmodSync(hook, 0o755);
    sh('config', 'diff.evil.textconv', `touch '${marker}'; cat`);
    sh('config', 'core.fsmonitor', `touch '${marker}'`);
    writeFileSync(join(dir, '.gitattributes'), '* diff=evil\n');
    writeFileSync(join(dir, 'a.txt'), 'changed\n');
    const r = await gitCommit(git, ws, { message: 'with hostile config', paths: ['a.txt', '.gitattributes'] });
    expect(r.files_changed).toBe(2);
    await gitCreateTag(git, { name: 't1', message: 'annotated' });
    expect(existsSync(marker)).toBe(false);
    // a filter driver cannot be switched off safely: the commit is refused before git runs
    sh('config', 'filter.evil.clean', `touch '${marker}'; cat`);
    writeFileSync(join(dir, '.gitattributes'), '* filter=evil\n');
    const head = sh('rev-parse', 'HEAD');
    expect(await codeOf(gitCommit(git, ws, { message: 'refused', paths: ['.gitattributes'] }))).toBe('UNSAFE_REPOSITORY');
    expect(sh('rev-parse', 'HEAD')).toBe(head);
    expect(existsSync(marker)).toBe(false);
  });
});
