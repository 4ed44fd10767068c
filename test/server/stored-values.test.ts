/**
 * A store that already holds a value no reader can show (a time past `Date`'s range, written
 * before the write boundary refused it, or by hand) never fails a page: every team read answers,
 * the time shown as what it is, and an inbox holding such a message can still be acknowledged.
 * A write boundary test for the same values is in test/team/behaviour.ts (both engines).
 */
import Database from 'better-sqlite3';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { InMemoryTransport } from '@modelcontextprotocol/sdk/inMemory.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createWorkspaceServer, type WorkspaceServer } from '../../src/server/create-server.js';
import { tempTree } from '../helpers/fs-tree.js';

type Result = { isError?: boolean; content?: { text?: string }[]; structuredContent?: Record<string, unknown> };

const root = tempTree('stored-values');
const state = tempTree('stored-values-state');
const db = `${state.dir}/team.db`;
let owner: { ws: WorkspaceServer; client: Client };
let ada: { ws: WorkspaceServer; client: Client };

async function open(as: string): Promise<{ ws: WorkspaceServer; client: Client }> {
  const ws = await createWorkspaceServer(root.dir, {}, { dbPath: db, as });
  const [a, b] = InMemoryTransport.createLinkedPair();
  const client = new Client({ name: 'stored-values', version: '1.0.0' });
  await Promise.all([ws.connect(b), client.connect(a)]);
  return { ws, client };
}

const call = async (c: Client, name: string, args: Record<string, unknown>): Promise<Result> => (await c.callTool({ name, arguments: args })) as Result;

beforeAll(async () => {
  owner = await open('olga');
  await call(owner.client, 'task_create', { title: 'seed' }); // creates the store, olga its owner
  const raw = new Database(db);
  raw.prepare(`INSERT INTO members (name, name_lower, role, created_at) VALUES ('ada', 'ada', 'member', 0)`).run();
  raw.close();
  await call(owner.client, 'message_send', { channel: 'general', body: 'far future', to: ['ada'] });
  await call(owner.client, 'task_comment', { id: 1, body: 'a comment' });
  // what an older import could write: times no Date can hold
  const w = new Database(db);
  w.exec(`UPDATE messages SET created_at = 1e300; UPDATE tasks SET created_at = -1e300, updated_at = 1e300; UPDATE comments SET created_at = 9e15`);
  w.close();
  ada = await open('ada');
});

afterAll(async () => {
  for (const s of [owner, ada]) {
    await s?.client.close();
    await s?.ws.close();
  }
  root.remove();
  state.remove();
});

describe('a store holding times no reader can show', () => {
  it('every team read answers, showing the time as what it is', async () => {
    const reads: [string, Record<string, unknown>][] = [
      ['message_history_read', { channel: 'general' }],
      ['message_search', { q: 'future' }],
      ['message_get', { id: 1 }],
      ['list_tasks', {}],
      ['search_tasks', { q: 'seed' }],
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
    expect(inbox.content?.[0]?.text).toMatch(/invalid time \(1e\+300 ms\)/);
    const ack = await call(ada.client, 'inbox_ack', { ack_cursor: inbox.structuredContent?.ack_cursor });
    expect(ack.isError, ack.content?.[0]?.text).not.toBe(true);
    expect((await call(ada.client, 'inbox_read', {})).structuredContent?.messages).toEqual([]);
  });

  it('a write whose answer renders such a time still answers its receipt', async () => {
    const r = await call(owner.client, 'task_update', { id: 1, priority: 'high' });
    expect(r.isError, r.content?.[0]?.text).not.toBe(true);
    expect(r.content?.[0]?.text).toMatch(/invalid time \(-1e\+300 ms\)/);
  });
});
