/**
 * A mutation is decided by its write alone, for every mutation tool of `serve`, on both team store
 * engines, called directly and through `exec`: a fault is injected right after the write commits
 * (the server's `afterWrite` hook throws, standing for any later step: rendering the receipt,
 * checking its schema, bounding it). The answer must say the write was made, with what identifies
 * it, and never that it failed or that it should be tried again; the write must be there; a raw
 * error's text must not reach the model. The tool list is the server's own, so a new mutation tool
 * without a case here fails the test.
 */
import { execFileSync } from 'node:child_process';
import { existsSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { InMemoryTransport } from '@modelcontextprotocol/sdk/inMemory.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createWorkspaceServer, type WorkspaceServer } from '../../src/server/create-server.js';
import { ERROR_META_KEY, REPORT_KEY } from '../../src/shared/meta.js';
import { WorkspaceError } from '../../src/fs/confine.js';
import { tempTree } from '../helpers/fs-tree.js';
import { createTestDatabase, probePostgres, type TestDatabase } from '../team/pg-harness.js';

type Result = { isError?: boolean; content?: { text?: string }[]; structuredContent?: Record<string, unknown>; _meta?: Record<string, Record<string, unknown>> };

const pgReady = await probePostgres();
const SECRET = '/very/secret/host/path.db';

/** Valid arguments for the `n`th call of each mutation tool, and how to see that its write is there. */
interface Case {
  args(n: number, c: Client): Promise<Record<string, unknown>>;
  landed(n: number, c: Client, root: string, known: Record<string, unknown>): Promise<void>;
}

const call = async (c: Client, name: string, args: Record<string, unknown>): Promise<Result> => (await c.callTool({ name, arguments: args })) as Result;
const git = (root: string, ...args: string[]): string => execFileSync('git', args, { cwd: root, encoding: 'utf8' }).trim();

const CASES: Record<string, Case> = {
  workspace_seed_files: {
    args: async (n) => ({ files: [{ path: `seeded/${n}.txt`, content: `seed ${n}` }] }),
    landed: async (n, _c, root) => expect(existsSync(join(root, 'seeded', `${n}.txt`))).toBe(true),
  },
  git_commit: {
    args: async (n, _c) => ({ message: `change ${n}`, paths: [`change-${n}.txt`] }),
    landed: async (n, _c, root, known) => {
      expect(git(root, 'log', '-1', '--format=%s')).toBe(`change ${n}`);
      expect(known.commit).toBe(git(root, 'rev-parse', 'HEAD'));
    },
  },
  git_create_branch: {
    args: async (n) => ({ name: `branch-${n}` }),
    landed: async (n, _c, root) => expect(git(root, 'branch', '--list', `branch-${n}`)).toContain(`branch-${n}`),
  },
  git_create_tag: {
    args: async (n) => ({ name: `tag-${n}` }),
    landed: async (n, _c, root) => expect(git(root, 'tag', '--list', `tag-${n}`)).toBe(`tag-${n}`),
  },
  message_send: {
    args: async (n) => ({ channel: 'general', body: `hello ${n}`, to: ['olga'] }),
    landed: async (_n, c, _root, known) => {
      const m = await call(c, 'message_get', { id: known.message_id });
      expect(m.isError, m.content?.[0]?.text).not.toBe(true);
    },
  },
  task_create: {
    args: async (n) => ({ title: `task ${n}` }),
    landed: async (n, c, _root, known) => {
      const t = await call(c, 'task_get', { id: known.task_id });
      expect(t.content?.[0]?.text).toContain(`task ${n}`);
    },
  },
  task_update: {
    args: async (n) => ({ id: 1, title: `renamed ${n}` }),
    landed: async (n, c) => expect((await call(c, 'task_get', { id: 1 })).content?.[0]?.text).toContain(`renamed ${n}`),
  },
  task_comment: {
    args: async (n) => ({ id: 1, body: `comment ${n}` }),
    landed: async (n, c) => expect((await call(c, 'task_get', { id: 1 })).content?.[0]?.text).toContain(`comment ${n}`),
  },
  inbox_ack: {
    args: async (n, c) => {
      await call(c, 'message_send', { channel: 'general', body: `for the inbox ${n}`, to: ['olga'] });
      const inbox = await call(c, 'inbox_read', {});
      return { ack_cursor: inbox.structuredContent?.ack_cursor };
    },
    landed: async (_n, c) => expect((await call(c, 'inbox_read', {})).structuredContent?.messages).toEqual([]),
  },
};

interface Engine {
  name: string;
  ready: boolean;
  open(state: string): Promise<{ target: string; drop(): Promise<void> }>;
}

const ENGINES: Engine[] = [
  { name: 'sqlite', ready: true, open: async (state) => ({ target: join(state, 'team.db'), drop: async () => undefined }) },
  {
    name: 'postgres',
    ready: pgReady,
    open: async () => {
      const db: TestDatabase = await createTestDatabase();
      return { target: db.target, drop: () => db.drop() };
    },
  },
];

for (const engine of ENGINES) {
  describe.skipIf(!engine.ready)(`a fault after the write (${engine.name})`, () => {
    const root = tempTree(`applied-${engine.name}`);
    const state = tempTree(`applied-state-${engine.name}`);
    let store: { target: string; drop(): Promise<void> };
    let ws: WorkspaceServer;
    let client: Client;
    /** The next fault: thrown once, right after the next write commits. */
    let armed: Error | undefined;
    /** Numbers every call of the file apart (names, paths and titles must be new on each). */
    let n = 0;

    beforeAll(async () => {
      git(root.dir, 'init', '-q');
      git(root.dir, '-c', 'user.name=t', '-c', 'user.email=t@example.com', 'commit', '-q', '--allow-empty', '-m', 'first');
      git(root.dir, 'config', 'user.name', 't');
      git(root.dir, 'config', 'user.email', 't@example.com');
      store = await engine.open(state.dir);
      const afterWrite = (): void => {
        const fault = armed;
        armed = undefined;
        if (fault !== undefined) throw fault;
      };
      ws = await createWorkspaceServer(root.dir, {}, { dbPath: store.target, as: 'olga' }, undefined, { afterWrite });
      const [a, b] = InMemoryTransport.createLinkedPair();
      client = new Client({ name: 'applied-after-write', version: '1.0.0' });
      await Promise.all([ws.connect(b), client.connect(a)]);
      const first = await call(client, 'task_create', { title: 'the first task' }); // creates the store, olga its owner
      expect(first.isError, first.content?.[0]?.text).not.toBe(true);
    });

    afterAll(async () => {
      await client?.close();
      await ws?.close();
      await store?.drop();
      root.remove();
      state.remove();
    });

    it('every mutation tool has a case (the list is the server’s own)', () => {
      const mutations = ws.tools.filter((t) => !t.annotations.readOnlyHint && t.name !== 'exec').map((t) => t.name);
      expect(mutations.sort()).toEqual(Object.keys(CASES).sort());
    });

    const FAULTS: [string, () => Error][] = [
      ['a described failure', () => new WorkspaceError('IO_ERROR', 'the receipt could not be read back')],
      ['a raw error naming a host path', () => Object.assign(new Error(`EACCES: permission denied, open '${SECRET}'`), { code: 'EACCES' })],
    ];

    for (const route of ['direct', 'exec'] as const) {
      it(`answers applied, with what identifies the write, never a failure or a retry (${route})`, async () => {
        for (const [tool, c] of Object.entries(CASES)) {
          for (const [what, fault] of FAULTS) {
            n++;
            const tag = `${tool} ${route} ${what}`;
            if (tool === 'git_commit') writeFileSync(join(root.dir, `change-${n}.txt`), `${n}\n`);
            const args = await c.args(n, client);
            armed = fault();
            const action = ws.actions.list().find((a) => a.declared.name === tool)!;
            const r = route === 'direct' ? await call(client, tool, args) : await call(client, 'exec', { action: action.name, input: args });
            expect(armed, `${tag}: the write never ran`).toBeUndefined();
            const text = r.content?.[0]?.text ?? '';
            expect(r.isError, tag).toBe(true);
            expect(text, tag).toMatch(/^APPLIED: the write was made/);
            expect(text, tag).toMatch(/Do not repeat the call/);
            expect(text, tag).not.toMatch(/try again/i);
            expect(JSON.stringify(r), tag).not.toContain(SECRET);
            const meta = route === 'direct' ? r._meta?.[ERROR_META_KEY] : (r._meta?.[REPORT_KEY]?.receipt as Record<string, unknown>);
            expect(meta?.applied, tag).toBe(true);
            if (route === 'direct') expect(meta?.code, tag).toBe('APPLIED');
            await c.landed(n, client, root.dir, meta ?? {});
          }
        }
      }, 60_000);
    }

    it('without a fault every mutation answers its receipt', async () => {
      for (const [tool, c] of Object.entries(CASES)) {
        n++;
        if (tool === 'git_commit') writeFileSync(join(root.dir, `change-${n}.txt`), `${n}\n`);
        const r = await call(client, tool, await c.args(n, client));
        expect(r.isError, `${tool}: ${r.content?.[0]?.text}`).not.toBe(true);
      }
    }, 60_000);
  });
}
