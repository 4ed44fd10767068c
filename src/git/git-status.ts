/**
 * Status pages: tracked changes first (`git status --porcelain=v2`, untracked scanning off), then
 * the untracked files, stopped at the page. Sized to the page budget at the source: paths cut
 * with `path_truncated`, the page stopped before its JSON passes the page size.
 */
import { WorkspaceError } from '../fs/confine.js';
import type { CursorCodec } from '../fs/cursor.js';
import { PageFill, UNBOUNDED_PAGE, fieldBytes, itemRoom, putField, type GitPageLimits } from './page-fit.js';
import type { GitRunner } from './run-git.js';

export interface StatusEntry {
  path: string;
  /** Porcelain v2 XY (staged, unstaged) for tracked changes; `??` for untracked. */
  status: string;
  kind: 'tracked' | 'conflict' | 'untracked';
  path_truncated?: true;
}

export interface StatusPage {
  entries: StatusEntry[];
  has_more: boolean;
  next_cursor?: string;
}

/** Untracked listing: a separate call, capped in time. */
const UNTRACKED_TIMEOUT_MS = 5000;

export interface StatusArgs {
  limit: number;
  cursor: string | undefined;
  /** What one page may hold. @default UNBOUNDED_PAGE */
  page?: GitPageLimits | undefined;
}

export async function gitStatus(git: GitRunner, cursors: CursorCodec, args: StatusArgs): Promise<StatusPage> {
  const limits = args.page ?? UNBOUNDED_PAGE;
  let skip = 0;
  if (args.cursor !== undefined) {
    skip = Number(cursors.decode('status', args.cursor).s);
    if (!Number.isSafeInteger(skip) || skip < 0) throw new WorkspaceError('INVALID_CURSOR', 'Invalid params: `cursor` is malformed. Start again without a cursor.');
  }
  const page: StatusPage = { entries: [], has_more: false };
  const fixed = { ...page, has_more: true, next_cursor: cursors.encode('status', { s: Number.MAX_SAFE_INTEGER }) };
  const fill = new PageFill<StatusEntry>(itemRoom(limits, fixed), args.limit);
  const pathBytes = fieldBytes(limits, fill.room, { path: '', status: 'XY', kind: 'untracked', path_truncated: true }, 1);
  let seen = 0;
  const take = (path: string, status: string, kind: StatusEntry['kind']): boolean => {
    if (seen++ < skip) return true;
    if (!fill.offer(putField({ path: '', status, kind }, 'path', path, pathBytes, Infinity))) {
      page.has_more = true;
      return false;
    }
    return true;
  };
  // Tracked changes with untracked scanning off (never a full-tree untracked scan here).
  let full = false;
  for await (const rec of git.records(['status', '--porcelain=v2', '-z', '--untracked-files=no', '--no-renames', '--ignore-submodules=all'])) {
    const r = rec.replace(/^\n/, '');
    if (r.startsWith('1 ') || r.startsWith('u ')) {
      const parts = r.split(' ');
      const path = parts.slice(r.startsWith('1 ') ? 8 : 10).join(' ');
      if (!take(path, parts[1]!, r.startsWith('u ') ? 'conflict' : 'tracked')) {
        full = true;
        break;
      }
    }
  }
  if (!full) {
    for await (const rec of git.records(['ls-files', '--others', '--exclude-standard', '-z'], UNTRACKED_TIMEOUT_MS)) {
      if (rec === '') continue;
      if (!take(rec, '??', 'untracked')) break;
    }
  }
  page.entries = fill.items;
  if (page.has_more) page.next_cursor = cursors.encode('status', { s: skip + fill.items.length });
  return page;
}
