/**
 * Tasks, labels and comments of a PostgreSQL team store, with the SQLite side's contract
 * (tasks.ts): browsing by `(updated_at DESC, id DESC)` through one index per exact filter, search
 * ranked by `(-ts_rank, id)` among ids ≤ the snapshot with the task a query names first.
 */
import { toFtsQuery } from './fts-query.js';
import { TEAM_INPUT_CAPS, TEAM_READ_LIMITS } from './limits.js';
import { pageOf, type Queryable } from './pg-db.js';
import { pgMembers } from './pg-members.js';
import { HEADLINE_OPTIONS, tsQuery } from './pg-messages.js';
import { TS_CONFIG } from './pg-schema.js';
import { taskIdOf, type PageTask } from './tasks.js';
import { TeamError, type Comment, type Member, type NewTask, type Page, type RankKey, type Task, type TaskChanges, type TaskFilter, type TaskHit, type TaskStatus, type TimeKey } from './types.js';
import { ByteTotal, checkLabels, checkPriority, checkStatus, checkText } from './validate.js';
import { TASKS_FROM, taskListQuery } from './task-list-query.js';

const PREFIX_CHARS = TEAM_READ_LIMITS.taskPreviewBytes;
const columns = (body: string): string => `t.id, t.title, ${body} AS body, length(t.body) > ${PREFIX_CHARS} AS truncated, t.status, t.priority,
  a.name AS assignee, c.name AS created_by, t.created_at, t.updated_at,
  coalesce((SELECT json_agg(label ORDER BY label) FROM task_labels WHERE task_id = t.id), '[]'::json) AS labels`;
const COLUMNS = columns(`left(t.body, ${PREFIX_CHARS})`);
const FROM = TASKS_FROM;

interface Row {
  id: number;
  title: string;
  body: string;
  truncated: boolean;
  status: Task['status'];
  priority: Task['priority'];
  assignee: string | null;
  created_by: string | null;
  created_at: number;
  updated_at: number;
  labels: string[];
}

const toTask = (r: Row): PageTask => ({
  id: r.id,
  key: `T-${r.id}`,
  title: r.title,
  body: r.body,
  truncated: r.truncated,
  status: r.status,
  priority: r.priority,
  assignee: r.assignee,
  labels: r.labels,
  created_by: r.created_by,
  created_at: r.created_at,
  updated_at: r.updated_at,
});

async function checkFields(db: Queryable, t: TaskChanges, total: ByteTotal): Promise<{ labels?: string[]; assigneeId?: number | null }> {
  if (t.title !== undefined) checkText('title', t.title, TEAM_INPUT_CAPS.maxTitleBytes, 'maxTitleBytes', total);
  if (t.body !== undefined) total.add('body', t.body, TEAM_INPUT_CAPS.maxTaskBodyBytes, 'maxTaskBodyBytes');
  if (t.status !== undefined) checkStatus(t.status);
  if (t.priority !== undefined) checkPriority(t.priority);
  const out: { labels?: string[]; assigneeId?: number | null } = {};
  if (t.labels !== undefined) out.labels = checkLabels(t.labels, total);
  if (t.assignee !== undefined) out.assigneeId = t.assignee === null ? null : (await pgMembers.requireActive(db, t.assignee, 'assignee')).id;
  return out;
}

async function setLabels(db: Queryable, id: number, labels: string[], at: number): Promise<void> {
  await db.query(`DELETE FROM task_labels WHERE task_id = $1`, [id]);
  if (labels.length === 0) return;
  await db.query(`INSERT INTO labels (name) SELECT unnest($1::text[]) ON CONFLICT DO NOTHING`, [labels]);
  await db.query(`INSERT INTO task_labels (task_id, label, updated_at) SELECT $1, unnest($2::text[]), $3`, [id, labels, at]);
}

