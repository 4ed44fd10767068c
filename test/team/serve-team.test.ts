/**
 * The team tools end to end: `mcp-budget team import` loads a store, `mcp-budget serve --as NAME`
 * processes are driven with the SDK Client over stdio. Cursor walks while another process
 * writes, planted words, role scoping per role, inbox peek/ack under concurrent sends, caps,
 * cursors that must be refused, and store files that must stop the server at startup.
 */
import { spawnSync } from 'node:child_process';
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { SCHEMA_VERSION } from '../../src/team/index.js';
import { cleanEnv, cliPath, ensureBuilt } from '../helpers/cli.js';
import { tempTree } from '../helpers/fs-tree.js';
import { callErr, callOk, connectClient, reportOf, serveTransport, type Connected } from '../helpers/mcp-stdio.js';
import { createTestDatabase, probePostgres, type TestDatabase } from './pg-harness.js';

const pgReady = await probePostgres();

const MESSAGES = 300;
const TASKS = 120;
const MEMBERS: [string, string][] = [['olga', 'owner'], ['lee', 'lead'], ['mia', 'member'], ['ada', 'agent'], ['gus', 'guest'], ['gil', 'guest'], ['max', 'member']];

let root: ReturnType<typeof tempTree>;
let outside: ReturnType<typeof tempTree>;
/** The store the engine's tools run on now (a SQLite file, or a PostgreSQL database). */
let db: string;
/** The SQLite store, for the startup checks of store files. */
let sqliteDb: string;
let input: string;
const open: Connected[] = [];

/** Server stderr by connection, so that a server that exits says why in the failure. */
const stderrOf = new WeakMap<Connected, () => string>();

async function as(name: string): Promise<Connected> {
  const t = serveTransport(root.dir, ['--team-db', db, '--as', name]);
  let err = '';
  t.stderr?.on('data', (b: Buffer) => (err += b.toString()));
  let c: Connected;
  try {
    c = await connectClient(t);
  } catch (e) {
    throw new Error(`serve --as ${name} did not start: ${(e as Error).message}; server stderr: ${err}`);
  }
  stderrOf.set(c, () => err);
  open.push(c);
  return c;
}

/** callOk that adds the server's stderr to a failure. */
async function call<T>(c: Connected, name: string, args: Record<string, unknown>): Promise<T> {
  try {
    return await callOk<T>(c.client, name, args);
  } catch (e) {
    throw new Error(`${(e as Error).message}; server stderr: ${stderrOf.get(c)?.() ?? '(none)'}`);
  }
}

function cli(args: string[]): { status: number | null; stderr: string; stdout: string } {
  const r = spawnSync(process.execPath, [cliPath, ...args], { encoding: 'utf8', env: cleanEnv(), input: '', timeout: 30_000 });
  return { status: r.status, stderr: r.stderr, stdout: r.stdout };
}

beforeAll(() => {
  ensureBuilt();
  root = tempTree('team-root');
  outside = tempTree('team-store');
  sqliteDb = join(outside.dir, 'team.db');
  const lines: object[] = MEMBERS.map(([name, role]) => ({ kind: 'member', name, role, active: name !== 'max' }));
  for (let i = 0; i < MESSAGES; i++) {
    lines.push({ kind: 'message', channel: 'general', author: MEMBERS[i % 4]![0], body: `update ${i}${i === 137 ? ' the quokka was seen' : ''}`, created_at: 1_700_000_000_000 + Math.floor(i / 2) * 1000 });
  }
  for (let i = 0; i < TASKS; i++) {
    lines.push({ kind: 'task', title: `task ${i} ${i === 42 ? 'pangolin migration' : 'routine'}`, status: i % 3 ? 'open' : 'done', labels: i % 5 ? ['ops'] : ['ops', 'urgent'], assignee: i % 2 ? 'mia' : null, created_at: 1_700_000_000_000 + i * 1000 });
  }
  input = join(outside.dir, 'in.jsonl');
  writeFileSync(input, lines.map((l) => JSON.stringify(l)).join('\n') + '\n');
}, 60_000);

afterAll(async () => {
  await Promise.all(open.splice(0).map((c) => c.close()));
  root?.remove();
  outside?.remove();
});

