/**
 * The workspace gate (src/fs/confine.ts): path syntax; the root pinned by identity; every path
 * reached by walking from the root descriptor without following a link, so links are refused
 * wherever they stand (siblings whose names extend the root's, outside targets, `..` links, even
 * links that stay inside); errors that name the user's path only. Races against a swapper
 * process are in gate-races.test.ts.
 */
import { mkdirSync, readFileSync, renameSync, rmSync, symlinkSync, unlinkSync, writeFileSync } from 'node:fs';
import { link, open } from 'node:fs/promises';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { MAX_PATH_BYTES, Workspace, WorkspaceError, isGitComponent } from '../../src/fs/confine.js';
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

/** Open a directory through the gate and return its relative path (closing it). */
async function relOf(path: string): Promise<string> {
  const d = await ws.openDir(path);
  await d.close();
  return d.rel;
}

/** Every way the gate can be asked for a path: as a directory, a file, a parent of a new file. */
async function allRefused(path: string): Promise<string[]> {
  return [await codeOf(ws.openDir(path)), await codeOf(ws.openFile(path)), await codeOf(ws.openDir(`${path}/x`))];
}

describe('the gate: siblings whose names extend the root name', () => {
  it.each(SIBLINGS)('refuses %j beside the root, through absolute and relative symlinks and by name', async (s) => {
    for (const p of [`abs-${s}`, `abs-${s}/secret.txt`, `rel-${s}`, `rel-${s}/secret.txt`, `file-${s}`]) {
      for (const code of await allRefused(p)) expect(code).toMatch(/PATH_ESCAPES_ROOT|NOT_A_DIRECTORY/);
    }
    expect(await codeOf(ws.openFile(`file-${s}`))).toBe('PATH_ESCAPES_ROOT');
    expect(await codeOf(ws.openDir(`../${s}`))).toBe('PATH_ESCAPES_ROOT');
    expect(await codeOf(ws.openFile(join(base, s, 'secret.txt')))).toBe('PATH_ESCAPES_ROOT');
  });

  it('a workspace opened through a symlink to the root pins the real root', async () => {
    symlinkSync(root, join(base, 'root-link'));
    try {
      const viaLink = await Workspace.open(join(base, 'root-link'));
      expect(viaLink.root).toBe(root);
      expect(viaLink.descriptorConfined).toBe(true);
      expect(await relOf('sub/deep')).toBe('sub/deep');
      expect(await codeOf(viaLink.openFile('rel-root2/secret.txt'))).toBe('PATH_ESCAPES_ROOT');
      await viaLink.close();
    } finally {
      unlinkSync(join(base, 'root-link'));
    }
  });
});

describe('the gate: symlinks are never followed', () => {
  it('refuses a link to an outside directory or file, and paths under it', async () => {
    expect(await codeOf(ws.openDir('outdir'))).toBe('PATH_ESCAPES_ROOT');
    expect(await codeOf(ws.openFile('outdir/secret.txt'))).toBe('PATH_ESCAPES_ROOT');
    expect(await codeOf(ws.openFile('outfile'))).toBe('PATH_ESCAPES_ROOT');
    expect(await codeOf(ws.openDir('up'))).toBe('PATH_ESCAPES_ROOT');
    expect(await codeOf(ws.openFile('up/outside/secret.txt'))).toBe('PATH_ESCAPES_ROOT');
    expect(await codeOf(ws.openFile('up/root/a.txt'))).toBe('PATH_ESCAPES_ROOT');
  });

  it('refuses links that stay inside too (a link is a name, never a way)', async () => {
    for (const p of ['to-inside', 'self', 'self-abs', 'to-sub']) expect(await codeOf(ws.openFile(p))).toMatch(/PATH_ESCAPES_ROOT/);
    for (const p of ['to-sub', 'self', 'self-abs/sub', 'self/sub']) expect(await codeOf(ws.openDir(p))).toBe('PATH_ESCAPES_ROOT');
    expect(await codeOf(ws.openFile('to-sub/b.txt'))).toBe('PATH_ESCAPES_ROOT');
  });

  it('maps loops, dangling links and missing paths to stable codes', async () => {
    expect(await codeOf(ws.openDir('loop'))).toBe('PATH_ESCAPES_ROOT');
    expect(await codeOf(ws.openFile('ping'))).toBe('PATH_ESCAPES_ROOT');
    expect(await codeOf(ws.openFile('dangling'))).toBe('PATH_ESCAPES_ROOT');
    expect(await codeOf(ws.openDir('nope'))).toBe('NOT_FOUND');
    expect(await codeOf(ws.openFile('nope'))).toBe('NOT_FOUND');
    expect(await codeOf(ws.openFile('a.txt/x'))).toBe('NOT_A_DIRECTORY');
    expect(await codeOf(ws.openDir('a.txt'))).toBe('NOT_A_DIRECTORY');
  });

  it('error messages name the user path, never the host path of the root', async () => {
    for (const p of ['nope', 'outdir/secret.txt', 'loop', 'a.txt/x', 'rel-root2/secret.txt', 'dangling']) {
      for (const call of [() => ws.openDir(p), () => ws.openFile(p)]) {
        try {
          await call();
        } catch (e) {
          expect((e as Error).message).not.toContain(base);
        }
      }
    }
  });
});

