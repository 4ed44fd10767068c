/**
 * The PostgreSQL team store: the shared behaviour suite (behaviour.ts) on a fresh database of its
 * own (emptied between tests, ids restarting at 1), dropped at the end.
 */
import { afterAll, beforeAll, describe } from 'vitest';
import { openPgTeamStore, type PgDialect, type TeamService, type TeamStore } from '../../src/team/index.js';
import { describeStoreBehaviour } from './behaviour.js';
import { createTestDatabase, probePostgres, type TestDatabase } from './pg-harness.js';

const ready = await probePostgres();

/** Every table of the store but its identity (schema_version, store_meta). */
const DATA_TABLES = 'inbox_acked, inbox, comments, task_labels, labels, tasks, messages, channels, members';

describe.skipIf(!ready)('PostgreSQL engine', () => {
  let db: TestDatabase;
  let shared: TeamService<PgDialect>;

  beforeAll(async () => {
    db = await createTestDatabase();
    shared = await openPgTeamStore(db.target);
  });

  afterAll(async () => {
    await shared?.close();
    await db?.drop();
  });

  describeStoreBehaviour({
    name: 'postgres',
    async fresh(): Promise<TeamStore> {
      await shared.dialect.pool.query(`TRUNCATE ${DATA_TABLES} RESTART IDENTITY`);
      return shared;
    },
    async release() {},
    async sendMany(s, author, messages) {
      await (s as TeamService).sendMany(author, messages);
    },
  });
});
