/**
 * Paged directory browsing (src/fs/browse.ts) and the scan built on it (src/fs/scan.ts): a
 * 100k-entry directory paged at 200 without duplicates or gaps, resumed from the handle cache and
 * from the re-scan fallback (a second browser with the same cursor key, a TTL of 0, a tiny cache),
 * cursors that are tampered, for another path or tool, or outlive their directory, raw non-UTF-8
 * names, symlink loops, a directory removed while it is read, and the bounded handle cache.
 */
import { closeSync, mkdirSync, openSync, readdirSync, readlinkSync, renameSync, rmSync, symlinkSync, unlinkSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DirectoryBrowser, type DirEntry, type DirPage } from '../../src/fs/browse.js';
import { Workspace, WorkspaceError } from '../../src/fs/confine.js';
import { CursorCodec } from '../../src/shared/cursor.js';
import { SCAN_COUNT_CAP, scanWorkspace } from '../../src/fs/scan.js';
import { fillEmpty, mkdirRaw, tempTree, touchRaw } from '../helpers/fs-tree.js';

const KEY = 'browse-test-key';
const BIG = 100_000;

let tree: ReturnType<typeof tempTree>;
let root: string;
let ws: Workspace;
const browsers: DirectoryBrowser[] = [];

function browser(options: ConstructorParameters<typeof DirectoryBrowser>[2] = {}, key = KEY): DirectoryBrowser {
  const b = new DirectoryBrowser(ws, new CursorCodec(key), options);
  browsers.push(b);
  return b;
}

async function codeOf(p: Promise<unknown>): Promise<string> {
  try {
    await p;
  } catch (e) {
    expect(e).toBeInstanceOf(WorkspaceError);
    return (e as WorkspaceError).code;
  }
  throw new Error('expected a WorkspaceError, the call succeeded');
}

/** The raw name of an entry: base64 when it is not UTF-8, else the name. */
function rawKey(e: DirEntry): string {
  return e.name_base64 !== undefined ? `b64:${e.name_base64}` : `b64:${Buffer.from(e.name).toString('base64')}`;
}

/** Collect every page; `pick` chooses the browser for each page number (1-based). */
async function collect(
  path: string,
  limit: number,
  pick: (page: number) => DirectoryBrowser,
): Promise<{ names: string[]; pages: DirPage[] }> {
  const names: string[] = [];
  const pages: DirPage[] = [];
  let cursor: string | undefined;
  for (let n = 1; ; n++) {
    const page = await pick(n).list(path, limit, cursor);
    expect(page.entries.length).toBeLessThanOrEqual(limit);
    expect(page.warning).toBeUndefined();
    pages.push(page);
    for (const e of page.entries) names.push(rawKey(e));
    if (!page.has_more) {
      expect(page.next_cursor).toBeUndefined();
      break;
    }
    expect(page.entries).toHaveLength(limit);
    cursor = page.next_cursor;
    expect(typeof cursor).toBe('string');
  }
  return { names, pages };
}

function expectSameSet(got: string[], dir: string): void {
  const want = readdirSync(dir, { encoding: 'buffer' }).map((b) => `b64:${b.toString('base64')}`);
  expect(got.length).toBe(want.length); // no duplicates (with the set equality below)
  expect(new Set(got).size).toBe(got.length);
  expect(new Set(got)).toEqual(new Set(want));
}

/** Descriptors of this process that are open on a directory under `prefix`. */
function openDirFds(prefix: string): number {
  let n = 0;
  for (const fd of readdirSync('/proc/self/fd')) {
    try {
      if (readlinkSync(`/proc/self/fd/${fd}`).startsWith(prefix)) n++;
    } catch {
      // closed meanwhile
    }
  }
  return n;
}

async function until(cond: () => boolean, what: string, ms = 5000): Promise<void> {
  const end = Date.now() + ms;
  while (!cond()) {
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 10));
  }
}

beforeAll(async () => {
  tree = tempTree('browse');
  root = join(tree.dir, 'root');
  mkdirSync(join(root, 'big'), { recursive: true });
  fillEmpty(join(root, 'big'), BIG);
  mkdirSync(join(root, 'mid'));
  fillEmpty(join(root, 'mid'), 10_000);
  mkdirSync(join(root, 'small'));
  fillEmpty(join(root, 'small'), 30);
  ws = await Workspace.open(root);
}, 60_000);

