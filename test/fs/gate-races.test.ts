/**
 * Races against the workspace gate: a swapper process exchanges a directory inside the root and a
 * symlink to an outside directory (atomically, thousands of times) while listing, scanning,
 * reading, seeding (with directory creation) and rollback run in a loop. Zero outside effects are
 * allowed: no outside name listed or counted, no outside byte read, nothing written, created or
 * removed outside, and every successful write found inside afterwards.
 */
import { mkdirSync, readdirSync, symlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DirectoryBrowser } from '../../src/fs/browse.js';
import { Workspace, WorkspaceError } from '../../src/fs/confine.js';
import { CursorCodec } from '../../src/shared/cursor.js';
import { readWindow } from '../../src/fs/read-window.js';
import { scanWorkspace } from '../../src/fs/scan.js';
import { seedFiles } from '../../src/fs/seed.js';
import { snapshot, tempTree } from '../helpers/fs-tree.js';
import { exchanger, startSwapper } from '../helpers/swapper.js';

const SECRET = 'OUTSIDE-SECRET';
const INSIDE = 'inside-content';
const RACE_MS = 1500;
/** Codes a raced call may answer with; anything else (or a raw error) fails the test. */
const REFUSALS = new Set(['PATH_ESCAPES_ROOT', 'NOT_FOUND', 'NOT_A_DIRECTORY', 'IO_ERROR', 'ALREADY_EXISTS']);

let tree: ReturnType<typeof tempTree>;
let root: string;
let outside: string;
let ws: Workspace;
let cmd: string[] | undefined;

beforeAll(async () => {
  tree = tempTree('gate-races');
  root = join(tree.dir, 'root');
  outside = join(tree.dir, 'outside');
  mkdirSync(join(root, 'race', 'dir'), { recursive: true });
  writeFileSync(join(root, 'race', 'dir', 'f.txt'), INSIDE);
  writeFileSync(join(root, 'race', 'dir', 'inside-marker'), '');
  writeFileSync(join(root, 'race', 'existing'), 'keep');
  mkdirSync(join(outside, 'dir', 'rb'), { recursive: true }); // an empty directory a rollback must never remove
  writeFileSync(join(outside, 'dir', 'f.txt'), SECRET);
  writeFileSync(join(outside, 'dir', 'outside-marker'), '');
  symlinkSync(join(outside, 'dir'), join(root, 'race', 'link'));
  // for the scan: a root-level directory with 3 entries trading places with a link to 7 outside
  mkdirSync(join(root, 'scan-a'));
  for (let i = 0; i < 3; i++) writeFileSync(join(root, 'scan-a', `in${i}`), '');
  mkdirSync(join(outside, 'scan'));
  for (let i = 0; i < 7; i++) writeFileSync(join(outside, 'scan', `out${i}`), '');
  symlinkSync(join(outside, 'scan'), join(root, 'scan-b'));
  ws = await Workspace.open(root);
  cmd = exchanger(tree.dir);
});

afterAll(async () => {
  await ws?.close();
  tree?.remove();
});

function tally(outcomes: Record<string, number>, e: unknown): void {
  if (!(e instanceof WorkspaceError)) throw e;
  expect(REFUSALS.has(e.code), `unexpected ${e.code}: ${e.message}`).toBe(true);
  outcomes[e.code] = (outcomes[e.code] ?? 0) + 1;
}

