/**
 * Child process of bench/search.bench.ts: runs one way of searching the 1,000,000-entry directory
 * in a process of its own and prints one JSON line with its peak RSS (VmHWM from /proc/self/status:
 * per address space, so it starts fresh at exec, unlike getrusage's maxRSS which keeps the
 * parent's high-water mark).
 *
 * Usage: node --import tsx bench/search.child.ts <mode> <fixture-root> [concurrency]
 *   noop         — open the workspace and warm both code paths on `small/` (the control)
 *   walk-first   — then searchFiles('big/*.txt', limit 50): the first page
 *   walk-none    — then searchFiles('big/*.none', limit 50): matches nothing, stops at the entry cap
 *   fg-first     — then the former fast-glob search of 'big/*.txt', stopped at 51 matches
 *   fg-none      — then the former fast-glob search of 'big/*.none' (the whole directory)
 * `concurrency` (default 1) runs that many of the operation at once.
 */
import { readFileSync } from 'node:fs';
import { Workspace } from '../src/fs/confine.js';
import { CursorCodec } from '../src/shared/cursor.js';
import { searchFiles } from '../src/fs/search.js';
import { fastGlobSearch } from './search-fast-glob.js';

const MODES = ['noop', 'walk-first', 'walk-none', 'fg-first', 'fg-none'] as const;
type Mode = (typeof MODES)[number];
const mode = process.argv[2] as Mode;
const root = process.argv[3];
const concurrency = Number(process.argv[4] ?? '1');
if (!MODES.includes(mode) || root === undefined) throw new Error(`usage: search.child.ts <${MODES.join('|')}> <root> [concurrency]`);

const kib = (field: string): number => {
  const m = new RegExp(`^${field}:\\s+(\\d+) kB`, 'm').exec(readFileSync('/proc/self/status', 'utf8'));
  return m === null ? NaN : Number(m[1]) / 1024;
};

const ws = await Workspace.open(root);
const cursors = new CursorCodec('bench-key');
// Warm-up: load both code paths and start the libuv threadpool.
await searchFiles(ws, cursors, 'small/*.txt', undefined, 50, undefined);
await fastGlobSearch(ws.root, 'small/*.txt', 50);
const before = kib('VmRSS');

const one = async (): Promise<number> => {
  switch (mode) {
    case 'walk-first':
      return (await searchFiles(ws, cursors, 'big/*.txt', undefined, 50, undefined)).matches.length;
    case 'walk-none':
      return (await searchFiles(ws, cursors, 'big/*.none', undefined, 50, undefined)).matches.length;
    case 'fg-first':
      return Math.min(50, (await fastGlobSearch(ws.root, 'big/*.txt', 50)).length);
    case 'fg-none':
      return (await fastGlobSearch(ws.root, 'big/*.none', 50)).length;
    default:
      return 0;
  }
};
const t0 = performance.now();
const counts = await Promise.all(Array.from({ length: concurrency }, one));
const ms = performance.now() - t0;
console.log(JSON.stringify({ mode, concurrency, ms: Math.round(ms), matches: counts[0], rssBeforeMiB: Math.round(before * 10) / 10, hwmMiB: Math.round(kib('VmHWM') * 10) / 10 }));
await ws.close();
