/**
 * The team tools' pages are sized by what their items weigh (the JSON once, and once escaped in the
 * text mirror), not by the worst case of escaping: at every budget from 8 to 64 KiB, over bodies
 * of plain words and of heavy escaping (quotes, backslashes, control characters, emoji), a page
 * walk is never cut by the result budget, sees every row once, and a page that stops before its
 * `limit` fills at least half of the budget with its answer (from 16 KiB: at 8 KiB the report
 * reserve takes a fixed part and one row is a coarse step). A limit of 100 short messages at the
 * default budget is one page (it returned 95 when pages were sized for every byte doubled).
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { InMemoryTransport } from '@modelcontextprotocol/sdk/inMemory.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { REPORT_KEY } from '../../src/engine/limits.js';
import { createWorkspaceServer } from '../../src/server/create-server.js';
import { openSqliteTeamStore } from '../../src/team/index.js';

type Result = { isError?: boolean; structuredContent?: Record<string, unknown>; content?: { text?: string }[]; _meta?: Record<string, unknown> };

const dir = mkdtempSync(join(tmpdir(), 'page-weight-'));
const db = join(dir, 'team.db');
const root = mkdtempSync(join(tmpdir(), 'page-weight-root-'));
const ROWS = 240;

/** Bodies: short plain words, then heavy escaping, then long plain text, in turn. */
function body(i: number): string {
  if (i % 3 === 0) return `short note ${i}`;
  if (i % 3 === 1) return `"q${i}" \\back\\ \u0001\u001f tab\there 😀 ${'"\\'.repeat(i % 40)}`;
  return `${'lorem ipsum dolor '.repeat(1 + (i % 20))}${i}`;
}

beforeAll(async () => {
  const store = openSqliteTeamStore(db);
  await store.addFirstOwner('olga');
  const owner = (await store.getMember('olga'))!;
  for (let i = 0; i < ROWS; i++) {
    await store.sendMessage(owner, { channel: 'w', body: `${body(i)} findme` });
    await store.createTask(owner, { title: `task ${i} ${body(i)}`.slice(0, 200), body: body(i) });
  }
  await store.close();
});

afterAll(() => {
  rmSync(dir, { recursive: true, force: true });
  rmSync(root, { recursive: true, force: true });
});

describe.each([8192, 16384, 32768, 65536])('at a %i-byte budget', (maxBytes) => {
  let client: Client;
  let close: () => Promise<void>;

  beforeAll(async () => {
    const ws = await createWorkspaceServer(root, { maxResultBytes: maxBytes }, { dbPath: db, as: 'olga' });
    const [a, b] = InMemoryTransport.createLinkedPair();
    client = new Client({ name: 'page-weight', version: '1.0.0' });
    await Promise.all([ws.connect(b), client.connect(a)]);
    close = async () => {
      await client.close();
      await ws.close();
    };
  });
  afterAll(async () => close?.());

  for (const [tool, args, items] of [
    ['message_history_read', { channel: 'w' }, 'messages'],
    ['task_list', {}, 'tasks'],
    ['message_search', { q: 'findme' }, 'matches'],
  ] as const) {
    it(`${tool}: never cut, every row once, pages that stop early use the budget`, async () => {
      const ids: number[] = [];
      let cursor: string | undefined;
      for (let pages = 0; pages < 200; pages++) {
        const r = (await client.callTool({ name: tool, arguments: { ...args, limit: 100, ...(cursor === undefined ? {} : { cursor }) } })) as Result;
        expect(r.isError, r.content?.[0]?.text).not.toBe(true);
        expect(r._meta?.[REPORT_KEY], `${tool} page ${pages} was cut`).toBeUndefined();
        const bytes = Buffer.byteLength(JSON.stringify(r));
        expect(bytes).toBeLessThanOrEqual(maxBytes);
        const page = r.structuredContent![items] as { id: number }[];
        ids.push(...page.map((x) => x.id));
        cursor = r.structuredContent!.next_cursor as string | undefined;
        if (cursor === undefined) break;
        // At 8 KiB the report reserve takes a fixed part and a row of 1 KiB is a coarse step: only
        // never cut there.
        if (page.length < 100 && maxBytes > 8192) expect(bytes, `${tool} page ${pages}: ${page.length} items in ${bytes} bytes`).toBeGreaterThan(maxBytes / 2);
      }
      expect(cursor).toBeUndefined();
      expect(new Set(ids).size).toBe(ROWS);
      expect(ids).toHaveLength(ROWS);
    });
  }
});

it('a limit of 100 short messages at the default budget is one page', async () => {
  const store = openSqliteTeamStore(db);
  const owner = (await store.getMember('olga'))!;
  for (let i = 0; i < 100; i++) await store.sendMessage(owner, { channel: 'short', body: `ok ${i}` });
  await store.close();
  const ws = await createWorkspaceServer(root, {}, { dbPath: db, as: 'olga' });
  const [a, b] = InMemoryTransport.createLinkedPair();
  const client = new Client({ name: 'page-weight', version: '1.0.0' });
  await Promise.all([ws.connect(b), client.connect(a)]);
  try {
    const r = (await client.callTool({ name: 'message_history_read', arguments: { channel: 'short', limit: 100 } })) as Result;
    expect((r.structuredContent!.messages as unknown[]).length).toBe(100);
  } finally {
    await client.close();
    await ws.close();
  }
});
