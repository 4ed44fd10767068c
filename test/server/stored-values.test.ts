/**
 * A store that already holds a value no reader can show (a time past `Date`'s range, written
 * before the write boundary refused it, or by hand) never fails a page, on either engine: every
 * team read answers, the time shown as what it is, and an inbox holding such a message can still be
 * acknowledged. The stored-value check names those rows: `serve` on stderr once the store opens,
 * `mcp-budget team check` with exit code 1. A write boundary test for the same values is in
 * test/team/behaviour.ts (both engines).
 */
import { spawnSync } from 'node:child_process';
import Database from 'better-sqlite3';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { InMemoryTransport } from '@modelcontextprotocol/sdk/inMemory.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createWorkspaceServer, type WorkspaceServer } from '../../src/server/create-server.js';
import { checkStore, openPgTeamStore, openSqliteTeamStore, type TeamStore } from '../../src/team/index.js';
import { cleanEnv, cliPath, ensureBuilt } from '../helpers/cli.js';
import { tempTree } from '../helpers/fs-tree.js';
import { createTestDatabase, onDatabase, probePostgres } from '../team/pg-harness.js';

type Result = { isError?: boolean; content?: { text?: string }[]; structuredContent?: Record<string, unknown> };

const pgReady = await probePostgres();

/** A time past what `Date` holds, on both engines (SQLite also gets 1e300: a REAL). */
const FAR = 9e15;

interface Engine {
  name: string;
  ready: boolean;
  open(dir: string): Promise<{ target: string; sql(statements: string): Promise<void>; drop(): Promise<void>; store(): Promise<TeamStore> }>;
}

const ENGINES: Engine[] = [
  {
    name: 'sqlite',
    ready: true,
    open: async (dir) => {
      const target = `${dir}/team.db`;
      return {
        target,
        sql: async (statements) => {
          const w = new Database(target);
          w.exec(statements);
          w.close();
        },
        drop: async () => undefined,
        store: async () => openSqliteTeamStore(target),
      };
    },
  },
  {
    name: 'postgres',
    ready: pgReady,
    open: async () => {
      const db = await createTestDatabase();
      return { target: db.target, sql: (s) => onDatabase(db.target, s), drop: () => db.drop(), store: () => openPgTeamStore(db.target) };
    },
  },
];

const call = async (c: Client, name: string, args: Record<string, unknown>): Promise<Result> => (await c.callTool({ name, arguments: args })) as Result;

