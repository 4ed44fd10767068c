/**
 * The PostgreSQL store's write discipline: every mutation is one transaction that first takes the
 * store's write lock (a transaction-level advisory lock of the database), so writers run one at a
 * time as on SQLite. That keeps ids in commit order, which the inbox (ack through an id), the
 * search snapshot (ids ≤ the newest id) and the task clock (`updated_at` strictly increasing)
 * rely on; and a check-then-insert (a member name, a channel, a label) cannot race.
 */
import type pg from 'pg';

/** Anything that runs a query: the pool (reads) or a transaction's client (writes). */
export type Queryable = Pick<pg.ClientBase, 'query'>;

/** The advisory lock key of the store's write lock (advisory locks are per database). */
const WRITE_LOCK_KEY = 0x6d63_7062; // "mcpb"

/** Run `fn` in one transaction holding the write lock; commits on success, rolls back on error. */
export async function inTransaction<T>(pool: pg.Pool, fn: (db: pg.PoolClient) => Promise<T>): Promise<T> {
  const client = await pool.connect();
  let broken = false;
  try {
    await client.query('BEGIN');
    await client.query('SELECT pg_advisory_xact_lock($1)', [WRITE_LOCK_KEY]);
    const out = await fn(client);
    await client.query('COMMIT');
    return out;
  } catch (e) {
    try {
      await client.query('ROLLBACK');
    } catch {
      broken = true;
    }
    throw e;
  } finally {
    client.release(broken);
  }
}

/** A page from `limit + 1` rows. */
export function pageOf<T>(rows: T[], limit: number): { rows: T[]; more: boolean } {
  return { rows: rows.slice(0, limit), more: rows.length > limit };
}
