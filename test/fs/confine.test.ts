/**
 * Workspace confinement (src/fs/confine.ts): path syntax, realpath + separator-boundary checks
 * against siblings whose names extend the root's, symlinks (final component and parents), and the
 * check-then-open race (O_NOFOLLOW on the final component, the descriptor's real path checked).
 *
 * The race between the check and the open cannot be paused inside `openFile` without changing
 * src/, so it is covered three ways: the exact primitive sequence `openFile` uses, run step by step
 * with the swap in between; `checkDescriptor` fed a descriptor opened after a parent swap; and a
 * real race against a child process that keeps swapping, asserting that no read ever returns the
 * outside file's content.
 */
import { spawn } from 'node:child_process';
import { constants, mkdirSync, readFileSync, renameSync, rmSync, symlinkSync, unlinkSync, writeFileSync } from 'node:fs';
import { open } from 'node:fs/promises';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { MAX_PATH_BYTES, Workspace, WorkspaceError } from '../../src/fs/confine.js';
import { readWindow } from '../../src/fs/read-window.js';
import { tempTree } from '../helpers/fs-tree.js';

const SECRET = 'OUTSIDE-SECRET';
const INSIDE = 'inside-content';

let tree: ReturnType<typeof tempTree>;
let base: string; // holds `root` and its siblings
let root: string;
let ws: Workspace;

/** The code of a rejected workspace call (fails the test when it resolves or throws something else). */
async function codeOf(p: Promise<unknown>): Promise<string> {
  try {
    await p;
  } catch (e) {
    expect(e).toBeInstanceOf(WorkspaceError);
    return (e as WorkspaceError).code;
  }
  throw new Error('expected a WorkspaceError, the call succeeded');
}

function codeOfSync(f: () => unknown): string {
  try {
    f();
  } catch (e) {
    expect(e).toBeInstanceOf(WorkspaceError);
    return (e as WorkspaceError).code;
  }
  throw new Error('expected a WorkspaceError, the call succeeded');
}

const SIBLINGS = ['root2', 'root_backup', 'root-old', 'root.bak', 'root~', 'roo'];

beforeAll(async () => {
  tree = tempTree('confine');
  base = tree.dir;
  root = join(base, 'root');
  mkdirSync(join(root, 'sub', 'deep'), { recursive: true });
  writeFileSync(join(root, 'a.txt'), INSIDE);
  writeFileSync(join(root, 'sub', 'b.txt'), 'b');
  writeFileSync(join(root, '..test'), 'dotdot-prefix');
  writeFileSync(join(root, 'te..st'), 'dotdot-infix');
  writeFileSync(join(root, '...'), 'three-dots');
  mkdirSync(join(base, 'outside'));
  writeFileSync(join(base, 'outside', 'secret.txt'), SECRET);
  for (const s of SIBLINGS) {
    mkdirSync(join(base, s));
    writeFileSync(join(base, s, 'secret.txt'), SECRET);
    // absolute and relative links to each sibling, to the sibling dir and to a file in it
    symlinkSync(join(base, s), join(root, `abs-${s}`));
    symlinkSync(`../${s}`, join(root, `rel-${s}`));
    symlinkSync(`../${s}/secret.txt`, join(root, `file-${s}`));
  }
  symlinkSync(join(base, 'outside'), join(root, 'outdir'));
  symlinkSync(join(base, 'outside', 'secret.txt'), join(root, 'outfile'));
  symlinkSync('..', join(root, 'up'));
  symlinkSync('.', join(root, 'self'));
  symlinkSync(root, join(root, 'self-abs'));
  symlinkSync('a.txt', join(root, 'to-inside'));
  symlinkSync('sub', join(root, 'to-sub'));
  symlinkSync('loop', join(root, 'loop'));
  symlinkSync('ping', join(root, 'pong'));
  symlinkSync('pong', join(root, 'ping'));
  symlinkSync('missing-target', join(root, 'dangling'));
  ws = await Workspace.open(root);
});

afterAll(() => tree?.remove());

