/**
 * The team store's one interface and its records. The tools talk only to {@link TeamStore}; every
 * method is async so that an engine over the network (PostgreSQL) can implement it as well as the
 * embedded SQLite one. Pages are keyset pages: a method takes the position after which to read
 * (`after`) and returns at most `limit` rows plus `more` (it read `limit + 1`). Positions are
 * plain values; signing them into cursors is the tool layer's job.
 */
import { BudgetError, type LayerError } from '../engine/index.js';
import type { StoredValueWindow } from './service-check.js';

/** Roles, from most to least trusted. */
export const ROLES = ['owner', 'lead', 'member', 'agent', 'guest'] as const;
export type Role = (typeof ROLES)[number];

/** Task statuses (a fixed set: `task_options` pages it). */
export const TASK_STATUSES = ['open', 'in_progress', 'blocked', 'done', 'cancelled'] as const;
export type TaskStatus = (typeof TASK_STATUSES)[number];

/** Task priorities (a fixed set). */
export const TASK_PRIORITIES = ['low', 'normal', 'high', 'urgent'] as const;
export type TaskPriority = (typeof TASK_PRIORITIES)[number];

/** Stable codes of team failures; the tool layer turns them into tool errors. */
export type TeamErrorCode =
  /** A write was sent and whether it was committed is not known (the connection was lost after COMMIT). */
  | 'OUTCOME_UNKNOWN'
  | 'NOT_FOUND'
  | 'INVALID_PARAMS'
  | 'INPUT_TOO_LARGE'
  | 'ALREADY_EXISTS'
  | 'INVALID_CURSOR'
  /** The store file is not a database, or is damaged. */
  | 'STORE_CORRUPT'
  /** Another process holds a lock on the store longer than the busy timeout. */
  | 'STORE_LOCKED'
  /** The store's database server cannot be reached, or refused the connection (PostgreSQL). */
  | 'STORE_UNAVAILABLE'
  /** The store's database driver (an optional dependency) is not installed, or its native module was not built. */
  | 'STORE_DRIVER_MISSING'
  /** The store was written by a newer version of this program. */
  | 'STORE_NEWER_SCHEMA'
  /** The file is a SQLite database, but not a team store. */
  | 'STORE_FOREIGN'
  /** The store file would be inside the workspace root. */
  | 'STORE_INSIDE_ROOT'
  /** `--as` names no active member of a non-empty store. */
  | 'UNKNOWN_MEMBER'
  /** The caller's role may not do this (src/team/permissions.ts); the message says what would allow it. */
  | 'PERMISSION_DENIED';

declare module '../engine/errors.js' {
  interface ErrorCodes extends Record<TeamErrorCode, true> {}
}

/** The one error (engine/errors.ts), raised with a team code; `data` names the limit and the value. */
export type TeamError = BudgetError<TeamErrorCode>;
/** The one error's constructor, typed to the team's codes (the same class: match with `isBudgetError`). */
export const TeamError: LayerError<TeamErrorCode> = BudgetError;

export interface Member {
  id: number;
  name: string;
  role: Role;
  active: boolean;
}

export interface Message {
  id: number;
  channel: string;
  author: string | null;
  body: string;
  reply_to: number | null;
  /** Milliseconds since the epoch. */
  created_at: number;
}

/** A search hit: the message, its exact bm25 score (lower is better) and a bounded snippet. */
export interface MessageHit extends Message {
  score: number;
  snippet: string;
}

export interface Task {
  id: number;
  /** `T-<id>`. */
  key: string;
  title: string;
  body: string;
  status: TaskStatus;
  priority: TaskPriority;
  assignee: string | null;
  labels: string[];
  created_by: string | null;
  created_at: number;
  updated_at: number;
}

export interface TaskHit extends Task {
  /** bm25 score; `null` for the identity hit (the task the query names). */
  score: number | null;
  snippet: string;
}

export interface Comment {
  id: number;
  task_id: number;
  author: string | null;
  body: string;
  created_at: number;
}

/** A keyset page. */
export interface Page<T> {
  rows: T[];
  /** A `limit + 1`-th row exists. */
  more: boolean;
}

/**
 * Position in a chronology: (time, id) of the last row seen. `at` is a decimal string when the
 * stored time is past 2^53 (a store written by hand or before the write checks): the number a
 * driver reads is rounded, and a position made of it would return the same row again.
 */
export interface TimeKey {
  at: number | string;
  id: number;
}

/** A row of a chronology whose stored time is past 2^53: its exact value, as `TimeKey.at` takes it. */
export interface ExactTime {
  at_key?: string;
}

/** Position in a ranked list: the exact score and id of the last row seen, and the id snapshot. */
export interface RankKey {
  score: number;
  id: number;
}

/**
 * Where a message search goes on: the newest id of the window being ranked (the snapshot for the
 * first page) and the last row ranked in it.
 */
export interface SearchPos {
  hi: number;
  after?: RankKey;
}

/** A page of a windowed search. */
export interface SearchPage<T> extends Page<T> {
  /** The window the rows came from (a page never spans two). */
  hi: number;
  /** Where the next page starts, when `more`. */
  next?: SearchPos;
  /** `true` when older matches lie below this page's window (ranking is per window, newest window first). */
  windowed: boolean;
}

export interface TaskFilter {
  status?: TaskStatus;
  /** Member name. */
  assignee?: string;
  label?: string;
}

