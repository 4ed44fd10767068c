/**
 * The search walk (src/fs/glob-walk.ts, through searchFiles): cursor walks of a 10k-file tree at
 * several limits, page byte sizes, entry caps and a zero time cap join to exactly the full result
 * (no repeat, no loss); the entry cap stops a walk of a 20k-entry directory at the cap and the walk
 * resumes to completion; the re-read to a position is capped; non-UTF-8 names on the way and in
 * matches; the depth and path caps say what they left out; a changed tree is refused or skipped.
 */
import { closeSync, mkdirSync, openSync, renameSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Workspace } from '../../src/fs/confine.js';
import { CursorCodec } from '../../src/shared/cursor.js';
import { GlobPlan } from '../../src/fs/glob-pattern.js';
import { GlobWalk } from '../../src/fs/glob-walk.js';
import { DEFAULT_SEARCH_LIMITS, searchFiles, type SearchPage } from '../../src/fs/search.js';
import { mkdirRaw, rawPath, tempTree, touchRaw } from '../helpers/fs-tree.js';

let tree: ReturnType<typeof tempTree>;
let root: string;
let ws: Workspace;
const cursors = new CursorCodec('walk-test-key');
const FLAT = 20_000;

type Opts = Parameters<typeof searchFiles>[7];

/** Every match of a cursor walk, and the pages it took. */
async function walkAll(query: string, path: string | undefined, limit: number, opts: Opts = {}, pageBytes?: number): Promise<{ all: string[]; pages: SearchPage[] }> {
  const all: string[] = [];
  const pages: SearchPage[] = [];
  let cursor: string | undefined;
  do {
    const page = await searchFiles(ws, cursors, query, path, limit, cursor, pageBytes, opts);
    expect(page.matches.length).toBeLessThanOrEqual(limit);
    all.push(...page.matches);
    pages.push(page);
    cursor = page.next_cursor;
    expect(page.has_more).toBe(cursor !== undefined);
  } while (cursor !== undefined);
  return { all, pages };
}

beforeAll(async () => {
  tree = tempTree('glob-walk');
  root = tree.dir;
  for (let d = 0; d < 10; d++) {
    for (let e = 0; e < 10; e++) {
      const dir = join(root, 't', `d${d}`, `e${e}`);
      mkdirSync(dir, { recursive: true });
      for (let f = 0; f < 100; f++) closeSync(openSync(join(dir, `f${f}.${f % 2 === 0 ? 'txt' : 'md'}`), 'w'));
    }
  }
  mkdirSync(join(root, 't', '.hidden'));
  writeFileSync(join(root, 't', '.hidden', 'h.txt'), '');
  mkdirSync(join(root, 'flat'));
  for (let i = 0; i < FLAT; i++) closeSync(openSync(join(root, 'flat', `g${i}.dat`), 'w'));
  mkdirSync(join(root, 'raw'));
  touchRaw(join(root, 'raw'), Buffer.from([0x66, 0xff, 0x2e, 0x74, 0x78, 0x74])); // "f\xff.txt"
  mkdirRaw(join(root, 'raw'), Buffer.from([0x64, 0xfe])); // "d\xfe"
  for (let i = 0; i < 30; i++) closeSync(openSync(rawPath(join(root, 'raw'), Buffer.from(`\x64\xfe/x${i}.txt`, 'latin1')), 'w'));
  let deep = join(root, 'deep');
  for (let i = 0; i < 40; i++) deep = join(deep, `l${i}`);
  mkdirSync(deep, { recursive: true });
  writeFileSync(join(deep, 'f.txt'), '');
  ws = await Workspace.open(root);
}, 120_000);

afterAll(async () => {
  await ws?.close();
  tree?.remove();
});

const txt = new Set<string>();
for (let d = 0; d < 10; d++) for (let e = 0; e < 10; e++) for (let f = 0; f < 100; f += 2) txt.add(`d${d}/e${e}/f${f}.txt`);