afterAll(() => {
  for (const b of browsers) b.close();
  tree?.remove();
});

describe('paging a 100k-entry directory at limit 200', () => {
  it('through the handle cache: every entry exactly once, 500 pages, one cached handle at a time', async () => {
    const b = browser();
    const { names, pages } = await collect('big', 200, () => b);
    expect(pages).toHaveLength(BIG / 200);
    expectSameSet(names, join(root, 'big'));
    expect(b.cachedHandles).toBe(0); // the last page closed its handle
  });

  it('through the re-scan fallback (a fresh browser sharing the key for every page) on 10k entries', async () => {
    const { names } = await collect('mid', 200, () => browser());
    expectSameSet(names, join(root, 'mid'));
  });

  it('through the re-scan fallback forced by handleTtlMs 0 and by a one-handle cache shared with other listings', async () => {
    const ttl0 = browser({ handleTtlMs: 0 });
    const a = await collect('mid', 200, () => ttl0);
    expectSameSet(a.names, join(root, 'mid'));

    // maxCachedHandles 1: another listing between every page evicts the handle, so each page re-scans
    const tiny = browser({ maxCachedHandles: 1 });
    const names: string[] = [];
    let cursor: string | undefined;
    do {
      const page = await tiny.list('mid', 200, cursor);
      await tiny.list('small', 5, undefined); // evicts the handle of `mid`
      expect(tiny.cachedHandles).toBeLessThanOrEqual(1);
      for (const e of page.entries) names.push(rawKey(e));
      cursor = page.next_cursor;
    } while (cursor !== undefined);
    expectSameSet(names, join(root, 'mid'));
  });

  it('mixed: the 100k directory with every 50th page resumed by a fresh browser (deep re-scans)', async () => {
    const cached = browser();
    const { names } = await collect('big', 200, (n) => (n % 50 === 0 ? browser() : cached));
    expectSameSet(names, join(root, 'big'));
  });

  it('the same cursor used twice (cache, then re-scan) gives the same page', async () => {
    const b = browser();
    const p1 = await b.list('big', 200, undefined);
    const first = await b.list('big', 200, p1.next_cursor); // from the cached handle
    const again = await b.list('big', 200, p1.next_cursor); // the handle was taken: re-scan
    expect(again.entries).toEqual(first.entries);
    expect(again.has_more).toBe(true);
  });

  it('a re-scan that would pass more than maxRescanEntries is refused with INVALID_CURSOR', async () => {
    const b = browser();
    let cursor: string | undefined;
    for (let i = 0; i < 5; i++) cursor = (await b.list('big', 200, cursor)).next_cursor;
    const capped = browser({ maxRescanEntries: 500 });
    expect(await codeOf(capped.list('big', 200, cursor))).toBe('INVALID_CURSOR');
    const roomy = browser({ maxRescanEntries: 2000 });
    expect((await roomy.list('big', 200, cursor)).entries).toHaveLength(200);
  });

  it('MCP_BUDGET_CURSOR_KEY lets two codecs (two replicas) share cursors; without it they do not', async () => {
    const saved = process.env.MCP_BUDGET_CURSOR_KEY;
    try {
      process.env.MCP_BUDGET_CURSOR_KEY = 'shared-replica-key';
      const one = new DirectoryBrowser(ws, new CursorCodec());
      const two = new DirectoryBrowser(ws, new CursorCodec());
      browsers.push(one, two);
      const p = await one.list('small', 10, undefined);
      expect((await two.list('small', 10, p.next_cursor)).entries).toHaveLength(10);
      delete process.env.MCP_BUDGET_CURSOR_KEY;
      const three = new DirectoryBrowser(ws, new CursorCodec());
      const four = new DirectoryBrowser(ws, new CursorCodec());
      browsers.push(three, four);
      const q = await three.list('small', 10, undefined);
      expect(await codeOf(four.list('small', 10, q.next_cursor))).toBe('INVALID_CURSOR');
    } finally {
      if (saved === undefined) delete process.env.MCP_BUDGET_CURSOR_KEY;
      else process.env.MCP_BUDGET_CURSOR_KEY = saved;
    }
  });
});

