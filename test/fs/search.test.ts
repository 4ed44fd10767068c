/**
 * Glob search (src/fs/search.ts): a required query, refused `..` and absolute patterns, the walk
 * stopped at limit+1 (the first page of a 50k-file tree costs a small fraction of a full walk),
 * signed cursors bound to query and path, and symlinked directories never traversed.
 */
import { closeSync, mkdirSync, openSync, symlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Workspace, WorkspaceError } from '../../src/fs/confine.js';
import { CursorCodec } from '../../src/fs/cursor.js';
import { MAX_QUERY_BYTES, checkQuery, searchFiles, type SearchPage } from '../../src/fs/search.js';
import { tempTree } from '../helpers/fs-tree.js';

const DIRS = 500;
const PER_DIR = 100; // 50k files under `wide/`

let tree: ReturnType<typeof tempTree>;
let root: string;
let outside: string;
let ws: Workspace;
const cursors = new CursorCodec('search-test-key');

async function codeOf(p: Promise<unknown>): Promise<string> {
  try {
    await p;
  } catch (e) {
    expect(e).toBeInstanceOf(WorkspaceError);
    return (e as WorkspaceError).code;
  }
  throw new Error('expected a WorkspaceError, the call succeeded');
}

const search = (query: string, path?: string, limit = 50, cursor?: string): Promise<SearchPage> =>
  searchFiles(ws, cursors, query, path, limit, cursor);

beforeAll(async () => {
  tree = tempTree('search');
  root = join(tree.dir, 'root');
  outside = join(tree.dir, 'outside');
  mkdirSync(join(outside, 'deep'), { recursive: true });
  writeFileSync(join(outside, 'secret.txt'), 'S');
  writeFileSync(join(outside, 'deep', 'secret.txt'), 'S');
  for (let d = 0; d < DIRS; d++) {
    const dir = join(root, 'wide', `d${d}`);
    mkdirSync(dir, { recursive: true });
    for (let i = 0; i < PER_DIR; i++) closeSync(openSync(join(dir, `f${i}.txt`), 'w'));
  }
  mkdirSync(join(root, 'few', 'a', 'b'), { recursive: true });
  for (let i = 0; i < 40; i++) {
    writeFileSync(join(root, 'few', `top${i}.md`), '');
    writeFileSync(join(root, 'few', 'a', `mid${i}.md`), '');
    writeFileSync(join(root, 'few', 'a', 'b', `low${i}.md`), '');
  }
  writeFileSync(join(root, 'few', 'a', 'other.txt'), '');
  mkdirSync(join(root, 'links'));
  writeFileSync(join(root, 'links', 'real.txt'), '');
  symlinkSync(outside, join(root, 'links', 'out'));
  symlinkSync(join(outside, 'secret.txt'), join(root, 'links', 'secret-link.txt'));
  symlinkSync('.', join(root, 'links', 'self'));
  symlinkSync('..', join(root, 'links', 'up'));
  symlinkSync('loop', join(root, 'links', 'loop'));
  mkdirSync(join(root, '..dots'));
  writeFileSync(join(root, '..dots', 'x..txt'), '');
  ws = await Workspace.open(root);
}, 60_000);

afterAll(() => tree?.remove());

describe('the query', () => {
  it('is required: empty, blank or not a string is INVALID_PARAMS', async () => {
    for (const q of ['', '   ', undefined, 42]) {
      expect(await codeOf(search(q as string)), String(q)).toBe('INVALID_PARAMS');
    }
    expect(await codeOf(search('**/*\0'))).toBe('INVALID_PARAMS');
  });

  it('is capped at MAX_QUERY_BYTES', async () => {
    expect(() => checkQuery('*'.repeat(MAX_QUERY_BYTES))).not.toThrow();
    expect(await codeOf(search('*'.repeat(MAX_QUERY_BYTES + 1)))).toBe('INPUT_TOO_LARGE');
  });

  it.each(['..', '../*', '../**', '**/../*', 'few/..', 'few/../..', './../*', '{..,few}/*', 'few/{a,..}/*', 'x/{..}/y', '/*', '/**/*.txt'])(
    'refuses %j (PATH_ESCAPES_ROOT)',
    async (q) => {
      expect(await codeOf(search(q))).toBe('PATH_ESCAPES_ROOT');
    },
  );

  it('allows names that only contain dots', async () => {
    expect((await search('..dots/*')).matches).toEqual(['..dots/x..txt']);
    expect((await search('**/*..txt', '..dots')).matches).toEqual(['x..txt']);
    // `..dots` starts with a dot: `**` does not enter it (dot: false), a static prefix does
    expect((await search('**/x..txt')).matches).toEqual([]);
  });

  // Regression (a fixed bug): checkQuery() looks for a literal `..` segment or a leading `/`, but fast-glob expands braces
  // first: `.{.,}/x` becomes `../x` and `{/abs,z}/x` becomes `/abs/x`, so the walk leaves the root and
  // returns names outside it (`../outside/secret.txt`, absolute paths).
  it('a `..` or absolute path produced by brace expansion is refused (or matches nothing outside)', async () => {
    for (const q of ['.{.,}/outside/*', '{.,z}./outside/*', '.{.,}/outside/**', `{${outside},z}/*`, `{${outside},z}/**/*.txt`]) {
      let page: SearchPage;
      try {
        page = await search(q);
      } catch (e) {
        expect((e as WorkspaceError).code, q).toBe('PATH_ESCAPES_ROOT');
        continue;
      }
      for (const m of page.matches) {
        expect(m.startsWith('../') || m.startsWith('/'), `${q} → ${m}`).toBe(false);
      }
    }
  });
});

