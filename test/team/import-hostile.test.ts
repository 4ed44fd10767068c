/**
 * A generated hostile JSON Lines file, on both engines: good lines mixed with bad ones of every
 * class (not JSON, not an object, an unknown kind, times out of range or not times, integers past
 * 2^53, NULs, lone surrogates, fields of the wrong kind, values over every cap, a line over the line
 * cap, bytes that are not UTF-8, a duplicate member, an unknown author), with or without a final
 * newline. `team import --skip-bad-lines` skips exactly the bad lines, each reported with its number,
 * imports every good one, and afterwards every read tool of `serve` answers on the store. Without
 * the flag the import stops at the first bad line, naming it. Time-boxed (test/helpers/time-box.ts).
 */
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { PassThrough } from 'node:stream';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { InMemoryTransport } from '@modelcontextprotocol/sdk/inMemory.js';
import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createWorkspaceServer } from '../../src/server/create-server.js';
import { TEAM_IMPORT_LIMITS, importJsonLines, openPgTeamStore, openSqliteTeamStore, type TeamStore } from '../../src/team/index.js';
import { createTestDatabase, probePostgres, type TestDatabase } from './pg-harness.js';
import { timeBox } from '../helpers/time-box.js';
import { repoRoot } from '../helpers/cli.js';

const pgReady = await probePostgres();
const TIME_MS = timeBox(200, 2500).interruptAfterTimeLimit;

/** One line: its bytes, and whether the import must take it. */
interface Spec {
  bytes: Buffer;
  good: boolean;
  /** A good message's channel (counted afterwards). */
  channel?: string;
}

const json = (o: unknown): Buffer => Buffer.from(JSON.stringify(o));
const raw = (s: string): Buffer => Buffer.from(s);
const msg = (run: number, extra: Record<string, unknown>): Record<string, unknown> => ({ kind: 'message', channel: `c${run}`, author: 'imp', body: 'b', ...extra });

/** Every class of bad line, for run `run`. */
const BAD: ((run: number) => Buffer)[] = [
  () => raw('{"kind":"message",'),
  () => raw('[1,2,3]'),
  () => raw('"just a string"'),
  () => json({ kind: 'planet' }),
  (r) => json(msg(r, { created_at: 1e300 })),
  (r) => json(msg(r, { created_at: 'yesterday' })),
  (r) => json(msg(r, { created_at: 1.5 })),
  // Times `Date.parse` reads differently by machine or silently moves: no zone, a bare number,
  // RFC 2822, a day past the month's end, February 29 of a common year.
  (r) => json(msg(r, { created_at: '2020-01-01T00:00:00' })),
  (r) => json(msg(r, { created_at: '12' })),
  (r) => json(msg(r, { created_at: 'Mon, 01 Jan 0001 00:00:00 GMT' })),
  (r) => json(msg(r, { created_at: '2020-02-30' })),
  (r) => json(msg(r, { created_at: '2021-02-29T00:00:00Z' })),
  (r) => json(msg(r, { reply_to: 2 ** 60 })),
  (r) => json(msg(r, { body: 'nul \u0000 here' })),
  (r) => raw(`{"kind":"message","channel":"c${r}","author":"imp","body":"half \\ud800 pair"}`),
  (r) => json(msg(r, { body: 5 })),
  () => json({ kind: 'task', title: 't', labels: 'ops', created_by: 'imp' }),
  () => json({ kind: 'member', name: `m-active`, active: 'yes' }),
  (r) => json(msg(r, { body: 'x'.repeat(16 * 1024 + 1) })),
  () => json({ kind: 'task', title: 't'.repeat(201), created_by: 'imp' }),
  (r) => json(msg(r, { channel: `c${r}${'x'.repeat(81)}` })),
  () => json({ kind: 'task', title: 't', status: 'sideways', created_by: 'imp' }),
  (r) => Buffer.concat([raw(`{"kind":"message","channel":"c${r}","author":"imp","body":"`), Buffer.from([0xff, 0xfe]), raw('"}')]),
  () => json({ kind: 'member', name: 'imp', role: 'agent' }), // imported before every run
  (r) => json(msg(r, { author: 'nobody' })),
  () => json({ kind: 'comment', task: 2 ** 53 + 2, author: 'imp', body: 'c' }),
];

/** Good lines of run `run` (`i` makes each unique). */
const GOOD: ((run: number, i: number) => Spec)[] = [
  (r, i) => ({ bytes: json(msg(r, { body: `good ${i}` })), good: true, channel: `c${r}` }),
  (r, i) => ({ bytes: json({ kind: 'task', title: `task ${r}.${i}`, labels: ['ops'], created_by: 'imp', created_at: '2024-01-02T03:04:05Z' }), good: true }),
  (r, i) => ({ bytes: json({ kind: 'comment', task: 'T-1', author: 'imp', body: `comment ${r}.${i}` }), good: true }),
  (r, i) => ({ bytes: json({ kind: 'member', name: `m${r}x${i}`, role: 'guest', active: false }), good: true }),
  (r, i) => ({ bytes: json(msg(r, { body: `dated ${i}`, created_at: i % 2 ? '2024-02-29' : '2020-01-01T00:00:00.123+02:00' })), good: true, channel: `c${r}` }),
];