describe('segments(): path syntax', () => {
  it('accepts the root spellings and plain relative paths', () => {
    expect(ws.segments(undefined)).toEqual([]);
    expect(ws.segments('')).toEqual([]);
    expect(ws.segments('.')).toEqual([]);
    expect(ws.segments('./')).toEqual([]);
    expect(ws.segments('sub//deep/./')).toEqual(['sub', 'deep']);
    expect(ws.segments(' leading-space')).toEqual([' leading-space']);
  });

  it('allows names that merely contain dots: ..test, te..st, ..., a..', () => {
    expect(ws.segments('..test')).toEqual(['..test']);
    expect(ws.segments('te..st')).toEqual(['te..st']);
    expect(ws.segments('...')).toEqual(['...']);
    expect(ws.segments('sub/a..')).toEqual(['sub', 'a..']);
    expect(ws.segments('..\\x')).toEqual(['..\\x']); // a backslash is a name character on POSIX
  });

  it.each([
    '..',
    '../',
    '../x',
    '../root2/secret.txt',
    'sub/..',
    'sub/../a.txt',
    'sub/deep/../../..',
    './..',
    'sub/./../a.txt',
    'sub//..//a.txt',
    'a/b/c/../../../..',
  ])('refuses `..` in any position: %j', (p) => {
    expect(codeOfSync(() => ws.segments(p))).toBe('PATH_ESCAPES_ROOT');
  });

  it('refuses absolute paths, including the root itself and its siblings', () => {
    for (const p of ['/', '/etc/passwd', root, join(root, 'a.txt'), join(base, 'root2', 'secret.txt'), '//double']) {
      expect(codeOfSync(() => ws.segments(p)), p).toBe('PATH_ESCAPES_ROOT');
    }
  });

  it('refuses NUL bytes anywhere', () => {
    for (const p of ['\0', 'a.txt\0', 'a\0.txt', '\0../x', 'sub/\0']) {
      expect(codeOfSync(() => ws.segments(p)), JSON.stringify(p)).toBe('INVALID_PATH');
    }
  });

  it('refuses a trailing space, tab, newline or quote', () => {
    for (const p of ['a.txt ', 'a.txt\t', 'a.txt\n', 'a.txt\r', 'a.txt"', "a.txt'", 'a.txt`', 'sub/ ', '"a.txt"', 'a.txt\u00a0']) {
      expect(codeOfSync(() => ws.segments(p)), JSON.stringify(p)).toBe('INVALID_PATH');
    }
  });

  it('caps the path at MAX_PATH_BYTES UTF-8 bytes', () => {
    expect(ws.segments('a'.repeat(MAX_PATH_BYTES))).toHaveLength(1);
    expect(codeOfSync(() => ws.segments('a'.repeat(MAX_PATH_BYTES + 1)))).toBe('INVALID_PATH');
    // counted in bytes, not characters: 2049 × 'é' is 4098 bytes
    expect(codeOfSync(() => ws.segments('é'.repeat(2049)))).toBe('INVALID_PATH');
  });

  it('refuses non-strings', () => {
    expect(codeOfSync(() => ws.segments(42 as unknown as string))).toBe('INVALID_PATH');
  });
});

describe('resolve(): siblings whose names extend the root name', () => {
  it.each(SIBLINGS)('refuses %j beside the root, through absolute and relative symlinks and by name', async (s) => {
    expect(await codeOf(ws.resolve(`abs-${s}`))).toBe('PATH_ESCAPES_ROOT');
    expect(await codeOf(ws.resolve(`abs-${s}/secret.txt`))).toBe('PATH_ESCAPES_ROOT');
    expect(await codeOf(ws.resolve(`rel-${s}`))).toBe('PATH_ESCAPES_ROOT');
    expect(await codeOf(ws.resolve(`rel-${s}/secret.txt`))).toBe('PATH_ESCAPES_ROOT');
    expect(await codeOf(ws.resolve(`file-${s}`))).toBe('PATH_ESCAPES_ROOT');
    expect(await codeOf(ws.openFile(`file-${s}`))).toBe('PATH_ESCAPES_ROOT');
    expect(await codeOf(ws.resolve(`../${s}/secret.txt`))).toBe('PATH_ESCAPES_ROOT');
    expect(await codeOf(ws.resolve(join(base, s, 'secret.txt')))).toBe('PATH_ESCAPES_ROOT');
    expect(ws.contains(join(base, s))).toBe(false);
    expect(ws.contains(join(base, s, 'secret.txt'))).toBe(false);
  });

  it('contains() is a separator-boundary check', () => {
    expect(ws.contains(root)).toBe(true);
    expect(ws.contains(join(root, 'a.txt'))).toBe(true);
    expect(ws.contains(root + '2')).toBe(false);
    expect(ws.contains(root + '.bak/x')).toBe(false);
    expect(ws.contains(base)).toBe(false);
  });

  it('a workspace opened through a symlink to the root is the real root', async () => {
    symlinkSync(root, join(base, 'root-link'));
    try {
      const viaLink = await Workspace.open(join(base, 'root-link'));
      expect(viaLink.root).toBe(root);
      expect((await viaLink.resolve('a.txt')).rel).toBe('a.txt');
      expect(await codeOf(viaLink.resolve('rel-root2/secret.txt'))).toBe('PATH_ESCAPES_ROOT');
    } finally {
      unlinkSync(join(base, 'root-link'));
    }
  });
});

