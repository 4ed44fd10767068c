/**
 * Bounded git log: one page plus one is read and git stopped. Pages go by position from a commit
 * fixed on the first page; with a path filter each call walks a bounded window of history and
 * says `has_more` with a cursor that continues the walk. Every page is sized to the page budget at
 * the source (page-fit.ts): it stops before its JSON passes the page size, free-text fields are
 * cut here with `<field>_truncated`, and parents stay within the item bound. Ref lists
 * (git-refs.ts) and status (git-status.ts) are re-exported here.
 */
import { WorkspaceError, type Workspace } from '../fs/confine.js';
import type { CursorCodec } from '../shared/cursor.js';
import { MAX_ECHO_BYTES, PageFill, UNBOUNDED_PAGE, bindKey, fieldBytes, itemRoom, meterOf, putField, type GitPageLimits } from './page-fit.js';
import { checkNotOption, type GitRunner } from './run-git.js';

export { REF_CANDIDATES, gitRefs, type RefEntry, type RefPage } from './git-refs.js';
export { gitStatus, type StatusEntry, type StatusPage } from './git-status.js';

/** Commits a path-filtered log examines per call at most. */
export const LOG_WALK_WINDOW = 2000;
/** Parents listed per commit at most (an octopus merge says `parents_truncated`). */
export const MAX_PARENTS = 16;

export interface Commit {
  hash: string;
  parents: string[];
  author: string;
  email: string;
  date: string;
  subject: string;
  parents_truncated?: true;
  author_truncated?: true;
  email_truncated?: true;
  subject_truncated?: true;
}

/** Six NUL-separated fields per commit (none can hold a NUL), the free-text ones last. */
const LOG_FORMAT = '--format=%H%x00%P%x00%aI%x00%an%x00%ae%x00%s';
const LOG_FIELDS = 6;
const OID = /^(?:[0-9a-f]{40}|[0-9a-f]{64})$/;

/** How one commit is shaped on a page: caps derived from the page budget. */
interface CommitShape {
  parents: number;
  fieldBytes: number;
}

function commitShape(limits: GitPageLimits, room: number): CommitShape {
  const oid = 'f'.repeat(64);
  // Parents take at most a quarter of the room (a merge keeps both at every supported limit).
  const parents = Math.max(1, Math.min(limits.maxPageItems, MAX_PARENTS, Math.floor(room / 4 / (oid.length + 3))));
  const template: Commit = {
    hash: oid,
    parents: Array.from({ length: parents }, () => oid),
    author: '',
    email: '',
    date: '+000000-00-00T00:00:00+00:00',
    subject: '',
    parents_truncated: true,
    author_truncated: true,
    email_truncated: true,
    subject_truncated: true,
  };
  return { parents, fieldBytes: fieldBytes(limits, room, template, 3) };
}

function commitOf(f: string[], shape: CommitShape): Commit {
  const [hash = '', parents = '', date = '', author = '', email = '', subject = ''] = f;
  if (!OID.test(hash)) throw new WorkspaceError('IO_ERROR', 'git log printed a record this tool does not understand');
  const all = parents === '' ? [] : parents.split(' ');
  const c: Commit = { hash, parents: all.slice(0, shape.parents), author: '', email: '', date, subject: '' };
  if (all.length > shape.parents) c.parents_truncated = true;
  putField(c, 'author', author, shape.fieldBytes);
  putField(c, 'email', email, shape.fieldBytes);
  putField(c, 'subject', subject, shape.fieldBytes);
  return c;
}

/** Commits from a `-z` stream of {@link LOG_FORMAT} records. */
async function* commits(recs: AsyncIterable<string>, shape: CommitShape): AsyncGenerator<Commit> {
  let f: string[] = [];
  for await (const rec of recs) {
    f.push(rec);
    if (f.length === LOG_FIELDS) {
      yield commitOf(f, shape);
      f = [];
    }
  }
}

async function resolveCommit(git: GitRunner, ref: string): Promise<string | undefined> {
  checkNotOption('ref', ref);
  const r = await git.tryRun(['rev-parse', '--verify', '--quiet', '--end-of-options', `${ref}^{commit}`]);
  if (r.code !== 0) {
    if (ref === 'HEAD') return undefined; // an empty repository: no commits yet
    throw new WorkspaceError('NOT_FOUND', `\`ref\` ${JSON.stringify(ref.slice(0, 200))} does not name a commit`);
  }
  return r.stdout.toString('utf8').trim();
}

