/**
 * What the team service needs from an engine: the narrow interface SQLite and PostgreSQL each
 * implement (sqlite-dialect.ts, pg-dialect.ts). Everything a rule decides (validation, visibility,
 * paging, the search window policy, error texts) lives in the service; a dialect only runs rules
 * (queries, placeholders, transactions, its drivers' errors) and answers the few questions its
 * SQL answers its own way:
 *
 * - fragments: a task's labels as a JSON array, "contains" on a column, a row lock;
 * - full text: ranking one window of a message search, ranking tasks, and the page's rows with
 *   their snippets (FTS5 `bm25`/`snippet` with anchor re-scoring; `ts_rank`/`ts_headline`);
 * - bulk writes: an import batch's messages, where one statement beats one per row.
 *
 * Transactions: `write` runs its rule in one transaction that holds the store's write lock for its
 * whole length (SQLite: BEGIN IMMEDIATE; PostgreSQL: the advisory lock of pg-db.ts), so a rule's
 * checks and its writes see one state, and a rule that throws writes nothing.
 */
import type { Rule } from './rule.js';
import type { RankedRow } from './search-window.js';
import type { MessageRow, TaskRow, WithSnippet } from './service-rows.js';
import type { RankKey, TaskStatus } from './types.js';

/** One window of a message search to rank: matches with id in (lo, hi], lo found by the dialect. */
export interface MessageWindow {
  /** The user's words as quoted terms (fts-query.ts). */
  match: string;
  /** Only this channel's messages are ranked (they still count in the window's size). */
  channelId: number | undefined;
  /** The newest id the window holds. */
  hi: number;
  /** The last row already ranked in this window: rows after it by (score, id). */
  after: RankKey | undefined;
  /** Rows to return at most (the page's limit + 1). */
  rows: number;
}

/** A ranked window: its exclusive low end (0: no older match) and its rows by (score, id). */
export interface RankedWindow {
  lo: number;
  ranked: RankedRow[];
}

/** A task search to rank: matches with id ≤ `snapshot`, by (score, id). */
export interface TaskRanking {
  match: string;
  snapshot: number;
  /** The identity hit's id, left out of the ranked rows. */
  exclude: number | undefined;
  status: TaskStatus | undefined;
  after: RankKey | undefined;
  rows: number;
}

/** A message of an import batch, checked and resolved, waiting to be written. */
export interface MessageToWrite {
  /** Its line number. */
  no: number;
  channelId: number;
  authorId: number | null;
  body: string;
  replyTo: number | null;
  at: number;
  /** Member ids of its inbox rows. */
  recipients: number[];
}

export interface TeamDialect {
  /** The random id the store was created with. */
  readonly storeId: string;
  /** Run a rule that only reads. */
  read<T>(rule: Rule<T>): Promise<T>;
  /** Run a rule in one write transaction (checks and writes under the store's write lock). */
  write<T>(rule: Rule<T>): Promise<T>;
  close(): Promise<void>;

  /** An expression over `t.id`: the task's labels as a JSON array, by name (`[]` for none). */
  readonly taskLabels: string;
  /** A condition: `column` contains the next `?` parameter as a substring. */
  contains(column: string): string;
  /** A condition: `column` holds a NUL character (`false` where the database cannot store one). */
  hasNul(column: string): string;
  /** A condition: `column` holds a value of another type than `kind` (`false` where the database's column types forbid it). */
  notKind(column: string, kind: 'text' | 'integer'): string;
  /** What follows a `SELECT` of a row the write will change, to lock it (may be empty). */
  readonly forUpdate: string;

  /** Rank one window of a message search. */
  rankMessages(window: MessageWindow): Rule<RankedWindow>;
  /** The page rows of messages `ids` with snippets of `match`, in any order. */
  messageHits(match: string, ids: readonly number[]): Rule<WithSnippet<MessageRow>[]>;
  /** Rank tasks matching a search. */
  rankTasks(ranking: TaskRanking): Rule<RankedRow[]>;
  /** The page rows of tasks `ids` with snippets of `match`, in any order. */
  taskHits(match: string, ids: readonly number[]): Rule<WithSnippet<TaskRow>[]>;
  /**
   * Write an import batch's messages and their inbox rows together, in line order (ids growing),
   * refusing a `replyTo` that names no earlier message with the line's error. Absent: the service
   * writes each message as it comes, as `sendMessage` does.
   */
  writeMessages?(batch: readonly MessageToWrite[]): Rule<void>;
}
