/**
 * Question: does the PostgreSQL team store cost the page, not the store? Goals (as for SQLite,
 * bench/team.bench.ts): at 1,000,000 messages, the first history page and the page at depth
 * 500,000 by cursor within 2× of each other; `message_search` p50 for a rare and a common word.
 *
 * Variants (store level, tinybench, the team service on PostgreSQL the tools call, over the local socket):
 *   history 'general' (800,000 messages), limit 20: first page · depth 500,000 by keyset cursor ·
 *   the same page by OFFSET 500000 (the plain baseline, same columns and joins);
 *   message_search limit 20, first page: rare word (10 matches) · common word (100,000 matches).
 *
 * Fixture: the SQLite bench's messages (20 members; 80% in 'general', the rest in 9 channels;
 * 8–14 words from a 5,000-word vocabulary, 'status' in every 10th, 'quokka' in 10), written by
 * multi-row INSERTs (unnest of arrays, 10,000 rows a statement) with the GIN index built after
 * the load, then ANALYZE. Database: BENCH_TEAM_PG (a `--team-db` value; default a fresh
 * `mcp_budget_bench_<random>` on the local socket, dropped at the end unless BENCH_TEAM_KEEP=1).
 * Asserted before timing: keyset and OFFSET pages hold the same ids; the searches find 10 and more
 * than 20 matches.
 *
 * Command: npm run bench:team-pg (node --import tsx bench/team-pg.bench.ts)
 */
import { randomBytes } from 'node:crypto';
import pg from 'pg';
import { Bench } from 'tinybench';
import { openPgTeamStore } from '../src/team/index.js';
import { pgConfig } from '../src/team/pg-connect.js';
import { assert, fmt, machineLine, rows, table } from './util.js';

/** BENCH_TEAM_SCALE (default 1) scales the fixture and the depth, for a quick dry run. */
const SCALE = Number(process.env.BENCH_TEAM_SCALE ?? '1');
const MESSAGES = Math.round(1_000_000 * SCALE);
const DEPTH_MESSAGES = Math.round(500_000 * SCALE);
const PAGE = 20;
const INSERT_ROWS = 10_000;
const ADMIN = process.env.BENCH_TEAM_PG_ADMIN ?? 'host=/var/run/postgresql dbname=postgres';

let seed = 42;
const rand = (): number => ((seed = (seed * 1103515245 + 12345) & 0x7fffffff) / 0x7fffffff);
const pick = (n: number): number => Math.floor(rand() * n);
const vocab = Array.from({ length: 5000 }, (_, i) => `w${i.toString(36)}x`);
const words = (min: number, max: number): string => Array.from({ length: min + pick(max - min + 1) }, () => vocab[pick(vocab.length)]).join(' ');

async function admin(sql: string): Promise<void> {
  const c = new pg.Client(pgConfig(ADMIN));
  await c.connect();
  try {
    await c.query(sql);
  } finally {
    await c.end();
  }
}

console.log(machineLine());
let target = process.env.BENCH_TEAM_PG;
let created: string | undefined;
if (target === undefined) {
  created = `mcp_budget_bench_${randomBytes(4).toString('hex')}`;
  await admin(`CREATE DATABASE ${created}`);
  target = `host=/var/run/postgresql dbname=${created}`;
}
const store = await openPgTeamStore(target);
const pool = store.dialect.pool;
const loaded = (await pool.query<{ n: number }>(`SELECT count(*)::int AS n FROM messages`)).rows[0]!.n;
if (loaded === 0) {
  const t0 = performance.now();
  const members = Array.from({ length: 20 }, (_, i) => `m${i}`);
  for (const [i, name] of members.entries()) await store.addMember(name, i === 0 ? 'owner' : 'member');
  const memberIds = (await pool.query<{ id: number }>(`SELECT id FROM members ORDER BY id`)).rows.map((r) => r.id);
  const channelIds = new Map<string, number>();
  for (const c of ['general', ...Array.from({ length: 9 }, (_, i) => `c${i}`)]) {
    await store.createChannel(c);
    channelIds.set(c, (await pool.query<{ id: number }>(`SELECT id FROM channels WHERE name = $1`, [c])).rows[0]!.id);
  }
  await pool.query(`DROP INDEX messages_fts`);
  const t0ms = 1_700_000_000_000;
  for (let start = 0; start < MESSAGES; start += INSERT_ROWS) {
    const ch: number[] = [];
    const au: number[] = [];
    const bo: string[] = [];
    const at: number[] = [];
    for (let i = start; i < Math.min(MESSAGES, start + INSERT_ROWS); i++) {
      ch.push(channelIds.get(i % 5 === 4 ? `c${i % 9}` : 'general')!);
      au.push(memberIds[i % 20]!);
      bo.push(`${words(8, 14)}${i % 10 === 0 ? ' status' : ''}${i % (MESSAGES / 10) === 7 ? ' quokka' : ''}`);
      at.push(t0ms + i * 1000);
    }
    await pool.query(`INSERT INTO messages (channel_id, author_id, body, created_at) SELECT * FROM unnest($1::bigint[], $2::bigint[], $3::text[], $4::bigint[])`, [ch, au, bo, at]);
  }
  const t1 = performance.now();
  const c = await pool.connect();
  try {
    await c.query(`SET maintenance_work_mem = '512MB'`);
    await c.query(`SET statement_timeout = 0`);
    await c.query(`CREATE INDEX messages_fts ON messages USING gin (fts)`);
    await c.query(`VACUUM ANALYZE messages`);
  } finally {
    c.release();
  }
  const t2 = performance.now();
  const size = (await pool.query<{ s: string }>(`SELECT pg_size_pretty(pg_database_size(current_database())) AS s`)).rows[0]!.s;
  console.log(`load: ${MESSAGES.toLocaleString('en')} messages inserted in ${fmt(t1 - t0)} (${Math.round((MESSAGES * 1000) / (t1 - t0)).toLocaleString('en')} rows/s), GIN index + VACUUM ANALYZE ${fmt(t2 - t1)}; database ${size}`);
} else {
  console.log(`reused ${loaded.toLocaleString('en')} messages`);
}