export interface NewTask {
  title: string;
  body?: string;
  status?: TaskStatus;
  priority?: TaskPriority;
  assignee?: string | null;
  labels?: string[];
}

export type TaskChanges = Partial<NewTask>;

/** One option of `task_options`: a value, and for members its role. */
export interface FieldOption {
  value: string;
  role?: Role;
}

/** An inbox page: undelivered messages oldest first, and the id to ack through. */
export interface InboxPage extends Page<Message> {
  /** Id of the last message returned (ack through it), or `null` for an empty page. */
  through: number | null;
}

/** Options of {@link TeamStore.sendMessage}. */
export interface SendOptions {
  channel: string;
  body: string;
  to?: string[];
  replyTo?: number;
  /** Milliseconds since the epoch (imports keep their own; otherwise now). */
  at?: number;
}

/** One checked line of an import, for the store to write (read and checked by import.ts). `no` is its line number. */
export type ImportOp =
  | { no: number; kind: 'member'; name: string; role: string; at: number | undefined; active: boolean }
  | { no: number; kind: 'channel'; name: string; at: number }
  | { no: number; kind: 'message'; author: string | undefined; send: SendOptions }
  | { no: number; kind: 'task'; author: string | undefined; task: NewTask; at: number; updatedAt: number }
  | { no: number; kind: 'comment'; author: string | undefined; task: number; body: string; at: number | undefined };

/**
 * The team store. Every page method reads `limit + 1` rows by an index from its `after` position;
 * none counts or skips rows with OFFSET.
 */
export interface TeamStore {
  /** Write one batch of `team import` in one transaction, every line through the tools' checks. */
  importBatch(ops: readonly ImportOp[]): Promise<void>;
  /** A random id fixed when the store was created (cursors are bound to it). */
  readonly storeId: string;
  /** `true` until the first member is added. */
  isEmpty(): Promise<boolean>;
  /**
   * Add `name` as owner only if the store has no member yet, in one write transaction (the check and
   * the insert under the store's write lock): however many replicas start on one empty store, one
   * becomes its owner. `false` when the store already had members.
   */
  addFirstOwner(name: string): Promise<boolean>;
  addMember(name: string, role: Role): Promise<Member>;
  getMember(name: string): Promise<Member | undefined>;
  setRole(name: string, role: Role): Promise<Member>;
  deactivate(name: string): Promise<Member>;
  /** Make a deactivated member active again. */
  reactivate(name: string): Promise<Member>;
  listMembers(after: string | undefined, limit: number): Promise<Page<Member>>;
  /** Active members `viewer` may see, by name; with `q`, names containing it (case-insensitive). */
  memberOptions(viewer: Member, q: string | undefined, after: string | undefined, limit: number): Promise<Page<Member>>;

  createChannel(name: string): Promise<void>;
  sendMessage(author: Member, options: SendOptions): Promise<Message>;
  getMessage(id: number): Promise<Message>;
  /** Newest first by (created_at, id). Throws NOT_FOUND for an unknown channel. */
  history(channel: string, after: TimeKey | undefined, limit: number): Promise<Page<Message & ExactTime>>;
  /**
   * Ranked by (bm25, id) within windows of the newest `searchWindowMatches` matches, newest
   * window first, starting at `from.hi` (the snapshot: `lastMessageId()` for a first page).
   */
  searchMessages(q: string, channel: string | undefined, from: SearchPos, limit: number): Promise<SearchPage<MessageHit>>;
  /** The largest message id (the snapshot a search starts from). */
  lastMessageId(): Promise<number>;

  createTask(author: Member, task: NewTask, at?: number): Promise<Task>;
  /**
   * `check` sees the task as it is inside the write, before any change, and throws to refuse it
   * (the caller's `own` access is settled there, not on an earlier read).
   */
  updateTask(author: Member, id: number, changes: TaskChanges, check?: (before: Task) => void): Promise<Task>;
  getTask(id: number): Promise<Task>;
  /** By (updated_at desc, id desc), exact filters. */
  listTasks(filter: TaskFilter, after: TimeKey | undefined, limit: number): Promise<Page<Task & ExactTime>>;
  /** Identity hit (when `q` names a task) first, then ranked by (bm25, id) among ids ≤ snapshot. */
  searchTasks(q: string, status: TaskStatus | undefined, snapshot: number, after: RankKey | undefined, withIdentity: boolean, limit: number): Promise<Page<TaskHit>>;
  lastTaskId(): Promise<number>;
  addComment(author: Member, taskId: number, body: string, at?: number): Promise<Comment>;
  /** Newest first by (created_at, id). */
  comments(taskId: number, after: TimeKey | undefined, limit: number): Promise<Page<Comment & ExactTime>>;
  /** Labels in use, by name. */
  labels(after: string | undefined, limit: number): Promise<Page<string>>;

  /** Undelivered inbox messages of `member`, oldest first; changes nothing. */
  readInbox(member: Member, limit: number): Promise<InboxPage>;
  /** Mark delivered every message of `member`'s inbox with id ≤ `through`; returns how many were newly marked. */
  ackInbox(member: Member, through: number): Promise<number>;

  /**
   * Rows with ids in `(after, after + span]` holding values the write boundary refuses today (an
   * older version's or a hand's): at most `keep` per table, and where the next window starts.
   */
  checkStoredValues(after: number, span: number, keep: number): Promise<StoredValueWindow>;

  close(): Promise<void>;
}
