/**
 * Unit tests of the bounded git reads (src/git/git-reads.ts) and the hardened runner
 * (src/git/run-git.ts), against real repositories built at test time under the OS temp dir.
 */
import { mkdtempSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Workspace, WorkspaceError } from '../../src/fs/confine.js';
import { CursorCodec } from '../../src/shared/cursor.js';
import { LOG_WALK_WINDOW, REF_CANDIDATES, gitLog, gitRefs, gitStatus, type Commit, type StatusEntry } from '../../src/git/git-reads.js';
import { GitRunner, checkNotOption } from '../../src/git/run-git.js';
import { createRefs, existsSync, git, gitStatusCode, importHistory, makeFilterHostile, makeHostile, tempRepo, type TempRepo, workspaceTracker } from '../helpers/git-repo.js';

const cursors = new CursorCodec('unit-test-key');

async function codeOf(p: Promise<unknown>): Promise<string> {
  try {
    await p;
  } catch (e) {
    if (e instanceof WorkspaceError) return e.code;
    throw e;
  }
  throw new Error('expected a WorkspaceError');
}

const workspaces = workspaceTracker();
const openWorkspace = workspaces.open;

async function open(dir: string): Promise<{ g: GitRunner; ws: Workspace }> {
  const ws = await openWorkspace(dir);
  return { g: new GitRunner(ws), ws };
}

const repos: TempRepo[] = [];
const scratch = mkdtempSync(join(tmpdir(), 'mcp-budget-git-scratch-'));
afterAll(async () => {
  await workspaces.closeAll();
  for (const r of repos) r.remove();
  rmSync(scratch, { recursive: true, force: true });
});
function repo(prefix: string): TempRepo {
  const r = tempRepo(prefix);
  repos.push(r);
  return r;
}

describe('checkNotOption', () => {
  it('refuses option-like, NUL-bearing and over-long values', () => {
    expect(() => checkNotOption('ref', '--output=x')).toThrow(/may not start with "-"/);
    expect(() => checkNotOption('ref', 'a\0b')).toThrow(WorkspaceError);
    expect(() => checkNotOption('ref', 'a'.repeat(1025))).toThrow(WorkspaceError);
    expect(checkNotOption('ref', 'main')).toBe('main');
  });
});

