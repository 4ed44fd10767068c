/**
 * Child process of bench/workspace.bench.ts: measures the memory of one way of taking the first
 * page of the 1,000,000-entry directory, in a process of its own, and prints one JSON line.
 *
 * Usage: node --expose-gc --import tsx bench/workspace.child.ts <mode> <list-root>
 *   noop        — the common steps only (the control: what the process does anyway)
 *   first-page  — then DirectoryBrowser.list('big', 50) (the result and its cached handle kept)
 *   readdir     — then fs.promises.readdir(<list-root>/big) (the 1M names kept)
 * Every mode does the same steps up to the operation: import the same modules, open the workspace,
 * warm both code paths on the 100-entry `small` directory (loads lazy code, starts the libuv
 * threadpool), close the warm-up handle, two full GCs. Readings before and after the operation:
 * RSS, V8 heap used, external + array buffers; "after" is read right after the operation (no GC:
 * what it took) and again after two full GCs (what it retains). Peak RSS (resourceUsage().maxRSS)
 * is not used: Linux carries the parent's high-water mark across fork/exec, so a child spawned by
 * the bench (which holds the fixture's names at that point) starts with a peak above its own RSS.
 */
import { readdir } from 'node:fs/promises';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { DirectoryBrowser } from '../src/fs/browse.js';
import { Workspace } from '../src/fs/confine.js';
import { CursorCodec } from '../src/shared/cursor.js';

const MODES = ['noop', 'first-page', 'readdir'] as const;
type Mode = (typeof MODES)[number];
const mode = process.argv[2] as Mode;
const root = process.argv[3];
if (!MODES.includes(mode) || root === undefined) throw new Error(`usage: workspace.child.ts <${MODES.join('|')}> <list-root>`);
if (typeof globalThis.gc !== 'function') throw new Error('run with --expose-gc');
const gc = globalThis.gc;

const MiB = 1024 * 1024;
const reading = (): { rss: number; heapUsed: number; external: number } => {
  const m = process.memoryUsage();
  return {
    rss: m.rss / MiB,
    heapUsed: m.heapUsed / MiB,
    external: (m.external + m.arrayBuffers) / MiB,
  };
};

const ws = await Workspace.open(root);
const browser = new DirectoryBrowser(ws, new CursorCodec('fixed-key'));
const warm = await browser.list('small', 50, undefined);
const warmNames = await readdir(join(ws.root, 'small'));
if (warm.entries.length !== 50 || warmNames.length !== 100) throw new Error('the warm-up directory must hold 100 entries');
browser.close();
gc();
gc();
await sleep(50); // let the closes and finalizers settle
gc();

const before = reading();
const t0 = performance.now();
let kept: unknown;
if (mode === 'first-page') {
  const page = await browser.list('big', 50, undefined);
  if (page.entries.length !== 50 || !page.has_more || browser.cachedHandles !== 1) throw new Error('unexpected first page');
  kept = page;
} else if (mode === 'readdir') {
  const names = await readdir(join(ws.root, 'big'));
  if (names.length !== 1_000_000) throw new Error(`expected 1,000,000 names, got ${names.length}`);
  kept = names;
}
const ms = performance.now() - t0;
const took = reading();
gc();
gc();
const retained = reading();

const d = (a: number, b: number): number => Math.round((a - b) * 1000) / 1000; // MiB, 3 decimals
console.log(
  JSON.stringify({
    mode,
    ms: Math.round(ms * 1000) / 1000,
    rssBeforeMiB: d(before.rss, 0),
    rssDeltaMiB: d(took.rss, before.rss),
    heapDeltaMiB: d(took.heapUsed, before.heapUsed),
    externalDeltaMiB: d(took.external, before.external),
    retainedRssDeltaMiB: d(retained.rss, before.rss),
    retainedHeapDeltaMiB: d(retained.heapUsed, before.heapUsed),
    // keeps the result alive until the readings are taken
    kept: kept === undefined ? 0 : 1,
  }),
);