const general = (await pool.query<{ id: number }>(`SELECT id FROM channels WHERE name = 'general'`)).rows[0]!.id;
const deep = (await pool.query<{ at: number; id: number }>(`SELECT created_at AS at, id FROM messages WHERE channel_id = $1 ORDER BY created_at DESC, id DESC LIMIT 1 OFFSET $2`, [general, DEPTH_MESSAGES - 1])).rows[0]!;
const OFFSET_SQL = `SELECT m.id, c.name AS channel, a.name AS author, left(m.body, 200) AS body, length(m.body) > 200 AS truncated, m.reply_to, m.created_at
  FROM messages m JOIN channels c ON c.id = m.channel_id LEFT JOIN members a ON a.id = m.author_id
  WHERE m.channel_id = $1 ORDER BY m.created_at DESC, m.id DESC LIMIT $2 OFFSET $3`;
const snap = await store.lastMessageId();

const keysetIds = (await store.history('general', deep, PAGE)).rows.map((m) => m.id);
const offsetIds = (await pool.query<{ id: number }>(OFFSET_SQL, [general, PAGE, DEPTH_MESSAGES])).rows.map((r) => r.id);
assert(JSON.stringify(keysetIds) === JSON.stringify(offsetIds), 'history keyset = OFFSET');
assert((await store.searchMessages('quokka', undefined, { hi: snap }, PAGE)).rows.length === 10, 'rare word: 10 matches');
assert((await store.searchMessages('status', undefined, { hi: snap }, PAGE)).more, 'common word: more than a page');
const plan = await pool.query<{ 'QUERY PLAN': string }>(
  `EXPLAIN SELECT m.id FROM messages m WHERE m.channel_id = $1 AND (m.created_at, m.id) < ($2, $3) ORDER BY m.created_at DESC, m.id DESC LIMIT 21`,
  [general, deep.at, deep.id],
);
console.log(`deep page plan: ${plan.rows.map((r) => r['QUERY PLAN'].trim()).join(' | ')}`);

const bench = new Bench({ time: 2000, warmupTime: 300, iterations: 20, throws: true });
bench
  .add('history: first page', async () => void (await store.history('general', undefined, PAGE)))
  .add('history: depth 500k, keyset cursor', async () => void (await store.history('general', deep, PAGE)))
  .add('history: depth 500k, OFFSET (baseline)', async () => void (await pool.query(OFFSET_SQL, [general, PAGE + 1, DEPTH_MESSAGES])))
  .add('message_search: rare word (10 matches)', async () => void (await store.searchMessages('quokka', undefined, { hi: snap }, PAGE)))
  .add('message_search: common word (100k matches)', async () => void (await store.searchMessages('status', undefined, { hi: snap }, PAGE)))
  .add('message_search: common word, next page by cursor', async () => {
    const first = await store.searchMessages('status', undefined, { hi: snap }, PAGE);
    void (await store.searchMessages('status', undefined, first.next!, PAGE));
  });
await bench.run();
const r = rows(bench);
const med = (k: string): number => r.get(k)!.median;
console.log(table(['store-level variant (PostgreSQL)', 'median', 'p99', 'samples'], [...r.values()].map((x) => [x.name, fmt(x.median), fmt(x.p99), x.samples])));
console.log(`ratio depth/first (history): ${(med('history: depth 500k, keyset cursor') / med('history: first page')).toFixed(2)}×; OFFSET/keyset: ${(med('history: depth 500k, OFFSET (baseline)') / med('history: depth 500k, keyset cursor')).toFixed(0)}×`);
await store.close();
if (created !== undefined && process.env.BENCH_TEAM_KEEP !== '1') await admin(`DROP DATABASE ${created} WITH (FORCE)`);
