/**
 * `mcp-budget serve` end to end over stdio, against real directories built at test time:
 * a 100k-entry directory paged to the end, symlink loops, and unreadable directories and files.
 *
 * Permissions: the test runs as root here, and root ignores file modes, so the unreadable cases
 * start the server as `nobody` (spawn uid/gid; the tree is made traversable for it). When the tests
 * do not run as root, the server runs as the current user and the modes apply to it directly.
 */
import { chmodSync, mkdirSync, readdirSync, readFileSync, symlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DEFAULT_LIMITS } from '../../src/engine/limits.js';
import { ensureBuilt } from '../helpers/cli.js';
import { fillEmpty, tempTree } from '../helpers/fs-tree.js';
import { callErr, callOk, connectClient, serveTransport, serveTransportAs, type Connected } from '../helpers/mcp-stdio.js';

const BIG = 100_000;

interface Page {
  path: string;
  entries: { name: string; type: string; name_base64?: string }[];
  has_more: boolean;
  next_cursor?: string;
  warning?: string;
}

let tree: ReturnType<typeof tempTree>;
let root: string;
let conn: Connected;

beforeAll(async () => {
  ensureBuilt();
  tree = tempTree('serve');
  root = tree.dir;
  mkdirSync(join(root, 'big'));
  fillEmpty(join(root, 'big'), BIG);
  writeFileSync(join(root, 'big', 'readme.txt'), 'inside the big directory\n');

  const loops = join(root, 'loops');
  mkdirSync(join(loops, 'cyc'), { recursive: true });
  writeFileSync(join(loops, 'real.txt'), 'real');
  writeFileSync(join(loops, 'cyc', 'in-cycle.txt'), 'c');
  symlinkSync('self-loop', join(loops, 'self-loop'));
  symlinkSync('b', join(loops, 'a'));
  symlinkSync('a', join(loops, 'b'));
  symlinkSync('.', join(loops, 'dot'));
  symlinkSync('..', join(loops, 'up'));
  symlinkSync('../cyc', join(loops, 'cyc', 'back')); // a directory cycle through a link
  symlinkSync(root, join(loops, 'to-root'));
  conn = await connectClient(serveTransport(root));
}, 120_000);

afterAll(async () => {
  await conn?.close();
  tree?.remove();
});

describe('a 100k-entry directory over stdio', () => {
  it('pages to the end at limit 200: every entry once, each result within the budget', async () => {
    const seen: string[] = [];
    let cursor: string | undefined;
    let pages = 0;
    const first = conn.wire.results.length;
    do {
      const page: Page = await callOk<Page>(conn.client, 'workspace_list_dir', { path: 'big', limit: 200, ...(cursor ? { cursor } : {}) });
      expect(page.path).toBe('big');
      expect(page.warning).toBeUndefined();
      for (const e of page.entries) {
        expect(e.type).toBe('file');
        seen.push(e.name);
      }
      cursor = page.next_cursor;
      if (page.has_more) expect(page.entries).toHaveLength(200);
      pages++;
    } while (cursor !== undefined);
    expect(pages).toBe(BIG / 200 + 1); // 100 001 entries
    expect(seen).toHaveLength(BIG + 1);
    expect(new Set(seen)).toEqual(new Set(readdirSync(join(root, 'big'))));
    const sizes = conn.wire.results.slice(first).map((r) => r.bytes);
    expect(Math.max(...sizes)).toBeLessThanOrEqual(DEFAULT_LIMITS.maxResultBytes);
  });

  it('scan counts it up to the cap; search and read work inside it', async () => {
    const scan = await callOk<{ directories: { name: string; entries: number; capped: boolean }[] }>(conn.client, 'workspace_scan', {});
    expect(scan.directories.find((d) => d.name === 'big')).toMatchObject({ entries: 1000, capped: true });

    const t0 = performance.now();
    const found = await callOk<{ matches: string[]; has_more: boolean }>(conn.client, 'workspace_search_files', { query: 'e1*', path: 'big', limit: 50 });
    expect(found.matches).toHaveLength(50);
    expect(found.has_more).toBe(true);
    expect(performance.now() - t0).toBeLessThan(5000);
    expect((await callOk<{ matches: string[] }>(conn.client, 'workspace_search_files', { query: '*.txt', path: 'big' })).matches).toEqual(['readme.txt']);

    const w = await callOk<{ content: string[]; eof: boolean }>(conn.client, 'workspace_read_file', { path: 'big/readme.txt' });
    expect(w).toMatchObject({ content: ['inside the big directory\n'], eof: true });
  });
});

