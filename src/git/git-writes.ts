/**
 * Validated git mutations. Every input is checked before git runs: message size in bytes and
 * lines, ref names by git's own rules (`git check-ref-format`, which reads nothing of the
 * repository), path lists in count and confinement. No user value can be read as an option (a
 * leading `-` is refused, and values follow `--end-of-options` or `--`; pathspecs are literal).
 * Hooks never run. No path may name anything under a `.git` component, in any case: nothing a
 * tool writes lands in a git directory. Before writing, the repository's write checks run
 * (`requireWritable`: no hard-linked file that git writes in place).
 */
import type { Workspace } from '../fs/confine.js';
import { WorkspaceError } from '../fs/errors.js';
import { checkNotOption, type GitRunner } from './run-git.js';
import { BudgetError } from '../engine/index.js';

/** Caps of the git mutations; the inventory quotes them. */
export const GIT_WRITE_LIMITS = Object.freeze({
  maxMessageBytes: 16 * 1024,
  maxMessageLines: 200,
  maxPaths: 100,
  maxRefNameBytes: 255,
});

/** Bounds of what a mutation reads back after its write (never caps on its input). */
export const GIT_SUMMARY_LIMITS = Object.freeze({
  /** Files a commit's summary counts at most (the count stops there, marked so). */
  maxCountedFiles: 100_000,
});

/** `.git` in any case, and the spellings other file systems fold to it (`.git.`, `.git `, `git~1`). */
const GIT_COMPONENT = /^(\.git[. ]*|git~\d+)$/i;

/** A commit path: confined, literal, and never under a `.git` component. */
export function checkCommitPath(ws: Workspace, p: unknown): string {
  if (typeof p !== 'string') throw new WorkspaceError('INVALID_PARAMS', 'Invalid params: every entry of `paths` must be a string');
  const parts = ws.segments(p);
  if (parts.some((s) => GIT_COMPONENT.test(s))) {
    throw new WorkspaceError('INVALID_PATH', `\`paths\` may not name anything inside a \`.git\` directory, got ${JSON.stringify(p.slice(0, 200))}`);
  }
  return parts.join('/') || '.';
}

function tooLarge(what: string, cap: number, value: number): WorkspaceError {
  return new WorkspaceError('INPUT_TOO_LARGE', `${what}: the cap is ${cap}, got ${value}; git was not run.`, { cap, value });
}

export function checkMessage(name: string, message: unknown): string {
  if (typeof message !== 'string' || message.trim() === '') {
    throw new WorkspaceError('INVALID_PARAMS', `Invalid params: \`${name}\` must be a non-empty string`);
  }
  const bytes = Buffer.byteLength(message);
  if (bytes > GIT_WRITE_LIMITS.maxMessageBytes) throw tooLarge(`\`${name}\` in bytes`, GIT_WRITE_LIMITS.maxMessageBytes, bytes);
  const lines = message.split('\n').length;
  if (lines > GIT_WRITE_LIMITS.maxMessageLines) throw tooLarge(`\`${name}\` in lines`, GIT_WRITE_LIMITS.maxMessageLines, lines);
  if (message.includes('\0')) throw new WorkspaceError('INVALID_PARAMS', `Invalid params: \`${name}\` contains a NUL byte`);
  return message;
}

/** A branch or tag name valid by git's ref-name rules. */
export async function checkRefName(git: GitRunner, name: string, kind: 'branch' | 'tag'): Promise<string> {
  checkNotOption('name', name);
  const bytes = Buffer.byteLength(name);
  if (bytes > GIT_WRITE_LIMITS.maxRefNameBytes) throw tooLarge('`name` in bytes', GIT_WRITE_LIMITS.maxRefNameBytes, bytes);
  const full = kind === 'branch' ? `refs/heads/${name}` : `refs/tags/${name}`;
  const r = await git.tryRun(['check-ref-format', full]);
  if (r.code !== 0 || name === 'HEAD') {
    throw new WorkspaceError('INVALID_PARAMS', `Invalid params: ${JSON.stringify(name)} is not a valid ${kind} name (git check-ref-format)`);
  }
  return name;
}

async function resolveCommit(git: GitRunner, name: string, rev: string): Promise<string> {
  checkNotOption(name, rev);
  const r = await git.tryRun(['rev-parse', '--verify', '--quiet', '--end-of-options', `${rev}^{commit}`]);
  if (r.code !== 0) throw new WorkspaceError('NOT_FOUND', `\`${name}\` ${JSON.stringify(rev)} does not name a commit`);
  return r.stdout.toString('utf8').trim();
}