describe('invalid cursors', () => {
  it('tampered cursors (body, signature, shape) are INVALID_CURSOR', async () => {
    const b = browser();
    const { next_cursor: c } = await b.list('small', 5, undefined);
    const [body, sig] = c!.split('.') as [string, string];
    const payload = JSON.parse(Buffer.from(body, 'base64url').toString()) as Record<string, unknown>;
    const forged = Buffer.from(JSON.stringify({ ...payload, n: Buffer.from('e1').toString('base64') })).toString('base64url');
    const flip = (s: string, i: number): string => s.slice(0, i) + (s[i] === 'A' ? 'B' : 'A') + s.slice(i + 1);
    for (const bad of [
      `${forged}.${sig}`,
      `${flip(body, 3)}.${sig}`,
      `${body}.${flip(sig, 5)}`,
      `${body}.`,
      `${body}`,
      `.${sig}`,
      '',
      'x'.repeat(5000),
      `${body}.${sig}x`,
    ]) {
      expect(await codeOf(b.list('small', 5, bad)), bad.slice(0, 40)).toBe('INVALID_CURSOR');
    }
    expect(await codeOf(b.list('small', 5, 42 as unknown as string))).toBe('INVALID_CURSOR');
    // the genuine one still works
    expect((await b.list('small', 5, c)).entries).toHaveLength(5);
  });

  it('a cursor signed by another key (another server) is INVALID_CURSOR', async () => {
    const { next_cursor: c } = await browser({}, 'other-key').list('small', 5, undefined);
    expect(await codeOf(browser().list('small', 5, c))).toBe('INVALID_CURSOR');
  });

  it('a cursor presented for another path, or for another tool kind, is INVALID_CURSOR', async () => {
    const b = browser();
    const { next_cursor: c } = await b.list('small', 5, undefined);
    expect(await codeOf(b.list('mid', 5, c))).toBe('INVALID_CURSOR');
    expect(await codeOf(b.list(undefined, 5, c))).toBe('INVALID_CURSOR');
    expect(await codeOf(b.list('small', 5, c, undefined, 'scan'))).toBe('INVALID_CURSOR');
    const scanCursor = (await scanWorkspace(b, ws, 1, undefined)).next_cursor;
    expect(await codeOf(b.list(undefined, 5, scanCursor))).toBe('INVALID_CURSOR');
  });

  it('a directory is never listed through a symlink, even one that stays inside', async () => {
    symlinkSync('small', join(root, 'small-link'));
    try {
      const b = browser();
      expect(await codeOf(b.list('small-link', 5, undefined))).toBe('PATH_ESCAPES_ROOT');
      const p = await b.list('small', 5, undefined);
      expect(await codeOf(b.list('small-link', 5, p.next_cursor))).toBe('PATH_ESCAPES_ROOT');
    } finally {
      unlinkSync(join(root, 'small-link'));
    }
  });

  it('a cursor after the directory was replaced (rm + mkdir of the same name) is INVALID_CURSOR, cached handle or not', async () => {
    for (const fresh of [false, true]) {
      mkdirSync(join(root, 'replaced'));
      fillEmpty(join(root, 'replaced'), 50);
      const b = browser();
      const { next_cursor: c } = await b.list('replaced', 10, undefined);
      rmSync(join(root, 'replaced'), { recursive: true });
      mkdirSync(join(root, 'replaced'));
      fillEmpty(join(root, 'replaced'), 50);
      expect(await codeOf((fresh ? browser() : b).list('replaced', 10, c))).toBe('INVALID_CURSOR');
      rmSync(join(root, 'replaced'), { recursive: true });
    }
  });

  it('a cursor after the directory was swapped by rename for another one is INVALID_CURSOR', async () => {
    mkdirSync(join(root, 'swapped'));
    fillEmpty(join(root, 'swapped'), 50);
    mkdirSync(join(root, 'other'));
    fillEmpty(join(root, 'other'), 50);
    const b = browser();
    const { next_cursor: c } = await b.list('swapped', 10, undefined);
    renameSync(join(root, 'swapped'), join(root, 'swapped.old'));
    renameSync(join(root, 'other'), join(root, 'swapped'));
    expect(await codeOf(b.list('swapped', 10, c))).toBe('INVALID_CURSOR');
    rmSync(join(root, 'swapped'), { recursive: true });
    rmSync(join(root, 'swapped.old'), { recursive: true });
  });

  it('a re-scan whose last returned entry was deleted is INVALID_CURSOR (never a silent restart)', async () => {
    mkdirSync(join(root, 'shrinks'));
    fillEmpty(join(root, 'shrinks'), 50);
    const p = await browser().list('shrinks', 10, undefined);
    unlinkSync(join(root, 'shrinks', p.entries[9]!.name));
    expect(await codeOf(browser().list('shrinks', 10, p.next_cursor))).toBe('INVALID_CURSOR');
    rmSync(join(root, 'shrinks'), { recursive: true });
  });
});