describe('symlink loops over stdio', () => {
  it('list_dir shows links as symlinks without following them', async () => {
    const page = await callOk<Page>(conn.client, 'workspace_list_dir', { path: 'loops' });
    expect(Object.fromEntries(page.entries.map((e) => [e.name, e.type]))).toEqual({
      'real.txt': 'file',
      cyc: 'directory',
      'self-loop': 'symlink',
      a: 'symlink',
      b: 'symlink',
      dot: 'symlink',
      up: 'symlink',
      'to-root': 'symlink',
    });
  });

  it('loops and links are refused as paths: a link is never followed, even one that stays inside', async () => {
    for (const path of ['loops/self-loop', 'loops/a', 'loops/b/x', 'loops/dot/dot/dot', 'loops/cyc/back/back/back', 'loops/to-root/loops']) {
      expect(await callErr(conn.client, 'workspace_list_dir', { path })).toMatch(/^PATH_ESCAPES_ROOT: /);
      expect(await callErr(conn.client, 'workspace_read_file', { path })).toMatch(/^(PATH_ESCAPES_ROOT|NOT_FOUND): /);
    }
    expect(await callErr(conn.client, 'workspace_read_file', { path: 'loops/cyc/back/back/in-cycle.txt' })).toMatch(/^PATH_ESCAPES_ROOT: /);
    expect((await callOk<Page>(conn.client, 'workspace_list_dir', { path: 'loops/cyc' })).path).toBe('loops/cyc');
  });

  it('search does not follow any link, so it ends and lists each real file once', async () => {
    const r = await callOk<{ matches: string[]; has_more: boolean }>(conn.client, 'workspace_search_files', { query: '**/*', path: 'loops', limit: 200 });
    expect(r.matches.sort()).toEqual(['cyc/in-cycle.txt', 'real.txt']);
    expect(r.has_more).toBe(false);
  });
});

