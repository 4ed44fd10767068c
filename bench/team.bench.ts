/**
 * Question: do the team tools cost the page, not the store? Goals: at 1,000,000 messages and
 * 100,000 tasks, the first history page and the page at depth 500,000 by cursor within 2× of each
 * other and each under 5 ms; `message_search` p50 under 20 ms for a rare and a common word; peak
 * RSS of `serve` during these under 150 MB. Also: `team import` throughput.
 *
 * Variants (store level, tinybench, the team service on SQLite the tools call, awaited as they await it):
 *   history 'general' (800,000 messages), limit 20: first page · depth 500,000 by keyset cursor ·
 *   the same page by OFFSET 500000 (the plain baseline, same SQL otherwise);
 *   task_list limit 20: first page · depth 50,000 by keyset cursor · the same by OFFSET;
 *   message_search limit 20, first page: rare word (10 matches) · common word (100,000 matches).
 * Tool level: one `mcp-budget serve` process driven by the SDK client over stdio, the same calls
 * (the deep cursor signed with a shared MCP_BUDGET_CURSOR_KEY), medians of client round trips;
 * peak RSS = the server's VmHWM from /proc/<pid>/status after all calls.
 *
 * Fixture (BENCH_TEAM_DIR, default os.tmpdir()/mcp-budget-bench-team; kept when BENCH_TEAM_KEEP=1):
 * a generated JSONL of 20 members, 1,000,000 messages (80% in 'general', the rest in 9 channels;
 * 8–14 words each from a 5,000-word vocabulary, 'status' in every 10th, 'quokka' in 10), 100,000
 * tasks (5–8 title words, 1–2 labels, 5 statuses, half assigned), loaded with `team import`.
 * Asserted before timing: the keyset and OFFSET pages hold the same ids; searches find 10 and
 * more than 20 matches.
 *
 * Command: npm run bench:team (node --import tsx bench/team.bench.ts)
 *
 * Results — Intel Xeon Processor (2 vCPU), 23.5 GiB RAM, Node v20.20.2, linux-x64, 2026-12-03,
 * load avg 2.8–5.5 (full tables in bench/RESULTS.md):
 *   import 25,500 lines/s · history first page 44.0 µs, depth 500k by cursor 46.1 µs (1.05×),
 *   by OFFSET 116.7 ms · message_search rare 200 µs, common 12.9 ms (15.0 ms as a tool call) ·
 *   serve peak RSS 105.5 MiB.
 * Reading: deep pages cost the first page's price; a common word is bounded by its 10,000-match
 * window; every goal met.
 */
import { spawnSync } from 'node:child_process';
import { createWriteStream, existsSync, mkdirSync, readFileSync, rmSync, statSync } from 'node:fs';
import { once } from 'node:events';
import os from 'node:os';
import { join } from 'node:path';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { Bench } from 'tinybench';
import { CursorCodec } from '../src/shared/cursor.js';
import { openSqliteTeamStore } from '../src/team/index.js';
import { assert, fmt, machineLine, rows, table } from './util.js';

/** BENCH_TEAM_SCALE (default 1) scales the fixture and the depths, for a quick dry run. */
const SCALE = Number(process.env.BENCH_TEAM_SCALE ?? '1');
const MESSAGES = Math.round(1_000_000 * SCALE);
const TASKS = Math.round(100_000 * SCALE);
const DEPTH_MESSAGES = Math.round(500_000 * SCALE);
const DEPTH_TASKS = Math.round(50_000 * SCALE);
const PAGE = 20;
const TOOL_CALLS = 200;
const dir = process.env.BENCH_TEAM_DIR ?? join(os.tmpdir(), 'mcp-budget-bench-team');
const root = join(dir, 'root');
const dbPath = join(dir, 'team.db');
const jsonl = join(dir, 'team.jsonl');
const cli = join(process.cwd(), 'dist', 'cli.js');

let seed = 42;
const rand = (): number => ((seed = (seed * 1103515245 + 12345) & 0x7fffffff) / 0x7fffffff);
const pick = (n: number): number => Math.floor(rand() * n);
const vocab = Array.from({ length: 5000 }, (_, i) => `w${i.toString(36)}x`);
const words = (min: number, max: number): string => Array.from({ length: min + pick(max - min + 1) }, () => vocab[pick(vocab.length)]).join(' ');

