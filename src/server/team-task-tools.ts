/**
 * The task tools of `mcp-budget serve`: browse (`task_list`, exact filters), lookup
 * (`task_search`, text and identity, the surface for dedupe), detail (`task_get` with its own
 * comments page), mutations with caps checked before one transaction, and `task_options` (a
 * field's options, or with `q` the role-scoped member query mode; not a dedupe surface).
 */
import { z } from 'zod';
import { WorkspaceError } from '../fs/errors.js';
import { TASK_PRIORITIES, TASK_STATUSES, TEAM_INPUT_CAPS, TEAM_PAGE_LIMITS, TEAM_READ_LIMITS, taskIdOf, visibleRoles, type Member, type Task, type TeamStore } from '../team/index.js';
import { TeamCursors, commentItem, commentRow, cursorRoom, fitItems, iso, num, pageFields, preview, taskItem, taskRow, textWindow, timeKeyOf, timePosition, withTeam } from './team-shapes.js';
import { defineDetailTool, defineListTool, defineMutationTool, defineSearchTool, sizerOf, type ToolContext } from './tool-kinds.js';

const ENTRY = 'src/server/team-task-tools.ts';
const FIELDS = ['status', 'priority', 'label', 'assignee'] as const;
const COMMENT_PREVIEW_BYTES = TEAM_READ_LIMITS.previewBytes;

const taskIdArg = z.union([z.number().int().positive(), z.string().max(32)]).describe('Task id or key (e.g. 12 or "T-12").');
const statusArg = z.enum(TASK_STATUSES);
const priorityArg = z.enum(TASK_PRIORITIES);

function idOf(v: number | string): number {
  const id = typeof v === 'number' ? v : taskIdOf(v);
  if (id === undefined) throw new WorkspaceError('INVALID_PARAMS', `Expected \`id\` to be a task id or key such as T-12, got ${JSON.stringify(String(v).slice(0, 40))}`);
  return id;
}

/** An assignee the caller may see (the same scope as task_options), or NOT_FOUND. */
async function visibleAssignee(store: TeamStore, me: Member, name: string | null | undefined): Promise<void> {
  if (name === undefined || name === null) return;
  const m = await store.getMember(name);
  const ok = m !== undefined && m.active && (me.role === 'guest' ? m.id === me.id : visibleRoles(me.role).includes(m.role));
  if (!ok) throw new WorkspaceError('NOT_FOUND', `\`assignee\`: no member named ${JSON.stringify(name)} that you can assign. Use task_options with field "assignee".`);
}

/**
 * A member named in a filter must be one the caller may see (a guest: itself; others: the roles
 * their own may see, active or not); any other name answers exactly as an unknown one, so a filter
 * cannot tell who is on the team.
 */
async function visibleFilter(store: TeamStore, me: Member, name: string): Promise<void> {
  const m = await store.getMember(name);
  const ok = m !== undefined && (me.role === 'guest' ? m.id === me.id : visibleRoles(me.role).includes(m.role));
  if (!ok) throw new WorkspaceError('NOT_FOUND', `\`assignee\`: no member named ${JSON.stringify(name)}.`);
}

const TASK_CAPS = Object.freeze({
  maxTitleBytes: TEAM_INPUT_CAPS.maxTitleBytes,
  maxTaskBodyBytes: TEAM_INPUT_CAPS.maxTaskBodyBytes,
  maxLabels: TEAM_INPUT_CAPS.maxLabels,
  maxLabelBytes: TEAM_INPUT_CAPS.maxLabelBytes,
  maxNameBytes: TEAM_INPUT_CAPS.maxNameBytes,
  maxTotalBytes: TEAM_INPUT_CAPS.maxTotalBytes,
});

const taskFields = {
  body: z.string().optional().describe(`Description (at most ${TEAM_INPUT_CAPS.maxTaskBodyBytes} bytes).`),
  status: statusArg.optional().describe('Status (new tasks: open).'),
  priority: priorityArg.optional().describe('Priority (new tasks: normal).'),
  labels: z.array(z.string()).optional().describe(`Labels (at most ${TEAM_INPUT_CAPS.maxLabels}).`),
};

