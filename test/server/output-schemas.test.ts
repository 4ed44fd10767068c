/**
 * Published output schemas, checked on real results: every tool of `serve` publishes an
 * `outputSchema` that lists its members exactly (`additionalProperties: false`), and one real call
 * of each, through its own `tools/call`, returns structured content that the published JSON Schema
 * accepts, validated as a client validates it. The compiler checks the pages' types
 * (test/server/typed-contracts.test.ts); this checks the values, members included.
 */
import { execSync } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { InMemoryTransport } from '@modelcontextprotocol/sdk/inMemory.js';
import { AjvJsonSchemaValidator } from '@modelcontextprotocol/sdk/validation/ajv';
import type { Tool } from '@modelcontextprotocol/sdk/types.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createWorkspaceServer, type WorkspaceServer } from '../../src/server/create-server.js';
import { tempTree } from '../helpers/fs-tree.js';

let tree: { dir: string; remove: () => void };
let store: { dir: string; remove: () => void };
let ws: WorkspaceServer;
let client: Client;
let tools: Tool[];
const git = (cmd: string): string => execSync(`git -c user.name=t -c user.email=t@example.com ${cmd}`, { cwd: tree.dir, encoding: 'utf8' });

beforeAll(async () => {
  tree = tempTree('output-schemas');
  store = tempTree('output-schemas-store');
  writeFileSync(join(tree.dir, 'g.txt'), 'first\n'.repeat(4000)); // longer than one read window: next_offset is set
  git('init -q');
  git('add g.txt');
  git('commit -qm first');
  ws = await createWorkspaceServer(tree.dir, {}, { dbPath: join(store.dir, 'team.db'), as: 'tester' });
  const [clientSide, serverSide] = InMemoryTransport.createLinkedPair();
  await ws.connect(serverSide);
  client = new Client({ name: 'output-schemas', version: '1' });
  await client.connect(clientSide);
  tools = (await client.listTools()).tools;
}, 60_000);

afterAll(async () => {
  await client?.close();
  await ws?.close();
  tree?.remove();
  store?.remove();
});

describe('output schemas: published exactly, and real results pass them', () => {
  it('every tool publishes an outputSchema that lists its members exactly', () => {
    expect(tools.length).toBeGreaterThan(0);
    for (const t of tools) {
      expect(t.outputSchema, t.name).toBeDefined();
      expect((t.outputSchema as { additionalProperties?: unknown }).additionalProperties, t.name).toBe(false);
    }
  });

  it("one real call of every tool returns structured content its published schema accepts", async () => {
    const seen: Record<string, Record<string, unknown>> = {};
    const taskId = (): unknown => (seen.task_create!.task as { id: number }).id;
    // Mutations first where reads need what they make; every listed tool must have an input here.
    const inputs: [string, () => Record<string, unknown>][] = [
      ['workspace_seed_files', () => ({ files: [{ path: 'seeded/one.txt', content: 'one' }] })],
      ['workspace_list_dir', () => ({})],
      ['workspace_scan', () => ({})],
      ['workspace_search_files', () => ({ query: '**/*.txt' })],
      ['workspace_read_file', () => ({ path: 'g.txt', max_bytes: 100 })],
      ['git_commit', () => ({ message: 'seeded', paths: ['seeded/one.txt'] })],
      ['git_create_branch', () => ({ name: 'feature-x' })],
      ['git_create_tag', () => ({ name: 'v1', message: 'tag one' })],
      ['git_log', () => ({ path: 'g.txt', limit: 1 })],
      ['git_status', () => ({})],
      ['git_branches', () => ({ match: 'feat' })],
      ['git_tags', () => ({})],
      ['git_stashes', () => ({})],
      ['git_merge_status', () => ({})],
      ['message_send', () => ({ channel: 'general', body: 'hello schemas', to: ['tester'] })],
      ['message_history_read', () => ({ channel: 'general' })],
      ['message_search', () => ({ q: 'hello' })],
      ['message_get', () => ({ id: seen.message_send!.id })],
      ['inbox_read', () => ({})],
      ['inbox_ack', () => ({ ack_cursor: seen.inbox_read!.ack_cursor })],
      ['task_create', () => ({ title: 'schema task', labels: ['typed'], assignee: 'tester' })],
      ['task_list', () => ({})],
      ['task_search', () => ({ q: 'schema' })],
      ['task_comment', () => ({ id: taskId(), body: 'a note' })],
      ['task_get', () => ({ id: taskId() })],
      ['task_update', () => ({ id: taskId(), assignee: null })],
      ['task_options', () => ({ field: 'assignee', q: 'test' })],
      ['exec', () => ({ action: 'workspace.list_dir', input: {} })],
    ];
    // The reading tool needs a handle from a cut result: its answers are checked in continuation-e2e.test.ts.
    const served = tools.filter((t) => t.name !== 'mcp_result_budget__read');
    expect(inputs.map(([n]) => n).sort(), 'one input per listed tool').toEqual(served.map((t) => t.name).sort());
    const ajv = new AjvJsonSchemaValidator();
    for (const [name, input] of inputs) {
      const r = await client.callTool({ name, arguments: input() });
      expect(r.isError, `${name}: ${JSON.stringify(r.content)}`).not.toBe(true);
      const check = ajv.getValidator(tools.find((t) => t.name === name)!.outputSchema as never)(r.structuredContent);
      expect(check.errorMessage, name).toBeUndefined();
      expect(check.valid, name).toBe(true);
      seen[name] = r.structuredContent as Record<string, unknown>;
    }
    // The optional and nullable members these calls reach are really there, so they were checked too.
    expect(seen.workspace_read_file!.next_offset).toBe(100);
    expect(seen.git_log!.path).toBe('g.txt');
    expect((seen.task_update!.task as { assignee: unknown }).assignee).toBeNull();
    expect(seen.task_get!.body_next_offset).toBeNull();
  }, 60_000);
});
