/**
 * Glob search (src/fs/search.ts): a required query, refused `..` and absolute patterns, the walk
 * stopped at limit+1 (the first page of a 50k-file tree costs a small fraction of a full walk),
 * signed cursors bound to query and path, and confinement: a pattern whose static base passes
 * through a symlink reveals nothing (no names, and the same answer for an existing and a missing
 * name behind the link), symlinked directories are never entered, many generated variants match
 * only regular files inside the root, and a directory exchanged with a link out while searches run
 * never yields an outside name. Cursor walks and caps are in glob-walk.test.ts.
 */
import { closeSync, lstatSync, mkdirSync, openSync, realpathSync, symlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Workspace, WorkspaceError } from '../../src/fs/confine.js';
import { CursorCodec } from '../../src/shared/cursor.js';
import { MAX_QUERY_BYTES, checkQuery, searchFiles, type SearchPage } from '../../src/fs/search.js';
import { tempTree } from '../helpers/fs-tree.js';
import { exchanger, startSwapper } from '../helpers/swapper.js';

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
  // confinement: `conf/link` and `conf/tree/sublink` lead out; `race/dir` is exchanged with `race/link`
  mkdirSync(join(outside, 'sub'));
  writeFileSync(join(outside, 'sub', 'x'), 'S');
  for (let i = 0; i < 20; i++) writeFileSync(join(outside, `n${i}.txt`), 'S');
  mkdirSync(join(root, 'conf', 'a', 'sub'), { recursive: true });
  writeFileSync(join(root, 'conf', 'a', 'in.txt'), '');
  writeFileSync(join(root, 'conf', 'a', 'sub', 'x'), '');
  symlinkSync(outside, join(root, 'conf', 'link'));
  mkdirSync(join(root, 'conf', 'tree', 'real'), { recursive: true });
  writeFileSync(join(root, 'conf', 'tree', 'real', 'ok.txt'), '');
  symlinkSync(outside, join(root, 'conf', 'tree', 'sublink'));
  symlinkSync(join(outside, 'secret.txt'), join(root, 'conf', 'tree', 'filelink.txt'));
  mkdirSync(join(root, 'race', 'dir', 'nested'), { recursive: true });
  writeFileSync(join(root, 'race', 'dir', 'in.txt'), '');
  writeFileSync(join(root, 'race', 'dir', 'nested', 'in.txt'), '');
  symlinkSync(outside, join(root, 'race', 'link'));
  ws = await Workspace.open(root);
}, 60_000);

afterAll(async () => {
  await ws?.close();
  tree?.remove();
});

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
    // The full walk, for comparison: on a loaded machine the per-call time cap may stop a call
    // before the end (truncated_scan), so the walk follows next_cursor until has_more is false.
    const all: string[] = [];
    for (let cursor: string | undefined, calls = 0; ; calls++) {
      expect(calls).toBeLessThan(100);
      const page = await search('**/*.txt', 'wide', 1_000_000, cursor);
      all.push(...page.matches);
      if (!page.has_more) break;
      cursor = page.next_cursor;
    }
    const fullMs = performance.now() - t1;
    expect(all).toHaveLength(DIRS * PER_DIR);
    expect(new Set(all).size).toBe(DIRS * PER_DIR);
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

/** A page without its `query` (two queries' answers are compared). */
const answer = (p: SearchPage): Omit<SearchPage, 'query'> => ({ ...p, query: undefined }) as Omit<SearchPage, 'query'>;

/** Every match is a regular file inside the root, reached without a link, and not an outside name. */
function expectInside(page: SearchPage, q: string): void {
  const base = page.path === '.' ? root : join(root, page.path);
  for (const m of page.matches) {
    expect(m, q).not.toMatch(/secret|^n\d+\.txt$|\/n\d+\.txt$/);
    const abs = join(base, m);
    expect(lstatSync(abs).isFile(), `${q} → ${m}`).toBe(true);
    expect(realpathSync(abs), `${q} → ${m}`).toBe(abs); // no link on the way
  }
}