async function generate(): Promise<void> {
  const out = createWriteStream(jsonl);
  const write = async (o: object): Promise<void> => {
    if (!out.write(JSON.stringify(o) + '\n')) await once(out, 'drain');
  };
  const members = Array.from({ length: 20 }, (_, i) => `m${i}`);
  for (const [i, name] of members.entries()) await write({ kind: 'member', name, role: i === 0 ? 'owner' : i < 3 ? 'lead' : i < 15 ? 'member' : 'agent' });
  const t0 = 1_700_000_000_000;
  for (let i = 0; i < MESSAGES; i++) {
    const channel = i % 5 === 4 ? `c${i % 9}` : 'general';
    const body = `${words(8, 14)}${i % 10 === 0 ? ' status' : ''}${i % (MESSAGES / 10) === 7 ? ' quokka' : ''}`;
    await write({ kind: 'message', channel, author: members[i % 20], body, created_at: t0 + i * 1000 });
  }
  const statuses = ['open', 'in_progress', 'blocked', 'done', 'cancelled'];
  for (let i = 0; i < TASKS; i++) {
    await write({ kind: 'task', title: words(5, 8), status: statuses[i % 5], labels: i % 3 ? [`l${i % 40}`] : [`l${i % 40}`, 'urgent'], assignee: i % 2 ? members[i % 20] : null, created_at: t0 + i * 5000 });
  }
  out.end();
  await once(out, 'finish');
}

function vmHwmKiB(pid: number): number {
  const m = /VmHWM:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'));
  return m === null ? NaN : Number(m[1]);
}

console.log(machineLine());
mkdirSync(root, { recursive: true });
let importLine = '(reused an existing store)';
if (!existsSync(dbPath)) {
  const g0 = performance.now();
  await generate();
  console.log(`generated ${jsonl} (${(statSync(jsonl).size / 1024 ** 2).toFixed(0)} MiB) in ${fmt(performance.now() - g0)}`);
  const i0 = performance.now();
  const r = spawnSync(process.execPath, [cli, 'team', '--root', root, '--team-db', dbPath, 'import', jsonl], { stdio: ['ignore', 'inherit', 'pipe'], encoding: 'utf8' });
  const ms = performance.now() - i0;
  assert(r.status === 0, `import failed: ${r.stderr}`);
  const lines = 20 + MESSAGES + TASKS;
  importLine = `${lines.toLocaleString('en')} lines in ${fmt(ms)}: ${Math.round((lines * 1000) / ms).toLocaleString('en')} lines/s; store ${(statSync(dbPath).size / 1024 ** 2).toFixed(0)} MiB`;
}
console.log(`import: ${importLine}`);

const store = openSqliteTeamStore(dbPath);
const db = store.dialect.db;
const general = (db.prepare(`SELECT id FROM channels WHERE name = 'general'`).get() as { id: number }).id;
const deepMsg = db
  .prepare(`SELECT created_at AS at, id FROM messages WHERE channel_id = ? ORDER BY created_at DESC, id DESC LIMIT 1 OFFSET ?`)
  .get(general, DEPTH_MESSAGES - 1) as { at: number; id: number };
// The baselines select what the store's page queries select (same columns and joins), by OFFSET.
const offsetHistory = db.prepare(
  `SELECT m.id, c.name AS channel, a.name AS author, substr(m.body, 1, 200) AS body, length(m.body) > 200 AS truncated, m.reply_to, m.created_at
   FROM messages m JOIN channels c ON c.id = m.channel_id LEFT JOIN members a ON a.id = m.author_id
   WHERE m.channel_id = ? ORDER BY m.created_at DESC, m.id DESC LIMIT ? OFFSET ?`,
);
const deepTask = db.prepare(`SELECT updated_at AS at, id FROM tasks ORDER BY updated_at DESC, id DESC LIMIT 1 OFFSET ?`).get(DEPTH_TASKS - 1) as { at: number; id: number };
const offsetTasks = db.prepare(
  `SELECT t.id, t.title, substr(t.body, 1, 160) AS body, t.status, t.priority, a.name AS assignee, c.name AS created_by, t.created_at, t.updated_at,
     (SELECT json_group_array(label) FROM (SELECT label FROM task_labels WHERE task_id = t.id ORDER BY label)) AS labels
   FROM tasks t LEFT JOIN members a ON a.id = t.assignee_id LEFT JOIN members c ON c.id = t.created_by
   ORDER BY t.updated_at DESC, t.id DESC LIMIT ? OFFSET ?`,
);
const snap = await store.lastMessageId();

