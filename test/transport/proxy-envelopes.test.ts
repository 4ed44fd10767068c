/**
 * The proxy against an upstream that answers a `tools/call` with every combination of top-level
 * keys (id as a number, as its string form, null or absent; result; error; method as a string or
 * null; params; jsonrpc; an extra key), with the big member first, in the middle or last, at sizes
 * under the fast path, just over it and far over it (past the 8 MiB pass-through cap). Whatever
 * the line, a client must get exactly one answer per call, never a line over the budget that
 * carries a result or error, and the upstream must get nothing under a client's id but the
 * refusal of a request too large to pass. The upstream (test/fixtures/envelope-upstream.mjs)
 * writes a small valid answer after each crafted line, which answers the call exactly when the
 * proxy rightly drops the crafted one.
 */
import { spawn } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { McpError } from '@modelcontextprotocol/sdk/types.js';
import { describe, expect, it } from 'vitest';
import { DEFAULT_FAST_PATH_BYTES } from '../../src/engine/limits.js';
import { CLI, REPO_ROOT } from '../helpers/stdio-peer.js';
import { classify, expected, type Case, casesFor, membersOf, SLACK, BUDGET, PASS_MAX } from './envelope-cases.js';

const UPSTREAM = fileURLToPath(new URL('../fixtures/envelope-upstream.mjs', import.meta.url));
const MiB = 1024 * 1024;
const SIZES = [100 * 1024, DEFAULT_FAST_PATH_BYTES + 1, 3 * MiB, 9 * MiB];

/** What the raw client keeps of one line (big lines are not held). */
interface Seen {
  bytes: number;
  keys: string[];
  id: unknown;
  code: number | undefined;
  text: string | undefined;
  truncated: boolean;
}

function summary(raw: Buffer): Seen {
  const m = JSON.parse(raw.toString('utf8')) as Record<string, unknown>;
  const result = m.result as { content?: { text?: string }[]; _meta?: Record<string, { truncated?: boolean }> } | undefined;
  const text = result?.content?.[0]?.text;
  return {
    bytes: raw.length,
    keys: Object.keys(m),
    id: m.id,
    code: (m.error as { code?: number } | undefined)?.code,
    text: text === undefined ? undefined : text.slice(0, 16),
    truncated: Object.values(result?._meta ?? {}).some((r) => r?.truncated === true),
  };
}

/** Run every case through one real proxy with a raw JSON-lines client; returns lines by request id. */
async function rawRun(cases: Case[]): Promise<{ byId: Map<number, Seen[]>; others: Seen[]; upstreamSaw: { id: unknown; code?: number }[]; stderr: string }> {
  let upstreamSaw: { id: unknown; code?: number }[] | undefined;
  const child = spawn(process.execPath, [CLI, 'proxy', '--', process.execPath, UPSTREAM], { cwd: REPO_ROOT, stdio: ['pipe', 'pipe', 'pipe'] });
  let stderr = '';
  child.stderr.on('data', (d: Buffer) => (stderr += d.toString('utf8')));
  const byId = new Map<number, Seen[]>();
  const others: Seen[] = [];
  let pending: Buffer[] = [];
  let waiter: (() => void) | undefined;
  child.stdout.on('data', (chunk: Buffer) => {
    let from = 0;
    for (let nl = chunk.indexOf(0x0a); nl !== -1; nl = chunk.indexOf(0x0a, from)) {
      pending.push(chunk.subarray(from, nl));
      const raw = Buffer.concat(pending);
      const s = summary(raw);
      pending = [];
      from = nl + 1;
      if (s.id === 'seen') {
        // What the upstream heard back from the proxy, as its `seen` tool reports it.
        const text = (JSON.parse(raw.toString('utf8')) as { result: { content: { text: string }[] } }).result.content[0]!.text;
        upstreamSaw = JSON.parse(text) as { id: unknown; code?: number }[];
        waiter?.();
        continue;
      }
      // The raw client matches ids as the SDK client does (Number()).
      const n = s.keys.includes('method') || s.id === null || s.id === undefined ? NaN : Number(s.id);
      if (Number.isFinite(n)) byId.set(n, [...(byId.get(n) ?? []), s]);
      else others.push(s);
      waiter?.();
    }
    if (from < chunk.length) pending.push(Buffer.from(chunk.subarray(from)));
  });
  const send = (m: unknown): boolean => child.stdin.write(JSON.stringify(m) + '\n');
  const until = (ready: () => boolean, what: string): Promise<void> =>
    new Promise((resolve, reject) => {
      const t = setTimeout(() => reject(new Error(`timed out waiting for ${what}; stderr:\n${stderr.slice(-2000)}`)), 60_000);
      const check = (): void => {
        if (ready()) {
          clearTimeout(t);
          waiter = undefined;
          resolve();
        } else waiter = check;
      };
      check();
    });
  try {
    send({ jsonrpc: '2.0', id: 0, method: 'initialize', params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'raw', version: '1' } } });
    await until(() => byId.has(0), 'initialize');
    send({ jsonrpc: '2.0', method: 'notifications/initialized' });
    for (const c of cases) send({ jsonrpc: '2.0', id: c.rid, method: 'tools/call', params: { name: 'craft', arguments: { members: membersOf(c), size: c.size } } });
    await until(() => cases.every((c) => byId.has(c.rid)), 'an answer to every call');
    send({ jsonrpc: '2.0', id: 'seen', method: 'tools/call', params: { name: 'seen', arguments: {} } });
    await until(() => upstreamSaw !== undefined, 'the upstream report');
    return { byId, others, upstreamSaw: upstreamSaw!, stderr };
  } finally {
    child.kill('SIGKILL');
  }
}

