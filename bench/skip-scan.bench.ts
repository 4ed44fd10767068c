/**
 * Question: how close does the skip scanner come to memory speed? Goal (the tokenizer's): skipping
 * JSON within 2× the time to merely read the bytes and `indexOf` a newline; here the floor is the
 * `indexOf` alone over bytes already in memory, so the ratios below are the stricter ones.
 *
 * Variants, per fixture:
 *   - floor            — `buf.indexOf(10)` over the whole buffer (no newline in it: a full pass)
 *   - copy             — the host's share of scanSkipWasm: the bytes copied in 256 KiB windows into
 *                        one reused buffer (as the host copies them into the kernel's memory), so
 *                        that scanSkipWasm − copy is the kernel's own cost
 *   - scanSkipJs       — the JavaScript reference (src/engine/skip-scan.ts)
 *   - scanSkipWasm     — the WebAssembly SIMD kernel (src/engine/skip-scan-wasm.ts; copies the
 *                        bytes into its memory in windows of up to 256 KiB, included in the time)
 * The array is scanned twice: skip mode (the whole array as one value, from its `[`) and bulk mode
 * (counting the rest of the array from after its `[`: commas at depth 0, stop at its `]`).
 *
 * Fixture, 64 MiB each, built once outside timing:
 *   string: one JSON string, `"` + `lorem ipsum \"quoted\" and a \\ backslash\n` repeated + `"`
 *           (4 escapes per 42 bytes), skipped from its opening quote;
 *   array:  `[` + `{"id":12345,"name":"file-12345.txt","tags":["a","b"],"size":1024}` repeated
 *           with `,` between (≈ 66 B per object) + `]`.
 * Asserted before timing: both scanners return the same index and final state, the end of the
 * fixture (or its `]`), and in bulk mode one comma fewer than objects.
 *
 * Command: npm run bench:skip   (node --expose-gc --import tsx bench/skip-scan.bench.ts)
 * tinybench: ≥ 1500 ms and ≥ 5 samples per task after 2 warmup calls; median per call, in ns/byte.
 *
 * Results — Intel Xeon Processor (2 vCPU, model name "Intel(R) Xeon(R) Processor"), 23.5 GiB RAM,
 * Node v20.20.2, linux-x64, 2026-12-03, load 2.2–2.9 from other jobs (wall-clock medians; idle runs
 * come out faster, the floor included). The kernel of this commit; two runs alternated with the
 * previous kernel (commit a3c41eb), the second shown:
 *
 * | fixture | floor ns/B | copy ns/B | scanSkipJs ns/B | scanSkipWasm ns/B | wasm − copy ns/B | wasm / floor | js / floor | js / wasm |
 * | --- | --- | --- | --- | --- | --- | --- | --- | --- |
 * | string (skip) | 0.041 | 0.050 | 1.120 | 0.171 | 0.122 | 4.21× | 27.5× | 6.5× |
 * | array (skip) | 0.038 | 0.048 | 3.340 | 0.230 | 0.182 | 5.99× | 87.1× | 14.6× |
 * | array (bulk) | 0.038 | 0.048 | 3.456 | 0.276 | 0.228 | 7.19× | 90.1× | 12.5× |
 * (First run: wasm 0.172 / 0.240 / 0.280. The previous kernel in the same session: wasm 0.207 /
 * 0.272 / 0.360 and 0.209 / 0.278 / 0.365, that is wasm − copy 0.16 / 0.23 / 0.31.)
 *
 * Reading: the WebAssembly scanner is 6–15× faster than the JavaScript reference, and 4–7× the
 * in-memory `indexOf` floor, which neither copies nor classifies bytes. Copying into the kernel's
 * memory is about 0.05 ns/B; the kernel's own cost (wasm − copy) fell by a quarter with this
 * kernel (0.16 → 0.12 string, 0.23 → 0.18 array skip, 0.31 → 0.23 array bulk). On bytes already
 * in its memory and CPU time alone (no load effects), it is ≈ 0.07 string, 0.13 array skip, 0.17
 * array bulk (0.10 / 0.16 / 0.235 before). What is left per 64-byte block is mostly fixed: four
 * byte-class masks, the prefix xor of the quotes, and for an array of small objects (the depth
 * reaches 0 in every block) the depth before each closing bracket. Against the tokenizer's goal
 * floor, reading the bytes with synchronous reads and `indexOf` (≈ 0.2–0.3 ns/B here, see
 * bench/stream.bench.ts), skipping a string costs well under it, and bulk-counting an array of
 * small objects still a little more than it.
 */
import { Bench } from 'tinybench';
import { newSkipState, scanSkipJs, scanSkipWasm, wasmSimdAvailable, type SkipScan, type SkipState } from '../src/engine/index.js';
import { assert, machineLine, rows, table } from './util.js';

const SIZE = 64 * 1024 * 1024;
const GOAL_RATIO = 2;

function stringFixture(): Buffer {
  const unit = 'lorem ipsum \\"quoted\\" and a \\\\ backslash\\n';
  return Buffer.from('"' + unit.repeat(Math.floor((SIZE - 2) / unit.length)) + '"');
}

