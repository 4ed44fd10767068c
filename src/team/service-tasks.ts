/**
 * Tasks, labels and comments of the team store. Browsing pages by `(updated_at DESC, id DESC)`
 * through one index per exact filter (service-task-list.ts); search puts the task a query names
 * (`T-123`, `#123`, `123`) first, then ranks the rest by (score, id) among ids ≤ the snapshot (the
 * ranking is the dialect's). Every mutation checks all of its fields before it writes.
 */
import type { TeamDialect } from './dialect.js';
import { toFtsQuery } from './fts-query.js';
import { TEAM_INPUT_CAPS } from './limits.js';
import { pageOf, insertedId, q, withExactTimes, type Rule } from './rule.js';
import type { MemberRules } from './service-members.js';
import { noAssignee, noTask } from './service-errors.js';
import { TASKS_FROM, TASK_PAGE_BODY, TASK_WHOLE_BODY, taskColumns, toTask, type PageTask, type TaskRow } from './service-rows.js';
import { taskListQuery } from './service-task-list.js';
import { TeamError, type Comment, type Member, type NewTask, type Page, type RankKey, type Task, type TaskChanges, type TaskFilter, type TaskHit, type TaskStatus, type TimeKey, type ExactTime } from './types.js';
import { ByteTotal, checkLabels, checkPriority, checkStatus, checkText, taskIdOf } from './validate.js';

const INSERT = `INSERT INTO tasks (title, body, status, priority, assignee_id, created_by, created_at, updated_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?) RETURNING id`;
const TOUCH_LABELS = `UPDATE task_labels SET updated_at = ? WHERE task_id = ?`;
const DROP_LABELS = `DELETE FROM task_labels WHERE task_id = ?`;
const LAST_ID = `SELECT max(id) AS id FROM tasks`;
const INSERT_COMMENT = `INSERT INTO comments (task_id, author_id, body, created_at) VALUES (?, ?, ?, ?) RETURNING id`;
const COMMENTS = `SELECT k.id, k.task_id, a.name AS author, CAST(k.body AS TEXT) AS body, k.created_at FROM comments k LEFT JOIN members a ON a.id = k.author_id WHERE k.task_id = ?`;
const COMMENTS_FIRST = `${COMMENTS} ORDER BY k.created_at DESC, k.id DESC LIMIT ?`;
const COMMENTS_AFTER = `${COMMENTS} AND (k.created_at, k.id) < (?, ?) ORDER BY k.created_at DESC, k.id DESC LIMIT ?`;
const EXACT_COMMENT_TIME = `SELECT CAST(created_at AS TEXT) AS k FROM comments WHERE id = ?`;
const EXACT_UPDATED = `SELECT CAST(updated_at AS TEXT) AS k FROM tasks WHERE id = ?`;
const LABELS = `SELECT name FROM labels WHERE name > ? ORDER BY name LIMIT ?`;

/** `n` rows of `cols` placeholders, for a multi-row VALUES. */
const rowsOf = (n: number, cols: number): string => Array.from({ length: n }, () => `(${Array.from({ length: cols }, () => '?').join(', ')})`).join(', ');

export type TaskHitRow = TaskHit & { truncated: boolean };

/** The tasks, labels and comments tables' rules. */
export class TaskRules {
  /** Columns of a page row (a body prefix). */
  private readonly pageColumns: string;
  private readonly byId: string;
  private readonly byIdWhole: string;
  private readonly updatedAt: string;

  constructor(
    private readonly d: TeamDialect,
    private readonly members: MemberRules,
  ) {
    this.pageColumns = taskColumns(TASK_PAGE_BODY, d.taskLabels);
    this.byId = `SELECT ${this.pageColumns} FROM ${TASKS_FROM} WHERE t.id = ?`;
    this.byIdWhole = `SELECT ${taskColumns(TASK_WHOLE_BODY, d.taskLabels)} FROM ${TASKS_FROM} WHERE t.id = ?`;
    this.updatedAt = `SELECT updated_at FROM tasks WHERE id = ?${d.forUpdate}`;
  }

  private *checkFields(t: TaskChanges, total: ByteTotal): Rule<{ labels?: string[]; assigneeId?: number | null }> {
    if (t.title !== undefined) checkText('title', t.title, TEAM_INPUT_CAPS.maxTitleBytes, 'maxTitleBytes', total);
    if (t.body !== undefined) total.add('body', t.body, TEAM_INPUT_CAPS.maxTaskBodyBytes, 'maxTaskBodyBytes');
    if (t.status !== undefined) checkStatus(t.status);
    if (t.priority !== undefined) checkPriority(t.priority);
    const out: { labels?: string[]; assigneeId?: number | null } = {};
    if (t.labels !== undefined) out.labels = checkLabels(t.labels, total);
    if (t.assignee !== undefined) out.assigneeId = t.assignee === null ? null : (yield* this.members.requireActive(t.assignee, 'assignee')).id;
    return out;
  }

  /** Replace a task's labels (deduplicated by `checkLabels`), each stamped with `at`. */
  private *setLabels(id: number, labels: readonly string[], at: number): Rule<void> {
    yield* q.run(DROP_LABELS, [id]);
    if (labels.length === 0) return;
    yield* q.run(`INSERT INTO labels (name) VALUES ${rowsOf(labels.length, 1)} ON CONFLICT DO NOTHING`, labels);
    yield* q.run(`INSERT INTO task_labels (task_id, label, updated_at) VALUES ${rowsOf(labels.length, 3)}`, labels.flatMap((l) => [id, l, at]));
  }