for (const engine of ENGINES) {
  describe.skipIf(!engine.ready)(`a store holding times no reader can show (${engine.name})`, () => {
    const root = tempTree(`stored-values-${engine.name}`);
    const state = tempTree(`stored-values-state-${engine.name}`);
    let db: Awaited<ReturnType<Engine['open']>>;
    let owner: { ws: WorkspaceServer; client: Client };
    let ada: { ws: WorkspaceServer; client: Client };

    async function open(as: string): Promise<{ ws: WorkspaceServer; client: Client }> {
      const ws = await createWorkspaceServer(root.dir, {}, { dbPath: db.target, as, checkStoredValues: false });
      const [a, b] = InMemoryTransport.createLinkedPair();
      const client = new Client({ name: 'stored-values', version: '1.0.0' });
      await Promise.all([ws.connect(b), client.connect(a)]);
      return { ws, client };
    }

    beforeAll(async () => {
      db = await engine.open(state.dir);
      owner = await open('olga');
      await call(owner.client, 'task_create', { title: 'seed' }); // creates the store, olga its owner
      await db.sql(`INSERT INTO members (name, name_lower, role, created_at) VALUES ('ada', 'ada', 'member', 0)`);
      await call(owner.client, 'message_send', { channel: 'general', body: 'far future', to: ['ada'] });
      await call(owner.client, 'task_comment', { id: 1, body: 'a comment' });
      // what an older import could write: times no Date can hold
      const huge = engine.name === 'sqlite' ? '1e300' : String(FAR);
      await db.sql(`UPDATE messages SET created_at = ${huge}; UPDATE tasks SET created_at = -${huge}, updated_at = ${huge}; UPDATE comments SET created_at = ${FAR}`);
      ada = await open('ada');
    });

    afterAll(async () => {
      for (const s of [owner, ada]) {
        await s?.client.close();
        await s?.ws.close();
      }
      await db?.drop();
      root.remove();
      state.remove();
    });

    it('every team read answers, showing the time as what it is', async () => {
      const reads: [string, Record<string, unknown>][] = [
        ['message_history_read', { channel: 'general' }],
        ['message_search', { q: 'future' }],
        ['message_get', { id: 1 }],
        ['task_list', {}],
        ['task_search', { q: 'seed' }],
        ['task_get', { id: 1 }],
      ];
      for (const [tool, args] of reads) {
        const r = await call(owner.client, tool, args);
        expect(r.isError, `${tool}: ${r.content?.[0]?.text}`).not.toBe(true);
        expect(r.content?.[0]?.text, tool).toMatch(/invalid time \(/);
      }
    });

    it('an inbox holding such a message is read and acknowledged', async () => {
      const inbox = await call(ada.client, 'inbox_read', {});
      expect(inbox.isError, inbox.content?.[0]?.text).not.toBe(true);
      expect(inbox.content?.[0]?.text).toMatch(/invalid time \((1e\+300|9000000000000000) ms\)/);
      const ack = await call(ada.client, 'inbox_ack', { ack_cursor: inbox.structuredContent?.ack_cursor });
      expect(ack.isError, ack.content?.[0]?.text).not.toBe(true);
      expect((await call(ada.client, 'inbox_read', {})).structuredContent?.messages).toEqual([]);
    });

    it('a write whose answer renders such a time still answers its receipt', async () => {
      const r = await call(owner.client, 'task_update', { id: 1, priority: 'high' });
      expect(r.isError, r.content?.[0]?.text).not.toBe(true);
      expect(r.content?.[0]?.text).toMatch(/invalid time \(-(1e\+300|9000000000000000) ms\)/);
    });

    it('the stored-value check names every such row, across gaps of ids, and nothing else', async () => {
      await db.sql(
        engine.name === 'sqlite'
          ? `INSERT INTO messages (id, channel_id, author_id, body, created_at) VALUES (9007199254740993, 1, 1, 'past 2^53', 0), (5000000, 1, 1, 'a' || char(0) || 'b', 0)`
          : `INSERT INTO messages (id, channel_id, author_id, body, created_at) OVERRIDING SYSTEM VALUE VALUES (9007199254740993, 1, 1, 'past 2^53', 0)`,
      );
      const store = await db.store();
      try {
        const report = await checkStore(store);
        expect(report.complete).toBe(true);
        const found = report.examples.map((i) => `${i.table} ${i.why}`).sort();
        const expected = [
          'comments created_at outside the times readers show',
          'messages created_at outside the times readers show',
          'messages id past 2^53',
          'tasks created_at outside the times readers show',
          ...(engine.name === 'sqlite' ? ['messages NUL in body'] : []),
        ].sort();
        expect(found).toEqual(expected);
        expect(report.rows).toBe(expected.length);
      } finally {
        await store.close();
      }
    });

    it('serve reports them on stderr once the store opens, without delaying a call', async () => {
      const seen: string[] = [];
      const write = process.stderr.write.bind(process.stderr);
      process.stderr.write = ((chunk: string | Uint8Array, ...rest: never[]) => {
        seen.push(String(chunk));
        return write(chunk, ...rest);
      }) as typeof process.stderr.write;
      try {
        const ws = await createWorkspaceServer(root.dir, {}, { dbPath: db.target, as: 'olga' });
        try {
          const deadline = Date.now() + 10_000;
          while (!seen.some((l) => l.includes('hold values no reader shows as stored')) && Date.now() < deadline) await new Promise((r) => setTimeout(r, 20));
        } finally {
          await ws.close();
        }
      } finally {
        process.stderr.write = write;
      }
      expect(seen.join('')).toMatch(/team store .*: \d+ rows hold values no reader shows as stored: /);
    });

    it('`mcp-budget team check` prints them and exits 1', () => {
      ensureBuilt();
      const r = spawnSync(process.execPath, [cliPath, 'team', '--root', root.dir, '--team-db', db.target, 'check'], { encoding: 'utf8', env: cleanEnv(), timeout: 30_000 });
      expect(r.status, r.stderr).toBe(1);
      expect(r.stdout).toMatch(/hold values no reader shows as stored: .*messages \d+ \(created_at outside/);
    });

    it('pages walk every row once when times are integers past 2^53 (a position of the rounded number returned the same row forever)', async () => {
      // Integers a double cannot hold, each apart from its neighbours by less than a double's step there.
      const big = (k: number): string => (2n ** 60n + 200n + BigInt(k)).toString();
      if (engine.name === 'sqlite') {
        // The hand-written id past 2^53 above makes SQLite number the next row after it: refused,
        // nothing written, until the operator renumbers that row.
        const refused = await call(owner.client, 'message_send', { channel: 'walk', body: 'numbered past it' });
        expect(refused.isError, refused.content?.[0]?.text).toBe(true);
        expect(refused.content?.[0]?.text).toMatch(/^IO_ERROR: The team store /);
        await db.sql(`DELETE FROM messages WHERE id = 9007199254740993; UPDATE sqlite_sequence SET seq = (SELECT max(id) FROM messages) WHERE name = 'messages'`);
      }
      for (let i = 0; i < 4; i++) {
        const sent = await call(owner.client, 'message_send', { channel: 'walk', body: `w${i}` });
        expect(sent.isError, sent.content?.[0]?.text).not.toBe(true);
      }
      for (let i = 0; i < 4; i++) await call(owner.client, 'task_create', { title: `walk ${i}` });
      for (let i = 0; i < 4; i++) await call(owner.client, 'task_comment', { id: 2, body: `c${i}` });
      await db.sql(
        `UPDATE messages SET created_at = ${big(1)} WHERE body = 'w1'; UPDATE messages SET created_at = ${big(2)} WHERE body = 'w2';
         UPDATE tasks SET updated_at = ${big(1)} WHERE title = 'walk 1'; UPDATE tasks SET updated_at = ${big(2)} WHERE title = 'walk 2';
         UPDATE task_labels SET updated_at = ${big(1)} WHERE task_id IN (SELECT id FROM tasks WHERE title = 'walk 1');
         UPDATE comments SET created_at = ${big(1)} WHERE body = 'c1'; UPDATE comments SET created_at = ${big(2)} WHERE body = 'c2'`,
      );
      const walk = async (tool: string, args: Record<string, unknown>, items: string, cursorArg: string, nextKey: string, limitArg = 'limit'): Promise<number[]> => {
        const ids: number[] = [];
        let cursor: unknown;
        for (let n = 0; n < 40; n++) {
          const r = await call(owner.client, tool, { ...args, [limitArg]: 1, ...(cursor === undefined ? {} : { [cursorArg]: cursor }) });
          expect(r.isError, `${tool}: ${r.content?.[0]?.text}`).not.toBe(true);
          ids.push(...(r.structuredContent?.[items] as { id: number }[]).map((x) => x.id));
          cursor = r.structuredContent?.[nextKey];
          if (cursor === undefined) return ids;
        }
        throw new Error(`${tool}: still paging after 40 pages: ${ids.join(',')}`);
      };
      const messages = await walk('message_history_read', { channel: 'walk' }, 'messages', 'cursor', 'next_cursor');
      expect(messages).toHaveLength(4);
      expect(new Set(messages).size).toBe(4);
      const tasks = await walk('task_list', {}, 'tasks', 'cursor', 'next_cursor');
      expect(new Set(tasks).size).toBe(tasks.length);
      expect(tasks.length).toBeGreaterThanOrEqual(5);
      const comments = await walk('task_get', { id: 2 }, 'comments', 'comments_cursor', 'comments_next_cursor', 'comments_limit');
      expect(comments).toHaveLength(4);
      expect(new Set(comments).size).toBe(4);

      if (engine.name !== 'sqlite') return;
      // SQLite keeps whatever a hand-written row gives a column: a BLOB body or title, a text time.
      await db.sql(
        `UPDATE messages SET body = CAST('blob body' AS BLOB) WHERE body = 'w0'; UPDATE messages SET created_at = 'yesterday' WHERE body = 'w3';
         UPDATE tasks SET title = CAST('blob title' AS BLOB) WHERE title = 'walk 0'; UPDATE tasks SET updated_at = 'soon' WHERE title = 'walk 3';
         UPDATE comments SET body = CAST('blob comment' AS BLOB) WHERE body = 'c0'; UPDATE comments SET created_at = 'later' WHERE body = 'c3'`,
      );
      expect(await walk('message_history_read', { channel: 'walk' }, 'messages', 'cursor', 'next_cursor')).toHaveLength(4);
      expect(new Set(await walk('task_list', {}, 'tasks', 'cursor', 'next_cursor')).size).toBe(tasks.length);
      expect(await walk('task_get', { id: 2 }, 'comments', 'comments_cursor', 'comments_next_cursor', 'comments_limit')).toHaveLength(4);
      for (const [tool, args] of [
        ['message_search', { q: 'blob' }],
        ['task_search', { q: 'walk' }],
        ['task_list', { limit: 50 }],
        ['message_history_read', { channel: 'walk', limit: 10 }],
      ] as const) {
        const r = await call(owner.client, tool, args);
        expect(r.isError, `${tool}: ${r.content?.[0]?.text}`).not.toBe(true);
      }
      const blobTask = (await call(owner.client, 'task_list', { limit: 50 })).structuredContent?.tasks as { id: number; title: string }[];
      const id = blobTask.find((t) => t.title === 'blob title')?.id;
      expect(id).toBeDefined();
      const one = await call(owner.client, 'task_get', { id });
      expect(one.isError, one.content?.[0]?.text).not.toBe(true);
      // and the check names each of them
      const store = await db.store();
      try {
        const found = new Set((await store.checkStoredValues(0, 2 ** 52, 1000)).issues.map((i) => `${i.table} ${i.why}`));
        for (const why of ['messages body not a text', 'tasks title not a text', 'comments body not a text']) {
          expect(found.has(why), `${why} in ${[...found].join('; ')}`).toBe(true);
        }
      } finally {
        await store.close();
      }
    });
  });
}
