/**
 * A closed workspace server holds nothing: `serve --listen` builds one per session, so whatever one
 * keeps open after `close()` is kept once per session ever opened (until the garbage collector,
 * which warns about it). Counted on this process's own descriptor table.
 */
import { readdirSync } from 'node:fs';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { InMemoryTransport } from '@modelcontextprotocol/sdk/inMemory.js';
import { afterAll, describe, expect, it } from 'vitest';
import { createWorkspaceServer } from '../../src/server/create-server.js';
import { tempTree } from '../helpers/fs-tree.js';

const tree = tempTree('close');
const state = tempTree('close-state');
afterAll(() => {
  tree.remove();
  state.remove();
});

const descriptors = (): number => readdirSync('/proc/self/fd').length;

describe('closing a workspace server', () => {
  it.runIf(process.platform === 'linux')('30 servers opened, called (files and the team store) and closed leave the descriptor count where it was', async () => {
    const once = async (): Promise<void> => {
      const ws = await createWorkspaceServer(tree.dir, {}, { dbPath: `${state.dir}/team.db`, as: 'ada' });
      const [a, b] = InMemoryTransport.createLinkedPair();
      const client = new Client({ name: 'close-test', version: '1.0.0' });
      await Promise.all([ws.connect(b), client.connect(a)]);
      await client.callTool({ name: 'workspace_list_dir', arguments: {} });
      await client.callTool({ name: 'message_send', arguments: { channel: 'general', body: 'hi' } });
      await client.close();
      await ws.close();
    };
    await once(); // the first opens what a process opens once (modules, the store's file)
    const before = descriptors();
    for (let i = 0; i < 30; i++) await once();
    expect(descriptors() - before).toBeLessThanOrEqual(1);
  });
});

describe('a workspace server that cannot start', () => {
  it.runIf(process.platform === 'linux')('a store that stops the start (an unknown --as) leaves no descriptor open, 20 times over', async () => {
    const db = `${state.dir}/refusing.db`;
    const first = await createWorkspaceServer(tree.dir, {}, { dbPath: db, as: 'owner' });
    const [a, b] = InMemoryTransport.createLinkedPair();
    const client = new Client({ name: 'close-test', version: '1.0.0' });
    await Promise.all([first.connect(b), client.connect(a)]);
    await client.callTool({ name: 'task_create', arguments: { title: 'makes the store' } });
    await client.close();
    await first.close();
    const before = descriptors();
    for (let i = 0; i < 20; i++) {
      await expect(createWorkspaceServer(tree.dir, {}, { dbPath: db, as: 'stranger' })).rejects.toThrow(/UNKNOWN_MEMBER/);
    }
    expect(descriptors() - before).toBeLessThanOrEqual(1);
  });
});