export interface LogPage {
  /** The ref asked for (cut to a few hundred bytes with `ref_truncated`). */
  ref: string;
  ref_truncated?: true;
  path?: string;
  path_truncated?: true;
  commits: Commit[];
  has_more: boolean;
  next_cursor?: string;
  /** With a path filter: commits of history examined by this call (bounded). */
  examined?: number;
}

export interface LogArgs {
  ref?: string | undefined;
  path?: string | undefined;
  limit: number;
  cursor: string | undefined;
  /** What one page may hold. @default UNBOUNDED_PAGE */
  page?: GitPageLimits | undefined;
}

export async function gitLog(git: GitRunner, ws: Workspace, cursors: CursorCodec, args: LogArgs): Promise<LogPage> {
  const limits = args.page ?? UNBOUNDED_PAGE;
  const ref = args.ref ?? 'HEAD';
  const path = args.path === undefined ? undefined : ws.segments(args.path).join('/') || '.';
  // Bound by hash: the cursor's length does not grow with the ref or the path.
  const key = bindKey(ref, path ?? null);
  let start: string | undefined;
  let skip = 0;
  if (args.cursor !== undefined) {
    const c = cursors.decode('log', args.cursor);
    if (c.k !== key) {
      throw new WorkspaceError('INVALID_CURSOR', 'Invalid params: `cursor` belongs to another ref or path. Start again without a cursor.');
    }
    start = String(c.h);
    skip = Number(c.s);
    if (!OID.test(start) || !Number.isSafeInteger(skip) || skip < 0) throw new WorkspaceError('INVALID_CURSOR', 'Invalid params: `cursor` is malformed. Start again without a cursor.');
  } else {
    start = await resolveCommit(git, ref);
  }
  const echo = Math.min(MAX_ECHO_BYTES, limits.maxPageStringBytes);
  const page: LogPage = putField({ ref: '', commits: [], has_more: false }, 'ref', ref, echo, Infinity);
  if (path !== undefined) putField(page, 'path', path, echo, Infinity);
  if (start === undefined) return page;
  const next = (s: number): string => cursors.encode('log', { k: key, h: start, s });
  const fixed = { ...page, has_more: true, next_cursor: cursors.encode('log', { k: key, h: 'f'.repeat(64), s: Number.MAX_SAFE_INTEGER }), examined: LOG_WALK_WINDOW };
  const fill = new PageFill<Commit>(itemRoom(limits, fixed), args.limit, meterOf(limits, fixed, 'commits'));
  const shape = commitShape(limits, fill.room);
  if (path === undefined) {
    const recs = git.records(['log', '--no-color', `--max-count=${args.limit + 1}`, `--skip=${skip}`, LOG_FORMAT, '-z', start]);
    for await (const c of commits(recs, shape)) {
      if (!fill.offer(c)) {
        page.has_more = true;
        break;
      }
    }
    page.commits = fill.items;
    if (page.has_more) page.next_cursor = next(skip + fill.items.length);
    return page;
  }
  // Path filter: examine a bounded window of history, then keep the commits touching the path.
  const window = (await git.run(['rev-list', `--max-count=${LOG_WALK_WINDOW}`, `--skip=${skip}`, start])).stdout
    .toString('utf8')
    .split('\n')
    .filter((h) => h !== '');
  page.examined = window.length;
  if (window.length === 0) return page;
  const position = new Map(window.map((h, i) => [h, i]));
  const input = window.join('\n') + '\n';
  const recs = git.records(['log', '--no-color', '--no-walk=unsorted', '--stdin', LOG_FORMAT, '-z', '--', path], undefined, input);
  let stopped = false;
  for await (const c of commits(recs, shape)) {
    if (!fill.offer(c)) {
      stopped = true;
      break;
    }
  }
  page.commits = fill.items;
  if (stopped) {
    page.has_more = true;
    page.next_cursor = next(skip + position.get(fill.items[fill.items.length - 1]!.hash)! + 1);
  } else if (window.length === LOG_WALK_WINDOW) {
    page.has_more = true; // more history to examine: the cursor continues the walk
    page.next_cursor = next(skip + LOG_WALK_WINDOW);
  }
  return page;
}