describe('gitLog paging (120 commits)', () => {
  let dir: string;
  beforeAll(() => {
    dir = repo('log').dir;
    importHistory(dir, 120, (i) => ({ 'a.txt': `v${i}\n`, ...(i % 10 === 0 ? { 'tens.txt': `t${i}\n` } : {}) }));
  });

  it('limit 50 gives 3 pages covering rev-list exactly once, newest first', async () => {
    const { g, ws } = await open(dir);
    const want = git(dir, ['rev-list', 'HEAD']).trim().split('\n');
    const got: Commit[] = [];
    const pages: { n: number; more: boolean }[] = [];
    let cursor: string | undefined;
    do {
      const p = await gitLog(g, ws, cursors, { limit: 50, cursor });
      got.push(...p.commits);
      pages.push({ n: p.commits.length, more: p.has_more });
      expect(p.has_more).toBe(p.next_cursor !== undefined);
      cursor = p.next_cursor;
    } while (cursor !== undefined && pages.length < 10);
    expect(pages).toEqual([
      { n: 50, more: true },
      { n: 50, more: true },
      { n: 20, more: false },
    ]);
    expect(got.map((c) => c.hash)).toEqual(want);
    expect(new Set(got.map((c) => c.hash)).size).toBe(120);
    expect(got[0]!.subject).toBe('c120');
    expect(got[119]!.parents).toEqual([]);
    expect(got[0]!.parents).toEqual([want[1]]);
  });

  it('later pages are fixed on the first page: new commits do not shift them', async () => {
    const d = repo('log-fixed').dir;
    importHistory(d, 10, (i) => ({ f: `${i}` }));
    const { g, ws } = await open(d);
    const p1 = await gitLog(g, ws, cursors, { limit: 4, cursor: undefined });
    git(d, ['commit', '-q', '--allow-empty', '-m', 'later']);
    const p2 = await gitLog(g, ws, cursors, { limit: 4, cursor: p1.next_cursor });
    expect(p2.commits.map((c) => c.subject)).toEqual(['c6', 'c5', 'c4', 'c3']);
  });

  it('a tampered cursor, or one reused with another ref or path, is INVALID_CURSOR', async () => {
    const { g, ws } = await open(dir);
    const p = await gitLog(g, ws, cursors, { limit: 50, cursor: undefined });
    const c = p.next_cursor!;
    const [body, sig] = c.split('.') as [string, string];
    const forged = Buffer.from(JSON.stringify({ ...JSON.parse(Buffer.from(body, 'base64url').toString()), s: 0 })).toString('base64url');
    expect(await codeOf(gitLog(g, ws, cursors, { limit: 50, cursor: `${forged}.${sig}` }))).toBe('INVALID_CURSOR');
    expect(await codeOf(gitLog(g, ws, cursors, { limit: 50, cursor: c.slice(0, -2) + (c.endsWith('AA') ? 'BB' : 'AA') }))).toBe('INVALID_CURSOR');
    expect(await codeOf(gitLog(g, ws, cursors, { limit: 50, cursor: 'garbage' }))).toBe('INVALID_CURSOR');
    expect(await codeOf(gitLog(g, ws, cursors, { ref: 'main', limit: 50, cursor: c }))).toBe('INVALID_CURSOR');
    expect(await codeOf(gitLog(g, ws, cursors, { path: 'a.txt', limit: 50, cursor: c }))).toBe('INVALID_CURSOR');
    // a cursor of another codec (another server) is refused too
    expect(await codeOf(gitLog(g, ws, new CursorCodec('other'), { limit: 50, cursor: c }))).toBe('INVALID_CURSOR');
  });

  it('a ref starting with "-" is refused before git runs', async () => {
    const { g, ws } = await open(dir);
    const out = join(scratch, 'log-output');
    for (const ref of [`--output=${out}`, '-p', `--output=${join(dir, 'inside')}`]) {
      expect(await codeOf(gitLog(g, ws, cursors, { ref, limit: 5, cursor: undefined }))).toBe('INVALID_PARAMS');
      expect(await codeOf(gitLog(g, ws, cursors, { ref, path: 'a.txt', limit: 5, cursor: undefined }))).toBe('INVALID_PARAMS');
    }
    expect(existsSync(out)).toBe(false);
    expect(existsSync(join(dir, 'inside'))).toBe(false);
  });

  it('an unknown ref is NOT_FOUND; hash and HEAD~n refs work', async () => {
    const { g, ws } = await open(dir);
    expect(await codeOf(gitLog(g, ws, cursors, { ref: 'nope', limit: 5, cursor: undefined }))).toBe('NOT_FOUND');
    expect(await codeOf(gitLog(g, ws, cursors, { ref: 'nope', path: 'a.txt', limit: 5, cursor: undefined }))).toBe('NOT_FOUND');
    const h = git(dir, ['rev-parse', 'HEAD~3']).trim();
    const byHash = await gitLog(g, ws, cursors, { ref: h, limit: 2, cursor: undefined });
    expect(byHash.commits[0]!.hash).toBe(h);
    const byRel = await gitLog(g, ws, cursors, { ref: 'HEAD~3', limit: 2, cursor: undefined });
    expect(byRel.commits[0]!.hash).toBe(h);
  });

  it('path filter within the window pages the touching commits', async () => {
    const { g, ws } = await open(dir);
    const want = git(dir, ['log', '--format=%H', '--', 'tens.txt']).trim().split('\n');
    expect(want).toHaveLength(12);
    const got: string[] = [];
    let cursor: string | undefined;
    let calls = 0;
    do {
      const p = await gitLog(g, ws, cursors, { path: 'tens.txt', limit: 5, cursor });
      expect(p.path).toBe('tens.txt');
      got.push(...p.commits.map((c) => c.hash));
      cursor = p.next_cursor;
      calls++;
    } while (cursor !== undefined && calls < 10);
    expect(got).toEqual(want);
  });
});

