/**
 * The PostgreSQL store's write discipline: every mutation is one transaction that first takes the
 * store's write lock (a transaction-level advisory lock of the database), so writers run one at a
 * time as on SQLite. That keeps ids in commit order, which the inbox (ack through an id), the
 * search snapshot (ids ≤ the newest id) and the task clock (`updated_at` strictly increasing)
 * rely on; and a check-then-insert (a member name, a channel, a label) cannot race.
 */
import type pg from 'pg';
import { TeamError } from './types.js';
import { BudgetError } from '../engine/index.js';

/** Anything that runs a query: the pool (reads) or a transaction's client (writes). */
export type Queryable = Pick<pg.ClientBase, 'query'>;

/** The advisory lock key of the store's write lock (advisory locks are per database). */
const WRITE_LOCK_KEY = 0x6d63_7062; // "mcpb"

/** Run `fn` in one transaction holding the write lock; commits on success, rolls back on error. */
export async function inTransaction<T>(pool: pg.Pool, fn: (db: pg.PoolClient) => Promise<T>): Promise<T> {
  const client = await pool.connect();
  let broken = false;
  // A connection lost mid-transaction also emits 'error' on the client: unheard, it would end the process.
  const lost = (): void => {
    broken = true;
  };
  client.on('error', lost);
  try {
    await client.query('BEGIN');
    await client.query('SELECT pg_advisory_xact_lock($1)', [WRITE_LOCK_KEY]);
    const out = await fn(client);
    try {
      await client.query('COMMIT');
    } catch (e) {
      // The server answered (a SQLSTATE): it did not commit. No answer (the connection was lost
      // after COMMIT was sent): it may have, and nobody here can tell.
      if (typeof (e as { code?: unknown }).code === 'string' && /^[0-9A-Z]{5}$/.test((e as { code: string }).code)) throw e;
      broken = true;
      throw outcomeUnknown(out, e);
    }
    return out;
  } catch (e) {
    if (e instanceof BudgetError && e.code === 'OUTCOME_UNKNOWN') throw e;
    try {
      await client.query('ROLLBACK');
    } catch {
      broken = true;
    }
    throw e;
  } finally {
    client.release(broken);
    if (!broken) client.off('error', lost); // a broken client may still report its end: keep listening
  }
}

/** The write whose COMMIT got no answer: what it would have returned names what to check (an id). */
function outcomeUnknown(out: unknown, cause: unknown): TeamError {
  const id = (out as { id?: unknown } | null)?.id;
  const known = typeof id === 'number' ? { id } : {};
  return new TeamError(
    'OUTCOME_UNKNOWN',
    // The driver's words (host, socket, role) stay out: this text reaches the model.
    `The change was sent to PostgreSQL, and the connection was lost before the commit was confirmed: ` +
      `it may have been applied${typeof id === 'number' ? ` (as id ${id})` : ''}. Read it back before doing it again; do not repeat it blindly.`,
    { applied: 'unknown', ...known },
  );
}
