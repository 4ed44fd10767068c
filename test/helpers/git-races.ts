/**
 * Race loops against the git tools, shared by the suite (seconds) and `bench/git-races.bench.ts`
 * (a minute each): while something rewrites what git could read as a program source, commit,
 * status and log keep running; every program the hostile content names would drop a marker file
 * outside the repository, so a marker is a program run.
 *
 * - `configSwapLoop`: a swapper process exchanges `.git/config` with a hostile copy (every program
 *   key git honours, hooks under `core.hooksPath`, signing on) thousands of times a second, and a
 *   second one exchanges an included file with a copy holding a filter driver, while the real tool
 *   functions run in this process;
 * - `serveFlipLoop`: only `mcp-budget serve`'s own tools act: `workspace_seed_files` rewrites work
 *   tree files the config names (an include target, attributes and ignore files, a hooks
 *   directory, `.gitattributes` naming drivers) between clean and hostile, concurrently with
 *   `git_commit`, `git_status` and `git_log` on the same server.
 */
import { chmodSync, mkdirSync, readdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { Workspace, WorkspaceError } from '../../src/fs/confine.js';
import { CursorCodec } from '../../src/shared/cursor.js';
import { gitLog, gitStatus } from '../../src/git/git-reads.js';
import { gitCommit } from '../../src/git/git-writes.js';
import { GitRunner } from '../../src/git/run-git.js';
import { git } from './git-repo.js';
import { connectClient, serveTransport } from './mcp-stdio.js';
import { exchanger, startSwapper } from './swapper.js';

export interface RaceStats {
  /** Tool calls answered, by outcome (`ok` or the error code). */
  outcomes: Record<string, number>;
  /** Calls that threw something other than a coded tool error, or never answered. */
  failures: string[];
  /** Marker files: each is a program git ran. */
  programRuns: number;
  /** Their names (which program ran). */
  ran?: string[];
  /** Exchanges or rewrites of the hostile content done meanwhile. */
  flips: number;
  ms: number;
}

/** A program git would run: drops `markers/<name>` (and passes stdin through, for filters). */
const prog = (markers: string, name: string): string => `touch '${join(markers, name)}'; cat`;
const q = (s: string): string => `"${s.replace(/\\/g, '\\\\').replace(/"/g, '\\"')}"`;

/** Every program key git honours, with hooks; no filter (so calls under it can succeed). */
export function hostileConfig(markers: string, hooks: string, extra = ''): string {
  const p = (n: string): string => q(prog(markers, n));
  return `[core]
\trepositoryformatversion = 0
\tfilemode = true
\tbare = false
\tfsmonitor = ${p('fsmonitor')}
\thooksPath = ${q(hooks)}
\tpager = ${p('pager')}
\teditor = ${p('editor')}
\taskPass = ${p('askpass')}
\tsshCommand = ${p('ssh')}
\talternateRefsCommand = ${p('alternate-refs')}
[sequence]
\teditor = ${p('sequence-editor')}
[diff]
\texternal = ${p('diff-external')}
[diff "evil"]
\ttextconv = ${p('textconv')}
\tcommand = ${p('diff-command')}
[merge "evil"]
\tdriver = ${p('merge-driver')}
[credential]
\thelper = ${p('credential')}
[gpg]
\tprogram = ${p('gpg')}
[gpg "ssh"]
\tdefaultKeyCommand = ${p('gpg-ssh-key')}
[commit]
\tgpgSign = true
[tag]
\tgpgSign = true
\tforceSignAnnotated = true
[log]
\tshowSignature = true
[uploadpack]
\tpackObjectsHook = ${p('pack-objects')}
[interactive]
\tdiffFilter = ${p('diff-filter')}
[pager]
\tlog = ${p('pager-log')}
\tstatus = ${p('pager-status')}
${extra}`;
}

/** A filter driver: the key with no program-free default (its presence refuses the call). */
export function filterConfig(markers: string): string {
  return `[filter "evil"]\n\tclean = ${q(prog(markers, 'filter-clean'))}\n\tsmudge = ${q(prog(markers, 'filter-smudge'))}\n\tprocess = ${q(prog(markers, 'filter-process'))}\n`;
}

/** Executable hooks in `dir`, each dropping its marker. */
export function plantHooks(dir: string, markers: string): void {
  mkdirSync(dir, { recursive: true });
  for (const hook of ['pre-commit', 'prepare-commit-msg', 'commit-msg', 'post-commit', 'reference-transaction', 'post-index-change', 'pre-auto-gc', 'post-checkout']) {
    writeFileSync(join(dir, hook), `#!/bin/sh\ntouch '${join(markers, `hook-${hook}`)}'\n`);
    chmodSync(join(dir, hook), 0o755);
  }
}

export const countMarkers = (markers: string): number => readdirSync(markers).length;

function tally(stats: RaceStats, outcome: string): void {
  stats.outcomes[outcome] = (stats.outcomes[outcome] ?? 0) + 1;
}

/**
 * `.git/config` exchanged with a hostile copy, and an include target inside `.git` exchanged with a
 * filter driver, while commit, status and log run through the real functions. `root` is a
 * repository with `f.txt` committed; `markers` an empty directory outside it.
 */
export async function configSwapLoop(root: string, markers: string, work: string, ms: number): Promise<RaceStats> {
  const swap = exchanger(work);
  if (swap === undefined) throw new Error('no renameat2 exchanger on this machine (cc or python3 needed)');
  const gitDir = join(root, '.git');
  writeFileSync(join(root, '.gitattributes'), '* filter=evil diff=evil merge=evil\n');
  git(root, ['add', '.gitattributes']);
  git(root, ['commit', '-q', '-m', 'attributes']);
  // planted after the fixture's own (plain) commit, which would run them
  plantHooks(join(gitDir, 'hooks'), markers);
  plantHooks(join(work, 'hooks'), markers);
  writeFileSync(join(gitDir, 'evil.inc'), '');
  writeFileSync(join(gitDir, 'evil.inc.hostile'), filterConfig(markers));
  writeFileSync(join(gitDir, 'config.hostile'), hostileConfig(markers, join(work, 'hooks'), '[include]\n\tpath = evil.inc\n'));
  const stats: RaceStats = { outcomes: {}, failures: [], programRuns: 0, flips: 0, ms };
  const ws = await Workspace.open(root);
  const cursors = new CursorCodec('race-key');
  const a = await startSwapper(swap, join(gitDir, 'config'), join(gitDir, 'config.hostile'), ms);
  const b = await startSwapper(swap, join(gitDir, 'evil.inc'), join(gitDir, 'evil.inc.hostile'), ms);
  const t0 = Date.now();
  try {
    let n = 0;
    while (Date.now() - t0 < ms) {
      writeFileSync(join(root, 'f.txt'), `change ${n++}\n`);
      for (const run of [
        () => gitCommit(new GitRunner(ws).scope(), ws, { message: `race ${n}`, paths: ['f.txt'] }),
        () => gitStatus(new GitRunner(ws).scope(), cursors, { limit: 20, cursor: undefined }),
        () => gitLog(new GitRunner(ws).scope(), ws, cursors, { limit: 5, cursor: undefined }),
      ]) {
        try {
          await run();
          tally(stats, 'ok');
        } catch (e) {
          if (e instanceof WorkspaceError) tally(stats, e.code);
          else stats.failures.push(String(e));
        }
      }
    }
  } finally {
    stats.flips = (await a.done) + (await b.done);
    await ws.close();
  }
  stats.ms = Date.now() - t0;
  stats.programRuns = countMarkers(markers);
  stats.ran = readdirSync(markers);
  return stats;
}

export type FlipKind = 'include-target' | 'attributes';

/**
 * Only the server's own tools: a flipper rewrites work tree files between clean and hostile with
 * `workspace_seed_files` while commit, status and log run on the same `serve`.
 *
 * - `include-target`: the config includes a work tree file (`../inc.cfg`) that the flipper turns
 *   into a filter driver and back;
 * - `attributes`: the config names work tree files as hooks, attributes and ignore files and
 *   defines drivers; the flipper rewrites `.gitattributes` to name them, a hooks directory, and
 *   those files.
 */
export async function serveFlipLoop(root: string, markers: string, kind: FlipKind, ms: number): Promise<RaceStats> {
  const hostileExtra =
    kind === 'include-target'
      ? '[include]\n\tpath = ../inc.cfg\n'
      : `[core]\n\tattributesFile = attrs\n\texcludesFile = excl\n[mailmap]\n\tfile = mm\n`;
  writeFileSync(join(root, '.git', 'config'), hostileConfig(markers, '.hooks', hostileExtra));
  const stats: RaceStats = { outcomes: {}, failures: [], programRuns: 0, flips: 0, ms };
  const { client, close } = await connectClient(serveTransport(root));
  const hook = `#!/bin/sh\ntouch '${join(markers, 'worktree-hook')}'\n`;
  const hostileFiles = [
    { path: 'inc.cfg', content: filterConfig(markers) },
    { path: '.gitattributes', content: '* filter=evil diff=evil merge=evil\n' },
    { path: 'attrs', content: '* filter=evil diff=evil merge=evil\n' },
    { path: 'excl', content: 'f.txt\n' },
    { path: '.hooks/pre-commit', content: hook },
    { path: '.hooks/post-commit', content: hook },
  ];
  const cleanFiles = hostileFiles.map((f) => ({ path: f.path, content: f.path === '.gitattributes' ? '' : '# clean\n' }));
  const t0 = Date.now();
  const answer = async (name: string, args: Record<string, unknown>): Promise<void> => {
    const r = (await client.callTool({ name, arguments: args }, undefined, { timeout: 30_000 })) as { isError?: boolean; content?: { text?: string }[] };
    tally(stats, r.isError === true ? (r.content?.[0]?.text ?? '').split(':')[0]! : 'ok');
  };
  const flipper = (async () => {
    for (let i = 0; Date.now() - t0 < ms; i++) {
      const r = (await client.callTool({ name: 'workspace_seed_files', arguments: { files: i % 2 === 0 ? hostileFiles : cleanFiles, overwrite: true } })) as { isError?: boolean };
      if (r.isError === true) stats.failures.push('seed refused');
      stats.flips++;
    }
  })();
  const caller = (async () => {
    for (let n = 0; Date.now() - t0 < ms; n++) {
      await client.callTool({ name: 'workspace_seed_files', arguments: { files: [{ path: 'f.txt', content: `change ${n}\n` }], overwrite: true } });
      await answer('git_commit', { message: `race ${n}`, paths: ['f.txt'] });
      await answer('git_status', {});
      await answer('git_log', { limit: 5 });
    }
  })();
  try {
    await Promise.all([flipper, caller]);
  } catch (e) {
    stats.failures.push(String(e));
  } finally {
    await close().catch(() => undefined);
  }
  stats.ms = Date.now() - t0;
  stats.programRuns = countMarkers(markers);
  stats.ran = readdirSync(markers);
  return stats;
}
