/**
 * The HTTP front's per-process bounds and session ownership, on the real CLI over loopback, for
 * `serve --listen` and `proxy --listen`:
 * - a session answers only the principal (bearer token) that opened it: another valid token with a
 *   known session id gets 404 on POST, GET and DELETE, and the owner's session still works;
 * - the session cap is taken before the first await: 400 concurrent initializes with
 *   `--max-sessions 2` open exactly 2 sessions, every other answer is 503 with `Retry-After`;
 * - request bodies held at once are bounded process-wide (`--max-inflight-body-bytes`): slow
 *   bodies past the budget are answered 503 before they are read, and the budget comes back when
 *   they end.
 */
import { chmodSync, mkdirSync, mkdtempSync, readdirSync, readlinkSync, rmSync, writeFileSync } from 'node:fs';
import { request } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ensureBuilt, repoRoot } from '../helpers/cli.js';
import { INITIALIZE, POST_HEADERS, killAll, removeStateDir, startListening, type Listening } from './http-harness.js';

const ALICE = 'alice-token-0123456789abcdef';
const BOB = 'bob-token-0123456789abcdefgh';
const UPSTREAM = join(repoRoot, 'test', 'fixtures', 'upstream-server.mjs');
let dir: string;
let tokenFile: string;

beforeAll(() => {
  ensureBuilt();
  dir = mkdtempSync(join(tmpdir(), 'mcp-budget-http-sessions-'));
  mkdirSync(join(dir, 'root'));
  tokenFile = join(dir, 'tokens');
  writeFileSync(tokenFile, `${ALICE} alice\n${BOB} bob\n`);
  chmodSync(tokenFile, 0o600);
});

afterAll(() => {
  killAll();
  rmSync(dir, { recursive: true, force: true });
  removeStateDir();
});

const LISTENERS: Record<string, (extra: string[]) => string[]> = {
  'serve --listen': (extra) => ['serve', '--root', join(dir, 'root'), '--listen', '127.0.0.1:0', ...extra],
  'proxy --listen': (extra) => ['proxy', '--listen', '127.0.0.1:0', ...extra, '--', process.execPath, UPSTREAM],
};

const auth = (token: string | undefined): Record<string, string> => (token === undefined ? {} : { Authorization: `Bearer ${token}` });

async function post(url: URL, token: string | undefined, body: unknown, sid?: string): Promise<Response> {
  return fetch(url, {
    method: 'POST',
    headers: { ...POST_HEADERS, ...auth(token), ...(sid === undefined ? {} : { 'Mcp-Session-Id': sid, 'Mcp-Protocol-Version': '2025-06-18' }) },
    body: JSON.stringify(body),
  });
}

/** Open a session as `token`: initialize and the initialized notification; resolves with its id. */
async function open(url: URL, token: string | undefined): Promise<string> {
  const init = await post(url, token, INITIALIZE);
  expect(init.status).toBe(200);
  const sid = init.headers.get('mcp-session-id')!;
  await init.arrayBuffer();
  const note = await post(url, token, { jsonrpc: '2.0', method: 'notifications/initialized' }, sid);
  expect(note.status).toBe(202);
  await note.arrayBuffer();
  return sid;
}

const LIST = { jsonrpc: '2.0', id: 2, method: 'tools/list' };

describe.each(Object.keys(LISTENERS))('%s', (name) => {
  it('a session answers only its own principal: another token gets 404 on POST, GET and DELETE', async () => {
    const s = await startListening(LISTENERS[name]!(['--token-file', tokenFile]));
    try {
      const sid = await open(s.url, ALICE);
      const stolen = await post(s.url, BOB, LIST, sid);
      expect(stolen.status).toBe(404);
      await stolen.arrayBuffer();
      for (const method of ['GET', 'DELETE']) {
        const r = await fetch(s.url, { method, headers: { Accept: 'text/event-stream', ...auth(BOB), 'Mcp-Session-Id': sid, 'Mcp-Protocol-Version': '2025-06-18' } });
        expect(r.status, method).toBe(404);
        await r.arrayBuffer();
      }
      const own = await post(s.url, ALICE, LIST, sid);
      expect(own.status).toBe(200);
      expect(await own.text()).toContain('"tools"');
      const del = await fetch(s.url, { method: 'DELETE', headers: { ...auth(ALICE), 'Mcp-Session-Id': sid, 'Mcp-Protocol-Version': '2025-06-18' } });
      expect(del.status).toBe(200);
    } finally {
      await s.stop();
    }
  });

  it('400 concurrent initializes with --max-sessions 2: exactly 2 sessions, the rest 503 with Retry-After; descriptors flat', async () => {
    const s = await startListening(LISTENERS[name]!(['--max-sessions', '2']));
    try {
      const fds = (): number => readdirSync(`/proc/${s.proc.pid}/fd`).length;
      const before = fds();
      const answers = await Promise.all(
        Array.from({ length: 400 }, () => oneShot(s.url, JSON.stringify(INITIALIZE))),
      );
      await new Promise((r) => setTimeout(r, 300));
      const ok = answers.filter((a) => a.status === 200).length;
      expect(ok).toBe(2);
      expect(answers.filter((a) => a.status === 503 && a.retry !== null)).toHaveLength(398);
      // Two sessions' worth of descriptors at most (a proxy session is a child process with pipes).
      expect(fds() - before).toBeLessThan(name.startsWith('proxy') ? 20 : 10);
    } finally {
      await s.stop();
    }
  });
});

