/**
 * Tasks, labels and comments of a SQLite team store. Browsing pages by `(updated_at DESC, id DESC)`
 * through one index per exact filter (status, assignee[+status], label); search ranks the FTS5
 * index by (bm25, id), with the task a query names (`T-123`, `#123`, `123`) first.
 */
import type Database from 'better-sqlite3';
import { toFtsQuery } from './fts-query.js';
import { TEAM_INPUT_CAPS, TEAM_READ_LIMITS } from './limits.js';
import type { MemberTable } from './members.js';
import { TeamError, type Comment, type Member, type NewTask, type Page, type RankKey, type Task, type TaskChanges, type TaskFilter, type TaskHit, type TaskStatus, type TimeKey } from './types.js';
import { ByteTotal, checkLabels, checkPriority, checkStatus, checkText } from './validate.js';
import { TASKS_FROM, taskListQuery } from './task-list-query.js';

const PREFIX_CHARS = TEAM_READ_LIMITS.taskPreviewBytes;
const COLUMNS = `t.id, t.title, substr(t.body, 1, ${PREFIX_CHARS}) AS body, length(t.body) > ${PREFIX_CHARS} AS truncated, t.status, t.priority,
  a.name AS assignee, c.name AS created_by, t.created_at, t.updated_at,
  (SELECT json_group_array(label) FROM (SELECT label FROM task_labels WHERE task_id = t.id ORDER BY label)) AS labels`;
const FROM = TASKS_FROM;

interface Row {
  id: number;
  title: string;
  body: string;
  truncated: number;
  status: Task['status'];
  priority: Task['priority'];
  assignee: string | null;
  created_by: string | null;
  created_at: number;
  updated_at: number;
  labels: string;
}

/** A task row; `truncated` is set when `body` is only a prefix. */
export type PageTask = Task & { truncated: boolean };

const toTask = (r: Row): PageTask => ({
  id: r.id,
  key: `T-${r.id}`,
  title: r.title,
  body: r.body,
  truncated: r.truncated === 1,
  status: r.status,
  priority: r.priority,
  assignee: r.assignee,
  labels: JSON.parse(r.labels) as string[],
  created_by: r.created_by,
  created_at: r.created_at,
  updated_at: r.updated_at,
});

