/**
 * Question: does the cost of bounding an oversized result follow the budget, not the input?
 * Goal: 64 KiB out of a 10M-item array (≈ 1.19 GB as JSON) and out of a 500 MB string each
 * ≤ 5 ms median, and ≤ 2× the median for a 10 MB value of the same shape (same run).
 *
 * Variants (each on the huge input and on the 10 MB input of the same shape):
 *   array  — `JSON.stringify` (plain baseline; throws on the huge input, timed once)
 *          — `boundJson(x, defaults)`            (maxItems 200 binds: `array_items`)
 *          — `boundJson(x, {maxItems: 10_000_000})` (bytes bind: `result_bytes`)
 *   text   — `JSON.stringify` (plain baseline; the 500 MB one timed once)
 *          — `boundJson(x, defaults)`            (maxBlockBytes 32 KiB binds: `text_block_bytes`)
 *          — `boundJson(x, {maxTextBytes: 1 GiB, maxBlockBytes: 1 GiB})` (bytes bind: `result_bytes`)
 *
 * Fixture (bench/fixtures.ts), built once per process, outside any timing:
 *   array: `{content: [short text], structuredContent: {items: [n × catalogItem]}}`, ≈ 119 B/item;
 *          n = 10 000 000 (≈ 1.19 GB) and n = 85 000 (≈ 10.0 MB).
 *   text:  `{content: [{type: 'text', text: 'x' × n}]}`, n = 500 000 000 and 10 000 000, flattened.
 * Asserted before timing: output ≤ maxResultBytes, truncated, expected budget_kind, and the huge and
 * 10 MB inputs give the same kept content (kept items are a prefix of the input, text is 'x's).
 *
 * Command: npm run bench:oversized
 *   (node --expose-gc --max-old-space-size=8192 --import tsx bench/oversized.bench.ts)
 * tinybench: ≥ 1000 ms and ≥ 5 samples per task after ≥ 250 ms / 1 warmup call, in the order of the
 * table below (heaviest allocators last; no forced GC between tasks, see the note at the bench).
 * BENCH_SKIP_HUGE_STRINGIFY=1 skips the one-shot JSON.stringify of the huge inputs (~30 s).
 *
 * Results — Intel(R) Xeon(R) Processor, 2 vCPU, 23.5 GiB RAM, Node v20.20.2, linux-x64, 2026-12-02,
 * engine at commit 45f787d, load avg 3.6–4.9 (other jobs on the machine):
 *
 * | shape, limits | huge input | median | 10 MB input median | huge / 10 MB | goal (≤ 5 ms, ≤ 2×) |
 * | --- | --- | --- | --- | --- | --- |
 * | array, defaults (array_items) | 10M items | 725.7 µs | 742.3 µs | 0.98× | met |
 * | array, maxItems 10M (result_bytes) | 10M items | 2.87 s | 12.7 ms | 227× | MISSED (574× over 5 ms) |
 * | text, defaults (text_block_bytes) | 500 MB | 165.1 µs | 144.5 µs | 1.14× | met |
 * | text, text limits 1 GiB (result_bytes) | 500 MB | 302.6 µs | 280.2 µs | 1.08× | met |
 *
 * Plain baselines: JSON.stringify of the 10 MB array 49.3 ms, of the 10 MB text 28.7 ms; of the
 * 10M-item array it threw RangeError (Invalid string length) after 32.7 s (one shot); of the
 * 500 MB text it returned after 2.08 s (one shot).
 *
 * Reading: cost follows the budget when an item or block bound binds (≤ 0.8 ms, flat from 10 MB
 * to 1.19 GB / 500 MB). With maxItems raised so that bytes bind, it follows the input: the fits
 * check visits every item of the array before it compares the size (twice, since the size check
 * throws "maybe" and the exact pass repeats it), 2.87 s for 10M items.
 */
import { setTimeout as sleep } from 'node:timers/promises';
import { Bench } from 'tinybench';
import { boundJson, resolveLimits, type BoundedJson, type ResolvedLimits } from '../dist/index.js';
import { arrayResult, textResult } from './fixtures.js';
import { assert, fmt, gc, loadLine, machineLine, rows, table } from './util.js';

const GOAL_MS = 5;
const GOAL_RATIO = 2;
const GiB = 1024 ** 3;
const HUGE_ITEMS = 10_000_000;
const SMALL_ITEMS = 85_000;
const HUGE_CHARS = 500_000_000;
const SMALL_CHARS = 10_000_000;

const defaults = resolveLimits({});
const manyItems = resolveLimits({ maxItems: 10_000_000 });
const bigText = resolveLimits({ maxTextBytes: GiB, maxBlockBytes: GiB });
let sink = 0;

console.log(`# oversized: bounding cost vs input size\n${machineLine()}\n`);

const time = <T>(f: () => T): [T, number] => {
  const t0 = performance.now();
  const v = f();
  return [v, performance.now() - t0];
};

