/**
 * The package entries load only what they need: importing the root (`dist/index.js`) must not
 * load the MCP SDK or ajv (a host that only bounds values pays for neither); the `./transport`
 * and `./proxy` entries do load the SDK (which also shows the check sees what it looks for).
 * Each import runs in a fresh `node` with a resolve hook that records every module URL, plus the
 * CommonJS cache at the end (ajv is CommonJS). Also checked statically: no file outside
 * src/engine imports a file behind the engine's face (src/engine/index.ts).
 */
import { spawnSync } from 'node:child_process';
import { mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, relative } from 'node:path';
import { pathToFileURL } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ensureBuilt, repoRoot } from '../helpers/cli.js';

const HOOK = `
import { appendFileSync } from 'node:fs';
let out;
export function initialize(data) { out = data.out; }
export async function resolve(specifier, context, next) {
  const r = await next(specifier, context);
  appendFileSync(out, r.url + '\\n');
  return r;
}`;

let dir: string;

/** Every module URL a fresh process loads while importing `entry` (relative to the repository). */
function modulesLoadedBy(entry: string, name: string, argv?: string[]): string[] {
  const out = join(dir, `${name}.txt`);
  const script = `
${argv === undefined ? '' : `process.argv = ${JSON.stringify([process.execPath, entry, ...argv])};`}
import { appendFileSync } from 'node:fs';
import { createRequire, register } from 'node:module';
import { pathToFileURL } from 'node:url';
register('data:text/javascript,' + encodeURIComponent(${JSON.stringify(HOOK)}), { data: { out: ${JSON.stringify(out)} } });
await import(${JSON.stringify(pathToFileURL(join(repoRoot, entry)).href)});
const cjs = Object.keys(createRequire(import.meta.url).cache).map((p) => pathToFileURL(p).href);
appendFileSync(${JSON.stringify(out)}, cjs.map((u) => u + '\\n').join(''));
`;
  const r = spawnSync(process.execPath, ['--input-type=module', '-e', script], { cwd: repoRoot, encoding: 'utf8' });
  expect(r.stderr).toBe('');
  expect(r.status).toBe(0);
  return readFileSync(out, 'utf8').split('\n').filter((u) => u !== '');
}

const heavy = (urls: string[]): string[] => urls.filter((u) => /\/node_modules\/(@modelcontextprotocol\/sdk|ajv(-formats)?|zod)\//.test(u));

beforeAll(() => {
  ensureBuilt();
  dir = mkdtempSync(join(tmpdir(), 'entry-imports-'));
});
afterAll(() => rmSync(dir, { recursive: true, force: true }));

describe('package entries', () => {
  it('entry-imports: the root entry loads neither the MCP SDK nor ajv', () => {
    const urls = modulesLoadedBy('dist/index.js', 'root');
    expect(urls.some((u) => u.endsWith('/dist/engine/index.js'))).toBe(true);
    expect(heavy(urls)).toEqual([]);
  });

  it('entry-imports: `mcp-budget apply` starts without the SDK, zod or ajv (its start-up is most of a small call)', () => {
    const input = join(dir, 'tiny.json');
    writeFileSync(input, '{"content":[{"type":"text","text":"hi"}]}');
    const urls = modulesLoadedBy('dist/cli.js', 'cli-apply', ['apply', input]);
    expect(urls.some((u) => u.endsWith('/dist/commands/apply.js'))).toBe(true);
    expect(heavy(urls)).toEqual([]);
  });

  it('entry-imports: ./transport and ./proxy load the SDK (the check sees it)', () => {
    for (const [entry, name] of [
      ['dist/transport/index.js', 'transport'],
      ['dist/proxy.js', 'proxy'],
    ] as const) {
      expect(heavy(modulesLoadedBy(entry, name)).some((u) => u.includes('/@modelcontextprotocol/sdk/'))).toBe(true);
    }
  });

  it('entry-imports: package.json exports name the three entries, and each exists after a build', async () => {
    const pkg = JSON.parse(readFileSync(join(repoRoot, 'package.json'), 'utf8')) as { exports: Record<string, { default?: string }> };
    expect(Object.keys(pkg.exports)).toEqual(expect.arrayContaining(['.', './transport', './proxy']));
    const transport = (await import(pathToFileURL(join(repoRoot, pkg.exports['./transport']!.default!)).href)) as Record<string, unknown>;
    expect(typeof transport.withResultBudget).toBe('function');
    expect(typeof transport.toolCatalogOf).toBe('function');
    const proxy = (await import(pathToFileURL(join(repoRoot, pkg.exports['./proxy']!.default!)).href)) as Record<string, unknown>;
    expect(typeof proxy.runProxy).toBe('function');
  });

  it('entry-imports: no file outside src/engine imports a file behind the engine face', () => {
    // The SDK decorator's files are moved to the face by their owner; listed here until then.
    const offenders: string[] = [];
    const visit = (d: string): void => {
      for (const e of readdirSync(d, { withFileTypes: true })) {
        const p = join(d, e.name);
        if (e.isDirectory()) {
          if (p !== join(repoRoot, 'src', 'engine')) visit(p);
        } else if (e.name.endsWith('.ts')) {
          const rel = relative(repoRoot, p);
          const text = readFileSync(p, 'utf8');
          if (/from '(?:\.\.?\/)+(?:src\/|dist\/)?engine\/(?!index\.js')[^']+'/.test(text)) offenders.push(rel);
        }
      }
    };
    for (const top of ['src', 'scripts', 'bench']) visit(join(repoRoot, top));
    expect(offenders).toEqual([]);
  });
});
