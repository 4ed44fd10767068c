/**
 * The SQLite team store: the shared behaviour suite (behaviour.ts), then what only a store file
 * has: corrupt, foreign and newer files refused and left as they are, and the JSON Lines import.
 */
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { SCHEMA_VERSION, SqliteTeamStore, importJsonLines, type TeamStore } from '../../src/team/index.js';
import { codeOf, describeStoreBehaviour } from './behaviour.js';

const dirs = new Map<TeamStore, string>();

describe('SQLite engine', () => {
  describeStoreBehaviour({
    name: 'sqlite',
    async fresh() {
      const d = mkdtempSync(join(tmpdir(), 'team-store-'));
      const s = SqliteTeamStore.open(join(d, 'team.db'));
      dirs.set(s, d);
      return s;
    },
    async release(s) {
      await s.close();
      rmSync(dirs.get(s)!, { recursive: true, force: true });
      dirs.delete(s);
    },
    async sendMany(s, author, messages) {
      const sq = s as SqliteTeamStore;
      sq.write(() => {
        for (const m of messages) sq.messages.send(author, m);
      });
    },
  });
});

describe('SQLite files', () => {
  let dir: string;
  let store: SqliteTeamStore;

  beforeEach(async () => {
    dir = mkdtempSync(join(tmpdir(), 'team-store-'));
    store = SqliteTeamStore.open(join(dir, 'team.db'));
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
      expect(await codeOf(() => SqliteTeamStore.open(corrupt))).toBe('STORE_CORRUPT');
      expect(readFileSync(corrupt)).toEqual(Buffer.alloc(8192, 7));

      const foreign = join(dir, 'foreign.db');
      const f = new Database(foreign);
      f.exec('CREATE TABLE x (y)');
      f.close();
      expect(await codeOf(() => SqliteTeamStore.open(foreign))).toBe('STORE_FOREIGN');

      const newer = join(dir, 'newer.db');
      SqliteTeamStore.open(newer).db.close();
      const n = new Database(newer);
      n.pragma(`user_version = ${SCHEMA_VERSION + 1}`);
      n.close();
      const bytes = readFileSync(newer);
      expect(await codeOf(() => SqliteTeamStore.open(newer))).toBe('STORE_NEWER_SCHEMA');
      expect(readFileSync(newer)).toEqual(bytes);
    });
  });

  describe('import', () => {
    it('imports JSON Lines in batches and names the line of a bad one', async () => {
      const file = join(dir, 'in.jsonl');
      const lines = [
        { kind: 'member', name: 'imp', role: 'agent' },
        ...Array.from({ length: 30 }, (_, i) => ({ kind: 'message', channel: 'imp', author: 'imp', body: `imported ${i}`, created_at: 1000 + i })),
        { kind: 'task', title: 'imported task', labels: ['x'], assignee: 'imp' },
        { kind: 'comment', task: 'T-1', author: 'imp', body: 'a comment' },
      ];
      writeFileSync(file, lines.map((l) => JSON.stringify(l)).join('\n') + '\n');
      const sink = { write: () => true } as unknown as NodeJS.WritableStream;
      const s = await importJsonLines(store, file, { progress: sink, batchRows: 7 });
      expect(s.counts).toEqual({ member: 1, message: 30, task: 1, comment: 1 });
      expect((await store.history('imp', undefined, 100)).rows).toHaveLength(30);

      writeFileSync(file, [JSON.stringify({ kind: 'message', channel: 'imp', body: 'ok' }), '{"kind":"message",', JSON.stringify({ kind: 'message', channel: 'imp', body: 'never' })].join('\n'));
      await expect(importJsonLines(store, file, { progress: sink })).rejects.toThrow(/line 2: not JSON/);
      expect((await store.history('imp', undefined, 100)).rows).toHaveLength(30);
      writeFileSync(file, JSON.stringify({ kind: 'message', channel: 'imp', body: 'x'.repeat(1024 * 1024 + 10) }));
      await expect(importJsonLines(store, file, { progress: sink })).rejects.toThrow(/line 1: longer than/);
    });

    it('refuses a value no reader can show, naming the line and the reason; nothing of the file is written', async () => {
      const file = join(dir, 'hostile.jsonl');
      const sink = { write: () => true } as unknown as NodeJS.WritableStream;
      await importJsonLines(store, ((): string => (writeFileSync(file, [{ kind: 'member', name: 'imp', role: 'agent' }, { kind: 'message', channel: 'imp', author: 'imp', body: 'first' }, { kind: 'task', title: 'base', created_by: 'imp' }].map((l) => JSON.stringify(l)).join('\n')), file))(), { progress: sink });
      const msg = { kind: 'message', channel: 'imp', author: 'imp', body: 'fine' };
      const hostile: [Record<string, unknown> | string, RegExp][] = [
        [{ ...msg, created_at: 1e300 }, /created_at.*not a time the store keeps/],
        [{ ...msg, created_at: -8.64e15 }, /created_at.*not a time the store keeps/],
        [{ ...msg, created_at: 1.5 }, /created_at.*whole milliseconds/],
        [{ ...msg, created_at: '+275760-09-13T00:00:00Z' }, /created_at.*not a time the store keeps/],
        [{ ...msg, created_at: 'yesterday' }, /created_at.*not a time/],
        [{ ...msg, reply_to: 2 ** 60 }, /reply_to.*below 2\^53/],
        [{ ...msg, reply_to: 'one' }, /reply_to.*positive whole number/],
        [{ kind: 'comment', task: 2 ** 53 + 2, author: 'imp', body: 'c' }, /task.*below 2\^53/],
        [{ ...msg, body: 'a\0b' }, /body.*NUL/],
        ['{"kind":"message","channel":"imp","author":"imp","body":"half \\ud800 pair"}', /body.*lone surrogate/],
        [{ kind: 'task', title: 'nul\0title', created_by: 'imp' }, /title.*NUL/],
        [{ kind: 'task', title: 't', created_by: 'imp', updated_at: 9e15 }, /updated_at.*not a time/],
        [{ kind: 'comment', task: 'T-1', author: 'imp', body: 'c', created_at: -1e17 }, /created_at.*not a time/],
      ];
      const before = { messages: (await store.history('imp', undefined, 100)).rows.length, tasks: (await store.listTasks({}, undefined, 100)).rows.length };
      for (const [line, reason] of hostile) {
        writeFileSync(file, [JSON.stringify(msg), typeof line === 'string' ? line : JSON.stringify(line), JSON.stringify(msg)].join('\n') + '\n');
        const err = await importJsonLines(store, file, { progress: sink }).then(() => undefined, (e: unknown) => e as Error);
        expect(err?.message, JSON.stringify(line)).toMatch(/line 2/);
        expect(err?.message, JSON.stringify(line)).toMatch(reason);
      }
      expect((await store.history('imp', undefined, 100)).rows.length).toBe(before.messages);
      expect((await store.listTasks({}, undefined, 100)).rows.length).toBe(before.tasks);
    });
  });
});
