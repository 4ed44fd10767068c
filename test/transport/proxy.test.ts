/**
 * `mcp-budget proxy` end to end: the built CLI spawns test/fixtures/upstream-server.mjs, and the
 * SDK `Client` (over `StdioClientTransport`) or a hand-rolled stdio peer talks to it.
 */
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import {
  CreateMessageRequestSchema,
  ErrorCode,
  ListRootsRequestSchema,
  LoggingMessageNotificationSchema,
  McpError,
  type CallToolResult,
} from '@modelcontextprotocol/sdk/types.js';
import { afterAll, beforeAll, describe, expect, it as base } from 'vitest';
import { boundJson } from '../../src/engine/bound.js';
import { resolveLimits } from '../../src/engine/options.js';
import type { ContinuationOffer } from '../../src/engine/report.js';
import { limitsWithOfferRoom } from '../../src/transport/core/continuation.js';
import { planReads, withoutBudgetParts } from '../../src/transport/core/continuation-plan.js';

type Json = Record<string, unknown>;
import { NOTICE_KEY, REPORT_KEY } from '../../src/engine/limits.js';
import { BUDGET_KINDS, type BudgetReport } from '../../src/engine/report.js';
import { CLI, isAlive, killAllPeers, REPO_ROOT, StdioPeer, UPSTREAM, waitGone } from '../helpers/stdio-peer.js';

const KiB = 1024;
const DEFAULT_MAX = 64 * KiB;

// ------------------------------------------------------------------ helpers

interface SdkProxy {
  client: Client;
  transport: StdioClientTransport;
  stderr: () => string;
  /** The proxy's pid. */
  pid: number;
}

let scratch: string;

beforeAll(() => {
  scratch = mkdtempSync(join(tmpdir(), 'mcp-budget-proxy-'));
});
afterAll(async () => {
  await killAllPeers();
  rmSync(scratch, { recursive: true, force: true });
});

/** Processes a test starts, stopped when that test ends (safe for concurrent tests). */
interface Procs {
  proxy: typeof StdioPeer.proxy;
  peer: (command: string, args: string[], env?: NodeJS.ProcessEnv) => StdioPeer;
  sdk: typeof sdkProxy;
}

const it = base.extend<{ procs: Procs }>({
  // eslint-disable-next-line no-empty-pattern
  procs: async ({}, use) => {
    const peers: StdioPeer[] = [];
    const sdks: Client[] = [];
    await use({
      proxy: (...a) => {
        const p = StdioPeer.proxy(...a);
        peers.push(p);
        return p;
      },
      peer: (command, args, env) => {
        const p = new StdioPeer(command, args, env);
        peers.push(p);
        return p;
      },
      sdk: async (...a) => {
        const s = await sdkProxy(...a);
        sdks.push(s.client);
        return s;
      },
    });
    await Promise.all(sdks.map((c) => c.close().catch(() => undefined)));
    await Promise.all(peers.map((p) => p.kill()));
  },
});

let pidFiles = 0;
/** An environment that makes the upstream write its pid, and a reader for it. */
function pidEnv(): { env: Record<string, string>; pid: () => Promise<number> } {
  const file = join(scratch, `upstream-${++pidFiles}.pid`);
  return {
    env: { UPSTREAM_PID_FILE: file },
    pid: async () => {
      // The file may exist before its content is written: wait for a whole pid.
      for (let i = 0; i < 800; i++) {
        const text = existsSync(file) ? readFileSync(file, 'utf8') : '';
        if (/^[1-9]\d*$/.test(text)) return Number(text);
        await new Promise((r) => setTimeout(r, 25));
      }
      throw new Error(`no pid in ${file}`);
    },
  };
}

async function sdkProxy(flags: string[] = [], env: Record<string, string> = {}, client?: Client): Promise<SdkProxy> {
  const transport = new StdioClientTransport({
    command: process.execPath,
    args: [CLI, 'proxy', ...flags, '--', process.execPath, UPSTREAM],
    env,
    cwd: REPO_ROOT,
    stderr: 'pipe',
  });
  let stderr = '';
  transport.stderr!.on('data', (d: Buffer) => (stderr += d.toString('utf8')));
  const c = client ?? new Client({ name: 'proxy-test', version: '1.0.0' });
  await c.connect(transport);
  return { client: c, transport, stderr: () => stderr, pid: transport.pid! };
}

function reportOf(r: { _meta?: Record<string, unknown> }): BudgetReport & Record<string, unknown> {
  const report = r._meta?.[REPORT_KEY] as (BudgetReport & Record<string, unknown>) | undefined;
  expect(report, 'a budget report in _meta').toBeDefined();
  return report!;
}

type Block = { type: string; text?: string; data?: string; mimeType?: string; _meta?: Record<string, unknown>; resource?: { text?: string } };

