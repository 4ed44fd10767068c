/**
 * Nothing lost: a server whose tools have no paging arguments, behind the real CLI proxy over
 * stdio and behind withResultBudget, at 8, 32 and 64 KiB budgets. A client loop that follows only
 * the notice (the call it names, then each answer's `next`) and the reading tool's one reassembly
 * rule gets the whole result back byte for byte; every answer is within the budget. Then each
 * failure of a handle: expired, evicted, from another proxy, forged.
 */
import { fileURLToPath } from 'node:url';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { afterEach, beforeAll, describe, expect, it } from 'vitest';
import { NOTICE_KEY, REPORT_KEY } from '../../src/engine/limits.js';
import { estimateTokens } from '../../src/engine/token-estimate.js';
import { applyPart, withoutBudgetParts } from '../../src/transport/core/continuation-plan.js';
import type { ReadAnswer } from '../../src/transport/core/continuation-read.js';
import { ensureBuilt } from '../helpers/cli.js';
import { RESULTS } from '../fixtures/pageless-data.mjs';

const CLI = fileURLToPath(new URL('../../dist/cli.js', import.meta.url));
const SERVER = fileURLToPath(new URL('../fixtures/pageless-server.mjs', import.meta.url));
const REPO_ROOT = fileURLToPath(new URL('../../', import.meta.url));

type Json = Record<string, unknown>;
type Tool = keyof typeof RESULTS;

const clients: Client[] = [];

afterEach(async () => {
  await Promise.all(clients.splice(0).map((c) => c.close()));
});

beforeAll(() => {
  ensureBuilt();
});

async function connect(via: 'proxy' | 'decorator' | 'both', budget: number, flags: string[] = [], serverBudget = budget): Promise<Client> {
  const env = { ...(process.env as Record<string, string>) };
  // Both: the proxy in front of a server that bounds its own results (two budgets, one offer).
  if (via === 'both') env.PAGELESS_BUDGET = JSON.stringify({ maxResultBytes: serverBudget });
  const transport =
    via !== 'decorator'
      ? new StdioClientTransport({ command: process.execPath, args: [CLI, 'proxy', '--max-bytes', String(budget), ...flags, '--', process.execPath, SERVER], env, cwd: REPO_ROOT, stderr: 'pipe' })
      : new StdioClientTransport({ command: process.execPath, args: [SERVER], env: { ...env, PAGELESS_BUDGET: JSON.stringify({ maxResultBytes: budget }) }, cwd: REPO_ROOT, stderr: 'pipe' });
  const client = new Client({ name: 'reader', version: '1.0.0' });
  await client.connect(transport);
  clients.push(client);
  return client;
}

/** The notice's instruction: the tool to call and its arguments, read from the text alone. */
function instruction(result: Json): { tool: string; args: Json } {
  const content = result.content as Json[];
  const notice = content.find((b) => (b._meta as Json | undefined)?.[NOTICE_KEY] === true);
  expect(notice, 'a notice block').toBeDefined();
  const m = /call the tool (\S+) with (\{[^}]*\})/.exec(notice!.text as string);
  expect(m, `the notice names a call: ${String(notice!.text)}`).not.toBeNull();
  return { tool: m![1]!, args: JSON.parse(m![2]!) as Json };
}

/** Call a tool; follow the notice and every `next`; put each part in place. */
async function followNotice(client: Client, tool: Tool, budget: number, maxTokens?: number): Promise<{ rebuilt: unknown; calls: number; first: Json }> {
  const first = (await client.callTool({ name: tool, arguments: {} })) as Json;
  expect(Buffer.byteLength(JSON.stringify(first))).toBeLessThanOrEqual(budget);
  const report = (first._meta as Json)[REPORT_KEY] as Json;
  expect(report.continuation).toMatchObject({ tool: 'mcp_result_budget__read' });
  let next: Json | undefined = instruction(first).args;
  const name = instruction(first).tool;
  let root: unknown = withoutBudgetParts(first, {});
  let calls = 0;
  while (next !== undefined) {
    const r = (await client.callTool({ name, arguments: next })) as Json;
    calls++;
    expect(r.isError, JSON.stringify(r.content)).not.toBe(true);
    expect(Buffer.byteLength(JSON.stringify(r))).toBeLessThanOrEqual(budget);
    if (maxTokens !== undefined) for (const b of r.content as Json[]) expect(estimateTokens(String(b.text ?? ''))).toBeLessThanOrEqual(maxTokens);
    const a = r.structuredContent as unknown as ReadAnswer;
    const data = a.text !== undefined ? { text: a.text } : a.items !== undefined ? { items: a.items } : { members: a.members! };
    root = applyPart(root, a.path, a.position, data);
    next = a.next as Json | undefined;
  }
  return { rebuilt: root, calls, first };
}