describe('resolve(): symlinks', () => {
  it('refuses a symlink to an outside directory or file, and paths under it', async () => {
    expect(await codeOf(ws.resolve('outdir'))).toBe('PATH_ESCAPES_ROOT');
    expect(await codeOf(ws.resolve('outdir/secret.txt'))).toBe('PATH_ESCAPES_ROOT');
    expect(await codeOf(ws.resolve('outfile'))).toBe('PATH_ESCAPES_ROOT');
    expect(await codeOf(ws.resolveDirectory('outdir'))).toBe('PATH_ESCAPES_ROOT');
  });

  it('refuses a parent directory that is a symlink to outside (and `up` → ..)', async () => {
    expect(await codeOf(ws.openFile('outdir/secret.txt'))).toBe('PATH_ESCAPES_ROOT');
    expect(await codeOf(ws.resolve('up'))).toBe('PATH_ESCAPES_ROOT');
    expect(await codeOf(ws.resolve('up/outside/secret.txt'))).toBe('PATH_ESCAPES_ROOT');
    // a link to `..` that leads back inside is judged by where it ends up
    expect((await ws.resolve('up/root/a.txt')).rel).toBe('a.txt');
    expect(await codeOf(ws.resolve('up/root2/secret.txt'))).toBe('PATH_ESCAPES_ROOT');
  });

  it('follows symlinks that stay inside, returning the real relative path', async () => {
    expect(await ws.resolve('to-inside')).toEqual({ abs: join(root, 'a.txt'), rel: 'a.txt' });
    expect((await ws.resolve('to-sub/b.txt')).rel).toBe('sub/b.txt');
    expect((await ws.resolve('self')).rel).toBe('.');
    expect((await ws.resolve('self-abs/self/sub')).rel).toBe('sub');
    expect((await ws.resolveDirectory('self')).rel).toBe('.');
  });

  it('maps loops, dangling links and missing paths to stable codes', async () => {
    expect(await codeOf(ws.resolve('loop'))).toBe('PATH_ESCAPES_ROOT');
    expect(await codeOf(ws.resolve('ping'))).toBe('PATH_ESCAPES_ROOT');
    expect(await codeOf(ws.resolve('dangling'))).toBe('NOT_FOUND');
    expect(await codeOf(ws.resolve('nope'))).toBe('NOT_FOUND');
    expect(await codeOf(ws.resolve('a.txt/x'))).toBe('NOT_A_DIRECTORY');
    expect(await codeOf(ws.resolveDirectory('a.txt'))).toBe('NOT_A_DIRECTORY');
  });

  it('error messages name the user path, never the host path of the root', async () => {
    for (const p of ['nope', 'outdir/secret.txt', 'loop', 'a.txt/x']) {
      try {
        await ws.resolve(p);
      } catch (e) {
        expect((e as Error).message).not.toContain(base);
      }
    }
  });
});

describe('openFile(): the final component', () => {
  it('reads through a final symlink that points inside; its rel is the target', async () => {
    const { handle, rel, size } = await ws.openFile('to-inside');
    try {
      expect(rel).toBe('a.txt');
      expect(size).toBe(INSIDE.length);
      expect((await handle.readFile()).toString()).toBe(INSIDE);
    } finally {
      await handle.close();
    }
  });

  it('refuses a final symlink that points outside, and directories', async () => {
    expect(await codeOf(ws.openFile('outfile'))).toBe('PATH_ESCAPES_ROOT');
    expect(await codeOf(ws.openFile('sub'))).toBe('NOT_A_FILE');
    expect(await codeOf(ws.openFile('.'))).toBe('NOT_A_FILE');
  });

  it('reads names that contain dots', async () => {
    for (const [p, text] of [
      ['..test', 'dotdot-prefix'],
      ['te..st', 'dotdot-infix'],
      ['...', 'three-dots'],
    ] as const) {
      const w = await readWindow(ws, p, 0, 100);
      expect(w.content).toBe(text);
    }
  });
});