describe('gitLog edge repositories', () => {
  it('an empty repository gives an empty page, not an error', async () => {
    const { g, ws } = await open(repo('empty').dir);
    const p = await gitLog(g, ws, cursors, { limit: 10, cursor: undefined });
    expect(p).toMatchObject({ ref: 'HEAD', commits: [], has_more: false });
    expect(p.next_cursor).toBeUndefined();
    const pp = await gitLog(g, ws, cursors, { path: 'x', limit: 10, cursor: undefined });
    expect(pp.commits).toEqual([]);
    const refs = await gitRefs(g, cursors, 'heads', { limit: 10, cursor: undefined });
    expect(refs).toMatchObject({ refs: [], has_more: false });
    const st = await gitStatus(g, cursors, { limit: 10, cursor: undefined });
    expect(st.entries).toEqual([]);
  });

  it('a detached HEAD works', async () => {
    const dir = repo('detached').dir;
    importHistory(dir, 5, (i) => ({ f: `${i}` }));
    git(dir, ['checkout', '-q', '--detach', 'HEAD~2']);
    const { g, ws } = await open(dir);
    const p = await gitLog(g, ws, cursors, { limit: 10, cursor: undefined });
    expect(p.commits.map((c) => c.subject)).toEqual(['c3', 'c2', 'c1']);
  });
});

describe('gitLog path filter over more than one window', () => {
  const TOTAL = LOG_WALK_WINDOW + 150;
  let dir: string;
  beforeAll(() => {
    dir = repo('window').dir;
    importHistory(dir, TOTAL, (i): Record<string, string> => (i === 1 ? { 'rare.txt': 'only once\n', 'busy.txt': '1\n' } : { 'busy.txt': `${i}\n` }));
  });

  it(`examines ${LOG_WALK_WINDOW} commits, returns none with a cursor, and the cursor reaches the commit`, async () => {
    const { g, ws } = await open(dir);
    const first = await gitLog(g, ws, cursors, { path: 'rare.txt', limit: 10, cursor: undefined });
    expect(first.examined).toBe(LOG_WALK_WINDOW);
    expect(first.commits).toEqual([]);
    expect(first.has_more).toBe(true);
    expect(first.next_cursor).toBeTypeOf('string');
    const second = await gitLog(g, ws, cursors, { path: 'rare.txt', limit: 10, cursor: first.next_cursor });
    expect(second.examined).toBe(TOTAL - LOG_WALK_WINDOW);
    expect(second.commits.map((c) => c.subject)).toEqual(['c1']);
    expect(second.commits[0]!.hash).toBe(git(dir, ['rev-list', '--max-parents=0', 'HEAD']).trim());
    expect(second.has_more).toBe(false);
    expect(second.next_cursor).toBeUndefined();
  });

  it('a limit hit inside the window resumes right after the last commit returned', async () => {
    const { g, ws } = await open(dir);
    const want = git(dir, ['rev-list', '--max-count=25', 'HEAD']).trim().split('\n');
    const a = await gitLog(g, ws, cursors, { path: 'busy.txt', limit: 10, cursor: undefined });
    const b = await gitLog(g, ws, cursors, { path: 'busy.txt', limit: 15, cursor: a.next_cursor });
    expect([...a.commits, ...b.commits].map((c) => c.hash)).toEqual(want);
    expect(b.has_more).toBe(true);
  });
});

