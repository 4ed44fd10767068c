/**
 * Glob search over the workspace with fast-glob, streamed and stopped at `limit + 1` matches (the
 * walk ends there). Symlinked directories are never traversed, so a link cannot lead the search
 * out of the root; the patterns a query expands to are checked first (no `..`, no absolute path,
 * no static prefix through a link out), and every match is checked again before it is listed.
 * A page also stops at a byte size, so the result budget never has to cut it. The next page
 * re-streams and passes the matches already returned (the walk order of an unchanged tree is
 * stable), up to a cap.
 */
import { realpath } from 'node:fs/promises';
import { resolve } from 'node:path';
import fg from 'fast-glob';
import { WorkspaceError, type Workspace } from './confine.js';
import type { CursorCodec } from './cursor.js';

export interface SearchPage {
  query: string;
  path: string;
  matches: string[];
  has_more: boolean;
  next_cursor?: string;
}

/** Longest accepted glob, in bytes. */
export const MAX_QUERY_BYTES = 1024;
/** Matches a resumed search may pass over before giving up. */
export const MAX_SEARCH_SKIP = 100_000;

/** A `..` segment anywhere in a glob, including inside braces (`{..,x}`). */
const PARENT_SEGMENT = /(^|[/{,])\.\.($|[/},])/;

export function checkQuery(query: unknown): string {
  if (typeof query !== 'string' || query.trim() === '') {
    throw new WorkspaceError('INVALID_PARAMS', 'Expected `query` to be a non-empty glob such as "**/*.ts"');
  }
  if (Buffer.byteLength(query) > MAX_QUERY_BYTES) {
    throw new WorkspaceError('INPUT_TOO_LARGE', `Expected \`query\` to be at most ${MAX_QUERY_BYTES} bytes`, { max: MAX_QUERY_BYTES });
  }
  if (query.includes('\0')) throw new WorkspaceError('INVALID_PARAMS', '`query` contains a NUL byte');
  if (query.startsWith('/') || PARENT_SEGMENT.test(query)) {
    throw new WorkspaceError('PATH_ESCAPES_ROOT', '`query` must stay inside the workspace: no leading `/` and no `..` segments');
  }
  return query;
}

const GLOB_CHARS = /[*?[\]{}()!+@]/;

/**
 * Check the patterns a glob expands to (braces included): none may be absolute or climb with
 * `..`, and the static directory each starts from must resolve inside the root (a symlinked
 * directory named at the start of a pattern is opened directly by the glob walker).
 */
async function checkExpanded(ws: Workspace, baseRel: string, query: string): Promise<void> {
  const escape = (): WorkspaceError =>
    new WorkspaceError('PATH_ESCAPES_ROOT', '`query` must stay inside the workspace: it expands to a pattern outside the root');
  for (const task of fg.generateTasks([query])) {
    for (const pattern of task.patterns) {
      if (pattern.startsWith('!')) continue;
      if (pattern.startsWith('/') || PARENT_SEGMENT.test(pattern)) throw escape();
      const prefix: string[] = [];
      for (const seg of pattern.split('/')) {
        if (GLOB_CHARS.test(seg)) break;
        prefix.push(seg);
      }
      prefix.pop(); // the last static segment may be a file name
      if (prefix.length === 0) continue;
      const rel = (baseRel === '.' ? '' : baseRel + '/') + prefix.join('/');
      try {
        await ws.resolve(rel);
      } catch (e) {
        if (e instanceof WorkspaceError && e.code === 'NOT_FOUND') continue; // nothing there to match
        if (e instanceof WorkspaceError && (e.code === 'PATH_ESCAPES_ROOT' || e.code === 'NOT_A_DIRECTORY')) throw escape();
        throw e;
      }
    }
  }
}

export async function searchFiles(
  ws: Workspace,
  cursors: CursorCodec,
  query: string,
  path: string | undefined,
  limit: number,
  cursor: string | undefined,
  maxPageBytes?: number,
): Promise<SearchPage> {
  checkQuery(query);
  const base = await ws.resolveDirectory(path);
  await checkExpanded(ws, base.rel, query);
  let skip = 0;
  if (cursor !== undefined) {
    const c = cursors.decode('search', cursor);
    if (c.q !== query || c.p !== base.rel) {
      throw new WorkspaceError('INVALID_CURSOR', 'Invalid params: `cursor` belongs to another query or path. Start again without a cursor.');
    }
    skip = Number(c.s);
    if (!Number.isSafeInteger(skip) || skip < 0 || skip > MAX_SEARCH_SKIP) {
      throw new WorkspaceError('INVALID_CURSOR', `Invalid params: resuming would pass more than ${MAX_SEARCH_SKIP} matches; narrow the query.`);
    }
  }
  const matches: string[] = [];
  let seen = 0;
  let more = false;
  const stream = fg.stream(query, {
    cwd: base.abs,
    followSymbolicLinks: false,
    onlyFiles: true,
    suppressErrors: true,
    dot: false,
  });
  let bytes = 0;
  for await (const entry of stream) {
    const rel = String(entry);
    // Defense in depth: a match must resolve inside the root (lexically and through links).
    const abs = resolve(base.abs, rel);
    if (!ws.contains(abs)) continue;
    if (seen++ < skip) continue;
    const size = Buffer.byteLength(rel) + 3;
    if (matches.length === limit || (maxPageBytes !== undefined && matches.length > 0 && bytes + size > maxPageBytes)) {
      more = true;
      break; // the page is full: stop the walk
    }
    let real: string;
    try {
      real = await realpath(abs);
    } catch {
      real = abs; // a dangling link: listed by name, never followed
    }
    if (!ws.contains(real)) continue;
    matches.push(rel);
    bytes += size;
  }
  const page: SearchPage = { query, path: base.rel, matches, has_more: more };
  // Resume after every match this page looked at (listed or refused), not the one that ended it.
  if (more) page.next_cursor = cursors.encode('search', { q: query, p: base.rel, s: seen - 1 });
  return page;
}
