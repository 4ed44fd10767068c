/**
 * Status pages: tracked changes first (`git status --porcelain=v2`, untracked scanning off; it
 * compares the index with the work tree, O(tracked files) by nature), then the untracked files
 * (untracked.ts), stopped at the page. Sized to the page budget at the source: paths cut with
 * `path_truncated`, the page stopped before its JSON passes the page size.
 */
import { WorkspaceError } from '../fs/confine.js';
import type { CursorCodec } from '../shared/cursor.js';
import { ANCHOR_BYTES, AnchorSkip, PageFill, UNBOUNDED_PAGE, anchorFrom, anchorOf, fieldBytes, itemRoom, meterOf, putField, type Anchor, type GitPageLimits } from './page-fit.js';
import type { GitRunner } from './run-git.js';
import { untrackedPaths } from './untracked.js';

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
  /** Why some untracked files could not be listed (the first reason), when any. */
  warning?: string;
}

/** A page's warning is cut to this many characters. */
const WARNING_CHARS = 100;

export interface StatusArgs {
  limit: number;
  cursor: string | undefined;
  /** What one page may hold. @default UNBOUNDED_PAGE */
  page?: GitPageLimits | undefined;
  /** List untracked files with one plain `ls-files --others` (benchmarks compare the two). @default false */
  plainGit?: boolean | undefined;
}

const malformed = (): WorkspaceError => new WorkspaceError('INVALID_CURSOR', 'Invalid params: `cursor` is malformed. Start again without a cursor.');

/**
 * Where a page starts: in the tracked changes by position (`s`), or in the untracked files after a
 * path (an anchor), so that later untracked pages neither re-run the tracked comparison nor walk
 * the untracked files before them.
 */
function startOf(cursors: CursorCodec, cursor: string | undefined): { skip: number; after: Anchor | undefined; untracked: boolean } {
  if (cursor === undefined) return { skip: 0, after: undefined, untracked: false };
  const c = cursors.decode('status', cursor);
  if (c.u === 1) return { skip: 0, after: anchorFrom(c), untracked: true };
  const skip = Number(c.s);
  if (!Number.isSafeInteger(skip) || skip < 0) throw malformed();
  return { skip, after: undefined, untracked: false };
}

export async function gitStatus(git: GitRunner, cursors: CursorCodec, args: StatusArgs): Promise<StatusPage> {
  const limits = args.page ?? UNBOUNDED_PAGE;
  const { skip, after, untracked } = startOf(cursors, args.cursor);
  const page: StatusPage = { entries: [], has_more: false };
  const fixed = {
    ...page,
    has_more: true,
    next_cursor: cursors.encode('status', { u: 1, ...anchorOf('x'.repeat(ANCHOR_BYTES + 1)) }),
    warning: 'w'.repeat(WARNING_CHARS),
  };
  const fill = new PageFill<StatusEntry>(itemRoom(limits, fixed), args.limit, meterOf(limits, fixed, 'entries'));
  const pathBytes = fieldBytes(limits, fill.room, { path: '', status: 'XY', kind: 'untracked', path_truncated: true }, 1);
  const offer = (path: string, status: string, kind: StatusEntry['kind']): boolean =>
    fill.offer(putField({ path: '', status, kind }, 'path', path, pathBytes, Infinity));
  let seen = 0;
  let next: Record<string, unknown> | undefined;
  if (!untracked) {
    // Tracked changes with untracked scanning off (never a full-tree untracked scan here).
    for await (const rec of git.records(['status', '--porcelain=v2', '-z', '--untracked-files=no', '--no-renames', '--ignore-submodules=all'])) {
      const r = rec.replace(/^\n/, '');
      if (!r.startsWith('1 ') && !r.startsWith('u ')) continue;
      if (seen++ < skip) continue;
      const parts = r.split(' ');
      if (!offer(parts.slice(r.startsWith('1 ') ? 8 : 10).join(' '), parts[1]!, r.startsWith('u ') ? 'conflict' : 'tracked')) {
        next = { s: skip + fill.items.length };
        break;
      }
    }
  }
  let warning: string | undefined;
  if (next === undefined) {
    const skipper = new AnchorSkip(after);
    const from = after === undefined ? Buffer.alloc(0) : Buffer.from(after.a, 'base64url');
    let last: string | undefined;
    for await (const path of untrackedPaths(git, from, (w) => (warning ??= w.slice(0, WARNING_CHARS)), args.plainGit === true, args.limit + 1)) {
      if (!skipper.after(path)) continue;
      if (!offer(path, '??', 'untracked')) {
        // Resume after the last untracked path shown, or at the first one when the page ended on tracked changes.
        next = last === undefined ? { s: skip + fill.items.length } : { u: 1, ...anchorOf(last) };
        break;
      }
      last = path;
    }
  }
  page.entries = fill.items;
  if (warning !== undefined) page.warning = warning;
  if (next !== undefined) {
    page.has_more = true;
    page.next_cursor = cursors.encode('status', next);
  }
  return page;
}
