/**
 * `mcp-budget serve --listen` over real HTTP on loopback: the real CLI, the SDK's
 * StreamableHTTPClientTransport and Client, a directory and a git repository built at test time.
 * Sessions (SSE and JSON answers) and stateless mode call real tools with bounded results; the
 * security defaults answer 413, 403 and 401; idle sessions expire; two replicas sharing a cursor
 * key serve one cursor walk between them.
 */
import { mkdirSync, writeFileSync } from 'node:fs';
import { request } from 'node:http';
import { join } from 'node:path';
import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ensureBuilt } from '../helpers/cli.js';
import { fillEmpty } from '../helpers/fs-tree.js';
import { git, importHistory, tempRepo, type TempRepo } from '../helpers/git-repo.js';
import { connect, INITIALIZE, killAll, POST_HEADERS, removeStateDir, startListening, type Listening } from '../transport/http-harness.js';

const MAX_BYTES = 16 * 1024;
const ENTRIES = 150;
let repo: TempRepo;
const started: Listening[] = [];

beforeAll(() => {
  ensureBuilt();
  repo = tempRepo('http');
  importHistory(repo.dir, 120, (i) => ({ [`f${i % 7}.txt`]: `line ${i}\n` }));
  git(repo.dir, ['checkout', '-q', 'main']);
  mkdirSync(join(repo.dir, 'many'));
  fillEmpty(join(repo.dir, 'many'), ENTRIES);
  writeFileSync(join(repo.dir, 'big.txt'), 'x'.repeat(200_000));
}, 60_000);

afterAll(async () => {
  await Promise.all(started.map((s) => s.stop('SIGKILL')));
  killAll();
  repo?.remove();
  removeStateDir();
});

async function serve(extra: string[] = [], env: Record<string, string> = {}): Promise<Listening> {
  const s = await startListening(['serve', '--root', repo.dir, '--max-bytes', `${MAX_BYTES}`, '--listen', '127.0.0.1:0', ...extra], env);
  started.push(s);
  return s;
}

function structured<T>(result: unknown): T {
  const r = result as { structuredContent?: T; content?: { text?: string }[] };
  return r.structuredContent ?? (JSON.parse(r.content?.[0]?.text ?? 'null') as T);
}

/** list_dir and git_log through `client`: real pages, each result within the budget. */
async function callsAreBounded(client: Client): Promise<void> {
  const list = await client.callTool({ name: 'workspace_list_dir', arguments: { path: 'many', limit: 200 } });
  expect(JSON.stringify(list).length).toBeLessThanOrEqual(MAX_BYTES);
  const page = structured<{ entries: unknown[]; has_more: boolean }>(list);
  expect(page.entries.length).toBeGreaterThan(0);
  const log = await client.callTool({ name: 'git_log', arguments: { limit: 100 } });
  expect(log.isError).not.toBe(true);
  expect(JSON.stringify(log).length).toBeLessThanOrEqual(MAX_BYTES);
  expect(structured<{ commits: unknown[] }>(log).commits.length).toBeGreaterThan(0);
  const read = await client.callTool({ name: 'workspace_read_file', arguments: { path: 'big.txt', max_bytes: 1_000_000 } });
  expect(JSON.stringify(read).length).toBeLessThanOrEqual(MAX_BYTES);
}

describe('serve --listen: modes', () => {
  it('sessions with SSE answers: real tools, bounded results; the URL is on loopback', async () => {
    const s = await serve();
    expect(s.url.hostname).toBe('127.0.0.1');
    expect(s.url.pathname).toBe('/mcp');
    const client = await connect(s.url);
    await callsAreBounded(client);
    await client.close();
  });

  it('sessions with JSON answers (--json-response)', async () => {
    const s = await serve(['--json-response']);
    const res = await fetch(s.url, { method: 'POST', headers: POST_HEADERS, body: JSON.stringify(INITIALIZE) });
    expect(res.headers.get('content-type')).toMatch(/application\/json/);
    await res.arrayBuffer();
    const client = await connect(s.url);
    await callsAreBounded(client);
    await client.close();
  });

  it('stateless (--stateless --json-response): one transport per request, typed results still valid', async () => {
    const s = await serve(['--stateless', '--json-response']);
    const client = await connect(s.url);
    await callsAreBounded(client);
    // A cursor from one request is served by another request's server.
    const first = structured<{ next_cursor?: string }>(await client.callTool({ name: 'workspace_list_dir', arguments: { path: 'many', limit: 10 } }));
    const next = await client.callTool({ name: 'workspace_list_dir', arguments: { path: 'many', limit: 10, cursor: first.next_cursor } });
    expect(next.isError).not.toBe(true);
    const get = await fetch(s.url, { headers: { Accept: 'text/event-stream' } });
    expect(get.status).toBe(405);
    await client.close();
  });
});

