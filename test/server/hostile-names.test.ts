/**
 * A file name is at most 255 bytes, but as JSON it can be six times that (control characters are
 * written `\uXXXX`), past the string bound at small budgets: it would arrive cut, naming no file.
 * `workspace_list_dir` gives such a name as a lossy rendering with its raw bytes in `name_base64`,
 * so no page is cut at any budget `serve` accepts, and every name can be rebuilt exactly.
 */
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { InMemoryTransport } from '@modelcontextprotocol/sdk/inMemory.js';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { createWorkspaceServer } from '../../src/server/create-server.js';
import { tempTree } from '../helpers/fs-tree.js';

const REPORT_KEY = 'io.github.mcp-result-budget/budget';

/** 255-byte names of every kind that escapes or that readers break lines at, and a plain one. */
const NAMES: string[] = [
  '\u0001'.repeat(255),
  '\u001f"\\'.repeat(85),
  '\u2028'.repeat(85),
  '\u0085'.repeat(127),
  '"\\'.repeat(127),
  '\u007f'.repeat(255),
  `${'\u0007'.repeat(200)}${'😀'.repeat(13)}`,
  'plain-name.txt',
];

const root = tempTree('hostile-names');
const state = tempTree('hostile-names-state');
for (const n of NAMES) writeFileSync(join(root.dir, n), 'x');
const open: { close(): Promise<void> }[] = [];
afterAll(async () => {
  for (const c of open) await c.close();
  root.remove();
  state.remove();
});

describe('workspace_list_dir: names as long as JSON can make them', () => {
  it.each([{ maxResultBytes: 8192 }, { maxStringBytes: 1024 }, { maxTokens: 1664 }, {}])('%j: no page is cut, and every name is there exactly once, rebuilt from name_base64', async (limits) => {
    const ws = await createWorkspaceServer(root.dir, limits, { dbPath: join(state.dir, `team-${JSON.stringify(limits).length}.db`), as: 'olga' });
    const [a, b] = InMemoryTransport.createLinkedPair();
    const client = new Client({ name: 'hostile-names', version: '1.0.0' });
    await Promise.all([ws.connect(b), client.connect(a)]);
    open.push(client, ws);
    await client.listTools();
    const seen: string[] = [];
    let cursor: string | undefined;
    for (let pages = 0; pages < 50; pages++) {
      const r = (await client.callTool({ name: 'workspace_list_dir', arguments: cursor === undefined ? {} : { cursor } })) as {
        isError?: boolean;
        structuredContent?: { entries: { name: string; name_base64?: string }[]; next_cursor?: string };
        _meta?: Record<string, unknown>;
      };
      expect(r.isError).not.toBe(true);
      expect(r._meta?.[REPORT_KEY], JSON.stringify(r._meta?.[REPORT_KEY])).toBeUndefined();
      for (const e of r.structuredContent!.entries) {
        seen.push(e.name_base64 === undefined ? e.name : Buffer.from(e.name_base64, 'base64').toString('utf8'));
        if (e.name_base64 !== undefined) expect(e.name).not.toMatch(/[\u0000-\u001f"\\\u007f-\u009f\u2028\u2029]/);
      }
      cursor = r.structuredContent!.next_cursor;
      if (cursor === undefined) break;
    }
    expect(seen.sort()).toEqual([...NAMES].sort());
  });
});
