/**
 * Hostile workspaces through `mcp-budget serve` with the SDK Client: the git tools refuse a root
 * that is not its own repository, a repository pointing elsewhere, a config they cannot make safe,
 * a root swapped after start, and never run a `git` planted in the workspace. Each case asserts no
 * outside effect (outside repository state, marker files).
 */
import { chmodSync, existsSync, mkdirSync, renameSync, symlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { ensureBuilt } from '../helpers/cli.js';
import { git } from '../helpers/git-repo.js';
import { callErr, callOk, connectClient, serveTransport, type Connected } from '../helpers/mcp-stdio.js';
import { cleanup, initRepo, repoState, tempDir } from './hostile-fixtures.js';

const dirs: string[] = [];
const conns: Connected[] = [];

/** Every git tool with arguments that would succeed on an ordinary repository. */
const CALLS: [string, Record<string, unknown>][] = [
  ['git_log', {}],
  ['git_log', { path: 'f.txt' }],
  ['git_status', {}],
  ['git_branches', {}],
  ['git_tags', {}],
  ['git_stashes', {}],
  ['git_merge_status', {}],
  ['git_commit', { message: 'hostile', paths: ['f.txt'] }],
  ['git_create_branch', { name: 'hostile-branch' }],
  ['git_create_tag', { name: 'hostile-tag', message: 'm' }],
];

async function serve(root: string, env: Record<string, string> = {}): Promise<Connected['client']> {
  const c = await connectClient(serveTransport(root, [], env));
  conns.push(c);
  return c.client;
}

/** The code each call's error text starts with (or `ok`). */
async function codes(client: Connected['client']): Promise<string[]> {
  const out: string[] = [];
  for (const [name, args] of CALLS) {
    const r = (await client.callTool({ name, arguments: args })) as { isError?: boolean; content?: { text?: string }[] };
    out.push(r.isError === true ? (r.content?.[0]?.text ?? '').split(':')[0]! : 'ok');
  }
  return out;
}

beforeAll(() => {
  ensureBuilt();
});

afterEach(async () => {
  // Servers are closed after each test: many open at once slow a loaded machine's teardown.
  for (const c of conns.splice(0)) await c.close().catch(() => undefined);
}, 30_000);

afterAll(() => cleanup(dirs));

describe('serve: confinement', () => {
  it('a root inside a parent repository: NOT_A_REPOSITORY from every git tool, the parent untouched', async () => {
    const parent = initRepo(join(tempDir('serve-parent', dirs), 'parent'));
    const root = join(parent, 'sub');
    mkdirSync(root);
    writeFileSync(join(root, 'f.txt'), 'inside\n');
    writeFileSync(join(parent, 'f.txt'), 'parent change\n');
    const before = repoState(parent);
    const client = await serve(root);
    expect(await codes(client)).toEqual(CALLS.map(() => 'NOT_A_REPOSITORY'));
    const text = await callErr(client, 'git_log', {});
    expect(text).toMatch(/git init/);
    expect(text).not.toContain(parent);
    expect(repoState(parent)).toBe(before);
  });

  it('a gitfile or a symlinked .git: UNSAFE_REPOSITORY, the other repository untouched', async () => {
    for (const kind of ['gitfile', 'symlink'] as const) {
      const base = tempDir(`serve-${kind}`, dirs);
      const other = initRepo(join(base, 'other'));
      writeFileSync(join(other, 'f.txt'), 'outside change\n');
      const root = join(base, 'root');
      mkdirSync(root);
      if (kind === 'gitfile') writeFileSync(join(root, '.git'), `gitdir: ${join(other, '.git')}\n`);
      else symlinkSync(join(other, '.git'), join(root, '.git'));
      writeFileSync(join(root, 'f.txt'), 'changed\n');
      const before = repoState(other);
      const client = await serve(root);
      expect(await codes(client), kind).toEqual(CALLS.map(() => 'UNSAFE_REPOSITORY'));
      expect(repoState(other)).toBe(before);
    }
  });

  it('the root swapped for a symlink after start: ROOT_CHANGED, the link target untouched', async () => {
    const base = tempDir('serve-swap', dirs);
    const root = initRepo(join(base, 'root'));
    const other = initRepo(join(base, 'other'));
    writeFileSync(join(other, 'f.txt'), 'outside change\n');
    const client = await serve(root);
    expect((await callOk<{ commits: unknown[] }>(client, 'git_log', {})).commits).toHaveLength(1);
    renameSync(root, join(base, 'root.old'));
    symlinkSync(other, root);
    const before = repoState(other);
    expect(await codes(client)).toEqual(CALLS.map(() => 'ROOT_CHANGED'));
    expect(repoState(other)).toBe(before);
  });
});

describe('serve: config policy', () => {
  it('a filter driver, a filter past the old output cap, a program key through an include: refused, no marker', async () => {
    const cases: [string, (root: string, marker: string) => void][] = [
      ['filter driver', (root, marker) => git(root, ['config', 'filter.evil.clean', `touch '${marker}'; cat`])],
      ['padded include', (root, marker) => {
        writeFileSync(join(root, '.git', 'pad.inc'), `[pad]\n${`\tk = ${'p'.repeat(1000)}\n`.repeat(1100)}`);
        writeFileSync(join(root, '.git', 'config'), `[core]\n\trepositoryformatversion = 0\n[include]\n${'\tpath = pad.inc\n'.repeat(5)}[filter "evil"]\n\tclean = touch '${marker}'; cat\n`);
      }],
      ['unknown program key via include', (root, marker) => {
        writeFileSync(join(root, '.git', 'x.inc'), `[hook "pre-commit"]\n\tcommand = touch '${marker}'\n\tevent = pre-commit\n`);
        git(root, ['config', 'include.path', 'x.inc']);
      }],
    ];
    for (const [name, make] of cases) {
      const base = tempDir('serve-config', dirs);
      const root = initRepo(join(base, 'root'));
      const marker = join(base, 'marker');
      make(root, marker);
      writeFileSync(join(root, '.gitattributes'), '* filter=evil\n');
      writeFileSync(join(root, 'f.txt'), 'changed\n');
      const before = repoState(root);
      const client = await serve(root);
      expect(await codes(client), name).toEqual(CALLS.map(() => 'UNSAFE_REPOSITORY'));
      expect(existsSync(marker), name).toBe(false);
      expect(repoState(root), name).toBe(before);
    }
  });

  it('a git planted in the workspace (node_modules/.bin, the root, a relative PATH entry) never runs', async () => {
    const base = tempDir('serve-path', dirs);
    const root = initRepo(join(base, 'root'));
    const marker = join(base, 'marker');
    for (const d of [join(root, 'node_modules', '.bin'), root, join(root, 'bin')]) {
      mkdirSync(d, { recursive: true });
      writeFileSync(join(d, 'git'), `#!/bin/sh\ntouch '${marker}'\nexit 1\n`);
      chmodSync(join(d, 'git'), 0o755);
    }
    const path = [join(root, 'node_modules', '.bin'), root, 'bin', '.', process.env.PATH ?? '/usr/bin:/bin'].join(':');
    const client = await serve(root, { PATH: path });
    writeFileSync(join(root, 'f.txt'), 'changed\n');
    expect(await codes(client)).toEqual(CALLS.map(() => 'ok'));
    expect(existsSync(marker)).toBe(false);
  });
});