describe('gitRefs', () => {
  let dir: string;
  beforeAll(() => {
    dir = repo('refs').dir;
    importHistory(dir, 2, (i) => ({ f: `${i}` }));
    createRefs(dir, Array.from({ length: 29 }, (_, i) => `refs/heads/b${String(i).padStart(2, '0')}`));
    createRefs(dir, ['refs/tags/v1', 'refs/tags/v2']);
  });

  it('30 branches, limit 10: 3 clean pages in name order', async () => {
    const { g } = await open(dir);
    const want = git(dir, ['for-each-ref', '--format=%(refname:short)', 'refs/heads/']).trim().split('\n');
    expect(want).toHaveLength(30);
    const names: string[] = [];
    const sizes: number[] = [];
    let cursor: string | undefined;
    do {
      const p = await gitRefs(g, cursors, 'heads', { limit: 10, cursor });
      names.push(...p.refs.map((r) => r.name));
      sizes.push(p.refs.length);
      expect(p.examined).toBeUndefined();
      cursor = p.next_cursor;
    } while (cursor !== undefined && sizes.length < 10);
    expect(sizes).toEqual([10, 10, 10]);
    expect(names).toEqual(want);
    const head = git(dir, ['rev-parse', 'HEAD']).trim();
    const tags = await gitRefs(g, cursors, 'tags', { limit: 10, cursor: undefined });
    expect(tags.refs).toEqual([
      { name: 'v1', target: head },
      { name: 'v2', target: head },
    ]);
  });

  it('a cursor is bound to its kind and its match', async () => {
    const { g } = await open(dir);
    const p = await gitRefs(g, cursors, 'heads', { limit: 5, cursor: undefined });
    expect(await codeOf(gitRefs(g, cursors, 'tags', { limit: 5, cursor: p.next_cursor }))).toBe('INVALID_CURSOR');
    expect(await codeOf(gitRefs(g, cursors, 'heads', { match: 'b', limit: 5, cursor: p.next_cursor }))).toBe('INVALID_CURSOR');
  });

  it(`match over 1200 branches examines ${REF_CANDIDATES} per call and the cursor continues the scan`, async () => {
    const d = repo('refs-many').dir;
    importHistory(d, 1, () => ({ f: 'x' }));
    createRefs(d, [...Array.from({ length: 1199 }, (_, i) => `refs/heads/a${String(i).padStart(4, '0')}`), 'refs/heads/zz-needle']);
    const { g } = await open(d);
    const first = await gitRefs(g, cursors, 'heads', { match: 'needle', limit: 10, cursor: undefined });
    expect(first.refs).toEqual([]);
    expect(first.examined).toBe(REF_CANDIDATES);
    expect(first.has_more).toBe(true);
    const second = await gitRefs(g, cursors, 'heads', { match: 'needle', limit: 10, cursor: first.next_cursor });
    expect(second.refs.map((r) => r.name)).toEqual(['zz-needle']);
    expect(second.examined).toBe(1201 - REF_CANDIDATES); // 1199 a-branches + main + zz-needle
    expect(second.has_more).toBe(false);
    // a full page of matches resumes after the last match returned
    const many = await gitRefs(g, cursors, 'heads', { match: 'a00', limit: 40, cursor: undefined });
    expect(many.refs).toHaveLength(40);
    const rest = await gitRefs(g, cursors, 'heads', { match: 'a00', limit: 100, cursor: many.next_cursor });
    expect([...many.refs, ...rest.refs].map((r) => r.name)).toEqual(Array.from({ length: 100 }, (_, i) => `a00${String(i).padStart(2, '0')}`));
  });
});

