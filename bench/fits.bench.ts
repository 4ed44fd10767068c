/**
 * Question: when a result already fits the default budget, what does bounding it cost over the
 * plain `JSON.stringify` the host would do anyway? Goal: `boundJson` ≤ 1.5 × `JSON.stringify`
 * of the same value (median, same run).
 *
 * Variants, per fixture size:
 *   - `JSON.stringify(x)`                  — the plain baseline
 *   - `boundJson(x, resolved)`             — hot-path API, limits resolved once (the goal's number)
 *   - `boundJson(x)`                       — options resolved on every call (for reference)
 *
 * Fixture: `mixedResult(target)` from bench/fixtures.ts, targets 1 KB, 16 KB, 60 KB serialized:
 * a summary text block + markdown listing blocks (newlines, quotes, some non-ASCII) + a
 * `structuredContent` of search hits (8 fields, a nested author object, a tags array) + `_meta`.
 * All within the default limits; asserted: `boundJson(x).json === JSON.stringify(x)`, unchanged.
 *
 * Command: npm run bench:fits   (node --expose-gc --import tsx bench/fits.bench.ts)
 * tinybench: 1500 ms per task after 250 ms warmup; median latency per call.
 *
 * Results — Intel Xeon Processor (2 vCPU, model name "Intel(R) Xeon(R) Processor"), 23.4 GiB RAM,
 * Node v20.20.2, linux-x64, 2025-12-02:
 *
 * | fixture | JSON bytes | JSON.stringify | boundJson(x, resolved) | ratio | boundJson(x) | ratio |
 * | --- | --- | --- | --- | --- | --- | --- |
 * | 1 KB  | RESULTS_PENDING |
 *
 * Reading: RESULTS_PENDING
 */
import { Bench } from 'tinybench';
import { boundJson, resolveLimits } from '../src/index.js';
import { mixedResult } from './fixtures.js';
import { assert, fmt, loadLine, machineLine, rows, table } from './util.js';

const GOAL_RATIO = 1.5;
const SIZES: [string, number][] = [
  ['1 KB', 1_000],
  ['16 KB', 16_000],
  ['60 KB', 60_000],
];

const limits = resolveLimits({});
let sink = 0; // keeps results observable so nothing is optimized away

console.log(`# fits: boundJson vs JSON.stringify on results that fit\n${machineLine()}\n`);

const bench = new Bench({ name: 'fits', time: 1500, warmupTime: 250 });
const fixtures: { label: string; value: object; bytes: number; text: number; hits: number }[] = [];
for (const [label, target] of SIZES) {
  const value = mixedResult(target);
  const json = JSON.stringify(value);
  // The variants must agree before they are timed.
  for (const out of [boundJson(value, limits), boundJson(value)]) {
    assert(out.unchanged && !out.truncated && out.report === undefined, `${label}: fixture must fit the default limits`);
    assert(out.json === json, `${label}: boundJson(x).json must equal JSON.stringify(x)`);
  }
  const v = value as { content: { text: string }[]; structuredContent: { results: unknown[] } };
  const text = v.content.reduce((n, b) => n + Buffer.byteLength(JSON.stringify(b.text)) - 2, 0);
  fixtures.push({ label, value, bytes: Buffer.byteLength(json), text, hits: v.structuredContent.results.length });
  bench
    .add(`${label} JSON.stringify`, () => {
      sink += JSON.stringify(value).length;
    })
    .add(`${label} boundJson(x, resolved)`, () => {
      sink += boundJson(value, limits).json.length;
    })
    .add(`${label} boundJson(x)`, () => {
      sink += boundJson(value).json.length;
    });
}

console.log(
  table(
    ['fixture', 'JSON bytes', 'text bytes', 'text blocks', 'hits'],
    fixtures.map((f) => [
      f.label,
      f.bytes,
      f.text,
      (f.value as { content: unknown[] }).content.length,
      f.hits,
    ]),
  ) + '\n',
);

await bench.run();
const r = rows(bench);
const body: string[][] = [];
const verdicts: string[] = [];
for (const f of fixtures) {
  const base = r.get(`${f.label} JSON.stringify`)!.median;
  const hot = r.get(`${f.label} boundJson(x, resolved)`)!.median;
  const cold = r.get(`${f.label} boundJson(x)`)!.median;
  body.push([
    f.label,
    String(f.bytes),
    fmt(base),
    fmt(hot),
    `${(hot / base).toFixed(2)}×`,
    fmt(cold),
    `${(cold / base).toFixed(2)}×`,
  ]);
  const ok = hot / base <= GOAL_RATIO;
  verdicts.push(`${f.label}: ratio ${(hot / base).toFixed(2)}× vs goal ≤ ${GOAL_RATIO}× — ${ok ? 'met' : 'MISSED'}`);
}
console.log(
  table(
    ['fixture', 'JSON bytes', 'JSON.stringify', 'boundJson(x, resolved)', 'ratio', 'boundJson(x)', 'ratio'],
    body,
  ),
);
console.log('\nsamples per task: ' + [...r.values()].map((x) => `${x.name}=${x.samples}`).join(', '));
console.log('\n' + verdicts.join('\n'));
console.log(`\nat end: ${loadLine()}`);
if (sink === 0) console.log('');
