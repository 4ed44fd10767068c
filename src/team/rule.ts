/**
 * The protocol between the team service's rules and a dialect. A rule is a generator that yields
 * query requests and receives their results: `const row = yield* q.get<Row>(sql, params)`. It says
 * what to read and write and never how, so one rule body runs synchronously inside a
 * better-sqlite3 transaction (nothing can interleave, and no promise is made per query) and
 * asynchronously on PostgreSQL (each request awaited on the transaction's client).
 *
 * | request | result                                            |
 * | ------- | ------------------------------------------------- |
 * | `get`   | the first row, or `undefined`                     |
 * | `all`   | every row                                         |
 * | `run`   | how many rows the statement changed               |
 *
 * Shared SQL writes its parameters as `?` (the PostgreSQL dialect numbers them `$1, $2, …`); a
 * dialect's own statements may use its native form. A failed query is thrown into the rule at the
 * `yield`, as an awaited query would throw, so a rule's `try`/`finally` means what it says.
 */
import { TeamError } from './types.js';

/** One query a rule asks for. */
export interface Query {
  op: 'get' | 'all' | 'run';
  sql: string;
  params: readonly unknown[];
}

/** A rule: yields queries, receives their results, returns `T`. */
export type Rule<T> = Generator<Query, T, unknown>;

/** The first row of `sql`, or `undefined`. */
function* get<R>(sql: string, params: readonly unknown[] = []): Rule<R | undefined> {
  return (yield { op: 'get', sql, params }) as R | undefined;
}

/** Every row of `sql`. */
function* all<R>(sql: string, params: readonly unknown[] = []): Rule<R[]> {
  return (yield { op: 'all', sql, params }) as R[];
}

/** Runs a statement that returns no rows; how many rows it changed. */
function* run(sql: string, params: readonly unknown[] = []): Rule<number> {
  return (yield { op: 'run', sql, params }) as number;
}

/** The queries a rule may yield. */
export const q = Object.freeze({ get, all, run });

/** Drive `rule` to its end, each query answered at once by `exec` (SQLite). */
export function runRuleSync<T>(rule: Rule<T>, exec: (query: Query) => unknown): T {
  let step = rule.next();
  while (step.done !== true) {
    let out: unknown;
    try {
      out = exec(step.value);
    } catch (e) {
      step = rule.throw(e);
      continue;
    }
    step = rule.next(out);
  }
  return step.value;
}

/** Drive `rule` to its end, each query awaited from `exec` (PostgreSQL). */
export async function runRuleAsync<T>(rule: Rule<T>, exec: (query: Query) => Promise<unknown>): Promise<T> {
  let step = rule.next();
  while (step.done !== true) {
    let out: unknown;
    try {
      out = await exec(step.value);
    } catch (e) {
      step = rule.throw(e);
      continue;
    }
    step = rule.next(out);
  }
  return step.value;
}

/** A page from `limit + 1` rows. */
export function pageOf<T>(rows: T[], limit: number): { rows: T[]; more: boolean } {
  return { rows: rows.length > limit ? rows.slice(0, limit) : rows, more: rows.length > limit };
}

/**
 * Rows of a page whose keyset time is not a safe integer get its exact decimal (`at_key`), read as
 * text by `sql` (one `?`: the row's id); such rows exist only in a store written by hand or before
 * the write checks, so the extra query is run for them alone.
 */
export function* withExactTimes<R extends { id: number; at_key?: string }>(rows: R[], time: (r: R) => number, sql: string): Rule<R[]> {
  for (const r of rows) {
    if (Number.isSafeInteger(time(r))) continue;
    const row = yield* q.get<{ k: string }>(sql, [r.id]);
    // An integer read rounded, or a text SQLite let a hand-written row hold (`yesterday`: it sorts
    // after every number, and the same text bound back finds its place); a SQLite REAL (`1e300`)
    // is exact as the number it was read as.
    if (row !== undefined && (/^-?[0-9]+$/.test(String(row.k)) || typeof time(r) !== 'number')) r.at_key = String(row.k);
  }
  return rows;
}

/**
 * Insert a row and return its new id. An id past 2^53 is refused (the transaction rolls back): a
 * row written by hand with such an id makes the store number every later row past it, and no reader
 * can show or page those ids exactly.
 */
export function* insertedId(sql: string, params: unknown[]): Rule<number> {
  const row = yield* q.get<{ id: number }>(sql, params);
  const id = row?.id;
  if (typeof id !== 'number' || !Number.isSafeInteger(id)) {
    throw new TeamError(
      'STORE_CORRUPT',
      `The team store's next id is past 2^53 (a row was written with such an id outside this server); a row numbered after it could not be read back exactly, so nothing was written. Renumber that row in the database (team check names it).`,
    );
  }
  return id;
}