/** The repository's identity when it has one; otherwise a neutral one for this commit or tag. */
async function identityArgs(git: GitRunner): Promise<string[]> {
  const identity = await git.tryRun(['config', 'user.email']);
  return identity.code === 0 ? [] : ['-c', 'user.name=mcp-budget', '-c', 'user.email=mcp-budget@localhost'];
}

export interface CommitReceipt {
  /** The new commit; null only when it was made but could not be read back (see `summary_omitted`). */
  commit: string | null;
  branch: string | null;
  /** Files the commit changed; null when counting them failed after the commit was made. */
  files_changed: number | null;
  /** Present when a step after the write failed: what is missing and why. The write itself stands. */
  summary_omitted?: string;
}

/** The commit `rev` names, or null (an unborn branch, a missing ref). Never throws for a missing one. */
async function commitOf(git: GitRunner, rev: string): Promise<string | null> {
  const r = await git.tryRun(['rev-parse', '--verify', '--quiet', '--end-of-options', `${rev}^{commit}`]);
  return r.code === 0 ? r.stdout.toString('utf8').trim() : null;
}

/**
 * The outcome of a write whose git process did not report success, decided by what the
 * repository now holds (`landed`: the write's effect, read back): applied (git failed after it
 * wrote), not applied (the original failure, with "nothing was written"), or unknown when it
 * cannot be read back (an `OUTCOME_UNKNOWN` failure naming what is known; never advice to retry).
 */
async function outcomeOf<T>(what: string, failure: unknown, landed: () => Promise<T | undefined>, known: Record<string, unknown>): Promise<T> {
  let effect: T | undefined;
  try {
    effect = await landed();
  } catch {
    throw new WorkspaceError(
      'OUTCOME_UNKNOWN',
      `${what} was started but did not finish (${reason(failure)}), and the repository could not be read to tell whether it took effect. ` +
        'It may have been applied: check with git_log, git_branches or git_tags before doing it again.',
      { applied: 'unknown', ...known },
    );
  }
  if (effect !== undefined) return effect;
  if (failure instanceof BudgetError) throw new WorkspaceError(failure.code, `${failure.message}; nothing was written.`, failure.data);
  throw failure;
}

const reason = (e: unknown): string => (e instanceof Error ? e.message : String(e));

/**
 * The steps after a commit only describe it: each may fail (a read error, a summary past its cap)
 * without turning the commit into a failure; what they could not say is null and named.
 */
async function describeCommit(git: GitRunner, hash: string | null): Promise<CommitReceipt> {
  const omitted: string[] = [];
  let commit = hash;
  if (commit === null) {
    try {
      commit = await commitOf(git, 'HEAD');
    } catch (e) {
      omitted.push(`commit id (${reason(e)})`);
    }
  }
  let branch: string | null = null;
  try {
    const b = await git.tryRun(['symbolic-ref', '--quiet', '--short', 'HEAD']);
    branch = b.code === 0 ? b.stdout.toString('utf8').trim() : null;
  } catch (e) {
    omitted.push(`branch (${reason(e)})`);
  }
  let files: number | null = null;
  if (commit !== null) {
    try {
      // Counted as git streams the names, never held: a commit of any size has a count.
      let n = 0;
      for await (const name of git.rawRecords(['diff-tree', '--no-commit-id', '--name-only', '-r', '-z', '--root', commit])) {
        if (name.length > 0 && ++n >= GIT_SUMMARY_LIMITS.maxCountedFiles) break;
      }
      files = n;
      if (n >= GIT_SUMMARY_LIMITS.maxCountedFiles) omitted.push(`files_changed counted up to ${GIT_SUMMARY_LIMITS.maxCountedFiles} (at least that many)`);
    } catch (e) {
      omitted.push(`files_changed (${reason(e)})`);
    }
  }
  const receipt: CommitReceipt = { commit, branch, files_changed: files };
  if (omitted.length > 0) receipt.summary_omitted = `The commit was made; not read back: ${omitted.join('; ')}.`;
  return receipt;
}