const [arr10, tArr10] = time(() => arrayResult(SMALL_ITEMS));
const [arrHuge, tArrHuge] = time(() => arrayResult(HUGE_ITEMS));
const [txt10, tTxt10] = time(() => textResult(SMALL_CHARS));
const [txtHuge, tTxtHuge] = time(() => textResult(HUGE_CHARS));
gc();

// JSON size of the huge array, estimated from every 100th item (stringify of the whole throws).
let sampled = 0;
for (let i = 0; i < HUGE_ITEMS; i += 100) sampled += JSON.stringify(arrHuge.structuredContent.items[i]).length + 1;
const arrHugeBytes = sampled * 100 + JSON.stringify({ ...arrHuge, structuredContent: { items: [] } }).length;
const arr10Bytes = Buffer.byteLength(JSON.stringify(arr10));
console.log(
  table(
    ['fixture', 'JSON bytes', 'build time'],
    [
      [`array ${SMALL_ITEMS} items`, arr10Bytes, fmt(tArr10)],
      [`array ${HUGE_ITEMS} items`, `≈ ${arrHugeBytes} (sampled)`, fmt(tArrHuge)],
      [`text ${SMALL_CHARS} chars`, Buffer.byteLength(JSON.stringify(txt10)), fmt(tTxt10)],
      [`text ${HUGE_CHARS} chars`, HUGE_CHARS + JSON.stringify(textResult(0)).length, fmt(tTxtHuge)],
    ],
  ) + '\n',
);

// ---------------------------------------------------------------- agreement checks (once)

interface Parsed {
  structuredContent?: { items: unknown[] };
  content: { type: string; text: string; _meta?: object }[];
}

function check(label: string, out: BoundedJson, limits: ResolvedLimits, kind: string, omitted: number | undefined): Parsed {
  assert(!out.unchanged && out.truncated && out.report !== undefined, `${label}: must be truncated`);
  const bytes = Buffer.byteLength(out.json);
  assert(bytes <= limits.maxResultBytes, `${label}: ${bytes} bytes > maxResultBytes`);
  assert(out.report.budget_kind === kind, `${label}: budget_kind ${out.report.budget_kind}, expected ${kind}`);
  if (omitted !== undefined) assert(out.report.omitted_count === omitted, `${label}: omitted_count ${out.report.omitted_count}`);
  return JSON.parse(out.json) as Parsed;
}

const outputBytes = new Map<string, number>();
function agreeArray(limits: ResolvedLimits, kind: string, name: string): void {
  const a = boundJson(arr10, limits);
  const b = boundJson(arrHuge, limits);
  const pa = check(`10 MB array, ${name}`, a, limits, kind, undefined);
  const pb = check(`huge array, ${name}`, b, limits, kind, undefined);
  const ka = pa.structuredContent!.items;
  const kb = pb.structuredContent!.items;
  assert(JSON.stringify(ka) === JSON.stringify(kb), `${name}: huge and 10 MB arrays must keep the same items`);
  // Kept items are the input's first items; the last one may be cut to its first members.
  const src = arr10.structuredContent.items;
  const last = ka.length - 1;
  assert(JSON.stringify(ka.slice(0, last)) === JSON.stringify(src.slice(0, last)), `${name}: kept items must be a prefix`);
  const cut = Object.entries(ka[last] as object);
  assert(JSON.stringify(cut) === JSON.stringify(Object.entries(src[last]!).slice(0, cut.length)), `${name}: last kept item`);
  const cutMembers = Object.keys(src[last]!).length - cut.length; // each dropped member counts once
  assert(a.report!.omitted_count === SMALL_ITEMS - ka.length + cutMembers, `${name}: 10 MB omitted_count`);
  assert(b.report!.omitted_count === HUGE_ITEMS - kb.length + cutMembers, `${name}: huge omitted_count`);
  outputBytes.set(`array ${name}`, Buffer.byteLength(b.json));
  console.log(`array, ${name}: keeps ${ka.length} items, ${Buffer.byteLength(b.json)} bytes out, budget_kind ${b.report!.budget_kind}`);
}
function agreeText(limits: ResolvedLimits, kind: string, name: string): void {
  const a = boundJson(txt10, limits);
  const b = boundJson(txtHuge, limits);
  const ta = check(`10 MB text, ${name}`, a, limits, kind, 1).content[0]!.text;
  const tb = check(`huge text, ${name}`, b, limits, kind, 1).content[0]!.text;
  assert(ta === tb && /^x+$/.test(ta), `${name}: huge and 10 MB texts must keep the same prefix`);
  outputBytes.set(`text ${name}`, Buffer.byteLength(b.json));
  console.log(`text, ${name}: keeps ${ta.length} chars, ${Buffer.byteLength(b.json)} bytes out, budget_kind ${b.report!.budget_kind}`);
}
agreeArray(defaults, 'array_items', 'defaults');
agreeArray(manyItems, 'result_bytes', 'maxItems 10M');
agreeText(defaults, 'text_block_bytes', 'defaults');
agreeText(bigText, 'result_bytes', 'text limits 1 GiB');
gc();