describe('cursor walks of a 10k-file tree', () => {
  it.each([7, 50, 200])('limit %i: every match once, nothing lost', async (limit) => {
    const { all, pages } = await walkAll('**/*.txt', 't', limit);
    expect(all.length).toBe(txt.size);
    expect(new Set(all)).toEqual(txt);
    expect(pages.length).toBe(Math.ceil(txt.size / limit)); // a full last page already knows it is the last
  });

  it('limit 1 through one subtree, and a literal base', async () => {
    const { all } = await walkAll('d3/**/*.txt', 't', 1);
    expect(new Set(all)).toEqual(new Set([...txt].filter((m) => m.startsWith('d3/'))));
    expect(all.length).toBe(500);
    const lit = await walkAll('t/{d1,d2}/e5/f1?.txt', undefined, 1);
    expect(lit.all.sort()).toEqual(['10', '12', '14', '16', '18'].flatMap((n) => [`t/d1/e5/f${n}.txt`, `t/d2/e5/f${n}.txt`]).sort());
  });

  it('pages cut by bytes, by a small entry cap, and by a zero time cap join to the same result', async () => {
    const full = new Set((await walkAll('**/*.md', 't', 200)).all);
    expect(full.size).toBe(5000);
    for (const [opts, bytes] of [[{}, 300], [{ maxVisits: 97 }, undefined], [{ maxMs: 0, minProgress: 50 }, undefined]] as [Opts, number | undefined][]) {
      const { all, pages } = await walkAll('**/*.md', 't', 50, opts, bytes);
      expect(all.length, JSON.stringify(opts)).toBe(5000);
      expect(new Set(all)).toEqual(full);
      if (opts?.maxVisits !== undefined || opts?.maxMs !== undefined) {
        expect(pages.some((p) => p.truncated_scan === true && p.note!.includes('per-call cap'))).toBe(true);
      }
      if (bytes !== undefined) expect(pages.every((p) => JSON.stringify(p.matches).length <= bytes + 50)).toBe(true);
    }
  });

  it('dot semantics: `**` does not enter a dot directory, an explicit one is entered', async () => {
    expect((await searchFiles(ws, cursors, '**/h.txt', 't', 10, undefined)).matches).toEqual([]);
    expect((await searchFiles(ws, cursors, '.hidden/*', 't', 10, undefined)).matches).toEqual(['.hidden/h.txt']);
  });
});

describe('caps', () => {
  it('the entry cap stops a walk of a 20k-entry directory at the cap; the walk resumes to completion', async () => {
    const cap = 1500;
    const base = await ws.openDir('flat');
    const walk = new GlobWalk(base, GlobPlan.compile('*.none'), { ...DEFAULT_SEARCH_LIMITS, maxVisits: cap });
    expect(await walk.run(() => true)).toBe('visits');
    expect(walk.visited).toBe(cap);
    expect(walk.position().dirs).toEqual([]);
    await walk.close();

    const { all, pages } = await walkAll('*7.dat', 'flat', 200, { maxVisits: cap });
    expect(new Set(all).size).toBe(FLAT / 10);
    expect(all.length).toBe(FLAT / 10);
    const truncated = pages.filter((p) => p.truncated_scan);
    expect(truncated.length).toBeGreaterThanOrEqual(Math.floor(FLAT / cap) - 1);
    const none = await walkAll('*.none', 'flat', 10, { maxVisits: cap });
    expect(none.all).toEqual([]);
    expect(none.pages.length).toBe(Math.ceil(FLAT / cap) + (FLAT % cap === 0 ? 1 : 0));
  });

  it('the re-read to a position is capped (INVALID_CURSOR), not unbounded', async () => {
    let page = await searchFiles(ws, cursors, '*.none', 'flat', 10, undefined, undefined, { maxVisits: 3000, maxResumeSkip: 5000 });
    page = await searchFiles(ws, cursors, '*.none', 'flat', 10, page.next_cursor, undefined, { maxVisits: 3000, maxResumeSkip: 5000 });
    expect(page.truncated_scan).toBe(true);
    await expect(searchFiles(ws, cursors, '*.none', 'flat', 10, page.next_cursor, undefined, { maxVisits: 3000, maxResumeSkip: 5000 })).rejects.toMatchObject({ code: 'INVALID_CURSOR' });
  });

  it('depth and path caps: directories below them are not entered and the note says so', async () => {
    const capped = await searchFiles(ws, cursors, '**/f.txt', 'deep', 10, undefined);
    expect(capped.matches).toEqual([]);
    expect(capped.note).toMatch(/1 directory was not entered: deeper than 32 levels/);
    const deeper = await searchFiles(ws, cursors, '**/f.txt', 'deep', 10, undefined, undefined, { maxDepth: 64 });
    expect(deeper.matches).toEqual([[...Array(40).keys()].map((i) => `l${i}`).join('/') + '/f.txt']);
    expect((await searchFiles(ws, cursors, '**/f.txt', 'deep', 10, undefined, undefined, { maxDepth: 64, maxPathBytes: 20 })).note).toMatch(/20 bytes below/);
  });
});

