/**
 * Every paged tool `serve` offers, as the page-fill test and `bench:fill` walk them: its
 * arguments on their fixtures, the member holding its items, its largest `limit`, and its paging
 * members when they are not the usual `limit`, `cursor`, `next_cursor` and `has_more`.
 */
export interface PagedTool {
  tool: string;
  args: Record<string, unknown>;
  /** The member holding the page's items. */
  items: string;
  /** The largest `limit` the tool accepts (given in `limitArg`). */
  max: number;
  limitArg?: string;
  cursorIn?: string;
  cursorOut?: string;
  moreOut?: string;
}

/** The paged tools, over fixtures whose channel is `channel`. */
export function pagedTools(channel: string): PagedTool[] {
  return [
    { tool: 'workspace_list_dir', args: { path: 'list' }, items: 'entries', max: 200 },
    { tool: 'workspace_scan', args: {}, items: 'directories', max: 100 },
    { tool: 'workspace_search_files', args: { path: 'search', query: '**/*.md' }, items: 'matches', max: 200 },
    { tool: 'git_log', args: {}, items: 'commits', max: 100 },
    { tool: 'git_status', args: {}, items: 'entries', max: 500 },
    { tool: 'git_branches', args: {}, items: 'refs', max: 200 },
    { tool: 'git_tags', args: {}, items: 'refs', max: 200 },
    { tool: 'git_stashes', args: {}, items: 'stashes', max: 100 },
    { tool: 'message_history_read', args: { channel }, items: 'messages', max: 100 },
    { tool: 'message_search', args: { q: 'findme' }, items: 'matches', max: 100 },
    { tool: 'inbox_read', args: { peek: true }, items: 'messages', max: 50 },
    { tool: 'task_list', args: {}, items: 'tasks', max: 100 },
    { tool: 'task_search', args: { q: 'findme' }, items: 'tasks', max: 100 },
    { tool: 'task_options', args: { field: 'label' }, items: 'options', max: 100 },
    { tool: 'task_get', args: { id: 1 }, items: 'comments', max: 100, limitArg: 'comments_limit', cursorIn: 'comments_cursor', cursorOut: 'comments_next_cursor', moreOut: 'comments_has_more' },
  ];
}
