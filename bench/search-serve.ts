/**
 * Question: does the real `mcp-budget serve` process stay under 150 MB peak RSS while it searches
 * a 1,000,000-entry directory, for one search and for 8 concurrent ones? (bench/search.bench.ts
 * measures `searchFiles` in a child; this measures the server an agent actually runs.)
 *
 * Variants, each in a fresh `serve` process driven by the SDK client over stdio:
 *   - idle        — initialize and list tools only (the process's own floor)
 *   - first page  — `big/*.txt`, limit 50 (1 call, then 8 concurrent)
 *   - no match    — `big/*.none`: the walk stops at its 100,000-entry cap (1 call, then 8 concurrent)
 *   - cursor walk — `big/*.none` followed by its cursor to the end (re-reads to its position)
 * Peak RSS is VmHWM of the server process (/proc/<pid>/status), read after the calls.
 *
 * Fixture: the same as bench/search.bench.ts (os.tmpdir()/mcp-budget-bench-search, or
 * BENCH_SEARCH_DIR), created by it if missing.
 * Command: npm run bench:search-serve (builds first). Results: bench/RESULTS.md, section "Search".
 */
import { spawnSync } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { assert, machineLine, table } from './util.js';

const ROOT = process.env.BENCH_SEARCH_DIR ?? join(tmpdir(), 'mcp-budget-bench-search');
const CLI = join(import.meta.dirname, '..', 'dist', 'cli.js');

if (!existsSync(join(ROOT, '.complete'))) {
  const r = spawnSync(process.execPath, ['--import', 'tsx', join(import.meta.dirname, 'search.bench.ts')], {
    stdio: 'inherit',
    env: { ...process.env, BENCH_SEARCH_KEEP: '1' },
  });
  assert(r.status === 0, 'fixture');
}

function peakMiB(pid: number): number {
  const m = /VmHWM:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'));
  return Number(m?.[1] ?? 0) / 1024;
}

type Call = (client: Client) => Promise<void>;

async function search(client: Client, query: string, cursor?: string): Promise<{ next?: string; matches: number }> {
  const r = (await client.callTool({ name: 'workspace_search_files', arguments: { query, limit: 50, ...(cursor ? { cursor } : {}) } })) as {
    isError?: boolean;
    structuredContent?: { next_cursor?: string; matches: string[] };
  };
  assert(r.isError !== true && r.structuredContent !== undefined, `search ${query} failed`);
  return { next: r.structuredContent.next_cursor, matches: r.structuredContent.matches.length };
}

const VARIANTS: [string, number, Call][] = [
  ['idle', 1, async () => undefined],
  ['first page', 1, async (c) => void (await search(c, 'big/*.txt'))],
  ['first page', 8, async (c) => void (await search(c, 'big/*.txt'))],
  ['no match (100k-entry cap)', 1, async (c) => void (await search(c, 'big/*.none'))],
  ['no match (100k-entry cap)', 8, async (c) => void (await search(c, 'big/*.none'))],
  [
    'cursor walk to the end',
    1,
    async (c) => {
      let cursor: string | undefined;
      do cursor = (await search(c, 'big/*.none', cursor)).next;
      while (cursor !== undefined);
    },
  ],
];

console.log(machineLine());
const body: (string | number)[][] = [];
for (const [name, concurrency, call] of VARIANTS) {
  const transport = new StdioClientTransport({ command: process.execPath, args: [CLI, 'serve', '--root', ROOT], stderr: 'ignore' });
  const client = new Client({ name: 'bench', version: '1.0.0' });
  await client.connect(transport);
  const pid = transport.pid;
  assert(pid !== null && pid !== undefined, 'server pid');
  const t0 = performance.now();
  await Promise.all(Array.from({ length: concurrency }, () => call(client)));
  const ms = performance.now() - t0;
  body.push([name, concurrency, ms.toFixed(0), peakMiB(pid).toFixed(1)]);
  await client.close();
}
console.log(table(['variant', 'concurrent', 'wall ms', 'serve peak RSS (MiB)'], body));
