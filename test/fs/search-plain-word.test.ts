/**
 * A plain word given to the file search (no glob character, no `/`) finds what a person means:
 * every file under the directory whose name contains it, ASCII letters in any case, in every
 * directory a glob's `**` enters (dot directories and dot files only by a pattern that names the
 * dot). Checked on generated trees and words (parts of names in random case, words in no name,
 * multi-byte text, the Kelvin sign that lower-cases to `k`) against a walk of the tree, following
 * every cursor; a glob is read as written.
 */
import { mkdirSync, readdirSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import fc from 'fast-check';
import { afterAll, describe, expect, it } from 'vitest';
import { Workspace } from '../../src/fs/confine.js';
import { MAX_PLAIN_WORD_CHARS, readQuery, searchFiles } from '../../src/fs/search.js';
import { CursorCodec } from '../../src/shared/cursor.js';
import { tempTree } from '../helpers/fs-tree.js';
import { timeBox } from '../helpers/time-box.js';

const tree = tempTree('search-plain-word');
afterAll(() => tree.remove());
const cursors = new CursorCodec('plain-word');

const asciiFold = (s: string): string => s.replace(/[A-Z]/g, (c) => c.toLowerCase());

/**
 * Every regular file under `dir` in no dot directory whose name contains `word` (ASCII case
 * folded); a dot file only when the word names its dot (starts with it).
 */
function expected(dir: string, word: string, rel = ''): string[] {
  const out: string[] = [];
  const w = asciiFold(word);
  for (const name of readdirSync(join(dir, rel))) {
    const path = rel === '' ? name : `${rel}/${name}`;
    const n = asciiFold(name);
    if (statSync(join(dir, path)).isDirectory()) {
      if (!name.startsWith('.')) out.push(...expected(dir, word, path));
    } else if (name.startsWith('.') ? w.startsWith('.') && n.startsWith(w) : n.includes(w)) out.push(path);
  }
  return out;
}

async function all(ws: Workspace, query: string, limit: number): Promise<{ matches: string[]; glob: string | undefined }> {
  const matches: string[] = [];
  let cursor: string | undefined;
  let glob: string | undefined;
  for (let pages = 0; pages < 1000; pages++) {
    const page = await searchFiles(ws, cursors, query, undefined, limit, cursor);
    glob = page.glob;
    matches.push(...page.matches);
    cursor = page.next_cursor;
    if (cursor === undefined) return { matches, glob };
  }
  throw new Error('the walk did not end');
}

const piece = fc.constantFrom('read', 'ME', 'Note', 'x', 'Ünï', '😀', ' sp', '-', '_', '1', 'K', '\u212A', 'config', '.md', 'Ab', 'aB', ' (1)', 'c++', 'a,b', '@', '!', '$', '^');
const nameArb = fc.array(piece, { minLength: 1, maxLength: 4 }).map((p) => p.join(''));
const treeArb = fc.array(fc.record({ dirs: fc.array(fc.oneof(nameArb, fc.constant('.hidden')), { maxLength: 2 }), name: fc.oneof(nameArb, nameArb.map((n) => `.${n}`)) }), { minLength: 1, maxLength: 25 });
const flipCase = (s: string, bits: number): string => [...s].map((c, i) => ((bits >> i % 30) & 1 ? c.toUpperCase() : c.toLowerCase())).join('');

describe('a plain word', () => {
  it('finds every file whose name contains it, in any ASCII case, through every page', async () => {
    let run = 0;
    await fc.assert(
      fc.asyncProperty(treeArb, fc.nat(), fc.integer({ min: 0, max: 2 ** 30 }), fc.integer({ min: 1, max: 7 }), fc.boolean(), async (files, pick, bits, limit, absent) => {
        const root = join(tree.dir, `t${run++}`);
        mkdirSync(root);
        try {
          // directories and files never share a name: `=` in no piece keeps them apart
          for (const [i, f] of files.entries()) {
            const dir = join(root, ...f.dirs.map((d) => `${d}=`));
            mkdirSync(dir, { recursive: true });
            writeFileSync(join(dir, `${f.name}~${i}`), '');
          }
          // a part of some name in random case, or a word no name holds
          const source = (pick % 4 === 0 ? files[pick % files.length]!.name : files[pick % files.length]!.name.replace(/^\./, '')) || 'x';
          const chars = [...source];
          const from = source.startsWith('.') ? 0 : pick % chars.length;
          const raw = absent ? 'zzqq' : chars.slice(from, from + 1 + (pick % 3)).join('');
          const word = flipCase(raw, bits).trim() || 'x';
          if (word === '..') return; // refused as written: a path out of the root
          if (readQuery(word).plain === false) return; // a name piece with no glob character is always plain
          const ws = await Workspace.open(root);
          try {
            const got = await all(ws, word, limit);
            expect(got.glob, word).toBe(readQuery(word).glob);
            expect([...got.matches].sort(), word).toEqual(expected(root, word).sort());
          } finally {
            await ws.close();
          }
        } finally {
          rmSync(root, { recursive: true, force: true });
        }
      }),
      timeBox(60, 2500),
    );
  });

  it('a plain word of 100 letters matches in any case; one of 250 is read in its own case, within the time; a longer one is refused, saying why', async () => {
    const root = join(tree.dir, 'long');
    mkdirSync(join(root, 'deep'), { recursive: true });
    const name = 'Ab'.repeat(50); // a word of 100 letters folds
    writeFileSync(join(root, 'deep', name), '');
    const ws = await Workspace.open(root);
    try {
      expect((await all(ws, name.toLowerCase(), 5)).matches).toEqual([`deep/${name}`]);
      const capped = 'q'.repeat(MAX_PLAIN_WORD_CHARS);
      writeFileSync(join(root, 'deep', `x${capped}y`), '');
      const t0 = performance.now();
      expect((await all(ws, capped, 5)).matches).toEqual([`deep/x${capped}y`]);
      expect(performance.now() - t0).toBeLessThan(2000);
      // longer: refused, never read as a glob naming one file at the top (it found nothing, and said nothing)
      for (const n of [MAX_PLAIN_WORD_CHARS + 1, 400, 1024]) {
        await expect(searchFiles(ws, cursors, 'q'.repeat(n), undefined, 5, undefined), String(n)).rejects.toMatchObject({
          code: 'INPUT_TOO_LARGE',
          message: expect.stringMatching(new RegExp(`up to ${MAX_PLAIN_WORD_CHARS} characters; this one has ${n}\\. .*\\*\\*/NAME`)),
        });
      }
      await expect(searchFiles(ws, cursors, 'q'.repeat(1025), undefined, 5, undefined)).rejects.toMatchObject({ code: 'INPUT_TOO_LARGE' });
    } finally {
      await ws.close();
    }
  });

  it('is read as a glob over every name; a query with a glob character or a `/` is read as written', () => {
    const read = (q: string) => ({ glob: readQuery(q).glob, plain: readQuery(q).plain });
    expect(read('readme')).toEqual({ glob: '**/*[rR][eE][aA][dD][mM][eE]*', plain: true });
    expect(read('a.b c-1')).toEqual({ glob: '**/*[aA].[bB] [cC]-1*', plain: true });
    expect(read('\u212A')).toEqual({ glob: '**/*\u212A*', plain: true });
    expect(read('q'.repeat(200))).toEqual({ glob: `**/*${'q'.repeat(200)}*`, plain: true });
    for (const q of ['*.md', 'src/x', 'a?', '[ab]', '{a,b}', 'a\\*']) expect(read(q), q).toEqual({ glob: q, plain: false });
    // the characters the glob parser reads as syntax only somewhere are a word's own: escaped, and the spaces around it dropped
    expect(read('c++')).toEqual({ glob: '**/*[cC]\\+\\+*', plain: true });
    expect(read('notes (1)')).toEqual({ glob: '**/*[nN][oO][tT][eE][sS] \\(1\\)*', plain: true });
    expect(read('.a,b')).toEqual({ glob: '**/{*.[aA]\\,[bB]*,.[aA]\\,[bB]*}', plain: true });
    expect(read('user@host!')).toEqual({ glob: '**/*[uU][sS][eE][rR]\\@[hH][oO][sS][tT]\\!*', plain: true });
    expect(read('  readme\t')).toEqual({ glob: '**/*[rR][eE][aA][dD][mM][eE]*', plain: true });
    // regular-expression alternation and quotes are read as a glob, and refused there with advice
    for (const q of ['(foo|bar)', '"readme"', '!*.md']) expect(() => readQuery(q), q).toThrow(/not supported|quot|regular/i);
    expect(read(' !x')).toEqual({ glob: '**/*\\![xX]*', plain: true });
    // dots alone are read as written: `..` is a path out of the root
    expect(() => readQuery('..')).toThrow(expect.objectContaining({ code: 'PATH_ESCAPES_ROOT' }));
    // extglob forms are refused as written, not read as words
    for (const q of ['!(x)', '@(x)', '+(x)']) expect(() => readQuery(q), q).toThrow(/Extended globs/);
  });
});
