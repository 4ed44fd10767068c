/**
 * The git tools of `mcp-budget serve` (the workspace root's repository): bounded reads declared
 * through the same list helpers as the workspace tools. Mutations (commit, branch, tag) and the
 * merge, stash views come next; they are not registered yet.
 */
import { z } from 'zod';
import type { Workspace } from '../fs/confine.js';
import type { CursorCodec } from '../fs/cursor.js';
import { gitLog, gitRefs, gitStatus } from '../git/git-reads.js';
import { GitRunner } from '../git/run-git.js';
import { defineListTool, type ToolContext } from './tool-kinds.js';

export const GIT_LIMITS = Object.freeze({
  log: { default: 30, max: 100 },
  status: { default: 100, max: 500 },
  refs: { default: 50, max: 200 },
});

const ENTRY = 'src/server/git-tools.ts';

export function registerGitTools(ctx: ToolContext, ws: Workspace, cursors: CursorCodec): void {
  const git = new GitRunner(ws.root);
  defineListTool<{ ref?: string; path?: string }>(
    ctx,
    {
      name: 'git_log',
      entryPoint: `${ENTRY}#git_log`,
      description: 'Commits reachable from `ref` (default HEAD), newest first; `path` keeps those touching it.',
      args: {
        ref: z.string().max(1024).optional().describe('Branch, tag or commit (default HEAD).'),
        path: z.string().max(4096).optional().describe('Only commits touching this path (relative to the root).'),
      },
      limit: { ...GIT_LIMITS.log, overMax: 'refuse' },
      row: {
        paging: `limit+1 commits; has_more; signed next_cursor continuing from a commit fixed on the first page; with path, each call examines at most 2000 commits and the cursor continues the walk`,
        per_item_budget: 'hash, parents, author, email, date, subject (names and subject ≤ 200 characters)',
        backend_query_bound: 'git log --max-count=limit+1 (no walk for a total); with path: rev-list of a 2000-commit window, then log --no-walk of that window',
        structured_content: 'the page object; the text block is its JSON',
      },
      run: ({ ref, path, limit, cursor }) => gitLog(git, ws, cursors, { ref, path, limit, cursor }),
    },
    'the `path` argument',
  );
  defineListTool<Record<string, never>>(
    ctx,
    {
      name: 'git_status',
      entryPoint: `${ENTRY}#git_status`,
      description: 'Changed files: staged and unstaged changes and conflicts, then untracked files.',
      args: {},
      limit: { ...GIT_LIMITS.status, overMax: 'refuse' },
      row: {
        paging: 'limit+1 entries; has_more; signed next_cursor (position)',
        per_item_budget: 'path, porcelain status, kind',
        backend_query_bound: 'git status --porcelain=v2 -z --untracked-files=no, stopped at the page; untracked from ls-files --others, stopped at the page, 5 s time cap',
        structured_content: 'the page object; the text block is its JSON',
      },
      run: ({ limit, cursor }) => gitStatus(git, cursors, { limit, cursor }),
    },
    'workspace_search_files',
  );
  for (const [name, kind] of [
    ['git_branches', 'heads'],
    ['git_tags', 'tags'],
  ] as const) {
    defineListTool<{ match?: string }>(
      ctx,
      {
        name,
        entryPoint: `${ENTRY}#${name}`,
        description: `${kind === 'heads' ? 'Branches' : 'Tags'} by name; \`match\` keeps names containing it (one bounded candidate page per call).`,
        args: { match: z.string().min(1).max(256).optional().describe('Substring a name must contain.') },
        limit: { ...GIT_LIMITS.refs, overMax: 'refuse' },
        row: {
          paging: 'limit+1 refs; has_more; signed next_cursor after the last name; with match, at most 1000 candidates examined per call and the cursor continues the scan (a page may hold no match)',
          per_item_budget: 'name and target hash',
          backend_query_bound: 'git for-each-ref streamed and stopped at the page (or after 1000 candidates with match)',
          structured_content: 'the page object; the text block is its JSON',
        },
        run: ({ match, limit, cursor }) => gitRefs(git, cursors, kind, { match, limit, cursor }),
      },
      'the `match` argument',
    );
  }
}