/** A truncated result: within the byte bound, a well-formed report, and the notice block last. */
function expectBounded(r: CallToolResult, maxBytes = DEFAULT_MAX, notice = true): BudgetReport & Record<string, unknown> {
  expect(Buffer.byteLength(JSON.stringify(r))).toBeLessThanOrEqual(maxBytes);
  const report = reportOf(r);
  expect(report.truncated).toBe(true);
  expect(BUDGET_KINDS).toContain(report.budget_kind);
  expect(report.omitted_count).toBeGreaterThan(0);
  expect(report.omitted_paths.length).toBeGreaterThan(0);
  for (const p of report.omitted_paths) expect(p).toMatch(/^\//);
  expect(typeof report.omitted_paths_capped).toBe('boolean');
  const last = (r.content as Block[]).at(-1)!;
  if (notice) {
    expect(last._meta?.[NOTICE_KEY]).toBe(true);
    expect(last.text).toMatch(/^\[mcp-result-budget\] This result was truncated/);
  } else {
    for (const b of r.content as Block[]) expect(b._meta?.[NOTICE_KEY]).toBeUndefined();
  }
  return report;
}

/** Escaped size of a string as written on the wire, without quotes. */
const wireBytes = (s: string): number => Buffer.byteLength(JSON.stringify(s)) - 2;

async function until(ok: () => boolean, timeoutMs = 5000): Promise<void> {
  const start = Date.now();
  while (!ok()) {
    if (Date.now() - start > timeoutMs) throw new Error(`condition not met within ${timeoutMs} ms`);
    await new Promise((r) => setTimeout(r, 20));
  }
}

async function rejection(p: Promise<unknown>): Promise<McpError> {
  try {
    await p;
  } catch (e) {
    return e as McpError;
  }
  throw new Error('expected the call to fail');
}

// What the fixture writes (kept in step with test/fixtures/upstream-server.mjs).
const HUGE_TEXT_UNIT = 'the quick brown fox jumps over the lazy dog "quoted" \\ end\n';
const HUGE_ARRAY_ITEM = { id: 12345, name: 'file-12345.txt', tags: ['a', 'b'], size: 1024 };
const TINY_IMAGE = { type: 'image', data: 'iVBORw0KGgo=', mimeType: 'image/png' };
function mixedResult(): Record<string, unknown> {
  return {
    content: [
      { type: 'text', text: 'x'.repeat(2 << 20) },
      { type: 'image', data: 'A'.repeat(3 << 20), mimeType: 'image/png' },
      TINY_IMAGE,
      { type: 'resource', resource: { uri: 'file:///a.txt', mimeType: 'text/plain', text: 'y'.repeat(1 << 20) } },
    ],
  };
}

// ------------------------------------------------------------------ SDK client, one session

describe('proxy: SDK client through one proxy session (default budget)', () => {
  let s: SdkProxy;
  const logs: unknown[] = [];
  let rootsAsked = 0;

  beforeAll(async () => {
    const client = new Client({ name: 'proxy-test', version: '1.0.0' }, { capabilities: { roots: { listChanged: true } } });
    client.setNotificationHandler(LoggingMessageNotificationSchema, (n) => void logs.push(n.params));
    client.setRequestHandler(ListRootsRequestSchema, async () => {
      rootsAsked++;
      return { roots: [{ uri: 'file:///workspace', name: 'workspace' }] };
    });
    s = await sdkProxy([], {}, client);
    const { tools } = await s.client.listTools();
    expect(tools.map((t) => t.name)).toContain('typed_list');
  });
  afterAll(() => s.client.close());

  it('proxy: a small result passes through unchanged', async () => {
    const r = await s.client.callTool({ name: 'small', arguments: {} });
    expect(r).toEqual({ content: [{ type: 'text', text: 'hello' }] });
  });

  it('proxy: a 300 MB text result (id last) comes back bounded, reported and with a notice', async () => {
    const r = (await s.client.callTool({ name: 'huge_text', arguments: { mb: 300 } })) as CallToolResult;
    const report = expectBounded(r);
    expect(report.budget_kind).toBe('text_block_bytes');
    expect(report.omitted_paths[0]).toBe('/content/0/text');
    const content = r.content as Block[];
    expect(content).toHaveLength(2);
    const text = content[0]!.text!;
    expect(wireBytes(text)).toBeLessThanOrEqual(32 * KiB);
    expect(wireBytes(text)).toBeGreaterThan(30 * KiB);
    expect(HUGE_TEXT_UNIT.repeat(Math.ceil(40_000 / HUGE_TEXT_UNIT.length)).startsWith(text)).toBe(true);
  });

  it('proxy: a 300 MB structured result (id last) comes back bounded to maxItems', async () => {
    const r = (await s.client.callTool({ name: 'huge_array', arguments: { mb: 300 } })) as CallToolResult;
    const report = expectBounded(r);
    expect(report.budget_kind).toBe('array_items');
    expect(report.omitted_paths[0]).toBe('/structuredContent/items/200');
    expect(report.omitted_paths_capped).toBe(true);
    expect((r.content as Block[])[0]).toEqual({ type: 'text', text: 'listing' });
    const items = (r.structuredContent as { items: unknown[] }).items;
    expect(items).toHaveLength(200);
    expect(items.every((i) => JSON.stringify(i) === JSON.stringify(HUGE_ARRAY_ITEM))).toBe(true);
  });

  it.skipIf(!existsSync('/proc/self/status'))('proxy: memory stays flat after 600 MB of results (peak RSS well under one result)', () => {
    const status = readFileSync(`/proc/${s.pid}/status`, 'utf8');
    const hwmKiB = Number(/VmHWM:\s+(\d+)/.exec(status)![1]);
    expect(hwmKiB * KiB).toBeLessThan(250 * 1024 * KiB);
  });

  it('proxy: mixed content keeps the tiny image, drops the 3 MB image whole, equals the in-memory bound', async () => {
    const r = (await s.client.callTool({ name: 'mixed', arguments: {} })) as CallToolResult;
    const report = expectBounded(r);
    const content = r.content as Block[];
    expect(content.filter((b) => b.type === 'image')).toEqual([TINY_IMAGE]);
    expect(report.omitted_paths).toContain('/content/1');
    expect(content[0]!.text!.length).toBeLessThanOrEqual(32 * KiB);
    // The streaming path gives what the in-memory engine gives for the same result, bounded with
    // the room an offer takes, and the offer's paths are where the two differ.
    const memory = JSON.parse(boundJson(mixedResult(), limitsWithOfferRoom(resolveLimits({}))!).json) as Json;
    const { continuation, ...rest } = report as BudgetReport & { continuation: ContinuationOffer };
    expect(rest).toEqual((memory._meta as Json)[REPORT_KEY]);
    expect(withoutBudgetParts(r as Json, {})).toEqual(withoutBudgetParts(memory, {}));
    // A streamed result lists its first part; the rest are found when the handle is first read.
    expect(continuation.paths).toEqual(planReads(mixedResult() as Json, withoutBudgetParts(memory, {})).slice(0, 1));
    expect(continuation.paths_capped).toBe(true);
  });

  it.each([
    ['long line (100000 items)', 100_000],
    ['fast path (20000 items)', 20_000],
  ])('proxy: typed_list shrinks to a valid typed result with its text mirror rebuilt — %s', async (_, n) => {
    const r = (await s.client.callTool({ name: 'typed_list', arguments: { n } })) as CallToolResult;
    expect(r.isError).toBeUndefined();
    const sc = r.structuredContent as { items: number[] };
    expect(sc.items).toEqual(Array.from({ length: 200 }, (_, i) => i));
    expect(JSON.parse((r.content as Block[])[0]!.text!)).toEqual(sc);
    const report = reportOf(r);
    expect(report.budget_kind).toBe('text_block_bytes'); // the mirror comes first in document order
    expect(report.omitted_paths).toEqual(expect.arrayContaining(['/content/0/text', '/structuredContent/items/200']));
    expect(Buffer.byteLength(JSON.stringify(r))).toBeLessThanOrEqual(DEFAULT_MAX);
  });

  it.each([
    ['fast path', 5000],
    ['long line', 300_000],
  ])('proxy: typed_strict (read-only, shrink invalid) becomes isError with a continuation — %s', async (_, n) => {
    const r = (await s.client.callTool({ name: 'typed_strict', arguments: { n } })) as CallToolResult;
    expect(r.isError).toBe(true);
    expect(r.structuredContent).toBeUndefined();
    const report = reportOf(r);
    expect(report.error).toBe('result_budget_exceeded');
    // The narrowing arguments, and a handle to read what was cut (a long line is kept as it streams).
    expect(report.continuation).toMatchObject({ narrow_with: ['limit', 'cursor'], tool: 'mcp_result_budget__read', handle: expect.stringMatching(/^[\w-]{22}$/) });
    expect((r.content as Block[])[0]!.text).toMatch(/Call `typed_strict` again asking for less, using `limit`, `cursor`/);
    expect(Buffer.byteLength(JSON.stringify(r))).toBeLessThanOrEqual(DEFAULT_MAX);
  });

  it.each([
    ['fast path', 1000],
    ['long line', 150_000],
  ])('proxy: typed_write (mutation, shrink invalid) gets a receipt and no advice to retry — %s', async (_, n) => {
    const r = (await s.client.callTool({ name: 'typed_write', arguments: { n } })) as CallToolResult;
    expect(r.isError).toBe(true);
    expect(r.structuredContent).toBeUndefined();
    const report = reportOf(r);
    expect(report.error).toBe('result_budget_exceeded');
    expect(report.applied).toBe(true);
    expect(report.receipt).toEqual({ id: 'batch-9', written: n });
    const text = (r.content as Block[])[0]!.text!;
    expect(text).toMatch(/Do not call it again/);
    expect(text).not.toMatch(/call .* again asking for less/i);
  });

  it('proxy: typed_write with its id after a large log (fast path): the receipt still names it', async () => {
    const r = (await s.client.callTool({ name: 'typed_write_late_id', arguments: { n: 1000 } })) as CallToolResult;
    expect(r.isError).toBe(true);
    expect(reportOf(r).receipt).toEqual({ id: 'batch-late', written: 1000 });
  });

  it('proxy: typed_write with its id after a large log (long line): the receipt still names it', async () => {
    // The byte budget cuts the log before the id and count: the receipt comes from the members
    // captured while the line streamed, not from the bounded structure.
    const r = (await s.client.callTool({ name: 'typed_write_late_id', arguments: { n: 3000 } })) as CallToolResult;
    expect(r.isError).toBe(true);
    expect(reportOf(r).receipt).toEqual({ id: 'batch-late', written: 3000 });
  });

  it('proxy: a JSON-RPC error with 3 MB of data is bounded', async () => {
    const e = await rejection(s.client.callTool({ name: 'error_huge', arguments: {} }));
    expect(e).toBeInstanceOf(McpError);
    expect(e.code).toBe(-32000);
    expect(e.message).toMatch(/^MCP error -32000: m+/);
    const data = e.data as Record<string, unknown>;
    expect((data[REPORT_KEY] as BudgetReport).truncated).toBe(true);
    const error = { code: e.code, message: e.message.replace(/^MCP error -32000: /, ''), data: e.data };
    expect(Buffer.byteLength(JSON.stringify(error))).toBeLessThanOrEqual(DEFAULT_MAX);
  });

  it('proxy: an 8 MB non-tool result (resources/read) is answered with a JSON-RPC error, and the session goes on', async () => {
    const e = await rejection(s.client.readResource({ uri: 'file:///big' }));
    expect(e).toBeInstanceOf(McpError);
    expect(e.code).toBe(-32001);
    expect(e.message).toMatch(/cap on messages that are not tool results/);
    await until(() => /withheld a \d+-byte response to request .*not a tool result/.test(s.stderr()));
    expect(await s.client.callTool({ name: 'small', arguments: {} })).toEqual({ content: [{ type: 'text', text: 'hello' }] });
  });

  it('proxy: a non-JSON stdout line is dropped with a warning on stderr', async () => {
    const r = await s.client.callTool({ name: 'noise', arguments: {} });
    expect(r).toEqual({ content: [{ type: 'text', text: 'after noise' }] });
    // stderr and stdout are separate pipes: the warning may arrive after the answer.
    await until(() => s.stderr().includes('dropped a line the MCP server printed on stdout that is not JSON: "this line is not JSON"'));
  });

  it('proxy: a 5 MB non-JSON stdout line is dropped too (not held), and the answer after it arrives', async () => {
    const r = await s.client.callTool({ name: 'noise', arguments: { mb: 5 } });
    expect(r).toEqual({ content: [{ type: 'text', text: 'after noise' }] });
    await until(() => /dropped a \d{7}-byte line from the MCP server that is not valid JSON-RPC/.test(s.stderr()));
  });

  it('proxy: server notifications (log, progress) pass through', async () => {
    const progress: unknown[] = [];
    const r = await s.client.callTool({ name: 'notify', arguments: {} }, undefined, { onprogress: (p) => void progress.push(p) });
    expect(r).toEqual({ content: [{ type: 'text', text: 'notified' }] });
    expect(logs).toContainEqual({ level: 'info', logger: 'upstream', data: 'hello from upstream' });
    expect(progress).toEqual([{ progress: 1, total: 2 }]);
  });

  it('proxy: a server→client request reaches the client and its answer reaches the server', async () => {
    const r = (await s.client.callTool({ name: 'ask_client', arguments: {} })) as CallToolResult;
    expect(rootsAsked).toBe(1);
    const answer = JSON.parse((r.content as Block[])[0]!.text!) as Record<string, unknown>;
    expect(answer).toMatchObject({ jsonrpc: '2.0', id: 'srv-1', result: { roots: [{ uri: 'file:///workspace', name: 'workspace' }] } });
  });

  it('proxy: client notifications reach the server', async () => {
    await s.client.sendRootsListChanged();
    const r = (await s.client.callTool({ name: 'seen_notifications', arguments: {} })) as CallToolResult;
    const seen = JSON.parse((r.content as Block[])[0]!.text!) as string[];
    expect(seen).toEqual(['notifications/initialized', 'notifications/roots/list_changed']);
  });
});

// ------------------------------------------------------------------ bytes on the wire

describe.concurrent('proxy: bytes on the wire (hand-rolled stdio client)', () => {
  /** Run the same exchange against the upstream directly and through the proxy. */
  async function both(procs: Procs, exchange: (p: StdioPeer) => Promise<Buffer[]>): Promise<[Buffer[], Buffer[]]> {
    const direct = procs.peer(process.execPath, [UPSTREAM]);
    // With a continuation the tools/list line gains the reading tool (continuation-e2e.test.ts).
    const proxied = procs.proxy(['--no-continuation']);
    return Promise.all([exchange(direct), exchange(proxied)]);
  }

  it('proxy: lines that fit are passed on byte for byte (initialize, tools/list, small, non-canonical JSON)', async ({ procs }) => {
    const [direct, proxied] = await both(procs, async (p) => {
      const init = await p.request(0, 'initialize', { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'raw', version: '1' } });
      p.send({ jsonrpc: '2.0', method: 'notifications/initialized' });
      const list = await p.request(1, 'tools/list');
      const small = await p.callTool(2, 'small');
      const spaced = await p.callTool('s-3', 'spaced');
      const typed = await p.callTool(4, 'typed_list', { n: 50 });
      return [init.raw, list.raw, small.raw, spaced.raw, typed.raw];
    });
    expect(proxied.map(String)).toEqual(direct.map(String));
    expect(proxied[3]!.toString()).toContain('"text":"caf\\u00e9 \\/ ok"'); // not re-serialized
  });

  it('proxy: client lines reach the server byte for byte', async ({ procs }) => {
    const p = procs.proxy();
    await p.initialize();
    const line = '{ "jsonrpc" : "2.0", "id" : 9, "method":"tools/call", "params":{"name":"echo_line","arguments":{"x":"caf\\u00e9","n":1.50}} }';
    p.send(line);
    const { msg } = await p.response(9);
    expect((msg.result!.content as Block[])[0]!.text).toBe(line);
  });

  it('proxy: notifications and server→client requests are passed on byte for byte, and so is the answer', async ({ procs }) => {
    const p = procs.proxy();
    await p.initialize();
    p.send({ jsonrpc: '2.0', id: 5, method: 'tools/call', params: { name: 'notify', arguments: {}, _meta: { progressToken: 'tok' } } });
    const log = await p.takeLine((m) => m.method === 'notifications/message', 'the log notification');
    expect(log.raw.toString()).toBe('{"jsonrpc":"2.0","method":"notifications/message","params":{"level":"info","logger":"upstream","data":"hello from upstream"}}');
    const prog = await p.takeLine((m) => m.method === 'notifications/progress', 'the progress notification');
    expect(prog.raw.toString()).toBe('{"jsonrpc":"2.0","method":"notifications/progress","params":{"progressToken":"tok","progress":1,"total":2}}');
    await p.response(5);

    p.send({ jsonrpc: '2.0', id: 6, method: 'tools/call', params: { name: 'ask_client', arguments: {} } });
    const ask = await p.takeLine((m) => m.method === 'roots/list', 'the server request');
    expect(ask.raw.toString()).toBe('{"jsonrpc":"2.0","id":"srv-1","method":"roots/list","params":{}}');
    const answer = '{"result" : {"roots":[{"uri":"file:///w","name":"w\\u00e9"}]}, "id":"srv-1", "jsonrpc":"2.0"}';
    p.send(answer);
    const { msg } = await p.response(6);
    expect((msg.result!.content as Block[])[0]!.text).toBe(answer);
  });

  it('proxy: the bounded line is within the budget; 1 and "1" are different requests', async ({ procs }) => {
    const p = procs.proxy();
    await p.initialize();
    // Both pending at once: a number id for a small result, a string id for a 200 KB one.
    p.send({ jsonrpc: '2.0', id: 7, method: 'tools/call', params: { name: 'small', arguments: {} } });
    p.send({ jsonrpc: '2.0', id: '7', method: 'tools/call', params: { name: 'sized_text', arguments: { bytes: 200_000 } } });
    p.send({ jsonrpc: '2.0', id: 0, method: 'tools/call', params: { name: 'huge_text', arguments: { mb: 20 } } });
    const n7 = await p.response(7);
    const s7 = await p.response('7');
    const z = await p.response(0);
    expect(n7.msg.result).toEqual({ content: [{ type: 'text', text: 'hello' }] });
    for (const { raw, msg } of [s7, z]) {
      expect(Buffer.byteLength(JSON.stringify(msg.result))).toBeLessThanOrEqual(DEFAULT_MAX);
      expect(raw.length).toBeLessThanOrEqual(DEFAULT_MAX + 100); // the envelope adds a few bytes
      expect((msg.result!._meta as Record<string, BudgetReport>)[REPORT_KEY]!.truncated).toBe(true);
    }
    expect(z.raw.toString()).toMatch(/"id":0\}$/); // written as the server wrote it: id last
  });

  it('proxy: the negotiated protocol version decides which version-specific fields survive', async ({ procs }) => {
    const fields = async (version: string): Promise<string[]> => {
      const p = procs.proxy();
      await p.initialize(version);
      const { msg } = await p.callTool(1, 'extra_fields');
      const report = (msg.result!._meta as Record<string, BudgetReport>)[REPORT_KEY]!;
      expect(report.omitted_paths).toContain('/debugDump');
      return Object.keys(msg.result!);
    };
    const [older, newer] = await Promise.all([fields('2025-06-18'), fields('2025-11-25')]);
    expect(older).toEqual(['content', '_meta']);
    expect(newer).toEqual(['content', 'task', '_meta']);
  });
});

