/**
 * The git tools of `mcp-budget serve` (git_log, git_status, git_branches, git_tags), driven with the
 * SDK Client over stdio against real repositories built at test time under the OS temp dir.
 */
import { mkdtempSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ensureBuilt } from '../helpers/cli.js';
import { createRefs, existsSync, git, gitStatusCode, importHistory, makeHostile, tempRepo, type TempRepo } from '../helpers/git-repo.js';
import { callErr, callOk, connectClient, serveTransport, type Connected } from '../helpers/mcp-stdio.js';

interface Commit {
  hash: string;
  parents: string[];
  subject: string;
}
interface LogPage {
  commits: Commit[];
  has_more: boolean;
  next_cursor?: string;
  examined?: number;
}
interface RefPage {
  refs: { name: string; target: string }[];
  has_more: boolean;
  next_cursor?: string;
  examined?: number;
}
interface StatusPage {
  entries: { path: string; status: string; kind: string }[];
  has_more: boolean;
  next_cursor?: string;
}

const repos: TempRepo[] = [];
const conns: Connected[] = [];
const scratch = mkdtempSync(join(tmpdir(), 'mcp-budget-gittools-scratch-'));

function repo(prefix: string): string {
  const r = tempRepo(prefix);
  repos.push(r);
  return r.dir;
}

async function serve(root: string): Promise<Connected['client']> {
  const c = await connectClient(serveTransport(root));
  conns.push(c);
  return c.client;
}

beforeAll(() => {
  ensureBuilt();
});

afterAll(async () => {
  for (const c of conns) await c.close().catch(() => undefined);
  for (const r of repos) r.remove();
  rmSync(scratch, { recursive: true, force: true });
});

describe('git_log', () => {
  let dir: string;
  let client: Connected['client'];
  beforeAll(async () => {
    dir = repo('tools-log');
    importHistory(dir, 120, (i) => ({ 'a.txt': `v${i}\n` }));
    createRefs(dir, Array.from({ length: 29 }, (_, i) => `refs/heads/b${String(i).padStart(2, '0')}`));
    client = await serve(dir);
  });

  it('120 commits, limit 50: 3 pages, none missing or repeated vs rev-list HEAD', async () => {
    const want = git(dir, ['rev-list', 'HEAD']).trim().split('\n');
    const hashes: string[] = [];
    const sizes: number[] = [];
    let cursor: string | undefined;
    do {
      const p = await callOk<LogPage>(client, 'git_log', { limit: 50, ...(cursor ? { cursor } : {}) });
      hashes.push(...p.commits.map((c) => c.hash));
      sizes.push(p.commits.length);
      cursor = p.next_cursor;
    } while (cursor !== undefined && sizes.length < 10);
    expect(sizes).toEqual([50, 50, 20]);
    expect(new Set(hashes).size).toBe(120);
    expect(hashes).toEqual(want);
  });

  it('a tampered cursor, or one reused with another ref or path, is INVALID_CURSOR', async () => {
    const p = await callOk<LogPage>(client, 'git_log', { limit: 50 });
    const c = p.next_cursor!;
    const [body, sig] = c.split('.') as [string, string];
    const forged = Buffer.from(JSON.stringify({ ...JSON.parse(Buffer.from(body, 'base64url').toString()), s: 1 })).toString('base64url');
    expect(await callErr(client, 'git_log', { limit: 50, cursor: `${forged}.${sig}` })).toMatch(/^INVALID_CURSOR/);
    expect(await callErr(client, 'git_log', { limit: 50, cursor: `${body}.${sig.slice(1)}A` })).toMatch(/^INVALID_CURSOR/);
    expect(await callErr(client, 'git_log', { limit: 50, ref: 'main', cursor: c })).toMatch(/^INVALID_CURSOR/);
    expect(await callErr(client, 'git_log', { limit: 50, path: 'a.txt', cursor: c })).toMatch(/^INVALID_CURSOR/);
    // a branches cursor is not a log cursor
    const b = await callOk<RefPage>(client, 'git_branches', { limit: 5 });
    expect(await callErr(client, 'git_log', { cursor: b.next_cursor })).toMatch(/^INVALID_CURSOR/);
  });

  it('a ref starting with "-" is refused before git runs (no file created)', async () => {
    const out = join(scratch, 'x');
    for (const ref of [`--output=${out}`, `--output=${join(dir, 'x')}`]) {
      expect(await callErr(client, 'git_log', { ref })).toMatch(/^INVALID_PARAMS.*may not start with "-"/);
      expect(await callErr(client, 'git_log', { ref, path: 'a.txt' })).toMatch(/^INVALID_PARAMS/);
    }
    expect(existsSync(out)).toBe(false);
    expect(existsSync(join(dir, 'x'))).toBe(false);
  });

  it('an unknown ref is NOT_FOUND; an over-max limit is refused', async () => {
    expect(await callErr(client, 'git_log', { ref: 'no-such-branch' })).toMatch(/^NOT_FOUND/);
    expect(await callErr(client, 'git_log', { limit: 101 })).toMatch(/^INVALID_PARAMS/);
  });

  it('git_branches: 30 branches, limit 10, three clean pages', async () => {
    const want = git(dir, ['for-each-ref', '--format=%(refname:short)', 'refs/heads/']).trim().split('\n');
    expect(want).toHaveLength(30);
    const names: string[] = [];
    const sizes: number[] = [];
    let cursor: string | undefined;
    do {
      const p = await callOk<RefPage>(client, 'git_branches', { limit: 10, ...(cursor ? { cursor } : {}) });
      names.push(...p.refs.map((r) => r.name));
      sizes.push(p.refs.length);
      cursor = p.next_cursor;
    } while (cursor !== undefined && sizes.length < 10);
    expect(sizes).toEqual([10, 10, 10]);
    expect(names).toEqual(want);
    const tags = await callOk<RefPage>(client, 'git_tags', {});
    expect(tags).toMatchObject({ refs: [], has_more: false });
  });
});

