/**
 * A PostgreSQL write whose COMMIT was sent but never answered (the connection lost in between) is
 * not reported as a failure to retry: the store says OUTCOME_UNKNOWN with what it knows (the id the
 * write made), and through the tools the model reads "may have been applied" and exec gives a
 * receipt with `applied: "unknown"`. The connection is really cut: the store talks to PostgreSQL
 * through a socket relay that, once armed, forwards the COMMIT and then drops the connection
 * before the server's answer comes back. Every team write is driven through it, and `team import`,
 * which names the lines imported and the lines in doubt (never "nothing was imported").
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { createConnection, createServer, type Server, type Socket } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { InMemoryTransport } from '@modelcontextprotocol/sdk/inMemory.js';
import { EXEC_META_KEY } from '../../src/shared/meta.js';
import { createWorkspaceServer } from '../../src/server/create-server.js';
import { TeamError, importJsonLines, openPgTeamStore, type Member, type TeamStore } from '../../src/team/index.js';
import { createTestDatabase, probePostgres, type TestDatabase } from './pg-harness.js';

const UPSTREAM = '/var/run/postgresql/.s.PGSQL.5432';
const reachable = await probePostgres();

/** A relay on `${dir}/.s.PGSQL.5432`; `arm()` makes the next COMMIT the last thing a connection says. */
class CommitCutter {
  readonly dir = mkdtempSync(join(tmpdir(), 'pg-cut-'));
  private server: Server;
  private armed = false;
  /** COMMITs to pass before the one that is cut. */
  private pass = 0;
  cuts = 0;
  private sockets = new Set<Socket>();

  constructor() {
    this.server = createServer((client: Socket) => {
      const upstream = createConnection(UPSTREAM);
      this.sockets.add(client).add(upstream);
      client.on('error', () => upstream.destroy());
      upstream.on('error', () => client.destroy());
      upstream.pipe(client);
      client.on('data', (chunk: Buffer) => {
        upstream.write(chunk);
        // a simple-protocol Query message holding COMMIT: the server commits, the client never hears
        if (this.armed && chunk[0] === 0x51 && chunk.includes('COMMIT\0') && this.pass-- === 0) {
          this.armed = false;
          this.cuts++;
          upstream.unpipe(client);
          setTimeout(() => {
            client.destroy();
            upstream.destroy();
          }, 100);
        }
      });
    });
  }

  listen(): Promise<void> {
    return new Promise((resolve) => this.server.listen(join(this.dir, '.s.PGSQL.5432'), resolve));
  }

  /** Cut the connection after the COMMIT that follows `pass` others. */
  arm(pass = 0): void {
    this.armed = true;
    this.pass = pass;
  }

  /** The database goes away: every connection cut, no new one accepted. */
  async vanish(): Promise<void> {
    const closed = new Promise((r) => this.server.close(r));
    for (const s of this.sockets) s.destroy();
    await closed;
  }

  async close(): Promise<void> {
    if (this.server.listening) await new Promise((r) => this.server.close(r));
    rmSync(this.dir, { recursive: true, force: true });
  }
}

