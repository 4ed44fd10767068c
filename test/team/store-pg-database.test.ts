/**
 * What only a PostgreSQL store has: replicas opening one empty database together migrate it once
 * and share its store id (cursors bind to it); a newer or foreign database is refused and left as
 * it is; a store of schema version 1 is migrated with its rows (accents then fold in search); an
 * unreachable server is a clear error; `--team-db` values are recognised and never
 * echoed with their password.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { PG_SCHEMA_VERSION, TeamSession, isPostgresTarget, openPgTeamStore } from '../../src/team/index.js';
import { pgLabel } from '../../src/team/pg-connect.js';
import { PG_MIGRATIONS } from '../../src/team/pg-schema.js';
import { codeOf } from './behaviour.js';
import { createTestDatabase, onDatabase, probePostgres, type TestDatabase } from './pg-harness.js';

const ready = await probePostgres();

describe('--team-db values', () => {
  it('recognises URLs and libpq keywords, and hides passwords', () => {
    for (const v of ['postgres://u@localhost/db', 'postgresql:///team', 'host=/var/run/postgresql dbname=x', ' dbname=x']) expect(isPostgresTarget(v)).toBe(true);
    for (const v of ['team.db', './postgres', 'C:\\x.db', 'postgres.db']) expect(isPostgresTarget(v)).toBe(false);
    expect(pgLabel('postgres://u:s3cret@localhost/db')).not.toContain('s3cret');
    expect(pgLabel("host=h password='s3 cret' dbname=d")).not.toContain('s3');
  });

  it('an unreachable server is STORE_UNAVAILABLE, naming no password', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'pg-none-'));
    try {
      const err = await openPgTeamStore(`host=${dir} dbname=x password=s3cret`).then(() => undefined, (e: unknown) => e as Error & { code: string });
      expect(err?.code).toBe('STORE_UNAVAILABLE');
      expect(err?.message).not.toContain('s3cret');
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});

describe.skipIf(!ready)('PostgreSQL databases', () => {
  let db: TestDatabase;
  beforeAll(async () => {
    db = await createTestDatabase();
  });
  afterAll(async () => {
    await db?.drop();
  });

  it('replicas opening one database together migrate once and share the store id', async () => {
    const stores = await Promise.all([openPgTeamStore(db.target), openPgTeamStore(db.target), openPgTeamStore(db.target)]);
    try {
      expect(new Set(stores.map((s) => s.storeId)).size).toBe(1);
      const v = await stores[0]!.dialect.pool.query<{ version: number }>(`SELECT version FROM schema_version`);
      expect(v.rows).toEqual([{ version: PG_SCHEMA_VERSION }]);
      // sessions starting together: one adds the first owner, the others find it
      const sessions = Array.from({ length: 3 }, () => new TeamSession(tmpdir(), { dbPath: db.target, as: 'olga' }));
      await Promise.all(sessions.map((s) => s.startup()));
      const calls = await Promise.all(sessions.map((s) => s.current()));
      expect(calls.map((c) => c.me.role)).toEqual(['owner', 'owner', 'owner']);
      expect(new Set(calls.map((c) => c.store.storeId))).toEqual(new Set([stores[0]!.storeId]));
      const other = new TeamSession(tmpdir(), { dbPath: db.target, as: 'nobody' });
      expect(await codeOf(other.startup())).toBe('UNKNOWN_MEMBER');
      await Promise.all(sessions.map((s) => s.close()));
    } finally {
      await Promise.all(stores.map((s) => s.close()));
    }
  });

  it('a newer schema is refused and left as it is', async () => {
    await onDatabase(db.target, `UPDATE schema_version SET version = ${PG_SCHEMA_VERSION + 1}`);
    expect(await codeOf(openPgTeamStore(db.target))).toBe('STORE_NEWER_SCHEMA');
    await onDatabase(db.target, `UPDATE schema_version SET version = ${PG_SCHEMA_VERSION}`);
    const s = await openPgTeamStore(db.target);
    expect((await s.getMember('olga'))?.role).toBe('owner');
    await s.close();
  });

  it('a version 1 store (before accent folding) is migrated with its rows, and its old rows fold', async () => {
    const old = await createTestDatabase();
    try {
      await onDatabase(
        old.target,
        `${PG_MIGRATIONS[0]}
        CREATE TABLE schema_version (one boolean PRIMARY KEY DEFAULT true CHECK (one), version integer NOT NULL);
        INSERT INTO schema_version (version) VALUES (1);
        INSERT INTO store_meta (key, value) VALUES ('store_id', 'v1store');
        INSERT INTO members (name, name_lower, role, created_at) VALUES ('olga', 'olga', 'owner', 1);
        INSERT INTO channels (name, created_at) VALUES ('general', 1);
        INSERT INTO messages (channel_id, author_id, body, created_at) VALUES (1, 1, 'Un café très Élégant', 2);
        INSERT INTO tasks (title, body, status, priority, created_by, created_at, updated_at) VALUES ('Réviser', 'le résumé', 'open', 'normal', 1, 3, 3);`,
      );
      const s = await openPgTeamStore(old.target);
      try {
        expect(s.storeId).toBe('v1store');
        const v = await s.dialect.pool.query<{ version: number }>(`SELECT version FROM schema_version`);
        expect(v.rows).toEqual([{ version: PG_SCHEMA_VERSION }]);
        const hits = await s.searchMessages('cafe elegant', undefined, { hi: await s.lastMessageId() }, 5);
        expect(hits.rows.map((r) => r.body)).toEqual(['Un café très Élégant']);
        expect(hits.rows[0]!.snippet).toContain('[Élégant]');
        expect((await s.searchTasks('resume', undefined, await s.lastTaskId(), undefined, true, 5)).rows).toHaveLength(1);
      } finally {
        await s.close();
      }
    } finally {
      await old.drop();
    }
  });

  it('a database holding other tables is refused and left as it is', async () => {
    const foreign = await createTestDatabase();
    try {
      await onDatabase(foreign.target, `CREATE TABLE accounts (id int); INSERT INTO accounts VALUES (7)`);
      expect(await codeOf(openPgTeamStore(foreign.target))).toBe('STORE_FOREIGN');
      await onDatabase(foreign.target, `DO $$ BEGIN IF (SELECT count(*) FROM pg_tables WHERE schemaname = 'public') <> 1 THEN RAISE 'touched'; END IF; END $$`);
    } finally {
      await foreign.drop();
    }
  });
});