describe('confinement of the static base', () => {
  it('a base through a symlink reveals no name behind it', async () => {
    for (const q of ['link/**', 'link/*.txt', '{a,link}/**', 'link/sub/x', 'link/*', 'link/**/*', '{link,a}/*/*', 'link/n1.txt', '*/sub/x']) {
      const page = await search(q, 'conf', 200);
      expectInside(page, q);
      expect(page.matches.some((m) => m.startsWith('link/')), q).toBe(false);
    }
    expect((await search('{a,link}/**', 'conf', 200)).matches.sort()).toEqual(['a/in.txt', 'a/sub/x']);
  });

  it('no existence oracle: an existing and a missing name behind a link get the same answer', async () => {
    const pairs: [string, string][] = [
      ['link/secret.txt', 'link/missing.txt'],
      ['link/deep/secret.txt', 'link/deep/missing.txt'],
      ['link/deep', 'link/nodir'],
      ['link/deep/*', 'link/nodir/*'],
      ['link/*/secret.txt', 'link/*/missing.txt'],
      ['{a,link}/secret.txt', '{a,link}/missing.txt'],
      ['link/sub/x', 'link/sub/y'],
      ['link/**/secret.txt', 'link/**/missing.txt'],
      ['tree/sublink/secret.txt', 'tree/sublink/missing.txt'],
      ['tree/*/deep/secret.txt', 'tree/*/deep/missing.txt'],
    ];
    for (const [there, missing] of pairs) {
      for (const [q, path] of [[there, 'conf'], [missing, 'conf'], [`conf/${there}`, undefined], [`conf/${missing}`, undefined]] as const) {
        expect((await search(q, path)).matches, q).toEqual([]);
      }
      expect(answer(await search(there, 'conf')), there).toEqual(answer(await search(missing, 'conf')));
      expect(answer(await search(`conf/${there}`)), there).toEqual(answer(await search(`conf/${missing}`)));
    }
  });

  it('symlinked subdirectories are never entered and symlinks are never listed', async () => {
    const page = await search('**', 'conf/tree', 200);
    expect(page.matches).toEqual(['real/ok.txt']);
    expect((await search('**/*.txt', 'conf', 200)).matches.sort()).toEqual(['a/in.txt', 'tree/real/ok.txt']);
  });

  it('generated variants match only regular files inside the root', async () => {
    const heads = ['', 'link/', '{a,link}/', '{link,x}/', '*/', '**/', 'l*/', '[l]ink/', '@(link)/', '+(link|a)/', './link/', 'link//', 'tree/', 'tree/*/', '{tree/sublink,a}/', '{,tree/}sublink/'];
    const tails = ['*', '**', '**/*', 'secret.txt', '*.txt', 'deep/*', 'deep/secret.txt', '{deep,sub}/**', '**/secret*', 'sub/x', 'n?.txt', '{n1,n2}.txt', '*/*'];
    let ran = 0;
    for (const h of heads) {
      for (const t of tails) {
        for (const [q, path] of [[h + t, 'conf'], [`conf/${h}${t}`, undefined]] as const) {
          let page: SearchPage;
          try {
            page = await search(q, path, 200);
          } catch (e) {
            expect((e as WorkspaceError).code, q).toMatch(/^(PATH_ESCAPES_ROOT|INVALID_PARAMS)$/);
            continue;
          }
          expectInside(page, q);
          ran++;
        }
      }
    }
    expect(ran).toBeGreaterThan(heads.length * tails.length);
  });
});

describe('a directory exchanged with a link out while searches run', () => {
  const RACE_MS = 3000;
  const INSIDE_NAMES = new Set(['in.txt', 'nested/in.txt', 'dir/in.txt', 'dir/nested/in.txt', 'link/in.txt', 'link/nested/in.txt']);

  it('yields no outside name over hundreds of calls racing hundreds of thousands of exchanges', async (ctx) => {
    const cmd = exchanger(tree.dir); // built at test time; skipped without a compiler or python3
    if (cmd === undefined) ctx.skip();
    const swapper = await startSwapper(cmd!, join(root, 'race', 'dir'), join(root, 'race', 'link'), RACE_MS);
    const queries: [string, string | undefined][] = [
      ['dir/**', 'race'], ['dir/*.txt', 'race'], ['*/**', 'race'], ['**/secret.txt', 'race'], ['dir/deep/secret.txt', 'race'],
      ['{dir,link}/**', 'race'], ['**', 'race/dir'], ['*', 'race/dir'], ['race/dir/sub/x', undefined], ['race/*/n1.txt', undefined],
    ];
    let calls = 0;
    let hits = 0;
    const refused: Record<string, number> = {};
    while (swapper.running()) {
      for (const [q, path] of queries) {
        calls++;
        try {
          const page = await search(q, path, 200);
          hits += page.matches.length;
          for (const m of page.matches) expect(INSIDE_NAMES.has(m.replace(/^race\//, '')), `${q} @ ${path} → ${m}`).toBe(true);
        } catch (e) {
          expect(e).toBeInstanceOf(WorkspaceError);
          const code = (e as WorkspaceError).code;
          expect(code, (e as Error).message).toMatch(/^(PATH_ESCAPES_ROOT|NOT_FOUND|NOT_A_DIRECTORY)$/); // `path` opened as the link
          refused[code] = (refused[code] ?? 0) + 1;
        }
      }
    }
    const swaps = await swapper.done;
    const seen = `${calls} calls, ${swaps} swaps, ${hits} inside hits, refused ${JSON.stringify(refused)}`;
    expect(swaps, seen).toBeGreaterThan(1000);
    // A floor, not a speed goal: on a loaded two-core machine (two test workers) about 900 calls fit
    // in the 3 s; each races the exchanger, which is what the test is about.
    expect(calls, seen).toBeGreaterThan(300);
    expect(hits, seen).toBeGreaterThan(0); // the searches did find the inside files between exchanges
  }, 30_000);
});
