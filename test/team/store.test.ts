/**
 * The SQLite team store: the shared behaviour suite (behaviour.ts), then what only a store file
 * has: corrupt, foreign and newer files refused and left as they are, and the JSON Lines import.
 */
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { SCHEMA_VERSION, openSqliteTeamStore, type TeamService, type TeamStore } from '../../src/team/index.js';
import { codeOf, describeStoreBehaviour } from './behaviour.js';

const dirs = new Map<TeamStore, string>();

describe('SQLite engine', () => {
  describeStoreBehaviour({
    name: 'sqlite',
    async fresh() {
      const d = mkdtempSync(join(tmpdir(), 'team-store-'));
      const s = openSqliteTeamStore(join(d, 'team.db'));
      dirs.set(s, d);
      return s;
    },
    async release(s) {
      await s.close();
      rmSync(dirs.get(s)!, { recursive: true, force: true });
      dirs.delete(s);
    },
    async sendMany(s, author, messages) {
      await (s as TeamService).sendMany(author, messages);
    },
  });
});

describe('SQLite files', () => {
  let dir: string;
  let store: TeamStore;

  beforeEach(async () => {
    dir = mkdtempSync(join(tmpdir(), 'team-store-'));
    store = openSqliteTeamStore(join(dir, 'team.db'));
    await store.addMember('olga', 'owner');
  });

  afterEach(async () => {
    await store.close();
    rmSync(dir, { recursive: true, force: true });
  });

  describe('store files', () => {
    it('corrupt, foreign and newer files are refused and left byte-identical', async () => {
      const corrupt = join(dir, 'corrupt.db');
      writeFileSync(corrupt, Buffer.alloc(8192, 7));
      expect(await codeOf(() => openSqliteTeamStore(corrupt))).toBe('STORE_CORRUPT');
      expect(readFileSync(corrupt)).toEqual(Buffer.alloc(8192, 7));

      const foreign = join(dir, 'foreign.db');
      const f = new Database(foreign);
      f.exec('CREATE TABLE x (y)');
      f.close();
      expect(await codeOf(() => openSqliteTeamStore(foreign))).toBe('STORE_FOREIGN');

      const newer = join(dir, 'newer.db');
      await openSqliteTeamStore(newer).close();
      const n = new Database(newer);
      n.pragma(`user_version = ${SCHEMA_VERSION + 1}`);
      n.close();
      const bytes = readFileSync(newer);
      expect(await codeOf(() => openSqliteTeamStore(newer))).toBe('STORE_NEWER_SCHEMA');
      expect(readFileSync(newer)).toEqual(bytes);
    });
  });

});
