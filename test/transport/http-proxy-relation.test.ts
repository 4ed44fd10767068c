/**
 * `proxy --listen` relays a server's messages on the stream of the request they belong to, as a
 * server speaking Streamable HTTP itself would: progress, a log message and a sampling request
 * arrive on the call's own answer stream (no other stream is opened), the client answers the
 * sampling request while the call waits, and two calls in flight each get only their own progress.
 * Checked on the wire (raw HTTP and SSE), behind the proxy in front of a stdio server and in front
 * of an HTTP server (`--upstream-url`). With `--json-response` nothing can ride an answer, and the
 * call still completes.
 */
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ensureBuilt, repoRoot } from '../helpers/cli.js';
import { killAll, removeStateDir, startListening, type Listening } from './http-harness.js';
import { spawn } from 'node:child_process';

const FIXTURE = join(repoRoot, 'test', 'fixtures', 'related-server.mjs');

type Message = { jsonrpc: '2.0'; id?: string | number; method?: string; params?: Record<string, unknown>; result?: Record<string, unknown>; error?: unknown };

/** One MCP session over raw HTTP. */
class Wire {
  session = '';
  constructor(private readonly url: URL) {}

  private headers(): Record<string, string> {
    return {
      'Content-Type': 'application/json',
      Accept: 'application/json, text/event-stream',
      'MCP-Protocol-Version': '2025-06-18',
      ...(this.session === '' ? {} : { 'Mcp-Session-Id': this.session }),
    };
  }

  /** POST one message; for a request, an iterator over the messages of its answer (SSE or JSON). */
  async post(message: Message): Promise<AsyncGenerator<Message>> {
    const res = await fetch(this.url, { method: 'POST', headers: this.headers(), body: JSON.stringify(message) });
    expect(res.status, await peekError(res)).toBeLessThan(300);
    this.session ||= res.headers.get('mcp-session-id') ?? '';
    return messagesOf(res);
  }

  async initialize(): Promise<void> {
    const answer = await this.post({ jsonrpc: '2.0', id: 'init', method: 'initialize', params: { protocolVersion: '2025-06-18', capabilities: { sampling: {} }, clientInfo: { name: 'wire', version: '1' } } });
    for await (const m of answer) if (m.id === 'init') break;
    await this.post({ jsonrpc: '2.0', method: 'notifications/initialized' });
  }
}

async function peekError(res: Response): Promise<string> {
  return res.status < 300 ? '' : await res.clone().text();
}

/** The JSON-RPC messages of an answer: one JSON body, or the `data:` of each SSE event. */
async function* messagesOf(res: Response): AsyncGenerator<Message> {
  const type = res.headers.get('content-type') ?? '';
  if (res.status === 202 || res.body === null) return;
  if (type.includes('application/json')) {
    const body = (await res.json()) as Message | Message[];
    for (const m of Array.isArray(body) ? body : [body]) yield m;
    return;
  }
  const decoder = new TextDecoder();
  let buffer = '';
  for await (const chunk of res.body as unknown as AsyncIterable<Uint8Array>) {
    buffer += decoder.decode(chunk, { stream: true });
    for (let end = buffer.indexOf('\n\n'); end !== -1; end = buffer.indexOf('\n\n')) {
      const event = buffer.slice(0, end);
      buffer = buffer.slice(end + 2);
      const data = event.split('\n').filter((l) => l.startsWith('data:')).map((l) => l.slice(5).trimStart()).join('\n');
      if (data !== '') yield JSON.parse(data) as Message;
    }
  }
}

/** Start the fixture over HTTP; resolves with its URL. */
function startUpstream(): Promise<{ url: string; stop: () => void }> {
  const proc = spawn(process.execPath, [FIXTURE, '--http'], { stdio: ['ignore', 'ignore', 'pipe'] });
  let err = '';
  return new Promise((resolve, reject) => {
    proc.stderr.on('data', (b: Buffer) => {
      err += b.toString();
      const m = /listening on (\S+)/.exec(err);
      if (m) resolve({ url: m[1]!, stop: () => proc.kill() });
    });
    proc.once('exit', (code) => reject(new Error(`the fixture exited with ${code}: ${err}`)));
  });
}

const stops: (() => void)[] = [];
beforeAll(() => ensureBuilt());
afterAll(() => {
  for (const s of stops) s();
  killAll();
  removeStateDir();
});

const MODES: [string, () => Promise<string[]>][] = [
  ['in front of a stdio server', async () => ['--', process.execPath, FIXTURE]],
  [
    'in front of an HTTP server (--upstream-url)',
    async () => {
      const up = await startUpstream();
      stops.push(up.stop);
      return ['--upstream-url', up.url];
    },
  ],
];