/** Load the store the engine's tools run on, with `mcp-budget team import`. */
function importInto(target: string): void {
  const r = cli(['team', '--root', root.dir, '--team-db', target, 'import', input]);
  expect(r.stderr).toMatch(/team import: done/);
  expect(r.status).toBe(0);
}

/** The team tools on one engine: the same cases, the same answers. */
const ENGINES: { name: string; ready: boolean; open(): Promise<{ target: string; drop(): Promise<void> }> }[] = [
  { name: 'sqlite', ready: true, open: async () => ({ target: sqliteDb, drop: async () => undefined }) },
  {
    name: 'postgres',
    ready: pgReady,
    open: async () => {
      const d: TestDatabase = await createTestDatabase();
      return { target: d.target, drop: () => d.drop() };
    },
  },
];

type Page<K extends string> = Record<K, { id: number; created_at?: string; updated_at?: string }[]> & {
  has_more: boolean;
  next_cursor?: string;
};

for (const engine of ENGINES) {
  describe.skipIf(!engine.ready)(`the team tools on ${engine.name}`, () => {
    let store: { target: string; drop(): Promise<void> };
    beforeAll(async () => {
      store = await engine.open();
      db = store.target;
      importInto(db);
    }, 60_000);
    afterAll(async () => {
      await Promise.all(open.splice(0).map((c) => c.close()));
      await store?.drop();
    });

    describe('cursor walks while another process writes', () => {
      it('message_history_read returns every message exactly once, newest first', async () => {
        const [a, b] = await Promise.all([as('olga'), as('lee')]);
        const seen: number[] = [];
        let cursor: string | undefined;
        let prev: [string, number] | undefined;
        for (let n = 0; ; n++) {
          const page: Page<'messages'> = await callOk(a.client, 'message_history_read', { channel: 'general', limit: 23, ...(cursor ? { cursor } : {}) });
          for (const m of page.messages) {
            if (prev !== undefined) expect(m.created_at! < prev[0] || (m.created_at === prev[0] && m.id < prev[1])).toBe(true);
            prev = [m.created_at!, m.id];
            seen.push(m.id);
          }
          await callOk(b.client, 'message_send', { channel: 'general', body: `concurrent ${n}` });
          if (!page.has_more) break;
          cursor = page.next_cursor;
        }
        expect(seen).toHaveLength(MESSAGES);
        expect(new Set(seen).size).toBe(MESSAGES);
      });

      it('task_list returns every task exactly once, last updated first, with exact filters', async () => {
        const [a, b] = await Promise.all([as('olga'), as('lee')]);
        const walk = async (args: Record<string, unknown>): Promise<number[]> => {
          const ids: number[] = [];
          let cursor: string | undefined;
          for (;;) {
            const page: Page<'tasks'> = await callOk(a.client, 'task_list', { ...args, limit: 17, ...(cursor ? { cursor } : {}) });
            ids.push(...page.tasks.map((t) => t.id));
            await callOk(b.client, 'task_create', { title: 'created during the walk', labels: ['ops'], status: 'open' });
            if (!page.has_more) return ids;
            cursor = page.next_cursor;
          }
        };
        const all = await walk({});
        expect(all.slice(0, TASKS)).toEqual(expect.arrayContaining(Array.from({ length: TASKS }, (_, i) => i + 1)));
        expect(all.filter((id) => id <= TASKS)).toEqual(Array.from({ length: TASKS }, (_, i) => TASKS - i));
        const urgent = await walk({ label: 'urgent' });
        expect(urgent).toEqual(Array.from({ length: TASKS / 5 }, (_, i) => TASKS - 4 - 5 * i));
        const miaOpen = await walk({ assignee: 'mia', status: 'open' });
        expect(miaOpen.every((id) => id % 2 === 0 && (id - 1) % 3 !== 0)).toBe(true);
        expect(await callErr(a.client, 'task_list', { q: 'routine' })).toMatch(/^MCP error -32602: Input validation error: .*does not take `q`; use task_search/);
      });
    });

    describe('search', () => {
      it('message_search finds a planted word with a bounded snippet; task_search finds by text and by key', async () => {
        const c = await as('olga');
        const hits = await callOk<{ matches: { body: string; snippet: string; score: number }[]; has_more: boolean }>(c.client, 'message_search', { q: 'quokka' });
        expect(hits.matches.map((m) => m.body)).toEqual(['update 137 the quokka was seen']);
        expect(hits.matches[0]!.snippet).toContain('[quokka]');
        const common = await callOk<Page<'matches'>>(c.client, 'message_search', { q: 'update', channel: 'general', limit: 100 });
        expect(common.matches.length).toBeGreaterThan(0);
        expect(common.has_more).toBe(true);
        const next = await callOk<Page<'matches'>>(c.client, 'message_search', { q: 'update', channel: 'general', limit: 100, cursor: common.next_cursor });
        expect(new Set([...common.matches, ...next.matches].map((m) => m.id)).size).toBe(common.matches.length + next.matches.length);
        const pangolin = await callOk<{ tasks: { key: string }[] }>(c.client, 'task_search', { q: 'pangolin' });
        expect(pangolin.tasks.map((t) => t.key)).toEqual(['T-43']);
        const byKey = await callOk<{ tasks: { key: string; score: number | null }[] }>(c.client, 'task_search', { q: 'T-7' });
        expect(byKey.tasks[0]).toMatchObject({ key: 'T-7', score: null });
        expect(await callErr(c.client, 'message_history_read', { channel: 'general', search: 'x' })).toMatch(/^MCP error -32602: Input validation error: .*does not take `search`; use message_search/);
      });
    });

    describe('role scoping of task_options', () => {
      it('guest sees itself, agent sees members and agents, leads and owners everyone; never deactivated members', async () => {
        const names = async (who: string, q?: string): Promise<string[]> => {
          const c = await as(who);
          const r = await call<{ options: { value: string }[] }>(c, 'task_options', { field: 'assignee', ...(q ? { q } : {}) });
          return r.options.map((o) => o.value);
        };
        const [owner, lead, member, agent, guest, q] = await Promise.all([names('olga'), names('lee'), names('mia'), names('ada'), names('gus'), names('olga', 'G')]);
        expect(owner).toEqual(['ada', 'gil', 'gus', 'lee', 'mia', 'olga']);
        expect(lead).toEqual(owner);
        expect(member).toEqual(['ada', 'lee', 'mia', 'olga']);
        expect(agent).toEqual(['ada', 'mia']);
        expect(guest).toEqual(['gus']);
        expect(q).toEqual(['gil', 'gus', 'olga']);
        const c = await as('olga');
        const status = await callOk<{ options: { value: string }[]; has_more: boolean; next_cursor?: string }>(c.client, 'task_options', { field: 'status', limit: 3 });
        const rest = await callOk<{ options: { value: string }[] }>(c.client, 'task_options', { field: 'status', limit: 3, cursor: status.next_cursor });
        expect([...status.options, ...rest.options].map((o) => o.value)).toEqual(['open', 'in_progress', 'blocked', 'done', 'cancelled']);
        expect(await callErr(c.client, 'task_options', { field: 'label', q: 'x' })).toMatch(/^INVALID_PARAMS: .*task_search/);
      });
    });

    describe('the continuation inbox', () => {
      it('peek and read change nothing; ack marks through its cursor, twice is harmless; sends during the read wait their turn', async () => {
        const [olga, mia] = await Promise.all([as('olga'), as('mia')]);
        for (let i = 0; i < 60; i++) await callOk(olga.client, 'message_send', { channel: 'ops', body: `for mia ${i}`, to: ['mia'] });
        const peek = await callOk<{ messages: { body: string }[]; has_more: boolean; ack_cursor?: string }>(mia.client, 'inbox_read', { peek: true });
        expect(peek.ack_cursor).toBeUndefined();
        const read = await callOk<{ messages: { body: string }[]; has_more: boolean; ack_cursor: string }>(mia.client, 'inbox_read', {});
        expect(read.messages.map((m) => m.body)).toEqual(peek.messages.map((m) => m.body));
        expect(read.messages.length).toBeLessThanOrEqual(50);
        expect(read.messages[0]!.body).toBe('for mia 0');
        expect(read.has_more).toBe(true);
        const sending = Promise.all(Array.from({ length: 10 }, (_, i) => callOk(olga.client, 'message_send', { channel: 'ops', body: `late ${i}`, to: ['mia'] })));
        const first = await callOk<{ acked: number }>(mia.client, 'inbox_ack', { ack_cursor: read.ack_cursor });
        expect(first.acked).toBe(read.messages.length);
        await sending;
        expect((await callOk<{ acked: number }>(mia.client, 'inbox_ack', { ack_cursor: read.ack_cursor })).acked).toBe(0);
        const after = await callOk<{ messages: { body: string }[]; has_more: boolean }>(mia.client, 'inbox_read', { limit: 50 });
        // The ten sends were concurrent requests: they arrive after the rest, in the order they committed.
        const bodies = after.messages.map((m) => m.body);
        const earlier = 60 - read.messages.length;
        expect(bodies.slice(0, earlier)).toEqual(Array.from({ length: earlier }, (_, i) => `for mia ${read.messages.length + i}`));
        expect(bodies.slice(earlier).sort()).toEqual(Array.from({ length: 10 }, (_, i) => `late ${i}`));
        expect(await callErr(mia.client, 'inbox_read', { limit: 51 })).toMatch(/^INVALID_PARAMS: .*1 to 50/);
        // another member's cursor is refused
        expect(await callErr(olga.client, 'inbox_ack', { ack_cursor: read.ack_cursor })).toMatch(/^INVALID_CURSOR: /);
      });
    });

    describe('pages sized to the budget at the source', () => {
      it('under --max-bytes 8KiB a max page stops early, is never cut, and the walk still sees every message once', async () => {
        const c = await connectClient(serveTransport(root.dir, ['--team-db', db, '--as', 'olga', '--max-bytes', '8KiB']));
        open.push(c);
        const seen = new Set<number>();
        let cursor: string | undefined;
        let pages = 0;
        for (;;) {
          const r = await c.client.callTool({ name: 'message_history_read', arguments: { channel: 'general', limit: 100, ...(cursor ? { cursor } : {}) } });
          expect(c.wire.lastBytes).toBeLessThanOrEqual(8 * 1024);
          expect(reportOf(r)).toBeUndefined();
          const page = r.structuredContent as unknown as Page<'messages'>;
          for (const m of page.messages) seen.add(m.id);
          pages++;
          if (!page.has_more) break;
          cursor = page.next_cursor;
        }
        expect(pages).toBeGreaterThan(MESSAGES / 100);
        expect([...seen].filter((id) => id <= MESSAGES)).toHaveLength(MESSAGES);
        const search = await c.client.callTool({ name: 'message_search', arguments: { q: 'update '.repeat(16).trim(), limit: 100 } });
        expect(c.wire.lastBytes).toBeLessThanOrEqual(8 * 1024);
        expect(reportOf(search)).toBeUndefined();
        expect((search.structuredContent as { has_more: boolean }).has_more).toBe(true);
      });
    });

    describe('bad input', () => {
      it('caps name the cap and write nothing; unknown channel and task are NOT_FOUND; altered and foreign cursors are refused', async () => {
        const c = await as('olga');
        const top = async (): Promise<number> => (await callOk<Page<'messages'>>(c.client, 'message_history_read', { channel: 'general', limit: 1 })).messages[0]!.id;
        const before = await top();
        expect(await callErr(c.client, 'message_send', { channel: 'general', body: 'x'.repeat(16 * 1024 + 1) })).toMatch(/^INPUT_TOO_LARGE: .*maxMessageBytes.*16384/);
        expect(await callErr(c.client, 'message_send', { channel: 'general', body: 'hi', to: Array.from({ length: 51 }, () => 'mia') })).toMatch(/maxRecipients/);
        expect(await top()).toBe(before);
        const lastTask = (await callOk<Page<'tasks'>>(c.client, 'task_list', { limit: 1 })).tasks[0]!.id;
        expect(await callErr(c.client, 'task_create', { title: 'many labels', labels: Array.from({ length: 21 }, (_, i) => `l${i}`) })).toMatch(/^INPUT_TOO_LARGE: .*maxLabels/);
        expect(await callErr(c.client, 'task_create', { title: 't'.repeat(201) })).toMatch(/maxTitleBytes/);
        expect(await callErr(c.client, 'task_comment', { id: 1, body: 'c'.repeat(16 * 1024 + 1) })).toMatch(/maxCommentBytes/);
        expect((await callOk<Page<'tasks'>>(c.client, 'task_list', { limit: 1 })).tasks[0]!.id).toBe(lastTask);
        expect(await callErr(c.client, 'message_history_read', { channel: 'nowhere' })).toMatch(/^NOT_FOUND: /);
        expect(await callErr(c.client, 'task_get', { id: 'T-999999' })).toMatch(/^NOT_FOUND: /);
        const page = await callOk<Page<'messages'>>(c.client, 'message_history_read', { channel: 'general', limit: 5 });
        const cur = page.next_cursor!;
        const altered = cur.slice(0, 10) + (cur[10] === 'A' ? 'B' : 'A') + cur.slice(11);
        expect(await callErr(c.client, 'message_history_read', { channel: 'general', cursor: altered })).toMatch(/^INVALID_CURSOR: /);
        expect(await callErr(c.client, 'message_history_read', { channel: 'ops', cursor: cur })).toMatch(/^INVALID_CURSOR: /);
        expect(await callErr(c.client, 'task_list', { cursor: cur })).toMatch(/^INVALID_CURSOR: /);
        const detail = await callOk<{ task: { key: string }; comments: unknown[]; comments_has_more: boolean }>(c.client, 'task_get', { id: 'T-1' });
        expect(detail.task.key).toBe('T-1');
      });
    });
  });
}