const keysetIds = (await store.history('general', deepMsg, PAGE)).rows.map((m) => m.id);
assert(JSON.stringify(keysetIds) === JSON.stringify((offsetHistory.all(general, PAGE, DEPTH_MESSAGES) as { id: number }[]).map((r) => r.id)), 'history keyset = OFFSET');
const taskIds = (await store.listTasks({}, deepTask, PAGE)).rows.map((t) => t.id);
assert(JSON.stringify(taskIds) === JSON.stringify((offsetTasks.all(PAGE, DEPTH_TASKS) as { id: number }[]).map((r) => r.id)), 'tasks keyset = OFFSET');
assert((await store.searchMessages('quokka', undefined, { hi: snap }, PAGE)).rows.length === 10, 'rare word: 10 matches');
assert((await store.searchMessages('status', undefined, { hi: snap }, PAGE)).more, 'common word: more than a page');

const bench = new Bench({ time: 1000, warmupTime: 200, iterations: 10, throws: true });
bench
  .add('history: first page', async () => void (await store.history('general', undefined, PAGE)))
  .add('history: depth 500k, keyset cursor', async () => void (await store.history('general', deepMsg, PAGE)))
  .add('history: depth 500k, OFFSET (baseline)', () => void offsetHistory.all(general, PAGE + 1, DEPTH_MESSAGES))
  .add('task_list: first page', async () => void (await store.listTasks({}, undefined, PAGE)))
  .add('task_list: depth 50k, keyset cursor', async () => void (await store.listTasks({}, deepTask, PAGE)))
  .add('task_list: depth 50k, OFFSET (baseline)', () => void offsetTasks.all(PAGE + 1, DEPTH_TASKS))
  .add('message_search: rare word (10 matches)', async () => void (await store.searchMessages('quokka', undefined, { hi: snap }, PAGE)))
  .add('message_search: common word (100k matches)', async () => void (await store.searchMessages('status', undefined, { hi: snap }, PAGE)));
await bench.run();
const r = rows(bench);
const med = (k: string): number => r.get(k)!.median;
console.log(table(['store-level variant', 'median', 'p99', 'samples'], [...r.values()].map((x) => [x.name, fmt(x.median), fmt(x.p99), x.samples])));
console.log(`ratio depth/first (history): ${(med('history: depth 500k, keyset cursor') / med('history: first page')).toFixed(2)}×; OFFSET/keyset: ${(med('history: depth 500k, OFFSET (baseline)') / med('history: depth 500k, keyset cursor')).toFixed(0)}×`);
const storeId = store.storeId;
await store.close();

// Tool level through a real serve process.
const key = 'bench-team-key';
const transport = new StdioClientTransport({ command: process.execPath, args: [cli, 'serve', '--root', root, '--team-db', dbPath, '--as', 'm0'], env: { MCP_BUDGET_CURSOR_KEY: key }, stderr: 'inherit' });
const client = new Client({ name: 'team-bench', version: '1' });
await client.connect(transport);
const pid = transport.pid!;
const deepCursor = new CursorCodec(key).encode('team.history', { s: storeId, b: 'general', p: { a: deepMsg.at, i: deepMsg.id } });
const calls: [string, string, Record<string, unknown>][] = [
  ['message_history_read, first page', 'message_history_read', { channel: 'general' }],
  ['message_history_read, depth 500k by cursor', 'message_history_read', { channel: 'general', cursor: deepCursor }],
  ['message_search, rare word', 'message_search', { q: 'quokka' }],
  ['message_search, common word', 'message_search', { q: 'status' }],
  ['task_list, first page', 'task_list', {}],
];
const toolRows: (string | number)[][] = [];
for (const [label, name, args] of calls) {
  const times: number[] = [];
  for (let i = 0; i < TOOL_CALLS; i++) {
    const t = performance.now();
    const res = await client.callTool({ name, arguments: args });
    times.push(performance.now() - t);
    assert(res.isError !== true, `${label}: ${JSON.stringify(res.content)}`);
  }
  times.sort((a, b) => a - b);
  toolRows.push([label, fmt(times[Math.floor(times.length / 2)]!), fmt(times[Math.floor(times.length * 0.99)]!), TOOL_CALLS]);
}
const hwm = vmHwmKiB(pid);
await client.close();
console.log(table(['tool call over stdio (client round trip)', 'median', 'p99', 'calls'], toolRows));
console.log(`serve peak RSS (VmHWM): ${(hwm / 1024).toFixed(1)} MiB (${((hwm * 1024) / 1e6).toFixed(0)} MB)`);
if (process.env.BENCH_TEAM_KEEP !== '1') rmSync(dir, { recursive: true, force: true });