describe('proxy --listen: a server message rides the stream of its request', () => {
  for (const [name, upstream] of MODES) {
    describe(name, () => {
      let proxy: Listening;
      beforeAll(async () => {
        proxy = await startListening(['proxy', '--listen', '127.0.0.1:0', ...(await upstream())]);
      });
      afterAll(async () => {
        await proxy?.stop();
      });

      it('progress, a log message and a sampling request arrive on the call stream, and the call completes once the client answers', async () => {
        const wire = new Wire(proxy.url);
        await wire.initialize();
        const stream = await wire.post({ jsonrpc: '2.0', id: 2, method: 'tools/call', params: { name: 'ask', arguments: {}, _meta: { progressToken: 'p1' } } });
        const seen: Message[] = [];
        for await (const m of stream) {
          seen.push(m);
          if (m.method === 'sampling/createMessage') {
            // answered on its own POST while the call's stream stays open
            await wire.post({ jsonrpc: '2.0', id: m.id!, result: { role: 'assistant', content: { type: 'text', text: 'hi' }, model: 'test' } });
          }
          if (m.id === 2) break;
        }
        const kinds = seen.map((m) => m.method ?? `answer ${String(m.id)}`);
        expect(kinds).toEqual(['notifications/progress', 'notifications/message', 'sampling/createMessage', 'notifications/progress', 'answer 2']);
        expect(seen.filter((m) => m.method === 'notifications/progress').map((m) => m.params!.progressToken)).toEqual(['p1', 'p1']);
        expect(JSON.stringify(seen.at(-1)!.result)).toContain('sampled: hi');
      });

      it("a call whose client dropped its stream still reaches the client: its sampling request goes on the session's stream", async () => {
        const wire = new Wire(proxy.url);
        await wire.initialize();
        const session = await fetch(proxy.url, { headers: { Accept: 'text/event-stream', 'Mcp-Session-Id': wire.session, 'MCP-Protocol-Version': '2025-06-18' } });
        expect(session.status).toBe(200);
        const abort = new AbortController();
        const call = fetch(proxy.url, {
          method: 'POST',
          signal: abort.signal,
          headers: { 'Content-Type': 'application/json', Accept: 'application/json, text/event-stream', 'MCP-Protocol-Version': '2025-06-18', 'Mcp-Session-Id': wire.session },
          body: JSON.stringify({ jsonrpc: '2.0', id: 9, method: 'tools/call', params: { name: 'slow_ask', arguments: {} } }),
        });
        // the call's stream is open (its headers came); the client drops it before the server asks
        expect((await call).status).toBe(200);
        abort.abort();
        const first = (async () => {
          for await (const m of messagesOf(session)) if (m.method === 'sampling/createMessage') return m;
          return undefined;
        })();
        const seen = await Promise.race([first, new Promise<undefined>((r) => setTimeout(() => r(undefined), 5000))]);
        expect(seen?.method).toBe('sampling/createMessage');
        await session.body?.cancel().catch(() => undefined);
      });

      it('two calls in flight each get their own progress, on their own stream', async () => {
        const wire = new Wire(proxy.url);
        await wire.initialize();
        const read = async (id: number, token: string): Promise<Message[]> => {
          const got: Message[] = [];
          for await (const m of await wire.post({ jsonrpc: '2.0', id, method: 'tools/call', params: { name: 'count', arguments: { n: 5 }, _meta: { progressToken: token } } })) {
            got.push(m);
            if (m.id === id) break;
          }
          return got;
        };
        const [a, b] = await Promise.all([read(3, 'a'), read(4, 'b')]);
        for (const [got, token, id] of [[a, 'a', 3], [b, 'b', 4]] as const) {
          expect(got.filter((m) => m.method === 'notifications/progress').map((m) => m.params!.progressToken)).toEqual([token, token, token, token, token]);
          expect(got.at(-1)!.id).toBe(id);
        }
      });
    });
  }

  it('with --json-response, a call whose server sends progress still completes', async () => {
    const proxy = await startListening(['proxy', '--listen', '127.0.0.1:0', '--json-response', '--', process.execPath, FIXTURE]);
    try {
      const wire = new Wire(proxy.url);
      await wire.initialize();
      const answer: Message[] = [];
      for await (const m of await wire.post({ jsonrpc: '2.0', id: 5, method: 'tools/call', params: { name: 'count', arguments: { n: 3 }, _meta: { progressToken: 'j' } } })) answer.push(m);
      expect(answer.map((m) => m.id)).toEqual([5]);
      expect(JSON.stringify(answer[0]!.result)).toContain('counted 3');
      expect(proxy.stderr()).not.toMatch(/could not deliver/);
    } finally {
      await proxy.stop();
    }
  });
});
