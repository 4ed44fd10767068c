/**
 * `serve` sizes every page and read window to the active limits, so the result budget never cuts
 * one: at every setting of the matrix (total size, items, strings, text block), cursor walks over
 * directories and searches return every entry exactly once, read windows rebuild the file byte
 * for byte, no result carries a budget report, and every result is within the total bound. Limits
 * too small for any page are a startup error naming the limit and its minimum.
 */
import { spawnSync } from 'node:child_process';
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { pageBudgetFor, SERVE_MINIMUMS } from '../../src/tools/page-budget.js';
import { resolveLimits } from '../../src/engine/options.js';
import { BudgetError } from '../../src/engine/errors.js';
import { cliPath, ensureBuilt } from '../helpers/cli.js';
import { tempTree } from '../helpers/fs-tree.js';
import { connectClient, reportOf, serveTransport, type Connected, type ToolResult } from '../helpers/mcp-stdio.js';

const FILES = 240;
const DEEP_LEVELS = 15;
let deepRel = '';
let tree: ReturnType<typeof tempTree>;
let root: string;
const names: string[] = [];
let fileText = '';

/** Names that stress escaping: quotes, backslashes, control characters, multi-byte text, long. */
function nameOf(i: number): string {
  const kinds = [`plain-${i}.txt`, `quote"and\\back-${i}.txt`, `ctl\u0001\u001f-${i}.txt`, `ünïcödé-😀-${i}.txt`, `${'long'.repeat(55)}-${i}.txt`];
  return kinds[i % kinds.length]!;
}

beforeAll(() => {
  ensureBuilt();
  tree = tempTree('page-budget');
  root = tree.dir;
  mkdirSync(join(root, 'many', 'nested', 'deeper'), { recursive: true });
  for (let i = 0; i < FILES; i++) {
    const name = nameOf(i);
    names.push(name);
    const dir = i % 3 === 0 ? join(root, 'many') : i % 3 === 1 ? join(root, 'many', 'nested') : join(root, 'many', 'nested', 'deeper');
    writeFileSync(join(dir, name), '');
  }
  // A deep chain (about 1.3 KB of path) with a file at every level and 40 files at the bottom.
  let deep = join(root, 'deep');
  for (let i = 0; i < DEEP_LEVELS; i++) {
    deep = join(deep, `${'level-'.repeat(10)}${i}`);
    mkdirSync(deep, { recursive: true });
    writeFileSync(join(deep, `f${i}.txt`), '');
  }
  for (let i = 0; i < 40; i++) writeFileSync(join(deep, `bottom-${i}.txt`), '');
  deepRel = deep.slice(root.length + 1);
  // A file whose JSON escaping is up to 6x its bytes, with multi-byte characters at every offset.
  const parts: string[] = [];
  for (let i = 0; i < 6000; i++) parts.push(i % 7 === 0 ? '\u0001\u0002' : i % 5 === 0 ? 'é😀' : `line ${i} "q" \\ \n`);
  fileText = parts.join('');
  writeFileSync(join(root, 'big.txt'), fileText);
});

afterAll(() => tree?.remove());

const MATRIX: { flags: string[]; maxBytes: number }[] = [
  { flags: ['--max-bytes', '8KiB'], maxBytes: 8192 },
  { flags: ['--max-bytes', '16KiB'], maxBytes: 16384 },
  { flags: ['--max-bytes', '32KiB'], maxBytes: 32768 },
  { flags: ['--max-bytes', '64KiB'], maxBytes: 65536 },
  { flags: ['--max-items', '5'], maxBytes: 65536 },
  { flags: ['--max-string-bytes', String(SERVE_MINIMUMS.maxStringBytes)], maxBytes: 65536 },
  { flags: ['--max-block-bytes', '4KiB'], maxBytes: 65536 },
  { flags: ['--max-text-bytes', '6KiB'], maxBytes: 65536 },
  // Pages about as small as at 8 KiB, sized by the tokens: the mirror of every page within them.
  { flags: ['--max-tokens', '2500'], maxBytes: 65536 },
];

async function call(c: Connected, name: string, args: Record<string, unknown>, maxBytes: number): Promise<Record<string, unknown>> {
  const r = (await c.client.callTool({ name, arguments: args })) as ToolResult;
  expect(r.isError, `${name} failed: ${r.content?.[0]?.text}`).not.toBe(true);
  expect(reportOf(r), `${name} ${JSON.stringify(args).slice(0, 80)} was cut by the budget`).toBeUndefined();
  expect(c.wire.lastBytes).toBeLessThanOrEqual(maxBytes);
  return r.structuredContent!;
}