describe('check-then-open: a file swapped for a link after the check', () => {
  it('the final component swapped after resolve(): the O_NOFOLLOW open used by openFile refuses (ELOOP)', async () => {
    writeFileSync(join(root, 'swap1.txt'), INSIDE);
    const r = await ws.resolve('swap1.txt'); // the check
    unlinkSync(join(root, 'swap1.txt'));
    symlinkSync(join(base, 'outside', 'secret.txt'), join(root, 'swap1.txt')); // the swap
    // The open openFile performs on the checked path:
    await expect(open(r.abs, constants.O_RDONLY | constants.O_NOFOLLOW)).rejects.toMatchObject({ code: 'ELOOP' });
    // and openFile itself, run after the swap, refuses it too
    expect(await codeOf(ws.openFile('swap1.txt'))).toBe('PATH_ESCAPES_ROOT');
    unlinkSync(join(root, 'swap1.txt'));
  });

  it('a parent swapped after resolve(): the open succeeds, checkDescriptor refuses the descriptor', async () => {
    mkdirSync(join(root, 'swapdir'));
    writeFileSync(join(root, 'swapdir', 'f.txt'), INSIDE);
    mkdirSync(join(base, 'outside', 'swapdir'));
    writeFileSync(join(base, 'outside', 'swapdir', 'f.txt'), SECRET);
    const r = await ws.resolve('swapdir/f.txt');
    renameSync(join(root, 'swapdir'), join(root, 'swapdir.parked'));
    symlinkSync(join(base, 'outside', 'swapdir'), join(root, 'swapdir'));
    // O_NOFOLLOW covers only the last component: this open succeeds and reaches the outside file
    const handle = await open(r.abs, constants.O_RDONLY | constants.O_NOFOLLOW);
    try {
      expect(await codeOf(ws.checkDescriptor(handle, r.abs))).toBe('PATH_ESCAPES_ROOT');
    } finally {
      await handle.close();
    }
    expect(await codeOf(ws.openFile('swapdir/f.txt'))).toBe('PATH_ESCAPES_ROOT');
    unlinkSync(join(root, 'swapdir'));
    renameSync(join(root, 'swapdir.parked'), join(root, 'swapdir'));
    // a descriptor of the expected file passes
    const ok = await open(join(root, 'swapdir', 'f.txt'), 'r');
    try {
      await ws.checkDescriptor(ok, join(root, 'swapdir', 'f.txt'));
    } finally {
      await ok.close();
    }
  });

  it('a real race: a child process keeps swapping a file and a parent for links out; no read ever returns outside bytes', async () => {
    mkdirSync(join(root, 'race'));
    mkdirSync(join(root, 'race', 'dir'));
    writeFileSync(join(root, 'race', 'file.txt'), INSIDE);
    writeFileSync(join(root, 'race', 'dir', 'f.txt'), INSIDE);
    mkdirSync(join(base, 'outside', 'racedir'));
    writeFileSync(join(base, 'outside', 'racedir', 'f.txt'), SECRET);
    const script = `
      const fs = require('fs'), path = require('path');
      const [raceDir, outFile, outDir, ms] = process.argv.slice(1);
      const file = path.join(raceDir, 'file.txt'), dir = path.join(raceDir, 'dir');
      const end = Date.now() + Number(ms);
      let n = 0;
      process.stdout.write('ready\\n');
      while (Date.now() < end) {
        n++;
        fs.writeFileSync(file + '.new', ${JSON.stringify(INSIDE)});
        fs.renameSync(file + '.new', file);
        fs.symlinkSync(outFile, file + '.lnk');
        fs.renameSync(file + '.lnk', file);
        fs.renameSync(dir, dir + '.parked');
        fs.symlinkSync(outDir, dir);
        fs.unlinkSync(dir);
        fs.renameSync(dir + '.parked', dir);
      }
      process.stdout.write('swaps ' + n + '\\n');
    `;
    const child = spawn(
      process.execPath,
      ['-e', script, join(root, 'race'), join(base, 'outside', 'secret.txt'), join(base, 'outside', 'racedir'), '1500'],
      { stdio: ['ignore', 'pipe', 'inherit'] },
    );
    let out = '';
    child.stdout.on('data', (c: Buffer) => (out += c.toString()));
    await new Promise((r) => child.stdout.once('data', r));
    const exited = new Promise((r) => child.once('exit', r));
    let running = true;
    void exited.then(() => (running = false));
    const outcomes: Record<string, number> = {};
    const bump = (k: string): void => void (outcomes[k] = (outcomes[k] ?? 0) + 1);
    while (running) {
      for (const p of ['race/file.txt', 'race/dir/f.txt']) {
        try {
          const w = await readWindow(ws, p, 0, 100);
          expect(w.content).not.toBe(SECRET);
          expect(w.content).toBe(INSIDE);
          bump('read');
        } catch (e) {
          expect(e).toBeInstanceOf(WorkspaceError);
          const code = (e as WorkspaceError).code;
          expect(['PATH_ESCAPES_ROOT', 'NOT_FOUND']).toContain(code);
          bump(code);
        }
      }
    }
    await exited;
    expect(out).toMatch(/swaps \d+/);
    expect(readFileSync(join(base, 'outside', 'secret.txt'), 'utf8')).toBe(SECRET);
    // both outcomes happened, so the race was really exercised
    expect(outcomes.read ?? 0).toBeGreaterThan(0);
    expect(outcomes.PATH_ESCAPES_ROOT ?? 0).toBeGreaterThan(0);
    rmSync(join(root, 'race'), { recursive: true, force: true });
  });
});