describe('serve --listen: security defaults', () => {
  let s: Listening;
  beforeAll(async () => {
    s = await serve();
  });

  it('refuses a 5 MiB body with 413 (declared and streamed) and keeps answering', async () => {
    const big = JSON.stringify({ ...INITIALIZE, params: { ...INITIALIZE.params, pad: 'x'.repeat(5 * 1024 * 1024) } });
    const declared = await fetch(s.url, { method: 'POST', headers: POST_HEADERS, body: big });
    expect(declared.status).toBe(413);
    expect(await declared.json()).toMatchObject({ jsonrpc: '2.0', error: { code: -32600 }, id: null });
    // No Content-Length: counted as it streams.
    const chunk = new TextEncoder().encode('x'.repeat(64 * 1024));
    let sent = 0;
    const body = new ReadableStream<Uint8Array>({
      pull(c) {
        if (sent >= 5 * 1024 * 1024) c.close();
        else {
          sent += chunk.length;
          c.enqueue(chunk);
        }
      },
    });
    const streamed = await fetch(s.url, { method: 'POST', headers: POST_HEADERS, body, duplex: 'half' } as RequestInit);
    expect(streamed.status).toBe(413);
    await streamed.arrayBuffer();
    expect(s.stderr()).toMatch(/refused a request body of \d+\+ bytes/);
    const client = await connect(s.url);
    await callsAreBounded(client);
    await client.close();
  });

  it('refuses a foreign Origin and a rebinding Host with 403', async () => {
    const foreign = await fetch(s.url, { method: 'POST', headers: { ...POST_HEADERS, Origin: 'https://evil.example' }, body: JSON.stringify(INITIALIZE) });
    expect(foreign.status).toBe(403);
    expect(await foreign.json()).toMatchObject({ error: { message: expect.stringMatching(/Origin/) } });
    const own = await fetch(s.url, { method: 'POST', headers: { ...POST_HEADERS, Origin: `http://localhost:${s.url.port}` }, body: JSON.stringify(INITIALIZE) });
    expect(own.status).toBe(200);
    await own.arrayBuffer();
    const otherPort = await fetch(s.url, { method: 'POST', headers: { ...POST_HEADERS, Origin: 'http://localhost:1' }, body: JSON.stringify(INITIALIZE) });
    expect(otherPort.status).toBe(403);
    expect(await rawStatus(s.url, `rebind.evil.example:${s.url.port}`)).toBe(403);
    expect(await rawStatus(s.url, `localhost:${s.url.port}`)).toBe(200);
  });
});

/** POST an initialize with a chosen Host header (fetch does not let a caller set it). */
function rawStatus(url: URL, host: string): Promise<number> {
  return new Promise((resolve, reject) => {
    const body = JSON.stringify(INITIALIZE);
    const req = request(url, { method: 'POST', headers: { ...POST_HEADERS, Host: host, 'Content-Length': Buffer.byteLength(body) } }, (res) => {
      res.resume();
      resolve(res.statusCode ?? 0);
    });
    req.on('error', reject);
    req.end(body);
  });
}

describe('serve --listen: sessions', () => {
  it('an idle session expires and its id is no longer served', async () => {
    const s = await serve(['--session-idle-ms', '300']);
    const client = await connect(s.url);
    await client.callTool({ name: 'workspace_list_dir', arguments: {} });
    await new Promise((r) => setTimeout(r, 1200));
    expect(s.stderr()).toMatch(/session \S+ expired after 300 ms idle/);
    await expect(client.callTool({ name: 'workspace_list_dir', arguments: {} })).rejects.toThrow(/404|Session not found/);
    await client.close().catch(() => undefined);
  });

  it('caps the number of open sessions (503 over --max-sessions)', async () => {
    const s = await serve(['--max-sessions', '1']);
    const a = await connect(s.url);
    const res = await fetch(s.url, { method: 'POST', headers: POST_HEADERS, body: JSON.stringify(INITIALIZE) });
    expect(res.status).toBe(503);
    await res.arrayBuffer();
    await a.close();
  });
});

describe('serve --listen: replicas', () => {
  it('a list_dir cursor walk alternating two replicas with one key returns every entry once', async () => {
    const env = { MCP_BUDGET_CURSOR_KEY: 'replica-shared-key-0123456789abcdef' };
    const [r1, r2] = await Promise.all([serve([], env), serve([], env)]);
    const clients = [await connect(r1!.url), await connect(r2!.url)];
    const seen: string[] = [];
    let cursor: string | undefined;
    let pages = 0;
    do {
      const client = clients[pages % 2]!;
      const page = structured<{ entries: { name: string }[]; next_cursor?: string }>(
        await client.callTool({ name: 'workspace_list_dir', arguments: { path: 'many', limit: 7, ...(cursor ? { cursor } : {}) } }),
      );
      seen.push(...page.entries.map((e) => e.name));
      cursor = page.next_cursor;
      pages++;
    } while (cursor !== undefined && pages < 100);
    expect(pages).toBe(Math.ceil(ENTRIES / 7));
    expect(new Set(seen).size).toBe(ENTRIES);
    expect(seen).toHaveLength(ENTRIES);
    // Without the shared key, the other replica refuses the cursor.
    const lone = await serve();
    const c3 = await connect(lone.url);
    const start = structured<{ next_cursor?: string }>(await clients[0]!.callTool({ name: 'workspace_list_dir', arguments: { path: 'many', limit: 7 } }));
    const refused = await c3.callTool({ name: 'workspace_list_dir', arguments: { path: 'many', limit: 7, cursor: start.next_cursor } });
    expect(refused.isError).toBe(true);
    for (const c of [...clients, c3]) await c.close();
  });
});