// ------------------------------------------------------------------ faults

describe.concurrent('proxy: faults', () => {
  it('proxy: crash mid-response → the pending request gets a JSON-RPC error and stderr says why (SDK client)', async ({ procs }) => {
    const s = await procs.sdk();
    const e = await rejection(s.client.callTool({ name: 'crash_mid', arguments: {} }));
    expect(e).toBeInstanceOf(McpError);
    expect(e.code).toBe(-32000);
    expect(e.message).toMatch(/The MCP server `.*upstream-server\.mjs` exited with code 3 before answering this request/);
    await until(() => /mcp-budget proxy: the MCP server `.*upstream-server\.mjs` exited with code 3/.test(s.stderr()));
    // The half line is reported, never passed on as a response.
    expect(s.stderr()).toMatch(/dropped a line the MCP server printed on stdout that is not JSON: "\{\\"result\\"/);
  });

  it('proxy: crash mid-response → the proxy exits non-zero once the client has closed its input', async ({ procs }) => {
    const p = procs.proxy();
    await p.initialize();
    const { msg } = await p.callTool(1, 'crash_mid');
    expect(msg.error).toMatchObject({ code: -32000 });
    expect(msg.error!.message).toMatch(/exited with code 3/);
    await p.stderrMatches(/the MCP server `.*` exited with code 3/);
    p.endInput();
    expect((await p.waitExit()).code).toBe(1);
  });

  it('proxy: after the upstream exits, the proxy exits by itself (does not wait for the client to close stdin) [src bug]', async ({ procs }) => {
    const p = procs.proxy();
    await p.initialize();
    await p.callTool(1, 'crash_mid');
    // The upstream is gone; a host learns that from the proxy exiting. Today the proxy lingers
    // with stdin open, and a request sent now is never answered.
    await p.waitExit(1000);
  });

  it('proxy: a server command that cannot start is reported on stderr, exit code 1', async ({ procs }) => {
    const p = procs.proxy([], {}, ['mcp-budget-no-such-command-xyz']);
    await p.stderrMatches(/mcp-budget proxy: cannot start `mcp-budget-no-such-command-xyz`: spawn mcp-budget-no-such-command-xyz ENOENT/);
    p.endInput();
    expect((await p.waitExit()).code).toBe(1);
  });

  it('proxy: a server command that cannot start ends the proxy, or its requests are answered [src bug]', async ({ procs }) => {
    const p = procs.proxy([], {}, ['mcp-budget-no-such-command-xyz']);
    await p.stderrMatches(/cannot start/);
    p.send({ jsonrpc: '2.0', id: 1, method: 'initialize', params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'r', version: '1' } } });
    await Promise.race([p.waitExit(1000), p.response(1, 1000)]);
  });

  it('proxy: the client closing stdin while a call is pending stops the upstream (no orphan), answers the call', async ({ procs }) => {
    const { env, pid } = pidEnv();
    const p = procs.proxy([], env);
    await p.initialize();
    const upstream = await pid();
    p.send({ jsonrpc: '2.0', id: 3, method: 'tools/call', params: { name: 'slow', arguments: {} } });
    await p.stderrMatches(/upstream: slow started/);
    p.endInput();
    const { msg } = await p.response(3);
    expect(msg.error!.code).toBe(-32000);
    expect(msg.error!.message).toMatch(/was killed by SIGTERM before answering/);
    await waitGone(upstream, 5000);
    expect((await p.waitExit()).code).toBe(0);
    expect(isAlive(upstream)).toBe(false);
  });

  it('proxy: an upstream that ignores SIGTERM is killed with SIGKILL after the grace period', async ({ procs }) => {
    const { env, pid } = pidEnv();
    const p = procs.proxy([], { ...env, UPSTREAM_IGNORE_SIGTERM: '1' });
    await p.initialize();
    const upstream = await pid();
    p.send({ jsonrpc: '2.0', id: 3, method: 'tools/call', params: { name: 'slow', arguments: {} } });
    await p.stderrMatches(/upstream: slow started/);
    p.endInput();
    await p.stderrMatches(/upstream: received SIGTERM \(ignored\)/);
    const termAt = Date.now();
    expect(isAlive(upstream)).toBe(true);
    const goneAt = await waitGone(upstream, 8000);
    expect(goneAt - termAt).toBeGreaterThanOrEqual(1000); // grace: 2 s (less the time to see the SIGTERM)
    const { msg } = await p.response(3);
    expect(msg.error!.message).toMatch(/was killed by SIGKILL/);
    await p.waitExit();
  });

  /** A client that answers sampling requests and counts log notifications. */
  function samplingClient(seen: { logs: number; asked: number }): Client {
    const client = new Client({ name: 'proxy-test', version: '1.0.0' }, { capabilities: { sampling: {} } });
    client.setNotificationHandler(LoggingMessageNotificationSchema, () => void seen.logs++);
    client.setRequestHandler(CreateMessageRequestSchema, async () => {
      seen.asked++;
      return { role: 'assistant', content: { type: 'text', text: 'summary' }, model: 'test-model' };
    });
    return client;
  }

  it('proxy: a 512 KB server notification and server→client request pass through', async ({ procs }) => {
    const seen = { logs: 0, asked: 0 };
    const s = await procs.sdk([], {}, samplingClient(seen));
    const r = (await s.client.callTool({ name: 'ask_client_big', arguments: { mb: 0.5 } })) as CallToolResult;
    expect(seen).toEqual({ logs: 1, asked: 1 });
    expect(JSON.parse((r.content as Block[])[0]!.text!)).toMatchObject({ result: { content: { text: 'summary' } } });
  });

  it('proxy: a 2 MB server notification is dropped and a 2 MB sampling request answered to the server, never reaching the client', async ({ procs }) => {
    // Over the cap on messages that are not tool results (1 MiB): the host never feeds the model a
    // sampling request it did not budget, and the server is not left waiting for an answer.
    const seen = { logs: 0, asked: 0 };
    const s = await procs.sdk([], {}, samplingClient(seen));
    const r = (await s.client.callTool({ name: 'ask_client_big', arguments: { mb: 2 } }, undefined, { timeout: 10_000 })) as CallToolResult;
    expect(seen).toEqual({ logs: 0, asked: 0 });
    const answered = JSON.parse((r.content as Block[])[0]!.text!) as { error: { code: number; message: string } };
    expect(answered.error.code).toBe(-32600);
    expect(answered.error.message).toMatch(/not passed to the client.*--max-message-bytes/);
    await until(() => (s.stderr().match(/request or notification from the MCP server \(over the 1048576-byte cap/g) ?? []).length === 2);
  });

  it('proxy: --max-message-bytes holds every message that is not a tool result to the cap, on the parsed path too', async ({ procs }) => {
    const seen = { logs: 0, asked: 0 };
    const s = await procs.sdk(['--max-message-bytes', '256KiB'], {}, samplingClient(seen));
    const r = (await s.client.callTool({ name: 'ask_client_big', arguments: { mb: 0.5 } }, undefined, { timeout: 10_000 })) as CallToolResult;
    expect(seen).toEqual({ logs: 0, asked: 0 });
    expect(JSON.parse((r.content as Block[])[0]!.text!)).toMatchObject({ error: { code: -32600 } });
    await until(() => /dropped a notifications\/message notification of \d+ bytes, over the 262144-byte cap/.test(s.stderr()));
    await until(() => /answered the MCP server's request "srv-\d+" with an error and did not pass it on/.test(s.stderr()));
    // A response to another method: whole under the cap, withheld over it; tool results are budgeted, not capped.
    expect(await s.client.readResource({ uri: 'file:///sized/100000' })).toMatchObject({ contents: [{ uri: 'file:///sized/100000' }] });
    const e = await rejection(s.client.readResource({ uri: 'file:///sized/300000' }));
    expect(e.code).toBe(-32001);
    expect(e.message).toMatch(/over mcp-budget's 262144-byte cap on messages that are not tool results/);
    expect(await s.client.callTool({ name: 'sized_text', arguments: { bytes: 300_000 } })).toMatchObject({ _meta: { 'io.github.mcp-result-budget/budget': { truncated: true } } });
  });

  it('proxy: the SDK client closing leaves no process behind', async ({ procs }) => {
    const { env, pid } = pidEnv();
    const s = await procs.sdk([], env);
    const upstream = await pid();
    await s.client.callTool({ name: 'small', arguments: {} });
    await s.client.close();
    await waitGone(upstream, 5000);
    await waitGone(s.pid, 5000);
  });

  it('proxy: SIGTERM to the proxy stops the upstream', async ({ procs }) => {
    const { env, pid } = pidEnv();
    const p = procs.proxy([], env);
    await p.initialize();
    const upstream = await pid();
    p.child.kill('SIGTERM');
    await waitGone(upstream, 5000);
    p.endInput();
    await p.waitExit();
  });

  it('proxy: a closed client stdout (EPIPE) ends quietly and stops the upstream', async ({ procs }) => {
    const { env, pid } = pidEnv();
    const p = procs.proxy([], env);
    const upstream = await pid();
    p.child.stdout.destroy();
    p.send({ jsonrpc: '2.0', id: 0, method: 'initialize', params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'r', version: '1' } } });
    p.send({ jsonrpc: '2.0', id: 1, method: 'tools/call', params: { name: 'small', arguments: {} } });
    p.send({ jsonrpc: '2.0', id: 2, method: 'tools/call', params: { name: 'small', arguments: {} } });
    await waitGone(upstream, 8000);
    p.endInput();
    const exit = await p.waitExit();
    expect(exit.code).toBe(0);
    await p.stderrEnded;
    expect(p.stderrText).toBe('');
  });

  it('proxy: requests written before the client closes stdin are still answered (graceful stdio shutdown) [src bug]', async ({ procs }) => {
    // `printf '…initialize…\n…tools/call…\n' | mcp-budget proxy -- server`: the MCP stdio shutdown is
    // "close the server's stdin, wait, then SIGTERM"; the proxy sends SIGTERM at once.
    const p = procs.proxy();
    p.send({ jsonrpc: '2.0', id: 0, method: 'initialize', params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'r', version: '1' } } });
    p.send({ jsonrpc: '2.0', id: 1, method: 'tools/call', params: { name: 'small', arguments: {} } });
    p.endInput();
    const { msg } = await p.response(1);
    expect(msg.result).toEqual({ content: [{ type: 'text', text: 'hello' }] });
  });

  it('proxy: a client that stops reading holds the server back, then gets every answer in order, with no warning', async ({ procs }) => {
    // Many answers arrive in one piece read from the server: the proxy waits for one 'drain' at a
    // time (a wait per line piled up listeners, and Node warned on stderr).
    const p = procs.proxy();
    p.child.stdout.pause();
    p.send({ jsonrpc: '2.0', id: 0, method: 'initialize', params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'r', version: '1' } } });
    const n = 1000; // 20 MB of answers: far past every pipe buffer between the three processes
    let batch = '';
    for (let i = 1; i <= n; i++) batch += JSON.stringify({ jsonrpc: '2.0', id: i, method: 'tools/call', params: { name: 'sized_text', arguments: { bytes: 20_000 } } }) + '\n';
    p.send(batch, false);
    await new Promise((r) => setTimeout(r, 1500));
    p.child.stdout.resume();
    await p.response(n, 30_000);
    const ids = p.lines.map((l) => (JSON.parse(l.toString('utf8')) as { id: number }).id);
    expect(ids).toEqual(Array.from({ length: n + 1 }, (_, i) => i));
    expect(p.stderrText).toBe('');
  });
});

