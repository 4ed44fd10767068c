/**
 * Programs git could start by name, beyond the repository config: a git child in a nested
 * repository (a submodule's status, under that repository's own config, reached from `git commit`'s
 * nothing-to-commit path or from `git add` of a gitlink when `.gitmodules` says `ignore = none`),
 * and a `git` reached through a `PATH` entry inside the workspace that is a link at first and a
 * planted directory later. git gets an empty private `PATH` and `GIT_EXEC_PATH`, and is spawned by
 * its real path, so neither can run.
 */
import { mkdirSync, readFileSync, existsSync, rmSync, symlinkSync, utimesSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { ensureBuilt } from '../helpers/cli.js';
import { git } from '../helpers/git-repo.js';
import { callOk, connectClient, serveTransport, type Connected } from '../helpers/mcp-stdio.js';
import { cleanup, initRepo, tempDir } from './hostile-fixtures.js';

const dirs: string[] = [];
const conns: Connected[] = [];
beforeAll(() => ensureBuilt());
afterEach(async () => {
  for (const c of conns.splice(0)) await c.close().catch(() => undefined);
});
afterAll(() => cleanup(dirs));

type Result = { isError?: boolean; content?: { text?: string }[] };

/** A root whose HEAD holds a gitlink `sub`; the nested repository's own config has a filter driver. */
function nestedHostile(base: string, marker: string): string {
  const root = initRepo(join(base, 'root'));
  const sub = join(root, 'sub');
  initRepo(sub);
  git(root, ['add', 'sub']);
  git(root, ['commit', '-q', '-m', 'gitlink']);
  writeFileSync(join(sub, '.git', 'config'), `[filter "x"]\n\tclean = "touch '${marker}'; cat"\n`, { flag: 'a' });
  writeFileSync(join(sub, '.gitattributes'), '* filter=x\n');
  utimesSync(join(sub, 'f.txt'), new Date('2001-01-01'), new Date('2001-01-01')); // stat-dirty: a status would re-hash it
  return root;
}

describe('a git child in a nested repository cannot start', () => {
  it('git_commit (nothing staged, a path, the gitlink) with .gitmodules `ignore = none`: no program runs, each call answers', async () => {
    const base = tempDir('nested-child', dirs);
    const marker = join(base, 'marker');
    const root = nestedHostile(base, marker);
    const c = await connectClient(serveTransport(root));
    conns.push(c);
    await callOk(c.client, 'workspace_seed_files', { overwrite: true, files: [{ path: '.gitmodules', content: '[submodule "sub"]\n\tpath = sub\n\turl = ./sub\n\tignore = none\n' }] });
    const answers: string[] = [];
    for (const args of [{ message: 'x' }, { message: 'x', paths: ['f.txt'] }, { message: 'x', paths: ['sub'] }]) {
      const r = (await c.client.callTool({ name: 'git_commit', arguments: args })) as Result;
      answers.push(r.isError === true ? (r.content?.[0]?.text ?? '').split(':')[0]! : 'ok');
    }
    expect(answers).toEqual(['INVALID_PARAMS', 'INVALID_PARAMS', 'IO_ERROR']);
    for (const name of ['git_status', 'git_merge_status', 'git_log']) {
      const r = (await c.client.callTool({ name, arguments: {} })) as Result;
      expect(r.isError, name).not.toBe(true);
    }
    expect(existsSync(marker)).toBe(false);
  });

  it('the control: plain git commit on the same workspace runs the nested filter', () => {
    const base = tempDir('nested-control', dirs);
    const marker = join(base, 'marker');
    const root = nestedHostile(base, marker);
    writeFileSync(join(root, '.gitmodules'), '[submodule "sub"]\n\tpath = sub\n\turl = ./sub\n\tignore = none\n');
    try {
      git(root, ['commit', '-m', 'x']);
    } catch {
      // nothing to commit: the status that says so is what runs the filter
    }
    expect(existsSync(marker)).toBe(true);
  });
});

describe('git by its real path', () => {
  it('a PATH entry inside the root that is a link to a real bin directory, swapped for a planted git after the first call: never run', async () => {
    const base = tempDir('path-swap', dirs);
    const root = initRepo(join(base, 'root'));
    const marker = join(base, 'marker');
    const bin = join(root, 'node_modules', '.bin');
    mkdirSync(join(root, 'node_modules'));
    const realBin = join(base, 'realbin');
    mkdirSync(realBin);
    const systemGit = git(root, ['--exec-path']).trim(); // a directory holding git
    symlinkSync(join(systemGit, 'git'), join(realBin, 'git'));
    symlinkSync(realBin, bin);
    const c = await connectClient(serveTransport(root, [], { PATH: `${bin}:${process.env.PATH ?? '/usr/bin:/bin'}` }));
    conns.push(c);
    expect(((await c.client.callTool({ name: 'git_log', arguments: { limit: 1 } })) as Result).isError).not.toBe(true);
    rmSync(bin);
    mkdirSync(bin);
    writeFileSync(join(bin, 'git'), `#!/bin/sh\ntouch '${marker}'\nexit 1\n`, { mode: 0o755 });
    for (const name of ['git_status', 'git_log', 'git_branches']) {
      expect(((await c.client.callTool({ name, arguments: {} })) as Result).isError, name).not.toBe(true);
    }
    expect(existsSync(marker)).toBe(false);
    expect(readFileSync(join(bin, 'git'), 'utf8')).toContain('touch');
  });
});