describe('continuation end to end', { timeout: 120_000 }, () => {
  for (const via of ['proxy', 'decorator'] as const) {
    for (const kib of [8, 32, 64]) {
      it(`continuation: behind the ${via} at ${kib} KiB, following the notice recovers a whole log and a whole query result byte for byte`, async () => {
        const budget = kib * 1024;
        const client = await connect(via, budget);
        const { tools } = await client.listTools();
        expect(tools.map((t) => t.name)).toEqual(['read_log', 'run_query', 'mcp_result_budget__read']);
        for (const tool of ['read_log', 'run_query'] as const) {
          const { rebuilt, calls } = await followNotice(client, tool, budget);
          expect(JSON.stringify(rebuilt)).toBe(JSON.stringify(RESULTS[tool]()));
          expect(calls).toBeGreaterThan(0);
        }
      });
    }
  }

  for (const memory of [false, true]) {
    it(`continuation: a result past the proxy's fast path streams through the budget and is kept as it streams (${memory ? 'in memory' : 'in a spill file'}); following the notice recovers it whole`, async () => {
      // 12 times as large: a 1.4 MB log and a 1.3 MB query result, each one line over 1 MiB.
      process.env.PAGELESS_SCALE = '12';
      try {
        const budget = 64 * 1024;
        const client = await connect('proxy', budget, memory ? ['--continuation-memory'] : []);
        for (const tool of ['read_log', 'run_query'] as const) {
          const { rebuilt, calls } = await followNotice(client, tool, budget);
          expect(JSON.stringify(rebuilt)).toBe(JSON.stringify(RESULTS[tool](12)));
          expect(calls).toBeGreaterThan(20);
        }
      } finally {
        delete process.env.PAGELESS_SCALE;
      }
    });
  }

  it('continuation: a streamed result larger than one continuation may keep gets none, and the notice asks for less', async () => {
    process.env.PAGELESS_SCALE = '12';
    try {
      const client = await connect('proxy', 32 * 1024, ['--continuation-max-result-bytes', '1MiB']);
      const r = (await client.callTool({ name: 'read_log', arguments: {} })) as Json;
      const report = (r._meta as Json)[REPORT_KEY] as Json;
      expect(report.truncated).toBe(true);
      expect(report.continuation).toBeUndefined();
      expect(JSON.stringify(r.content)).toContain('call the tool again asking for less');
    } finally {
      delete process.env.PAGELESS_SCALE;
    }
  });

  it('continuation: behind the proxy with --max-tokens 2000, the first result and every part are within the tokens, and the log comes back whole', async () => {
    const client = await connect('proxy', 65536, ['--max-tokens', '2000']);
    const textTokens = (r: Json): number =>
      (r.content as Json[]).filter((b) => (b._meta as Json | undefined)?.[NOTICE_KEY] !== true).reduce((n, b) => n + estimateTokens(String(b.text ?? '')), 0);
    const first = (await client.callTool({ name: 'read_log', arguments: {} })) as Json;
    expect(((first._meta as Json)[REPORT_KEY] as Json).budget_kind).toBe('text_tokens');
    expect(textTokens(first)).toBeLessThanOrEqual(2000);
    expect(textTokens(first)).toBeGreaterThan(1500);
    const { rebuilt, calls } = await followNotice(client, 'read_log', 65536, 2000);
    expect(JSON.stringify(rebuilt)).toBe(JSON.stringify(RESULTS.read_log()));
    // Each part came as one answer whose text (its JSON mirror) is within the tokens too.
    expect(calls).toBeGreaterThan(Math.floor(estimateTokens(JSON.stringify(RESULTS.read_log())) / 2000) - 1);
  });

  it('continuation: a proxy in front of a server that bounds too keeps the server\'s offer, and its reads pass through', async () => {
    const budget = 8192;
    const client = await connect('both', budget);
    const { tools } = await client.listTools();
    expect(tools.map((t) => t.name)).toEqual(['read_log', 'run_query', 'mcp_result_budget__read']);
    for (const tool of ['read_log', 'run_query'] as const) {
      const { rebuilt, first } = await followNotice(client, tool, budget);
      expect(((first._meta as Json)[REPORT_KEY] as Json).budget_kind).not.toBe('top_level_field');
      expect(JSON.stringify(rebuilt)).toBe(JSON.stringify(RESULTS[tool]()));
    }
  });

  it('continuation: a proxy with a smaller budget than the server behind it never offers the server\'s positions for a result it cut further', async () => {
    // The server bounds at 64 KiB and offers; the proxy cuts again at 8 KiB. The server's offer no
    // longer counts what the proxy cut: following it rebuilt a wrong original, silently.
    const client = await connect('both', 8192, [], 65536);
    // The proxy learns from tools/list that the server answers the reading tool itself.
    await client.listTools();
    for (const tool of ['read_log', 'run_query'] as const) {
      const first = (await client.callTool({ name: tool, arguments: {} })) as Json;
      expect(Buffer.byteLength(JSON.stringify(first))).toBeLessThanOrEqual(8192);
      const report = (first._meta as Json)[REPORT_KEY] as Json;
      expect(report.continuation, tool).toBeUndefined();
      expect(JSON.stringify(first.content), tool).toContain('call the tool again asking for less');
    }
  });

  it('continuation: --no-continuation keeps today\'s notice and lists no reading tool', async () => {
    const client = await connect('proxy', 8192, ['--no-continuation']);
    const { tools } = await client.listTools();
    expect(tools.map((t) => t.name)).toEqual(['read_log', 'run_query']);
    const r = (await client.callTool({ name: 'read_log', arguments: {} })) as Json;
    const report = (r._meta as Json)[REPORT_KEY] as Json;
    expect(report.continuation).toBeUndefined();
    expect(JSON.stringify(r.content)).toContain('call the tool again asking for less');
  });

  it('continuation: an expired handle gets an error saying it expired and what to do', async () => {
    const client = await connect('proxy', 8192, ['--continuation-ttl-ms', '1000']);
    const first = (await client.callTool({ name: 'read_log', arguments: {} })) as Json;
    const { tool, args } = instruction(first);
    await new Promise((r) => setTimeout(r, 1100));
    const r = (await client.callTool({ name: tool, arguments: args })) as Json;
    expect(r.isError).toBe(true);
    expect(JSON.stringify(r.content)).toMatch(/CONTINUATION_EXPIRED: This continuation handle expired.*Call the original tool again/);
  });

  it('continuation: a handle evicted under the session cap gets an error saying so; the newer one still reads', async () => {
    const client = await connect('proxy', 8192, ['--continuation-max-session-bytes', '200KiB']);
    const older = instruction((await client.callTool({ name: 'read_log', arguments: {} })) as Json);
    const newer = instruction((await client.callTool({ name: 'read_log', arguments: {} })) as Json);
    const r = (await client.callTool({ name: older.tool, arguments: older.args })) as Json;
    expect(r.isError).toBe(true);
    expect(JSON.stringify(r.content)).toMatch(/CONTINUATION_EVICTED: .*newer cut results needed the room/);
    const ok = (await client.callTool({ name: newer.tool, arguments: newer.args })) as Json;
    expect(ok.isError).not.toBe(true);
  });

  it('continuation: a handle from another session and a forged handle are refused, saying what to do', async () => {
    const a = await connect('proxy', 8192);
    const b = await connect('proxy', 8192);
    const fromA = instruction((await a.callTool({ name: 'read_log', arguments: {} })) as Json);
    const r = (await b.callTool({ name: fromA.tool, arguments: fromA.args })) as Json;
    expect(r.isError).toBe(true);
    expect(JSON.stringify(r.content)).toMatch(/CONTINUATION_UNKNOWN: No continuation is held under this handle/);
    const forged = (await a.callTool({ name: fromA.tool, arguments: { handle: 'A'.repeat(22) } })) as Json;
    expect(forged.isError).toBe(true);
    expect(JSON.stringify(forged.content)).toMatch(/CONTINUATION_UNKNOWN: .*Use the handle exactly as a notice or a report gave it/);
    const bad = (await a.callTool({ name: fromA.tool, arguments: { ...fromA.args, path: '/nope', position: 0 } })) as Json;
    expect(JSON.stringify(bad.content)).toMatch(/CONTINUATION_BAD_READ: .*not in what the budget cut/);
  });
});