// ------------------------------------------------------------------ --max-request-bytes

describe.concurrent('proxy: --max-request-bytes', () => {
  it('proxy: a client line over the cap gets a JSON-RPC error (-32600), one at the cap passes, and the next request works', async ({ procs }) => {
    const p = procs.proxy(['--max-request-bytes', '2KiB']);
    await p.initialize();
    const lineOf = (id: number, size: number): string => {
      const head = `{"jsonrpc":"2.0","id":${id},"method":"tools/call","params":{"name":"echo_line","arguments":{"pad":"`;
      const tail = '"}}}';
      return head + 'p'.repeat(size - head.length - tail.length) + tail;
    };
    const atCap = lineOf(1, 2048);
    p.send(atCap);
    expect(((await p.response(1)).msg.result!.content as Block[])[0]!.text).toBe(atCap);

    // Over the cap, written in pieces: refused once, the rest discarded unseen.
    const over = lineOf(2, 2049);
    p.send(over.slice(0, 1000), false);
    p.send(over.slice(1000) + '\n' + lineOf(3, 1001), false);
    p.send('');
    const refused = await p.response(2); // the id is read from the refused line's top level
    expect(refused.msg.error!.code).toBe(-32600);
    expect(refused.msg.error!.message).toMatch(/more than 2048 bytes refused by mcp-budget proxy; raise --max-request-bytes/);
    expect(((await p.response(3)).msg.result!.content as Block[])[0]!.text).toBe(lineOf(3, 1001));
    await p.stderrMatches(/refused a client message of \d+ bytes \(over --max-request-bytes 2048\)/);

    const big = lineOf(4, 100_000);
    p.send(big);
    expect((await p.response(4)).msg.error!.code).toBe(-32600);
    expect((await p.callTool(5, 'small')).msg.result).toEqual({ content: [{ type: 'text', text: 'hello' }] });
    // The refused requests never reached the server: each got only the proxy's refusal.
    expect(p.lines.filter((l) => /"id":(2|4)[,}]/.test(l.toString())).map((l) => JSON.parse(l.toString()).error?.code)).toEqual([-32600, -32600]);
  });

  it('proxy: the SDK client is answered when its request is refused (the error names its id) [src bug]', async ({ procs }) => {
    // The SDK writes the id last and drops a response with `"id": null`, so today the call just
    // waits for its timeout: the refusal never reaches it.
    const s = await procs.sdk(['--max-request-bytes', '2KiB']);
    const e = await rejection(s.client.callTool({ name: 'echo_line', arguments: { pad: 'p'.repeat(5000) } }, undefined, { timeout: 1000 }));
    expect(e.code).toBe(ErrorCode.InvalidRequest);
  });
});