const lineArb = (run: number): fc.Arbitrary<(i: number) => Spec> =>
  fc.oneof(
    fc.constantFrom(...GOOD).map((g) => (i: number) => g(run, i)),
    fc.constantFrom(...BAD).map((b) => (): Spec => ({ bytes: b(run), good: false })),
  );

interface Engine {
  name: string;
  ready: boolean;
  open(dir: string): Promise<{ target: string; store: TeamStore; drop(): Promise<void> }>;
}

const ENGINES: Engine[] = [
  {
    name: 'sqlite',
    ready: true,
    open: async (dir) => {
      const target = join(dir, 'team.db');
      return { target, store: openSqliteTeamStore(target), drop: async () => undefined };
    },
  },
  {
    name: 'postgres',
    ready: pgReady,
    open: async () => {
      const db: TestDatabase = await createTestDatabase();
      return { target: db.target, store: await openPgTeamStore(db.target), drop: () => db.drop() };
    },
  },
];

for (const engine of ENGINES) {
  describe.skipIf(!engine.ready)(`a hostile import file (${engine.name})`, () => {
    let dir: string;
    let target: string;
    let store: TeamStore;
    let drop: () => Promise<void>;
    let run = 0;

    beforeAll(async () => {
      dir = mkdtempSync(join(tmpdir(), 'import-hostile-'));
      ({ target, store, drop } = await engine.open(dir));
      await store.addMember('olga', 'owner');
      await store.addMember('imp', 'agent');
      await store.createTask((await store.getMember('olga'))!, { title: 'the first task' });
    });

    afterAll(async () => {
      await store?.close();
      await drop?.();
      rmSync(dir, { recursive: true, force: true });
    });

    it('imports a file again with skipExisting: existing members are kept as they were and reported, new lines written; without it, it stops saying how to go on', async () => {
      const file = join(dir, 'again.jsonl');
      const names = Array.from({ length: 6 }, (_, i) => `again-${i}`);
      const lines = names.map((name, i) => JSON.stringify({ kind: 'member', name, role: i % 2 === 0 ? 'member' : 'agent' }));
      writeFileSync(file, `${lines.slice(0, 3).join('\n')}\n`);
      expect((await importJsonLines(store, file, { progress: new PassThrough() })).counts).toEqual({ member: 3 });
      // again, with three new members between the existing ones, and a role that differs from the stored one
      writeFileSync(file, `${[lines[0], lines[3], JSON.stringify({ kind: 'member', name: names[1], role: 'owner' }), lines[4], lines[2], lines[5]].join('\n')}\n`);
      await expect(importJsonLines(store, file, { progress: new PassThrough() })).rejects.toThrow(/line 1: A member named "again-0" exists already\. Nothing was imported\. .*--skip-existing/);
      const progress = new PassThrough();
      let said = '';
      progress.on('data', (c: Buffer) => (said += c.toString()));
      const s = await importJsonLines(store, file, { progress, skipExisting: true, batchRows: 2 });
      expect(s).toMatchObject({ existing: 3, skipped: 0, counts: { member: 3 } });
      expect(said.match(/kept line (\d+): A member named "(again-\d)" exists already/g)).toEqual([
        'kept line 1: A member named "again-0" exists already',
        'kept line 3: A member named "again-1" exists already',
        'kept line 5: A member named "again-2" exists already',
      ]);
      for (const [i, name] of names.entries()) expect((await store.getMember(name))?.role, name).toBe(i % 2 === 0 ? 'member' : 'agent');
    });

    it('skips exactly the bad lines, each by number, and imports every good one', async () => {
      const file = join(dir, 'hostile.jsonl');
      await fc.assert(
        fc.asyncProperty(fc.array(fc.nat(), { minLength: 1, maxLength: 40 }), fc.boolean(), fc.integer({ min: 1, max: 8 }), async (seeds, finalNewline, batchRows) => {
          run++;
          const makers = seeds.map((s) => fc.sample(lineArb(run), { seed: s, numRuns: 1 })[0]!);
          const specs = makers.map((m, i) => m(i));
          const body = Buffer.concat(specs.flatMap((s, i) => (i === 0 ? [s.bytes] : [raw('\n'), s.bytes])));
          writeFileSync(file, finalNewline ? Buffer.concat([body, raw('\n')]) : body);
          let said = '';
          const sink = { write: (t: string) => ((said += t), true) } as unknown as NodeJS.WritableStream;
          const s = await importJsonLines(store, file, { progress: sink, batchRows, skipBadLines: true });
          const badAt = specs.flatMap((sp, i) => (sp.good ? [] : [i + 1]));
          const reported = [...said.matchAll(/skipped [A-Z_]+: line (\d+):/g)].map((m) => Number(m[1]));
          expect(reported.sort((x, y) => x - y)).toEqual(badAt); // refused on reading or on writing: reported in that order
          expect(s.skipped).toBe(badAt.length);
          const goodCount = specs.filter((sp) => sp.good).length;
          expect(Object.values(s.counts).reduce((a, b) => a + b, 0)).toBe(goodCount);
          const messages = specs.filter((sp) => sp.good && sp.channel !== undefined).length;
          if (messages > 0) expect((await store.history(`c${run}`, undefined, 100)).rows).toHaveLength(messages);
        }),
        timeBox(200, 2500),
      );
    }, TIME_MS + 60_000);

    it('a line over the line cap is passed over without being held; without the flag the import stops there, naming it', async () => {
      const file = join(dir, 'long.jsonl');
      const long = Buffer.alloc(TEAM_IMPORT_LIMITS.maxLineBytes + 10, 0x61);
      writeFileSync(file, Buffer.concat([json(msg(9999, { body: 'before' })), raw('\n'), long, raw('\n'), json(msg(9999, { body: 'after' }))]));
      let said = '';
      const sink = { write: (t: string) => ((said += t), true) } as unknown as NodeJS.WritableStream;
      const s = await importJsonLines(store, file, { progress: sink, skipBadLines: true });
      expect(said).toMatch(/skipped INPUT_TOO_LARGE: line 2: longer than/);
      expect(s).toMatchObject({ skipped: 1, counts: { message: 2 } });
      await expect(importJsonLines(store, file, { progress: sink })).rejects.toThrow(/line 2: longer than/);
      writeFileSync(file, Buffer.concat([json(msg(9998, {})), raw('\n'), Buffer.from([0xc3, 0x28])]));
      await expect(importJsonLines(store, file, { progress: sink })).rejects.toThrow(/line 2: not valid UTF-8/);
    });

    it('every read tool of serve answers on the store the imports left', async () => {
      await store.close();
      const root = join(dir, 'root');
      mkdirSync(root, { recursive: true });
      const ws = await createWorkspaceServer(root, {}, { dbPath: target, as: 'olga' });
      const [a, b] = InMemoryTransport.createLinkedPair();
      const client = new Client({ name: 'import-hostile', version: '1.0.0' });
      await Promise.all([ws.connect(b), client.connect(a)]);
      try {
        const history = (await client.callTool({ name: 'message_history_read', arguments: { channel: 'c9999' } })) as { structuredContent?: { messages: { id: number }[] } };
        const reads: [string, Record<string, unknown>][] = [
          ['message_history_read', { channel: 'c9999' }],
          ['message_search', { q: 'good' }],
          ['message_get', { id: history.structuredContent!.messages[0]!.id }],
          ['task_list', {}],
          ['task_search', { q: 'task' }],
          ['task_get', { id: 1 }],
          ['task_options', { field: 'assignee' }],
          ['task_options', { field: 'label' }],
          ['inbox_read', { peek: true }],
        ];
        for (const [tool, args] of reads) {
          const r = (await client.callTool({ name: tool, arguments: args })) as { isError?: boolean; content?: { text?: string }[] };
          expect(r.isError, `${tool}: ${r.content?.[0]?.text}`).not.toBe(true);
        }
      } finally {
        await client.close();
        await ws.close();
        store = engine.name === 'sqlite' ? openSqliteTeamStore(target) : await openPgTeamStore(target);
      }
    });
  });
}

