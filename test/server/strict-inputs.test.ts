/**
 * Strict inputs: every tool of `serve` and every `exec` action refuses an argument it does not
 * declare, naming the ones it takes and the nearest, and does nothing; `tools/list` publishes
 * `additionalProperties: false`. (A `description` where `task_create` takes `body` once made a task
 * with an empty body, silently.)
 */
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { InMemoryTransport } from '@modelcontextprotocol/sdk/inMemory.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createWorkspaceServer, type WorkspaceServer } from '../../src/server/create-server.js';
import { tempTree } from '../helpers/fs-tree.js';

type Result = { isError?: boolean; content?: { text?: string }[] };

const root = tempTree('strict-inputs');
const state = tempTree('strict-inputs-state');
let ws: WorkspaceServer;
let client: Client;

beforeAll(async () => {
  ws = await createWorkspaceServer(root.dir, {}, { dbPath: `${state.dir}/team.db`, as: 'olga' });
  const [a, b] = InMemoryTransport.createLinkedPair();
  client = new Client({ name: 'strict-inputs', version: '1.0.0' });
  await Promise.all([ws.connect(b), client.connect(a)]);
});

afterAll(async () => {
  await client.close();
  await ws.close();
  root.remove();
  state.remove();
});

const names = (shape: Record<string, unknown>): string => Object.keys(shape).map((k) => `\`${k}\``).join(', ');

describe('strict inputs', () => {
  it('every tool and every exec action refuses an unknown argument, naming what it takes; nothing is written', async () => {
    const listed = new Map((await client.listTools()).tools.map((t) => [t.name, t]));
    for (const tool of ws.tools) {
      expect(listed.get(tool.name)?.inputSchema.additionalProperties, tool.name).toBe(false);
      const accepted = Object.keys(tool.inputShape);
      // a near miss of a real argument, and a stray one
      const miss = accepted.length > 0 ? `${accepted[0]}s` : 'zz';
      const direct = (await client.callTool({ name: tool.name, arguments: { [miss]: 1 } })) as Result;
      expect(direct.isError, tool.name).toBe(true);
      expect(direct.content?.[0]?.text, tool.name).toContain(`Unknown argument \`${miss}\`: ${tool.name} takes ${accepted.length === 0 ? 'no arguments' : names(tool.inputShape)}`);
      if (accepted.length > 0) expect(direct.content?.[0]?.text, tool.name).toContain(`(nearest: \`${accepted[0]}\`)`);
    }
    for (const action of ws.actions.list()) {
      const viaExec = (await client.callTool({ name: 'exec', arguments: { action: action.name, input: { zz_unknown: 1, zz_other: 2 } } })) as Result;
      expect(viaExec.isError, action.name).toBe(true);
      expect(viaExec.content?.[0]?.text, action.name).toMatch(/^INVALID_PARAMS: .*Unknown arguments `zz_unknown`, `zz_other`: /);
    }
    // nothing was written by any refused mutation
    const tasks = (await client.callTool({ name: 'task_list', arguments: {} })) as { structuredContent?: { tasks?: unknown[] } };
    expect(tasks.structuredContent?.tasks ?? []).toEqual([]);
  });

  it('the case that motivated it: task_create with `description` is refused, pointing to the argument it takes', async () => {
    const r = (await client.callTool({ name: 'task_create', arguments: { title: 't', description: 'the body' } })) as Result;
    expect(r.isError).toBe(true);
    expect(r.content?.[0]?.text).toMatch(/Unknown argument `description`: task_create takes `title`, .*`body`/);
  });
});
