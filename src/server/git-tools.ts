/**
 * The git tools of `mcp-budget serve` (the workspace root's repository): bounded reads, state
 * views and validated mutations, declared through the same helpers as the workspace tools. Every
 * read gets the server's page budget, so its pages are sized to the active limits at the source.
 */
import { z } from 'zod';
import type { Workspace } from '../fs/confine.js';
import type { CursorCodec } from '../shared/cursor.js';
import { gitLog, gitRefs, gitStatus } from '../git/git-reads.js';
import { MAX_CONFLICTS, gitMergeStatus, gitStashes } from '../git/git-state.js';
import { GIT_WRITE_LIMITS, gitCommit, gitCreateBranch, gitCreateTag } from '../git/git-writes.js';
import { GitRunner } from '../git/run-git.js';
import { defineDetailTool, defineListTool, defineMutationTool, type ToolContext } from './tool-kinds.js';

export const GIT_LIMITS = Object.freeze({
  log: { default: 30, max: 100 },
  status: { default: 100, max: 500 },
  refs: { default: 50, max: 200 },
  stashes: { default: 20, max: 100 },
});

const ENTRY = 'src/server/git-tools.ts';

/** Output schemas (published as `outputSchema`; clients reject members a schema does not list). */
const flag = z.boolean().optional();
const count = z.number().optional();
const pageFields = { has_more: z.boolean(), next_cursor: z.string().optional() };
const LOG_OUTPUT = {
  ref: z.string(),
  ref_truncated: flag,
  path: z.string().optional(),
  path_truncated: flag,
  commits: z.array(
    z.object({
      hash: z.string(),
      parents: z.array(z.string()),
      author: z.string(),
      email: z.string(),
      date: z.string(),
      subject: z.string(),
      parents_truncated: flag,
      author_truncated: flag,
      email_truncated: flag,
      subject_truncated: flag,
    }),
  ),
  ...pageFields,
  examined: count,
};
const STATUS_OUTPUT = {
  entries: z.array(z.object({ path: z.string(), status: z.string(), kind: z.enum(['tracked', 'conflict', 'untracked']), path_truncated: flag })),
  ...pageFields,
  warning: z.string().optional(),
};
const REFS_OUTPUT = {
  refs: z.array(z.object({ name: z.string(), target: z.string(), name_truncated: flag })),
  ...pageFields,
  examined: count,
  warning: z.string().optional(),
  skipped: count,
};
const STASHES_OUTPUT = {
  stashes: z.array(z.object({ ref: z.string(), commit: z.string(), message: z.string(), message_truncated: flag })),
  ...pageFields,
  examined: count,
};
const MERGE_OUTPUT = {
  in_progress: z.enum(['merge', 'rebase', 'cherry-pick', 'revert']).nullable(),
  conflicts: z.array(z.string()),
  conflicts_capped: z.boolean(),
  conflict_paths_truncated: flag,
};