describe('resolveNew()', () => {
  it('returns the real parent, the directories to create and the name', async () => {
    expect(await ws.resolveNew('new.txt')).toEqual({ parentReal: root, missing: [], name: 'new.txt', rel: 'new.txt' });
    expect(await ws.resolveNew('sub/x/y/z.txt')).toEqual({ parentReal: join(root, 'sub'), missing: ['x', 'y'], name: 'z.txt', rel: 'sub/x/y/z.txt' });
    expect((await ws.resolveNew('to-sub/n.txt')).parentReal).toBe(join(root, 'sub'));
  });

  it('refuses the root, escapes through links (siblings included), and a parent that is a file', async () => {
    expect(await codeOf(ws.resolveNew('.'))).toBe('INVALID_PATH');
    expect(await codeOf(ws.resolveNew('outdir/new.txt'))).toBe('PATH_ESCAPES_ROOT');
    expect(await codeOf(ws.resolveNew('outdir/x/y/new.txt'))).toBe('PATH_ESCAPES_ROOT');
    expect(await codeOf(ws.resolveNew('rel-root2/new.txt'))).toBe('PATH_ESCAPES_ROOT');
    expect(await codeOf(ws.resolveNew('up/new.txt'))).toBe('PATH_ESCAPES_ROOT');
    expect(await codeOf(ws.resolveNew('../root2/new.txt'))).toBe('PATH_ESCAPES_ROOT');
    expect(await codeOf(ws.resolveNew('a.txt/new.txt'))).toBe('NOT_A_DIRECTORY');
    expect(await codeOf(ws.resolveNew('a.txt/x/new.txt'))).toBe('NOT_A_DIRECTORY');
  });

  // Regression (a fixed bug): resolveNew() lstat()s a dangling (or looping) symlink parent, then realpath() throws a raw
  // ENOENT/ELOOP error instead of a WorkspaceError; through the tool it becomes INTERNAL_ERROR with
  // the host's absolute path in the message.
  it('a dangling or looping symlink parent is a WorkspaceError, not a raw errno error', async () => {
    expect(await codeOf(ws.resolveNew('dangling/new.txt'))).toMatch(/NOT_FOUND|PATH_ESCAPES_ROOT/);
    expect(await codeOf(ws.resolveNew('loop/new.txt'))).toBe('PATH_ESCAPES_ROOT');
  });
});

describe('the primitives seeding relies on (Linux semantics)', () => {
  it('`wx` never follows a link at the name, and link() never follows a link at the target', async () => {
    const victim = join(base, 'outside', 'victim.txt');
    writeFileSync(victim, SECRET);
    symlinkSync(victim, join(root, 'staged-link'));
    await expect(open(join(root, 'staged-link'), 'wx')).rejects.toMatchObject({ code: 'EEXIST' });
    writeFileSync(join(root, 'staged-real'), 'x');
    const { link } = await import('node:fs/promises');
    await expect(link(join(root, 'staged-real'), join(root, 'staged-link'))).rejects.toMatchObject({ code: 'EEXIST' });
    expect(readFileSync(victim, 'utf8')).toBe(SECRET);
    unlinkSync(join(root, 'staged-link'));
    unlinkSync(join(root, 'staged-real'));
  });
});
