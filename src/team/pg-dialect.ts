/**
 * The PostgreSQL dialect of the team service: a small connection pool. A read runs its queries on
 * the pool as they come; a write runs its rule on one client in one transaction that first takes
 * the store's write lock (pg-db.ts), so writers run one at a time as on SQLite, and a COMMIT whose
 * answer was lost is reported as OUTCOME_UNKNOWN. Shared SQL's `?` parameters are numbered
 * `$1, $2, …` once per text; driver failures become `TeamError`s (pg-connect.ts). The store id
 * lives in the database, so every replica serving it binds cursors to the same store.
 */
import type pg from 'pg';
import { pgDriver } from './drivers.js';
import type { TeamDialect } from './dialect.js';
import { pgConfig, pgLabel, wrapPgError } from './pg-connect.js';
import { writeMessages } from './pg-bulk.js';
import { inTransaction, type Queryable } from './pg-db.js';
import { preparePgDatabase } from './pg-schema.js';
import { messageHits, rankMessageWindow, rankTasks, taskHits } from './pg-search.js';
import { runRuleAsync, type Query, type Rule } from './rule.js';
import { TASK_PAGE_BODY, taskColumns, type TaskRow, type WithSnippet } from './service-rows.js';
import { TeamService } from './service.js';

/** Numbered forms kept (one per distinct SQL text; see STATEMENTS_KEPT in sqlite-dialect.ts). */
const NUMBERED_KEPT = 512;
const numberedForms = new Map<string, string>();

/** `sql` with each `?` outside a quoted literal as `$1, $2, …`; a text without `?` is already native. */
function numbered(sql: string): string {
  if (!sql.includes('?')) return sql;
  let out = numberedForms.get(sql);
  if (out === undefined) {
    let n = 0;
    out = sql.replace(/'(?:[^']|'')*'|\?/g, (m) => (m === '?' ? `$${++n}` : m));
    if (numberedForms.size >= NUMBERED_KEPT) numberedForms.delete(numberedForms.keys().next().value!);
    numberedForms.set(sql, out);
  }
  return out;
}

/** Run one query on the pool or a transaction's client. */
async function exec(db: Queryable, query: Query): Promise<unknown> {
  const res = await db.query(numbered(query.sql), query.params as unknown[]);
  return query.op === 'get' ? res.rows[0] : query.op === 'all' ? res.rows : (res.rowCount ?? 0);
}

export class PgDialect implements TeamDialect {
  readonly taskLabels = `coalesce((SELECT json_agg(label ORDER BY label) FROM task_labels WHERE task_id = t.id), '[]'::json)`;
  /** The write lock already orders writers; the row lock keeps the rule safe on its own. */
  readonly forUpdate = ' FOR UPDATE';
  private readonly taskHitColumns = taskColumns(TASK_PAGE_BODY, this.taskLabels);
  private closed = false;

  constructor(
    /** The pool (for bulk loads and tests). */
    readonly pool: pg.Pool,
    readonly storeId: string,
    /** The database as errors name it (no password). */
    readonly label: string,
  ) {}

  async read<T>(rule: Rule<T>): Promise<T> {
    try {
      return await runRuleAsync(rule, (query) => exec(this.pool, query));
    } catch (e) {
      throw wrapPgError(e, this.label);
    }
  }

  async write<T>(rule: Rule<T>): Promise<T> {
    try {
      return await inTransaction(this.pool, (client) => runRuleAsync(rule, (query) => exec(client, query)));
    } catch (e) {
      throw wrapPgError(e, this.label);
    }
  }

  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    await this.pool.end();
  }

  contains(column: string): string {
    return `strpos(${column}, ?) > 0`;
  }

  hasNul(): string {
    return 'false'; // a PostgreSQL text cannot hold one
  }

  notKind(): string {
    return 'false'; // the column's type is enforced
  }

  rankMessages = rankMessageWindow;
  messageHits = messageHits;
  rankTasks = rankTasks;
  taskHits(match: string, ids: readonly number[]): Rule<WithSnippet<TaskRow>[]> {
    return taskHits(this.taskHitColumns, match, ids);
  }
  writeMessages = writeMessages;
}

/**
 * Connect to the database `target` names (a `postgres://` URL or libpq keywords), migrate it, and
 * check that it is a team store of a version this program knows. Throws `TeamError`.
 */
export async function openPgTeamStore(target: string): Promise<TeamService<PgDialect>> {
  const label = pgLabel(target);
  const pool = new (pgDriver().Pool)(pgConfig(target));
  // An idle connection the server drops must not crash the process; the next query reconnects.
  pool.on('error', () => undefined);
  try {
    return new TeamService(new PgDialect(pool, await preparePgDatabase(pool, label), label));
  } catch (e) {
    await pool.end().catch(() => undefined);
    throw wrapPgError(e, label);
  }
}