function arrayFixture(): { buf: Buffer; objects: number } {
  const parts: string[] = [];
  let bytes = 2;
  while (bytes < SIZE) {
    const id = 10_000 + (parts.length % 90_000);
    const obj = `{"id":${id},"name":"file-${id}.txt","tags":["a","b"],"size":1024}`;
    parts.push(obj);
    bytes += obj.length + 1;
  }
  return { buf: Buffer.from('[' + parts.join(',') + ']'), objects: parts.length };
}

interface Case {
  label: string;
  buf: Buffer;
  start: number;
  bulk: boolean;
  /** The expected return value and (bulk) comma count. */
  end: number;
  commas: number;
}

const str = stringFixture();
const arr = arrayFixture();
const cases: Case[] = [
  { label: 'string (skip)', buf: str, start: 0, bulk: false, end: str.length, commas: 0 },
  { label: 'array (skip)', buf: arr.buf, start: 0, bulk: false, end: arr.buf.length, commas: 0 },
  { label: 'array (bulk)', buf: arr.buf, start: 1, bulk: true, end: arr.buf.length - 1, commas: arr.objects - 1 },
];

assert(wasmSimdAvailable, 'this runtime must have WebAssembly SIMD');
console.log(`# skip-scan: scanSkipJs vs scanSkipWasm vs indexOf floor and window copy, 64 MiB per fixture\n${machineLine()}\n`);

let sink = 0;
const run = (scan: SkipScan, c: Case): SkipState => {
  const st = newSkipState(c.bulk, false);
  sink += scan(c.buf, c.start, st);
  return st;
};
for (const c of cases) {
  const js = newSkipState(c.bulk, false);
  const wasm = newSkipState(c.bulk, false);
  const rj = scanSkipJs(c.buf, c.start, js);
  const rw = scanSkipWasm(c.buf, c.start, wasm);
  assert(rj === c.end && rw === c.end, `${c.label}: both scanners end at ${c.end} (js ${rj}, wasm ${rw})`);
  assert(JSON.stringify(js) === JSON.stringify(wasm), `${c.label}: same final state`);
  assert(js.commas === c.commas, `${c.label}: ${c.commas} commas (got ${js.commas})`);
}

const WINDOW = 256 * 1024;
const window = new Uint8Array(WINDOW);
const copyAll = (buf: Buffer): void => {
  for (let p = 0; p < buf.length; p += WINDOW) window.set(buf.subarray(p, Math.min(buf.length, p + WINDOW)));
  sink += window[0]!;
};

const bench = new Bench({ name: 'skip-scan', time: 1500, iterations: 5, warmupTime: 0, warmupIterations: 2 });
bench.add('string floor', () => {
  sink += str.indexOf(10);
});
bench.add('array floor', () => {
  sink += arr.buf.indexOf(10);
});
bench.add('string copy', () => copyAll(str));
bench.add('array copy', () => copyAll(arr.buf));
for (const c of cases) {
  bench.add(`${c.label} scanSkipJs`, () => void run(scanSkipJs, c));
  bench.add(`${c.label} scanSkipWasm`, () => void run(scanSkipWasm, c));
}
await bench.run();

const r = rows(bench);
const nsPerByte = (name: string, bytes: number): number => (r.get(name)!.median * 1e6) / bytes;
const body: string[][] = [];
const verdicts: string[] = [];
for (const c of cases) {
  const bytes = c.buf.length - c.start;
  const shape = c.label.startsWith('string') ? 'string' : 'array';
  const floor = nsPerByte(`${shape} floor`, c.buf.length);
  const copy = nsPerByte(`${shape} copy`, c.buf.length);
  const js = nsPerByte(`${c.label} scanSkipJs`, bytes);
  const wasm = nsPerByte(`${c.label} scanSkipWasm`, bytes);
  body.push([
    c.label,
    floor.toFixed(3),
    copy.toFixed(3),
    js.toFixed(3),
    wasm.toFixed(3),
    (wasm - copy).toFixed(3),
    `${(wasm / floor).toFixed(2)}×`,
    `${(js / floor).toFixed(1)}×`,
    `${(js / wasm).toFixed(1)}×`,
  ]);
  const ok = wasm / floor <= GOAL_RATIO;
  verdicts.push(`${c.label}: wasm/floor ${(wasm / floor).toFixed(2)}× vs ≤ ${GOAL_RATIO}× (in-memory floor) — ${ok ? 'met' : 'missed'}`);
}
console.log(
  table(
    ['fixture', 'floor ns/B', 'copy ns/B', 'scanSkipJs ns/B', 'scanSkipWasm ns/B', 'wasm − copy ns/B', 'wasm / floor', 'js / floor', 'js / wasm'],
    body,
  ),
);
console.log('\nsamples per task: ' + [...r.values()].map((x) => `${x.name}=${x.samples}`).join(', '));
console.log('\n' + verdicts.join('\n'));
if (sink === 0) console.log('');
