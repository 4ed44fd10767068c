/**
 * PostgreSQL for the tests: an admin connection (`MCP_BUDGET_TEST_PG`, a `postgres://` URL or
 * libpq keywords; default the local socket directory as the OS user, database `postgres`), a fresh
 * database per test file (`mcp_budget_test_<random>`), dropped at the end.
 *
 * When the server cannot be reached: with `CI=true` the probe throws (the file fails, naming what
 * to start); otherwise the PostgreSQL tests are skipped with a note on stderr.
 */
import { randomBytes } from 'node:crypto';
import pg from 'pg';
import { isPostgresTarget } from '../../src/team/index.js';
import { pgConfig } from '../../src/team/pg-connect.js';

/** The admin target: where test databases are created. */
export const ADMIN_TARGET = process.env.MCP_BUDGET_TEST_PG ?? 'host=/var/run/postgresql dbname=postgres';

const adminConfig = (): pg.PoolConfig => ({ ...pgConfig(ADMIN_TARGET), max: 1 });

/** `true` when PostgreSQL answers; throws under CI when it does not. */
export async function probePostgres(): Promise<boolean> {
  if (!isPostgresTarget(ADMIN_TARGET)) throw new Error(`MCP_BUDGET_TEST_PG must be a postgres:// URL or libpq keywords, got ${JSON.stringify(ADMIN_TARGET)}`);
  const client = new pg.Client({ ...adminConfig(), connectionTimeoutMillis: 3000 });
  try {
    await client.connect();
    await client.query('SELECT 1');
    return true;
  } catch (e) {
    const why = `PostgreSQL is not reachable at ${ADMIN_TARGET} (${e instanceof Error ? e.message : String(e)}). Start it (pg_ctlcluster 15 main start) and give the OS user a role that may create databases, or set MCP_BUDGET_TEST_PG.`;
    if (process.env.CI === 'true') throw new Error(why);
    process.stderr.write(`skipping the PostgreSQL tests: ${why}\n`);
    return false;
  } finally {
    await client.end().catch(() => undefined);
  }
}

/** Run one admin statement. */
async function admin(sql: string): Promise<void> {
  const client = new pg.Client(adminConfig());
  await client.connect();
  try {
    await client.query(sql);
  } finally {
    await client.end();
  }
}

/** A fresh database: its name and the `--team-db` value that names it. */
export interface TestDatabase {
  name: string;
  target: string;
  drop(): Promise<void>;
}

/** Create `mcp_budget_test_<random>` (with `ctype`, its LC_CTYPE and LC_COLLATE); `drop()` removes it (with any connection still open). */
export async function createTestDatabase(options: { ctype?: 'C' } = {}): Promise<TestDatabase> {
  const name = `mcp_budget_test_${randomBytes(6).toString('hex')}`;
  await admin(`CREATE DATABASE ${name}${options.ctype === undefined ? '' : ` TEMPLATE template0 ENCODING 'UTF8' LC_CTYPE '${options.ctype}' LC_COLLATE '${options.ctype}'`}`);
  let target: string;
  if (/^postgres(ql)?:\/\//i.test(ADMIN_TARGET)) {
    const u = new URL(ADMIN_TARGET);
    u.pathname = `/${name}`;
    target = u.toString();
  } else {
    target = /\bdbname\s*=\s*\S+/.test(ADMIN_TARGET) ? ADMIN_TARGET.replace(/\bdbname\s*=\s*\S+/, `dbname=${name}`) : `${ADMIN_TARGET} dbname=${name}`;
  }
  return { name, target, drop: () => admin(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`) };
}

/** Run statements on a test database directly (setting up refused states). */
export async function onDatabase(target: string, sql: string): Promise<void> {
  const client = new pg.Client({ ...pgConfig(target), max: undefined } as pg.ClientConfig);
  await client.connect();
  try {
    await client.query(sql);
  } finally {
    await client.end();
  }
}
