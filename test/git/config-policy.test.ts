/**
 * The repository config policy (src/git/config-policy.ts) and its fail-closed read
 * (src/git/run-git.ts): every program-running key git lets us override is neutralized and the tools
 * keep working; every key that cannot be is refused with UNSAFE_REPOSITORY naming it; a config the
 * runner cannot read completely (over the cap through includes, a bad line, a FIFO include) is
 * refused. Program runs are detected by marker files outside the repository.
 */
import { execFileSync } from 'node:child_process';
import { appendFileSync, chmodSync, existsSync, mkdirSync, readdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { parseConfigList, vetEntry } from '../../src/git/config-policy.js';
import { FIXED_OVERRIDES } from '../../src/git/git-env.js';
import { GitRunner } from '../../src/git/run-git.js';
import { Workspace, WorkspaceError } from '../../src/fs/confine.js';
import { gitStatus } from '../../src/git/git-reads.js';
import { CursorCodec } from '../../src/shared/cursor.js';
import { git } from '../helpers/git-repo.js';
import { cleanup, every, initRepo, repoState, runAll, tempDir } from './hostile-fixtures.js';

const dirs: string[] = [];
afterAll(() => cleanup(dirs));

/** Keys git 2.39 runs as a program (or passes to one) that an override switches off. */
const NEUTRALIZED_KEYS = [
  'core.fsmonitor',
  'core.pager',
  'pager.log',
  'pager.status',
  'pager.branch',
  'pager.tag',
  'pager.diff',
  'core.editor',
  'sequence.editor',
  'diff.external',
  'diff.x.textconv',
  'diff.x.command',
  'merge.x.driver',
  'core.sshCommand',
  'core.askPass',
  'credential.helper',
  'credential.https://example.com.helper',
  'core.gitProxy',
  'core.alternateRefsCommand',
  'uploadpack.packObjectsHook',
  'gpg.program',
  'gpg.openpgp.program',
  'gpg.x509.program',
  'gpg.ssh.program',
  'gpg.ssh.defaultKeyCommand',
  'interactive.diffFilter',
  'imap.tunnel',
  'http.proxy',
  'http.https://example.com.proxy',
  'remote.origin.proxy',
  'remote.origin.uploadpack',
  'remote.origin.receivepack',
  'submodule.x.update',
  'trailer.x.command',
  'difftool.x.cmd',
  'mergetool.x.cmd',
  'mergetool.x.path',
  'browser.x.cmd',
  'sendemail.smtpServer',
  'sendemail.toCmd',
];

/** Keys that name a program with no safe override, or point git outside the root. */
const REFUSED_KEYS = [
  'filter.x.clean',
  'filter.x.smudge',
  'filter.x.process',
  'filter.a=b.clean',
  'filter.a.b.c.clean',
  'filter.X Y.smudge',
  'hook.pre-commit.command',
  'tool.x.cmd',
  'foo.bar.program',
  'some.helper',
  'lfs.x.driver',
  'x.y.askpass',
  'x.editor',
  'x.y.textconv',
  'x.proxy',
  'x.tunnel',
  'x.exec',
];

/** A value per key that makes git run `touch <marker>` if the key is honoured. */
function hostileValue(key: string, marker: string): string {
  if (key === 'submodule.x.update') return `!touch '${marker}'`;
  if (key === 'core.fsmonitor') return `touch '${marker}'; false`;
  return `touch '${marker}'; cat`;
}

/** A key as git prints it: section and name lower case, subsection as written. */
const printed = (key: string): string => key.replace(/^([^.]+)/, (s) => s.toLowerCase()).replace(/\.([^.]+)$/, (s) => s.toLowerCase());

describe('parseConfigList', () => {
  it('parses key, subsection (with dots, "=", spaces) and bare keys', () => {
    const out = 'core.bare\nfalse\0filter.a.b=c d.clean\ntouch x\0pager.log\0';
    expect(parseConfigList(out, 'local')).toEqual([
      { scope: 'local', key: 'core.bare', section: 'core', subsection: undefined, name: 'bare', value: 'false' },
      { scope: 'local', key: 'filter.a.b=c d.clean', section: 'filter', subsection: 'a.b=c d', name: 'clean', value: 'touch x' },
      { scope: 'local', key: 'pager.log', section: 'pager', subsection: undefined, name: 'log', value: undefined },
    ]);
  });

  it('odd output refuses: cut records, malformed keys', () => {
    for (const odd of ['core.bare\nfalse', 'nodot\0', '.x\0', 'a.1x\0', 'a b.c\0']) {
      expect(() => parseConfigList(odd, 'local'), JSON.stringify(odd)).toThrow(WorkspaceError);
    }
  });
});

describe('vetEntry (pure)', () => {
  const entry = (key: string, value: string | undefined = 'touch m') => parseConfigList(`${key}${value === undefined ? '' : `\n${value}`}\0`, 'local')[0]!;

  it('every program key is left out of the private config; so is every fixed override and extensions.worktreeConfig', () => {
    for (const key of NEUTRALIZED_KEYS) expect(vetEntry(entry(printed(key))), key).toBe(false);
    for (const [key] of FIXED_OVERRIDES) expect(vetEntry(entry(printed(key), 'x')), key).toBe(false);
    expect(vetEntry(entry('extensions.worktreeconfig', 'true'))).toBe(false);
    expect(vetEntry(entry('core.hookspath', '.husky'))).toBe(false);
  });

  it('every refused key throws UNSAFE_REPOSITORY naming it', () => {
    for (const key of [...REFUSED_KEYS, 'core.worktree', 'extensions.partialclone', 'extensions.unknown', 'remote.origin.promisor']) {
      const e = entry(printed(key));
      expect(() => vetEntry(e), key).toThrow(expect.objectContaining({ code: 'UNSAFE_REPOSITORY', data: { key: e.key } }));
    }
    expect(() => vetEntry(entry('core.bare', 'true'))).toThrow(expect.objectContaining({ code: 'UNSAFE_REPOSITORY' }));
    expect(() => vetEntry(parseConfigList('core.bare\0', 'local')[0]!)).toThrow(expect.objectContaining({ code: 'UNSAFE_REPOSITORY' }));
  });

  it('empty programs, booleans and data keys are kept', () => {
    for (const [k, v] of [['filter.x.clean', ''], ['filter.x.required', 'true'], ['core.bare', 'false'], ['uploadpack.allowfilter', 'true'], ['user.email', 'a@b'], ['safe.directory', '*'], ['extensions.objectformat', 'sha1']] as const) {
      expect(vetEntry(entry(k, v)), k).toBe(true);
    }
  });
});

describe('neutralized keys on real repositories', () => {
  it('all known program keys at once, plus hooks under core.hooksPath: every tool works and no marker appears (control: plain git runs them)', async () => {
    const base = tempDir('neutral-all', dirs);
    const root = initRepo(join(base, 'root'));
    const markers = join(base, 'markers');
    mkdirSync(markers);
    NEUTRALIZED_KEYS.forEach((key, i) => git(root, ['config', key, hostileValue(key, join(markers, `k${i}`))]));
    for (const k of ['commit.gpgSign', 'tag.gpgSign', 'tag.forceSignAnnotated', 'log.showSignature']) git(root, ['config', k, 'true']);
    // husky-style hooks directory: the path is overridden, so none of these runs
    mkdirSync(join(root, '.husky'));
    for (const hook of ['pre-commit', 'prepare-commit-msg', 'commit-msg', 'post-commit', 'reference-transaction', 'post-index-change', 'pre-auto-gc']) {
      writeFileSync(join(root, '.husky', hook), `#!/bin/sh\ntouch '${join(markers, hook)}'\n`);
      chmodSync(join(root, '.husky', hook), 0o755);
      writeFileSync(join(root, '.git', 'hooks', hook), `#!/bin/sh\ntouch '${join(markers, `git-${hook}`)}'\n`);
      chmodSync(join(root, '.git', 'hooks', hook), 0o755);
    }
    git(root, ['config', 'core.hooksPath', '.husky']);
    writeFileSync(join(root, '.gitattributes'), '* diff=x merge=x\n');
    git(root, ['add', '.gitattributes']);
    // control: an ordinary git honours this config (fsmonitor and hooks run)
    execFileSync('git', ['-c', 'user.name=t', '-c', 'user.email=t@e', '-c', 'commit.gpgSign=false', 'commit', '-q', '-m', 'control'], { cwd: root, env: { PATH: process.env.PATH, HOME: '/nonexistent', GIT_CONFIG_NOSYSTEM: '1' } });
    expect(readdirSync(markers).length).toBeGreaterThan(0);
    for (const m of readdirSync(markers)) execFileSync('rm', ['-f', join(markers, m)]);
    for (const name of readdirSync(root)) if (!['.git', 'f.txt', '.gitattributes', '.husky'].includes(name)) execFileSync('rm', ['-rf', join(root, name)]);

    expect(await runAll(root, { modify: true })).toEqual(every('ok'));
    expect(readdirSync(markers)).toEqual([]);
  });

  it('each key alone, also written in odd case and through an include chain', async () => {
    const cursors = new CursorCodec('k');
    for (const [i, key] of NEUTRALIZED_KEYS.entries()) {
      const base = tempDir(`neutral-${i}`, dirs);
      const root = initRepo(join(base, 'root'));
      const marker = join(base, 'marker');
      // section and name in upper case, through two include levels
      const odd = key.replace(/^([^.]+)/, (s) => s.toUpperCase()).replace(/\.([^.]+)$/, (s) => s.toUpperCase());
      const dot = odd.indexOf('.');
      const last = odd.lastIndexOf('.');
      const section = dot === last ? `[${odd.slice(0, dot)}]` : `[${odd.slice(0, dot)} "${odd.slice(dot + 1, last)}"]`;
      writeFileSync(join(root, '.git', 'b.inc'), `${section}\n\t${odd.slice(last + 1)} = "${hostileValue(key, marker).replace(/"/g, '\\"')}"\n`);
      writeFileSync(join(root, '.git', 'a.inc'), '[include]\n\tpath = b.inc\n');
      appendFileSync(join(root, '.git', 'config'), '[includeIf "onbranch:main"]\n\tpath = a.inc\n');
      writeFileSync(join(root, 'f.txt'), `two ${i}\n`);
      const ws = await Workspace.open(root);
      await gitStatus(new GitRunner(ws), cursors, { limit: 10, cursor: undefined });
      expect(await runAll(ws, { modify: true, only: ['git_status', 'git_log path', 'git_commit', 'git_create_tag'] }), key).toEqual({
        git_status: 'ok',
        'git_log path': 'ok',
        git_commit: 'ok',
        git_create_tag: 'ok',
      });
      await ws.close();
      expect(existsSync(marker), key).toBe(false);
    }
  });
});

describe('refused keys on real repositories', () => {
  it('each refused key, directly or through includeIf, refuses every tool; nothing runs or changes', async () => {
    for (const [i, key] of REFUSED_KEYS.entries()) {
      for (const via of ['direct', 'include'] as const) {
        const base = tempDir(`refused-${i}-${via}`, dirs);
        const root = initRepo(join(base, 'root'));
        const marker = join(base, 'marker');
        const target = via === 'direct' ? join(root, '.git', 'config') : join(root, '.git', 'x.inc');
        if (via === 'include') appendFileSync(join(root, '.git', 'config'), '[includeIf "gitdir:**"]\n\tpath = x.inc\n');
        execFileSync('git', ['config', '--file', target, key, `touch '${marker}'; cat`]);
        writeFileSync(join(root, '.gitattributes'), '* filter=x diff=x\n');
        writeFileSync(join(root, 'f.txt'), 'changed\n');
        const before = repoState(root);
        expect(await runAll(root), `${key} ${via}`).toEqual(every('UNSAFE_REPOSITORY'));
        expect(existsSync(marker), key).toBe(false);
        expect(repoState(root)).toBe(before);
      }
    }
  });

  it('the refusal names the key and says what to do', async () => {
    const root = initRepo(join(tempDir('refused-msg', dirs), 'root'));
    git(root, ['config', 'filter.lfs.clean', 'git-lfs clean -- %f']);
    const ws = await Workspace.open(root);
    const err = await gitStatus(new GitRunner(ws), new CursorCodec('k'), { limit: 5, cursor: undefined }).catch((e: unknown) => e);
    expect(err).toMatchObject({ code: 'UNSAFE_REPOSITORY', data: { key: 'filter.lfs.clean' } });
    expect((err as Error).message).toMatch(/`filter\.lfs\.clean`.*git config --unset/);
    expect((err as Error).message).not.toContain(root);
    await ws.close();
  });
});

describe('a config that cannot be read completely refuses the call', () => {
  /** Padding entries in an include file, then a filter driver after them (past any cut). */
  function padded(root: string, marker: string, includes: number, bytes: number): void {
    const line = `\tkey = ${'p'.repeat(200)}\n`;
    writeFileSync(join(root, '.git', 'pad.inc'), `[pad]\n${line.repeat(Math.ceil(bytes / line.length))}`);
    appendFileSync(join(root, '.git', 'config'), '[include]\n' + '\tpath = pad.inc\n'.repeat(includes));
    appendFileSync(join(root, '.git', 'config'), `[filter "late"]\n\tclean = touch '${marker}'; cat\n`);
    writeFileSync(join(root, '.gitattributes'), '* filter=late\n');
    writeFileSync(join(root, 'f.txt'), 'changed\n');
  }

  it('padded past the cap through repeated includes (a small cap, and the default 4 MiB cap)', async () => {
    for (const [cap, includes, bytes] of [
      [64 * 1024, 8, 10 * 1024],
      [undefined, 5, 1024 * 1024],
    ] as const) {
      const base = tempDir('padded', dirs);
      const root = initRepo(join(base, 'root'));
      const marker = join(base, 'marker');
      padded(root, marker, includes, bytes);
      const before = repoState(root);
      const got = await runAll(root, cap === undefined ? {} : { maxConfigBytes: cap });
      expect(got, String(cap)).toEqual(every('UNSAFE_REPOSITORY'));
      expect(existsSync(marker)).toBe(false);
      expect(repoState(root)).toBe(before);
    }
  });

  it('a huge value, a bad line, an include of a FIFO or /dev/zero: refused, within the time cap', async () => {
    const cases: [string, (root: string) => void][] = [
      ['huge value', (root) => appendFileSync(join(root, '.git', 'config'), `[x]\n\ty = ${'v'.repeat(5 * 1024 * 1024)}\n`)],
      ['bad line', (root) => appendFileSync(join(root, '.git', 'config'), '[core\n\tnot valid\n')],
      ['fifo include', (root) => {
        execFileSync('mkfifo', [join(root, '.git', 'fifo')]);
        appendFileSync(join(root, '.git', 'config'), '[include]\n\tpath = fifo\n');
      }],
      ['dev zero include', (root) => appendFileSync(join(root, '.git', 'config'), '[include]\n\tpath = /dev/zero\n')],
    ];
    for (const [name, make] of cases) {
      const root = initRepo(join(tempDir('unreadable', dirs), 'root'));
      make(root);
      const t0 = Date.now();
      const got = await runAll(root, { configTimeoutMs: 400 });
      expect(got, name).toEqual(every('UNSAFE_REPOSITORY'));
      expect(Date.now() - t0, name).toBeLessThan(20_000);
    }
  });

  it('core.worktree, core.bare or a filter in config.worktree (extensions.worktreeConfig) refuse; a neutralized key there works', async () => {
    for (const [key, value, want] of [
      ['core.worktree', '/', 'UNSAFE_REPOSITORY'],
      ['core.bare', 'true', 'UNSAFE_REPOSITORY'],
      ['filter.x.clean', 'touch MARKER; cat', 'UNSAFE_REPOSITORY'],
      ['core.fsmonitor', 'touch MARKER', 'ok'],
    ] as const) {
      const base = tempDir('wtconfig', dirs);
      const root = initRepo(join(base, 'root'));
      const marker = join(base, 'marker');
      git(root, ['config', 'core.repositoryformatversion', '1']);
      git(root, ['config', 'extensions.worktreeConfig', 'true']);
      git(root, ['config', '--worktree', key, value.replace('MARKER', `'${marker}'`)]);
      writeFileSync(join(root, '.gitattributes'), '* filter=x\n');
      expect(await runAll(root, { modify: true }), key).toEqual(every(want));
      expect(existsSync(marker), key).toBe(false);
    }
  });

  it("the server's own GIT_* environment never reaches git", async () => {
    const base = tempDir('env', dirs);
    const root = initRepo(join(base, 'root'));
    const outside = initRepo(join(base, 'outside'));
    const marker = join(base, 'marker');
    const saved = { ...process.env };
    const before = repoState(outside);
    Object.assign(process.env, {
      GIT_DIR: join(outside, '.git'),
      GIT_WORK_TREE: outside,
      GIT_CONFIG_PARAMETERS: `'core.fsmonitor'='touch ${marker}'`,
      GIT_CONFIG_COUNT: '1',
      GIT_CONFIG_KEY_0: 'core.pager',
      GIT_CONFIG_VALUE_0: `touch ${marker}`,
      GIT_EXTERNAL_DIFF: `touch ${marker}`,
      GIT_SSH_COMMAND: `touch ${marker}`,
      GIT_INDEX_FILE: join(outside, '.git', 'index'),
      GIT_OBJECT_DIRECTORY: join(outside, '.git', 'objects'),
    });
    try {
      expect(await runAll(root, { modify: true })).toEqual(every('ok'));
    } finally {
      for (const k of Object.keys(process.env)) if (!(k in saved)) delete process.env[k];
      Object.assign(process.env, saved);
    }
    expect(repoState(outside)).toBe(before);
    expect(existsSync(marker)).toBe(false);
    expect(git(root, ['log', '--format=%s', '-1']).trim()).toBe('hostile');
  });
});
