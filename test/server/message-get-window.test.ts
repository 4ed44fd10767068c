/**
 * message_get's body window at the smallest pages serve takes (8 KiB results, token bounds near
 * their minimum): the first window holds some of the body and body_next_offset moves on (a window
 * of `page - 1024` bytes was empty there, and a client following the offset looped forever).
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { InMemoryTransport } from '@modelcontextprotocol/sdk/inMemory.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createWorkspaceServer } from '../../src/server/create-server.js';
import { openSqliteTeamStore } from '../../src/team/index.js';

const dir = mkdtempSync(join(tmpdir(), 'msg-window-'));
const db = join(dir, 'team.db');
const root = mkdtempSync(join(tmpdir(), 'msg-window-root-'));
let id = 0;

beforeAll(async () => {
  const store = openSqliteTeamStore(db);
  await store.addFirstOwner('olga');
  const owner = (await store.getMember('olga'))!;
  id = (await store.sendMessage(owner, { channel: 'w', body: 'hello world '.repeat(100) })).id;
  await store.close();
});
afterAll(() => {
  rmSync(dir, { recursive: true, force: true });
  rmSync(root, { recursive: true, force: true });
});

describe.each([{ maxTokens: 1664 }, { maxTokens: 2000 }, { maxResultBytes: 8192 }])('message_get at %o', (opts) => {
  it('the first window holds some of the body and moves on', async () => {
    const ws = await createWorkspaceServer(root, opts, { dbPath: db, as: 'olga' });
    const [a, b] = InMemoryTransport.createLinkedPair();
    const client = new Client({ name: 'review', version: '1.0.0' });
    await Promise.all([ws.connect(b), client.connect(a)]);
    try {
      const r = (await client.callTool({ name: 'message_get', arguments: { id } })) as unknown as { structuredContent: { message: { body: string }; body_next_offset: number | null } };
      expect(r.structuredContent.message.body.length).toBeGreaterThan(0);
      expect(r.structuredContent.body_next_offset).not.toBe(0);
      // and the budget never had to cut the answer
      expect(JSON.stringify((r as unknown as { _meta?: unknown })._meta ?? {})).not.toContain('truncated');
    } finally {
      await client.close();
      await ws.close();
    }
  });
});