describe('names and entry types', () => {
  it('non-UTF-8 names carry name_base64 with exactly the raw bytes; resumes after a raw name work (re-scan)', async () => {
    const dir = join(root, 'raw');
    mkdirSync(dir);
    const raws: Buffer[] = [];
    for (let i = 0; i < 150; i++) raws.push(Buffer.concat([Buffer.from([0xff, 0xfe]), Buffer.from(`r${i}`)])); // invalid lead bytes
    raws.push(Buffer.from([0xc3, 0x28])); // invalid 2-byte sequence
    raws.push(Buffer.from([0xed, 0xa0, 0x80])); // UTF-16 surrogate encoded (invalid in UTF-8)
    raws.push(Buffer.from([0xf0, 0x9f, 0x98])); // truncated 4-byte sequence
    for (const r of raws) touchRaw(dir, r);
    fillEmpty(dir, 10, 'utf8-é-');
    touchRaw(dir, Buffer.from('😀 emoji', 'utf8'));

    const entries: DirEntry[] = [];
    let cursor: string | undefined;
    let endedOnRaw = 0;
    do {
      const page = await browser().list('raw', 7, cursor); // a fresh browser: every page re-scans by raw name
      entries.push(...page.entries);
      if (page.has_more && page.entries[page.entries.length - 1]!.name_base64 !== undefined) endedOnRaw++;
      cursor = page.next_cursor;
    } while (cursor !== undefined);
    expect(endedOnRaw).toBeGreaterThan(0);
    expectSameSet(entries.map(rawKey), dir);
    const disk = readdirSync(dir, { encoding: 'buffer' });
    for (const e of entries) {
      const raw = e.name_base64 !== undefined ? Buffer.from(e.name_base64, 'base64') : Buffer.from(e.name);
      expect(disk.some((d) => d.equals(raw))).toBe(true);
      // name_base64 exactly when the raw name is not UTF-8
      expect(e.name_base64 !== undefined).toBe(!Buffer.from(raw.toString('utf8')).equals(raw));
      expect(e.type).toBe('file');
    }
    expect(entries.filter((e) => e.name_base64 !== undefined)).toHaveLength(raws.length);
    expect(entries.find((e) => e.name === '😀 emoji')?.name_base64).toBeUndefined();
  });

  it('symlink loops are listed as symlinks without being followed (no hang), and refused as directories', async () => {
    const dir = join(root, 'loops');
    mkdirSync(dir);
    symlinkSync('self-loop', join(dir, 'self-loop'));
    symlinkSync('b', join(dir, 'a'));
    symlinkSync('a', join(dir, 'b'));
    symlinkSync('.', join(dir, 'dot'));
    symlinkSync('..', join(dir, 'up'));
    mkdirSync(join(dir, 'realdir'));
    closeSync(openSync(join(dir, 'file'), 'w'));
    const page = await browser().list('loops', 50, undefined);
    const types = Object.fromEntries(page.entries.map((e) => [e.name, e.type]));
    expect(types).toEqual({ 'self-loop': 'symlink', a: 'symlink', b: 'symlink', dot: 'symlink', up: 'symlink', realdir: 'directory', file: 'file' });
    expect(await codeOf(browser().list('loops/self-loop', 50, undefined))).toBe('PATH_ESCAPES_ROOT');
    expect(await codeOf(browser().list('loops/a', 50, undefined))).toBe('PATH_ESCAPES_ROOT');
    expect(await codeOf(browser().list('loops/dot/dot/dot', 50, undefined))).toBe('PATH_ESCAPES_ROOT');
    expect(await codeOf(browser().list('loops/up', 50, undefined))).toBe('PATH_ESCAPES_ROOT');
  });
});

