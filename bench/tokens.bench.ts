/**
 * Questions: how far is the token estimate from what open tokenizers count, by kind of text, and
 * is it ever below? What does it cost, and what does a token bound add to the fast path and to a
 * cut?
 *
 * 1. Error: every document of bench/tokens/corpus.ts in pieces of 256 B, 4 KiB and 32 KiB (four
 *    of each where the document is long enough), counted by o200k_base, cl100k_base, the Claude
 *    tokenizer and Llama 3. Per kind: pieces, bytes per token (the largest count), the estimate's
 *    ratio to the largest count (min/mean/max over pieces), the mean ratio to each tokenizer on
 *    the 32 KiB pieces, and the pieces where the estimate is below any count (goal: none).
 * 2. Speed (tinybench, BENCH_ROUNDS rounds, medians): `estimateTokens` on 48 KiB of English and of
 *    CJK against `Buffer.byteLength` of the same text (the UTF-8 count every byte bound starts
 *    from); `fitsWithinBudget` and `boundJson` of a fitting 48 KiB text result with `maxTokens`
 *    30,000 (a 256 KiB result bound) against the byte bounds alone; `boundJson` of a 240 KB text cut by 8,000 tokens
 *    against the same cut by bytes (`maxTextBytes` 32 KiB).
 *
 * Command: npm run bench:tokens   (node --import tsx bench/tokens.bench.ts)
 */
import { Bench } from 'tinybench';
import { boundJson, estimateTokens, resolveLimits } from '../dist/index.js';
import { fitsWithinBudget } from '../dist/engine/index.js';
import { samples } from './tokens/corpus.js';
import { TOKENIZERS } from './tokens/tokenizers.js';
import { assert, fmt, loadLine, machineLine, rows, table } from './util.js';

const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 3);
console.log(`# tokens: the estimate against open tokenizers, and its cost\n${machineLine()}\n`);

// ---- 1. error
const names = Object.keys(TOKENIZERS);
interface Row {
  kind: string;
  n: number;
  bytes: number;
  maxCount: number;
  ratios: number[];
  big: Record<string, number[]>;
  under: string[];
}
const byKind = new Map<string, Row>();
const t0 = performance.now();
for (const s of samples()) {
  const est = estimateTokens(s.text);
  const counts = names.map((n) => TOKENIZERS[n]!(s.text));
  const most = Math.max(...counts);
  const row = byKind.get(s.kind) ?? { kind: s.kind, n: 0, bytes: 0, maxCount: 0, ratios: [], big: Object.fromEntries(names.map((n) => [n, []])), under: [] };
  row.n++;
  row.bytes += Buffer.byteLength(s.text);
  row.maxCount += most;
  row.ratios.push(est / Math.max(1, most));
  if (s.text.length >= 32_768) names.forEach((n, i) => row.big[n]!.push(est / Math.max(1, counts[i]!)));
  names.forEach((n, i) => {
    if (est < counts[i]!) row.under.push(`${s.source}: ${n} ${counts[i]} > ${est}`);
  });
  byKind.set(s.kind, row);
}
const mean = (xs: number[]): number => xs.reduce((a, b) => a + b, 0) / Math.max(1, xs.length);
const rowsOut = [...byKind.values()].map((r) => [
  r.kind,
  r.n,
  (r.bytes / r.maxCount).toFixed(2),
  `${Math.min(...r.ratios).toFixed(2)} / ${mean(r.ratios).toFixed(2)} / ${Math.max(...r.ratios).toFixed(2)}`,
  ...names.map((n) => (r.big[n]!.length === 0 ? '—' : `${mean(r.big[n]!).toFixed(2)}×`)),
  r.under.length,
]);
console.log(table(['kind', 'pieces', 'bytes/token (largest count)', 'estimate ÷ largest count: min / mean / max', ...names.map((n) => `${n} (32 KiB)`), 'below a count'], rowsOut));
const all = [...byKind.values()];
const under = all.flatMap((r) => r.under);
console.log(`\n${all.reduce((n, r) => n + r.n, 0)} pieces, ${(all.reduce((n, r) => n + r.bytes, 0) / 1e6).toFixed(1)} MB, counted in ${((performance.now() - t0) / 1000).toFixed(0)} s; pieces where the estimate is below a count: ${under.length}`);
for (const u of under.slice(0, 10)) console.log(`  ${u}`);