describe('serve --listen --stateless', () => {
  it('300 concurrent tool calls with --max-sessions 2: each request holds a place while it runs, the rest 503 with Retry-After; descriptors bounded, places returned', async () => {
    const s = await startListening(LISTENERS['serve --listen']!(['--stateless', '--max-sessions', '2']));
    try {
      // Descriptors other than the connections' own sockets: the servers, stores and files opened for requests.
      const fds = (): number => {
        let n = 0;
        for (const fd of readdirSync(`/proc/${s.proc.pid}/fd`)) {
          try {
            if (!readlinkSync(`/proc/${s.proc.pid}/fd/${fd}`).startsWith('socket:')) n++;
          } catch {
            // closed meanwhile
          }
        }
        return n;
      };
      const call = JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/call', params: { name: 'workspace_list_dir', arguments: {} } });
      expect((await oneShot(s.url, call)).status).toBe(200); // the first server is built; its store opened
      const before = fds();
      let peak = before;
      const sampler = setInterval(() => (peak = Math.max(peak, fds())), 2);
      const answers = await Promise.all(Array.from({ length: 300 }, () => oneShot(s.url, call)));
      clearInterval(sampler);
      expect(answers.every((a) => a.status === 200 || (a.status === 503 && a.retry === '1')), JSON.stringify(answers.filter((a) => a.status !== 200 && a.status !== 503))).toBe(true);
      expect(answers.some((a) => a.status === 503)).toBe(true);
      // Before, each concurrent request built its own server: one client reached ~2,000 descriptors.
      expect(peak - before).toBeLessThan(20);
      await new Promise((r) => setTimeout(r, 300));
      expect((await oneShot(s.url, call)).status).toBe(200); // every place came back
    } finally {
      await s.stop();
    }
  });
});

/** One POST on its own connection, closed after the answer. */
function oneShot(url: URL, body: string): Promise<{ status: number; retry: string | null }> {
  return new Promise((resolve, reject) => {
    const req = request(url, { method: 'POST', agent: false, headers: { ...POST_HEADERS, Connection: 'close', 'Content-Length': Buffer.byteLength(body) } }, (res) => {
      res.resume();
      res.on('end', () => resolve({ status: res.statusCode ?? 0, retry: (res.headers['retry-after'] as string | undefined) ?? null }));
    });
    req.on('error', reject);
    req.end(body);
  });
}

/** A POST that declares `length` bytes and sends only a few: held open until `end()`. */
function slowBody(url: URL, length: number): { status: Promise<{ status: number; retry: string | undefined }>; end: () => void } {
  const req = request(url, { method: 'POST', headers: { ...POST_HEADERS, 'Content-Length': String(length) } });
  req.write('{"jsonrpc":');
  const status = new Promise<{ status: number; retry: string | undefined }>((resolve) => {
    req.on('response', (res) => {
      res.resume();
      resolve({ status: res.statusCode ?? 0, retry: res.headers['retry-after'] as string | undefined });
    });
    req.on('error', () => resolve({ status: -1, retry: undefined }));
  });
  return { status, end: () => req.destroy() };
}

describe('the process-wide in-flight body budget', () => {
  it('slow bodies past --max-inflight-body-bytes get 503 with Retry-After before they are read; the budget comes back when they end', async () => {
    const s = await startListening(LISTENERS['serve --listen']!(['--max-request-bytes', '1MiB', '--max-inflight-body-bytes', '4MiB']));
    try {
      const held = Array.from({ length: 4 }, () => slowBody(s.url, 1_000_000));
      await new Promise((r) => setTimeout(r, 300));
      const t0 = Date.now();
      const over = Array.from({ length: 3 }, () => slowBody(s.url, 1_000_000));
      const refused = await Promise.all(over.map((o) => o.status));
      expect(refused.every((r) => r.status === 503 && r.retry === '1'), JSON.stringify(refused)).toBe(true);
      // answered within the drain time, not after the body (which never comes)
      expect(Date.now() - t0).toBeLessThan(5000);
      // a small body still fits beside the held ones
      const small = await post(s.url, undefined, INITIALIZE);
      expect(small.status).toBe(200);
      await small.arrayBuffer();
      for (const h of [...held, ...over]) h.end();
      await new Promise((r) => setTimeout(r, 300));
      const again = Array.from({ length: 4 }, () => slowBody(s.url, 1_000_000));
      await new Promise((r) => setTimeout(r, 300));
      const next = slowBody(s.url, 1_000_000);
      expect((await next.status).status).toBe(503);
      for (const h of [...again, next]) h.end();
      expect(s.stderr()).toMatch(/--max-inflight-body-bytes/);
    } finally {
      await s.stop();
    }
  });
});