const mutationRow = {
  paging: 'none',
  per_item_budget: 'receipt: the task as a page row (body preview)',
  backend_query_bound: 'caps and references checked first, then one transaction (task, labels, FTS row by trigger)',
  structured_content: 'the receipt object; the text block is its compact rendering (its JSON when that is no larger)',
};

export function registerTaskTools(ctx: ToolContext, cursors: TeamCursors): void {
  defineListTool(
    ctx,
    {
      name: 'task_list',
      title: 'List tasks',
      action: 'task.read',
      entryPoint: `${ENTRY}#task_list`,
      description: 'Browse tasks, most recently updated first, with exact filters (status, assignee, label). To find a task by text or key, use task_search.',
      args: { status: statusArg.optional().describe('Only tasks in this status.'), assignee: z.string().max(256).optional().describe('Member name.'), label: z.string().max(256).optional().describe('Only tasks with this label.') },
      limit: { ...TEAM_PAGE_LIMITS.listTasks, overMax: 'refuse' },
      row: {
        paging: 'keyset (updated_at, id) read limit+1; the page stops at a byte size the budget never cuts; has_more; signed next_cursor bound to store and filters',
        per_item_budget: `title ≤ ${TEAM_INPUT_CAPS.maxTitleBytes} bytes, ≤ ${TEAM_INPUT_CAPS.maxLabels} labels, body preview ≤ ${TEAM_READ_LIMITS.taskPreviewBytes} bytes`,
        backend_query_bound: 'one index per filter: (updated_at DESC, id DESC), (status, …), (assignee_id, status, …), label (label, updated_at DESC, task_id DESC); LIMIT limit+1, no OFFSET, no count',
        structured_content: 'the page object; the text block is its compact rendering (its JSON when that is no larger)',
      },
      outputSchema: { tasks: z.array(taskItem), ...pageFields },
      run: withTeam(async ({ status, assignee, label, limit, cursor, sizer }, { store, me }) => {
        if (assignee !== undefined) await visibleFilter(store, me, assignee);
        const bind = [status ?? null, assignee ?? null, label ?? null];
        const after = cursor === undefined ? undefined : timeKeyOf(cursors.decode('tasks', store.storeId, bind, cursor));
        const page = await store.listTasks({ status, assignee, label }, after, limit);
        const items = page.rows.map((t) => taskRow(t));
        const cursorAt = (r: (typeof page.rows)[number]): string => cursors.encode('tasks', store.storeId, bind, timePosition(r.updated_at, r));
        const sample = page.rows[page.rows.length - 1];
        const n = sample === undefined ? 0 : fitItems(items, sizer, { tasks: [], has_more: true, next_cursor: cursorRoom(cursorAt(sample)) }, 'tasks');
        const last = page.rows[n - 1];
        const more = page.more || n < page.rows.length;
        return { tasks: items.slice(0, n), has_more: more, ...(more && last !== undefined ? { next_cursor: cursorAt(last) } : {}) };
      }),
    },
    { tool: 'task_search', surface: 'team' },
  );

  defineSearchTool(ctx, {
    name: 'task_search',
    title: 'Search tasks',
    action: 'task.read',
    entryPoint: `${ENTRY}#task_search`,
    description: 'Find tasks by words in title and body (best match first), or by id or key (T-123 finds that task first). Use it to check whether a task exists before creating one.',
    args: { status: statusArg.optional().describe('Only tasks in this status.') },
    query: { name: 'q', required: true, maxChars: TEAM_READ_LIMITS.maxQueryChars, description: 'Words, or a task id or key such as T-123 (required).' },
    limit: { ...TEAM_PAGE_LIMITS.searchTasks, overMax: 'refuse' },
    row: {
      paging: "identity hit first, then keyset (bm25 exact double, id) read limit+1 among ids ≤ the first page's snapshot; has_more; signed next_cursor bound to store, q and status",
      per_item_budget: `snippet ≤ ${TEAM_READ_LIMITS.snippetBytes} bytes; title ≤ ${TEAM_INPUT_CAPS.maxTitleBytes}; body preview ≤ ${TEAM_READ_LIMITS.taskPreviewBytes}`,
      backend_query_bound: 'primary key for the identity; FTS5 MATCH ranked by bm25 (every match scored), LIMIT limit+1; snippet() for the page only',
      structured_content: 'the page object; the text block is its compact rendering (its JSON when that is no larger)',
    },
    outputSchema: { q: z.string(), tasks: z.array(taskItem.extend({ score: z.number().nullable(), snippet: z.string() })), ...pageFields },
    run: withTeam(async ({ query, status, limit, cursor, sizer }, { store }) => {
      const bind = [query, status ?? null];
      const pos = cursor === undefined ? undefined : cursors.decode('tsearch', store.storeId, bind, cursor);
      const snapshot = pos === undefined ? await store.lastTaskId() : num(pos, 'n');
      const after = pos === undefined || pos.r === null ? undefined : { score: num(pos, 'r'), id: num(pos, 'i') };
      const page = await store.searchTasks(query, status, snapshot, after, pos === undefined, limit);
      const items = page.rows.map((h) => ({ ...taskRow(h), score: h.score, snippet: preview(h.snippet, TEAM_READ_LIMITS.snippetBytes).text }));
      const q = preview(query, 512).text;
      const sample = page.rows[page.rows.length - 1];
      const room = sample === undefined ? '' : cursorRoom(cursors.encode('tsearch', store.storeId, bind, { n: snapshot, r: sample.score, i: sample.id }));
      const n = fitItems(items, sizer, { q, tasks: [], has_more: true, next_cursor: room }, 'tasks');
      const last = page.rows[n - 1];
      const more = page.more || n < page.rows.length;
      return {
        q,
        tasks: items.slice(0, n),
        has_more: more,
        ...(more && last !== undefined ? { next_cursor: cursors.encode('tsearch', store.storeId, bind, { n: snapshot, r: last.score, i: last.id }) } : {}),
      };
    }),
  });

  const windowBytes = Math.min(ctx.page.maxPageStringBytes, Math.floor(ctx.page.maxPageBytes / 2));
  defineDetailTool(ctx, {
    name: 'task_get',
    title: 'Get task',
    action: 'task.read',
    entryPoint: `${ENTRY}#task_get`,
    description: `One task: its body in windows (continue from body_next_offset) and a page of comments, newest first (default ${TEAM_PAGE_LIMITS.comments.default}, max ${TEAM_PAGE_LIMITS.comments.max}; continue with comments_cursor).`,
    args: {
      id: taskIdArg,
      body_offset: z.number().int().min(0).optional().describe('Body offset (UTF-16 units; default 0).'),
      comments_limit: z.number().int().min(1).optional().describe(`Comments per page (default ${TEAM_PAGE_LIMITS.comments.default}, at most ${TEAM_PAGE_LIMITS.comments.max}).`),
      comments_cursor: z.string().max(4096).optional().describe('comments_next_cursor of a previous call.'),
    },
    row: {
      paging: `body window (body_offset, body_next_offset); comments keyset (created_at, id) read comments_limit+1 (default ${TEAM_PAGE_LIMITS.comments.default}, max ${TEAM_PAGE_LIMITS.comments.max}, over max refused), comments_has_more, signed comments_next_cursor; the comments stop where the answer would pass an active limit, each weighed as sent (its JSON in the structure and its line in the text block)`,
      per_item_budget: `body window ≤ ${windowBytes} bytes as written; comment previews ≤ ${COMMENT_PREVIEW_BYTES} bytes`,
      backend_query_bound: 'primary key for the task; index (task_id, created_at DESC, id DESC) LIMIT comments_limit+1',
      structured_content: 'the task object; the text block is its compact rendering (its JSON when that is no larger)',
    },
    outputSchema: { task: taskItem, body_offset: z.number(), body_next_offset: z.number().nullable(), comments: z.array(commentItem), comments_has_more: z.boolean(), comments_next_cursor: z.string().optional() },
    run: withTeam(async ({ id: rawId, body_offset, comments_limit, comments_cursor }, { store, call }) => {
      const id = idOf(rawId);
      const limit = comments_limit ?? TEAM_PAGE_LIMITS.comments.default;
      if (limit > TEAM_PAGE_LIMITS.comments.max) {
        throw new WorkspaceError('INVALID_PARAMS', `Invalid params: expected \`comments_limit\` to be an integer from 1 to ${TEAM_PAGE_LIMITS.comments.max} for task_get, got ${limit}`);
      }
      const task = await store.getTask(id);
      const after = comments_cursor === undefined ? undefined : timeKeyOf(cursors.decode('comments', store.storeId, id, comments_cursor));
      const page = await store.comments(id, after, Math.min(limit, ctx.page.maxPageItems));
      const w = textWindow(task.body, body_offset ?? 0, windowBytes);
      const head = { task: { ...taskRow(task, 0), body: w.text, body_truncated: w.next_offset !== null || w.offset > 0 }, body_offset: w.offset, body_next_offset: w.next_offset };
      const items = page.rows.map((c) => commentRow(c, COMMENT_PREVIEW_BYTES));
      const cursorAt = (r: (typeof page.rows)[number]): string => cursors.encode('comments', store.storeId, id, timePosition(r.created_at, r));
      const sample = page.rows[page.rows.length - 1];
      const fixed = { ...head, comments: [], comments_has_more: true, comments_next_cursor: sample === undefined ? '' : cursorRoom(cursorAt(sample)) };
      const n = sample === undefined ? 0 : fitItems(items, sizerOf(ctx, call), fixed, 'comments');
      const last = page.rows[n - 1];
      const more = page.more || n < page.rows.length;
      return { ...head, comments: items.slice(0, n), comments_has_more: more, ...(more && last !== undefined ? { comments_next_cursor: cursorAt(last) } : {}) };
    }),
  });

  defineMutationTool(ctx, {
    name: 'task_create',
    title: 'Create task',
    action: 'task.create',
    entryPoint: `${ENTRY}#task_create`,
    description: `Create a task (task_search first to avoid a duplicate). Title at most ${TEAM_INPUT_CAPS.maxTitleBytes} bytes; over a cap nothing is written.`,
    args: { title: z.string().describe('Title.'), assignee: z.string().optional().describe('Member name.'), ...taskFields },
    caps: TASK_CAPS,
    row: mutationRow,
    outputSchema: { task: taskItem },
    run: withTeam(async (a, { store, me }) => {
      await visibleAssignee(store, me, a.assignee);
      return { task: taskRow(await store.createTask(me, a)) };
    }),
  });

  defineMutationTool(ctx, {
    name: 'task_update',
    title: 'Update task',
    action: 'task.update',
    entryPoint: `${ENTRY}#task_update`,
    description: 'Change fields of a task (labels replace the old ones; assignee null unassigns). Over a cap nothing is written.',
    args: { id: taskIdArg, title: z.string().optional().describe('New title.'), assignee: z.string().nullable().optional().describe('Member name, or null to unassign.'), ...taskFields },
    caps: TASK_CAPS,
    destructive: true,
    row: mutationRow,
    outputSchema: { task: taskItem },
    run: withTeam(
      async ({ id, ...changes }, { store, me, call }) => {
        if (Object.values(changes).every((v) => v === undefined)) throw new WorkspaceError('INVALID_PARAMS', 'Nothing to change: pass at least one of title, body, status, priority, assignee, labels.');
        await visibleAssignee(store, me, changes.assignee);
        // `own` access: a task the caller created or is assigned, as it is inside the write.
        const own = (before: Task): void => call.requireOwn(before.created_by === me.name || before.assignee === me.name);
        return { task: taskRow(await store.updateTask(me, idOf(id), changes, own)) };
      },
      true,
    ),
  });

  defineMutationTool(ctx, {
    name: 'task_comment',
    title: 'Comment on task',
    action: 'task.comment',
    entryPoint: `${ENTRY}#task_comment`,
    description: `Comment on a task (at most ${TEAM_INPUT_CAPS.maxCommentBytes} bytes; over it nothing is written).`,
    args: { id: taskIdArg, body: z.string().describe('Comment text.') },
    caps: { maxCommentBytes: TEAM_INPUT_CAPS.maxCommentBytes },
    row: { ...mutationRow, per_item_budget: 'receipt: comment id, task key, time', backend_query_bound: 'cap checked, task resolved by primary key, then one insert' },
    outputSchema: { id: z.number(), task_key: z.string(), created_at: z.string() },
    run: withTeam(async ({ id, body }, { store, me }) => {
      const c = await store.addComment(me, idOf(id), body);
      return { id: c.id, task_key: `T-${c.task_id}`, created_at: iso(c.created_at) };
    }),
  });

  defineSearchTool(ctx, {
    name: 'task_options',
    title: 'Task field options',
    action: 'task.read',
    entryPoint: `${ENTRY}#task_options`,
    description:
      'Values a task field accepts: status, priority, label (labels in use) or assignee (members you may see). With field "assignee", q finds members whose name contains it. Not for finding tasks: use task_search.',
    args: { field: z.enum(FIELDS).describe('status, priority, label or assignee.') },
    query: { name: 'q', required: false, maxChars: TEAM_INPUT_CAPS.maxNameBytes, description: 'Only with field "assignee": part of a member name (case-insensitive).' },
    limit: { ...TEAM_PAGE_LIMITS.options, overMax: 'refuse' },
    row: {
      paging: 'keyset on the value read limit+1; has_more; signed next_cursor bound to store, field, q and caller',
      per_item_budget: `value ≤ ${TEAM_INPUT_CAPS.maxLabelBytes} bytes (+ role for members)`,
      backend_query_bound: 'fixed lists for status and priority; labels by primary key; members by the name index, filtered by role scope and q, stopped at limit+1 (bounded by the team size)',
      structured_content: 'the page object; the text block is its compact rendering (its JSON when that is no larger)',
    },
    outputSchema: { field: z.string(), options: z.array(z.object({ value: z.string(), role: z.string().optional() })), ...pageFields },
    run: withTeam(async ({ field, query, limit, cursor, sizer }, { store, me }) => {
      if (query !== undefined && field !== 'assignee') throw new WorkspaceError('INVALID_PARAMS', '`q` is only for field "assignee" (member query mode); to find tasks use task_search.');
      const bind = [field, query ?? null, me.id];
      const after = cursor === undefined ? undefined : String(cursors.decode('options', store.storeId, bind, cursor).v);
      let options: { value: string; role?: string }[];
      let more: boolean;
      if (field === 'status' || field === 'priority') {
        const all: readonly string[] = field === 'status' ? TASK_STATUSES : TASK_PRIORITIES;
        const from = after === undefined ? 0 : all.indexOf(after) + 1;
        options = all.slice(from, from + limit).map((value) => ({ value }));
        more = from + limit < all.length;
      } else if (field === 'label') {
        const page = await store.labels(after, limit);
        options = page.rows.map((value) => ({ value }));
        more = page.more;
      } else {
        const page = await store.memberOptions(me, query, after, limit);
        options = page.rows.map((m) => ({ value: m.name, role: m.role }));
        more = page.more;
      }
      const cursorAt = (value: string): string => cursors.encode('options', store.storeId, bind, { v: value });
      // A label is at most 64 bytes: the longest cursor holds one of them escaped.
      const fixed = { field, options: [], has_more: true, next_cursor: cursorRoom(cursorAt('\\'.repeat(TEAM_INPUT_CAPS.maxLabelBytes))) };
      const n = fitItems(options, sizer, fixed, 'options');
      if (n < options.length) more = true;
      options = options.slice(0, n);
      const last = options[options.length - 1];
      return { field, options, has_more: more, ...(more && last !== undefined ? { next_cursor: cursorAt(last.value) } : {}) };
    }),
  });
}
