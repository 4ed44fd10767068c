/**
 * Benchmark fixtures, all deterministic (seeded PRNG, no I/O), shared by the bench files and the
 * memory child process.
 *
 * - `mixedResult(target)`: a realistic `CallToolResult` that fits the default limits — a summary
 *   text block, markdown listing blocks (newlines, quotes, a few non-ASCII characters), a
 *   `structuredContent` of search-result objects and a small `_meta`. Grown one result at a time;
 *   the size closest to `target` is kept.
 * - `arrayResult(n)`: `structuredContent: { items: [n catalog objects] }`, about 119 bytes of JSON
 *   per item (85 000 items ≈ 10 MB, 10 000 000 items ≈ 1.19 GB).
 * - `textResult(chars)`: one text block of `chars` × 'x', flattened before it is returned.
 */

import { prng } from '../test/helpers/prng.js';

const WORDS = (
  'revenue forecast quarterly region margin customer churn pipeline invoice ledger audit ' +
  'shipment warehouse backlog latency deploy rollback incident cluster replica index query ' +
  'cache schema migration budget contract renewal vendor payroll compliance policy'
).split(' ');
const TAGS = ['finance', 'ops', 'q3', 'q4', 'emea', 'apac', 'infra', 'legal', 'hr', 'draft'];
const AUTHORS = ['Zoë Álvarez', 'Chen Wei', 'Amara Okafor', 'Jürgen Becker', 'Priya Natarajan', 'Sam O’Neil'];

function sentence(rnd: () => number, words: number): string {
  const out: string[] = [];
  for (let i = 0; i < words; i++) out.push(WORDS[Math.floor(rnd() * WORDS.length)]!);
  const s = out.join(' ');
  return s[0]!.toUpperCase() + s.slice(1);
}

interface SearchHit {
  id: string;
  title: string;
  url: string;
  score: number;
  updatedAt: string;
  tags: string[];
  author: { id: number; name: string };
  snippet: string;
}

function hit(rnd: () => number, i: number): SearchHit {
  const id = `doc-${String(i).padStart(6, '0')}`;
  const quoted = rnd() < 0.2 ? ` "${WORDS[i % WORDS.length]}"` : '';
  return {
    id,
    title: `${sentence(rnd, 3)} — part ${i + 1}`,
    url: `https://docs.example.com/d/${id}`,
    score: Math.round(rnd() * 10_000) / 10_000,
    updatedAt: new Date(Date.UTC(2025, 0, 1) + Math.floor(rnd() * 3e10)).toISOString(),
    tags: [TAGS[i % TAGS.length]!, TAGS[(i * 7 + 3) % TAGS.length]!],
    author: { id: 1000 + (i % 97), name: AUTHORS[i % AUTHORS.length]! },
    snippet: `${sentence(rnd, 10)}${quoted}.`,
  };
}

function build(hits: SearchHit[], query: string): object {
  const lines = hits.map(
    (h, i) => `${i + 1}. **${h.title}** (score ${h.score.toFixed(2)}, ${h.updatedAt.slice(0, 10)})\n   ${h.snippet}\n`,
  );
  const content: { type: 'text'; text: string }[] = [
    {
      type: 'text',
      text: `Found ${hits.length} documents for “${query}”.\nTop tags: ${TAGS.slice(0, 4).join(', ')}.\n`,
    },
  ];
  // Listing blocks of at most 80 entries each (≈ 10 KB), so the 60 KB fixture has several.
  for (let i = 0; i < lines.length; i += 80) content.push({ type: 'text', text: lines.slice(i, i + 80).join('') });
  return {
    content,
    structuredContent: { query, total: hits.length, results: hits, nextCursor: hits.length > 0 ? 'c:' + hits.length : null },
    isError: false,
    _meta: { 'example.com/request-id': 'req-7f3a9c' },
  };
}

/**
 * A mixed result whose serialized size is the closest to `target` that whole hits allow (one hit
 * is about 400 bytes: its object plus its listing line). Callers check that it fits.
 */
export function mixedResult(target: number): object {
  const rnd = prng(0x5eed);
  const hits: SearchHit[] = [];
  const query = 'quarterly revenue by region';
  let value = build(hits, query);
  let bytes = Buffer.byteLength(JSON.stringify(value));
  for (let i = 0; ; i++) {
    hits.push(hit(rnd, i));
    const candidate = build(hits, query);
    const next = Buffer.byteLength(JSON.stringify(candidate));
    if (next >= target) return next - target < target - bytes ? candidate : value;
    value = candidate;
    bytes = next;
  }
}

/** One catalog item, about 119 bytes of JSON on average over 10M ids. */
export function catalogItem(i: number): object {
  return {
    id: i,
    sku: 'SKU-' + String(i).padStart(8, '0'),
    name: 'Widget ' + i,
    price: (i % 10_000) / 100,
    qty: i % 500,
    inStock: i % 3 !== 0,
    tags: ['red', 'large'],
  };
}

/** `{ content: [one short text block], structuredContent: { items: [n catalog items] } }`. */
export function arrayResult(n: number): { content: object[]; structuredContent: { items: object[] } } {
  const items: object[] = [];
  for (let i = 0; i < n; i++) items.push(catalogItem(i));
  return { content: [{ type: 'text', text: 'Catalog listing, see structuredContent.items.' }], structuredContent: { items } };
}

/** `{ content: [{ type: 'text', text: 'x' × chars }] }`, the string flattened (as one read from I/O is). */
export function textResult(chars: number): { content: { type: 'text'; text: string }[] } {
  const text = 'x'.repeat(chars); // a rope in V8 ...
  if (/[^x]/.test(text)) throw new Error('unreachable'); // ... flattened here, outside any timing
  return { content: [{ type: 'text', text }] };
}