describe('git_log edge repositories', () => {
  it('an empty repository gives empty pages, not errors', async () => {
    const client = await serve(repo('tools-empty'));
    expect(await callOk<LogPage>(client, 'git_log', {})).toMatchObject({ commits: [], has_more: false });
    expect(await callOk<RefPage>(client, 'git_branches', {})).toMatchObject({ refs: [], has_more: false });
    expect(await callOk<StatusPage>(client, 'git_status', {})).toMatchObject({ entries: [], has_more: false });
  });

  it('a detached HEAD works', async () => {
    const dir = repo('tools-detached');
    importHistory(dir, 5, (i) => ({ f: `${i}` }));
    git(dir, ['checkout', '-q', '--detach', 'HEAD~1']);
    const client = await serve(dir);
    const p = await callOk<LogPage>(client, 'git_log', {});
    expect(p.commits.map((c) => c.subject)).toEqual(['c4', 'c3', 'c2', 'c1']);
  });
});

describe('bounded scans over big histories', () => {
  let dir: string;
  let client: Connected['client'];
  beforeAll(async () => {
    dir = repo('tools-big');
    importHistory(dir, 2100, (i): Record<string, string> => (i === 1 ? { 'rare.txt': 'once\n', 'busy.txt': '1\n' } : { 'busy.txt': `${i}\n` }));
    createRefs(dir, [...Array.from({ length: 1198 }, (_, i) => `refs/heads/a${String(i).padStart(4, '0')}`), 'refs/heads/zz-needle']);
    client = await serve(dir);
  });

  it('git_log path: 2000 commits examined, no commit, has_more; the cursor reaches the oldest commit', async () => {
    const first = await callOk<LogPage>(client, 'git_log', { path: 'rare.txt' });
    expect(first).toMatchObject({ commits: [], has_more: true, examined: 2000 });
    expect(first.next_cursor).toBeTypeOf('string');
    const second = await callOk<LogPage>(client, 'git_log', { path: 'rare.txt', cursor: first.next_cursor });
    expect(second.examined).toBe(100);
    expect(second.commits.map((c) => c.hash)).toEqual([git(dir, ['rev-list', '--max-parents=0', 'HEAD']).trim()]);
    expect(second.has_more).toBe(false);
  });

  it('git_branches match: 1200 branches, the only match sorts last', async () => {
    const first = await callOk<RefPage>(client, 'git_branches', { match: 'needle' });
    expect(first).toMatchObject({ refs: [], has_more: true, examined: 1000 });
    const second = await callOk<RefPage>(client, 'git_branches', { match: 'needle', cursor: first.next_cursor });
    expect(second.refs.map((r) => r.name)).toEqual(['zz-needle']);
    expect(second.has_more).toBe(false);
    expect(await callErr(client, 'git_branches', { match: 'other', cursor: first.next_cursor })).toMatch(/^INVALID_CURSOR/);
  });
});