describe('gitStatus', () => {
  let dir: string;
  beforeAll(() => {
    dir = repo('status').dir;
    for (const f of ['mod.txt', 'staged.txt', 'conflict.txt', 'keep.txt']) writeFileSync(join(dir, f), `${f} base\n`);
    git(dir, ['add', '.']);
    git(dir, ['commit', '-q', '-m', 'base']);
    git(dir, ['checkout', '-q', '-b', 'other']);
    writeFileSync(join(dir, 'conflict.txt'), 'theirs\n');
    git(dir, ['commit', '-q', '-am', 'theirs']);
    git(dir, ['checkout', '-q', 'main']);
    writeFileSync(join(dir, 'conflict.txt'), 'ours\n');
    git(dir, ['commit', '-q', '-am', 'ours']);
    expect(gitStatusCode(dir, ['merge', '-q', 'other'])).not.toBe(0);
    writeFileSync(join(dir, 'mod.txt'), 'modified\n');
    writeFileSync(join(dir, 'staged.txt'), 'staged\n');
    git(dir, ['add', 'staged.txt']);
    writeFileSync(join(dir, 'new1.txt'), '');
    writeFileSync(join(dir, 'new2.txt'), '');
    writeFileSync(join(dir, '.gitignore'), 'ignored.txt\n');
    writeFileSync(join(dir, 'ignored.txt'), '');
  });

  it('reports modified, staged, conflict and untracked entries (ignored files left out)', async () => {
    const { g } = await open(dir);
    const p = await gitStatus(g, cursors, { limit: 100, cursor: undefined });
    const byPath = Object.fromEntries(p.entries.map((e) => [e.path, e]));
    expect(byPath['mod.txt']).toEqual({ path: 'mod.txt', status: '.M', kind: 'tracked' });
    expect(byPath['staged.txt']).toEqual({ path: 'staged.txt', status: 'M.', kind: 'tracked' });
    expect(byPath['conflict.txt']).toEqual({ path: 'conflict.txt', status: 'UU', kind: 'conflict' });
    expect(byPath['new1.txt']).toEqual({ path: 'new1.txt', status: '??', kind: 'untracked' });
    expect(byPath['.gitignore']?.kind).toBe('untracked');
    expect(byPath['ignored.txt']).toBeUndefined();
    expect(byPath['keep.txt']).toBeUndefined();
    expect(p.entries).toHaveLength(6);
    expect(p.has_more).toBe(false);
    // tracked changes come before untracked files
    const kinds = p.entries.map((e) => e.kind);
    expect(kinds.lastIndexOf('tracked')).toBeLessThan(kinds.indexOf('untracked'));
  });

  it('pages with limit 2 over 5 entries with nothing lost or repeated', async () => {
    const d = repo('status-paging').dir;
    for (const f of ['a', 'b', 'c']) writeFileSync(join(d, f), 'x\n');
    git(d, ['add', '.']);
    git(d, ['commit', '-q', '-m', 'base']);
    for (const f of ['a', 'b', 'c']) writeFileSync(join(d, f), 'yy\n');
    writeFileSync(join(d, 'u1'), '');
    writeFileSync(join(d, 'u2'), '');
    const { g } = await open(d);
    const all: StatusEntry[] = [];
    const sizes: number[] = [];
    let cursor: string | undefined;
    do {
      const p = await gitStatus(g, cursors, { limit: 2, cursor });
      all.push(...p.entries);
      sizes.push(p.entries.length);
      cursor = p.next_cursor;
    } while (cursor !== undefined && sizes.length < 10);
    expect(sizes).toEqual([2, 2, 1]);
    expect(all.map((e) => `${e.status} ${e.path}`)).toEqual(['.M a', '.M b', '.M c', '?? u1', '?? u2']);
    expect(await codeOf(gitStatus(g, cursors, { limit: 2, cursor: cursors.encode('log', { s: 0 }) }))).toBe('INVALID_CURSOR');
  });

  it('non-UTF-8 path names do not break it', async () => {
    const d = repo('status-bytes').dir;
    const raw = Buffer.concat([Buffer.from(d + '/'), Buffer.from([0x66, 0xff, 0xfe, 0x2e, 0x74])]);
    writeFileSync(Buffer.concat([raw, Buffer.from('1')]), 'tracked\n');
    git(d, ['add', '-A']);
    git(d, ['commit', '-q', '-m', 'raw']);
    writeFileSync(Buffer.concat([raw, Buffer.from('1')]), 'changed!\n');
    writeFileSync(Buffer.concat([raw, Buffer.from('2')]), '');
    const { g } = await open(d);
    const p = await gitStatus(g, cursors, { limit: 10, cursor: undefined });
    expect(p.entries.map((e) => e.kind)).toEqual(['tracked', 'untracked']);
    for (const e of p.entries) expect(e.path).toMatch(/^f.+\.t[12]$/);
    expect(() => JSON.stringify(p)).not.toThrow();
  });
});