describe('a directory removed while it is being read', () => {
  it('removed during the first page (from inside the iteration): a clean end, never a throw', async () => {
    const dir = join(root, 'vanishing');
    mkdirSync(dir);
    const names = new Set(fillEmpty(dir, 6000, 'v')); // more than one getdents buffer
    let calls = 0;
    const page = await browser().list('vanishing', 5900, undefined, () => {
      if (calls++ === 0) rmSync(dir, { recursive: true });
      return true;
    });
    expect(page.entries.length).toBeLessThan(5900);
    for (const e of page.entries) expect(names.has(e.name)).toBe(true);
    expect(new Set(page.entries.map((e) => e.name)).size).toBe(page.entries.length);
    if (page.warning !== undefined) expect(page.warning).toMatch(/could not be read/);
  });

  it('removed between pages: the next page is a WorkspaceError (NOT_FOUND), from the cache or a re-scan', async () => {
    for (const fresh of [false, true]) {
      const dir = join(root, 'gone');
      mkdirSync(dir);
      fillEmpty(dir, 500);
      const b = browser();
      const p = await b.list('gone', 100, undefined);
      rmSync(dir, { recursive: true });
      expect(await codeOf((fresh ? browser() : b).list('gone', 100, p.next_cursor))).toBe('NOT_FOUND');
    }
  });

  it('emptied between pages (the directory itself stays): the cached handle ends cleanly', async () => {
    const dir = join(root, 'emptied');
    mkdirSync(dir);
    const names = new Set(fillEmpty(dir, 3000));
    const b = browser();
    let page = await b.list('emptied', 100, undefined);
    for (const n of names) unlinkSync(join(dir, n));
    let pages = 0;
    while (page.next_cursor !== undefined && pages++ < 100) {
      try {
        page = await b.list('emptied', 100, page.next_cursor);
      } catch (e) {
        expect(e).toBeInstanceOf(WorkspaceError);
        break;
      }
      for (const e of page.entries) expect(names.has(e.name)).toBe(true);
    }
    expect(pages).toBeLessThan(100);
    rmSync(dir, { recursive: true });
  });
});

describe('the handle cache', () => {
  it('stays within maxCachedHandles and closes the descriptors it evicts; close() closes the rest', async () => {
    const prefix = join(root, 'many');
    for (let i = 0; i < 12; i++) {
      mkdirSync(join(prefix, `d${i}`), { recursive: true });
      fillEmpty(join(prefix, `d${i}`), 20);
    }
    const before = openDirFds(prefix);
    const b = browser({ maxCachedHandles: 3 });
    for (let i = 0; i < 12; i++) {
      const p = await b.list(`many/d${i}`, 5, undefined); // each leaves a handle for its next page
      expect(p.has_more).toBe(true);
      expect(b.cachedHandles).toBeLessThanOrEqual(3);
    }
    expect(b.cachedHandles).toBe(3);
    // each cached page holds two descriptors: the listing and the handle it was opened through
    await until(() => openDirFds(prefix) - before <= 6, 'evicted handles to be closed');
    b.close();
    expect(b.cachedHandles).toBe(0);
    await until(() => openDirFds(prefix) === before, 'close() to close every handle');
  });

  it('expired handles (TTL) are closed on the next use of the cache', async () => {
    const prefix = join(root, 'ttl');
    for (let i = 0; i < 4; i++) {
      mkdirSync(join(prefix, `d${i}`), { recursive: true });
      fillEmpty(join(prefix, `d${i}`), 20);
    }
    const before = openDirFds(prefix);
    const b = browser({ handleTtlMs: 30 });
    for (let i = 0; i < 3; i++) await b.list(`ttl/d${i}`, 5, undefined);
    expect(b.cachedHandles).toBe(3);
    await new Promise((r) => setTimeout(r, 60));
    await b.list('ttl/d3', 5, undefined); // sweeps the three expired handles
    expect(b.cachedHandles).toBe(1);
    await until(() => openDirFds(prefix) - before <= 2, 'expired handles to be closed');
  });

  // Regression (a fixed bug): HandleCache.put() loops `while (size >= max)` and destructures the first entry of an empty
  // map when max is 0, so `maxCachedHandles: 0` (an obvious way to turn the cache off) throws a
  // TypeError from list() and leaks the directory handle it just filled.
  it('maxCachedHandles: 0 disables the cache (every page re-scans) instead of throwing', async () => {
    const b = browser({ maxCachedHandles: 0 });
    const { names } = await collect('small', 7, () => b);
    expectSameSet(names, join(root, 'small'));
  });
});

