/**
 * The team store's behaviour, one suite for every engine: keyset pages walked while rows are
 * inserted, ranked search (windows, exact-once walks, operator-safe queries, bounded snippets),
 * exact task filters and identity lookup, role-scoped member options, the inbox's read/ack rules,
 * and caps that write nothing. `store.test.ts` runs it on SQLite, `store-pg.test.ts` on PostgreSQL.
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { TEAM_READ_LIMITS, TeamError, importJsonLines, type Member, type SearchPos, type SendOptions, type TaskFilter, type TeamStore, type TimeKey } from '../../src/team/index.js';

/** How a suite gets stores of one engine. */
export interface StoreEngine {
  name: string;
  /** An empty store (ids starting at 1). */
  fresh(): Promise<TeamStore>;
  /** Done with the store of one test. */
  release(store: TeamStore): Promise<void>;
  /** Send many messages in one transaction. */
  sendMany(store: TeamStore, author: Member, messages: SendOptions[]): Promise<void>;
}

/** The failure code of a call (or a description of what else happened). */
export async function codeOf(p: Promise<unknown> | (() => unknown)): Promise<string> {
  try {
    await (typeof p === 'function' ? p() : p);
  } catch (e) {
    return e instanceof TeamError ? e.code : `not a TeamError: ${String(e)}`;
  }
  return 'no error';
}

