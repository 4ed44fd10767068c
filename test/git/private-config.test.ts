/**
 * The private copy of the repository config (src/git/private-config.ts): what git reads is what
 * the policy judged. The serializer round-trips through git's own parser for every byte a key or a
 * value may hold; includes reach only regular files inside `.git`; conditional includes are judged
 * whatever their condition and evaluated by git on the copy; the copy is private and reused only
 * while its content is the same.
 */
import { execFileSync } from 'node:child_process';
import { existsSync, mkdirSync, readFileSync, statSync, symlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { ConfigEntry } from '../../src/git/config-policy.js';
import { resolveGit } from '../../src/git/git-env.js';
import { gitCommit } from '../../src/git/git-writes.js';
import { privateCommonDir, serializeConfig } from '../../src/git/private-config.js';
import { GitRunner } from '../../src/git/run-git.js';
import { Workspace } from '../../src/fs/confine.js';
import { ensureBuilt } from '../helpers/cli.js';
import { git } from '../helpers/git-repo.js';
import { callErr, connectClient, serveTransport } from '../helpers/mcp-stdio.js';
import { cleanup, every, initRepo, runAll, tempDir } from './hostile-fixtures.js';
import { timeBox } from '../helpers/time-box.js';

const dirs: string[] = [];
beforeAll(() => ensureBuilt());
afterAll(() => cleanup(dirs));

const RUN = timeBox(150, 2000);

/** git's own listing of config text (no repository, no other source), as Latin-1. */
function gitList(text: string): string {
  return execFileSync('git', ['config', '--file', '-', '--list', '-z', '--no-includes'], {
    input: Buffer.from(text, 'latin1'),
    env: { PATH: process.env.PATH, HOME: '/nonexistent', GIT_CONFIG_NOSYSTEM: '1' },
  }).toString('latin1');
}

const byte = (chars: string): fc.Arbitrary<string> => fc.constantFrom(...chars.split(''));
/** Every byte class a value can hold: quotes, backslashes, controls, comment starts, spaces, high bytes. */
const valueChar = fc.oneof(
  { weight: 4, arbitrary: byte('abcXYZ019') },
  { weight: 3, arbitrary: byte('"\\;# =[]\t\n\b\r\x01\x1f\x7f') },
  { weight: 1, arbitrary: fc.integer({ min: 0x80, max: 0xff }).map((c) => String.fromCharCode(c)) },
);
const subChar = fc.oneof(
  { weight: 4, arbitrary: byte('abcXYZ019.-_ ') },
  { weight: 2, arbitrary: byte('"\\;#=[]\t\x01') },
  { weight: 1, arbitrary: fc.integer({ min: 0x80, max: 0xff }).map((c) => String.fromCharCode(c)) },
);
const entryArb: fc.Arbitrary<ConfigEntry> = fc
  .record({
    section: fc.stringMatching(/^[a-z][a-z0-9-]{0,6}$/),
    subsection: fc.option(fc.string({ unit: subChar, maxLength: 12 }), { nil: undefined }),
    name: fc.stringMatching(/^[a-z][a-z0-9-]{0,6}$/),
    value: fc.option(fc.string({ unit: valueChar, maxLength: 24 }), { nil: undefined }),
  })
  .map((e) => ({ scope: 'local' as const, key: `${e.section}${e.subsection === undefined ? '' : `.${e.subsection}`}.${e.name}`, ...e }));

const listing = (entries: readonly ConfigEntry[]): string => entries.map((e) => `${e.key}${e.value === undefined ? '' : `\n${e.value}`}\0`).join('');

describe('serializeConfig', () => {
  it('property: git parses the written text back to exactly the entries, whatever bytes they hold', () => {
    fc.assert(
      fc.property(fc.array(entryArb, { minLength: 1, maxLength: 40 }), (entries) => {
        expect(gitList(serializeConfig(entries))).toBe(listing(entries));
      }),
      RUN,
    );
  });
});

const opts = (root: string) => ({ git: resolveGit(root), maxConfigBytes: 1 << 20, configTimeoutMs: 5000 });

async function outcome(root: string): Promise<string> {
  return (await runAll(root, { only: ['git_status'] })).git_status!;
}

describe('includes reach only regular files inside .git', () => {
  it('inside .git (relative, nested, absolute) is copied; a missing target is skipped as git skips it', async () => {
    const root = initRepo(join(tempDir('inc-ok', dirs), 'root'));
    mkdirSync(join(root, '.git', 'sub'));
    writeFileSync(join(root, '.git', 'sub', 'b.inc'), '[user]\n\temail = nested@example.com\n');
    writeFileSync(join(root, '.git', 'a.inc'), '[include]\n\tpath = sub/b.inc\n\tpath = missing.inc\n');
    git(root, ['config', '--add', 'include.path', 'a.inc']);
    git(root, ['config', '--add', 'include.path', join(root, '.git', 'sub', 'b.inc')]);
    expect(await outcome(root)).toBe('ok');
    const ws = await Workspace.open(root);
    const dir = await privateCommonDir(ws, opts(root));
    expect(readFileSync(join(dir, 'config'), 'latin1')).toMatch(/path = "inc-1"/);
    expect(readFileSync(join(dir, 'inc-2'), 'latin1')).toContain('nested@example.com');
    await ws.close();
  });

  it('outside .git, through a link, or not a regular file: UNSAFE_REPOSITORY from every tool, nothing read', async () => {
    const cases: [string, (root: string, base: string) => void][] = [
      ['work tree file', (root) => writeFileSync(join(root, 'x.cfg'), '[user]\n\tname = x\n')],
      ['absolute outside', () => undefined],
      ['home', () => undefined],
      ['prefix', () => undefined],
      ['climbing', () => undefined],
      ['link inside .git', (root, base) => {
        writeFileSync(join(base, 'outside.cfg'), '[user]\n\tname = x\n');
        symlinkSync(join(base, 'outside.cfg'), join(root, '.git', 'link.inc'));
      }],
      ['directory', (root) => mkdirSync(join(root, '.git', 'dir.inc'))],
      ['fifo', (root) => execFileSync('mkfifo', [join(root, '.git', 'fifo.inc')])],
      ['link to a directory on the way', (root, base) => {
        mkdirSync(join(base, 'elsewhere'));
        writeFileSync(join(base, 'elsewhere', 'x.inc'), '[user]\n\tname = x\n');
        symlinkSync(join(base, 'elsewhere'), join(root, '.git', 'via'));
      }],
    ];
    const paths: Record<string, (root: string, base: string) => string> = {
      'work tree file': () => '../x.cfg',
      'absolute outside': (_, base) => join(base, 'abs.cfg'),
      home: () => '~/x.cfg',
      prefix: () => '%(prefix)/etc/x.cfg',
      climbing: () => '../../../../../../etc/hostname',
      'link inside .git': () => 'link.inc',
      directory: () => 'dir.inc',
      fifo: () => 'fifo.inc',
      'link to a directory on the way': () => 'via/x.inc',
    };
    for (const [name, make] of cases) {
      for (const form of ['include', 'includeIf'] as const) {
        const base = tempDir('inc-bad', dirs);
        const root = initRepo(join(base, 'root'));
        writeFileSync(join(base, 'abs.cfg'), '[user]\n\tname = x\n');
        make(root, base);
        const key = form === 'include' ? 'include.path' : 'includeIf.onbranch:nomatch.path';
        git(root, ['config', key, paths[name]!(root, base)]);
        const t0 = Date.now();
        expect(await runAll(root), `${name} ${form}`).toEqual(every('UNSAFE_REPOSITORY'));
        expect(Date.now() - t0, name).toBeLessThan(15_000);
      }
    }
  });

  it('a conditional include is judged whatever its condition, and applied by git as its condition says', async () => {
    const base = tempDir('inc-cond', dirs);
    const root = initRepo(join(base, 'root'));
    // never applies (no such branch), but a filter there still refuses the call
    writeFileSync(join(root, '.git', 'never.inc'), `[filter "x"]\n\tclean = touch '${join(base, 'marker')}'; cat\n`);
    git(root, ['config', 'includeIf.onbranch:no-such-branch.path', 'never.inc']);
    expect(await outcome(root)).toBe('UNSAFE_REPOSITORY');
    git(root, ['config', '--unset', 'includeIf.onbranch:no-such-branch.path']);
    // applies on main only: the identity it sets is the one the commit gets
    writeFileSync(join(root, '.git', 'main.inc'), '[user]\n\tname = On Main\n\temail = main@example.com\n');
    writeFileSync(join(root, '.git', 'other.inc'), '[user]\n\tname = Other\n\temail = other@example.com\n');
    git(root, ['config', 'includeIf.onbranch:main.path', 'main.inc']);
    git(root, ['config', 'includeIf.onbranch:other.path', 'other.inc']);
    writeFileSync(join(root, 'f.txt'), 'changed\n');
    const ws = await Workspace.open(root);
    await gitCommit(new GitRunner(ws).scope(), ws, { message: 'cond', paths: ['f.txt'] });
    await ws.close();
    expect(git(root, ['log', '-1', '--format=%an <%ae>']).trim()).toBe('On Main <main@example.com>');
    expect(existsSync(join(base, 'marker'))).toBe(false);
  });
});

describe('the private directory', () => {

  it('is 0700, outside the root, holds no program key, is reused while the content is the same and replaced when it changes', async () => {
    const base = tempDir('private', dirs);
    const root = initRepo(join(base, 'root'));
    git(root, ['config', 'core.fsmonitor', 'touch x']);
    git(root, ['config', 'core.hooksPath', '.husky']);
    git(root, ['config', 'user.name', 'Kept Name']);
    writeFileSync(join(root, '.git', 'info', 'exclude'), 'ignored-*\n');
    const ws = await Workspace.open(root);
    const a = await privateCommonDir(ws, opts(root));
    const b = await privateCommonDir(ws, opts(root));
    expect(b).toBe(a);
    expect(a.startsWith(root)).toBe(false);
    expect(statSync(join(a, '..')).mode & 0o777).toBe(0o700);
    const text = readFileSync(join(a, 'config'), 'latin1');
    expect(text).toContain('Kept Name');
    expect(text).not.toMatch(/fsmonitor|hookspath/i);
    expect(readFileSync(join(a, 'info', 'exclude'), 'utf8')).toBe('ignored-*\n');
    git(root, ['config', 'user.name', 'Changed']);
    const c = await privateCommonDir(ws, opts(root));
    expect(c).not.toBe(a);
    expect(readFileSync(join(c, 'config'), 'latin1')).toContain('Changed');
    // what a running call's git reads does not change with the workspace's config
    expect(readFileSync(join(a, 'config'), 'latin1')).toContain('Kept Name');
    await ws.close();
  });

  it('a temporary directory inside the workspace: git tools refuse with what to do, nothing runs', async () => {
    const base = tempDir('tmp-inside', dirs);
    const root = initRepo(join(base, 'root'));
    mkdirSync(join(root, 'tmp'));
    const { client, close } = await connectClient(serveTransport(root, [], { TMPDIR: join(root, 'tmp') }));
    try {
      const text = await callErr(client, 'git_status', {});
      expect(text).toMatch(/^UNSAFE_REPOSITORY: .*TMPDIR/);
      expect(text).not.toContain(root);
    } finally {
      await close();
    }
  });
});
