/**
 * Bounded git reads: each reads one page plus one and stops git. The log pages by position from a
 * commit fixed on the first page; with a path filter it walks a bounded window of history per
 * call and says `has_more` with a cursor that continues the walk. Ref lists filter one bounded
 * candidate page per call. Status pages tracked changes (untracked scanning off) and then the
 * untracked files from a separate, capped listing.
 */
import { WorkspaceError, type Workspace } from '../fs/confine.js';
import type { CursorCodec } from '../fs/cursor.js';
import { checkNotOption, type GitRunner } from './run-git.js';

/** Commits a path-filtered log examines per call at most. */
export const LOG_WALK_WINDOW = 2000;
/** Refs a name filter examines per call at most. */
export const REF_CANDIDATES = 1000;
/** A commit subject or name longer than this is shortened (…). */
const MAX_FIELD = 200;

const short = (s: string): string => (s.length > MAX_FIELD ? s.slice(0, MAX_FIELD - 1) + '…' : s);

export interface Commit {
  hash: string;
  parents: string[];
  author: string;
  email: string;
  date: string;
  subject: string;
}

const LOG_FORMAT = '--format=%H%x1f%P%x1f%an%x1f%ae%x1f%aI%x1f%s';

function parseCommit(rec: string): Commit {
  const [hash = '', parents = '', author = '', email = '', date = '', subject = ''] = rec.replace(/^\n/, '').split('\x1f');
  return { hash, parents: parents === '' ? [] : parents.split(' '), author: short(author), email: short(email), date, subject: short(subject) };
}

async function resolveCommit(git: GitRunner, ref: string): Promise<string | undefined> {
  checkNotOption('ref', ref);
  const r = await git.tryRun(['rev-parse', '--verify', '--quiet', '--end-of-options', `${ref}^{commit}`]);
  if (r.code !== 0) {
    if (ref === 'HEAD') return undefined; // an empty repository: no commits yet
    throw new WorkspaceError('NOT_FOUND', `\`ref\` ${JSON.stringify(ref)} does not name a commit`);
  }
  return r.stdout.toString('utf8').trim();
}

export interface LogPage {
  ref: string;
  path?: string;
  commits: Commit[];
  has_more: boolean;
  next_cursor?: string;
  /** With a path filter: commits of history examined by this call (bounded). */
  examined?: number;
}