// ---- 2. speed
const english = samples([49_152], 1).find((s) => s.kind === 'english' && s.text.length >= 49_000)!.text;
const cjk = samples([16_384], 1).find((s) => s.kind === 'cjk')!.text;
const fitting = { content: [{ type: 'text', text: english }] };
const big = { content: [{ type: 'text', text: english.repeat(5) }] };
const bytesOnly = resolveLimits({ maxResultBytes: 256 * 1024 });
const withTokens = resolveLimits({ maxResultBytes: 256 * 1024, maxTokens: 30_000 });
const cutByTokens = resolveLimits({ maxTokens: 8000 });
const cutByBytes = resolveLimits({ maxTextBytes: 32 * 1024 });
assert(fitsWithinBudget(fitting, bytesOnly, 'result') && fitsWithinBudget(fitting, withTokens, 'result'), 'the fitting result must fit both');
assert(boundJson(big, cutByTokens).report?.budget_kind === 'text_tokens', 'the big result is cut by tokens');
assert(boundJson(big, cutByBytes).report?.budget_kind !== 'text_tokens', 'and by bytes');
let sink = 0;
const tasks: [string, () => number][] = [
  ['Buffer.byteLength(48 KiB English)', () => Buffer.byteLength(english)],
  ['estimateTokens(48 KiB English)', () => estimateTokens(english)],
  ['Buffer.byteLength(16 Ki units CJK)', () => Buffer.byteLength(cjk)],
  ['estimateTokens(16 Ki units CJK)', () => estimateTokens(cjk)],
  ['fitsWithinBudget, bytes only', () => Number(fitsWithinBudget(fitting, bytesOnly, 'result'))],
  ['fitsWithinBudget, maxTokens 30000', () => Number(fitsWithinBudget(fitting, withTokens, 'result'))],
  ['boundJson fitting, bytes only', () => boundJson(fitting, bytesOnly).json.length],
  ['boundJson fitting, maxTokens 30000', () => boundJson(fitting, withTokens).json.length],
  ['boundJson 240 KB cut by maxTextBytes 32 KiB', () => boundJson(big, cutByBytes).json.length],
  ['boundJson 240 KB cut by maxTokens 8000', () => boundJson(big, cutByTokens).json.length],
];
const perRound = new Map<string, number[]>();
for (let round = 0; round < ROUNDS; round++) {
  const bench = new Bench({ name: `tokens round ${round + 1}`, time: 400, warmupTime: 100 });
  for (const [name, fn] of round % 2 === 0 ? tasks : [...tasks].reverse()) bench.add(name, () => void (sink += fn()));
  await bench.run();
  for (const [name, row] of rows(bench)) perRound.set(name, [...(perRound.get(name) ?? []), row.median]);
}
const med = (name: string): number => {
  const s = [...perRound.get(name)!].sort((a, b) => a - b);
  return s[s.length >> 1]!;
};
const pairs: [string, string][] = [];
for (let i = 0; i < tasks.length; i += 2) pairs.push([tasks[i]![0], tasks[i + 1]![0]]);
console.log('\n' + table(['baseline', 'median', 'with tokens', 'median', 'ratio'], pairs.map(([a, b]) => [a, fmt(med(a)), b, fmt(med(b)), `${(med(b) / med(a)).toFixed(2)}×`])));
console.log(`\nestimate speed: ${((med('estimateTokens(48 KiB English)') * 1e6) / english.length).toFixed(2)} ns per UTF-16 unit of English, ${((med('estimateTokens(16 Ki units CJK)') * 1e6) / cjk.length).toFixed(2)} of CJK`);
console.log(`\nat end: ${loadLine()}`);
if (sink === 0) console.log('');