describe('names that are not UTF-8', () => {
  it('match on the lossy name, carry the raw path, and survive a cursor through a raw directory name', async () => {
    const top = await searchFiles(ws, cursors, '*.txt', 'raw', 10, undefined);
    expect(top.matches).toEqual(['f\uFFFD.txt']);
    expect(top.non_utf8).toEqual([{ index: 0, path_base64: Buffer.from('f\xff.txt', 'latin1').toString('base64') }]);
    const { all, pages } = await walkAll('*/*.txt', 'raw', 1);
    expect(all.length).toBe(30);
    expect(new Set(all).size).toBe(30);
    expect(all.every((m) => m.startsWith('d\uFFFD/'))).toBe(true);
    const raw = Buffer.from(pages[0]!.non_utf8![0]!.path_base64, 'base64');
    expect(raw.subarray(0, 3)).toEqual(Buffer.from([0x64, 0xfe, 0x2f]));
  });
});

describe('a tree that changes between pages', () => {
  it("the cursor's last entry removed: INVALID_CURSOR; a directory on its path now a link: the walk goes on after it", async () => {
    mkdirSync(join(root, 'chg', 'a'), { recursive: true });
    mkdirSync(join(root, 'chg', 'b'), { recursive: true });
    for (let i = 0; i < 5; i++) writeFileSync(join(root, 'chg', 'a', `x${i}`), '');
    for (let i = 0; i < 5; i++) writeFileSync(join(root, 'chg', 'b', `x${i}`), '');
    const first = await searchFiles(ws, cursors, '*/x*', 'chg', 2, undefined);
    const [dir, name] = first.matches[1]!.split('/') as [string, string];
    rmSync(join(root, 'chg', dir, name));
    await expect(searchFiles(ws, cursors, '*/x*', 'chg', 2, first.next_cursor)).rejects.toMatchObject({ code: 'INVALID_CURSOR' });
    writeFileSync(join(root, 'chg', dir, name), '');
    const again = await searchFiles(ws, cursors, '*/x*', 'chg', 2, undefined);
    const [inDir] = again.matches[1]!.split('/') as [string];
    renameSync(join(root, 'chg', inDir), join(root, 'chg', 'gone'));
    symlinkSync(join(root, 'chg', 'gone'), join(root, 'chg', inDir));
    const rest = await searchFiles(ws, cursors, '*/x*', 'chg', 100, again.next_cursor);
    expect(rest.matches.filter((m) => m.startsWith(`${inDir}/`))).toEqual([]);
    expect(rest.note).toMatch(/1 directory could not be read/);
    mkdirSync(join(root, 'chg2'));
    const c = (await searchFiles(ws, cursors, '*/x*', 'chg', 1, undefined)).next_cursor;
    expect(c).toBeDefined();
    renameSync(join(root, 'chg'), join(root, 'chg-old'));
    renameSync(join(root, 'chg2'), join(root, 'chg'));
    await expect(searchFiles(ws, cursors, '*/x*', 'chg', 1, c)).rejects.toMatchObject({ code: 'INVALID_CURSOR', message: expect.stringMatching(/replaced/) });
  });
});