/** Define every store behaviour case for `engine`. */
export function describeStoreBehaviour(engine: StoreEngine): void {
  let store: TeamStore;
  let owner: Member;

  beforeEach(async () => {
    store = await engine.fresh();
    owner = await store.addMember('olga', 'owner');
  });

  afterEach(async () => {
    await engine.release(store);
  });

  describe('messages', () => {
    it('history: a cursor walk returns every message once, newest first, while new ones arrive', async () => {
      for (let i = 0; i < 250; i++) await store.sendMessage(owner, { channel: 'general', body: `m${i}`, at: 1_000 + Math.floor(i / 3) });
      const seen: number[] = [];
      let after: TimeKey | undefined;
      let last: TimeKey | undefined;
      for (let n = 0; ; n++) {
        const page = await store.history('general', after, 17);
        for (const m of page.rows) {
          if (last !== undefined) expect(m.created_at < Number(last.at) || (m.created_at === Number(last.at) && m.id < last.id)).toBe(true);
          last = { at: m.created_at, id: m.id };
          seen.push(m.id);
        }
        // concurrent sends land ahead of the cursor and never inside the walk
        await store.sendMessage(owner, { channel: 'general', body: `late ${n}` });
        if (!page.more) break;
        after = last;
      }
      expect(seen).toHaveLength(250);
      expect(new Set(seen).size).toBe(250);
      expect(await codeOf(store.history('nope', undefined, 5))).toBe('NOT_FOUND');
    });

    it('search: planted words ranked by (bm25, id), walked exactly once, bounded snippets', async () => {
      for (let i = 0; i < 120; i++) await store.sendMessage(owner, { channel: i % 2 ? 'a' : 'b', body: `filler text ${i} ${i % 3 === 0 ? 'zephyr' : ''} ${'pad '.repeat(i % 7)}` });
      await store.sendMessage(owner, { channel: 'a', body: 'the quokka jumps' });
      const rare = await store.searchMessages('quokka', undefined, { hi: await store.lastMessageId() }, 10);
      expect(rare.rows.map((r) => r.body)).toEqual(['the quokka jumps']);
      expect(rare.rows[0]!.snippet).toContain('[quokka]');
      const snap = await store.lastMessageId();
      const ids: number[] = [];
      let from: SearchPos = { hi: snap };
      let prev: { score: number; id: number } | undefined;
      for (;;) {
        const page = await store.searchMessages('zephyr', undefined, from, 7);
        expect(page.windowed).toBe(false);
        // scores drift as messages arrive (corpus statistics), so order is checked within a page
        prev = undefined;
        for (const h of page.rows) {
          if (prev !== undefined) expect(h.score > prev.score || (h.score === prev.score && h.id > prev.id)).toBe(true);
          prev = { score: h.score, id: h.id };
          ids.push(h.id);
        }
        await store.sendMessage(owner, { channel: 'a', body: 'zephyr arrives later' }); // above the snapshot
        if (!page.more) break;
        from = page.next!;
      }
      expect(ids).toHaveLength(40);
      expect(new Set(ids).size).toBe(40);
      const inA = await store.searchMessages('zephyr', 'a', { hi: snap }, 100);
      expect(inA.rows.every((r) => r.channel === 'a')).toBe(true);
      expect(await codeOf(store.searchMessages('!!! ***', undefined, { hi: snap }, 5))).toBe('INVALID_PARAMS');
      expect((await store.searchMessages('"OR NEAR(', undefined, { hi: snap }, 5)).rows).toEqual([]);
      expect((await store.searchMessages('NEAR OR zephyr', undefined, { hi: snap }, 5)).rows).toEqual([]);
    });

    it('search: more matches than a window are ranked window by window, newest first, each exactly once', async () => {
      const total = TEAM_READ_LIMITS.searchWindowMatches + 250;
      await engine.sendMany(store, owner, Array.from({ length: total }, (_, i) => ({ channel: i % 3 ? 'a' : 'b', body: `common ${'word '.repeat(i % 5)}${i}`, at: i })));
      const seen = new Set<number>();
      let from: SearchPos = { hi: await store.lastMessageId() };
      let windows = 0;
      let calls = 0;
      for (;;) {
        const page = await store.searchMessages('common', undefined, from, 100);
        // windowed: this window has older matches below it (the last window has none)
        expect(page.windowed).toBe(windows === 0);
        for (const h of page.rows) seen.add(h.id);
        calls++;
        if (!page.more) break;
        if (page.next!.after === undefined) windows++;
        from = page.next!;
      }
      expect(seen.size).toBe(total);
      expect(windows).toBe(1);
      // the first window is the newest matches: the oldest 250 come last
      const first = await store.searchMessages('common', undefined, { hi: await store.lastMessageId() }, 100);
      expect(Math.min(...first.rows.map((r) => r.id))).toBeGreaterThan(250);
      // a channel filter ranks within the same windows
      const inB = await store.searchMessages('common', 'b', { hi: await store.lastMessageId() }, 100);
      expect(inB.rows.every((r) => r.channel === 'b')).toBe(true);
      expect(calls).toBeGreaterThan(total / 100);
    });

    it('caps: an over-cap send writes nothing (no message, no channel, no inbox row)', async () => {
      const before = await store.lastMessageId();
      expect(await codeOf(store.sendMessage(owner, { channel: 'fresh', body: 'x'.repeat(16 * 1024 + 1) }))).toBe('INPUT_TOO_LARGE');
      expect(await codeOf(store.sendMessage(owner, { channel: 'fresh', body: 'hi', to: ['olga', 'ghost'] }))).toBe('NOT_FOUND');
      expect(await store.lastMessageId()).toBe(before);
      expect(await codeOf(store.history('fresh', undefined, 5))).toBe('NOT_FOUND');
      expect((await store.readInbox(owner, 50)).rows).toEqual([]);
    });
  });

  describe('tasks', () => {
    it('list: exact filters through their indexes, newest update first, keyset walk', async () => {
      const ann = await store.addMember('ann', 'member');
      for (let i = 0; i < 60; i++) {
        await store.createTask(owner, { title: `task ${i}`, status: i % 2 ? 'open' : 'done', assignee: i % 3 ? 'ann' : null, labels: i % 4 ? ['ui'] : ['ui', 'bug'] }, 5_000 + i);
      }
      const walk = async (filter: TaskFilter): Promise<number[]> => {
        const ids: number[] = [];
        let after: TimeKey | undefined;
        for (;;) {
          const page = await store.listTasks(filter, after, 8);
          ids.push(...page.rows.map((t) => t.id));
          if (!page.more) return ids;
          const l = page.rows[page.rows.length - 1]!;
          after = { at: l.updated_at, id: l.id };
        }
      };
      expect(await walk({})).toEqual(Array.from({ length: 60 }, (_, i) => 60 - i));
      const bugs = await walk({ label: 'bug' });
      expect(bugs).toEqual(Array.from({ length: 15 }, (_, i) => 57 - 4 * i));
      const annOpen = await walk({ assignee: ann.name, status: 'open' });
      expect(annOpen.length).toBe(20);
      const t = await store.updateTask(owner, 1, { labels: ['bug'], title: 'renamed first' });
      expect(t.updated_at).toBeGreaterThan(5_059);
      expect((await walk({ label: 'bug' }))[0]).toBe(1);
    });

    it('search: the task a query names comes first, then ranked text matches', async () => {
      for (let i = 0; i < 30; i++) await store.createTask(owner, { title: `login page ${i}`, body: i === 7 ? 'mentions 12 somewhere' : '' });
      const byKey = await store.searchTasks('T-12', undefined, await store.lastTaskId(), undefined, true, 5);
      expect(byKey.rows[0]).toMatchObject({ id: 12, key: 'T-12', score: null });
      const byNumber = await store.searchTasks('12', undefined, await store.lastTaskId(), undefined, true, 5);
      expect(byNumber.rows.map((r) => r.id).sort((a, b) => a - b)).toEqual([8, 12, 13]);
      expect(byNumber.rows[0]!.id).toBe(12);
      const text = await store.searchTasks('login', 'open', await store.lastTaskId(), undefined, true, 100);
      expect(text.rows).toHaveLength(30);
      expect(await codeOf(store.updateTask(owner, 999, { title: 'x' }))).toBe('NOT_FOUND');
      expect(await codeOf(store.createTask(owner, { title: 't', labels: Array.from({ length: 21 }, (_, i) => `l${i}`) }))).toBe('INPUT_TOO_LARGE');
      expect(await store.lastTaskId()).toBe(30);
    });

    it('an update\'s check sees the task inside the write, and refusing it writes nothing', async () => {
      const t = await store.createTask(owner, { title: 'guarded', labels: ['a'] });
      const seen: string[] = [];
      const refuse = (before: { title: string }): void => {
        seen.push(before.title);
        throw new TeamError('PERMISSION_DENIED', 'not yours');
      };
      expect(await codeOf(store.updateTask(owner, t.id, { title: 'changed', labels: ['b'] }, refuse))).toBe('PERMISSION_DENIED');
      expect(seen).toEqual(['guarded']);
      const after = await store.getTask(t.id);
      expect([after.title, after.labels, after.updated_at]).toEqual(['guarded', ['a'], t.updated_at]);
      const ok = await store.updateTask(owner, t.id, { title: 'changed' }, (before) => void seen.push(before.title));
      expect([ok.title, seen]).toEqual(['changed', ['guarded', 'guarded']]);
      expect(await codeOf(store.updateTask(owner, 999_999, { title: 'x' }, refuse))).toBe('NOT_FOUND');
    });

    it('comments page newest first with their own keyset', async () => {
      const t = await store.createTask(owner, { title: 'c' });
      for (let i = 0; i < 25; i++) await store.addComment(owner, t.id, `c${i}`, 100 + i);
      const p1 = await store.comments(t.id, undefined, 10);
      expect(p1.rows.map((c) => c.body)).toEqual(Array.from({ length: 10 }, (_, i) => `c${24 - i}`));
      const l = p1.rows[9]!;
      const p2 = await store.comments(t.id, { at: l.created_at, id: l.id }, 100);
      expect(p2.rows).toHaveLength(15);
      expect(p2.more).toBe(false);
    });
  });

  describe('members and roles', () => {
    it('options are role-scoped and never list deactivated members', async () => {
      for (const [n, r] of [['lee', 'lead'], ['mia', 'member'], ['ada', 'agent'], ['gus', 'guest'], ['gil', 'guest'], ['max', 'member']] as const) await store.addMember(n, r);
      await store.deactivate('max');
      const names = async (viewer: string, q?: string): Promise<string[]> =>
        (await store.memberOptions((await store.getMember(viewer))!, q, undefined, 100)).rows.map((m) => m.name);
      expect(await names('olga')).toEqual(['ada', 'gil', 'gus', 'lee', 'mia', 'olga']);
      expect(await names('lee')).toEqual(['ada', 'gil', 'gus', 'lee', 'mia', 'olga']);
      expect(await names('mia')).toEqual(['ada', 'lee', 'mia', 'olga']);
      expect(await names('ada')).toEqual(['ada', 'mia']);
      expect(await names('gus')).toEqual(['gus']);
      expect(await names('olga', 'G')).toEqual(['gil', 'gus', 'olga']);
      expect(await names('gus', 'x')).toEqual([]);
      // a deactivated member comes back whole: listed again, its role kept
      expect(await store.reactivate('max')).toMatchObject({ name: 'max', role: 'member', active: true });
      expect(await names('mia')).toContain('max');
      expect(await codeOf(store.reactivate('nobody'))).toBe('NOT_FOUND');
    });

    it('the store keeps an active owner: the last one can be neither demoted nor deactivated, in any order of changes', async () => {
      // olga is the only owner: every way of taking her from the owners is refused, and changes nothing.
      for (const r of ['lead', 'member', 'agent', 'guest'] as const) {
        expect(await codeOf(store.setRole('olga', r))).toBe('INVALID_PARAMS');
      }
      expect(await codeOf(store.deactivate('olga'))).toBe('INVALID_PARAMS');
      expect(await store.getMember('olga')).toMatchObject({ role: 'owner', active: true });
      // With a second owner, either may go, and then the other is the last.
      await store.addMember('ivo', 'owner');
      expect((await store.setRole('olga', 'lead')).role).toBe('lead');
      expect(await codeOf(store.deactivate('ivo'))).toBe('INVALID_PARAMS');
      // A deactivated owner is no owner to keep: olga owner again, ivo deactivated, olga is the last.
      await store.setRole('olga', 'owner');
      await store.deactivate('ivo');
      expect(await codeOf(store.setRole('olga', 'guest'))).toBe('INVALID_PARAMS');
      // Reactivating ivo makes two again; concurrent demotions of both leave exactly one owner.
      await store.reactivate('ivo');
      const both = await Promise.allSettled([store.setRole('olga', 'member'), store.setRole('ivo', 'member')]);
      expect(both.filter((r) => r.status === 'fulfilled')).toHaveLength(1);
      const owners = (await store.listMembers(undefined, 100)).rows.filter((m) => m.role === 'owner' && m.active);
      expect(owners).toHaveLength(1);
      await store.setRole(owners[0]!.name === 'olga' ? 'ivo' : 'olga', 'owner');
      await store.setRole('olga', 'owner');
    });
  });

  describe('the continuation inbox', () => {
    it('a read changes nothing; an ack marks through its id; a second ack is harmless', async () => {
      const bob = await store.addMember('bob', 'member');
      for (let i = 0; i < 70; i++) await store.sendMessage(owner, { channel: 'g', body: `n${i}`, to: ['bob'] });
      const a = await store.readInbox(bob, 50);
      const b = await store.readInbox(bob, 50);
      expect(a).toEqual(b);
      expect(a.rows.map((m) => m.body)).toEqual(Array.from({ length: 50 }, (_, i) => `n${i}`));
      expect(a.more).toBe(true);
      await store.sendMessage(owner, { channel: 'g', body: 'during', to: ['bob'] });
      expect(await store.ackInbox(bob, a.through!)).toBe(50);
      expect(await store.ackInbox(bob, a.through!)).toBe(0);
      const c = await store.readInbox(bob, 50);
      expect(c.rows.map((m) => m.body)).toEqual([...Array.from({ length: 20 }, (_, i) => `n${50 + i}`), 'during']);
      expect(c.more).toBe(false);
    });
  });
  describe('import', () => {
    let importDir: string;
    beforeEach(() => {
      importDir = mkdtempSync(join(tmpdir(), 'team-import-'));
    });
    afterEach(() => rmSync(importDir, { recursive: true, force: true }));

    it('imports JSON Lines in batches and names the line of a bad one', async () => {
      const file = join(importDir, 'in.jsonl');
      const lines = [
        { kind: 'member', name: 'imp', role: 'agent' },
        ...Array.from({ length: 30 }, (_, i) => ({ kind: 'message', channel: 'imp', author: 'imp', body: `imported ${i}`, created_at: 1000 + i })),
        { kind: 'task', title: 'imported task', labels: ['x'], assignee: 'imp' },
        { kind: 'comment', task: 'T-1', author: 'imp', body: 'a comment' },
      ];
      writeFileSync(file, lines.map((l) => JSON.stringify(l)).join('\n') + '\n');
      const sink = { write: () => true } as unknown as NodeJS.WritableStream;
      const s = await importJsonLines(store, file, { progress: sink, batchRows: 7 });
      expect(s.counts).toEqual({ member: 1, message: 30, task: 1, comment: 1 });
      expect((await store.history('imp', undefined, 100)).rows).toHaveLength(30);

      writeFileSync(file, [JSON.stringify({ kind: 'message', channel: 'imp', body: 'ok' }), '{"kind":"message",', JSON.stringify({ kind: 'message', channel: 'imp', body: 'never' })].join('\n'));
      await expect(importJsonLines(store, file, { progress: sink })).rejects.toThrow(/line 2: not JSON/);
      expect((await store.history('imp', undefined, 100)).rows).toHaveLength(30);
      writeFileSync(file, JSON.stringify({ kind: 'message', channel: 'imp', body: 'x'.repeat(1024 * 1024 + 10) }));
      await expect(importJsonLines(store, file, { progress: sink })).rejects.toThrow(/line 1: longer than/);
    });

    it('replies, recipients and inboxes come out the same on every engine; a reply to a later or missing message is refused by line', async () => {
      const file = join(importDir, 'replies.jsonl');
      const sink = { write: () => true } as unknown as NodeJS.WritableStream;
      const lines = [
        { kind: 'member', name: 'ann', role: 'member' },
        { kind: 'member', name: 'bob', role: 'agent' },
        { kind: 'member', name: 'old', role: 'member', active: false },
        { kind: 'message', channel: 'r', author: 'ann', body: 'first', created_at: 10 },
        { kind: 'message', channel: '#r', author: 'bob', body: 'reply', reply_to: 1, to: ['ann', 'ann'], created_at: 11 },
        { kind: 'message', channel: 'r', body: 'system', to: ['bob'], created_at: 12 },
      ];
      writeFileSync(file, lines.map((l) => JSON.stringify(l)).join('\n'));
      const s = await importJsonLines(store, file, { progress: sink, batchRows: 4 });
      expect(s.counts).toEqual({ member: 3, message: 3 });
      const rows = (await store.history('r', undefined, 10)).rows;
      expect(rows.map((m) => [m.id, m.author, m.reply_to, m.created_at])).toEqual([[3, null, null, 12], [2, 'bob', 1, 11], [1, 'ann', null, 10]]);
      const ann = (await store.getMember('ann'))!;
      expect((await store.readInbox(ann, 10)).rows.map((m) => m.id)).toEqual([2]);
      expect((await store.getMember('old'))?.active).toBe(false);
      for (const [line, reason] of [
        [{ kind: 'message', channel: 'r', body: 'x', reply_to: 99 }, /line 1: .*reply_to.*no message 99/],
        [{ kind: 'message', channel: 'r', body: 'x', to: ['old'] }, /line 1: .*no active member named "old"/],
        [{ kind: 'message', channel: 'r', author: 'nobody', body: 'x' }, /line 1: .*no member named "nobody"/],
      ] as const) {
        writeFileSync(file, JSON.stringify(line));
        await expect(importJsonLines(store, file, { progress: sink })).rejects.toThrow(reason);
      }
      expect((await store.history('r', undefined, 10)).rows).toHaveLength(3);
    });

    it('with skipBadLines, every bad line is skipped and reported by number and reason, every good one imported', async () => {
      const file = join(importDir, 'mixed.jsonl');
      let said = '';
      const sink = { write: (t: string) => ((said += t), true) } as unknown as NodeJS.WritableStream;
      const good = (i: number): string => JSON.stringify({ kind: 'message', channel: 'mix', author: 'mixer', body: `good ${i}` });
      const bad: [string, RegExp][] = [
        ['{"kind":"message",', /not JSON/],
        [JSON.stringify({ kind: 'message', channel: 'mix', body: 'x', created_at: 1e300 }), /not a time/],
        [JSON.stringify({ kind: 'message', channel: 'mix', author: 'nobody', body: 'x' }), /no member named "nobody"/],
        [JSON.stringify({ kind: 'message', channel: 'mix', body: 'x', reply_to: 999999 }), /no message 999999/],
        [JSON.stringify({ kind: 'message', channel: 'mix', body: 'nul \u0000 here' }), /NUL/],
        [JSON.stringify({ kind: 'planet' }), /unknown `kind`/],
      ];
      const lines = [JSON.stringify({ kind: 'member', name: 'mixer', role: 'member' })];
      const badAt: number[] = [];
      for (const [i, [line]] of bad.entries()) {
        lines.push(good(i));
        lines.push(line);
        badAt.push(lines.length);
      }
      lines.push(good(99));
      writeFileSync(file, lines.join('\n') + '\n');
      const s = await importJsonLines(store, file, { progress: sink, batchRows: 3, skipBadLines: true });
      expect(s.skipped).toBe(bad.length);
      expect(s.counts).toEqual({ member: 1, message: bad.length + 1 });
      for (const [i, [, reason]] of bad.entries()) expect(said).toMatch(new RegExp(`skipped [A-Z_]+: line ${badAt[i]}: .*${reason.source}`));
      const bodies = (await store.history('mix', undefined, 50)).rows.map((m) => m.body).sort();
      expect(bodies).toEqual([...bad.map((_, i) => `good ${i}`), 'good 99'].sort());
      // every other line of one batch refused by the engine: each part is written once, not the batch once per bad line
      writeFileSync(file, Array.from({ length: 400 }, (_, i) => JSON.stringify({ kind: 'message', channel: 'many', author: i % 2 ? 'nobody' : 'mixer', body: `m${i}` })).join('\n'));
      const many = await importJsonLines(store, file, { progress: sink, batchRows: 1000, skipBadLines: true });
      expect(many).toMatchObject({ skipped: 200, counts: { message: 200 } });
      expect((await store.history('many', undefined, 200)).rows).toHaveLength(200);
    });

    it('refuses a value no reader can show, naming the line and the reason; nothing of the file is written', async () => {
      const file = join(importDir, 'hostile.jsonl');
      const sink = { write: () => true } as unknown as NodeJS.WritableStream;
      await importJsonLines(store, ((): string => (writeFileSync(file, [{ kind: 'member', name: 'imp', role: 'agent' }, { kind: 'message', channel: 'imp', author: 'imp', body: 'first' }, { kind: 'task', title: 'base', created_by: 'imp' }].map((l) => JSON.stringify(l)).join('\n')), file))(), { progress: sink });
      const msg = { kind: 'message', channel: 'imp', author: 'imp', body: 'fine' };
      const hostile: [Record<string, unknown> | string, RegExp][] = [
        [{ ...msg, created_at: 1e300 }, /created_at.*not a time the store keeps/],
        [{ ...msg, created_at: -8.64e15 }, /created_at.*not a time the store keeps/],
        [{ ...msg, created_at: 1.5 }, /created_at.*whole milliseconds/],
        [{ ...msg, created_at: '+275760-09-13T00:00:00Z' }, /created_at.*not a time the store keeps/],
        [{ ...msg, created_at: 'yesterday' }, /created_at.*not a time/],
        [{ ...msg, reply_to: 2 ** 60 }, /reply_to.*below 2\^53/],
        [{ ...msg, reply_to: 'one' }, /reply_to.*positive whole number/],
        [{ kind: 'comment', task: 2 ** 53 + 2, author: 'imp', body: 'c' }, /task.*below 2\^53/],
        [{ ...msg, body: 'a\0b' }, /body.*NUL/],
        ['{"kind":"message","channel":"imp","author":"imp","body":"half \\ud800 pair"}', /body.*lone surrogate/],
        [{ kind: 'task', title: 'nul\0title', created_by: 'imp' }, /title.*NUL/],
        [{ kind: 'task', title: 't', created_by: 'imp', updated_at: 9e15 }, /updated_at.*not a time/],
        [{ kind: 'comment', task: 'T-1', author: 'imp', body: 'c', created_at: -1e17 }, /created_at.*not a time/],
      ];
      const before = { messages: (await store.history('imp', undefined, 100)).rows.length, tasks: (await store.listTasks({}, undefined, 100)).rows.length };
      for (const [line, reason] of hostile) {
        writeFileSync(file, [JSON.stringify(msg), typeof line === 'string' ? line : JSON.stringify(line), JSON.stringify(msg)].join('\n') + '\n');
        const err = await importJsonLines(store, file, { progress: sink }).then(() => undefined, (e: unknown) => e as Error);
        expect(err?.message, JSON.stringify(line)).toMatch(/line 2/);
        expect(err?.message, JSON.stringify(line)).toMatch(reason);
      }
      expect((await store.history('imp', undefined, 100)).rows.length).toBe(before.messages);
      expect((await store.listTasks({}, undefined, 100)).rows.length).toBe(before.tasks);
    });
  });

  describe('details every engine must share', () => {
    it('stored values: a NUL or a lone surrogate in any text, or a time no reader renders, is refused and nothing is written', async () => {
      const task = await store.createTask(owner, { title: 'base' });
      await store.sendMessage(owner, { channel: 'g', body: 'first' });
      const bad = ['a\0b', '\0', 'x\uD800', '\uDC00y', 'ok \uDBFF\uDBFF'];
      const before = { messages: (await store.history('g', undefined, 50)).rows.length, task: await store.getTask(task.id) };
      for (const v of bad) {
        const label = JSON.stringify(v);
        expect(await codeOf(store.sendMessage(owner, { channel: 'g', body: v })), label).toBe('INVALID_PARAMS');
        expect(await codeOf(store.createTask(owner, { title: v })), label).toBe('INVALID_PARAMS');
        expect(await codeOf(store.createTask(owner, { title: 't', body: v })), label).toBe('INVALID_PARAMS');
        expect(await codeOf(store.updateTask(owner, task.id, { body: v })), label).toBe('INVALID_PARAMS');
        expect(await codeOf(store.addComment(owner, task.id, v)), label).toBe('INVALID_PARAMS');
      }
      // a well-formed pair and other control characters are kept
      const fine = await store.sendMessage(owner, { channel: 'g', body: 'pair \uD83D\uDE00 tab\t' });
      expect((await store.getMessage(fine.id)).body).toBe('pair \uD83D\uDE00 tab\t');
      for (const at of [1e300, -1e300, 8.64e15, 1.5, Number.NaN, Date.UTC(10000, 0, 1), Date.parse('0000-12-31T23:59:59Z')]) {
        expect(await codeOf(store.sendMessage(owner, { channel: 'g', body: 'timed', at })), String(at)).toBe('INVALID_PARAMS');
      }
      expect((await store.history('g', undefined, 50)).rows.length).toBe(before.messages + 1);
      expect((await store.listTasks({}, undefined, 50)).rows.length).toBe(1);
      expect(await store.getTask(task.id)).toEqual(before.task);
    });

    it('pages carry a body prefix, message_get the whole body; reply_to must exist', async () => {
      const long = await store.sendMessage(owner, { channel: 'g', body: 'é'.repeat(300) });
      const row = (await store.history('g', undefined, 5)).rows[0] as { body: string; truncated?: boolean };
      expect(row.body).toBe('é'.repeat(TEAM_READ_LIMITS.previewBytes));
      expect(row.truncated).toBe(true);
      expect((await store.getMessage(long.id)).body).toBe('é'.repeat(300));
      expect(await codeOf(store.sendMessage(owner, { channel: 'g', body: 'x', replyTo: 999 }))).toBe('NOT_FOUND');
      expect((await store.sendMessage(owner, { channel: '#g', body: 'y', replyTo: long.id })).reply_to).toBe(long.id);
      expect(await codeOf(store.getMessage(999))).toBe('NOT_FOUND');
    });

    it('search words: all required, case-folded, split at punctuation, never operators; snippets bounded', async () => {
      const [a, b] = [await store.sendMessage(owner, { channel: 'g', body: 'zephyr filler' }), await store.sendMessage(owner, { channel: 'g', body: 'zephyr alone' })];
      await store.sendMessage(owner, { channel: 'g', body: 'see notes/file.txt, QUOKKA-style' });
      await store.sendMessage(owner, { channel: 'g', body: `${'lorem ipsum '.repeat(400)} needle ${'dolor sit '.repeat(400)}` });
      const hi = await store.lastMessageId();
      const ids = async (q: string): Promise<number[]> => (await store.searchMessages(q, undefined, { hi }, 20)).rows.map((r) => r.id).sort((x, y) => x - y);
      expect(await ids('zephyr')).toEqual([a.id, b.id]);
      expect(await ids('zephyr -filler')).toEqual([a.id]);
      expect(await ids('zephyr or alone')).toEqual([]);
      expect(await ids('"zephyr filler" | alone')).toEqual([]);
      expect(await ids('ZEPHYR ALONE')).toEqual([b.id]);
      expect(await ids('txt')).toHaveLength(1);
      expect(await ids('quokka style')).toHaveLength(1);
      const hit = (await store.searchMessages('needle', undefined, { hi }, 5)).rows[0]!;
      expect(hit.snippet).toContain('[needle]');
      expect(hit.snippet.length).toBeLessThan(200);
      expect(await codeOf(store.searchMessages('x'.repeat(TEAM_READ_LIMITS.maxQueryChars + 1), undefined, { hi }, 5))).toBe('INVALID_PARAMS');
      expect(await codeOf(store.searchMessages(Array.from({ length: TEAM_READ_LIMITS.maxQueryTerms + 1 }, (_, i) => `w${i}`).join(' '), undefined, { hi }, 5))).toBe('INVALID_PARAMS');
    });

    it("search folds accents as SQLite's tokenizer does, on every engine; snippets mark the word as written", async () => {
      const elegant = await store.sendMessage(owner, { channel: 'g', body: 'Ça fait très Élégant à Zürich' });
      const decomposed = await store.sendMessage(owner, { channel: 'g', body: 'un cafe\u0301 noir' });
      const composed = await store.sendMessage(owner, { channel: 'g', body: 'un café crème' });
      const hindi = await store.sendMessage(owner, { channel: 'g', body: 'नमस्ते दुनिया' });
      const greek = await store.sendMessage(owner, { channel: 'g', body: 'Ἀθῆναι καλημέρα' });
      const ligature = await store.sendMessage(owner, { channel: 'g', body: 'Ærøskøbing Łódź' });
      const task = await store.createTask(owner, { title: 'Réviser le résumé', body: 'déjà vu' });
      const hi = await store.lastMessageId();
      const ids = async (q: string): Promise<number[]> => (await store.searchMessages(q, undefined, { hi }, 20)).rows.map((r) => r.id).sort((x, y) => x - y);
      for (const q of ['elegant', 'ÉLÉGANT', 'élégant', 'ELEGANT zurich', 'ca fait', 'çà', 'TRÈS']) expect(await ids(q), q).toEqual([elegant.id]);
      for (const q of ['cafe', 'café', 'CAFÉ', 'cafe\u0301']) expect(await ids(q), q).toEqual([decomposed.id, composed.id]);
      expect(await ids('creme')).toEqual([composed.id]);
      expect(await ids('नमस्ते')).toEqual([hindi.id]);
      // Only what has a canonical decomposition folds (SQLite's rule, the reference): not Greek
      // accents nor ł, ø, æ; case folds everywhere.
      expect(await ids('ΚΑΛΗΜΈΡΑ')).toEqual([greek.id]);
      expect(await ids('καλημερα')).toEqual([]);
      expect(await ids('ἀθῆναι')).toEqual([greek.id]);
      expect(await ids('ÆRØSKØBING')).toEqual([ligature.id]);
      expect(await ids('ŁÓDŹ')).toEqual([ligature.id]);
      expect(await ids('łodz')).toEqual([ligature.id]);
      expect(await ids('lodz')).toEqual([]);
      const hit = (await store.searchMessages('elegant', undefined, { hi }, 5)).rows[0]!;
      expect(hit.snippet).toContain('[Élégant]');
      const tasks = await store.searchTasks('resume deja', undefined, await store.lastTaskId(), undefined, true, 5);
      expect(tasks.rows.map((r) => r.id)).toEqual([task.id]);
      expect(tasks.rows[0]!.snippet).toContain('[résumé]');
    });

    it('a search cursor survives JSON (the score is exact), and a task search walks once', async () => {
      for (let i = 0; i < 45; i++) await store.sendMessage(owner, { channel: 'g', body: `alpha ${'beta '.repeat(i % 9)} ${i}` });
      for (let i = 0; i < 33; i++) await store.createTask(owner, { title: `alpha task ${'gamma '.repeat(i % 4)}`, body: i % 2 ? 'alpha again' : '' });
      const seen: number[] = [];
      let from: SearchPos = { hi: await store.lastMessageId() };
      for (;;) {
        const page = await store.searchMessages('alpha', undefined, from, 6);
        seen.push(...page.rows.map((r) => r.id));
        if (!page.more) break;
        from = JSON.parse(JSON.stringify(page.next)) as SearchPos;
      }
      expect(new Set(seen).size).toBe(45);
      expect(seen).toHaveLength(45);
      const tasks: number[] = [];
      const snap = await store.lastTaskId();
      let after: { score: number; id: number } | undefined;
      for (;;) {
        const page = await store.searchTasks('alpha', undefined, snap, after, after === undefined, 5);
        tasks.push(...page.rows.map((r) => r.id));
        await store.createTask(owner, { title: 'alpha later' });
        if (!page.more) break;
        const l = page.rows[page.rows.length - 1]!;
        after = JSON.parse(JSON.stringify({ score: l.score, id: l.id })) as { score: number; id: number };
      }
      expect(tasks.sort((x, y) => x - y)).toEqual(Array.from({ length: 33 }, (_, i) => i + 1));
      const t = (await store.searchTasks('gamma', undefined, snap, undefined, true, 3)).rows[0]!;
      expect(t.snippet).toContain('[gamma]');
    });

    it('members, labels and comments: keyset listings by name, duplicates and unknowns refused', async () => {
      for (const n of ['zed', 'Amy', 'bob', 'Émile']) await store.addMember(n, 'member');
      expect(await codeOf(store.addMember('bob', 'lead'))).toBe('ALREADY_EXISTS');
      expect(await codeOf(store.addMember('bad name', 'lead'))).toBe('INVALID_PARAMS');
      expect(await codeOf(store.setRole('nobody', 'lead'))).toBe('NOT_FOUND');
      expect((await store.setRole('bob', 'lead')).role).toBe('lead');
      const p1 = await store.listMembers(undefined, 2);
      const p2 = await store.listMembers(p1.rows[1]!.name, 10);
      // bytewise order: upper case before lower case, accented letters last
      expect([...p1.rows, ...p2.rows].map((m) => m.name)).toEqual(['Amy', 'bob', 'olga', 'zed', 'Émile']);
      expect(p1.more).toBe(true);
      expect(p2.more).toBe(false);
      await store.createTask(owner, { title: 'l', labels: ['b', 'a', 'C', 'a'] });
      const l1 = await store.labels(undefined, 2);
      expect(l1).toEqual({ rows: ['C', 'a'], more: true });
      expect(await store.labels('a', 5)).toEqual({ rows: ['b'], more: false });
      expect((await store.getTask(1)).labels).toEqual(['C', 'a', 'b']);
      expect(await codeOf(store.addComment(owner, 99, 'x'))).toBe('NOT_FOUND');
      expect(await codeOf(store.comments(99, undefined, 5))).toBe('NOT_FOUND');
      expect(await codeOf(store.createTask(owner, { title: 't', assignee: 'ghost' }))).toBe('NOT_FOUND');
      expect(await store.lastTaskId()).toBe(1);
      expect(await store.isEmpty()).toBe(false);
    });
  });
}
