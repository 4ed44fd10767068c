/**
 * Glob search over the workspace with fast-glob, streamed and stopped at `limit + 1` matches (the
 * walk ends there). Symlinked directories are never traversed, so a link cannot lead the search
 * out of the root. The next page re-streams and passes the matches already returned (the walk
 * order of an unchanged tree is stable), up to a cap.
 */
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

export async function searchFiles(
  ws: Workspace,
  cursors: CursorCodec,
  query: string,
  path: string | undefined,
  limit: number,
  cursor: string | undefined,
): Promise<SearchPage> {
  checkQuery(query);
  const base = await ws.resolveDirectory(path);
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
  for await (const entry of stream) {
    if (seen++ < skip) continue;
    if (matches.length === limit) {
      more = true;
      break; // the limit+1-th match: stop the walk
    }
    matches.push(String(entry));
  }
  const page: SearchPage = { query, path: base.rel, matches, has_more: more };
  if (more) page.next_cursor = cursors.encode('search', { q: query, p: base.rel, s: skip + matches.length });
  return page;
}
