/**
 * Question: how full is a page? For every paged tool of `serve`, at `--max-bytes` 8, 16, 32 and
 * 64 KiB, over short items and long items, the fill ratio of each page that says `has_more: true`
 * when asked for the largest `limit` the tool accepts: the answer's bytes (the JSON-RPC `result`
 * as sent) over the binding limit. Goal (issue 23): ≥ 80% whenever more items remain.
 *
 * The binding limit of an answer is the active limit it comes closest to: `maxResultBytes` for the
 * whole answer, `maxBlockBytes` and `maxTextBytes` for its text block (escaped, as the budget
 * counts it). A page whose text is as large as its structure reaches the block bound when the
 * whole answer is at about half the result bound: that page is full, and its ratio is its text over
 * the block bound. The table shows the ratio to the binding limit, the limit's name, the answer's
 * bytes, and items per page. A page that stopped at `limit` (the tool's maximum) or at the item
 * bound (`maxItems`, 200) is marked `limit`: it holds every item it may, and is not held to the goal.
 *
 * Variants: the real CLI (`node dist/cli.js serve --root DIR --team-db FILE --max-bytes N`) over
 * stdio with the SDK `Client`, one process per budget and fixture set. Fixtures, built at run
 * time: a directory of 600 files (names of 6 bytes, or of about 180), a search over 600 matches in
 * four directories, 120 agent directories for `workspace_scan`, a git repository of 400 commits
 * (subjects of about 20 bytes, or of 200), 300 branches and 300 tags, 150 stashes, 600 untracked
 * files for `git_status`, and a SQLite team store with 300 messages (bodies of a few words, or of
 * the full preview), 300 tasks, 300 search hits of each, 300 inbox messages, 300 labels and a task
 * with 150 comments. The first two pages of each tool are measured.
 *
 * Tools left out: `workspace_read_file` and `message_get` are windows, not pages (the read window
 * is measured by `npm run bench:tokens-read`); `git_merge_status` lists conflicts only during a
 * merge (capped, not paged by cursor).
 *
 * Command: npm run bench:fill
 *
 * Results (x86_64, 2 CPUs, Node v20.20.2, 2026-12-06; the full tables in bench/RESULTS.md, "Page
 * fill"): pages with more to come, not stopped by `limit` or the item bound, under 80% of their
 * binding limit: 182 of 182 before pages were sized by what they weigh (13–80%, and `task_options`
 * cut at 8 KiB), 0 of 151 after (84–100%).
 * Reading: what is left below 100% is the room a page keeps for its longest cursor and note, and
 * the step of one item at small budgets.
 */
import { execFileSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import type { JSONRPCMessage } from '@modelcontextprotocol/sdk/types.js';
import { REPORT_KEY, resolveLimits } from '../src/engine/index.js';
import { openSqliteTeamStore } from '../src/team/index.js';
import { machineLine, table } from './util.js';
import { pagedTools } from '../test/helpers/paged-tools.js';

const root = fileURLToPath(new URL('..', import.meta.url));
const CLI = join(root, 'dist', 'cli.js');
const BUDGETS = [8, 16, 32, 64].map((k) => k * 1024);
/** The item bound (`maxItems`, 200 by default): a page of that many items is full by count. */
const MAX_ITEMS = resolveLimits({}).maxItems;
const VARIANTS = ['short', 'long'] as const;
type Variant = (typeof VARIANTS)[number];

const words = 'alpha beta gamma delta epsilon zeta eta theta iota kappa lambda mu nu xi omicron pi rho sigma tau upsilon'.split(' ');
/** A text of about `bytes` bytes of plain words, varied by `i`. */
function text(i: number, bytes: number): string {
  let s = '';
  for (let k = i; s.length < bytes; k += 7) s += `${words[k % words.length]} `;
  return s.slice(0, bytes).trim();
}
const name = (v: Variant, i: number): string => (v === 'short' ? `f${i}` : `${text(i, 170).replace(/ /g, '-')}-${i}`);

function git(cwd: string, args: string[], input?: string): string {
  return execFileSync('git', ['-c', 'user.name=Ada Lovelace', '-c', 'user.email=ada@example.com', '-c', 'init.defaultBranch=main', ...args], {
    cwd,
    encoding: 'utf8',
    input,
    maxBuffer: 64 * 1024 * 1024,
  });
}

/** The fixture root of one variant: files, directories, a git repository and a team store. */
async function fixture(work: string, v: Variant): Promise<{ ws: string; db: string }> {
  const ws = join(work, v);
  mkdirSync(join(ws, 'list'), { recursive: true });
  for (let i = 0; i < 600; i++) writeFileSync(join(ws, 'list', name(v, i)), '');
  for (let d = 0; d < 4; d++) {
    mkdirSync(join(ws, 'search', `d${d}`), { recursive: true });
    for (let i = 0; i < 150; i++) writeFileSync(join(ws, 'search', `d${d}`, `${name(v, i)}.md`), '');
  }
  for (let i = 0; i < 120; i++) mkdirSync(join(ws, `agent-${name(v, i)}`));
  // 400 commits through fast-import (a commit per process would take minutes).
  git(ws, ['init', '-q']);
  let stream = '';
  for (let i = 0; i < 400; i++) {
    const subject = v === 'short' ? `fix ${text(i, 14)}` : text(i, 200);
    const msg = Buffer.byteLength(subject);
    const content = `${i}\n`;
    stream += `commit refs/heads/main\nmark :${i + 1}\ncommitter Ada Lovelace <ada@example.com> ${1_700_000_000 + i * 60} +0000\ndata ${msg}\n${subject}\n`;
    if (i > 0) stream += `from :${i}\n`;
    stream += `M 644 inline history.txt\ndata ${Buffer.byteLength(content)}\n${content}\n`;
  }
  git(ws, ['fast-import', '--quiet'], stream);
  git(ws, ['reset', '-q', '--hard', 'main']);
  let refs = '';
  for (let i = 0; i < 300; i++) refs += `create refs/heads/b/${name(v, i)} main\ncreate refs/tags/t/${name(v, i)} main\n`;
  git(ws, ['update-ref', '--stdin'], refs);
  // Each stash its own commit (the stash reflog keeps one entry per distinct value).
  for (let i = 0; i < 150; i++) {
    writeFileSync(join(ws, 'history.txt'), `changed ${i}\n`);
    git(ws, ['stash', 'store', '-m', v === 'short' ? `wip ${i}` : text(i, 200), git(ws, ['stash', 'create']).trim()]);
  }
  git(ws, ['checkout', '-q', '--', 'history.txt']);

  const db = join(work, `${v}.db`);
  const store = openSqliteTeamStore(db);
  await store.addFirstOwner('olga');
  const olga = (await store.getMember('olga'))!;
  const bob = await store.addMember(v === 'short' ? 'bob' : `bob-${text(3, 50).replace(/ /g, '-')}`, 'member');
  const body = (i: number): string => (v === 'short' ? `ok ${words[i % words.length]} findme` : `${text(i, 400)} findme`);
  for (let i = 0; i < 300; i++) {
    await store.sendMessage(bob, { channel: 'general', body: body(i), to: ['olga'] });
    await store.createTask(olga, { title: v === 'short' ? `task ${i} findme` : `${text(i, 180)} findme`, body: body(i), labels: [v === 'short' ? `l-${i}` : `${i}-${name(v, i)}`.slice(0, 60)] });
  }
  for (let i = 0; i < 150; i++) await store.addComment(olga, 1, body(i));
  await store.close();
  return { ws, db };
}

type Result = { content?: { type: string; text?: string }[]; structuredContent?: Record<string, unknown>; isError?: boolean; _meta?: Record<string, unknown> };

/** A client that keeps the last JSON-RPC message it received, as it came. */
async function connect(args: string[]): Promise<{ client: Client; last: () => JSONRPCMessage | undefined }> {
  const client = new Client({ name: 'fill', version: '1.0.0' });
  const transport = new StdioClientTransport({ command: process.execPath, args, stderr: 'pipe' });
  await client.connect(transport);
  let last: JSONRPCMessage | undefined;
  const onmessage = transport.onmessage!;
  transport.onmessage = (m) => {
    last = m;
    onmessage(m);
  };
  return { client, last: () => last };
}

/** Every paged tool `serve` offers, with its arguments on the fixtures. */
const PAGED = pagedTools('general');

interface Fill {
  ratio: number;
  binding: string;
  bytes: number;
  items: number;
  atLimit: boolean;
  cut: boolean;
}

/** The answer's use of each bound it is held to, and the closest one. */
function fillOf(result: Record<string, unknown>, maxBytes: number): { ratio: number; binding: string; bytes: number } {
  const limits = resolveLimits({ maxResultBytes: maxBytes });
  const bytes = Buffer.byteLength(JSON.stringify(result));
  const texts = ((result.content as { type: string; text?: string }[] | undefined) ?? []).filter((b) => b.type === 'text').map((b) => Buffer.byteLength(JSON.stringify(b.text ?? '')) - 2);
  const uses: [string, number][] = [
    ['maxResultBytes', bytes / limits.maxResultBytes],
    ['maxBlockBytes', Math.max(0, ...texts) / limits.maxBlockBytes],
    ['maxTextBytes', texts.reduce((a, b) => a + b, 0) / limits.maxTextBytes],
  ];
  uses.sort((a, b) => b[1] - a[1]);
  return { ratio: uses[0]![1], binding: uses[0]![0], bytes };
}

async function measure(ws: string, db: string, maxBytes: number): Promise<Map<string, Fill[]>> {
  const { client, last } = await connect([CLI, 'serve', '--root', ws, '--team-db', db, '--as', 'olga', '--max-bytes', String(maxBytes)]);
  const out = new Map<string, Fill[]>();
  try {
    for (const p of PAGED) {
      const fills: Fill[] = [];
      let cursor: string | undefined;
      for (let page = 0; page < 2; page++) {
        const args = { ...p.args, [p.limitArg ?? 'limit']: p.max, ...(cursor === undefined ? {} : { [p.cursorIn ?? 'cursor']: cursor }) };
        const r = (await client.callTool({ name: p.tool, arguments: args })) as Result;
        if (r.isError === true) throw new Error(`${p.tool}: ${r.content?.[0]?.text?.slice(0, 300)}`);
        const sent = last() as { result?: Record<string, unknown> } | undefined;
        const s = r.structuredContent;
        if (s === undefined) {
          // The budget dropped the structure: the page was cut (a failure of the page budget).
          fills.push({ ...fillOf(sent!.result!, maxBytes), items: 0, atLimit: false, cut: true });
          break;
        }
        if (!Array.isArray(s[p.items])) throw new Error(`${p.tool}: no ${p.items} in ${JSON.stringify(s).slice(0, 300)}`);
        const items = (s[p.items] as unknown[]).length;
        const more = s[p.moreOut ?? 'has_more'] === true;
        const f = fillOf(sent!.result!, maxBytes);
        if (more) fills.push({ ...f, items, atLimit: items >= Math.min(p.max, MAX_ITEMS), cut: r._meta?.[REPORT_KEY] !== undefined });
        cursor = s[p.cursorOut ?? 'next_cursor'] as string | undefined;
        if (!more || cursor === undefined) break;
      }
      out.set(p.tool, fills);
    }
  } finally {
    await client.close();
  }
  return out;
}

const work = mkdtempSync(join(tmpdir(), 'fill-'));
try {
  console.log(`# page fill: answer bytes / binding limit, when more items remain\n${machineLine()}\n`);
  const rowsOut: (string | number)[][] = [];
  let under = 0;
  let total = 0;
  for (const v of VARIANTS) {
    const { ws, db } = await fixture(work, v);
    const byBudget = new Map<number, Map<string, Fill[]>>();
    for (const b of BUDGETS) byBudget.set(b, await measure(ws, db, b));
    for (const p of PAGED) {
      const cells: (string | number)[] = [p.tool, v];
      for (const b of BUDGETS) {
        const fills = byBudget.get(b)!.get(p.tool)!;
        if (fills.length === 0) {
          cells.push('no more');
          continue;
        }
        cells.push(
          fills
            .map((f) => {
              if (!f.atLimit) {
                total++;
                if (f.ratio < 0.8) under++;
              }
              const lim = f.binding === 'maxResultBytes' ? '' : ` ${f.binding.replace(/^max|Bytes$/g, '').toLowerCase()}`;
              return `${Math.round(f.ratio * 100)}%${lim} ${f.items}${f.atLimit ? ' limit' : ''}${f.cut ? ' CUT' : ''}`;
            })
            .join(', '),
        );
      }
      rowsOut.push(cells);
    }
  }
  console.log('Each cell: the first two pages, as ratio to the binding limit (named when not maxResultBytes), then items per page.\n');
  console.log(table(['tool', 'items', ...BUDGETS.map((b) => `${b / 1024} KiB`)], rowsOut));
  console.log(`\nPages with more to come, not stopped by \`limit\`: ${total}; under 80%: ${under}.`);
} finally {
  rmSync(work, { recursive: true, force: true });
}
