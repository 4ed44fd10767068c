/**
 * One call pipeline: every registered tool, on every route into its handler (its own `tools/call`,
 * `exec`, and the `mcp-budget exec` CLI route), hands the handler the caller the request named:
 * the token's member when a transport authenticated one, else the server's own `--as` member. The
 * handlers are observed through the declarations the routes share, so a route that reached a
 * handler some other way would show another caller (or none).
 */
import { mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { InMemoryTransport } from '@modelcontextprotocol/sdk/inMemory.js';
import type { JSONRPCMessage } from '@modelcontextprotocol/sdk/types.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { WorkspaceError } from '../../src/fs/errors.js';
import { createWorkspaceServer, type WorkspaceServer } from '../../src/server/create-server.js';
import { openSqliteTeamStore } from '../../src/team/index.js';

let dir: string;
let ws: WorkspaceServer;
const seen: { tool: string; caller: string }[] = [];

/** A valid input per tool (the handler is observed, not run: any input the schema accepts will do). */
const INPUTS: Record<string, Record<string, unknown>> = {
  workspace_list_dir: {},
  workspace_scan: {},
  workspace_search_files: { query: '*' },
  workspace_read_file: { path: 'a.txt' },
  workspace_seed_files: { files: [{ path: 'b.txt', content: 'b' }] },
  git_log: {},
  git_status: {},
  git_branches: {},
  git_tags: {},
  git_stashes: {},
  git_merge_status: {},
  git_commit: { message: 'm' },
  git_create_branch: { name: 'x' },
  git_create_tag: { name: 'v' },
  message_send: { channel: 'general', body: 'hi' },
  message_history_read: { channel: 'general' },
  message_search: { q: 'hi' },
  message_get: { id: 1 },
  inbox_read: {},
  inbox_ack: { ack_cursor: 'x' },
  task_list: {},
  task_search: { q: 't' },
  task_get: { id: 1 },
  task_create: { title: 't' },
  task_update: { id: 1, title: 'u' },
  task_comment: { id: 1, body: 'c' },
  task_options: { field: 'status' },
};

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'mcp-budget-pipeline-'));
  mkdirSync(join(dir, 'root'));
  const db = join(dir, 'team.db');
  const store = openSqliteTeamStore(db, 'test');
  await store.addMember('server', 'owner');
  await store.addMember('alice', 'member');
  await store.close();
  ws = await createWorkspaceServer(join(dir, 'root'), {}, { dbPath: db, as: 'server' });
  // Observe every handler where all routes reach it: the declarations (`exec` shares them).
  for (const tool of ws.tools) {
    tool.handler = async (_args, call) => {
      seen.push({ tool: tool.name, caller: call.caller.name });
      throw new WorkspaceError('INVALID_PARAMS', 'observed'); // an answer every route passes on quietly
    };
  }
});

afterAll(async () => {
  await ws?.close();
  rmSync(dir, { recursive: true, force: true });
});

/** A client whose every request carries `member` as its authenticated caller (as the HTTP front sets it). */
async function clientAs(member: string | undefined): Promise<Client> {
  const [clientSide, serverSide] = InMemoryTransport.createLinkedPair();
  if (member !== undefined) {
    const send = clientSide.send.bind(clientSide);
    clientSide.send = (m: JSONRPCMessage, o) => send(m, { ...o, authInfo: { token: 't', clientId: member, scopes: [] } });
  }
  await ws.connect(serverSide);
  const client = new Client({ name: 'pipeline', version: '1' });
  await client.connect(clientSide);
  return client;
}

describe('one call pipeline: the caller the handler sees is the request\'s, on every route', () => {
  it('has an input for every declared tool (a new tool must be added here)', () => {
    expect(Object.keys(INPUTS).sort()).toEqual(ws.tools.map((t) => t.name).sort());
  });

  it('direct tools/call and exec, as a token\'s member; the exec CLI route as the server\'s own', async () => {
    const alice = await clientAs('alice');
    const names = new Map(ws.actions.list().map((a) => [a.tool, a.name]));
    try {
      for (const tool of ws.tools) {
        seen.length = 0;
        await alice.callTool({ name: tool.name, arguments: INPUTS[tool.name] });
        await alice.callTool({ name: 'exec', arguments: { action: names.get(tool.name), input: INPUTS[tool.name] } });
        await ws.exec(names.get(tool.name)!, INPUTS[tool.name]);
        expect(seen, tool.name).toEqual([
          { tool: tool.name, caller: 'alice' },
          { tool: tool.name, caller: 'alice' },
          { tool: tool.name, caller: 'server' },
        ]);
      }
    } finally {
      await alice.close();
    }
  });

  it('a client with no authenticated caller (stdio) runs as the server\'s own member', async () => {
    const local = await clientAs(undefined);
    try {
      seen.length = 0;
      await local.callTool({ name: 'workspace_list_dir', arguments: {} });
      await local.callTool({ name: 'exec', arguments: { action: 'task.create', input: { title: 't' } } });
      expect(seen).toEqual([
        { tool: 'workspace_list_dir', caller: 'server' },
        { tool: 'task_create', caller: 'server' },
      ]);
    } finally {
      await local.close();
    }
  });
});
