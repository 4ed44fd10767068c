import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { InMemoryTransport } from '@modelcontextprotocol/sdk/inMemory.js';
import { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import type { Transport } from '@modelcontextprotocol/sdk/shared/transport.js';
import { afterEach, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { REPORT_KEY } from '../../src/engine/limits.js';
import { withResultBudget, type ResultBudgetOptions } from '../../src/transport/decorator/with-result-budget.js';
import type { ResultReport, WithheldReport } from '../../src/index.js';

/** Every member of the exported WithheldReport type (a member the runtime adds and the type lacks fails the tests below). */
const WITHHELD_MEMBERS: (keyof WithheldReport)[] = ['truncated', 'budget_kind', 'omitted_count', 'omitted_paths', 'omitted_paths_capped', 'error', 'blocked_by', 'continuation', 'applied', 'receipt'];

const bigText = 'line of a listing that forgot to page\n'.repeat(10_000); // ~380 KB

function makeServer(): McpServer {
  const server = new McpServer({ name: 'test', version: '1.0.0' });
  server.registerTool('small', { description: 'fits' }, async () => ({
    content: [{ type: 'text', text: 'hello' }],
  }));
  server.registerTool('big', { description: 'forgets to page' }, async () => ({
    content: [{ type: 'text', text: bigText }],
  }));
  server.registerTool(
    'list_items',
    {
      description: 'typed list; a shorter list still validates',
      outputSchema: { items: z.array(z.object({ id: z.number(), name: z.string() })) },
      annotations: { readOnlyHint: true },
    },
    async () => {
      const structuredContent = { items: Array.from({ length: 5000 }, (_, i) => ({ id: i, name: `item ${i}` })) };
      return { content: [{ type: 'text', text: JSON.stringify(structuredContent) }], structuredContent };
    },
  );
  server.registerTool(
    'report_strict',
    {
      description: 'typed read-only; a shorter list violates minItems',
      inputSchema: { limit: z.number().optional(), cursor: z.string().optional() },
      outputSchema: { items: z.array(z.number()).min(5000) },
      annotations: { readOnlyHint: true },
    },
    async () => ({ content: [], structuredContent: { items: Array.from({ length: 5000 }, (_, i) => i) } }),
  );
  server.registerTool(
    'write_strict',
    {
      description: 'typed mutation; a shorter list violates minItems',
      outputSchema: { id: z.string(), written: z.number(), log: z.array(z.string()).min(1000) },
    },
    async () => ({
      content: [],
      structuredContent: { id: 'batch-7', written: 1000, log: Array.from({ length: 1000 }, (_, i) => `wrote file ${i}`) },
    }),
  );
  server.registerTool('fails', { description: 'huge error' }, async () => {
    throw new Error('x'.repeat(200_000));
  });
  return server;
}

let closers: (() => Promise<void>)[] = [];
afterEach(async () => {
  for (const c of closers) await c();
  closers = [];
});

async function connect(options: ResultBudgetOptions = {}, wrap = true): Promise<Client> {
  const [clientSide, serverSide] = InMemoryTransport.createLinkedPair();
  const server = makeServer();
  await server.connect(wrap ? withResultBudget(serverSide, options) : serverSide);
  const client = new Client({ name: 'c', version: '1.0.0' });
  await client.connect(clientSide as Transport);
  closers.push(() => client.close(), () => server.close());
  return client;
}

describe('withResultBudget over the in-memory transport', () => {
  it('with-result-budget: a result that fits arrives unchanged, without a report', async () => {
    const client = await connect();
    const r = await client.callTool({ name: 'small', arguments: {} });
    expect(r).toEqual({ content: [{ type: 'text', text: 'hello' }] });
  });

  it('with-result-budget: an oversized text result is bounded and reported', async () => {
    const client = await connect({ maxResultBytes: 16 * 1024 });
    const r = await client.callTool({ name: 'big', arguments: {} });
    expect(Buffer.byteLength(JSON.stringify(r))).toBeLessThanOrEqual(16 * 1024);
    const report = (r._meta as Record<string, { truncated: boolean; budget_kind: string }>)[REPORT_KEY]!;
    expect(report.truncated).toBe(true);
    // The block bound scales with maxResultBytes unless set, so the one big block hits it first.
    expect(report.budget_kind).toBe('text_block_bytes');
    const content = r.content as { text: string }[];
    expect(bigText.startsWith(content[0]!.text)).toBe(true);
    expect(content.at(-1)!.text).toMatch(/truncated/);
  });

  it('with-result-budget: without the decorator the same call is unbounded (baseline)', async () => {
    const client = await connect({}, false);
    const r = await client.callTool({ name: 'big', arguments: {} });
    expect((r.content as { text: string }[])[0]!.text).toBe(bigText);
  });

  it('with-result-budget: a typed list that still validates after shrinking is sent, mirror rebuilt', async () => {
    const client = await connect();
    await client.listTools();
    const r = await client.callTool({ name: 'list_items', arguments: {} });
    const sc = r.structuredContent as { items: unknown[] };
    expect(sc.items.length).toBe(200);
    expect(JSON.parse((r.content as { text: string }[])[0]!.text)).toEqual(sc);
    expect(r.isError).toBeUndefined();
  });

  it('with-result-budget: a read-only typed tool whose shrunk result would not validate gets an isError with guidance', async () => {
    const client = await connect();
    await client.listTools();
    const r = await client.callTool({ name: 'report_strict', arguments: {} });
    expect(r.isError).toBe(true);
    expect(r.structuredContent).toBeUndefined();
    // the exported report type names every member a withheld result's report has
    const report = (r._meta as Record<string, ResultReport>)[REPORT_KEY]! as WithheldReport;
    expect(Object.keys(report).filter((k) => !WITHHELD_MEMBERS.includes(k as keyof WithheldReport))).toEqual([]);
    expect(report.error).toBe('result_budget_exceeded');
    expect(report.blocked_by).toMatchObject({ bound: expect.any(String) });
    expect((report.continuation as { narrow_with: string[] }).narrow_with).toEqual(['limit', 'cursor']);
    expect((r.content as { text: string }[])[0]!.text).toMatch(/`limit`, `cursor`/);
  });

  it('with-result-budget: a mutation whose shrunk result would not validate gets a receipt, never advice to retry', async () => {
    const client = await connect();
    await client.listTools();
    const r = await client.callTool({ name: 'write_strict', arguments: {} });
    expect(r.isError).toBe(true);
    const report = (r._meta as Record<string, ResultReport>)[REPORT_KEY]! as WithheldReport;
    expect(Object.keys(report).filter((k) => !WITHHELD_MEMBERS.includes(k as keyof WithheldReport))).toEqual([]);
    expect(report.blocked_by).toMatchObject({ bound: expect.any(String) });
    expect(report.applied).toBe(true);
    expect(report.receipt).toEqual({ id: 'batch-7', written: 1000 });
    expect((r.content as { text: string }[])[0]!.text).toMatch(/Do not call it again/);
  });

  it('with-result-budget: a huge tool error is bounded too', async () => {
    const client = await connect({ maxResultBytes: 8 * 1024 });
    const r = await client.callTool({ name: 'fails', arguments: {} });
    expect(r.isError).toBe(true);
    expect(Buffer.byteLength(JSON.stringify(r))).toBeLessThanOrEqual(8 * 1024);
  });

  it('with-result-budget: responses are matched as a client matches them; duplicates, cancelled and unsolicited ones are dropped', async () => {
    const [a, b] = InMemoryTransport.createLinkedPair();
    const sent: unknown[] = [];
    const errors: string[] = [];
    const decorated = withResultBudget(b, { maxResultBytes: 8 * 1024 });
    decorated.onmessage = () => undefined;
    decorated.onerror = (e) => void errors.push(e.message);
    await decorated.start();
    await a.start();
    a.onmessage = (m) => void sent.push(m);
    const big = { content: [{ type: 'text', text: 'y'.repeat(50_000) }] };
    await a.send({ jsonrpc: '2.0', id: 0, method: 'tools/call', params: { name: 't' } });
    await a.send({ jsonrpc: '2.0', id: '1', method: 'tools/call', params: { name: 't' } });
    await a.send({ jsonrpc: '2.0', id: 2, method: 'tools/call', params: { name: 't' } });
    await a.send({ jsonrpc: '2.0', method: 'notifications/cancelled', params: { requestId: 2 } });
    await decorated.send({ jsonrpc: '2.0', id: 1, result: big }); // answers "1" for a client keyed by name
    await decorated.send({ jsonrpc: '2.0', id: '1', result: big }); // a duplicate now: dropped
    await decorated.send({ jsonrpc: '2.0', id: 0, result: big });
    await decorated.send({ jsonrpc: '2.0', id: 2, result: big }); // cancelled: dropped
    await decorated.send({ jsonrpc: '2.0', id: 3, result: big }); // never asked: dropped
    expect(sent.map((m) => (m as { id: unknown }).id)).toEqual([1, 0]);
    for (const m of sent) expect(JSON.stringify(m).length).toBeLessThanOrEqual(8 * 1024 + 100);
    expect(errors).toHaveLength(3);
    for (const e of errors) expect(e).toMatch(/dropped a response to request .*: no pending request has that id/);
    await decorated.close();
  });

  it('with-result-budget: callbacks set on the inner transport before connect still run', async () => {
    const [a, b] = InMemoryTransport.createLinkedPair();
    const seen: string[] = [];
    b.onmessage = (m) => void seen.push('app:' + (m as { method?: string }).method);
    b.onclose = () => void seen.push('app:close');
    const decorated = withResultBudget(b);
    decorated.onmessage = (m) => void seen.push('sdk:' + (m as { method?: string }).method);
    decorated.onclose = () => void seen.push('sdk:close');
    await decorated.start();
    await a.start();
    await a.send({ jsonrpc: '2.0', method: 'notifications/initialized' });
    await decorated.close();
    expect(seen).toEqual(['app:notifications/initialized', 'sdk:notifications/initialized', 'app:close', 'sdk:close']);
  });
});