describe('stopped at limit+1', () => {
  it('the first page of a 50k-file tree is a small fraction of a full walk', async () => {
    const t0 = performance.now();
    const first = await search('**/*.txt', 'wide', 50);
    const firstMs = performance.now() - t0;
    expect(first.matches).toHaveLength(50);
    expect(first.has_more).toBe(true);
    expect(typeof first.next_cursor).toBe('string');

    const t1 = performance.now();
    const all = await search('**/*.txt', 'wide', 1_000_000); // the full walk, for comparison
    const fullMs = performance.now() - t1;
    expect(all.matches).toHaveLength(DIRS * PER_DIR);
    expect(all.has_more).toBe(false);
    expect(firstMs).toBeLessThan(fullMs / 4);
    expect(firstMs).toBeLessThan(2000);
  });

  it('exactly `limit` matches: has_more false and no cursor; one fewer: has_more true', async () => {
    const exact = await search('*.md', 'few', 40);
    expect(exact.matches).toHaveLength(40);
    expect(exact.has_more).toBe(false);
    expect(exact.next_cursor).toBeUndefined();
    const under = await search('*.md', 'few', 39);
    expect(under.matches).toHaveLength(39);
    expect(under.has_more).toBe(true);
  });

  it('pages join to the full result without duplicates', async () => {
    const all: string[] = [];
    let cursor: string | undefined;
    let pages = 0;
    do {
      const page = await search('**/*.md', 'few', 17, cursor);
      expect(page.matches.length).toBeLessThanOrEqual(17);
      all.push(...page.matches);
      cursor = page.next_cursor;
      pages++;
    } while (cursor !== undefined);
    expect(pages).toBe(Math.ceil(120 / 17));
    expect(all).toHaveLength(120);
    expect(new Set(all).size).toBe(120);
    expect(all.every((m) => m.endsWith('.md'))).toBe(true);
    expect(new Set(all)).toEqual(new Set((await search('**/*.md', 'few', 1000)).matches));
  });

  it('a cursor is bound to its query and path; tampered or foreign cursors are refused', async () => {
    const { next_cursor: c } = await search('**/*.md', 'few', 5);
    expect(await codeOf(search('**/*.txt', 'few', 5, c))).toBe('INVALID_CURSOR');
    expect(await codeOf(search('**/*.md', 'few/a', 5, c))).toBe('INVALID_CURSOR');
    expect(await codeOf(search('**/*.md', undefined, 5, c))).toBe('INVALID_CURSOR');
    expect(await codeOf(search('**/*.md', 'few', 5, c!.slice(0, -2)))).toBe('INVALID_CURSOR');
    const other = new CursorCodec('another-key');
    const foreign = await searchFiles(ws, other, '**/*.md', 'few', 5, undefined);
    expect(await codeOf(search('**/*.md', 'few', 5, foreign.next_cursor))).toBe('INVALID_CURSOR');
    const listCursor = other.encode('dir', { p: 'few' });
    expect(await codeOf(search('**/*.md', 'few', 5, listCursor))).toBe('INVALID_CURSOR');
    expect((await search('**/*.md', 'few', 5, c)).matches).toHaveLength(5);
  });
});

describe('symlinks', () => {
  it('never traverses a symlinked directory (in or out), never lists symlinks, and ends on loops', async () => {
    const page = await search('**/*', 'links', 200);
    expect(page.matches).toEqual(['real.txt']);
    expect((await search('**/secret.txt', undefined, 200)).matches).toEqual([]);
  });

  it('the `path` argument is confined like any path', async () => {
    expect(await codeOf(search('*', 'links/out'))).toBe('PATH_ESCAPES_ROOT');
    expect(await codeOf(search('*', 'links/loop'))).toBe('PATH_ESCAPES_ROOT');
    expect(await codeOf(search('*', '../outside'))).toBe('PATH_ESCAPES_ROOT');
    expect(await codeOf(search('*', 'links/self'))).toBe('PATH_ESCAPES_ROOT'); // the gate refuses every link, even one that stays inside
  });

  // Regression (a fixed bug): fast-glob starts its walk at the pattern's static prefix, and `followSymbolicLinks: false`
  // only stops it from descending into links it meets while walking; a prefix that names a symlinked
  // directory (`links/out/*`) is opened directly, so the search lists the outside directory.
  it('a query whose static prefix is a symlinked directory does not list the outside directory', async () => {
    for (const q of ['links/out/*', 'links/out/**', 'links/out/deep/*.txt', 'links/out/*/*.txt']) {
      let page: SearchPage;
      try {
        page = await search(q, undefined, 200);
      } catch (e) {
        expect((e as WorkspaceError).code, q).toBe('PATH_ESCAPES_ROOT');
        continue;
      }
      expect(page.matches, q).toEqual([]);
    }
  });
});
