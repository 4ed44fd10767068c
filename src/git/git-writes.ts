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

/** Caps of the git mutations; the inventory quotes them. */
export const GIT_WRITE_LIMITS = Object.freeze({
  maxMessageBytes: 16 * 1024,
  maxMessageLines: 200,
  maxPaths: 100,
  maxRefNameBytes: 255,
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
  commit: string;
  branch: string | null;
  files_changed: number;
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
  // --no-verify: no hooks; the message comes on stdin, never as an argument.
  const commitArgs = ['commit', '--no-verify', '--no-edit', '--quiet', '--allow-empty', '-F', '-'];
  if (paths !== undefined) commitArgs.push('--', ...paths);
  await git.run([...(await identityArgs(git)), ...commitArgs], { input: message });
  const hash = (await git.run(['rev-parse', 'HEAD'])).stdout.toString('utf8').trim();
  const branch = await git.tryRun(['symbolic-ref', '--quiet', '--short', 'HEAD']);
  const stat = await git.run(['diff-tree', '--no-commit-id', '--name-only', '-r', '-z', '--root', hash], { maxBytes: 1024 * 1024 });
  const files = stat.stdout.toString('utf8').split('\0').filter((x) => x !== '').length;
  return { commit: hash, branch: branch.code === 0 ? branch.stdout.toString('utf8').trim() : null, files_changed: files };
}

export async function gitCreateBranch(git: GitRunner, args: { name: string; start_point?: string | undefined }): Promise<{ branch: string; commit: string }> {
  const name = await checkRefName(git, args.name, 'branch');
  const start = await resolveCommit(git, 'start_point', args.start_point ?? 'HEAD');
  await git.requireWritable();
  await git.run(['branch', '--end-of-options', name, start]);
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
  if (args.message !== undefined) {
    const message = checkMessage('message', args.message);
    await git.run([...(await identityArgs(git)), 'tag', '--no-sign', '-a', '-F', '-', '--end-of-options', name, target], { input: message });
  } else {
    await git.run(['tag', '--no-sign', '--end-of-options', name, target]);
  }
  return { tag: name, commit: target, annotated: args.message !== undefined };
}