// ---------------------------------------------------------------- timing

// No GC between tasks: a forced full GC of this ~3 GB heap leaves concurrent sweeping behind that
// inflates the next task's samples. Instead one GC and a pause here, and the tasks that allocate
// the most (the JSON.stringify baselines, the maxItems-10M variants) run last.
await sleep(3000);
const bench = new Bench({ name: 'oversized', time: 1000, iterations: 5, warmupTime: 250, warmupIterations: 1 });
const add = (name: string, f: () => number): void => {
  bench.add(name, () => {
    sink += f();
  });
};
add('array 10 MB: boundJson defaults', () => boundJson(arr10, defaults).json.length);
add('array 1.19 GB: boundJson defaults', () => boundJson(arrHuge, defaults).json.length);
add('text 10 MB: boundJson defaults', () => boundJson(txt10, defaults).json.length);
add('text 500 MB: boundJson defaults', () => boundJson(txtHuge, defaults).json.length);
add('text 10 MB: boundJson text limits 1 GiB', () => boundJson(txt10, bigText).json.length);
add('text 500 MB: boundJson text limits 1 GiB', () => boundJson(txtHuge, bigText).json.length);
add('array 10 MB: boundJson maxItems 10M', () => boundJson(arr10, manyItems).json.length);
add('text 10 MB: JSON.stringify', () => JSON.stringify(txt10).length);
add('array 10 MB: JSON.stringify', () => JSON.stringify(arr10).length);
add('array 1.19 GB: boundJson maxItems 10M', () => boundJson(arrHuge, manyItems).json.length);
await bench.run();
const r = rows(bench);

console.log(
  '\n' +
    table(
      ['task', 'median', 'p75', 'p99', 'samples'],
      [...r.values()].map((x) => [x.name, fmt(x.median), fmt(x.p75), fmt(x.p99), x.samples]),
    ),
);

const goalRows: string[][] = [];
const verdicts: string[] = [];
const pairs: [string, string, string][] = [
  ['array, defaults', 'array 1.19 GB: boundJson defaults', 'array 10 MB: boundJson defaults'],
  ['array, maxItems 10M', 'array 1.19 GB: boundJson maxItems 10M', 'array 10 MB: boundJson maxItems 10M'],
  ['text, defaults', 'text 500 MB: boundJson defaults', 'text 10 MB: boundJson defaults'],
  ['text, text limits 1 GiB', 'text 500 MB: boundJson text limits 1 GiB', 'text 10 MB: boundJson text limits 1 GiB'],
];
for (const [label, hugeName, smallName] of pairs) {
  const huge = r.get(hugeName)!.median;
  const small = r.get(smallName)!.median;
  const ratio = huge / small;
  const ok = huge <= GOAL_MS && ratio <= GOAL_RATIO;
  goalRows.push([label, fmt(huge), fmt(small), `${ratio.toFixed(2)}×`, ok ? 'met' : 'MISSED']);
  verdicts.push(
    `${label}: huge ${fmt(huge)} (goal ≤ ${GOAL_MS} ms: ${huge <= GOAL_MS ? 'met' : 'MISSED'}), ` +
      `${ratio.toFixed(2)}× the 10 MB case (goal ≤ ${GOAL_RATIO}×: ${ratio <= GOAL_RATIO ? 'met' : 'MISSED'})`,
  );
}
console.log('\n' + table(['shape, limits', 'huge median', '10 MB median', 'huge / 10 MB', 'goal'], goalRows));
console.log('\n' + verdicts.join('\n'));

// ---------------------------------------------------------------- one-shot plain baselines on the huge inputs

if (process.env.BENCH_SKIP_HUGE_STRINGIFY !== '1') {
  gc();
  const t0 = performance.now();
  let outcome: string;
  try {
    sink += JSON.stringify(arrHuge).length;
    outcome = 'returned (unexpected)';
  } catch (e) {
    outcome = `threw ${(e as Error).name}: ${(e as Error).message}`;
  }
  const tThrow = performance.now() - t0;
  gc();
  const [len, tStr] = time(() => JSON.stringify(txtHuge).length);
  sink += len;
  console.log(
    '\n' +
      table(
        ['one shot', 'time', 'outcome'],
        [
          ['array 1.19 GB: JSON.stringify', fmt(tThrow), outcome],
          ['text 500 MB: JSON.stringify', fmt(tStr), `returned ${len} chars`],
        ],
      ),
  );
}
console.log(`\npeak RSS of this process: ${(process.resourceUsage().maxRSS / 1024).toFixed(0)} MiB; at end: ${loadLine()}`);
if (sink === 0) console.log('');
