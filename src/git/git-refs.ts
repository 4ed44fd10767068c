/**
 * Branch and tag pages: refs in name order (git's byte order), a page resuming after the last
 * name it covered. With `match`, one bounded candidate page is examined per call and the cursor
 * continues the scan (a page may hold no match). Sized to the page budget at the source: names
 * cut with `name_truncated`, the page stopped before its JSON passes the page size, and the
 * cursor bounded (a resume name by prefix and hash, `match` by hash).
 */
import { WorkspaceError } from '../fs/confine.js';
import type { CursorCodec } from '../shared/cursor.js';
import { ANCHOR_BYTES, AnchorSkip, PageFill, UNBOUNDED_PAGE, anchorFrom, anchorOf, bindKey, fieldBytes, itemRoom, meterOf, putField, type Anchor, type GitPageLimits } from './page-fit.js';
import { refsFromFiles, type RefRecord } from './ref-store.js';
import type { GitRunner } from './run-git.js';

/** Refs a name filter examines per call at most. */
export const REF_CANDIDATES = 1000;
/** A page's warning is cut to this many characters. */
const WARNING_CHARS = 100;

export interface RefEntry {
  /** The name below `refs/heads/` or `refs/tags/` (cut with `name_truncated`). */
  name: string;
  /** The object the ref names (for an annotated tag, the tag object). */
  target: string;
  name_truncated?: true;
}

export interface RefPage {
  refs: RefEntry[];
  has_more: boolean;
  next_cursor?: string;
  /** With `match`: refs examined by this call (bounded). */
  examined?: number;
  /** Why refs were skipped (the first reason, cut), when any were: a malformed name or value. */
  warning?: string;
  /** Refs skipped this call because their name or value is malformed. */
  skipped?: number;
}

export interface RefArgs {
  match?: string | undefined;
  limit: number;
  cursor: string | undefined;
  /** What one page may hold. @default UNBOUNDED_PAGE */
  page?: GitPageLimits | undefined;
  /** Read through `git for-each-ref` only, never the files (benchmarks compare the two). @default false */
  plainGit?: boolean | undefined;
}

/** The plain listing: `git for-each-ref`, which reads and sorts every ref before its first line. */
async function* refsFromGit(git: GitRunner, prefix: string): AsyncGenerator<RefRecord> {
  let name: string | undefined;
  for await (const rec of git.records(['for-each-ref', '--format=%(refname)%00%(objectname)%00', prefix])) {
    const value = rec.replace(/^\n/, '');
    if (name === undefined) {
      name = value;
      continue;
    }
    if (name !== '') yield { name, target: value };
    name = undefined;
  }
}

export async function gitRefs(git: GitRunner, cursors: CursorCodec, kind: 'heads' | 'tags', args: RefArgs): Promise<RefPage> {
  const limits = args.page ?? UNBOUNDED_PAGE;
  const prefix = `refs/${kind}/`;
  const tool = `refs:${kind}`;
  const m = bindKey(args.match ?? null);
  let anchor: Anchor | undefined;
  if (args.cursor !== undefined) {
    const c = cursors.decode(tool, args.cursor);
    if (c.m !== m) {
      throw new WorkspaceError('INVALID_CURSOR', 'Invalid params: `cursor` belongs to another `match`. Start again without a cursor.');
    }
    anchor = anchorFrom(c);
  }
  const page: RefPage = { refs: [], has_more: false };
  const encode = (name: string): string => cursors.encode(tool, { ...anchorOf(name), m });
  let warning: string | undefined;
  let skipped = 0;
  const warn = (w: string): void => {
    warning ??= w.slice(0, WARNING_CHARS);
    skipped++;
  };
  const fixed = {
    ...page,
    has_more: true,
    next_cursor: cursors.encode(tool, { ...anchorOf('x'.repeat(ANCHOR_BYTES + 1)), m }),
    examined: REF_CANDIDATES,
    warning: 'w'.repeat(WARNING_CHARS),
    skipped: Number.MAX_SAFE_INTEGER,
  };
  const fill = new PageFill<RefEntry>(itemRoom(limits, fixed), args.limit, meterOf(limits, fixed, 'refs'));
  const nameBytes = fieldBytes(limits, fill.room, { name: '', target: 'f'.repeat(64), name_truncated: true }, 1);
  const skip = new AnchorSkip(anchor);
  let examined = 0;
  let last: string | undefined;
  const source = (args.plainGit === true ? undefined : await refsFromFiles(git, prefix, anchor, warn)) ?? refsFromGit(git, prefix);
  for await (const { name, target } of source) {
    if (!skip.after(name)) continue;
    const short = name.slice(prefix.length);
    if (args.match !== undefined) {
      if (examined === REF_CANDIDATES) {
        page.has_more = true;
        break;
      }
      examined++;
      if (!short.includes(args.match)) {
        last = name;
        continue;
      }
    }
    if (!fill.offer(putField({ name: '', target }, 'name', short, nameBytes, Infinity))) {
      page.has_more = true;
      break;
    }
    last = name;
  }
  page.refs = fill.items;
  if (args.match !== undefined) page.examined = examined;
  if (warning !== undefined) {
    page.warning = warning;
    page.skipped = skipped;
  }
  // The cursor resumes after the last name this call covered: the last ref returned, or with a
  // filter the last candidate examined (the page may hold zero matches).
  if (page.has_more && last !== undefined) page.next_cursor = encode(last);
  return page;
}
