/**
 * The untracked listing (src/git/untracked.ts) gives exactly `git ls-files --others
 * --exclude-standard`, page after page, on the shapes that matter: ignore rules inside wholly
 * untracked directories (files and directories), a nested repository (listed as its directory),
 * symbolic links (listed, never followed), FIFOs (skipped), odd names, and nesting; and on
 * generated trees (many small untracked directories, ignore files at every level, nested
 * repositories, `.git` as a gitfile, a link or an empty directory, files beside directories,
 * tracked and untracked mixed); names that are not UTF-8; the listing's memory and time bounds, with the number of git calls a first page makes.
 */
import { execFileSync } from 'node:child_process';
import { mkdirSync, readdirSync, symlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import fc from 'fast-check';
import { afterAll, describe, expect, it } from 'vitest';
import { Workspace } from '../../src/fs/confine.js';
import { CursorCodec } from '../../src/shared/cursor.js';
import { gitStatus } from '../../src/git/git-reads.js';
import { untrackedPaths } from '../../src/git/untracked.js';
import { GitRunner } from '../../src/git/run-git.js';
import { git, tempRepo, type TempRepo, workspaceTracker } from '../helpers/git-repo.js';
import { timeBox } from '../helpers/time-box.js';

const cursors = new CursorCodec('untracked-test');
const repos: TempRepo[] = [];
const workspaces = workspaceTracker();
const openWorkspace = workspaces.open;
afterAll(async () => {
  await workspaces.closeAll();
  repos.forEach((r) => r.remove());
});

describe('untracked listing', () => {
  it('equals ls-files --others --exclude-standard at every page size', async () => {
    const r = tempRepo('untracked');
    repos.push(r);
    const d = r.dir;
    writeFileSync(join(d, 'tracked.txt'), 'x');
    mkdirSync(join(d, 'src'));
    writeFileSync(join(d, 'src', 'kept.ts'), 'x');
    writeFileSync(join(d, '.gitignore'), '*.log\nbuild/\n');
    git(d, ['add', '.']);
    git(d, ['commit', '-q', '-m', 'base']);
    writeFileSync(join(d, 'src', 'new.ts'), '');
    writeFileSync(join(d, 'src', 'noise.log'), '');
    mkdirSync(join(d, 'out', 'build', 'x'), { recursive: true });
    mkdirSync(join(d, 'out', 'a-b'), { recursive: true });
    mkdirSync(join(d, 'out', 'a', 'b'), { recursive: true });
    mkdirSync(join(d, 'out', 'empty'));
    for (const f of ['out/build/x/hidden', 'out/a-b/1', 'out/a/b/2', 'out/a0', 'out/q"\u0001ü😀', 'out/skip.log', 'out/inner-ignored/.gitignore', 'out/inner-ignored/t.tmp', 'out/inner-ignored/k']) {
      mkdirSync(join(d, f, '..'), { recursive: true });
      writeFileSync(join(d, f), f.endsWith('.gitignore') ? '*.tmp\n' : '');
    }
    mkdirSync(join(d, 'nested'));
    git(join(d, 'nested'), ['init', '-q']);
    writeFileSync(join(d, 'nested', 'inside'), '');
    symlinkSync('/etc', join(d, 'out', 'link-out'));
    execFileSync('mkfifo', [join(d, 'out', 'fifo')]);
    const want = git(d, ['ls-files', '--others', '--exclude-standard', '-z']).split('\0').filter((s) => s !== '');
    expect(want).toContain('nested/');
    expect(want).toContain('out/link-out');
    const g = new GitRunner(await openWorkspace(d));
    for (const limit of [1, 2, 3, 100]) {
      const got: string[] = [];
      let cursor: string | undefined;
      for (let i = 0; i < 100; i++) {
        const p = await gitStatus(g.scope(), cursors, { limit, cursor });
        got.push(...p.entries.filter((e) => e.kind === 'untracked').map((e) => e.path));
        cursor = p.next_cursor;
        if (cursor === undefined) break;
      }
      expect(got, `limit ${limit}`).toEqual(want);
    }
  });

  it('generated trees: every page walk equals ls-files at page sizes from 1 to 7', async () => {
    const name = fc.constantFrom('a', 'b', 'a-b', 'a.b', 'B', 'z', 'x.log', 'keep.tmp', 'd0', 'é');
    type Tree = { [k: string]: Tree | 'file' | 'ignore' | 'repo' | 'gitfile' | 'gitlink' | 'fakegit' };
    const tree: fc.Arbitrary<Tree> = fc.letrec<{ t: Tree }>((tie) => ({
      t: fc.dictionary(name, fc.oneof({ depthSize: 'small', withCrossShrink: true }, fc.constant('file' as const), fc.constant('ignore' as const), fc.constant('repo' as const), fc.constantFrom('gitfile' as const, 'gitlink' as const, 'fakegit' as const), tie('t')), { maxKeys: 5 }),
    })).t;
    const r = tempRepo('untracked-gen');
    repos.push(r);
    mkdirSync(join(r.dir, 'other'));
    git(join(r.dir, 'other'), ['init', '-q']);
    let run = 0;
    await fc.assert(
      fc.asyncProperty(tree, fc.array(fc.integer({ min: 1, max: 7 }), { minLength: 1, maxLength: 2 }), fc.boolean(), async (t, limits, trackSome) => {
        const d = join(r.dir, `run-${run++}`);
        mkdirSync(d);
        git(d, ['init', '-q']);
        const write = (dir: string, node: Tree): void => {
          for (const [k, v] of Object.entries(node)) {
            const p = join(dir, k);
            if (v === 'file') writeFileSync(p, '');
            else if (v === 'ignore') writeFileSync(join(dir, '.gitignore'), `*.log\n${k}\n`);
            else if (v === 'repo') {
              // A nested repository: git lists its directory, never its files.
              mkdirSync(p);
              git(p, ['init', '-q']);
              writeFileSync(join(p, 'inside'), '');
            } else if (v === 'gitfile' || v === 'gitlink' || v === 'fakegit') {
              // A `.git` that is a gitfile or a link to a real repository (git: a nested
              // repository), or an empty directory (git: not one, its files are listed).
              mkdirSync(p);
              writeFileSync(join(p, 'inside'), '');
              if (v === 'gitfile') writeFileSync(join(p, '.git'), `gitdir: ${join(r.dir, 'other', '.git')}\n`);
              else if (v === 'gitlink') symlinkSync(join(r.dir, 'other', '.git'), join(p, '.git'));
              else mkdirSync(join(p, '.git'));
            }
            else {
              mkdirSync(p);
              write(p, v);
            }
          }
        };
        write(d, t);
        writeFileSync(join(d, 'root.txt'), '');
        git(d, ['add', 'root.txt']);
        if (trackSome) git(d, ['add', '-f', '--', ...Object.keys(t).filter((k) => t[k] === 'file').slice(0, 1)]);
        git(d, ['commit', '-q', '-m', 'base']);
        const want = git(d, ['ls-files', '--others', '--exclude-standard', '-z']).split('\0').filter((x) => x !== '');
        const ws = await Workspace.open(d);
        const g = new GitRunner(ws);
        try {
          for (const limit of limits) {
            const got: string[] = [];
            let cursor: string | undefined;
            for (let i = 0; i < 200; i++) {
              const p = await gitStatus(g.scope(), cursors, { limit, cursor });
              got.push(...p.entries.filter((e) => e.kind === 'untracked').map((e) => e.path));
              cursor = p.next_cursor;
              if (cursor === undefined) break;
            }
            expect(got, `limit ${limit}`).toEqual(want);
          }
        } finally {
          await ws.close();
        }
      }),
      timeBox(40, 8000),
    );
  });

  it('forty small untracked directories: a first page of 100 makes a few git calls, not one per directory', async () => {
    const r = tempRepo('untracked-small-dirs');
    repos.push(r);
    const d = r.dir;
    writeFileSync(join(d, 'tracked.txt'), 'x');
    git(d, ['add', '.']);
    git(d, ['commit', '-q', '-m', 'base']);
    for (let i = 0; i < 40; i++) {
      mkdirSync(join(d, `dir${String(i).padStart(2, '0')}`));
      for (let j = 0; j < 5; j++) writeFileSync(join(d, `dir${String(i).padStart(2, '0')}`, `f${j}`), '');
    }
    const want = git(d, ['ls-files', '--others', '--exclude-standard', '-z']).split('\0').filter((x) => x !== '').slice(0, 100);
    const g = new GitRunner(await openWorkspace(d));
    const scope = g.scope();
    let calls = 0;
    const run = scope.run.bind(scope);
    scope.run = ((...a: Parameters<typeof run>) => {
      calls++;
      return run(...a);
    }) as typeof run;
    const p = await gitStatus(scope, cursors, { limit: 100, cursor: undefined });
    expect(p.entries.filter((e) => e.kind === 'untracked').map((e) => e.path)).toEqual(want);
    // 40 directories checked in one batch (the listing itself and status are other calls).
    expect(calls).toBeLessThanOrEqual(4);
  });

  it('names that are not UTF-8: a directory is never opened by another name; inside untracked directories they are skipped with a warning', async () => {
    const r = tempRepo('untracked-bytes');
    repos.push(r);
    const d = r.dir;
    writeFileSync(join(d, 'tracked.txt'), 'x');
    git(d, ['add', '.']);
    git(d, ['commit', '-q', '-m', 'base']);
    const bad = Buffer.concat([Buffer.from(d + '/a'), Buffer.from([0xff])]);
    mkdirSync(bad);
    writeFileSync(Buffer.concat([bad, Buffer.from('/hidden-in-ff')]), '');
    writeFileSync(Buffer.concat([Buffer.from(d + '/file'), Buffer.from([0xfe])]), '');
    mkdirSync(join(d, 'a\uFFFD'));
    writeFileSync(join(d, 'a\uFFFD', 'decoy'), '');
    mkdirSync(join(d, 'inner'));
    writeFileSync(join(d, 'inner', 'ok'), '');
    writeFileSync(Buffer.concat([Buffer.from(d + '/inner/x'), Buffer.from([0xff])]), '');
    const ws = await Workspace.open(d);
    try {
      const p = await gitStatus(new GitRunner(ws).scope(), cursors, { limit: 100, cursor: undefined });
      // `a\xff/` is not opened as `a\uFFFD/` (its file is not listed twice as the decoy's); a file
      // git lists itself is shown as text, as tracked changes are.
      expect(p.entries.map((e) => e.path)).toEqual(['a\uFFFD/decoy', 'file\uFFFD', 'inner/ok']);
      expect(p.warning).toMatch(/not UTF-8/);
    } finally {
      await ws.close();
    }
  });

  it('bounds: names held over the byte budget are cut with a warning, depth costs nothing, and the deadline ends the call with a clear error', async () => {
    const r = tempRepo('untracked-bounds');
    repos.push(r);
    const d = r.dir;
    writeFileSync(join(d, 'tracked.txt'), 'x');
    git(d, ['add', '.']);
    git(d, ['commit', '-q', '-m', 'base']);
    // A chain of long names, then a level of 600 files with 200-byte names (about 160 KiB held).
    let deep = d;
    for (let i = 0; i < 12; i++) {
      deep = join(deep, `${String(i).padStart(3, '0')}${'n'.repeat(200)}`);
      mkdirSync(deep);
    }
    for (let i = 0; i < 600; i++) writeFileSync(join(deep, `${String(i).padStart(4, '0')}${'f'.repeat(196)}`), '');
    const ws = await Workspace.open(d);
    const g = new GitRunner(ws);
    try {
      const all: string[] = [];
      const warnings: string[] = [];
      for await (const p of untrackedPaths(g.scope(), Buffer.alloc(0), (w) => warnings.push(w), false, 1000)) all.push(p);
      expect(all).toHaveLength(600);
      expect(warnings).toEqual([]);
      // 64 KiB of names at once: the deep chain costs ~3 KiB; the last level is cut, and says so.
      const cut: string[] = [];
      const cutWarnings: string[] = [];
      for await (const p of untrackedPaths(g.scope(), Buffer.alloc(0), (w) => cutWarnings.push(w), false, 1000, { maxHeldNameBytes: 64 * 1024 })) cut.push(p);
      expect(cut.length).toBeGreaterThan(100);
      expect(cut.length).toBeLessThan(600);
      // A part of the level (in directory order), shown in git's order.
      expect(cut.every((x) => all.includes(x))).toBe(true);
      expect([...cut].sort((a, b) => Buffer.compare(Buffer.from(a), Buffer.from(b)))).toEqual(cut);
      expect(cutWarnings.join(' ')).toMatch(/more names than one listing may hold/);
      // A deadline already spent: a clear error, not a short listing.
      const late = async (): Promise<void> => {
        for await (const _ of untrackedPaths(g.scope(), Buffer.alloc(0), () => undefined, false, 1000, { timeoutMs: 1 })) {
          await new Promise((res) => setTimeout(res, 5));
        }
      };
      await expect(late()).rejects.toThrow(/took longer than 1 ms/);
    } finally {
      await ws.close();
    }
  });

  it('bounds: a listing ended by its deadline inside a directory level closes every descriptor it opened', async () => {
    const r = tempRepo('untracked-deadline-fds');
    repos.push(r);
    const d = r.dir;
    writeFileSync(join(d, 'tracked.txt'), 'x');
    git(d, ['add', '.']);
    git(d, ['commit', '-q', '-m', 'base']);
    for (const dir of ['a', 'b']) {
      mkdirSync(join(d, dir));
      for (let i = 0; i < 2100; i++) writeFileSync(join(d, dir, `f${i}`), '');
    }
    const ws = await Workspace.open(d);
    const g = new GitRunner(ws);
    const fds = (): number => readdirSync('/proc/self/fd').length;
    try {
      const before = fds();
      for (let i = 0; i < 20; i++) {
        const run = async (): Promise<void> => {
          // The deadline passes while the first level is read (checked every 1,024 entries).
          for await (const _ of untrackedPaths(g.scope(), Buffer.alloc(0), () => undefined, false, 1000, { timeoutMs: 1 })) void _;
        };
        await expect(run()).rejects.toThrow(/took longer than 1 ms/);
      }
      expect(fds()).toBeLessThanOrEqual(before);
    } finally {
      await ws.close();
    }
  });
});