describe.each(MATRIX)('serve $flags', ({ flags, maxBytes }) => {
  let c: Connected;
  beforeAll(async () => {
    c = await connectClient(serveTransport(root, flags));
  });
  afterAll(async () => c?.close());

  it('a list_dir cursor walk returns every entry once, and no page is cut', async () => {
    const seen: string[] = [];
    let cursor: string | undefined;
    for (let pages = 0; pages < 1000; pages++) {
      const p = await call(c, 'workspace_list_dir', { path: 'many/nested', limit: 200, ...(cursor ? { cursor } : {}) }, maxBytes);
      for (const e of p.entries as { name: string }[]) seen.push(e.name);
      cursor = p.next_cursor as string | undefined;
      expect(p.has_more).toBe(cursor !== undefined);
      if (cursor === undefined) break;
    }
    const want = names.filter((_, i) => i % 3 === 1).concat('deeper');
    expect(seen.length).toBe(want.length);
    expect(new Set(seen)).toEqual(new Set(want));
  });

  it('a search cursor walk returns every match once, and no page is cut', async () => {
    const seen: string[] = [];
    let cursor: string | undefined;
    for (let pages = 0; pages < 1000; pages++) {
      const p = await call(c, 'workspace_search_files', { query: '**/*.txt', path: 'many', limit: 200, ...(cursor ? { cursor } : {}) }, maxBytes);
      seen.push(...(p.matches as string[]));
      cursor = p.next_cursor as string | undefined;
      if (cursor === undefined) break;
    }
    expect(seen.length).toBe(FILES);
    expect(new Set(seen).size).toBe(FILES);
  });

  it('deep paths: search and list cursors fit the string bound, no page is cut, nothing repeats', async () => {
    const seen: string[] = [];
    let cursor: string | undefined;
    let notes = '';
    for (let pages = 0; pages < 1000; pages++) {
      const p = await call(c, 'workspace_search_files', { query: '**/*.txt', path: 'deep', limit: 7, ...(cursor ? { cursor } : {}) }, maxBytes);
      seen.push(...(p.matches as string[]));
      notes += String(p.note ?? '');
      cursor = p.next_cursor as string | undefined;
      if (cursor === undefined) break;
    }
    expect(new Set(seen).size).toBe(seen.length);
    // what a cursor could not name was not entered, and the answer said so
    if (seen.length < DEEP_LEVELS + 40) expect(notes).toMatch(/not entered/);
    if (flags.join(' ') === '--max-bytes 64KiB') expect(seen.length).toBe(DEEP_LEVELS + 40);
    const listed: string[] = [];
    cursor = undefined;
    for (let pages = 0; pages < 100; pages++) {
      const p = await call(c, 'workspace_list_dir', { path: deepRel, limit: 3, ...(cursor ? { cursor } : {}) }, maxBytes);
      listed.push(...(p.entries as { name: string }[]).map((e) => e.name));
      cursor = p.next_cursor as string | undefined;
      if (cursor === undefined) break;
    }
    expect(new Set(listed).size).toBe(41);
  });

  it('read windows rebuild the file byte for byte, at the documented default and at the max', async () => {
    for (const max of [undefined, 1_000_000]) {
      const chunks: Buffer[] = [];
      let offset = 0;
      for (let windows = 0; windows < 10_000; windows++) {
        const w = await call(c, 'workspace_read_file', { path: 'big.txt', offset, ...(max ? { max_bytes: max } : {}) }, maxBytes);
        chunks.push(Buffer.from((w.content as string[]).join(''), w.encoding === 'base64' ? 'base64' : 'utf8'));
        if (w.eof === true) break;
        expect(w.next_offset).toBeGreaterThan(offset);
        offset = w.next_offset as number;
      }
      expect(Buffer.concat(chunks).toString('utf8')).toBe(fileText);
    }
  });

  it('the read window it documents is the window it returns for plain text', async () => {
    writeFileSync(join(root, 'plain.txt'), 'a'.repeat(200_000));
    const tools = await c.client.listTools();
    const desc = tools.tools.find((t) => t.name === 'workspace_read_file')!.description!;
    const [, def, max] = /default (\d+) bytes, max (\d+)/.exec(desc)!.map(Number) as [number, number, number];
    expect((await call(c, 'workspace_read_file', { path: 'plain.txt' }, maxBytes)).bytes).toBe(def);
    expect((await call(c, 'workspace_read_file', { path: 'plain.txt', max_bytes: 10_000_000 }, maxBytes)).bytes).toBe(max);
  });
});

describe('limits too small for a page', () => {
  it('pageBudgetFor names the limit and its minimum', () => {
    for (const [name, min] of Object.entries(SERVE_MINIMUMS)) {
      try {
        pageBudgetFor(resolveLimits({ [name]: min - 1 }));
        throw new Error('accepted');
      } catch (e) {
        expect(e).toBeInstanceOf(BudgetError);
        expect((e as Error).message).toContain(`at least ${min}`);
      }
    }
    expect(() => pageBudgetFor(resolveLimits({ maxBlockBytes: 600 }))).toThrow(/maxBlockBytes.*at least/);
    expect(() => pageBudgetFor(resolveLimits({ maxTokens: 1663 }))).toThrow(/maxTokens.*--max-tokens.*at least 1664/);
    expect(pageBudgetFor(resolveLimits({ maxTokens: 1664 })).maxPageBytes).toBe(512);
  });

  it('serve refuses to start with a clear usage error (exit 2) naming the flag', () => {
    const r = spawnSync(process.execPath, [cliPath, 'serve', '--root', root, '--max-keys', '8'], { input: '', encoding: 'utf8', timeout: 20_000 });
    expect(r.status).toBe(2);
    expect(r.stderr).toMatch(/--max-keys.*at least 32/);
  });
});