export async function gitLog(
  git: GitRunner,
  ws: Workspace,
  cursors: CursorCodec,
  args: { ref?: string | undefined; path?: string | undefined; limit: number; cursor: string | undefined },
): Promise<LogPage> {
  const ref = args.ref ?? 'HEAD';
  const path = args.path === undefined ? undefined : ws.segments(args.path).join('/') || '.';
  let start: string | undefined;
  let skip = 0;
  if (args.cursor !== undefined) {
    const c = cursors.decode('log', args.cursor);
    if (c.r !== ref || (c.p ?? null) !== (path ?? null)) {
      throw new WorkspaceError('INVALID_CURSOR', 'Invalid params: `cursor` belongs to another ref or path. Start again without a cursor.');
    }
    start = String(c.h);
    skip = Number(c.s);
  } else {
    start = await resolveCommit(git, ref);
  }
  const page: LogPage = { ref, commits: [], has_more: false };
  if (path !== undefined) page.path = path;
  if (start === undefined) return page;
  const next = (s: number): string => cursors.encode('log', { r: ref, p: path ?? null, h: start, s });
  if (path === undefined) {
    for await (const rec of git.records(['log', '--no-color', `--max-count=${args.limit + 1}`, `--skip=${skip}`, LOG_FORMAT, '-z', start])) {
      if (page.commits.length === args.limit) {
        page.has_more = true;
        break;
      }
      page.commits.push(parseCommit(rec));
    }
    if (page.has_more) page.next_cursor = next(skip + args.limit);
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
  const r = await git.run(['log', '--no-color', '--no-walk=unsorted', '--stdin', LOG_FORMAT, '-z', '--', path], { input });
  const matches = r.stdout.toString('utf8').split('\0').filter((x) => x.trim() !== '').map(parseCommit);
  page.commits = matches.slice(0, args.limit);
  if (matches.length > args.limit) {
    page.has_more = true;
    page.next_cursor = next(skip + position.get(page.commits[page.commits.length - 1]!.hash)! + 1);
  } else if (window.length === LOG_WALK_WINDOW) {
    page.has_more = true; // more history to examine: the cursor continues the walk
    page.next_cursor = next(skip + LOG_WALK_WINDOW);
  }
  return page;
}

export interface RefPage {
  refs: { name: string; target: string }[];
  has_more: boolean;
  next_cursor?: string;
  /** With `match`: refs examined by this call (bounded). */
  examined?: number;
}

export async function gitRefs(
  git: GitRunner,
  cursors: CursorCodec,
  kind: 'heads' | 'tags',
  args: { match?: string | undefined; limit: number; cursor: string | undefined },
): Promise<RefPage> {
  const prefix = `refs/${kind}/`;
  let after: string | undefined;
  if (args.cursor !== undefined) {
    const c = cursors.decode(`refs:${kind}`, args.cursor);
    if ((c.m ?? null) !== (args.match ?? null)) {
      throw new WorkspaceError('INVALID_CURSOR', 'Invalid params: `cursor` belongs to another `match`. Start again without a cursor.');
    }
    after = String(c.a);
  }
  const page: RefPage = { refs: [], has_more: false };
  let examined = 0;
  let last: string | undefined;
  let field = 0;
  let name = '';
  // for-each-ref sorts by refname: a page resumes after the last name seen.
  for await (const rec of git.records(['for-each-ref', '--format=%(refname)%00%(objectname)%00', prefix])) {
    const value = rec.replace(/^\n/, '');
    if (field === 0) {
      name = value;
      field = 1;
      continue;
    }
    field = 0;
    if (name === '' || (after !== undefined && name <= after)) continue;
    const shortName = name.slice(prefix.length);
    if (args.match !== undefined) {
      if (examined === REF_CANDIDATES) {
        page.has_more = true;
        break;
      }
      examined++;
      last = name;
      if (!shortName.includes(args.match)) continue;
    }
    if (page.refs.length === args.limit) {
      page.has_more = true;
      break;
    }
    page.refs.push({ name: shortName, target: value });
    if (args.match === undefined) last = name;
  }
  if (args.match !== undefined) page.examined = examined;
  if (page.has_more && last !== undefined) {
    // With a filter, the cursor continues the candidate scan (the page may hold zero matches).
    const resumeAfter = args.match === undefined ? last : page.refs.length === args.limit ? prefix + page.refs[page.refs.length - 1]!.name : last;
    page.next_cursor = cursors.encode(`refs:${kind}`, { a: resumeAfter, m: args.match ?? null });
  }
  return page;
}

export interface StatusEntry {
  path: string;
  /** Porcelain v2 XY (staged, unstaged) for tracked changes; `??` for untracked. */
  status: string;
  kind: 'tracked' | 'conflict' | 'untracked';
}

export interface StatusPage {
  entries: StatusEntry[];
  has_more: boolean;
  next_cursor?: string;
}

/** Untracked listing: a separate call, capped in time. */
const UNTRACKED_TIMEOUT_MS = 5000;

export async function gitStatus(git: GitRunner, cursors: CursorCodec, args: { limit: number; cursor: string | undefined }): Promise<StatusPage> {
  let skip = 0;
  if (args.cursor !== undefined) skip = Number(cursors.decode('status', args.cursor).s);
  const page: StatusPage = { entries: [], has_more: false };
  let seen = 0;
  const take = (e: StatusEntry): boolean => {
    if (seen++ < skip) return true;
    if (page.entries.length === args.limit) {
      page.has_more = true;
      return false;
    }
    page.entries.push(e);
    return true;
  };
  // Tracked changes with untracked scanning off (never a full-tree untracked scan here).
  let full = false;
  for await (const rec of git.records(['status', '--porcelain=v2', '-z', '--untracked-files=no', '--no-renames', '--ignore-submodules=all'])) {
    const r = rec.replace(/^\n/, '');
    if (r.startsWith('1 ') || r.startsWith('u ')) {
      const parts = r.split(' ');
      const path = parts.slice(r.startsWith('1 ') ? 8 : 10).join(' ');
      if (!take({ path, status: parts[1]!, kind: r.startsWith('u ') ? 'conflict' : 'tracked' })) {
        full = true;
        break;
      }
    }
  }
  if (!full) {
    for await (const rec of git.records(['ls-files', '--others', '--exclude-standard', '-z'], UNTRACKED_TIMEOUT_MS)) {
      if (rec === '') continue;
      if (!take({ path: rec, status: '??', kind: 'untracked' })) break;
    }
  }
  if (page.has_more) page.next_cursor = cursors.encode('status', { s: skip + page.entries.length });
  return page;
}