describe('adversarial upstream envelopes, raw client', () => {
  for (const size of SIZES) {
    it(`proxy-envelopes: every key set and order at ${size} bytes: one bounded answer per call, nothing unbounded, no stray refusal`, async () => {
      const cases = casesFor(size);
      const { byId, others, upstreamSaw, stderr } = await rawRun(cases);
      let refusedToServer = 0;
      for (const c of cases) {
        const got = byId.get(c.rid) ?? [];
        const what = `${c.label} @${size}`;
        expect(got, what).toHaveLength(1);
        const a = got[0]!;
        // Exactly a response: never a method, never both result and error, never over the budget.
        expect(a.keys.filter((k) => !['jsonrpc', 'id', 'result', 'error'].includes(k)), what).toEqual([]);
        expect(a.keys.includes('result') !== a.keys.includes('error'), what).toBe(true);
        expect(a.bytes, what).toBeLessThanOrEqual(BUDGET + SLACK);
        const want = expected(c);
        if (want === 'refused') expect(a.code, what).toBe(-32603);
        else if (want === 'fallback') expect(a.text, what).toBe('fallback');
        else if (want === 'error') expect(a.code, what).toBe(-32000);
        else {
          expect(a.text, what).not.toBe('fallback');
          if (c.big === 'result' && size > BUDGET) expect(a.truncated, what).toBe(true);
        }
        if (classify(c) === 'request' && size > PASS_MAX && c.id !== 'null') refusedToServer++;
      }
      for (const o of others) {
        // Requests and notifications pass (up to the cap) with no result or error; an error
        // naming no request passes bounded.
        if (o.keys.includes('method')) {
          expect(o.keys.includes('result') || o.keys.includes('error')).toBe(false);
          expect(o.bytes).toBeLessThanOrEqual(PASS_MAX);
        } else {
          expect(o.keys.includes('result')).toBe(false);
          expect(o.bytes).toBeLessThanOrEqual(BUDGET + SLACK);
        }
      }
      // The upstream heard back only refusals of its own requests too large to pass.
      expect(upstreamSaw.every((s) => s.code === -32600), JSON.stringify(upstreamSaw.slice(0, 5))).toBe(true);
      expect(upstreamSaw).toHaveLength(refusedToServer);
      // Only requests and notifications are ever dropped as too large to pass (never a response).
      const tooLarge = cases.filter((c) => size > PASS_MAX && (classify(c) === 'request' || classify(c) === 'notification')).length;
      expect((stderr.match(/request or notification from the MCP server \(over/g) ?? []).length).toBe(tooLarge);
    }, 120_000);
  }
});

describe('adversarial upstream envelopes, SDK client', () => {
  it('proxy-envelopes: the SDK client gets one settled answer per call, bounded, at every size', async () => {
    const transport = new StdioClientTransport({ command: process.execPath, args: [CLI, 'proxy', '--', process.execPath, UPSTREAM], cwd: REPO_ROOT, stderr: 'pipe' });
    const client = new Client({ name: 'envelopes', version: '1.0.0' });
    await client.connect(transport);
    try {
      for (const size of SIZES) {
        for (const c of casesFor(size).filter((k) => k.sdk)) {
          const what = `${c.label} @${size}`;
          const want = expected(c);
          try {
            const r = await client.callTool({ name: 'craft', arguments: { members: membersOf(c), size } }, undefined, { timeout: 20_000 });
            expect(Buffer.byteLength(JSON.stringify(r)), what).toBeLessThanOrEqual(BUDGET);
            expect(['ok', 'fallback'], what).toContain(want);
          } catch (e) {
            expect(e, what).toBeInstanceOf(McpError);
            expect((e as McpError).code, what).toBe(want === 'refused' ? -32603 : -32000);
          }
        }
      }
    } finally {
      await client.close();
    }
  }, 120_000);
});
