/**
 * Every paged tool of `serve` fills its page: whenever a page says more items remain and it did
 * not stop at its `limit` or the item bound, its answer (the JSON-RPC result as sent) uses at least
 * 80% of the limit that binds it (the result's bytes, or the text block's escaped bytes), at 8, 16
 * and 32 KiB, over long items and heavily escaped ones (quotes, backslashes, control characters,
 * emoji); below 80% only when one more item like the page's heaviest would not fit beside the
 * room kept for the page's longest cursor and warning (at 8 KiB an escaped task or file name is a
 * fifth to a third of the budget, that room up to a tenth). No page is ever cut by the budget (no report), and the first pages of a walk see each
 * item once. A read of plain text gets the documented default window whole, its content in pieces
 * within the string bound, shown joined in the text block, and its answer fills 80% of the
 * budget. Through `exec`, every paged tool's first page fits the envelope (never withheld or cut).
 * The figures for every budget and item size: `npm run bench:fill`.
 */
import { execFileSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { InMemoryTransport } from '@modelcontextprotocol/sdk/inMemory.js';
import type { JSONRPCMessage } from '@modelcontextprotocol/sdk/types.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { REPORT_KEY, resolveLimits } from '../../src/engine/index.js';
import { createWorkspaceServer } from '../../src/server/create-server.js';
import { openSqliteTeamStore } from '../../src/team/index.js';
import { pagedTools } from '../helpers/paged-tools.js';

type Result = { isError?: boolean; structuredContent?: Record<string, unknown>; content?: { type: string; text?: string }[]; _meta?: Record<string, unknown> };

const work = mkdtempSync(join(tmpdir(), 'page-fill-'));
const root = join(work, 'ws');
const db = join(work, 'team.db');
const N = 120;

/** Long plain words, or heavy escaping, in turn. */
function text(i: number, bytes: number): string {
  const s = i % 2 === 0 ? `${'lorem ipsum dolor sit amet '.repeat(Math.ceil(bytes / 27))}` : `"q" \\b\\ \u0001\u001f\t😀 `.repeat(Math.ceil(bytes / 16));
  return `${i} ${s}`.slice(0, bytes);
}
/** A file or ref name: long, and for odd `i` made of characters JSON escapes (no `/`, no NUL). */
const name = (i: number): string => (i % 2 === 0 ? `${'long-name-'.repeat(17)}${i}` : `${'"q\\\u0001\u001f'.repeat(30)}${i}`);
const refName = (i: number): string => `${'ref-name-long-'.repeat(12)}${i}`;

function git(args: string[], input?: string): string {
  return execFileSync('git', ['-c', 'user.name=Ada Lovelace', '-c', 'user.email=ada@example.com', '-c', 'init.defaultBranch=main', ...args], { cwd: root, encoding: 'utf8', input });
}

beforeAll(async () => {
  mkdirSync(join(root, 'list'), { recursive: true });
  mkdirSync(join(root, 'search', 'a'), { recursive: true });
  for (let i = 0; i < N; i++) {
    writeFileSync(join(root, 'list', name(i)), '');
    writeFileSync(join(root, 'search', 'a', `${name(i)}.md`), '');
  }
  for (let i = 0; i < 60; i++) mkdirSync(join(root, `agent-${name(i)}`));
  git(['init', '-q']);
  let stream = '';
  for (let i = 0; i < N; i++) {
    const subject = text(i, 200).replace(/\n/g, ' ');
    stream += `commit refs/heads/main\nmark :${i + 1}\ncommitter Ada Lovelace <ada@example.com> ${1_700_000_000 + i * 60} +0000\ndata ${Buffer.byteLength(subject)}\n${subject}\n`;
    if (i > 0) stream += `from :${i}\n`;
    stream += `M 644 inline h.txt\ndata ${String(i).length + 1}\n${i}\n\n`;
  }
  git(['fast-import', '--quiet'], stream);
  git(['reset', '-q', '--hard', 'main']);
  git(['update-ref', '--stdin'], Array.from({ length: N }, (_, i) => `create refs/heads/${refName(i)} main\ncreate refs/tags/${refName(i)} main\n`).join(''));
  for (let i = 0; i < 30; i++) {
    writeFileSync(join(root, 'h.txt'), `changed ${i}\n`);
    git(['stash', 'store', '-m', text(i, 200).replace(/\n/g, ' '), git(['stash', 'create']).trim()]);
  }
  git(['checkout', '-q', '--', 'h.txt']);

  const store = openSqliteTeamStore(db);
  await store.addFirstOwner('olga');
  const olga = (await store.getMember('olga'))!;
  for (let i = 0; i < N; i++) {
    await store.sendMessage(olga, { channel: 'c', body: `${text(i, 300)} findme`, to: ['olga'] });
    await store.createTask(olga, { title: `${text(i, 150)} findme`, body: text(i, 300), labels: [`${i}-${'label-long-'.repeat(6)}`.slice(0, 60)] });
  }
  for (let i = 0; i < 60; i++) await store.addComment(olga, 1, text(i, 300));
  await store.close();
}, 60_000);

afterAll(() => rmSync(work, { recursive: true, force: true }));

const PAGED = pagedTools('c');

/** The answer's use of the limit that binds it: the result's bytes, or its text block's escaped bytes. */
function fillOf(result: Record<string, unknown>, maxBytes: number): number {
  const limits = resolveLimits({ maxResultBytes: maxBytes });
  const texts = ((result.content as { text?: string }[] | undefined) ?? []).map((b) => Buffer.byteLength(JSON.stringify(b.text ?? '')) - 2);
  return Math.max(Buffer.byteLength(JSON.stringify(result)) / limits.maxResultBytes, Math.max(0, ...texts) / Math.min(limits.maxBlockBytes, limits.maxTextBytes));
}

/** What an item costs an answer at most: its JSON in the structure, and that JSON escaped in the text. */
function weightOf(item: unknown): number {
  const json = JSON.stringify(item);
  return Buffer.byteLength(json) + Buffer.byteLength(JSON.stringify(json)) - 2;
}

describe.each([8192, 16384, 32768])('at a %i-byte budget', (maxBytes) => {
  let client: Client;
  let last: JSONRPCMessage | undefined;
  let close: () => Promise<void>;

  beforeAll(async () => {
    const ws = await createWorkspaceServer(root, { maxResultBytes: maxBytes }, { dbPath: db, as: 'olga' });
    const [a, b] = InMemoryTransport.createLinkedPair();
    client = new Client({ name: 'page-fill', version: '1.0.0' });
    await Promise.all([ws.connect(b), client.connect(a)]);
    // The answer as it came over the wire, before the client reads it.
    const onmessage = a.onmessage!;
    a.onmessage = (m) => {
      last = m;
      onmessage(m);
    };
    close = async () => {
      await client.close();
      await ws.close();
    };
  });
  afterAll(async () => close?.());

  it('every paged tool fills its page to 80% of the binding limit while more remain, and is never cut', async () => {
    const deadline = Date.now() + 8000;
    for (const p of PAGED) {
      let cursor: string | undefined;
      const seen = new Set<string>();
      for (let page = 0; page < 2 && Date.now() < deadline; page++) {
        const args = { ...p.args, [p.limitArg ?? 'limit']: p.max, ...(cursor === undefined ? {} : { [p.cursorIn ?? 'cursor']: cursor }) };
        const r = (await client.callTool({ name: p.tool, arguments: args })) as Result;
        const what = `${p.tool} page ${page} at ${maxBytes}`;
        expect(r.isError, `${what}: ${r.content?.[0]?.text}`).not.toBe(true);
        expect(r._meta?.[REPORT_KEY], `${what} was cut`).toBeUndefined();
        const sent = (last as { result: Record<string, unknown> }).result;
        expect(Buffer.byteLength(JSON.stringify(sent))).toBeLessThanOrEqual(maxBytes);
        const items = r.structuredContent![p.items] as unknown[];
        for (const item of items) {
          const key = JSON.stringify(item);
          expect(seen.has(key), `${what} repeats an item`).toBe(false);
          seen.add(key);
        }
        const more = r.structuredContent![p.moreOut ?? 'has_more'] === true;
        if (more && items.length < Math.min(p.max, 200)) {
          // Under 80% only when one more item like the page's heaviest would not have fitted (an
          // escaped task is a third of 8 KiB: the page then steps by a third), less the room the
          // page keeps for the longest cursor and warning it may carry (up to a tenth at 8 KiB).
          const fill = fillOf(sent, maxBytes);
          const heaviest = Math.max(...items.map((x) => weightOf(x))) / maxBytes;
          expect(fill >= 0.8 || fill + heaviest >= 0.9, `${what}: ${items.length} items fill ${fill.toFixed(2)}, heaviest item ${heaviest.toFixed(2)}`).toBe(true);
        }
        cursor = r.structuredContent![p.cursorOut ?? 'next_cursor'] as string | undefined;
        if (!more || cursor === undefined) break;
      }
    }
  }, 20_000);

  it("through exec, every paged tool's first page is sized to the envelope: never withheld, never cut", async () => {
    for (const p of PAGED) {
      const input = { ...p.args, [p.limitArg ?? 'limit']: p.max };
      const r = (await client.callTool({ name: 'exec', arguments: { action: p.tool.replace('_', '.'), input } })) as Result;
      expect(r.isError, `${p.tool} through exec at ${maxBytes}: ${r.content?.[0]?.text?.slice(0, 200)}`).not.toBe(true);
      expect(r._meta?.[REPORT_KEY], `${p.tool} through exec at ${maxBytes} was cut`).toBeUndefined();
      expect(((r.structuredContent!.result as Record<string, unknown>)[p.items] as unknown[]).length).toBeGreaterThan(0);
    }
  });

  it('a read of plain text gets the documented default window whole, in pieces within the string bound, shown joined', async () => {
    const desc = (await client.listTools()).tools.find((t) => t.name === 'workspace_read_file')!.description!;
    const def = Number(/default (\d+) bytes/.exec(desc)![1]);
    const limits = resolveLimits({ maxResultBytes: maxBytes });
    // Lines of 40 bytes: the plain text the default is documented for.
    writeFileSync(join(root, `plain-${maxBytes}.txt`), 'const value = compute(alpha, beta); //\n'.repeat(Math.ceil((2 * def) / 40)));
    const r = (await client.callTool({ name: 'workspace_read_file', arguments: { path: `plain-${maxBytes}.txt` } })) as Result;
    expect(r._meta?.[REPORT_KEY]).toBeUndefined();
    const w = r.structuredContent as { bytes: number; content: string[] };
    expect(w.bytes).toBe(def);
    expect(fillOf((last as { result: Record<string, unknown> }).result, maxBytes)).toBeGreaterThanOrEqual(0.8);
    expect(Buffer.byteLength(w.content.join(''))).toBe(def);
    for (const piece of w.content) expect(Buffer.byteLength(JSON.stringify(piece)) - 2).toBeLessThanOrEqual(limits.maxStringBytes);
    expect(r.content![0]!.text).toContain(`content: |\n ${w.content.join('').split('\n')[0]}`);
  });
});