describe('hostile repository config', () => {
  it('no program named by the repository runs during log, status or refs (control: plain git runs it)', async () => {
    const dir = repo('hostile').dir;
    writeFileSync(join(dir, 'f.txt'), 'one\n');
    git(dir, ['add', '.']);
    git(dir, ['commit', '-q', '-m', 'base']);
    const marker = join(scratch, 'hostile-marker');
    makeHostile(dir, marker);
    writeFileSync(join(dir, 'f.txt'), 'two\n'); // same size: git must compare content
    // control: the config is live for an ordinary git
    git(dir, ['status', '--porcelain']);
    expect(existsSync(marker)).toBe(true);
    rmSync(marker);
    // the control's fsmonitor hook also touched its own arguments (files in the repository)
    for (const name of readdirSync(dir)) if (!['.git', 'f.txt', '.gitattributes'].includes(name)) rmSync(join(dir, name));
    writeFileSync(join(dir, 'f.txt'), 'six\n');

    const { g, ws } = await open(dir);
    const log = await gitLog(g, ws, cursors, { limit: 5, cursor: undefined });
    expect(log.commits).toHaveLength(1);
    await gitLog(g, ws, cursors, { path: 'f.txt', limit: 5, cursor: undefined });
    const st = await gitStatus(g, cursors, { limit: 10, cursor: undefined });
    expect(st.entries.map((e) => `${e.status} ${e.path}`)).toEqual(['.M f.txt', '?? .gitattributes']);
    await gitRefs(g, cursors, 'heads', { limit: 10, cursor: undefined });
    await gitRefs(g, cursors, 'heads', { match: 'm', limit: 10, cursor: undefined });
    expect(existsSync(marker)).toBe(false);
  });

  // Regression (a fixed bug): `-c filter.x=y.clean=` is split by git at the first "=" (key `filter.x`, value
  // `y.clean=`), so a driver whose name holds "=" was never overridden and its clean command ran. Filter drivers
  // are now refused whatever their name.
  it('a filter driver (even one whose name contains "=") refuses the call and does not run', async () => {
    const dir = repo('hostile-eq').dir;
    writeFileSync(join(dir, 'f.txt'), 'one\n');
    git(dir, ['add', '.']);
    git(dir, ['commit', '-q', '-m', 'base']);
    const marker = join(scratch, 'hostile-eq-marker');
    git(dir, ['config', 'filter.x=y.clean', `touch '${marker}'; cat`]);
    writeFileSync(join(dir, '.git', 'info', 'attributes'), '* filter=x=y\n');
    writeFileSync(join(dir, 'f.txt'), 'two\n');
    const { g } = await open(dir);
    await expect(gitStatus(g, cursors, { limit: 10, cursor: undefined })).rejects.toMatchObject({
      code: 'UNSAFE_REPOSITORY',
      data: { key: 'filter.x=y.clean' },
    });
    expect(existsSync(marker)).toBe(false);
  });

  // Regression (a fixed bug): the overrides were read once per GitRunner (once per server); a program key added to
  // the repository config after the first call was not overridden.
  it('a program key or filter added after the first call is neutralized or refused', async () => {
    const dir = repo('hostile-late').dir;
    writeFileSync(join(dir, 'f.txt'), 'one\n');
    git(dir, ['add', '.']);
    git(dir, ['commit', '-q', '-m', 'base']);
    const { g } = await open(dir);
    await gitStatus(g, cursors, { limit: 10, cursor: undefined });
    const marker = join(scratch, 'hostile-late-marker');
    makeHostile(dir, marker);
    writeFileSync(join(dir, 'f.txt'), 'two\n');
    await gitStatus(g, cursors, { limit: 10, cursor: undefined });
    makeFilterHostile(dir, marker);
    expect(await codeOf(gitStatus(g, cursors, { limit: 10, cursor: undefined }))).toBe('UNSAFE_REPOSITORY');
    expect(existsSync(marker)).toBe(false);
  });
});

describe('GitRunner.records', () => {
  it('stopping the consumer ends git early; a failing command is IO_ERROR', async () => {
    const dir = repo('records').dir;
    importHistory(dir, 300, (i) => ({ f: `${i}` }));
    const g = new GitRunner(await openWorkspace(dir));
    const seen: string[] = [];
    for await (const rec of g.records(['log', '--format=%H', '-z'])) {
      seen.push(rec);
      if (seen.length === 3) break;
    }
    expect(seen).toHaveLength(3);
    const recs = async (): Promise<void> => {
      for await (const _ of g.records(['log', 'no-such-ref', '--'])) void _;
    };
    expect(await codeOf(recs())).toBe('IO_ERROR');
  });

  // Regression (a fixed bug): records() decodes each stdout chunk on its own (`chunk.toString('utf8')`), so a multi-byte
  // character split across two pipe reads becomes U+FFFD U+FFFD (seen with `ls-files --others` over
  // 1500 names of 40 × '€', i.e. git_status on a workspace with many non-ASCII untracked names).
  it('keeps multi-byte characters split across stdout chunks', async () => {
    const dir = repo('records-utf8').dir;
    const rec = '€'.repeat(1000);
    const blob = git(dir, ['hash-object', '-w', '--stdin'], (rec + '\0').repeat(200)).trim(); // ~600 KB
    const got: string[] = [];
    for await (const r of new GitRunner(await openWorkspace(dir)).records(['cat-file', 'blob', blob])) got.push(r);
    expect(got.filter((r) => r !== rec)).toEqual([]);
    expect(got).toHaveLength(200);
  });
});