describe('store files at startup', () => {
  beforeAll(() => {
    db = sqliteDb;
  });

  const serveOnce = (dbPath: string, extra: string[] = []) => cli(['serve', '--root', root.dir, '--team-db', dbPath, ...extra]);

  it.skipIf(!pgReady)('a PostgreSQL server that refuses the sign-in stops serve, team and exec within seconds, saying what to give', () => {
    // over TCP, as a role with no password: the server asks for one (or refuses the role); never a hang, never "corrupt"
    const target = 'postgres://mcp_budget_nobody@127.0.0.1:5432/mcp_budget_nodb';
    const env: NodeJS.ProcessEnv = { ...cleanEnv(), PGPASSFILE: join(outside.dir, 'no-pgpass') };
    delete env.PGPASSWORD;
    for (const args of [
      ['serve', '--root', root.dir, '--team-db', target],
      ['serve', '--root', root.dir, '--team-db', target, '--listen', '127.0.0.1:0'],
      ['team', '--root', root.dir, '--team-db', target, 'list'],
      ['exec', 'task.list', '--root', root.dir, '--team-db', target],
    ]) {
      const t0 = Date.now();
      const r = spawnSync(process.execPath, [cliPath, ...args], { encoding: 'utf8', env, input: '', timeout: 20_000 });
      expect(r.status, `${args.join(' ')}: ${r.stderr}`).toBe(1);
      expect(Date.now() - t0, args.join(' ')).toBeLessThan(10_000);
      expect(r.stderr, args.join(' ')).toMatch(/STORE_UNAVAILABLE: /);
      if (/SASL|password/.test(r.stderr)) expect(r.stderr).toMatch(/asks for a password and none was given.*PGPASSWORD/);
    }
  });

  it('corrupt, newer-schema, foreign and locked stores stop serve with a clear error and stay as they were', () => {
    const corrupt = join(outside.dir, 'corrupt.db');
    writeFileSync(corrupt, Buffer.alloc(4096, 0x5a));
    const r1 = serveOnce(corrupt);
    expect(r1.status).toBe(1);
    expect(r1.stderr).toMatch(/STORE_CORRUPT: .*left as it is/);
    expect(readFileSync(corrupt)).toEqual(Buffer.alloc(4096, 0x5a));

    const newer = join(outside.dir, 'newer.db');
    expect(cli(['team', '--root', root.dir, '--team-db', newer, 'add', 'olga', '--role', 'owner']).status).toBe(0);
    const n = new Database(newer);
    n.pragma(`user_version = ${SCHEMA_VERSION + 1}`);
    n.close();
    const r2 = serveOnce(newer, ['--as', 'olga']);
    expect(r2.status).toBe(1);
    expect(r2.stderr).toMatch(new RegExp(`STORE_NEWER_SCHEMA: .*version ${SCHEMA_VERSION + 1}`));

    const locked = join(outside.dir, 'locked.db');
    expect(cli(['team', '--root', root.dir, '--team-db', locked, 'add', 'olga', '--role', 'owner']).status).toBe(0);
    const holder = new Database(locked);
    holder.pragma('locking_mode = EXCLUSIVE');
    holder.exec('BEGIN EXCLUSIVE');
    try {
      const r3 = serveOnce(locked, ['--as', 'olga']);
      expect(r3.status).toBe(1);
      expect(r3.stderr).toMatch(/STORE_LOCKED: /);
    } finally {
      holder.exec('COMMIT');
      holder.close();
    }
    expect(serveOnce(locked, ['--as', 'olga']).status).toBe(0);
  });

  it('--team-db inside the root and an unknown --as are startup errors; an empty store makes --as its owner', () => {
    const inside = serveOnce(join(root.dir, 'team.db'));
    expect(inside.status).toBe(1);
    expect(inside.stderr).toMatch(/STORE_INSIDE_ROOT: .*inside the workspace root/);
    const unknown = serveOnce(db, ['--as', 'stranger']);
    expect(unknown.status).toBe(1);
    expect(unknown.stderr).toMatch(/UNKNOWN_MEMBER: `--as` stranger: no such member/);
    expect(serveOnce(db, ['--as', 'max']).stderr).toMatch(/deactivated/);
  });

  it('a store that does not exist yet is created on the first team call, with --as as its owner', async () => {
    const fresh = join(outside.dir, 'fresh', 'team.db');
    const c = await connectClient(serveTransport(root.dir, ['--team-db', fresh, '--as', 'newbie']));
    open.push(c);
    const r = await callOk<{ options: { value: string; role: string }[] }>(c.client, 'task_options', { field: 'assignee' });
    expect(r.options).toEqual([{ value: 'newbie', role: 'owner' }]);
  });

  it('mcp-budget team administers members', () => {
    const file = join(outside.dir, 'admin.db');
    const t = (...a: string[]) => cli(['team', '--root', root.dir, '--team-db', file, ...a]);
    // the first add on an empty store makes the administrator (--as) its owner first
    expect(t('--as', 'ada', 'add', 'zoe', '--role', 'lead').stdout).toBe('the store was empty: added ada (owner; from --as; start serve with the same --as)\nadded zoe (lead)\n');
    // a refused name leaves nothing behind, not even the owner
    const refused = join(outside.dir, 'admin-refused.db');
    expect(cli(['team', '--root', root.dir, '--team-db', refused, '--as', 'ada', 'add', 'bad name', '--role', 'lead']).status).toBe(1);
    expect(cli(['team', '--root', root.dir, '--team-db', refused, 'list']).stdout).toBe('');
    expect(t('--as', 'ada', 'add', 'bot', '--role', 'agent').stdout).toBe('added bot (agent)\n');
    expect(t('set-role', 'bot', 'member').stdout).toBe('bot is now member\n');
    expect(t('deactivate', 'bot').status).toBe(0);
    expect(t('list').stdout).toBe('ada\towner\tactive\nbot\tmember\tdeactivated\nzoe\tlead\tactive\n');
    // the administrator itself, added to an empty store, is its owner: a lower role is refused, and nothing is written
    const other = join(outside.dir, 'admin-self.db');
    const self = cli(['team', '--root', root.dir, '--team-db', other, '--as', 'ada', 'add', 'ada', '--role', 'lead']);
    expect(self.status).toBe(2);
    expect(self.stderr).toMatch(/the store is empty, and its first member must be its owner: add ada with --role owner/);
    expect(cli(['team', '--root', root.dir, '--team-db', other, 'list']).stdout).toBe('');
    expect(cli(['team', '--root', root.dir, '--team-db', other, '--as', 'ada', 'add', 'ada']).stdout).toBe('added ada (owner)\n');
    // the last owner stays one
    const last = cli(['team', '--root', root.dir, '--team-db', other, 'set-role', 'ada', 'member']);
    expect(last.status).toBe(1);
    expect(last.stderr).toMatch(/"ada" is the last active owner of this store/);
    // an import that leaves the administrator out says so, with what to do
    const lines = join(outside.dir, 'members.jsonl');
    writeFileSync(lines, '{"kind":"member","name":"ann","role":"owner"}\n');
    const imported = cli(['team', '--root', root.dir, '--team-db', join(outside.dir, 'imported.db'), '--as', 'ada', 'import', lines]);
    expect(imported.status).toBe(0);
    expect(imported.stderr).toMatch(/note: ada is not a member, and serve runs as ada unless --as names another member; add it \(mcp-budget team add ada --role owner\) or start serve with --as/);
    expect(t('add', 'zoe').stderr).toMatch(/ALREADY_EXISTS/);
    expect(t('add', 'x', '--role', 'king').status).toBe(2);
  });
});
