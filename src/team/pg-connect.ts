/**
 * Connecting to a PostgreSQL team store: recognising a `--team-db` value that names a database
 * (`postgres://…`, `postgresql://…`, or libpq keywords such as `host=/var/run/postgresql dbname=team`),
 * the pool's settings, a label for errors that never shows a password, and the translation of
 * driver failures into {@link TeamError}s.
 */
import { userInfo } from 'node:os';
import type pg from 'pg';
import { pgDriver } from './drivers.js';
import { TeamError } from './types.js';
import { BudgetError } from '../engine/index.js';

/** The PostgreSQL engine's settings. */
export const PG_SETTINGS = Object.freeze({
  /** Connections one process keeps at most. */
  poolMax: 4,
  /** How long a statement waits for a lock (the store's write lock included) before failing (ms). */
  lockTimeoutMs: 2000,
  /** Longest a statement may run (ms). */
  statementTimeoutMs: 30_000,
  /** How long to wait for a connection (ms). */
  connectTimeoutMs: 5000,
  /** An idle pooled connection is closed after (ms). */
  idleTimeoutMs: 30_000,
  /** The default socket directory when a value names none (the Debian/Ubuntu default). */
  defaultSocketDir: '/var/run/postgresql',
});

/** PostgreSQL's type id of `bigint` (`pg_type.oid` of int8), read as a number. */
const INT8_OID = 20;

const URL_PREFIX = /^postgres(?:ql)?:\/\//i;
const KEYWORD = /^\s*(host|hostaddr|port|dbname|user|password|application_name|sslmode|connect_timeout)\s*=/i;

/** `true` when a `--team-db` value names a PostgreSQL database rather than a file. */
export function isPostgresTarget(value: string): boolean {
  return URL_PREFIX.test(value) || KEYWORD.test(value);
}

/** libpq `key=value` pairs (values may be single-quoted, with `\'` and `\\`). */
function parseKeywords(value: string): Record<string, string> {
  const out: Record<string, string> = {};
  const re = /\s*([A-Za-z_]+)\s*=\s*(?:'((?:[^'\\]|\\.)*)'|(\S*))/gy;
  let m: RegExpExecArray | null;
  let end = 0;
  while ((m = re.exec(value)) !== null && m[0] !== '') {
    out[m[1]!.toLowerCase()] = m[2] !== undefined ? m[2].replace(/\\(.)/g, '$1') : (m[3] ?? '');
    end = re.lastIndex;
  }
  if (value.slice(end).trim() !== '') throw new TeamError('INVALID_PARAMS', `\`--team-db\`: cannot read the connection keywords after ${JSON.stringify(value.slice(0, end).replace(/password\s*=\s*\S+/i, 'password=…'))}.`);
  return out;
}

function osUser(): string | undefined {
  try {
    return userInfo().username;
  } catch {
    return undefined;
  }
}

/** The driver configuration for a `--team-db` value naming a database. */
export function pgConfig(value: string): pg.PoolConfig {
  const base: pg.PoolConfig = {
    max: PG_SETTINGS.poolMax,
    connectionTimeoutMillis: PG_SETTINGS.connectTimeoutMs,
    idleTimeoutMillis: PG_SETTINGS.idleTimeoutMs,
    lock_timeout: PG_SETTINGS.lockTimeoutMs,
    statement_timeout: PG_SETTINGS.statementTimeoutMs,
    application_name: 'mcp-budget',
    // As libpq: the OS user unless the value (or PGUSER) names another role.
    user: process.env.PGUSER ?? osUser(),
    // bigint ids and millisecond times as numbers (they stay far below 2^53).
    types: { getTypeParser: ((oid: number, format?: string) => (oid === INT8_OID ? Number : pgDriver().types.getTypeParser(oid, format as 'text'))) as typeof pg.types.getTypeParser },
  };
  if (URL_PREFIX.test(value)) {
    const cfg: pg.PoolConfig = { ...base, connectionString: value };
    // A URL without a host (`postgres:///team`) means the local socket, as for libpq.
    if (/^postgres(?:ql)?:\/\/(?:[^@/]*@)?(?:\/|$)/i.test(value) && !/[?&]host=/.test(value)) cfg.host = PG_SETTINGS.defaultSocketDir;
    return cfg;
  }
  const k = parseKeywords(value);
  // TLS settings are the URL form's (the driver reads them there); never drop one silently.
  if (k.sslmode !== undefined && k.sslmode !== 'disable') {
    throw new TeamError('INVALID_PARAMS', `\`--team-db\`: sslmode=${k.sslmode} is read only in the URL form; write postgres://HOST/DB?sslmode=${k.sslmode}.`);
  }
  const cfg: pg.PoolConfig = { ...base, host: k.host ?? k.hostaddr ?? PG_SETTINGS.defaultSocketDir };
  if (k.port !== undefined) cfg.port = Number(k.port);
  if (k.dbname !== undefined) cfg.database = k.dbname;
  if (k.user !== undefined) cfg.user = k.user;
  if (k.password !== undefined) cfg.password = k.password;
  return cfg;
}

/** A `--team-db` value fit for messages: the password removed. */
export function pgLabel(value: string): string {
  if (URL_PREFIX.test(value)) {
    try {
      const u = new URL(value);
      if (u.password !== '') u.password = '…';
      u.searchParams.delete('password');
      return u.toString();
    } catch {
      return value.replace(/:[^:@/]*@/, ':…@');
    }
  }
  return value.replace(/password\s*=\s*('(?:[^'\\]|\\.)*'|\S*)/gi, 'password=…');
}

/** Error codes (SQLSTATE and socket) meaning the server could not be reached or went away. */
const UNREACHABLE = /^(ECONNREFUSED|ENOENT|ETIMEDOUT|EHOSTUNREACH|ECONNRESET|EPIPE|57P0[1-3]|08\w{3}|3D000|28\w{3})$/;

/** A driver failure as a {@link TeamError} (a `TeamError` is returned as it is). */
export function wrapPgError(e: unknown, label: string): TeamError {
  if (e instanceof BudgetError) return e;
  const code = String((e as { code?: unknown } | null)?.code ?? '');
  const msg = e instanceof Error ? e.message : String(e);
  if (code === '55P03' || code === '40P01' || code === '57014') {
    return new TeamError('STORE_LOCKED', `The team store ${label} is busy (${code}: ${msg}); try again.`);
  }
  // The driver's own failure when the server asks for a password it was not given (no SQLSTATE).
  if (code === '' && /SASL|password must be a string|no password/i.test(msg)) {
    return new TeamError(
      'STORE_UNAVAILABLE',
      `Cannot sign in to the team store ${label}: the server asks for a password and none was given (${msg}). Put it in the URL (postgres://USER:PASSWORD@HOST/DB), in PGPASSWORD, or in ~/.pgpass.`,
    );
  }
  if (UNREACHABLE.test(code) || /timeout expired|Connection terminated|connect/i.test(msg)) {
    return new TeamError('STORE_UNAVAILABLE', `Cannot reach the team store ${label} (${code || 'no code'}: ${msg}). Check that the server runs and the role may connect.`);
  }
  return new TeamError('STORE_CORRUPT', `The team store ${label} failed (${code || 'no code'}: ${msg}).`);
}
