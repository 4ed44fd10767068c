/**
 * Repository state views, bounded: whether a merge, rebase, cherry-pick or revert is in progress
 * (with its conflict files, capped), and the stash list, paged (a `match` filter examines one
 * bounded candidate page per call).
 */
import { stat } from 'node:fs/promises';
import { isAbsolute, join } from 'node:path';
import { WorkspaceError } from '../fs/confine.js';
import type { CursorCodec } from '../fs/cursor.js';
import type { GitRunner } from './run-git.js';

/** Conflict files listed by `git_merge_status` at most. */
export const MAX_CONFLICTS = 200;
/** Stash entries a `match` filter examines per call at most. */
export const STASH_CANDIDATES = 1000;

export interface MergeStatus {
  in_progress: 'merge' | 'rebase' | 'cherry-pick' | 'revert' | null;
  conflicts: string[];
  conflicts_capped: boolean;
}

async function exists(git: GitRunner, name: string): Promise<boolean> {
  const p = (await git.run(['rev-parse', '--git-path', name])).stdout.toString('utf8').trim();
  try {
    await stat(isAbsolute(p) ? p : join(git.workTree, p));
    return true;
  } catch {
    return false;
  }
}

export async function gitMergeStatus(git: GitRunner): Promise<MergeStatus> {
  let state: MergeStatus['in_progress'] = null;
  if ((await exists(git, 'rebase-merge')) || (await exists(git, 'rebase-apply'))) state = 'rebase';
  else if (await exists(git, 'MERGE_HEAD')) state = 'merge';
  else if (await exists(git, 'CHERRY_PICK_HEAD')) state = 'cherry-pick';
  else if (await exists(git, 'REVERT_HEAD')) state = 'revert';
  const out: MergeStatus = { in_progress: state, conflicts: [], conflicts_capped: false };
  for await (const rec of git.records(['diff', '--name-only', '--diff-filter=U', '-z'])) {
    if (rec === '') continue;
    if (out.conflicts.length === MAX_CONFLICTS) {
      out.conflicts_capped = true;
      break;
    }
    out.conflicts.push(rec);
  }
  return out;
}

export interface StashPage {
  stashes: { ref: string; commit: string; message: string }[];
  has_more: boolean;
  next_cursor?: string;
  examined?: number;
}

export async function gitStashes(
  git: GitRunner,
  cursors: CursorCodec,
  args: { match?: string | undefined; limit: number; cursor: string | undefined },
): Promise<StashPage> {
  let skip = 0;
  if (args.cursor !== undefined) {
    const c = cursors.decode('stash', args.cursor);
    if ((c.m ?? null) !== (args.match ?? null)) {
      throw new WorkspaceError('INVALID_CURSOR', 'Invalid params: `cursor` belongs to another `match`. Start again without a cursor.');
    }
    skip = Number(c.s);
  }
  const page: StashPage = { stashes: [], has_more: false };
  const hasStash = await git.tryRun(['rev-parse', '--verify', '--quiet', 'refs/stash']);
  if (hasStash.code !== 0) return page;
  const budget = args.match === undefined ? args.limit + 1 : STASH_CANDIDATES + 1;
  let index = skip;
  let examined = 0;
  let resume = skip;
  for await (const rec of git.records(['log', '--walk-reflogs', `--skip=${skip}`, `--max-count=${budget}`, '--format=%gd%x1f%H%x1f%gs', '-z', 'refs/stash', '--'])) {
    const [ref = '', commit = '', message = ''] = rec.replace(/^\n/, '').split('\x1f');
    if (args.match !== undefined) {
      if (examined === STASH_CANDIDATES) {
        page.has_more = true;
        break;
      }
      examined++;
    }
    if (args.match === undefined || message.includes(args.match)) {
      if (page.stashes.length === args.limit) {
        page.has_more = true;
        break;
      }
      page.stashes.push({ ref, commit, message: message.length > 200 ? message.slice(0, 199) + '…' : message });
    }
    index++;
    resume = index;
  }
  if (args.match !== undefined) page.examined = examined;
  if (page.has_more) page.next_cursor = cursors.encode('stash', { s: resume, m: args.match ?? null });
  return page;
}