describe.runIf(reachable)('PostgreSQL: a commit whose answer was lost', () => {
  let db: TestDatabase;
  let cutter: CommitCutter;
  let store: TeamStore;
  let direct: TeamStore;
  let owner: Member;

  beforeAll(async () => {
    db = await createTestDatabase();
    cutter = new CommitCutter();
    await cutter.listen();
    direct = await openPgTeamStore(db.target);
    owner = await direct.addMember('olga', 'owner');
    store = await openPgTeamStore(`host=${cutter.dir} dbname=${db.name}`);
  });

  afterAll(async () => {
    await store?.close().catch(() => undefined);
    await direct?.close().catch(() => undefined);
    await cutter?.close();
    await db?.drop();
  });

  it('every team write answers OUTCOME_UNKNOWN with the id it made, and the write is there', async () => {
    const task = await direct.createTask(owner, { title: 'base' });
    const writes: [string, () => Promise<unknown>, () => Promise<boolean>][] = [
      ['sendMessage', () => store.sendMessage(owner, { channel: 'g', body: 'cut after commit' }), async () => (await direct.history('g', undefined, 5)).rows.some((m) => m.body === 'cut after commit')],
      ['createTask', () => store.createTask(owner, { title: 'cut task' }), async () => (await direct.listTasks({}, undefined, 50)).rows.some((t) => t.title === 'cut task')],
      ['updateTask', () => store.updateTask(owner, task.id, { priority: 'high' }), async () => (await direct.getTask(task.id)).priority === 'high'],
      ['addComment', () => store.addComment(owner, task.id, 'cut comment'), async () => (await direct.comments(task.id, undefined, 10)).rows.some((c) => c.body === 'cut comment')],
    ];
    for (const [name, write, landed] of writes) {
      cutter.arm();
      const err = await write().then(() => undefined, (e: unknown) => e);
      expect(err, name).toBeInstanceOf(TeamError);
      expect((err as TeamError).code, `${name}: ${(err as Error).message}`).toBe('OUTCOME_UNKNOWN');
      expect((err as TeamError).message, name).toMatch(/may have been applied/);
      expect((err as TeamError).message, name).not.toMatch(/try again/i);
      expect((err as TeamError).data.applied, name).toBe('unknown');
      expect(await landed(), name).toBe(true);
      // the store goes on working on a new connection
      expect((await store.history('g', undefined, 1)).rows.length, name).toBe(1);
    }
    expect(cutter.cuts).toBe(writes.length);
  });

  it('team import: the batch whose commit was lost is named as in doubt, the lines before it as imported', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'pg-cut-import-'));
    const quiet = { write: () => true } as unknown as NodeJS.WritableStream;
    try {
      // [lines, commits passed before the cut, skip bad lines, expected committed, expected in doubt]
      const cases: [string[], number, boolean, number, [number, number]][] = [
        [['a1', 'a2', 'a3', 'a4', 'a5'], 0, false, 0, [1, 2]],
        [['b1', 'b2', 'b3', 'b4', 'b5'], 1, false, 2, [3, 4]],
        [['b1', 'c2', 'c3'], 0, true, 0, [2, 3]], // line 1 exists already: skipped, then lines 2-3 in one transaction
        [['d1', 'd1', 'd3', 'd4'], 0, true, 0, [1, 1]], // a duplicate in the batch: line 1 written alone, cut
        [['e1', 'e1', 'e3', 'e4'], 1, true, 1, [3, 3]], // line 1 committed, line 2 skipped, line 3 alone cut
      ];
      for (const [k, [names, pass, skipBadLines, committed, doubt]] of cases.entries()) {
        const file = join(dir, `in${k}.jsonl`);
        writeFileSync(file, names.map((name) => JSON.stringify({ kind: 'member', name, role: 'member' })).join('\n') + '\n');
        const before = cutter.cuts;
        cutter.arm(pass);
        const err = (await importJsonLines(store, file, { batchRows: skipBadLines ? 3 : 2, skipBadLines, progress: quiet }).then(
          () => undefined,
          (e: unknown) => e,
        )) as TeamError;
        expect(cutter.cuts, `case ${k}`).toBe(before + 1);
        expect(err?.code, `case ${k}: ${String(err?.message)}`).toBe('OUTCOME_UNKNOWN');
        expect(err.data, `case ${k}`).toMatchObject({ committed, in_doubt: { from: doubt[0], to: doubt[1] } });
        expect(err.message, `case ${k}`).toContain(`lines ${doubt[0]}-${doubt[1]} may have been imported`);
        expect(err.message, `case ${k}`).not.toMatch(/nothing was imported/i);
        // What is said imported, and what is said in doubt (its COMMIT reached the server), is there.
        const names2 = new Set((await direct.listMembers(undefined, 100)).rows.map((m) => m.name));
        for (let line = 1; line <= doubt[1]; line++) expect(names2.has(names[line - 1]!), `case ${k} line ${line}`).toBe(true);
      }
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it('a store that went away: the model reads what happened and what to do, never the database, role or driver text', async () => {
    const relay = new CommitCutter();
    await relay.listen();
    const root = mkdtempSync(join(tmpdir(), 'pg-gone-root-'));
    const ws = await createWorkspaceServer(root, {}, { dbPath: `host=${relay.dir} dbname=${db.name}`, as: 'olga' });
    const [a, b] = InMemoryTransport.createLinkedPair();
    const client = new Client({ name: 'pg-gone', version: '1.0.0' });
    await Promise.all([ws.connect(b), client.connect(a)]);
    type Result = { isError?: boolean; content?: { text?: string }[]; _meta?: Record<string, unknown> };
    try {
      expect(((await client.callTool({ name: 'message_send', arguments: { channel: 'g', body: 'before' } })) as Result).isError).toBeFalsy();
      await relay.vanish();
      for (const [name, args] of [
        ['message_send', { channel: 'g', body: 'after' }],
        ['message_history_read', { channel: 'g' }],
        ['exec', { action: 'task.create', input: { title: 'gone' } }],
      ] as const) {
        const r = (await client.callTool({ name, arguments: args })) as Result;
        const seen = JSON.stringify(r);
        expect(r.isError, name).toBe(true);
        for (const secret of [relay.dir, db.name, 'root', 'ECONNREFUSED', 'ENOENT', 'postgres']) expect(seen, `${name} shows ${secret}`).not.toContain(secret);
        expect(r.content?.[0]?.text, name).toMatch(/IO_ERROR: The team store (cannot be reached|is busy|failed)/);
      }
    } finally {
      await client.close();
      await ws.close();
      await relay.close();
      rmSync(root, { recursive: true, force: true });
    }
  });

  it('through the tools: the model reads "may have been applied" with the id; exec gives a receipt with applied: unknown', async () => {
    const root = mkdtempSync(join(tmpdir(), 'pg-cut-root-'));
    const ws = await createWorkspaceServer(root, {}, { dbPath: `host=${cutter.dir} dbname=${db.name}`, as: 'olga' });
    const [a, b] = InMemoryTransport.createLinkedPair();
    const client = new Client({ name: 'pg-outcome', version: '1.0.0' });
    await Promise.all([ws.connect(b), client.connect(a)]);
    type Result = { isError?: boolean; content?: { text?: string }[]; _meta?: Record<string, Record<string, unknown>> };
    try {
      cutter.arm();
      const direct = (await client.callTool({ name: 'message_send', arguments: { channel: 'g', body: 'tool cut' } })) as Result;
      expect(direct.isError).toBe(true);
      expect(direct.content?.[0]?.text).toMatch(/^OUTCOME_UNKNOWN: .*may have been applied \(as id \d+\)/);
      expect(direct._meta?.['io.github.mcp-result-budget/error']).toMatchObject({ code: 'OUTCOME_UNKNOWN', applied: 'unknown', id: expect.any(Number) });
      cutter.arm();
      const viaExec = (await client.callTool({ name: 'exec', arguments: { action: 'task.create', input: { title: 'exec cut' } } })) as Result;
      expect(viaExec.isError).toBe(true);
      const report = Object.values(viaExec._meta ?? {}).find((v) => typeof v === 'object' && v !== null && 'receipt' in v) ?? viaExec._meta?.[EXEC_META_KEY];
      expect(report).toMatchObject({ applied: 'unknown', receipt: { action: 'task.create', applied: 'unknown' } });
      expect(cutter.cuts).toBe(11); // 4 store writes, 5 imports, 2 here
    } finally {
      await client.close();
      await ws.close();
      rmSync(root, { recursive: true, force: true });
    }
  });
});
