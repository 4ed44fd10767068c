/**
 * Repository state views, bounded: whether a merge, rebase, cherry-pick or revert is in progress
 * (with its conflict files, capped), and the stash list, paged (a `match` filter examines one
 * bounded candidate page per call). Both are sized to the page budget at the source (page-fit.ts):
 * the conflicts list stays within the item bound and the page size, paths and messages are cut
 * with an explicit flag, and cursors bind `match` by hash.
 */
import { stat } from 'node:fs/promises';
import { isAbsolute, join } from 'node:path';
import { WorkspaceError } from '../fs/confine.js';
import type { CursorCodec } from '../shared/cursor.js';
import { PageFill, UNBOUNDED_PAGE, bindKey, cutField, fieldBytes, itemRoom, meterOf, putField, type GitPageLimits } from './page-fit.js';
import type { GitRunner } from './run-git.js';

/** Conflict files listed by `git_merge_status` at most. */
export const MAX_CONFLICTS = 200;
/** Stash entries a `match` filter examines per call at most. */
export const STASH_CANDIDATES = 1000;

export interface MergeStatus {
  in_progress: 'merge' | 'rebase' | 'cherry-pick' | 'revert' | null;
  conflicts: string[];
  conflicts_capped: boolean;
  /** Some conflict paths were cut to fit the string bound. */
  conflict_paths_truncated?: true;
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

export async function gitMergeStatus(git: GitRunner, limits: GitPageLimits = UNBOUNDED_PAGE): Promise<MergeStatus> {
  let state: MergeStatus['in_progress'] = null;
  if ((await exists(git, 'rebase-merge')) || (await exists(git, 'rebase-apply'))) state = 'rebase';
  else if (await exists(git, 'MERGE_HEAD')) state = 'merge';
  else if (await exists(git, 'CHERRY_PICK_HEAD')) state = 'cherry-pick';
  else if (await exists(git, 'REVERT_HEAD')) state = 'revert';
  const out: MergeStatus = { in_progress: state, conflicts: [], conflicts_capped: false };
  const fixed = { ...out, in_progress: 'cherry-pick', conflicts_capped: true, conflict_paths_truncated: true };
  const fill = new PageFill<string>(itemRoom(limits, fixed), Math.min(MAX_CONFLICTS, limits.maxPageItems));
  const pathBytes = fieldBytes(limits, fill.room, [''], 1);
  for await (const rec of git.records(['diff', '--name-only', '--diff-filter=U', '--ignore-submodules=all', '-z'])) {
    if (rec === '') continue;
    const { value, cut } = cutField(rec, pathBytes, Infinity);
    if (!fill.offer(value)) {
      out.conflicts_capped = true;
      break;
    }
    if (cut) out.conflict_paths_truncated = true;
  }
  out.conflicts = fill.items;
  return out;
}

export interface StashEntry {
  ref: string;
  commit: string;
  /** The stash message (cut with `message_truncated`). */
  message: string;
  message_truncated?: true;
}

export interface StashPage {
  stashes: StashEntry[];
  has_more: boolean;
  next_cursor?: string;
  examined?: number;
}

export async function gitStashes(
  git: GitRunner,
  cursors: CursorCodec,
  args: { match?: string | undefined; limit: number; cursor: string | undefined; page?: GitPageLimits | undefined },
): Promise<StashPage> {
  const limits = args.page ?? UNBOUNDED_PAGE;
  const m = bindKey(args.match ?? null);
  let skip = 0;
  if (args.cursor !== undefined) {
    const c = cursors.decode('stash', args.cursor);
    if (c.m !== m) {
      throw new WorkspaceError('INVALID_CURSOR', 'Invalid params: `cursor` belongs to another `match`. Start again without a cursor.');
    }
    skip = Number(c.s);
    if (!Number.isSafeInteger(skip) || skip < 0) throw new WorkspaceError('INVALID_CURSOR', 'Invalid params: `cursor` is malformed. Start again without a cursor.');
  }
  const page: StashPage = { stashes: [], has_more: false };
  const hasStash = await git.tryRun(['rev-parse', '--verify', '--quiet', 'refs/stash']);
  if (hasStash.code !== 0) return page;
  const fixed = { ...page, has_more: true, next_cursor: cursors.encode('stash', { s: Number.MAX_SAFE_INTEGER, m }), examined: STASH_CANDIDATES };
  const fill = new PageFill<StashEntry>(itemRoom(limits, fixed), args.limit, meterOf(limits, fixed, 'stashes'));
  const messageBytes = fieldBytes(limits, fill.room, { ref: 'stash@{9999999}', commit: 'f'.repeat(64), message: '', message_truncated: true }, 1);
  const budget = args.match === undefined ? args.limit + 1 : STASH_CANDIDATES + 1;
  let index = skip;
  let examined = 0;
  let resume = skip;
  let f: string[] = [];
  // Three NUL-separated fields per entry: a message may hold any other character.
  for await (const rec of git.records(['log', '--walk-reflogs', `--skip=${skip}`, `--max-count=${budget}`, '--format=%gd%x00%H%x00%gs', '-z', 'refs/stash', '--'])) {
    f.push(rec);
    if (f.length < 3) continue;
    const [ref = '', commit = '', message = ''] = f;
    f = [];
    if (args.match !== undefined) {
      if (examined === STASH_CANDIDATES) {
        page.has_more = true;
        break;
      }
      examined++;
    }
    if (args.match === undefined || message.includes(args.match)) {
      if (!fill.offer(putField({ ref, commit, message: '' }, 'message', message, messageBytes))) {
        page.has_more = true;
        break;
      }
    }
    index++;
    resume = index;
  }
  page.stashes = fill.items;
  if (args.match !== undefined) page.examined = examined;
  if (page.has_more) page.next_cursor = cursors.encode('stash', { s: resume, m });
  return page;
}
