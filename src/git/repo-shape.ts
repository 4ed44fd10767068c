/**
 * Which repository the git tools may serve: the one whose work tree is the workspace root itself
 * and whose git directory is the root's own `.git`, a real directory. Checked on every call,
 * before git runs:
 *
 * - no `.git` in the root: `NOT_A_REPOSITORY` (a repository that merely contains the root is never
 *   used: git would act on files outside the root);
 * - `.git` a symlink or a gitfile (linked worktree, submodule), a `commondir`, alternates, or a
 *   symlink, FIFO or device where git reads or writes inside `.git`: `UNSAFE_REPOSITORY` (each
 *   lets git read or write outside the root);
 * - for mutations also hard-linked files that git appends to or rewrites in place (reflogs,
 *   `COMMIT_EDITMSG`): a write through them would land in a file outside the root.
 *
 * Messages name paths relative to the root only.
 */
import { lstat, opendir, readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { WorkspaceError } from '../fs/errors.js';
import type { RepoPaths } from './git-env.js';

/** Entries of `.git` examined per call at most (refs, reflogs, packs; loose objects are not walked). */
export const MAX_GIT_DIR_ENTRIES = 50_000;

/** Directories of `.git` git reads or writes in the commands the tools run; walked whole. */
const WALKED = new Set(['refs', 'logs', 'info', 'objects', 'worktrees', 'rebase-merge', 'rebase-apply', 'sequencer']);
/** Loose object fan-out directories: checked to be directories, their files not listed. */
const FANOUT = /^[0-9a-f]{2}$/;

function unsafe(message: string, path?: string): WorkspaceError {
  return new WorkspaceError('UNSAFE_REPOSITORY', message, path === undefined ? {} : { path });
}

interface Walk {
  gitDir: string;
  forWrite: boolean;
  seen: number;
}

/** Refuse an entry git could follow out of the root, or block on. */
function checkEntry(rel: string, kind: { isSymbolicLink(): boolean; isDirectory(): boolean; isFile(): boolean }): void {
  if (kind.isSymbolicLink()) {
    throw unsafe(`\`${rel}\` is a symbolic link; git could read or write outside the workspace through it. Replace it with a real file or directory.`, rel);
  }
  if (!kind.isDirectory() && !kind.isFile()) {
    throw unsafe(`\`${rel}\` is not a regular file or directory (a FIFO, socket or device); git could block on it. Remove it.`, rel);
  }
}

async function walk(w: Walk, rel: string, depth: number): Promise<void> {
  const dir = await opendir(join(w.gitDir, rel), { bufferSize: 256 });
  for await (const d of dir) {
    if (++w.seen > MAX_GIT_DIR_ENTRIES) {
      throw unsafe(
        `\`.git\` holds more than ${MAX_GIT_DIR_ENTRIES} refs, reflogs or packs to verify; run \`git pack-refs --all\` and \`git gc\` to pack them.`,
      );
    }
    const child = `${rel}/${d.name}`;
    checkEntry(`.git/${child}`, d);
    if (d.isDirectory()) {
      if (rel === 'objects' && FANOUT.test(d.name)) continue;
      if (depth > 64) throw unsafe(`\`.git/${rel}\` nests too deep to verify.`);
      await walk(w, child, depth + 1);
    } else if (w.forWrite && rel.split('/')[0] === 'logs') {
      await checkNotLinked(w.gitDir, child);
    }
  }
}

/** A file git appends to or rewrites in place must not be shared with a file outside. */
async function checkNotLinked(gitDir: string, rel: string): Promise<void> {
  const st = await lstat(join(gitDir, rel)).catch(() => undefined);
  if (st !== undefined && st.isFile() && st.nlink > 1) {
    throw unsafe(`\`.git/${rel}\` is hard-linked to another file; git writes it in place and would change that file too. Copy it to break the link.`, `.git/${rel}`);
  }
}

/** Largest `alternates` file read whole; a larger one is refused unread (git reads all of it). */
const MAX_ALTERNATES_BYTES = 65536;

/** `objects/info/alternates` makes git read objects from other directories: refused. */
async function checkAlternates(gitDir: string): Promise<void> {
  const file = join(gitDir, 'objects', 'info', 'alternates');
  const st = await lstat(file).catch(() => undefined);
  if (st === undefined) return;
  let text = '';
  // A file too big to read whole cannot be shown harmless: refuse it like one that names a directory.
  if (!st.isFile() || st.size > MAX_ALTERNATES_BYTES) text = 'refused';
  else {
    try {
      text = (await readFile(file)).toString('utf8');
    } catch {
      text = 'refused'; // unreadable: fail closed
    }
  }
  if (text.split('\n').some((l) => l.trim() !== '' && !l.startsWith('#'))) {
    throw unsafe(
      '`.git/objects/info/alternates` makes git read objects from another directory; the git tools serve self-contained repositories only. Run `git repack -a -d` and remove the file.',
      '.git/objects/info/alternates',
    );
  }
}

/**
 * Check the root's repository and return the paths git is told. `forWrite` adds the checks that
 * matter only when git writes (hard links).
 */
export async function checkRepository(root: string, forWrite: boolean): Promise<RepoPaths> {
  const gitDir = join(root, '.git');
  let st;
  try {
    st = await lstat(gitDir);
  } catch {
    throw new WorkspaceError(
      'NOT_A_REPOSITORY',
      'The workspace root is not a git repository of its own (no `.git` in the root); a repository that merely contains the root is never used. Run `git init` in the root, or start the server on the repository\'s top directory.',
    );
  }
  if (st.isSymbolicLink()) {
    throw unsafe('`.git` in the workspace root is a symbolic link; git would act on a repository elsewhere. Use a real `.git` directory.', '.git');
  }
  if (st.isFile()) {
    throw unsafe(
      '`.git` in the workspace root is a file that points git at another git directory (a linked worktree or a submodule); the git tools serve only a repository whose `.git` directory is in the root. Start the server on the main work tree.',
      '.git',
    );
  }
  if (!st.isDirectory()) throw unsafe('`.git` in the workspace root is not a directory.', '.git');
  const w: Walk = { gitDir, forWrite, seen: 0 };
  let head = false;
  const top = await opendir(gitDir, { bufferSize: 256 });
  for await (const d of top) {
    w.seen++;
    const rel = `.git/${d.name}`;
    if (d.name === 'commondir') {
      throw unsafe('`.git/commondir` shares another repository\'s objects and refs; the git tools serve self-contained repositories only.', rel);
    }
    if (d.name === 'hooks' || d.name === 'modules' || d.name === 'lfs') {
      // Hooks never run (core.hooksPath is overridden); submodule and LFS stores are not read.
      if (d.isSymbolicLink()) continue;
    }
    checkEntry(rel, d);
    if (d.name === 'HEAD') head = d.isFile();
    if (d.isDirectory() && WALKED.has(d.name)) await walk(w, d.name, 1);
    else if (forWrite && d.isFile()) await checkNotLinked(gitDir, d.name);
  }
  if (!head) {
    throw new WorkspaceError('NOT_A_REPOSITORY', 'The workspace root\'s `.git` has no `HEAD`; it is not a git repository. Run `git init` in the root.');
  }
  await checkAlternates(gitDir);
  return { workTree: root, gitDir };
}