describe('git_status', () => {
  it('modified, staged, conflict and untracked entries; limit 2 pages', async () => {
    const dir = repo('tools-status');
    for (const f of ['mod.txt', 'staged.txt', 'conflict.txt']) writeFileSync(join(dir, f), `${f} base\n`);
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
    writeFileSync(join(dir, 'untracked.txt'), '');
    writeFileSync(join(dir, 'untracked2.txt'), '');
    const client = await serve(dir);
    const all = await callOk<StatusPage>(client, 'git_status', {});
    // porcelain v2 order: ordinary changes, then unmerged entries, then (ours) untracked files
    expect(all.entries).toEqual([
      { path: 'mod.txt', status: '.M', kind: 'tracked' },
      { path: 'staged.txt', status: 'M.', kind: 'tracked' },
      { path: 'conflict.txt', status: 'UU', kind: 'conflict' },
      { path: 'untracked.txt', status: '??', kind: 'untracked' },
      { path: 'untracked2.txt', status: '??', kind: 'untracked' },
    ]);
    const paged: StatusPage['entries'] = [];
    const sizes: number[] = [];
    let cursor: string | undefined;
    do {
      const p = await callOk<StatusPage>(client, 'git_status', { limit: 2, ...(cursor ? { cursor } : {}) });
      paged.push(...p.entries);
      sizes.push(p.entries.length);
      cursor = p.next_cursor;
    } while (cursor !== undefined && sizes.length < 10);
    expect(sizes).toEqual([2, 2, 1]);
    expect(paged).toEqual(all.entries);
    expect(await callErr(client, 'git_status', { query: 'x' })).toMatch(/^MCP error -32602: Input validation error: .*does not take `query`; use workspace_search_files/);
  });

  it('non-UTF-8 path names do not crash the tool', async () => {
    const dir = repo('tools-bytes');
    const base = Buffer.concat([Buffer.from(dir + '/'), Buffer.from([0x62, 0xff, 0x2e])]);
    writeFileSync(Buffer.concat([base, Buffer.from('t')]), 'one\n');
    git(dir, ['add', '-A']);
    git(dir, ['commit', '-q', '-m', 'raw']);
    writeFileSync(Buffer.concat([base, Buffer.from('t')]), 'two\n');
    writeFileSync(Buffer.concat([base, Buffer.from('u')]), '');
    const client = await serve(dir);
    const p = await callOk<StatusPage>(client, 'git_status', {});
    expect(p.entries.map((e) => `${e.status} ${e.kind}`)).toEqual(['.M tracked', '?? untracked']);
    for (const e of p.entries) expect(e.path).toMatch(/^b.+\.[tu]$/);
    // the server is still up
    expect((await callOk<LogPage>(client, 'git_log', {})).commits).toHaveLength(1);
  });
});

describe('hostile repository config', () => {
  it('git_log, git_status and git_branches run no program the repository names', async () => {
    const dir = repo('tools-hostile');
    writeFileSync(join(dir, 'f.txt'), 'one\n');
    git(dir, ['add', '.']);
    git(dir, ['commit', '-q', '-m', 'base']);
    const marker = join(scratch, 'marker');
    makeHostile(dir, marker);
    writeFileSync(join(dir, 'f.txt'), 'two\n'); // same size: git must compare content
    // control: an ordinary git does run the repository's programs
    git(dir, ['status', '--porcelain']);
    expect(existsSync(marker)).toBe(true);
    rmSync(marker);
    for (const name of readdirSync(dir)) if (!['.git', 'f.txt', '.gitattributes'].includes(name)) rmSync(join(dir, name));
    writeFileSync(join(dir, 'f.txt'), 'six\n');

    const client = await serve(dir);
    expect((await callOk<LogPage>(client, 'git_log', {})).commits).toHaveLength(1);
    await callOk<LogPage>(client, 'git_log', { path: 'f.txt' });
    const st = await callOk<StatusPage>(client, 'git_status', {});
    expect(st.entries.map((e) => `${e.status} ${e.path}`)).toEqual(['.M f.txt', '?? .gitattributes']);
    expect((await callOk<RefPage>(client, 'git_branches', {})).refs.map((r) => r.name)).toEqual(['main']);
    await callOk<RefPage>(client, 'git_branches', { match: 'ma' });
    expect(existsSync(marker)).toBe(false);
  });
});
