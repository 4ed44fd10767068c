/**
 * Two `serve --listen` replicas on one PostgreSQL database with one cursor key: a
 * `message_history_read` walk that alternates replicas page by page returns every message exactly
 * once, newest first, while a third replica inserts messages into the same channel. Team cursors
 * are bound to the store id kept in the database, so each replica accepts the other's cursors;
 * a replica on another database refuses them.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openPgTeamStore } from '../../src/team/index.js';
import { ensureBuilt } from '../helpers/cli.js';
import { createTestDatabase, probePostgres, type TestDatabase } from '../team/pg-harness.js';
import { connect, killAll, removeStateDir, startListening, type Listening } from '../transport/http-harness.js';

const ready = await probePostgres();
const KEY = 'replica-test-cursor-key-0123456789abcdef';
const PRELOADED = 400;
const PAGE = 9;

type Result = { isError?: boolean; structuredContent?: Record<string, unknown>; content?: { text?: string }[] };
type HistoryPage = { messages: { id: number; created_at: string }[]; has_more: boolean; next_cursor?: string };

describe.skipIf(!ready)('serve --listen replicas on one PostgreSQL database', () => {
  let db: TestDatabase;
  let other: TestDatabase;
  let root: string;
  const servers: Listening[] = [];
  const clients: Client[] = [];
  const preloaded: number[] = [];

  beforeAll(async () => {
    ensureBuilt();
    root = mkdtempSync(join(tmpdir(), 'mcp-budget-replicas-'));
    [db, other] = await Promise.all([createTestDatabase(), createTestDatabase()]);
    const store = await openPgTeamStore(db.target);
    const olga = await store.addMember('olga', 'owner');
    // ties on created_at (three per millisecond) exercise the id tie-break
    const sent = await store.sendMany(olga, Array.from({ length: PRELOADED }, (_, i) => ({ channel: 'general', body: `preloaded ${i}`, at: 1_700_000_000_000 + Math.floor(i / 3) })));
    expect(sent).toBe(PRELOADED);
    preloaded.push(...(await store.dialect.pool.query<{ id: number }>(`SELECT id FROM messages ORDER BY id`)).rows.map((r) => r.id));
    await store.close();
    const args = (target: string): string[] => ['serve', '--root', root, '--team-db', target, '--as', 'olga', '--listen', '127.0.0.1:0'];
    const env = { MCP_BUDGET_CURSOR_KEY: KEY };
    servers.push(...(await Promise.all([startListening(args(db.target), env), startListening(args(db.target), env), startListening(args(db.target), env), startListening(args(other.target), env)])));
    clients.push(...(await Promise.all(servers.map((s) => connect(s.url)))));
  });

  afterAll(async () => {
    await Promise.all(clients.map((c) => c.close().catch(() => undefined)));
    await Promise.all(servers.map((s) => s.stop()));
    killAll();
    await Promise.all([db?.drop(), other?.drop()]);
    if (root !== undefined) rmSync(root, { recursive: true, force: true });
    removeStateDir();
  });

  const call = async (c: Client, name: string, args: Record<string, unknown>): Promise<Result> => (await c.callTool({ name, arguments: args })) as Result;

  it('a walk alternating replicas sees every message exactly once while a third replica writes', async () => {
    const [a, b, writer, stranger] = clients as [Client, Client, Client, Client];
    let writing = true;
    let written = 0;
    const inserts = (async () => {
      while (writing) {
        const r = await call(writer, 'message_send', { channel: 'general', body: `live ${written}` });
        expect(r.isError, JSON.stringify(r.content)).not.toBe(true);
        written++;
      }
    })();
    const seen: number[] = [];
    let cursor: string | undefined;
    let pages = 0;
    let prev: { at: number; id: number } | undefined;
    try {
      for (;;) {
        const r = await call(pages % 2 === 0 ? a : b, 'message_history_read', { channel: 'general', limit: PAGE, ...(cursor === undefined ? {} : { cursor }) });
        expect(r.isError, JSON.stringify(r.content)).not.toBe(true);
        const page = r.structuredContent as HistoryPage;
        for (const m of page.messages) {
          const at = Date.parse(m.created_at);
          if (prev !== undefined) expect(at < prev.at || (at === prev.at && m.id < prev.id)).toBe(true);
          prev = { at, id: m.id };
          seen.push(m.id);
        }
        pages++;
        if (pages === 3) {
          // a replica on another database refuses the cursor: it is bound to this store
          const refused = await call(stranger, 'message_history_read', { channel: 'general', cursor: page.next_cursor });
          expect(refused.isError).toBe(true);
          expect(refused.content?.[0]?.text).toMatch(/INVALID_CURSOR|NOT_FOUND/);
        }
        if (!page.has_more) break;
        cursor = page.next_cursor;
      }
    } finally {
      writing = false;
      await inserts;
    }
    expect(written).toBeGreaterThan(0);
    expect(pages).toBeGreaterThanOrEqual(Math.ceil(PRELOADED / PAGE));
    expect(new Set(seen).size).toBe(seen.length);
    const seenSet = new Set(seen);
    expect(preloaded.filter((id) => !seenSet.has(id))).toEqual([]);
    // live messages are newer than the walk's start: at most those sent before the first page appear
    expect(seen.length - PRELOADED).toBeLessThanOrEqual(written);
  });
  it('a message_search walk alternating replicas ranks every match exactly once (the score survives the cursor)', async () => {
    const [a, b] = clients as [Client, Client];
    const seen: number[] = [];
    let cursor: string | undefined;
    for (let pages = 0; ; pages++) {
      const r = await call(pages % 2 === 0 ? a : b, 'message_search', { q: 'preloaded', limit: 25, ...(cursor === undefined ? {} : { cursor }) });
      expect(r.isError, JSON.stringify(r.content)).not.toBe(true);
      const page = r.structuredContent as { matches: { id: number }[]; has_more: boolean; next_cursor?: string };
      seen.push(...page.matches.map((m) => m.id));
      if (!page.has_more) break;
      cursor = page.next_cursor;
    }
    expect(seen.length).toBe(PRELOADED);
    expect([...seen].sort((x, y) => x - y)).toEqual(preloaded);
  });
});