for (const engine of ENGINES) {
  describe.skipIf(!engine.ready)(`the README's import example (${engine.name})`, () => {
    it('imports whole into an empty store, every field where the readers show it', async () => {
      const readme = readFileSync(join(repoRoot, 'README.md'), 'utf8');
      const block = /```jsonl\n([\s\S]*?)```/.exec(readme);
      expect(block, 'a jsonl block in the README').not.toBeNull();
      const kinds = block![1]!.trim().split('\n').map((l) => (JSON.parse(l) as { kind: string }).kind);
      expect(new Set(kinds)).toEqual(new Set(['member', 'channel', 'message', 'task', 'comment']));
      const dir = mkdtempSync(join(tmpdir(), 'import-readme-'));
      const { store, drop } = await engine.open(dir);
      try {
        const file = join(dir, 'example.jsonl');
        writeFileSync(file, block![1]!);
        const s = await importJsonLines(store, file, { progress: new PassThrough() });
        expect(s.counts).toEqual({ member: 2, channel: 1, message: 2, task: 1, comment: 1 });
        expect((await store.getMember('ann'))?.role).toBe('lead');
        const task = await store.getTask(1);
        expect(task).toMatchObject({ title: 'Cut the release', status: 'in_progress', priority: 'high', assignee: 'bob', labels: ['release'], created_by: 'ann' });
      } finally {
        await store.close();
        await drop();
        rmSync(dir, { recursive: true, force: true });
      }
    });
  });
}