/** The task id a query names: `T-123`, `t123`, `#123` or `123`. */
export function taskIdOf(q: string): number | undefined {
  const m = /^\s*(?:[Tt]-?|#)?(\d{1,15})\s*$/.exec(q);
  return m === null ? undefined : Number(m[1]);
}

export class TaskTable {
  constructor(
    private readonly db: Database.Database,
    private readonly members: MemberTable,
  ) {}

  private checkFields(t: TaskChanges, total: ByteTotal): { labels?: string[]; assigneeId?: number | null } {
    if (t.title !== undefined) checkText('title', t.title, TEAM_INPUT_CAPS.maxTitleBytes, 'maxTitleBytes', total);
    if (t.body !== undefined) total.add('body', t.body, TEAM_INPUT_CAPS.maxTaskBodyBytes, 'maxTaskBodyBytes');
    if (t.status !== undefined) checkStatus(t.status);
    if (t.priority !== undefined) checkPriority(t.priority);
    const out: { labels?: string[]; assigneeId?: number | null } = {};
    if (t.labels !== undefined) out.labels = checkLabels(t.labels, total);
    if (t.assignee !== undefined) out.assigneeId = t.assignee === null ? null : this.members.requireActive(t.assignee, 'assignee').id;
    return out;
  }

  private setLabels(id: number, labels: string[], at: number): void {
    this.db.prepare(`DELETE FROM task_labels WHERE task_id = ?`).run(id);
    const addLabel = this.db.prepare(`INSERT OR IGNORE INTO labels (name) VALUES (?)`);
    const link = this.db.prepare(`INSERT INTO task_labels (task_id, label, updated_at) VALUES (?, ?, ?)`);
    for (const l of labels) {
      addLabel.run(l);
      link.run(id, l, at);
    }
  }

  /** Check every field, then insert. Call inside a transaction. */
  create(author: Member | null, t: NewTask, at = Date.now(), updatedAt = at): Task {
    const total = new ByteTotal();
    if (t.title === undefined) throw new TeamError('INVALID_PARAMS', '`title` is required.');
    const { labels, assigneeId } = this.checkFields(t, total);
    const info = this.db
      .prepare(`INSERT INTO tasks (title, body, status, priority, assignee_id, created_by, created_at, updated_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?)`)
      .run(t.title, t.body ?? '', t.status ?? 'open', t.priority ?? 'normal', assigneeId ?? null, author?.id ?? null, at, updatedAt);
    const id = Number(info.lastInsertRowid);
    if (labels !== undefined) this.setLabels(id, labels, updatedAt);
    return this.get(id);
  }

  /** Check every change, then apply them and bump `updated_at`. Call inside a transaction. */
  update(id: number, changes: TaskChanges, check?: (before: Task) => void): Task {
    const total = new ByteTotal();
    const { labels, assigneeId } = this.checkFields(changes, total);
    const before = this.get(id);
    check?.(before);
    const sets: string[] = [];
    const params: unknown[] = [];
    const put = (col: string, v: unknown): void => {
      sets.push(`${col} = ?`);
      params.push(v);
    };
    if (changes.title !== undefined) put('title', changes.title);
    if (changes.body !== undefined) put('body', changes.body);
    if (changes.status !== undefined) put('status', changes.status);
    if (changes.priority !== undefined) put('priority', changes.priority);
    if (assigneeId !== undefined) put('assignee_id', assigneeId);
    // Strictly later than before, so an updated task moves ahead of every cursor already handed out.
    const prev = this.db.prepare<[number], { updated_at: number }>(`SELECT updated_at FROM tasks WHERE id = ?`).get(id)!.updated_at;
    const at = Math.max(Date.now(), prev + 1);
    put('updated_at', at);
    this.db.prepare(`UPDATE tasks SET ${sets.join(', ')} WHERE id = ?`).run(...params, id);
    if (labels !== undefined) this.setLabels(id, labels, at);
    return this.get(id);
  }

  /** One task with its whole body. */
  get(id: number): Task {
    const r = this.db.prepare<[number], Row>(`SELECT ${COLUMNS.replace(`substr(t.body, 1, ${PREFIX_CHARS})`, 't.body')} FROM ${FROM} WHERE t.id = ?`).get(id);
    if (r === undefined) throw new TeamError('NOT_FOUND', `No task T-${id}. Use search_tasks to find a task by its title or text.`);
    const { truncated: _, ...task } = toTask(r);
    return task;
  }

  list(filter: TaskFilter, after: TimeKey | undefined, limit: number): Page<PageTask> {
    let assigneeId: number | undefined;
    if (filter.assignee !== undefined) {
      const m = this.members.get(filter.assignee);
      if (m === undefined) throw new TeamError('NOT_FOUND', `\`assignee\`: no member named ${JSON.stringify(filter.assignee)}.`);
      assigneeId = m.id;
    }
    const { sql, params } = taskListQuery(COLUMNS, filter, assigneeId, after, limit, () => '?');
    const rows = this.db.prepare<unknown[], Row>(sql).all(...params);
    return { rows: rows.slice(0, limit).map(toTask), more: rows.length > limit };
  }

  lastId(): number {
    return this.db.prepare<[], { id: number | null }>(`SELECT max(id) AS id FROM tasks`).get()?.id ?? 0;
  }

  /**
   * The identity hit first (when asked and the query names an existing task), then (bm25, id)
   * among ids ≤ snapshot, the identity hit excluded. A query that is only an id matches no words
   * beyond it when the text has none.
   */
  search(q: string, status: TaskStatus | undefined, snapshot: number, after: RankKey | undefined, withIdentity: boolean, limit: number): Page<TaskHit & { truncated: boolean }> {
    const idq = taskIdOf(q);
    const hits: (TaskHit & { truncated: boolean })[] = [];
    if (withIdentity && idq !== undefined) {
      const r = this.db.prepare<[number], Row>(`SELECT ${COLUMNS} FROM ${FROM} WHERE t.id = ?`).get(idq);
      if (r !== undefined && (status === undefined || r.status === status)) hits.push({ ...toTask(r), score: null, snippet: '' });
    }
    let match: string;
    try {
      match = toFtsQuery(q);
    } catch (e) {
      if (idq !== undefined) return { rows: hits, more: false };
      throw e;
    }
    const where = [`tasks_fts MATCH ?`, `tasks_fts.rowid <= ?`];
    const params: unknown[] = [match, snapshot];
    if (idq !== undefined) {
      where.push(`tasks_fts.rowid <> ?`);
      params.push(idq);
    }
    if (after !== undefined) {
      // Re-anchored on the row's current score, as in MessageTable.search (corpus statistics drift).
      const now = this.db
        .prepare<[string, number], { score: number }>(`SELECT bm25(tasks_fts) AS score FROM tasks_fts WHERE tasks_fts MATCH ? AND rowid + 0 = ?`)
        .get(match, after.id);
      where.push(`(bm25(tasks_fts), tasks_fts.rowid) > (?, ?)`);
      params.push(now?.score ?? after.score, after.id);
    }
    if (status !== undefined) {
      where.push(`EXISTS (SELECT 1 FROM tasks WHERE id = tasks_fts.rowid AND status = ?)`);
      params.push(checkStatus(status));
    }
    const want = limit - hits.length;
    const ranked = this.db
      .prepare<unknown[], { id: number; score: number }>(`SELECT tasks_fts.rowid AS id, bm25(tasks_fts) AS score FROM tasks_fts WHERE ${where.join(' AND ')} ORDER BY score, id LIMIT ?`)
      .all(...params, want + 1);
    const page = ranked.slice(0, want);
    if (page.length > 0) {
      const ids = page.map((r) => r.id);
      const marks = ids.map(() => '?').join(',');
      const rows = new Map(this.db.prepare<unknown[], Row>(`SELECT ${COLUMNS} FROM ${FROM} WHERE t.id IN (${marks})`).all(...ids).map((r) => [r.id, r]));
      const snippets = new Map(
        this.db
          .prepare<unknown[], { id: number; s: string }>(
            `SELECT rowid AS id, snippet(tasks_fts, -1, '[', ']', '…', ${TEAM_READ_LIMITS.snippetTokens}) AS s FROM tasks_fts WHERE tasks_fts MATCH ? AND rowid IN (${marks})`,
          )
          .all(match, ...ids)
          .map((r) => [r.id, r.s]),
      );
      for (const r of page) {
        const row = rows.get(r.id);
        if (row !== undefined) hits.push({ ...toTask(row), score: r.score, snippet: snippets.get(r.id) ?? '' });
      }
    }
    return { rows: hits, more: ranked.length > want };
  }

  /** Check, then insert a comment. Call inside a transaction. */
  comment(author: Member | null, taskId: number, body: string, at = Date.now()): Comment {
    checkText('body', body, TEAM_INPUT_CAPS.maxCommentBytes, 'maxCommentBytes', new ByteTotal());
    this.get(taskId);
    const id = Number(this.db.prepare(`INSERT INTO comments (task_id, author_id, body, created_at) VALUES (?, ?, ?, ?)`).run(taskId, author?.id ?? null, body, at).lastInsertRowid);
    return { id, task_id: taskId, author: author?.name ?? null, body, created_at: at };
  }

  comments(taskId: number, after: TimeKey | undefined, limit: number): Page<Comment> {
    this.get(taskId);
    const rows = this.db
      .prepare<unknown[], Comment>(
        `SELECT k.id, k.task_id, a.name AS author, k.body, k.created_at FROM comments k LEFT JOIN members a ON a.id = k.author_id
         WHERE k.task_id = ? ${after === undefined ? '' : 'AND (k.created_at, k.id) < (?, ?)'} ORDER BY k.created_at DESC, k.id DESC LIMIT ?`,
      )
      .all(taskId, ...(after === undefined ? [] : [after.at, after.id]), limit + 1);
    return { rows: rows.slice(0, limit), more: rows.length > limit };
  }

  labels(after: string | undefined, limit: number): Page<string> {
    const rows = this.db.prepare<[string, number], { name: string }>(`SELECT name FROM labels WHERE name > ? ORDER BY name LIMIT ?`).all(after ?? '', limit + 1);
    return { rows: rows.slice(0, limit).map((r) => r.name), more: rows.length > limit };
  }
}