describe('workspace_scan (scanWorkspace)', () => {
  it('pages the root subdirectories only, with counts capped at SCAN_COUNT_CAP', async () => {
    const b = browser();
    const all: string[] = [];
    let cursor: string | undefined;
    let big: { entries: number; capped: boolean } | undefined;
    do {
      const page = await scanWorkspace(b, ws, 3, cursor);
      expect(page.directories.length).toBeLessThanOrEqual(3);
      for (const d of page.directories) {
        all.push(d.name);
        if (d.name === 'big') big = d;
      }
      cursor = page.next_cursor;
    } while (cursor !== undefined);
    const want = readdirSync(root, { withFileTypes: true }).filter((d) => d.isDirectory()).map((d) => d.name);
    expect(new Set(all)).toEqual(new Set(want));
    expect(all).toHaveLength(want.length);
    expect(big).toMatchObject({ entries: SCAN_COUNT_CAP, capped: true });
  });

  // Regression (a fixed bug): scanWorkspace() summarises `join(root, e.name)` where e.name is the lossy UTF-8 rendering of
  // a raw name, so a directory whose name is not UTF-8 is reported as "unreadable (ENOENT)" and the
  // summary has no name_base64 to tell which directory it was.
  it('a subdirectory with a non-UTF-8 name is counted, not reported unreadable', async () => {
    const t = tempTree('scan-raw');
    try {
      const raw = Buffer.from([0x64, 0xff, 0x64]);
      mkdirRaw(t.dir, raw);
      touchRaw(t.dir, Buffer.concat([raw, Buffer.from('/inner')]));
      const w = await Workspace.open(t.dir);
      const b = new DirectoryBrowser(w, new CursorCodec(KEY));
      browsers.push(b);
      const page = await scanWorkspace(b, w, 10, undefined);
      expect(page.directories).toHaveLength(1);
      expect(page.directories[0]!.error).toBeUndefined();
      expect(page.directories[0]).toMatchObject({ entries: 1, files: 1 });
    } finally {
      t.remove();
    }
  });
});

describe('a listing never outlives the handle it was opened through', () => {
  it('the descriptor number of a cached page stays open (never closed and reused) until the page is done', async () => {
    const rd = readdirSync;
    const os = openSync;
    const cs = closeSync;
    mkdirSync(join(root, 'owned'));
    fillEmpty(join(root, 'owned'), 30);
    const b = browser();
    const p1 = await b.list('owned', 5, undefined);
    // every /proc/self/fd entry that names the directory stays open while the page is cached
    const named = (): number => rd('/proc/self/fd').filter((fd) => {
      try {
        return readlinkSync(`/proc/self/fd/${fd}`) === join(root, 'owned');
      } catch {
        return false;
      }
    }).length;
    expect(named()).toBe(2);
    // new opens get other numbers, so the cached listing's lookups stay in its own directory
    const fds = Array.from({ length: 20 }, () => os(root, 'r'));
    const all: string[] = (p1.entries as { name: string }[]).map((e) => e.name);
    let cursor = p1.next_cursor;
    while (cursor !== undefined) {
      const p = await b.list('owned', 5, cursor);
      all.push(...p.entries.map((e) => e.name));
      cursor = p.next_cursor;
    }
    for (const fd of fds) cs(fd);
    expect(new Set(all).size).toBe(30);
    await until(() => named() === 0, 'the finished listing and its handle to be closed');
  });

  it('a directory of non-directories ends a scan page after the skip cap, and the cursor goes on', async () => {
    mkdirSync(join(root, 'skipper', 'zz-dir'), { recursive: true });
    fillEmpty(join(root, 'skipper'), 250);
    const b = new DirectoryBrowser(ws, new CursorCodec('k'), { maxFilterSkip: 100 });
    const found: string[] = [];
    let cursor: string | undefined;
    let pages = 0;
    do {
      const p = await b.list('skipper', 10, cursor, (d) => d.isDirectory(), 'scan');
      found.push(...p.entries.map((e) => e.name));
      cursor = p.next_cursor;
      pages++;
    } while (cursor !== undefined && pages < 20);
    expect(found).toEqual(['zz-dir']);
    expect(pages).toBeGreaterThanOrEqual(3);
  });
});