describe('unreadable directories and files', () => {
  const asRoot = process.getuid?.() === 0;
  let locked: ReturnType<typeof tempTree>;
  let lroot: string;
  let nobody: Connected;

  function nobodyIds(): { uid: number; gid: number } {
    const line = readFileSync('/etc/passwd', 'utf8')
      .split('\n')
      .find((l) => l.startsWith('nobody:'));
    const [, , uid, gid] = (line ?? 'nobody:x:65534:65534').split(':');
    return { uid: Number(uid), gid: Number(gid) };
  }

  beforeAll(async () => {
    locked = tempTree('serve-perm');
    lroot = locked.dir;
    mkdirSync(join(lroot, 'locked'));
    writeFileSync(join(lroot, 'locked', 'a.txt'), 'a');
    mkdirSync(join(lroot, 'search-only'));
    writeFileSync(join(lroot, 'search-only', 'known.txt'), 'known');
    mkdirSync(join(lroot, 'open'));
    mkdirSync(join(lroot, 'readable'));
    writeFileSync(join(lroot, 'readable', 'r.txt'), 'r');
    writeFileSync(join(lroot, 'secret.txt'), 'secret');
    chmodSync(lroot, 0o755);
    chmodSync(join(lroot, 'locked'), 0o000);
    chmodSync(join(lroot, 'search-only'), 0o711); // can traverse, cannot list
    chmodSync(join(lroot, 'open'), 0o777);
    chmodSync(join(lroot, 'secret.txt'), 0o000);
    const { uid, gid } = nobodyIds();
    nobody = await connectClient(asRoot ? serveTransportAs(lroot, uid, gid) : serveTransport(lroot));
  }, 60_000);

  afterAll(async () => {
    await nobody?.close();
    locked?.remove();
  });

  it('the server really runs without access (sanity check of the setup)', async () => {
    expect(await callErr(nobody.client, 'workspace_read_file', { path: 'secret.txt' })).toMatch(/^IO_ERROR: Permission denied for "secret.txt"/);
  });

  it('read_file under an unreadable directory or of an unreadable file: IO_ERROR naming the user path', async () => {
    expect(await callErr(nobody.client, 'workspace_read_file', { path: 'locked/a.txt' })).toMatch(/^IO_ERROR: Permission denied for "locked\/a.txt"/);
    // traversable but not listable: a known name can still be read
    expect((await callOk<{ content: string[] }>(nobody.client, 'workspace_read_file', { path: 'search-only/known.txt' })).content).toEqual(['known']);
  });

  it('scan reports an unreadable directory in its summary instead of failing the page', async () => {
    const scan = await callOk<{ directories: { name: string; error?: string }[] }>(nobody.client, 'workspace_scan', {});
    const byName = Object.fromEntries(scan.directories.map((d) => [d.name, d]));
    expect(byName.locked?.error).toBe('unreadable (EACCES)');
    expect(byName['search-only']?.error).toBe('unreadable (EACCES)');
    expect(byName.readable?.error).toBeUndefined();
  });

  it('search skips what it cannot read and still ends', async () => {
    const r = await callOk<{ matches: string[] }>(nobody.client, 'workspace_search_files', { query: '**/*.txt', limit: 200 });
    expect(r.matches.sort()).toEqual(['readable/r.txt', 'secret.txt']); // names only: listing the root is allowed
  });

  it('list_dir of the root lists the unreadable entries by name and type', async () => {
    const page = await callOk<Page>(nobody.client, 'workspace_list_dir', {});
    expect(Object.fromEntries(page.entries.map((e) => [e.name, e.type]))).toMatchObject({ locked: 'directory', 'secret.txt': 'file' });
  });

  it('seeding where the server may write works; where it may not, nothing is written', async () => {
    expect(await callOk(nobody.client, 'workspace_seed_files', { files: [{ path: 'open/n/new.txt', content: 'n' }] })).toMatchObject({ written: 1 });
    expect(readFileSync(join(lroot, 'open', 'n', 'new.txt'), 'utf8')).toBe('n');
    expect(await callErr(nobody.client, 'workspace_seed_files', { files: [{ path: 'open/ok.txt', content: 'x' }, { path: 'readable/no.txt', content: 'x' }] })).toMatch(
      /^IO_ERROR: /,
    );
    expect(readdirSync(join(lroot, 'open')).sort()).toEqual(['n']);
    expect(readdirSync(join(lroot, 'readable'))).toEqual(['r.txt']);
  });

  // Regression (a fixed bug): DirectoryBrowser.list() calls opendir() outside any try/fsError mapping, so EACCES escapes as
  // a raw error: the tool answers `INTERNAL_ERROR: EACCES: permission denied, opendir '<absolute host
  // path>'` instead of `IO_ERROR: Permission denied for "locked"`, leaking the host path of the root.
  it('list_dir of an unreadable directory is IO_ERROR naming the user path, not the host path', async () => {
    for (const path of ['locked', 'search-only']) {
      const text = await callErr(nobody.client, 'workspace_list_dir', { path });
      expect(text).toMatch(/^IO_ERROR: /);
      expect(text).not.toContain(lroot);
    }
  });

  // Regression (a fixed bug): a permission error while staging used to say `Permission denied for "."`.
  it('a permission error while seeding names the file it is about', async () => {
    const text = await callErr(nobody.client, 'workspace_seed_files', { files: [{ path: 'readable/no.txt', content: 'x' }] });
    expect(text).toContain('readable/no.txt');
  });

  // Regression (a fixed bug): a dangling symlink as the parent of a seeded path makes resolveNew() throw a raw ENOENT from
  // realpath(): the tool answers INTERNAL_ERROR with the host's absolute path.
  it('seeding under a dangling symlink is a workspace error without the host path', async () => {
    symlinkSync('missing-target', join(lroot, 'open', 'dangling'));
    const text = await callErr(nobody.client, 'workspace_seed_files', { files: [{ path: 'open/dangling/x.txt', content: 'x' }] });
    expect(text).not.toMatch(/^INTERNAL_ERROR/);
    expect(text).not.toContain(lroot);
  });
});
