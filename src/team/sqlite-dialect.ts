/**
 * The SQLite dialect of the team service: one better-sqlite3 connection in WAL mode. A rule runs
 * synchronously to its end, each query answered at once, so no other call of this process can run
 * in between; a write is one `BEGIN IMMEDIATE` transaction (the write lock taken before its first
 * check, so other processes wait too). Driver errors pass through as they are (opening the store
 * translates them: sqlite-schema.ts).
 */
import type Database from 'better-sqlite3';
import type { TeamDialect } from './dialect.js';
import { runRuleSync, type Query, type Rule } from './rule.js';
import { TASK_PAGE_BODY, taskColumns, type TaskRow, type WithSnippet } from './service-rows.js';
import { TeamService } from './service.js';
import { messageHits, rankMessageWindow, rankTasks, taskHits } from './sqlite-search.js';
import { openDatabase } from './sqlite-schema.js';

/**
 * Perf: statements are prepared once and kept by their SQL text; preparing the task row's
 * statement was about 23 of the 36 µs a `getTask` took on bench/team.bench.ts's store. The shared
 * SQL is a few dozen texts; lists of ids, labels and recipients add one text per length, bounded
 * by their caps, so this many are kept.
 */
const STATEMENTS_KEPT = 512;

export class SqliteDialect implements TeamDialect {
  readonly taskLabels = `(SELECT json_group_array(label) FROM (SELECT label FROM task_labels WHERE task_id = t.id ORDER BY label))`;
  /** BEGIN IMMEDIATE already holds the store's only write lock. */
  readonly forUpdate = '';
  private readonly statements = new Map<string, Database.Statement>();
  private readonly taskHitColumns = taskColumns(TASK_PAGE_BODY, this.taskLabels);
  private readonly transaction: Database.Transaction<(rule: Rule<unknown>) => unknown>;

  constructor(
    /** The connection (for bulk loads and tests). */
    readonly db: Database.Database,
    readonly storeId: string,
  ) {
    this.transaction = db.transaction((rule: Rule<unknown>) => runRuleSync(rule, this.exec));
  }

  private readonly exec = (query: Query): unknown => {
    let stmt = this.statements.get(query.sql);
    if (stmt === undefined) {
      stmt = this.db.prepare(query.sql);
      // Full: forget the oldest (a Map iterates in insertion order); it is prepared again if needed.
      if (this.statements.size >= STATEMENTS_KEPT) this.statements.delete(this.statements.keys().next().value!);
      this.statements.set(query.sql, stmt);
    }
    const params = query.params as unknown[];
    switch (query.op) {
      case 'get':
        return stmt.get(params);
      case 'all':
        return stmt.all(params);
      case 'run':
        return stmt.run(params).changes;
    }
  };

  async read<T>(rule: Rule<T>): Promise<T> {
    return runRuleSync(rule, this.exec);
  }

  async write<T>(rule: Rule<T>): Promise<T> {
    return this.transaction.immediate(rule) as T;
  }

  async close(): Promise<void> {
    if (this.db.open) this.db.close();
  }

  contains(column: string): string {
    return `instr(${column}, ?) > 0`;
  }

  hasNul(column: string): string {
    return `instr(${column}, char(0)) > 0`;
  }

  notKind(column: string, kind: 'text' | 'integer'): string {
    return `typeof(${column}) <> '${kind}'`;
  }

  rankMessages = rankMessageWindow;
  messageHits = messageHits;
  rankTasks = rankTasks;
  taskHits(match: string, ids: readonly number[]): Rule<WithSnippet<TaskRow>[]> {
    return taskHits(this.taskHitColumns, match, ids);
  }
}

/** Open or create the SQLite store at `file` (`label` names it in errors). Throws `TeamError`. */
export function openSqliteTeamStore(file: string, label = file): TeamService<SqliteDialect> {
  const { db, storeId } = openDatabase(file, label);
  return new TeamService(new SqliteDialect(db, storeId));
}
