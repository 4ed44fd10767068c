/**
 * Child process of bench/memory.bench.ts: builds one oversized input, optionally bounds it once,
 * and prints one JSON line with its peak RSS (process.resourceUsage().maxRSS) and timings.
 *
 * Usage: node --expose-gc --max-old-space-size=8192 --import tsx bench/memory.child.ts <mode>
 *   array:build | array:bound | array:bound-maxitems | text:build | text:bound
 * Every mode does the same steps up to the bound (build, full GC, readings), so the difference
 * between a `:bound*` mode and its `:build` mode is what bounding adds.
 */
import { boundJson, resolveLimits } from '../dist/index.js';
import { arrayResult, textResult } from './fixtures.js';

const MODES = ['array:build', 'array:bound', 'array:bound-maxitems', 'text:build', 'text:bound'] as const;
type Mode = (typeof MODES)[number];
const mode = process.argv[2] as Mode;
if (!MODES.includes(mode)) throw new Error(`mode must be one of ${MODES.join(', ')}`);
if (typeof globalThis.gc !== 'function') throw new Error('run with --expose-gc');

const MiB = 1024 * 1024;
const maxRss = (): number => (process.resourceUsage().maxRSS * 1024) / MiB; // maxRSS is in KiB
const rss = (): number => process.memoryUsage().rss / MiB;

const limits = resolveLimits(mode === 'array:bound-maxitems' ? { maxItems: 10_000_000 } : {});
let t0 = performance.now();
const input: object = mode.startsWith('array') ? arrayResult(10_000_000) : textResult(500_000_000);
const buildMs = performance.now() - t0;
globalThis.gc();
const before = { maxRss: maxRss(), rss: rss(), heapUsed: process.memoryUsage().heapUsed / MiB };

let boundMs: number | undefined;
let outBytes: number | undefined;
if (mode.endsWith(':build') === false) {
  t0 = performance.now();
  const out = boundJson(input, limits);
  boundMs = performance.now() - t0;
  outBytes = Buffer.byteLength(out.json);
  if (!out.truncated || outBytes > limits.maxResultBytes) throw new Error('unexpected bound result');
}
const after = { maxRss: maxRss(), rss: rss(), heapUsed: process.memoryUsage().heapUsed / MiB };

console.log(
  JSON.stringify({
    mode,
    buildMs: Math.round(buildMs),
    boundMs,
    outBytes,
    maxRssAfterBuildMiB: Math.round(before.maxRss),
    rssAfterBuildMiB: Math.round(before.rss),
    heapUsedAfterBuildMiB: Math.round(before.heapUsed),
    maxRssMiB: Math.round(after.maxRss),
    rssEndMiB: Math.round(after.rss),
    heapUsedEndMiB: Math.round(after.heapUsed),
    // keep the input alive until the readings are taken
    keep: typeof input,
  }),
);
