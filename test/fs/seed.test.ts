/**
 * All-or-nothing batch writes (src/fs/seed.ts): every cap refused before anything touches the
 * disk (the tree is compared byte for byte), an existing target refusing the whole batch, overwrite,
 * rollback when a later file fails while staging or while committing, and links planted between
 * the check and the write.
 *
 * Races are made deterministic with inotify (fs.watch on the target directory): the watcher acts
 * when the n-th staging file appears, which is after every target was checked and before any is
 * committed (the batch carries 1 MiB fillers so the commit phase is several event-loop turns away).
 */
import { spawn } from 'node:child_process';
import { lstatSync, mkdirSync, readFileSync, readdirSync, renameSync, statSync, symlinkSync, unlinkSync, watch, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { Workspace, WorkspaceError } from '../../src/fs/confine.js';
import { SEED_LIMITS, seedFiles, type SeedFile } from '../../src/fs/seed.js';
import { leftovers, snapshot, tempTree } from '../helpers/fs-tree.js';

const MiB = 1024 * 1024;
const FILLER = 'z'.repeat(MiB);
const STAGING = /^\.mcp-budget-[0-9a-f]{12}\.tmp$/;

let tree: ReturnType<typeof tempTree>;
let root: string;
let outside: string;
let ws: Workspace;

beforeEach(async () => {
  tree = tempTree('seed');
  root = join(tree.dir, 'root');
  outside = join(tree.dir, 'outside');
  mkdirSync(join(root, 'sub'), { recursive: true });
  mkdirSync(outside);
  writeFileSync(join(root, 'existing.txt'), 'original');
  writeFileSync(join(root, 'sub', 'kept.txt'), 'kept');
  writeFileSync(join(outside, 'victim.txt'), 'VICTIM');
  ws = await Workspace.open(root);
});

afterEach(async () => {
  await ws.close();
  tree.remove();
});

async function codeOf(p: Promise<unknown>): Promise<string> {
  try {
    await p;
  } catch (e) {
    expect(e).toBeInstanceOf(WorkspaceError);
    return (e as WorkspaceError).code;
  }
  throw new Error('expected a WorkspaceError, the call succeeded');
}

/** Run `seed` and expect it to fail with `code` leaving the whole tree (outside included) unchanged. */
async function refusedUnchanged(files: unknown, overwrite: boolean, code: string): Promise<void> {
  const before = snapshot(tree.dir);
  expect(await codeOf(seedFiles(ws, files, overwrite))).toBe(code);
  expect(snapshot(tree.dir)).toEqual(before);
}

/** Calls `action` when the `nth` distinct staging file appears in `dir` (with all staged names so far, in order). */
function onStaged(dir: string, nth: number, action: (name: string, names: string[]) => void): { close: () => void; fired: () => boolean; error: () => unknown } {
  const seen = new Set<string>();
  let fired = false;
  let error: unknown;
  const w = watch(dir, (_event, name) => {
    const s = String(name);
    if (!STAGING.test(s) || seen.has(s)) return;
    seen.add(s);
    if (seen.size === nth) {
      try {
        action(s, [...seen]);
        fired = true;
      } catch (e) {
        error = e;
      }
    }
  });
  return { close: () => w.close(), fired: () => fired, error: () => error };
}

describe('caps are checked before anything is written', () => {
  // a valid file (in a new directory) first, the offending item last
  const ok: SeedFile[] = [
    { path: 'new/dir/a.txt', content: 'a' },
    { path: 'b.txt', content: 'b' },
  ];

  it('more than maxFiles files', async () => {
    const files = Array.from({ length: SEED_LIMITS.maxFiles + 1 }, (_, i) => ({ path: `many/f${i}.txt`, content: 'x' }));
    await refusedUnchanged(files, false, 'INPUT_TOO_LARGE');
    await refusedUnchanged(files, true, 'INPUT_TOO_LARGE');
  });

  it('a path over maxPathBytes (in UTF-8 bytes)', async () => {
    const long = `${'d'.repeat(200)}/`.repeat(5) + 'x'.repeat(SEED_LIMITS.maxPathBytes - 1005 + 1); // 1025 bytes
    expect(Buffer.byteLength(long)).toBe(SEED_LIMITS.maxPathBytes + 1);
    await refusedUnchanged([...ok, { path: long, content: 'x' }], false, 'INPUT_TOO_LARGE');
    const wide = 'é'.repeat(120) + '/' + 'é'.repeat(113); // 240 + 1 + 226 = 467 bytes: fine
    expect((await seedFiles(ws, [{ path: wide, content: 'w' }], false)).written).toBe(1);
    const wider = ('é'.repeat(120) + '/').repeat(4) + 'é'.repeat(33); // 4 × 241 + 66 = 1030 bytes, 517 characters
    await refusedUnchanged([{ path: wider, content: 'x' }], false, 'INPUT_TOO_LARGE');
  });

  it('one file over maxFileBytes (UTF-8 bytes, not characters)', async () => {
    await refusedUnchanged([...ok, { path: 'big.txt', content: 'x'.repeat(SEED_LIMITS.maxFileBytes + 1) }], false, 'INPUT_TOO_LARGE');
    // 'é' is 2 bytes: half a MiB of characters plus one is over the cap
    await refusedUnchanged([...ok, { path: 'big.txt', content: 'é'.repeat(SEED_LIMITS.maxFileBytes / 2 + 1) }], false, 'INPUT_TOO_LARGE');
  });

  it('the batch over maxTotalBytes, every file within its own cap', async () => {
    const n = SEED_LIMITS.maxTotalBytes / SEED_LIMITS.maxFileBytes; // 8 files of 1 MiB fit exactly
    const files = [...Array.from({ length: n }, (_, i) => ({ path: `t/f${i}`, content: FILLER })), { path: 'one-more', content: '1' }];
    await refusedUnchanged(files, false, 'INPUT_TOO_LARGE');
  });

  it('exactly at the caps is accepted', async () => {
    const files = Array.from({ length: SEED_LIMITS.maxTotalBytes / MiB }, (_, i) => ({ path: `cap/f${i}`, content: FILLER }));
    const r = await seedFiles(ws, files, false);
    expect(r).toMatchObject({ written: files.length, bytes: SEED_LIMITS.maxTotalBytes, created_directories: 1 });
    expect(statSync(join(root, 'cap', 'f7')).size).toBe(MiB);
  });

  it('malformed input, duplicates, escapes and bad paths refuse the whole batch', async () => {
    await refusedUnchanged([], false, 'INVALID_PARAMS');
    await refusedUnchanged('nope', false, 'INVALID_PARAMS');
    await refusedUnchanged([...ok, { path: 'x' }], false, 'INVALID_PARAMS');
    await refusedUnchanged([...ok, null], false, 'INVALID_PARAMS');
    await refusedUnchanged([...ok, { path: './b.txt', content: 'dup' }], false, 'INVALID_PARAMS');
    await refusedUnchanged([...ok, { path: 'new//dir/a.txt', content: 'dup' }], false, 'INVALID_PARAMS');
    await refusedUnchanged([...ok, { path: '../escape.txt', content: 'x' }], false, 'PATH_ESCAPES_ROOT');
    await refusedUnchanged([...ok, { path: join(outside, 'abs.txt'), content: 'x' }], true, 'PATH_ESCAPES_ROOT');
    await refusedUnchanged([...ok, { path: 'nul\0.txt', content: 'x' }], false, 'INVALID_PATH');
    await refusedUnchanged([...ok, { path: 'trailing.txt ', content: 'x' }], false, 'INVALID_PATH');
    await refusedUnchanged([...ok, { path: '.', content: 'x' }], false, 'INVALID_PATH');
  });

  it('a path through a symlink that leads outside refuses the batch and writes nothing outside', async () => {
    symlinkSync(outside, join(root, 'out'));
    await refusedUnchanged([...ok, { path: 'out/planted.txt', content: 'x' }], true, 'PATH_ESCAPES_ROOT');
    await refusedUnchanged([...ok, { path: 'out/new/dir/planted.txt', content: 'x' }], true, 'PATH_ESCAPES_ROOT');
    expect(readdirSync(outside)).toEqual(['victim.txt']);
  });
});

describe('all or nothing', () => {
  it('one existing target without overwrite refuses the batch; nothing is created', async () => {
    await refusedUnchanged(
      [
        { path: 'new/deep/a.txt', content: 'a' },
        { path: 'b.txt', content: 'b' },
        { path: 'sub/n.txt', content: 'n' },
        { path: 'existing.txt', content: 'replaced?' },
      ],
      false,
      'ALREADY_EXISTS',
    );
  });

  it('an existing directory or symlink as a target refuses the batch, with or without overwrite', async () => {
    symlinkSync(join(outside, 'victim.txt'), join(root, 'link-out.txt'));
    symlinkSync('existing.txt', join(root, 'link-in.txt'));
    for (const overwrite of [false, true]) {
      await refusedUnchanged([{ path: 'new/a.txt', content: 'a' }, { path: 'sub', content: 'x' }], overwrite, 'NOT_A_FILE');
      await refusedUnchanged([{ path: 'new/a.txt', content: 'a' }, { path: 'link-out.txt', content: 'x' }], overwrite, 'NOT_A_FILE');
      await refusedUnchanged([{ path: 'new/a.txt', content: 'a' }, { path: 'link-in.txt', content: 'x' }], overwrite, 'NOT_A_FILE');
    }
    expect(readFileSync(join(outside, 'victim.txt'), 'utf8')).toBe('VICTIM');
  });

  it('a later file whose parent is a file refuses the batch before anything is written', async () => {
    await refusedUnchanged(
      [
        { path: 'fresh/one.txt', content: '1' },
        { path: 'existing.txt/two.txt', content: '2' },
      ],
      false,
      'NOT_A_DIRECTORY',
    );
    await refusedUnchanged(
      [
        { path: 'fresh/one.txt', content: '1' },
        { path: 'existing.txt/deeper/two.txt', content: '2' },
      ],
      true,
      'NOT_A_DIRECTORY',
    );
  });

  it('writes a batch: new directories, receipt, no staging files left', async () => {
    const r = await seedFiles(
      ws,
      [
        { path: 'n1/n2/a.txt', content: 'aé' },
        { path: 'n1/b.txt', content: '' },
        { path: 'sub/c.txt', content: 'c' },
      ],
      false,
    );
    expect(r).toEqual({ written: 3, bytes: 4, paths: ['n1/n2/a.txt', 'n1/b.txt', 'sub/c.txt'], created_directories: 2 });
    expect(readFileSync(join(root, 'n1', 'n2', 'a.txt'), 'utf8')).toBe('aé');
    expect(readFileSync(join(root, 'n1', 'b.txt'), 'utf8')).toBe('');
    expect(leftovers(tree.dir)).toEqual([]);
  });

  it('overwrite replaces the content (a new inode moved into place) and leaves no backup', async () => {
    const ino = statSync(join(root, 'existing.txt')).ino;
    const r = await seedFiles(ws, [{ path: 'existing.txt', content: 'new content' }, { path: 'brand-new.txt', content: 'n' }], true);
    expect(r.written).toBe(2);
    expect(readFileSync(join(root, 'existing.txt'), 'utf8')).toBe('new content');
    expect(statSync(join(root, 'existing.txt')).ino).not.toBe(ino);
    expect(leftovers(tree.dir)).toEqual([]);
  });

  // Regression (a fixed bug): overwrite is rename(target → backup) then rename(temp → target): between the two renames the
  // target does not exist, so a concurrent reader sees ENOENT. A single rename(temp → target) is the
  // atomic replacement (keep the old inode for rollback with link(target, backup) first).
  it('overwrite is atomic: a concurrent reader never sees the target missing', async () => {
    const target = join(root, 'existing.txt');
    const watcher = spawn(
      process.execPath,
      [
        '-e',
        `const fs = require('fs'); const end = Date.now() + 8000; process.stdout.write('ready\\n');
         while (Date.now() < end) { try { fs.statSync(process.argv[1]); } catch { process.stdout.write('MISSING\\n'); process.exit(0); } }
         process.stdout.write('never missing\\n');`,
        target,
      ],
      { stdio: ['ignore', 'pipe', 'inherit'] },
    );
    const exited = new Promise((r) => watcher.once('exit', r));
    let out = '';
    watcher.stdout.on('data', (c: Buffer) => (out += c.toString()));
    await new Promise((r) => watcher.stdout.once('data', r));
    try {
      for (let i = 0; i < 1000 && !out.includes('MISSING'); i++) await seedFiles(ws, [{ path: 'existing.txt', content: `v${i}` }], true);
    } finally {
      watcher.kill();
      await exited;
    }
    expect(out).not.toContain('MISSING');
  });
});

describe('rollback when a later file fails', () => {
  it('staging fails on a later file: created directories and staged files are removed', async () => {
    mkdirSync(join(root, 'is-a-dir'));
    await refusedUnchanged(
      [
        { path: 'x/y/one.txt', content: '1' },
        { path: 'x/two.txt', content: '2' },
        { path: 'is-a-dir', content: '3' },
      ],
      true,
      'NOT_A_FILE',
    );
  });

  it('commit fails on a later file (a name planted after the check): committed files are unlinked', async () => {
    const planted = onStaged(root, 3, () => writeFileSync(join(root, 'late.txt'), 'INTRUDER', { flag: 'wx' }));
    const before = snapshot(root);
    try {
      expect(
        await codeOf(
          seedFiles(
            ws,
            [
              { path: 'new1.txt', content: 'N' },
              { path: 'late.txt', content: 'L' },
              { path: 'f1', content: FILLER },
              { path: 'f2', content: FILLER },
            ],
            false,
          ),
        ),
      ).toBe('ALREADY_EXISTS');
    } finally {
      planted.close();
    }
    expect(planted.error()).toBeUndefined();
    expect(planted.fired()).toBe(true);
    const after = snapshot(root);
    expect(after['late.txt']).toBeDefined(); // the intruder's file, untouched
    expect(readFileSync(join(root, 'late.txt'), 'utf8')).toBe('INTRUDER');
    delete after['late.txt'];
    expect(after).toEqual(before); // new1.txt (already linked) was removed, no staging files
  });

  it('commit fails after an overwrite was committed: the overwritten file is restored', async () => {
    mkdirSync(join(root, 'd'));
    const planted = onStaged(root, 2, () => {
      // the 2nd staging file in the root is f1's: d/late.txt is staged already, in d
      renameSync(join(root, 'd'), join(tree.dir, 'd.moved'));
      writeFileSync(join(root, 'd'), 'now a file');
    });
    try {
      expect(
        await codeOf(
          seedFiles(
            ws,
            [
              { path: 'existing.txt', content: 'overwritten' },
              { path: 'd/late.txt', content: 'L' },
              { path: 'f1', content: FILLER },
              { path: 'f2', content: FILLER },
            ],
            true,
          ),
        ),
      ).toBe('NOT_A_DIRECTORY');
    } finally {
      planted.close();
    }
    expect(planted.error()).toBeUndefined();
    expect(planted.fired()).toBe(true);
    expect(readFileSync(join(root, 'existing.txt'), 'utf8')).toBe('original');
    expect(readdirSync(root).sort()).toEqual(['d', 'existing.txt', 'sub']);
  });

  // Regression (a fixed bug): a batch naming both `a` and `a/b` (neither existing) with overwrite: staging creates the
  // directory `a` for `a/b`; committing `a` renames that directory to a backup and puts the file in
  // its place; `a/b` then fails (ENOTDIR) and the rollback cannot move the directory back over the
  // file. The call fails, yet `a` is left written and a `.mcp-budget-*.tmp.bak` directory remains.
  it('a batch naming both `a` and `a/b` is refused or fully rolled back (overwrite: true)', async () => {
    const before = snapshot(tree.dir);
    try {
      await seedFiles(
        ws,
        [
          { path: 'a', content: 'file a' },
          { path: 'a/b', content: 'file b' },
        ],
        true,
      );
    } catch (e) {
      expect(e).toBeInstanceOf(WorkspaceError);
    }
    expect(snapshot(tree.dir)).toEqual(before);
  });

  it('a batch naming both `a` and `a/b` without overwrite is refused and rolled back', async () => {
    await refusedUnchanged(
      [
        { path: 'a', content: 'file a' },
        { path: 'a/b', content: 'file b' },
      ],
      false,
      'INVALID_PARAMS', // refused by the input check, before anything is touched
    );
  });
});

describe('a rollback that cannot take a published file back', () => {
  // Every batch shape (new and overwritten files), every publish step failing, and every subset of
  // the files published before it taken out of the rollback's reach by a concurrent writer (an
  // overwrite's backup removed; a new file replaced by a non-empty directory). The answer is the
  // failure itself with the tree as before when the rollback restored everything, and otherwise
  // OUTCOME_UNKNOWN naming exactly the files it could not restore, never "nothing was written".
  it('answers OUTCOME_UNKNOWN naming exactly the unrestored files, and restores every other', async () => {
    let cases = 0;
    for (const shape of ['on', 'no', 'oon', 'ono', 'noo', 'onon']) {
      for (let failAt = 1; failAt < shape.length; failAt++) {
        for (let mask = 0; mask < 1 << failAt; mask++) {
          const dir = `case${cases++}`;
          mkdirSync(join(root, dir));
          const files = [...shape].map((kind, i) => {
            const path = `${dir}/f${i}.txt`;
            if (kind === 'o') writeFileSync(join(root, path), `old-${i}`);
            return { path, content: `new-${i}`, kind };
          });
          const before = snapshot(join(root, dir));
          const sabotaged = new Set<number>();
          const err = await seedFiles(ws, files.map(({ path, content }) => ({ path, content })), true, {
            beforePublish(index) {
              if (index !== failAt) return;
              for (let i = 0; i < failAt; i++) {
                if ((mask & (1 << i)) === 0) continue;
                sabotaged.add(i);
                if (files[i]!.kind === 'o') {
                  const bak = readdirSync(join(root, dir)).find((n) => n.endsWith('.bak') && readFileSync(join(root, dir, n), 'utf8') === `old-${i}`);
                  unlinkSync(join(root, dir, bak!));
                } else {
                  unlinkSync(join(root, files[i]!.path));
                  mkdirSync(join(root, files[i]!.path));
                  writeFileSync(join(root, files[i]!.path, 'held'), 'x');
                }
              }
              throw new Error('injected publish failure');
            },
          }).then(
            () => undefined,
            (e: unknown) => e as WorkspaceError,
          );
          const label = `${shape} failing at ${failAt}, unrestorable ${[...sabotaged].join(',') || 'none'}`;
          expect(err, label).toBeInstanceOf(WorkspaceError);
          if (sabotaged.size === 0) {
            expect(err!.code, label).not.toBe('OUTCOME_UNKNOWN');
            expect(snapshot(join(root, dir)), label).toEqual(before);
          } else {
            expect(err!.code, label).toBe('OUTCOME_UNKNOWN');
            expect(err!.message, label).not.toMatch(/nothing was written/i);
            const data = err!.data as { paths: string[]; unrestored: number };
            expect(new Set(data.paths), label).toEqual(new Set([...sabotaged].map((i) => files[i]!.path)));
            expect(data.unrestored, label).toBe(sabotaged.size);
            for (let i = 0; i < failAt; i++) {
              if (sabotaged.has(i)) continue;
              const p = join(root, files[i]!.path);
              if (files[i]!.kind === 'o') expect(readFileSync(p, 'utf8'), label).toBe(`old-${i}`);
              else expect(() => lstatSync(p), label).toThrow();
            }
          }
          expect(leftovers(join(root, dir)), label).toEqual([]);
        }
      }
    }
    expect(cases).toBe(36);
  });
});

describe('links planted between the check and the write', () => {
  it('a link planted at a checked target is never followed: without overwrite the batch fails, with it the link is replaced', async () => {
    for (const overwrite of [false, true]) {
      const planted = onStaged(root, 2, () => symlinkSync(join(outside, 'victim.txt'), join(root, 'target.txt')));
      let result: unknown;
      try {
        result = await seedFiles(
          ws,
          [
            { path: 'target.txt', content: 'MINE' },
            { path: 'f1', content: FILLER },
            { path: 'f2', content: FILLER },
          ],
          overwrite,
        ).catch((e: unknown) => e);
      } finally {
        planted.close();
      }
      expect(planted.error()).toBeUndefined();
      expect(planted.fired()).toBe(true);
      expect(readFileSync(join(outside, 'victim.txt'), 'utf8')).toBe('VICTIM');
      expect(readdirSync(outside)).toEqual(['victim.txt']);
      if (overwrite) {
        expect(result).toMatchObject({ written: 3 });
        expect(lstatSync(join(root, 'target.txt')).isFile()).toBe(true); // the link itself was replaced
        expect(readFileSync(join(root, 'target.txt'), 'utf8')).toBe('MINE');
      } else {
        expect(result).toBeInstanceOf(WorkspaceError);
        expect((result as WorkspaceError).code).toBe('ALREADY_EXISTS');
        expect(lstatSync(join(root, 'target.txt')).isSymbolicLink()).toBe(true);
        expect(readdirSync(root).sort()).toEqual(['existing.txt', 'sub', 'target.txt']);
      }
      unlinkSync(join(root, 'target.txt'));
      expect(leftovers(tree.dir)).toEqual([]);
    }
  });

  it('a staging file swapped for a link after it was opened: nothing is written through the link', async () => {
    // when f1 is staged, swapped.txt's staging file has been opened, checked, written and closed
    const planted = onStaged(root, 2, (_name, [first]) => {
      unlinkSync(join(root, first!));
      symlinkSync(join(outside, 'victim.txt'), join(root, first!));
    });
    try {
      await seedFiles(
        ws,
        [
          { path: 'swapped.txt', content: 'MINE' },
          { path: 'f1', content: FILLER },
          { path: 'f2', content: FILLER },
        ],
        false,
      ).catch(() => undefined);
    } finally {
      planted.close();
    }
    expect(planted.fired()).toBe(true);
    expect(readFileSync(join(outside, 'victim.txt'), 'utf8')).toBe('VICTIM');
    expect(readdirSync(outside)).toEqual(['victim.txt']);
  });

  // Regression (a fixed bug): the staged name is linked into place by path (link(temp, target)); when the staging file was
  // swapped for a symlink after its descriptor was checked, link() hard-links the symlink itself, so
  // the receipt says "written" while the target is a link to a file outside the root and the content
  // is lost. Linking the checked descriptor (linkat AT_EMPTY_PATH or /proc/self/fd + AT_SYMLINK_FOLLOW)
  // or comparing lstat(temp).ino with the descriptor's before linking would refuse it.
  it('a staging file swapped for a link is refused, not published as the target', async () => {
    // when f1 is staged, swapped.txt's staging file has been opened, checked, written and closed
    const planted = onStaged(root, 2, (_name, [first]) => {
      unlinkSync(join(root, first!));
      symlinkSync(join(outside, 'victim.txt'), join(root, first!));
    });
    let result: unknown;
    try {
      result = await seedFiles(
        ws,
        [
          { path: 'swapped.txt', content: 'MINE' },
          { path: 'f1', content: FILLER },
          { path: 'f2', content: FILLER },
        ],
        false,
      ).catch((e: unknown) => e);
    } finally {
      planted.close();
    }
    expect(planted.fired()).toBe(true);
    if (result instanceof WorkspaceError) {
      expect(readdirSync(root).sort()).toEqual(['existing.txt', 'sub']);
    } else {
      expect(lstatSync(join(root, 'swapped.txt')).isSymbolicLink()).toBe(false);
      expect(readFileSync(join(root, 'swapped.txt'), 'utf8')).toBe('MINE');
    }
  });
});

describe('what seeding never touches', () => {
  it('no write under a `.git` component in any case, anywhere on the path; the batch writes nothing', async () => {
    mkdirSync(join(root, '.git'));
    const spellings = ['.git', '.GIT', '.Git', '.gIT'];
    const paths = spellings.flatMap((g) => [`${g}/config`, `${g}/hooks/pre-commit`, `sub/${g}/config`, `a/b/${g}/info/attributes`, g]);
    for (const path of paths) {
      await refusedUnchanged([{ path: 'ok.txt', content: 'fine' }, { path, content: '[core]\n\thooksPath = /tmp/evil\n' }], true, 'INVALID_PATH');
    }
    // names that merely contain `.git` are ordinary files
    const r = await seedFiles(ws, ['.gitignore', '.git2/x', 'x.git', '.gitkeep'].map((path) => ({ path, content: 'x' })), false);
    expect(r.written).toBe(4);
  });

  it('overwriting a name that is a hard link to an outside file replaces the name and leaves the outside file unchanged', async () => {
    const { linkSync } = await import('node:fs');
    for (let i = 0; i < 5; i++) {
      const victim = join(outside, `victim-${i}.txt`);
      writeFileSync(victim, 'OUTSIDE');
      linkSync(victim, join(root, `hard-${i}.txt`));
      await seedFiles(ws, [{ path: `hard-${i}.txt`, content: 'new content' }], true);
      expect(readFileSync(victim, 'utf8')).toBe('OUTSIDE');
      expect(readFileSync(join(root, `hard-${i}.txt`), 'utf8')).toBe('new content');
      expect(statSync(join(root, `hard-${i}.txt`)).ino).not.toBe(statSync(victim).ino);
    }
  });
});

describe('no git directory can be planted or changed', () => {
  it('a bare-repository layout with HEAD (any case, any depth) is refused whole', async () => {
    for (const head of ['HEAD', 'head', 'Head']) {
      for (const dir of ['', 'vendor/lib/', 'a/b/c/']) {
        await refusedUnchanged(
          [
            { path: `${dir}config`, content: '[core]\n\tfsmonitor = "touch /tmp/x"\n' },
            { path: `${dir}${head}`, content: 'ref: refs/heads/main\n' },
            { path: `${dir}objects/info/alternates`, content: '' },
            { path: `${dir}refs/heads/README`, content: '' },
          ],
          false,
          'INVALID_PATH',
        );
      }
    }
  });

  it('nothing is written into or below a directory that holds a HEAD (a .git under another name, a vendored bare repo)', async () => {
    mkdirSync(join(root, 'vendor', 'bare', 'hooks'), { recursive: true });
    writeFileSync(join(root, 'vendor', 'bare', 'HEAD'), 'ref: refs/heads/main\n');
    for (const path of ['vendor/bare/config', 'vendor/bare/hooks/pre-commit', 'vendor/bare/objects/info/alternates', 'vendor/bare/new/deep/x']) {
      await refusedUnchanged([{ path: 'fine.txt', content: 'x' }, { path, content: 'planted' }], true, 'INVALID_PATH');
    }
    // beside it is fine
    expect((await seedFiles(ws, [{ path: 'vendor/other.txt', content: 'x' }], false)).written).toBe(1);
  });

  it('depth and distinct directories are capped before anything is written', async () => {
    const deep = Array.from({ length: SEED_LIMITS.maxPathDepth }, () => 'a').join('/');
    await refusedUnchanged([{ path: `${deep}/f`, content: 'x' }], false, 'INPUT_TOO_LARGE');
    const wide = Array.from({ length: 100 }, (_, i) => ({ path: `w${i}/x${i}/y${i}/f`, content: 'x' }));
    await refusedUnchanged(wide, false, 'INPUT_TOO_LARGE');
  });
});
