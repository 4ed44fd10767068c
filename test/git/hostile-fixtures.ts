/**
 * Fixtures for the hostile-workspace git tests: a repository with one commit, a snapshot of a
 * repository's state (refs, HEAD, index and work tree status, stashes) to prove "no outside
 * effect", and every git operation of the tools run through the real functions, each reduced to
 * its outcome (`ok` or the error code).
 */
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Workspace, WorkspaceError } from '../../src/fs/confine.js';
import { CursorCodec } from '../../src/shared/cursor.js';
import { gitLog, gitRefs, gitStatus } from '../../src/git/git-reads.js';
import { gitMergeStatus, gitStashes } from '../../src/git/git-state.js';
import { gitCommit, gitCreateBranch, gitCreateTag } from '../../src/git/git-writes.js';
import { GitRunner, type GitRunnerOptions } from '../../src/git/run-git.js';
import { git } from '../helpers/git-repo.js';

const cursors = new CursorCodec('hostile-test-key');

/** A fresh temp directory (removed by `cleanup`). */
export function tempDir(prefix: string, dirs: string[]): string {
  const d = mkdtempSync(join(tmpdir(), `mcp-budget-hostile-${prefix}-`));
  dirs.push(d);
  return d;
}

export function cleanup(dirs: string[]): void {
  for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
}

/** `git init` in `dir` (created if needed) with one commit of `f.txt`. */
export function initRepo(dir: string): string {
  mkdirSync(dir, { recursive: true });
  git(dir, ['init', '-q', '-b', 'main']);
  writeFileSync(join(dir, 'f.txt'), 'one\n');
  git(dir, ['add', 'f.txt']);
  git(dir, ['commit', '-q', '-m', 'base']);
  return dir;
}

/** Everything a git tool could change in a repository, as one comparable string. */
export function repoState(dir: string): string {
  return [
    git(dir, ['for-each-ref', '--format=%(refname) %(objectname)']),
    git(dir, ['rev-parse', 'HEAD']),
    git(dir, ['status', '--porcelain=v1', '-uall', '--ignored']),
    git(dir, ['stash', 'list']),
  ].join('\n--\n');
}

export async function codeOf(p: Promise<unknown>): Promise<string> {
  try {
    await p;
    return 'ok';
  } catch (e) {
    return e instanceof WorkspaceError ? e.code : `thrown: ${String(e)}`;
  }
}

/** The nine git tools, run through the real functions on one runner scope each. */
export const OPERATIONS: readonly { tool: string; run: (g: GitRunner, ws: Workspace) => Promise<unknown> }[] = [
  { tool: 'git_log', run: (g, ws) => gitLog(g, ws, cursors, { limit: 5, cursor: undefined }) },
  { tool: 'git_log path', run: (g, ws) => gitLog(g, ws, cursors, { path: 'f.txt', limit: 5, cursor: undefined }) },
  { tool: 'git_status', run: (g) => gitStatus(g, cursors, { limit: 50, cursor: undefined }) },
  { tool: 'git_branches', run: (g) => gitRefs(g, cursors, 'heads', { limit: 5, cursor: undefined }) },
  { tool: 'git_tags', run: (g) => gitRefs(g, cursors, 'tags', { limit: 5, cursor: undefined }) },
  { tool: 'git_stashes', run: (g) => gitStashes(g, cursors, { limit: 5, cursor: undefined }) },
  { tool: 'git_merge_status', run: (g) => gitMergeStatus(g) },
  { tool: 'git_commit', run: (g, ws) => gitCommit(g, ws, { message: 'hostile', paths: ['f.txt'] }) },
  { tool: 'git_create_branch', run: (g) => gitCreateBranch(g, { name: 'hostile-branch' }) },
  { tool: 'git_create_tag', run: (g) => gitCreateTag(g, { name: 'hostile-tag', message: 'm' }) },
];

/** Outcome of every operation on the workspace at `root`: `{ tool: code }`. */
export async function runAll(root: string | Workspace, options: GitRunnerOptions & { modify?: boolean; only?: string[] } = {}): Promise<Record<string, string>> {
  const ws = typeof root === 'string' ? await Workspace.open(root) : root;
  const out: Record<string, string> = {};
  try {
    for (const op of OPERATIONS) {
      if (options.only !== undefined && !options.only.includes(op.tool)) continue;
      // The test (not the tool) changes f.txt so that a commit has something to record.
      if (op.tool === 'git_commit' && options.modify === true) writeFileSync(join(ws.root, 'f.txt'), `changed ${Date.now()}\n`);
      out[op.tool] = await codeOf(op.run(new GitRunner(ws, options).scope(), ws));
    }
  } finally {
    if (typeof root === 'string') await ws.close();
  }
  return out;
}

/** `{ tool: code }` with the same code for every operation. */
export function every(code: string): Record<string, string> {
  return Object.fromEntries(OPERATIONS.map((op) => [op.tool, code]));
}
