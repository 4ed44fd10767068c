/**
 * Rows as the store's queries select them, and their mapping to records, for the service and both
 * dialects. The columns are written once in SQL both engines read (`substr`, `length`, row joins);
 * what comes back differs only in kind, and the mappers settle it: a comparison is `0`/`1` on
 * SQLite and a boolean on PostgreSQL, a task's labels JSON text or an array. (PostgreSQL's `bigint`
 * ids and times arrive as numbers already: pg-connect.ts parses them so.)
 */
import { TEAM_READ_LIMITS } from './limits.js';
import type { ExactTime, Member, Message, Role, Task } from './types.js';

/** Characters of a message body a page row carries (the tool cuts it to its byte preview). */
const MESSAGE_PREFIX_CHARS = TEAM_READ_LIMITS.previewBytes;
/** Characters of a task body a page row carries. */
const TASK_PREFIX_CHARS = TEAM_READ_LIMITS.taskPreviewBytes;

/** Messages joined to their channel and author. */
export const MESSAGE_FROM = `messages m JOIN channels c ON c.id = m.channel_id LEFT JOIN members a ON a.id = m.author_id`;

/** Columns of a message page row: the body as a prefix, `truncated` saying whether it was cut. */
export const MESSAGE_PAGE_COLUMNS = `m.id, c.name AS channel, a.name AS author, substr(CAST(m.body AS TEXT), 1, ${MESSAGE_PREFIX_CHARS}) AS body,
  length(CAST(m.body AS TEXT)) > ${MESSAGE_PREFIX_CHARS} AS truncated, m.reply_to, m.created_at`;

/** Columns of one whole message. */
export const MESSAGE_COLUMNS = `m.id, c.name AS channel, a.name AS author, CAST(m.body AS TEXT) AS body, m.reply_to, m.created_at`;

/** Tasks joined to their assignee and creator. */
export const TASKS_FROM = `tasks t LEFT JOIN members a ON a.id = t.assignee_id LEFT JOIN members c ON c.id = t.created_by`;

/**
 * Columns of a task row. `body`: the body expression (a prefix for pages, `t.body` for one task);
 * `labels`: the dialect's expression of the task's labels as a JSON array, by name.
 */
export function taskColumns(body: string, labels: string): string {
  return `t.id, CAST(t.title AS TEXT) AS title, ${body} AS body, length(CAST(t.body AS TEXT)) > ${TASK_PREFIX_CHARS} AS truncated, t.status, t.priority,
  a.name AS assignee, c.name AS created_by, t.created_at, t.updated_at, ${labels} AS labels`;
}

/** The page form of a task's body. */
export const TASK_PAGE_BODY = `substr(CAST(t.body AS TEXT), 1, ${TASK_PREFIX_CHARS})`;

/** The whole body of one task. */
export const TASK_WHOLE_BODY = `CAST(t.body AS TEXT)`;

/** A comparison as either engine returns it. */
type Flag = number | boolean;

const isSet = (v: Flag): boolean => v === true || v === 1;

export interface MemberRow {
  id: number;
  name: string;
  role: Role;
  active: Flag;
}

export interface MessageRow {
  id: number;
  channel: string;
  author: string | null;
  body: string;
  truncated?: Flag;
  reply_to: number | null;
  created_at: number;
}

export interface TaskRow {
  id: number;
  title: string;
  body: string;
  truncated: Flag;
  status: Task['status'];
  priority: Task['priority'];
  assignee: string | null;
  created_by: string | null;
  created_at: number;
  updated_at: number;
  /** JSON text (SQLite) or the parsed array (PostgreSQL). */
  labels: string | string[];
}

/** A row with the dialect's snippet of the search terms. */
export type WithSnippet<R> = R & { snippet: string };

/** A message row; `truncated` is set when `body` is only a prefix. */
export type PageMessage = Message & ExactTime & { truncated?: boolean };

/** A task row; `truncated` is set when `body` is only a prefix. */
export type PageTask = Task & ExactTime & { truncated: boolean };

export const toMember = (r: MemberRow): Member => ({ id: r.id, name: r.name, role: r.role, active: isSet(r.active) });

/** A message row as a message (`truncated` kept when the row has it). */
export function toMessage(r: MessageRow): PageMessage {
  const m: PageMessage = { id: r.id, channel: r.channel, author: r.author, body: r.body, reply_to: r.reply_to, created_at: r.created_at };
  if (r.truncated !== undefined) m.truncated = isSet(r.truncated);
  return m;
}

export function toTask(r: TaskRow): PageTask {
  return {
    id: r.id,
    key: `T-${r.id}`,
    title: r.title,
    body: r.body,
    truncated: isSet(r.truncated),
    status: r.status,
    priority: r.priority,
    assignee: r.assignee,
    labels: typeof r.labels === 'string' ? (JSON.parse(r.labels) as string[]) : r.labels,
    created_by: r.created_by,
    created_at: r.created_at,
    updated_at: r.updated_at,
  };
}