describe('openFile(): the final component', () => {
  it('reads a regular file; refuses directories and the root', async () => {
    const { handle, rel, size } = await ws.openFile('a.txt');
    try {
      expect(rel).toBe('a.txt');
      expect(size).toBe(INSIDE.length);
      expect((await handle.readFile()).toString()).toBe(INSIDE);
    } finally {
      await handle.close();
    }
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

describe('descriptors, not strings', () => {
  it('a directory handle keeps naming the directory it opened after the path is swapped for a link out', async () => {
    mkdirSync(join(root, 'swapdir'));
    writeFileSync(join(root, 'swapdir', 'f.txt'), INSIDE);
    mkdirSync(join(base, 'outside', 'swapdir'));
    writeFileSync(join(base, 'outside', 'swapdir', 'f.txt'), SECRET);
    const dir = await ws.openDir('swapdir');
    try {
      renameSync(join(root, 'swapdir'), join(root, 'swapdir.parked'));
      symlinkSync(join(base, 'outside', 'swapdir'), join(root, 'swapdir'));
      const h = await dir.openFile('f.txt');
      try {
        expect((await h.readFile()).toString()).toBe(INSIDE);
      } finally {
        await h.close();
      }
      const it = await dir.list();
      const names: string[] = [];
      for await (const d of it) names.push(d.name);
      expect(names).toEqual(['f.txt']);
      // and a new walk refuses the link
      expect(await codeOf(ws.openFile('swapdir/f.txt'))).toBe('PATH_ESCAPES_ROOT');
    } finally {
      await dir.close();
      unlinkSync(join(root, 'swapdir'));
      renameSync(join(root, 'swapdir.parked'), join(root, 'swapdir'));
      rmSync(join(root, 'swapdir'), { recursive: true });
    }
  });

  it('child names are single components: separators, `..`, `.` and NUL are refused', async () => {
    const dir = await ws.openRoot();
    try {
      for (const bad of ['', '.', '..', 'a/b', '../outside', 'x\0y']) {
        expect(codeOfSync(() => dir.at(bad))).toBe('INVALID_PATH');
      }
    } finally {
      await dir.close();
    }
  });

  it('isGitComponent matches `.git` as any file system may read it (case, trailing dots and spaces, 8.3 name) and nothing else', () => {
    for (const n of ['.git', '.GIT', '.Git', '.gIt', '.git.', '.git ', '.git. .', 'GIT~1', 'git~1']) expect(isGitComponent(n), n).toBe(true);
    for (const n of ['.gitignore', 'git', '.git2', '..git', 'x.git', 'git~2', '.git~1']) expect(isGitComponent(n), n).toBe(false);
  });
});

describe('the root is pinned', () => {
  it('a root renamed away, removed, or swapped for a link or another directory is refused on the next call', async () => {
    const t = tempTree('confine-root');
    try {
      const r = join(t.dir, 'ws');
      mkdirSync(r);
      writeFileSync(join(r, 'f.txt'), INSIDE);
      mkdirSync(join(t.dir, 'other'));
      writeFileSync(join(t.dir, 'other', 'f.txt'), SECRET);
      const w = await Workspace.open(r);
      expect((await readWindow(w, 'f.txt', 0, 100)).content).toBe(INSIDE);
      const swaps: [string, () => void, () => void][] = [
        ['renamed', () => renameSync(r, r + '.moved'), () => renameSync(r + '.moved', r)],
        ['link', () => (renameSync(r, r + '.moved'), symlinkSync(join(t.dir, 'other'), r)), () => (unlinkSync(r), renameSync(r + '.moved', r))],
        ['other dir', () => (renameSync(r, r + '.moved'), renameSync(join(t.dir, 'other'), r)), () => (renameSync(r, join(t.dir, 'other')), renameSync(r + '.moved', r))],
      ];
      for (const [, swap, restore] of swaps) {
        swap();
        for (const call of [() => readWindow(w, 'f.txt', 0, 100), () => w.openDir('.'), () => w.openRoot()]) expect(await codeOf(call())).toBe('ROOT_CHANGED');
        restore();
        expect((await readWindow(w, 'f.txt', 0, 100)).content).toBe(INSIDE);
      }
      await w.close();
    } finally {
      t.remove();
    }
  });
});

describe('the primitives seeding relies on (Linux semantics)', () => {
  it('O_EXCL never follows a link at the name, and link() never follows a link at the target', async () => {
    const victim = join(base, 'outside', 'victim.txt');
    writeFileSync(victim, SECRET);
    symlinkSync(victim, join(root, 'staged-link'));
    await expect(open(join(root, 'staged-link'), 'wx')).rejects.toMatchObject({ code: 'EEXIST' });
    writeFileSync(join(root, 'staged-real'), 'x');
    await expect(link(join(root, 'staged-real'), join(root, 'staged-link'))).rejects.toMatchObject({ code: 'EEXIST' });
    expect(readFileSync(victim, 'utf8')).toBe(SECRET);
    unlinkSync(join(root, 'staged-link'));
    unlinkSync(join(root, 'staged-real'));
  });
});

describe('opening has no side effects on what is not a regular file', () => {
  it('a FIFO with a blocked writer: refused as NOT_A_FILE and the writer stays blocked (never opened for reading)', async () => {
    const { spawn, spawnSync } = await import('node:child_process');
    const fifo = join(root, 'pipe');
    expect(spawnSync('mkfifo', [fifo]).status).toBe(0);
    const writer = spawn('sh', ['-c', `echo data > '${fifo}'`], { stdio: 'ignore' });
    try {
      await new Promise((r) => setTimeout(r, 100));
      for (let i = 0; i < 5; i++) {
        expect(await codeOf(ws.openFile('pipe'))).toBe('NOT_A_FILE');
        expect(await codeOf(readWindow(ws, 'pipe', 0, 10))).toBe('NOT_A_FILE');
      }
      await new Promise((r) => setTimeout(r, 200));
      expect(writer.exitCode).toBeNull(); // an open for reading would have released it
    } finally {
      writer.kill('SIGKILL');
      unlinkSync(fifo);
    }
  });
});
