/**
 * The `task_list` query: newest change first by the keyset (updated_at, id); with a label, paged
 * on the label index (label, updated_at, task_id) and joined to the tasks; status and assignee as
 * filters; limit+1 rows. The caller gives the columns and the assignee's member id.
 */
import { TASKS_FROM } from './service-rows.js';
import type { TaskFilter, TimeKey } from './types.js';
import { checkStatus } from './validate.js';

/** The SQL (`?` parameters) and parameters of one page. */
export function taskListQuery(columns: string, filter: TaskFilter, assigneeId: number | undefined, after: TimeKey | undefined, limit: number): { sql: string; params: unknown[] } {
  const where: string[] = [];
  const params: unknown[] = [];
  const p = (v: unknown): string => (params.push(v), '?');
  let order = `t.updated_at DESC, t.id DESC`;
  let key = `(t.updated_at, t.id)`;
  let from = TASKS_FROM;
  if (filter.label !== undefined) {
    // The label index holds (label, updated_at, task_id): page it, then join the tasks.
    from = `task_labels l JOIN ${TASKS_FROM.replace('tasks t', 'tasks t ON t.id = l.task_id')}`;
    where.push(`l.label = ${p(filter.label)}`);
    order = `l.updated_at DESC, l.task_id DESC`;
    key = `(l.updated_at, l.task_id)`;
  }
  if (filter.status !== undefined) where.push(`t.status = ${p(checkStatus(filter.status))}`);
  if (assigneeId !== undefined) where.push(`t.assignee_id = ${p(assigneeId)}`);
  if (after !== undefined) where.push(`${key} < (${p(after.at)}, ${p(after.id)})`);
  const sql = `SELECT ${columns} FROM ${from} ${where.length > 0 ? `WHERE ${where.join(' AND ')}` : ''} ORDER BY ${order} LIMIT ${p(limit + 1)}`;
  return { sql, params };
}