export function registerGitTools(ctx: ToolContext, ws: Workspace, cursors: CursorCodec): void {
  // One runner per server; each tool call takes its own scope (repository checks and config read
  // once per call: config can change between calls).
  const runner = new GitRunner(ws);
  const git = (): GitRunner => runner.scope();
  defineListTool(
    ctx,
    {
      name: 'git_log',
      title: 'Git log',
      action: 'git.read',
      entryPoint: `${ENTRY}#git_log`,
      description: 'Commits reachable from `ref` (default HEAD), newest first; `path` keeps those touching it.',
      args: {
        ref: z.string().max(1024).optional().describe('Branch, tag or commit (default HEAD).'),
        path: z.string().max(4096).optional().describe('Only commits touching this path (relative to the root).'),
      },
      limit: { ...GIT_LIMITS.log, overMax: 'refuse' },
      row: {
        paging: `limit+1 commits; has_more; signed next_cursor continuing from a commit fixed on the first page; with path, each call examines at most 2000 commits and the cursor continues the walk`,
        per_item_budget: 'hash, parents, author, email, date, subject (names and subject ≤ 200 characters, cut to the page with *_truncated)',
        backend_query_bound: 'git log --max-count=limit+1 (no walk for a total); with path: rev-list of a 2000-commit window, then log --no-walk of that window',
        structured_content: 'the page object; the text block is its compact rendering (its JSON when that is no larger)',
      },
      outputSchema: LOG_OUTPUT,
      run: ({ ref, path, limit, cursor, sizer }) => gitLog(git(), ws, cursors, { ref, path, limit, cursor, page: { ...ctx.page, sizer } }),
    },
    { argument: 'the `path` argument' },
  );
  defineListTool(
    ctx,
    {
      name: 'git_status',
      title: 'Git status',
      action: 'git.read',
      entryPoint: `${ENTRY}#git_status`,
      description: 'Changed files: staged and unstaged changes and conflicts, then untracked files.',
      args: {},
      limit: { ...GIT_LIMITS.status, overMax: 'refuse' },
      row: {
        paging: 'limit+1 entries; has_more; signed next_cursor (position)',
        per_item_budget: 'path, porcelain status, kind',
        backend_query_bound:
          'git status --porcelain=v2 -z --untracked-files=no, stopped at the page; untracked from ls-files --others --directory, each untracked directory the page reaches listed through the gate and checked against the ignore rules per level, 5 s time cap',
        structured_content: 'the page object; the text block is its compact rendering (its JSON when that is no larger)',
      },
      outputSchema: STATUS_OUTPUT,
      run: ({ limit, cursor, sizer }) => gitStatus(git(), cursors, { limit, cursor, page: { ...ctx.page, sizer } }),
    },
    { tool: 'workspace_search_files', surface: 'workspace' },
  );
  for (const [name, kind] of [
    ['git_branches', 'heads'],
    ['git_tags', 'tags'],
  ] as const) {
    defineListTool(
      ctx,
      {
        name,
        title: kind === 'heads' ? 'Git branches' : 'Git tags',
        action: 'git.read',
        entryPoint: `${ENTRY}#${name}`,
        description: `${kind === 'heads' ? 'Branches' : 'Tags'} by name; \`match\` keeps names containing it (one bounded candidate page per call).`,
        args: { match: z.string().min(1).max(256).optional().describe('Substring a name must contain.') },
        limit: { ...GIT_LIMITS.refs, overMax: 'refuse' },
        row: {
          paging: 'limit+1 refs; has_more; signed next_cursor after the last name; with match, at most 1000 candidates examined per call and the cursor continues the scan (a page may hold no match)',
          per_item_budget: 'name and target hash',
          backend_query_bound:
            'packed-refs binary-searched and streamed, loose refs merged one sorted directory level at a time, stopped at the page (or after 1000 candidates with match); git for-each-ref when the repository shape is unusual',
          structured_content: 'the page object; the text block is its compact rendering (its JSON when that is no larger)',
        },
        outputSchema: REFS_OUTPUT,
      run: ({ match, limit, cursor, sizer }) => gitRefs(git(), cursors, kind, { match, limit, cursor, page: { ...ctx.page, sizer } }),
      },
      { argument: 'the `match` argument' },
    );
  }
  defineListTool(
    ctx,
    {
      name: 'git_stashes',
      title: 'Git stashes',
      action: 'git.read',
      entryPoint: `${ENTRY}#git_stashes`,
      description: 'Stash entries, newest first; `match` keeps those whose message contains it (one bounded candidate page per call).',
      args: { match: z.string().min(1).max(256).optional().describe('Substring the stash message must contain.') },
      limit: { ...GIT_LIMITS.stashes, overMax: 'refuse' },
      row: {
        paging: 'limit+1 entries; has_more; signed next_cursor (position); with match, at most 1000 candidates examined per call',
        per_item_budget: 'ref, commit, message (≤ 200 characters)',
        backend_query_bound: 'git log --walk-reflogs refs/stash --max-count=limit+1 (or 1001 candidates with match)',
        structured_content: 'the page object; the text block is its compact rendering (its JSON when that is no larger)',
      },
      outputSchema: STASHES_OUTPUT,
      run: ({ match, limit, cursor, sizer }) => gitStashes(git(), cursors, { match, limit, cursor, page: { ...ctx.page, sizer } }),
    },
    { argument: 'the `match` argument' },
  );
  defineDetailTool(ctx, {
    name: 'git_merge_status',
    title: 'Git merge status',
    action: 'git.read',
    entryPoint: `${ENTRY}#git_merge_status`,
    description: `Whether a merge, rebase, cherry-pick or revert is in progress, and its conflict files (at most ${MAX_CONFLICTS}).`,
    args: {},
    row: {
      paging: 'none; conflicts capped with conflicts_capped',
      per_item_budget: `state + at most ${MAX_CONFLICTS} conflict paths`,
      backend_query_bound: 'git-path checks; git diff --name-only --diff-filter=U -z stopped at the cap',
      structured_content: 'the status object; the text block is its compact rendering (its JSON when that is no larger)',
    },
    outputSchema: MERGE_OUTPUT,
    run: () => gitMergeStatus(git(), ctx.page),
  });
  const caps = { ...GIT_WRITE_LIMITS };
  defineMutationTool(ctx, {
    name: 'git_commit',
    title: 'Git commit',
    action: 'git.write',
    entryPoint: `${ENTRY}#git_commit`,
    description: `Commit staged changes (or exactly \`paths\`, at most ${GIT_WRITE_LIMITS.maxPaths}). The message is capped at ${GIT_WRITE_LIMITS.maxMessageBytes} bytes and ${GIT_WRITE_LIMITS.maxMessageLines} lines; hooks do not run.`,
    args: {
      message: z.string().describe('Commit message.'),
      paths: z.array(z.string()).optional().describe('Paths to add and commit (relative to the root).'),
    },
    caps,
    row: {
      paging: 'none',
      per_item_budget: 'receipt: commit hash, branch, files changed (streamed count; what a step after the commit could not read is null and named in summary_omitted)',
      backend_query_bound: 'caps and confinement checked before git runs; git commit --no-verify -F - (message on stdin)',
      structured_content: 'the receipt object; the text block is its compact rendering (its JSON when that is no larger)',
    },
    outputSchema: {
      commit: z.string().nullable(),
      branch: z.string().nullable(),
      files_changed: z.number().nullable(),
      summary_omitted: z.string().optional().describe('Present when a step after the commit failed: what could not be read back. The commit stands; do not repeat it.'),
    },
    run: (args) => gitCommit(git(), ws, args),
  });
  defineMutationTool(ctx, {
    name: 'git_create_branch',
    title: 'Create git branch',
    action: 'git.write',
    entryPoint: `${ENTRY}#git_create_branch`,
    description: 'Create a branch at `start_point` (default HEAD); the name must pass git check-ref-format.',
    args: {
      name: z.string().describe('Branch name.'),
      start_point: z.string().optional().describe('Commit, branch or tag to start from (default HEAD).'),
    },
    caps,
    row: {
      paging: 'none',
      per_item_budget: 'receipt: branch and commit',
      backend_query_bound: 'name validated (check-ref-format, no leading "-") before git runs; git branch --end-of-options',
      structured_content: 'the receipt object; the text block is its compact rendering (its JSON when that is no larger)',
    },
    outputSchema: { branch: z.string(), commit: z.string() },
    run: (args) => gitCreateBranch(git(), args),
  });
  defineMutationTool(ctx, {
    name: 'git_create_tag',
    title: 'Create git tag',
    action: 'git.write',
    entryPoint: `${ENTRY}#git_create_tag`,
    description: `Create a tag at \`target\` (default HEAD); annotated when \`message\` is given (capped like commit messages).`,
    args: {
      name: z.string().describe('Tag name.'),
      target: z.string().optional().describe('Commit to tag (default HEAD).'),
      message: z.string().optional().describe('Annotation message.'),
    },
    caps,
    row: {
      paging: 'none',
      per_item_budget: 'receipt: tag, commit, annotated',
      backend_query_bound: 'name and message validated before git runs; git tag --no-sign --end-of-options',
      structured_content: 'the receipt object; the text block is its compact rendering (its JSON when that is no larger)',
    },
    outputSchema: { tag: z.string(), commit: z.string(), annotated: z.boolean() },
    run: (args) => gitCreateTag(git(), args),
  });
}
