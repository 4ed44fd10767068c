/**
 * Question: what does `import 'mcp-result-budget'` cost a host that only bounds values, next to
 * importing the MCP SDK's server (what any SDK server loads anyway)?
 *
 * Variants (each a fresh `node` process; the variants take turns, so load drifts evenly):
 *   - `node` alone (`--input-type=module -e ''`): the process floor;
 *   - `import('mcp-result-budget')`: the root entry (engine and stream functions);
 *   - `import('mcp-result-budget/transport')`: the SDK decorator (loads the SDK's ajv validator);
 *   - `import('@modelcontextprotocol/sdk/server/mcp.js')`: the plain baseline.
 * Measured in the child: the `await import()` time (performance.now around it) and RSS after it
 * (`process.memoryUsage().rss`); in the parent: the whole process's wall time. Medians over
 * BENCH_IMPORT_RUNS runs (default 20). Entries are resolved by package name (the package's own
 * `exports`), from the compiled dist/.
 * Command: npm run bench:import
 * Results: bench/RESULTS.md, "Current figures", "Package entries".
 * Reading: the root import should cost a small fraction of the SDK's; the test
 *   test/package/entry-imports.test.ts checks that it loads neither the SDK nor ajv.
 */
import { spawnSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { assert, machineLine, loadLine, table } from './util.js';

const root = fileURLToPath(new URL('..', import.meta.url));
const RUNS = Number(process.env.BENCH_IMPORT_RUNS ?? 20);

const variants: { name: string; specifier: string | undefined }[] = [
  { name: 'node alone', specifier: undefined },
  { name: "import('mcp-result-budget')", specifier: 'mcp-result-budget' },
  { name: "import('mcp-result-budget/transport')", specifier: 'mcp-result-budget/transport' },
  { name: "import('@modelcontextprotocol/sdk/server/mcp.js')", specifier: '@modelcontextprotocol/sdk/server/mcp.js' },
];

interface Sample {
  importMs: number;
  rss: number;
  wallMs: number;
}

function once(specifier: string | undefined): Sample {
  const body =
    specifier === undefined
      ? 'const t0 = performance.now();'
      : `const t0 = performance.now(); await import(${JSON.stringify(specifier)});`;
  const script = `${body} const t1 = performance.now(); process.stdout.write(JSON.stringify({ importMs: t1 - t0, rss: process.memoryUsage().rss }));`;
  const start = process.hrtime.bigint();
  const r = spawnSync(process.execPath, ['--input-type=module', '-e', script], { cwd: root, encoding: 'utf8' });
  const wallMs = Number(process.hrtime.bigint() - start) / 1e6;
  assert(r.status === 0, `${specifier ?? 'node'} exited ${r.status}: ${r.stderr}`);
  const { importMs, rss } = JSON.parse(r.stdout) as { importMs: number; rss: number };
  return { importMs, rss, wallMs };
}

const median = (xs: number[]): number => {
  const s = [...xs].sort((a, b) => a - b);
  const m = s.length >> 1;
  return s.length % 2 === 1 ? s[m]! : (s[m - 1]! + s[m]!) / 2;
};

console.log(`# import: package entries vs the MCP SDK server\n${machineLine()}\n`);
const samples = new Map<string, Sample[]>(variants.map((v) => [v.name, []]));
once('mcp-result-budget'); // warm the file cache once
for (let run = 0; run < RUNS; run++) {
  const order = run % 2 === 0 ? variants : [...variants].reverse();
  for (const v of order) samples.get(v.name)!.push(once(v.specifier));
}

const floor = samples.get('node alone')!;
const floorRss = median(floor.map((s) => s.rss));
const floorWall = median(floor.map((s) => s.wallMs));
const sdk = samples.get(variants[3]!.name)!;
const sdkImport = median(sdk.map((s) => s.importMs));
const sdkRss = median(sdk.map((s) => s.rss)) - floorRss;
const mib = (b: number): string => `${(b / 1024 / 1024).toFixed(1)} MiB`;
const body = variants.map((v) => {
  const xs = samples.get(v.name)!;
  const imp = median(xs.map((s) => s.importMs));
  const rss = median(xs.map((s) => s.rss));
  const wall = median(xs.map((s) => s.wallMs));
  const vsSdk = v.specifier === undefined ? '—' : `${(imp / sdkImport).toFixed(2)}× / ${((rss - floorRss) / sdkRss).toFixed(2)}×`;
  return [v.name, `${imp.toFixed(1)} ms`, `${wall.toFixed(1)} ms (+${(wall - floorWall).toFixed(1)})`, mib(rss), `+${mib(rss - floorRss)}`, vsSdk];
});
console.log(table(['variant', 'import (median)', 'process wall', 'RSS after', 'RSS over node alone', 'vs SDK (import / RSS added)'], body));
console.log(`\n${RUNS} runs per variant; at end: ${loadLine()}`);
