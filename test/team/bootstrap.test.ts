/**
 * Bootstrap on an empty store: however many replicas start at once, one becomes the owner. Eight
 * team sessions (each its own connection, as replicas are) with different `--as` names open one
 * empty store together, on SQLite and on PostgreSQL: exactly one is made owner, the others are
 * refused as unknown members, and the store holds one member.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { TeamSession, openPgTeamStore, openSqliteTeamStore, type TeamStore } from '../../src/team/index.js';
import { createTestDatabase, probePostgres, type TestDatabase } from './pg-harness.js';

const pgReady = await probePostgres();
const dirs: string[] = [];
const dbs: TestDatabase[] = [];
afterAll(async () => {
  for (const d of dirs) rmSync(d, { recursive: true, force: true });
  await Promise.all(dbs.map((d) => d.drop()));
});

async function race(dbPath: string, root: string, open: () => Promise<TeamStore>): Promise<void> {
  for (let round = 0; round < 3; round++) {
    const sessions = Array.from({ length: 8 }, (_, i) => new TeamSession(root, { dbPath: `${dbPath}`, as: `replica${round}x${i}` }));
    const outcomes = await Promise.allSettled(sessions.map((s) => s.current()));
    await Promise.all(sessions.map((s) => s.close()));
    const owners = outcomes.filter((o) => o.status === 'fulfilled');
    if (round === 0) {
      expect(owners).toHaveLength(1);
      expect(outcomes.filter((o) => o.status === 'rejected' && (o.reason as { code?: string }).code === 'UNKNOWN_MEMBER')).toHaveLength(7);
    } else {
      // the store has its owner now: nobody else becomes one
      expect(owners).toHaveLength(0);
    }
  }
  const store = await open();
  try {
    const members = await store.listMembers(undefined, 100);
    expect(members.rows.map((m) => m.role)).toEqual(['owner']);
    expect(members.rows[0]!.name).toMatch(/^replica0x\d$/);
  } finally {
    await store.close();
  }
}

describe('bootstrap: one owner however many replicas start on an empty store', () => {
  it('SQLite: eight sessions on one new file', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'mcp-budget-bootstrap-'));
    dirs.push(dir);
    const file = join(dir, 'team.db');
    await race(file, join(dir, 'root'), async () => openSqliteTeamStore(file));
  });

  it.skipIf(!pgReady)('PostgreSQL: eight sessions on one new database', async () => {
    const db = await createTestDatabase();
    dbs.push(db);
    const dir = mkdtempSync(join(tmpdir(), 'mcp-budget-bootstrap-pg-'));
    dirs.push(dir);
    await race(db.target, dir, () => openPgTeamStore(db.target));
  });
});