// ------------------------------------------------------------------ budget flags and environment

describe.concurrent('proxy: budget flags and MCP_BUDGET_* variables', () => {
  it('proxy: flags change the bound (--max-bytes, --max-items=, --no-notice, --max-block-bytes)', async ({ procs }) => {
    const s = await procs.sdk(['--max-bytes', '16KiB', '--max-items=9', '--no-notice', '--max-block-bytes', '1000']);
    const text = (await s.client.callTool({ name: 'huge_text', arguments: { mb: 2 } })) as CallToolResult;
    expectBounded(text, 16 * KiB, false);
    expect(wireBytes((text.content as Block[])[0]!.text!)).toBeLessThanOrEqual(1000);
    expect(wireBytes((text.content as Block[])[0]!.text!)).toBeGreaterThan(900);
    const arr = (await s.client.callTool({ name: 'huge_array', arguments: { mb: 2 } })) as CallToolResult;
    expectBounded(arr, 16 * KiB, false);
    expect((arr.structuredContent as { items: unknown[] }).items).toHaveLength(9);
    const big = (await s.client.callTool({ name: 'sized_text', arguments: { bytes: 15_000 } })) as CallToolResult;
    expectBounded(big, 16 * KiB, false);
  });

  it('proxy: MCP_BUDGET_* variables change the bound, and flags win over them', async ({ procs }) => {
    const env = { MCP_BUDGET_MAX_BYTES: '20000', MCP_BUDGET_MAX_ITEMS: '7', MCP_BUDGET_NOTICE: '0', MCP_BUDGET_MAX_TEXT_BYTES: '3KiB' };
    const [a, b] = await Promise.all([procs.sdk([], env), procs.sdk(['--max-items', '11'], env)]);
    const ra = (await a.client.callTool({ name: 'huge_array', arguments: { mb: 2 } })) as CallToolResult;
    expectBounded(ra, 20_000, false);
    expect((ra.structuredContent as { items: unknown[] }).items).toHaveLength(7);
    const rt = (await a.client.callTool({ name: 'sized_text', arguments: { bytes: 10_000 } })) as CallToolResult;
    expect(reportOf(rt).budget_kind).toBe('text_total_bytes');
    expect((rt.content as Block[])[0]!.text).toBe('a'.repeat(3 * KiB));
    const rb = (await b.client.callTool({ name: 'huge_array', arguments: { mb: 2 } })) as CallToolResult;
    expect((rb.structuredContent as { items: unknown[] }).items).toHaveLength(11);
  });

  it('proxy: with a budget large enough, a multi-megabyte result streams through unchanged', async ({ procs }) => {
    const s = await procs.sdk(['--max-bytes', '64MiB', '--max-text-bytes', '64MiB', '--max-block-bytes', '64MiB']);
    const r = (await s.client.callTool({ name: 'sized_text', arguments: { bytes: 3_000_000 } })) as CallToolResult;
    expect(r._meta).toBeUndefined();
    expect(r.content).toHaveLength(1);
    expect((r.content as Block[])[0]!.text).toBe('a'.repeat(3_000_000));
  });

  it('proxy: bad settings are a usage error (exit 2) before the server starts', async ({ procs }) => {
    const cases: [string[], Record<string, string>, RegExp][] = [
      [['--max-bytes', '10'], {}, /Expected `--max-bytes` to be from 1024 to/],
      [['--max-bytes', '2000'], {}, /(--max-bytes|maxResultBytes)`.*4970/], // under the report reserve
      [['--max-request-bytes', '100'], {}, /Expected `--max-request-bytes` to be from 1024 to/],
      [['--frobnicate'], {}, /Unknown argument `--frobnicate` for proxy/],
      // refused on purpose, with the reason (the help says it too)
      [['--listen', '127.0.0.1:0', '--stateless'], {}, /proxy does not take `--stateless`: --stateless is serve's alone: a proxy holds its upstream's session .*sticky sessions/],
      [[], { MCP_BUDGET_MAX_ITEMS: 'lots' }, /Expected `MCP_BUDGET_MAX_ITEMS` to be a whole number/],
    ];
    const missing = procs.peer(process.execPath, [CLI, 'proxy', '--max-bytes', '32KiB']);
    await Promise.all([
      ...cases.map(async ([flags, extra, message]) => {
        const { env } = pidEnv();
        const p = procs.proxy(flags, { ...env, ...extra });
        const exit = await p.waitExit();
        await p.stderrEnded;
        expect({ flags, extra, code: exit.code, stderr: p.stderrText }).toEqual({ flags, extra, code: 2, stderr: expect.stringMatching(message) });
        expect(existsSync(env.UPSTREAM_PID_FILE!)).toBe(false);
      }),
      (async () => {
        const exit = await missing.waitExit();
        await missing.stderrEnded;
        expect({ code: exit.code, stderr: missing.stderrText }).toEqual({ code: 2, stderr: expect.stringMatching(/proxy needs the server command after `--`/) });
      })(),
    ]);
  });
});