describe('the gate under a directory ⇄ symlink exchange', () => {
  it('list, read, seed, mkdir and rollback never reach outside; every write that succeeded is inside', async (ctx) => {
    if (cmd === undefined) ctx.skip();
    const before = snapshot(outside);
    const browser = new DirectoryBrowser(ws, new CursorCodec('k'), { maxCachedHandles: 0 });
    const swapper = await startSwapper(cmd!, join(root, 'race', 'dir'), join(root, 'race', 'link'), RACE_MS);
    const outcomes: Record<string, number> = {};
    const ok = (k: string): void => void (outcomes[k] = (outcomes[k] ?? 0) + 1);
    const written: string[] = [];
    let i = 0;
    while (swapper.running()) {
      i++;
      try {
        const page = await browser.list('race/dir', 50, undefined);
        expect(page.entries.map((e) => e.name)).not.toContain('outside-marker');
        ok('list');
      } catch (e) {
        tally(outcomes, e);
      }
      try {
        expect((await readWindow(ws, 'race/dir/f.txt', 0, 100)).content).toBe(INSIDE);
        ok('read');
      } catch (e) {
        tally(outcomes, e);
      }
      for (const path of [`race/dir/n${i}.txt`, `race/dir/d${i}/x.txt`]) {
        try {
          await seedFiles(ws, [{ path, content: INSIDE }], false);
          written.push(path);
          ok('seed');
        } catch (e) {
          tally(outcomes, e);
        }
      }
      try {
        // creates race/dir/rb, then fails on the existing file: the rollback removes what it created
        await seedFiles(ws, [{ path: 'race/dir/rb/x.txt', content: INSIDE }, { path: 'race/existing', content: 'x' }], false);
        throw new Error('the batch should have been refused');
      } catch (e) {
        tally(outcomes, e);
      }
    }
    const swaps = await swapper.done;
    expect(swaps).toBeGreaterThan(1000);
    // nothing outside changed: no file written, no directory created or removed, no content changed
    expect(snapshot(outside)).toEqual(before);
    // every write that succeeded is inside, under the real directory
    for (const path of written) expect(readdirSync(join(root, ...path.split('/').slice(0, -1)))).toContain(path.split('/').at(-1));
    // the race was really exercised: both outcomes happened for reads and writes
    expect(outcomes.list ?? 0).toBeGreaterThan(0);
    expect(outcomes.read ?? 0).toBeGreaterThan(0);
    expect(outcomes.seed ?? 0).toBeGreaterThan(0);
    expect((outcomes.PATH_ESCAPES_ROOT ?? 0) + (outcomes.NOT_A_DIRECTORY ?? 0)).toBeGreaterThan(0);
    expect(outcomes.ALREADY_EXISTS ?? 0).toBeGreaterThan(0);
  });

  it('overwrites racing a file ⇄ directory exchange leave no staging file or backup behind', async (ctx) => {
    if (cmd === undefined) ctx.skip();
    mkdirSync(join(root, 'ow-area', 'owd'), { recursive: true });
    writeFileSync(join(root, 'ow-area', 'owd', 'keep'), 'k');
    writeFileSync(join(root, 'ow-area', 'ow'), 'old');
    const swapper = await startSwapper(cmd!, join(root, 'ow-area', 'ow'), join(root, 'ow-area', 'owd'), RACE_MS);
    const outcomes: Record<string, number> = {};
    while (swapper.running()) {
      try {
        await seedFiles(ws, [{ path: 'ow-area/ow', content: 'new' }], true);
        outcomes.ok = (outcomes.ok ?? 0) + 1;
      } catch (e) {
        if (!(e instanceof WorkspaceError)) throw e;
        outcomes[e.code] = (outcomes[e.code] ?? 0) + 1;
      }
    }
    expect(await swapper.done).toBeGreaterThan(1000);
    const stray = [...readdirSync(join(root, 'ow-area')), ...readdirSync(join(root, 'ow-area', 'owd')).map((n) => `owd/${n}`)].filter((n) =>
      n.includes('.mcp-budget-'),
    );
    expect(stray, JSON.stringify(outcomes)).toEqual([]);
  });

  it('scan never counts the entries of an outside directory that trades places with a subdirectory', async (ctx) => {
    if (cmd === undefined) ctx.skip();
    const browser = new DirectoryBrowser(ws, new CursorCodec('k'), { maxCachedHandles: 0 });
    const swapper = await startSwapper(cmd!, join(root, 'scan-a'), join(root, 'scan-b'), RACE_MS);
    const counts = new Map<number | string, number>();
    while (swapper.running()) {
      const page = await scanWorkspace(browser, ws, 20, undefined);
      for (const d of page.directories) {
        if (!d.name.startsWith('scan-')) continue;
        const k = d.error === undefined ? d.entries : 'refused';
        counts.set(k, (counts.get(k) ?? 0) + 1);
      }
    }
    expect(await swapper.done).toBeGreaterThan(1000);
    expect(counts.has(7)).toBe(false);
    expect(counts.get(3) ?? 0).toBeGreaterThan(0);
  });
});
