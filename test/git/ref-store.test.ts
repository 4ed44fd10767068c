/**
 * Refs read from the repository's files (src/git/ref-store.ts, packed-refs.ts) give exactly what
 * `git for-each-ref` gives, page after page: packed and loose refs merged in git's byte order
 * (`a-b` before `a/b`), a loose ref winning over its packed copy, annotated tags as their tag
 * object, symbolic refs resolved; malformed lines and files skipped with a warning; and a
 * repository this reader does not know (unsorted packed-refs, reftable) served by for-each-ref.
 */
import { readFileSync, rmSync, writeFileSync, mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Workspace } from '../../src/fs/confine.js';
import { CursorCodec } from '../../src/shared/cursor.js';
import { gitRefs, type RefEntry } from '../../src/git/git-reads.js';
import { GitRunner } from '../../src/git/run-git.js';
import { git, importHistory, tempRepo, type TempRepo, workspaceTracker } from '../helpers/git-repo.js';

const cursors = new CursorCodec('ref-store-test');
const repos: TempRepo[] = [];
const workspaces = workspaceTracker();
const openWorkspace = workspaces.open;
afterAll(async () => {
  await workspaces.closeAll();
  repos.forEach((r) => r.remove());
});

function build(): string {
  const r = tempRepo('ref-store');
  repos.push(r);
  const dir = r.dir;
  importHistory(dir, 3, (i) => ({ f: `${i}` }));
  const head = git(dir, ['rev-parse', 'HEAD']).trim();
  const old = git(dir, ['rev-parse', 'HEAD~1']).trim();
  const names = ['a-b', 'a/b', 'a/b-c', 'a0', 'ü/😀', 'z"q', 'deep/x/y/z', 'same'];
  git(dir, ['update-ref', '--stdin'], names.map((n) => `create refs/heads/${n} ${old}\n`).join(''));
  git(dir, ['tag', '-a', '-m', 'annotated', 'v1', 'HEAD~2']);
  git(dir, ['tag', 'v2']);
  git(dir, ['pack-refs', '--all']);
  // Loose after packing: new names, and one that overrides its packed value.
  git(dir, ['update-ref', '--stdin'], ['a/c', 'a.b', 'm/n/o'].map((n) => `create refs/heads/${n} ${head}\n`).join('') + `update refs/heads/same ${head}\n`);
  git(dir, ['symbolic-ref', 'refs/heads/alias', 'refs/heads/main']);
  git(dir, ['tag', '-a', '-m', 'loose annotated', 'v3']);
  return dir;
}

async function walk(dir: string, kind: 'heads' | 'tags', opts: { match?: string; plainGit?: boolean } = {}, limit = 2): Promise<{ refs: RefEntry[]; warnings: string[] }> {
  const g = new GitRunner(await openWorkspace(dir));
  const refs: RefEntry[] = [];
  const warnings: string[] = [];
  let cursor: string | undefined;
  for (let i = 0; i < 200; i++) {
    const p = await gitRefs(g.scope(), cursors, kind, { ...opts, limit, cursor });
    refs.push(...p.refs);
    if (p.warning !== undefined) warnings.push(p.warning);
    cursor = p.next_cursor;
    if (cursor === undefined) break;
  }
  return { refs, warnings };
}

function forEachRef(dir: string, prefix: string): RefEntry[] {
  const out = git(dir, ['for-each-ref', '--format=%(refname)%00%(objectname)%00', prefix]).split('\0').map((s) => s.replace(/^\n/, ''));
  const refs: RefEntry[] = [];
  for (let i = 0; i + 1 < out.length; i += 2) refs.push({ name: out[i]!.slice(prefix.length), target: out[i + 1]! });
  return refs;
}

describe('refs from files', () => {
  let dir: string;
  beforeAll(() => {
    dir = build();
  });

  it('equal for-each-ref page after page: merged, byte order, loose wins, tags as tag objects, symrefs resolved', async () => {
    for (const [kind, prefix] of [
      ['heads', 'refs/heads/'],
      ['tags', 'refs/tags/'],
    ] as const) {
      const want = forEachRef(dir, prefix);
      for (const limit of [1, 2, 5, 200]) expect((await walk(dir, kind, {}, limit)).refs).toEqual(want);
    }
    const heads = forEachRef(dir, 'refs/heads/').map((r) => r.name);
    expect(heads.indexOf('a-b')).toBeLessThan(heads.indexOf('a/b'));
    expect(heads).toContain('alias');
  });

  it('match gives what it gives through for-each-ref', async () => {
    for (const match of ['a', '😀', 'zz']) {
      expect((await walk(dir, 'heads', { match })).refs).toEqual((await walk(dir, 'heads', { match, plainGit: true })).refs);
    }
  });

  it('malformed packed lines and loose files are skipped with a warning, the rest listed', async () => {
    const d = build();
    const packed = join(d, '.git', 'packed-refs');
    const text = readFileSync(packed, 'utf8');
    // A bad object id on one packed line, and a name git does not accept on another.
    writeFileSync(packed, text.replace(/^[0-9a-f]{40} refs\/heads\/a0$/m, 'zzzz refs/heads/a0').replace(/^([0-9a-f]{40}) refs\/heads\/a-b$/m, '$1 refs/heads/a..b'));
    writeFileSync(join(d, '.git', 'refs', 'heads', 'garbage'), 'not an object id\n');
    writeFileSync(join(d, '.git', 'refs', 'heads', 'bad..name'), `${'1'.repeat(40)}\n`);
    const { refs, warnings } = await walk(d, 'heads', {}, 200);
    const names = refs.map((r) => r.name);
    expect(names).not.toContain('a0');
    expect(names).not.toContain('garbage');
    expect(names).not.toContain('bad..name');
    expect(names).toContain('a/b');
    expect(warnings.length).toBeGreaterThan(0);
  });

  it('an unsorted packed-refs or a reftable directory is served by for-each-ref', async () => {
    const d = build();
    const packed = join(d, '.git', 'packed-refs');
    writeFileSync(packed, readFileSync(packed, 'utf8').replace(/^# pack-refs with:.*$/m, '# pack-refs with: peeled '));
    expect((await walk(d, 'heads')).refs).toEqual(forEachRef(d, 'refs/heads/'));
    const e = build();
    mkdirSync(join(e, '.git', 'reftable'));
    expect((await walk(e, 'heads')).refs).toEqual(forEachRef(e, 'refs/heads/'));
    rmSync(join(e, '.git', 'reftable'), { recursive: true });
  });
});