/** The tasks tables' queries; each takes the pool or a transaction's client. */
export const pgTasks = {
  /** Check every field, then insert. Call inside a write transaction. */
  async create(db: Queryable, author: Member | null, t: NewTask, at = Date.now(), updatedAt = at): Promise<Task> {
    const total = new ByteTotal();
    if (t.title === undefined) throw new TeamError('INVALID_PARAMS', '`title` is required.');
    const { labels, assigneeId } = await checkFields(db, t, total);
    const id = (
      await db.query<{ id: number }>(
        `INSERT INTO tasks (title, body, status, priority, assignee_id, created_by, created_at, updated_at) VALUES ($1, $2, $3, $4, $5, $6, $7, $8) RETURNING id`,
        [t.title, t.body ?? '', t.status ?? 'open', t.priority ?? 'normal', assigneeId ?? null, author?.id ?? null, at, updatedAt],
      )
    ).rows[0]!.id;
    if (labels !== undefined) await setLabels(db, id, labels, updatedAt);
    return pgTasks.get(db, id);
  },

  /** Check every change, then apply them and bump `updated_at`. Call inside a write transaction. */
  async update(db: Queryable, id: number, changes: TaskChanges, check?: (before: Task) => void): Promise<Task> {
    const { labels, assigneeId } = await checkFields(db, changes, new ByteTotal());
    const prev = (await db.query<{ updated_at: number }>(`SELECT updated_at FROM tasks WHERE id = $1 FOR UPDATE`, [id])).rows[0];
    if (prev === undefined) throw new TeamError('NOT_FOUND', `No task T-${id}. Use search_tasks to find a task by its title or text.`);
    if (check !== undefined) check(await pgTasks.get(db, id)); // the row is locked: it is what the update changes
    const sets: string[] = [];
    const params: unknown[] = [];
    const put = (col: string, v: unknown): void => void sets.push(`${col} = $${params.push(v)}`);
    if (changes.title !== undefined) put('title', changes.title);
    if (changes.body !== undefined) put('body', changes.body);
    if (changes.status !== undefined) put('status', changes.status);
    if (changes.priority !== undefined) put('priority', changes.priority);
    if (assigneeId !== undefined) put('assignee_id', assigneeId);
    // Strictly later than before, so an updated task moves ahead of every cursor already handed out.
    const at = Math.max(Date.now(), prev.updated_at + 1);
    put('updated_at', at);
    await db.query(`UPDATE tasks SET ${sets.join(', ')} WHERE id = $${params.push(id)}`, params);
    await db.query(`UPDATE task_labels SET updated_at = $1 WHERE task_id = $2`, [at, id]);
    if (labels !== undefined) await setLabels(db, id, labels, at);
    return pgTasks.get(db, id);
  },

  /** One task with its whole body. */
  async get(db: Queryable, id: number): Promise<Task> {
    const r = (await db.query<Row>(`SELECT ${columns('t.body')} FROM ${FROM} WHERE t.id = $1`, [id])).rows[0];
    if (r === undefined) throw new TeamError('NOT_FOUND', `No task T-${id}. Use search_tasks to find a task by its title or text.`);
    const { truncated: _, ...task } = toTask(r);
    return task;
  },

  async list(db: Queryable, filter: TaskFilter, after: TimeKey | undefined, limit: number): Promise<Page<PageTask>> {
    let assigneeId: number | undefined;
    if (filter.assignee !== undefined) {
      const m = await pgMembers.get(db, filter.assignee);
      if (m === undefined) throw new TeamError('NOT_FOUND', `\`assignee\`: no member named ${JSON.stringify(filter.assignee)}.`);
      assigneeId = m.id;
    }
    const { sql, params } = taskListQuery(COLUMNS, filter, assigneeId, after, limit, (n) => `$${n}`);
    return pageOf((await db.query<Row>(sql, params)).rows.map(toTask), limit);
  },

  async lastId(db: Queryable): Promise<number> {
    return (await db.query<{ id: number | null }>(`SELECT max(id) AS id FROM tasks`)).rows[0]?.id ?? 0;
  },

  /** The identity hit first (when asked and it exists), then `(-ts_rank, id)` among ids ≤ snapshot. */
  async search(db: Queryable, q: string, status: TaskStatus | undefined, snapshot: number, after: RankKey | undefined, withIdentity: boolean, limit: number): Promise<Page<TaskHit & { truncated: boolean }>> {
    const idq = taskIdOf(q);
    const hits: (TaskHit & { truncated: boolean })[] = [];
    if (withIdentity && idq !== undefined) {
      const r = (await db.query<Row>(`SELECT ${COLUMNS} FROM ${FROM} WHERE t.id = $1`, [idq])).rows[0];
      if (r !== undefined && (status === undefined || r.status === status)) hits.push({ ...toTask(r), score: null, snippet: '' });
    }
    let match: string;
    try {
      match = toFtsQuery(q);
    } catch (e) {
      if (idq !== undefined) return { rows: hits, more: false };
      throw e;
    }
    const params: unknown[] = [match, snapshot];
    const where = [`fts @@ ${tsQuery(1)}`, `id <= $2`];
    if (idq !== undefined) where.push(`id <> $${params.push(idq)}`);
    if (status !== undefined) where.push(`status = $${params.push(checkStatus(status))}`);
    const keyset = after === undefined ? '' : `WHERE (r.score, r.id) > ($${params.push(after.score)}::real, $${params.push(after.id)}::bigint)`;
    const want = limit - hits.length;
    const ranked = (
      await db.query<{ id: number; score: number }>(
        `SELECT r.id, r.score FROM (SELECT id, -ts_rank(fts, ${tsQuery(1)}) AS score FROM tasks WHERE ${where.join(' AND ')}) r ${keyset} ORDER BY r.score, r.id LIMIT $${params.push(want + 1)}`,
        params,
      )
    ).rows;
    const page = ranked.slice(0, want);
    if (page.length > 0) {
      const rows = (
        await db.query<Row & { snippet: string }>(
          `SELECT ${COLUMNS}, ts_headline(${TS_CONFIG}, t.title || ' ' || t.body, ${tsQuery(1)}, '${HEADLINE_OPTIONS}') AS snippet FROM ${FROM} WHERE t.id = ANY($2::bigint[])`,
          [match, page.map((r) => r.id)],
        )
      ).rows;
      const byId = new Map(rows.map((r) => [r.id, r]));
      for (const r of page) {
        const row = byId.get(r.id);
        if (row !== undefined) hits.push({ ...toTask(row), score: r.score, snippet: row.snippet });
      }
    }
    return { rows: hits, more: ranked.length > want };
  },

  /** Check, then insert a comment. Call inside a write transaction. */
  async comment(db: Queryable, author: Member | null, taskId: number, body: string, at = Date.now()): Promise<Comment> {
    checkText('body', body, TEAM_INPUT_CAPS.maxCommentBytes, 'maxCommentBytes', new ByteTotal());
    await pgTasks.get(db, taskId);
    const id = (await db.query<{ id: number }>(`INSERT INTO comments (task_id, author_id, body, created_at) VALUES ($1, $2, $3, $4) RETURNING id`, [taskId, author?.id ?? null, body, at])).rows[0]!.id;
    return { id, task_id: taskId, author: author?.name ?? null, body, created_at: at };
  },

  async comments(db: Queryable, taskId: number, after: TimeKey | undefined, limit: number): Promise<Page<Comment>> {
    await pgTasks.get(db, taskId);
    const params: unknown[] = [taskId, limit + 1];
    const rows = (
      await db.query<Comment>(
        `SELECT k.id, k.task_id, a.name AS author, k.body, k.created_at FROM comments k LEFT JOIN members a ON a.id = k.author_id
         WHERE k.task_id = $1 ${after === undefined ? '' : `AND (k.created_at, k.id) < ($${params.push(after.at)}, $${params.push(after.id)})`} ORDER BY k.created_at DESC, k.id DESC LIMIT $2`,
        params,
      )
    ).rows;
    return pageOf(rows, limit);
  },

  async labels(db: Queryable, after: string | undefined, limit: number): Promise<Page<string>> {
    const rows = (await db.query<{ name: string }>(`SELECT name FROM labels WHERE name > $1 ORDER BY name LIMIT $2`, [after ?? '', limit + 1])).rows;
    return pageOf(rows.map((r) => r.name), limit);
  },
};