  /** Check every field, then insert. In a write; `at` defaults to the time the write runs. */
  *create(author: Member | null, t: NewTask, createdAt?: number, updatedAt?: number): Rule<Task> {
    const at = createdAt ?? Date.now();
    const total = new ByteTotal();
    if (t.title === undefined) throw new TeamError('INVALID_PARAMS', '`title` is required.');
    const { labels, assigneeId } = yield* this.checkFields(t, total);
    const id = yield* insertedId(INSERT, [t.title, t.body ?? '', t.status ?? 'open', t.priority ?? 'normal', assigneeId ?? null, author?.id ?? null, at, updatedAt ?? at]);
    if (labels !== undefined) yield* this.setLabels(id, labels, updatedAt ?? at);
    return yield* this.get(id);
  }

  /**
   * Check every change, then apply them and bump `updated_at`. `check` sees the task as the write
   * found it (its row locked where the engine locks rows). In a write.
   */
  *update(id: number, changes: TaskChanges, check?: (before: Task) => void): Rule<Task> {
    const { labels, assigneeId } = yield* this.checkFields(changes, new ByteTotal());
    const prev = yield* q.get<{ updated_at: number }>(this.updatedAt, [id]);
    if (prev === undefined) throw noTask(id);
    if (check !== undefined) check(yield* this.get(id));
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
    const at = Math.max(Date.now(), prev.updated_at + 1);
    put('updated_at', at);
    yield* q.run(`UPDATE tasks SET ${sets.join(', ')} WHERE id = ?`, [...params, id]);
    // The label index pages on a copy of updated_at. (SQLite's schema also has a trigger copying
    // it; released migrations are never edited, and the rule does not lean on it.)
    if (labels === undefined) yield* q.run(TOUCH_LABELS, [at, id]);
    else yield* this.setLabels(id, labels, at);
    return yield* this.get(id);
  }

  /** One task with its whole body. */
  *get(id: number): Rule<Task> {
    const r = yield* q.get<TaskRow>(this.byIdWhole, [id]);
    if (r === undefined) throw noTask(id);
    const { truncated: _, ...task } = toTask(r);
    return task;
  }

  *list(filter: TaskFilter, after: TimeKey | undefined, limit: number): Rule<Page<PageTask>> {
    let assigneeId: number | undefined;
    if (filter.assignee !== undefined) {
      const m = yield* this.members.get(filter.assignee);
      if (m === undefined) throw noAssignee(filter.assignee);
      assigneeId = m.id;
    }
    const { sql, params } = taskListQuery(this.pageColumns, filter, assigneeId, after, limit);
    return pageOf(yield* withExactTimes((yield* q.all<TaskRow>(sql, params)).map(toTask), (t) => t.updated_at, EXACT_UPDATED), limit);
  }

  *lastId(): Rule<number> {
    return (yield* q.get<{ id: number | null }>(LAST_ID))?.id ?? 0;
  }

  /**
   * The identity hit first (when asked and the query names an existing task), then (score, id)
   * among ids ≤ snapshot, the identity hit excluded. A query that is only an id matches no words
   * beyond it when the text has none.
   */
  *search(query: string, status: TaskStatus | undefined, snapshot: number, after: RankKey | undefined, withIdentity: boolean, limit: number): Rule<Page<TaskHitRow>> {
    const idq = taskIdOf(query);
    const hits: TaskHitRow[] = [];
    if (withIdentity && idq !== undefined) {
      const r = yield* q.get<TaskRow>(this.byId, [idq]);
      if (r !== undefined && (status === undefined || r.status === status)) hits.push({ ...toTask(r), score: null, snippet: '' });
    }
    let match: string;
    try {
      match = toFtsQuery(query);
    } catch (e) {
      if (idq !== undefined) return { rows: hits, more: false };
      throw e;
    }
    const want = limit - hits.length;
    const ranked = yield* this.d.rankTasks({ match, snapshot, exclude: idq, status: status === undefined ? undefined : checkStatus(status), after, rows: want + 1 });
    const page = ranked.slice(0, want);
    if (page.length > 0) {
      const rows = new Map((yield* this.d.taskHits(match, page.map((r) => r.id))).map((r) => [r.id, r]));
      for (const r of page) {
        const row = rows.get(r.id);
        if (row !== undefined) hits.push({ ...toTask(row), score: r.score, snippet: row.snippet });
      }
    }
    return { rows: hits, more: ranked.length > want };
  }

  /** Check, then insert a comment. In a write. */
  *comment(author: Member | null, taskId: number, body: string, createdAt?: number): Rule<Comment> {
    const at = createdAt ?? Date.now();
    checkText('body', body, TEAM_INPUT_CAPS.maxCommentBytes, 'maxCommentBytes', new ByteTotal());
    yield* this.get(taskId);
    const id = yield* insertedId(INSERT_COMMENT, [taskId, author?.id ?? null, body, at]);
    return { id, task_id: taskId, author: author?.name ?? null, body, created_at: at };
  }

  *comments(taskId: number, after: TimeKey | undefined, limit: number): Rule<Page<Comment & ExactTime>> {
    yield* this.get(taskId);
    const rows = after === undefined ? yield* q.all<Comment>(COMMENTS_FIRST, [taskId, limit + 1]) : yield* q.all<Comment>(COMMENTS_AFTER, [taskId, after.at, after.id, limit + 1]);
    return pageOf(yield* withExactTimes<Comment & ExactTime>(rows, (c) => c.created_at, EXACT_COMMENT_TIME), limit);
  }

  *labels(after: string | undefined, limit: number): Rule<Page<string>> {
    const rows = yield* q.all<{ name: string }>(LABELS, [after ?? '', limit + 1]);
    return pageOf(rows.map((r) => r.name), limit);
  }
}