export async function gitCommit(git: GitRunner, ws: Workspace, args: { message: unknown; paths?: unknown }): Promise<CommitReceipt> {
  const message = checkMessage('message', args.message);
  let paths: string[] | undefined;
  if (args.paths !== undefined) {
    if (!Array.isArray(args.paths) || args.paths.length === 0) {
      throw new WorkspaceError('INVALID_PARAMS', 'Invalid params: `paths` must be a non-empty array of paths');
    }
    if (args.paths.length > GIT_WRITE_LIMITS.maxPaths) throw tooLarge('`paths` count', GIT_WRITE_LIMITS.maxPaths, args.paths.length);
    paths = args.paths.map((p: unknown) => checkCommitPath(ws, p));
  }
  await git.requireWritable();
  if (paths !== undefined) {
    await git.run(['add', '--', ...paths]);
  }
  // Nothing to commit is decided here, on the index alone: git commit's own check ends in a status
  // that may start a git in a nested repository (under that repository's config). git is then told
  // to commit regardless (--allow-empty), so that path is never taken. A merge may conclude with
  // no change.
  const merging = (await git.tryRun(['rev-parse', '--verify', '--quiet', 'MERGE_HEAD'])).code === 0;
  if (!merging) {
    const staged = await git.tryRun(['diff', '--cached', '--quiet', '--no-ext-diff', '--no-textconv', '--', ...(paths ?? [])]);
    if (staged.code === 0) {
      throw new WorkspaceError(
        'INVALID_PARAMS',
        paths === undefined
          ? 'Nothing to commit: no change is staged. Name the changed files in `paths`, or stage them first.'
          : 'Nothing to commit: the named `paths` do not differ from HEAD.',
      );
    }
    if (staged.code !== 1) throw new WorkspaceError('IO_ERROR', `git diff --cached failed (exit ${staged.code ?? 'signal'}); nothing was committed.`);
  }
  const before = await commitOf(git, 'HEAD');
  // --no-verify: no hooks; the message comes on stdin, never as an argument.
  const commitArgs = ['commit', '--no-verify', '--no-edit', '--quiet', '--allow-empty', '-F', '-'];
  if (paths !== undefined) commitArgs.push('--', ...paths);
  const identity = await identityArgs(git);
  // From here the write decides the answer: git's success, or (when git did not report it) whether
  // HEAD now is a new commit on top of the one before.
  let hash: string | null = null;
  try {
    await git.run([...identity, ...commitArgs], { input: message });
  } catch (failure) {
    hash = await outcomeOf(
      'The commit',
      failure,
      async () => {
        const now = await commitOf(git, 'HEAD');
        if (now === null || now === before) return undefined;
        const parent = await commitOf(git, `${now}~1`);
        return parent === before ? now : undefined;
      },
      { before },
    );
  }
  return describeCommit(git, hash);
}

export async function gitCreateBranch(git: GitRunner, args: { name: string; start_point?: string | undefined }): Promise<{ branch: string; commit: string }> {
  const name = await checkRefName(git, args.name, 'branch');
  const start = await resolveCommit(git, 'start_point', args.start_point ?? 'HEAD');
  await git.requireWritable();
  try {
    await git.run(['branch', '--end-of-options', name, start]);
  } catch (failure) {
    // Already there before (git refused it): not this call's write, so the failure stands.
    await outcomeOf('Creating the branch', failure, async () => ((await commitOf(git, `refs/heads/${name}`)) === start && !isExists(failure) ? true : undefined), { branch: name, commit: start });
  }
  return { branch: name, commit: start };
}

export async function gitCreateTag(
  git: GitRunner,
  args: { name: string; target?: string | undefined; message?: string | undefined },
): Promise<{ tag: string; commit: string; annotated: boolean }> {
  const name = await checkRefName(git, args.name, 'tag');
  const target = await resolveCommit(git, 'target', args.target ?? 'HEAD');
  if (args.message !== undefined) checkMessage('message', args.message);
  await git.requireWritable();
  try {
    if (args.message !== undefined) {
      const message = checkMessage('message', args.message);
      await git.run([...(await identityArgs(git)), 'tag', '--no-sign', '-a', '-F', '-', '--end-of-options', name, target], { input: message });
    } else {
      await git.run(['tag', '--no-sign', '--end-of-options', name, target]);
    }
  } catch (failure) {
    await outcomeOf('Creating the tag', failure, async () => ((await commitOf(git, `refs/tags/${name}`)) === target && !isExists(failure) ? true : undefined), { tag: name, commit: target });
  }
  return { tag: name, commit: target, annotated: args.message !== undefined };
}

/** git refused because the ref already existed: the ref found afterwards is not this call's. */
const isExists = (failure: unknown): boolean => failure instanceof BudgetError && /already exists/.test(failure.message);
