/**
 * withResultBudget over the real stdio transport: test/fixtures/sdk-server.mjs builds an SDK
 * McpServer and connects `withResultBudget(new StdioServerTransport())` from the built package; the
 * SDK Client drives it over StdioClientTransport.
 */
import { fileURLToPath } from 'node:url';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { LoggingMessageNotificationSchema, type CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { afterEach, describe, expect, it } from 'vitest';
import { NOTICE_KEY, REPORT_KEY } from '../../src/engine/limits.js';
import type { BudgetReport } from '../../src/engine/report.js';

const SERVER = fileURLToPath(new URL('../fixtures/sdk-server.mjs', import.meta.url));
const REPO_ROOT = fileURLToPath(new URL('../../', import.meta.url));
const BIG_LINE = 'big result line\n';

type Block = { type: string; text?: string; _meta?: Record<string, unknown> };

const clients: Client[] = [];
afterEach(async () => {
  await Promise.all(clients.splice(0).map((c) => c.close()));
});

async function connect(env: Record<string, string> = {}): Promise<{ client: Client; stderr: () => string }> {
  const transport = new StdioClientTransport({ command: process.execPath, args: [SERVER], env, cwd: REPO_ROOT, stderr: 'pipe' });
  let stderr = '';
  transport.stderr!.on('data', (d: Buffer) => (stderr += d.toString('utf8')));
  const client = new Client({ name: 'decorator-test', version: '1.0.0' });
  await client.connect(transport);
  clients.push(client);
  return { client, stderr: () => stderr };
}

function reportOf(r: CallToolResult): BudgetReport & Record<string, unknown> {
  const report = (r._meta as Record<string, BudgetReport & Record<string, unknown>> | undefined)?.[REPORT_KEY];
  expect(report).toBeDefined();
  return report!;
}

async function until(ok: () => boolean, timeoutMs = 5000): Promise<void> {
  const start = Date.now();
  while (!ok()) {
    if (Date.now() - start > timeoutMs) throw new Error(`condition not met within ${timeoutMs} ms`);
    await new Promise((r) => setTimeout(r, 20));
  }
}

describe('withResultBudget over the real stdio transport', () => {
  it('stdio-decorator: the ./transport entry exports withResultBudget', async () => {
    // A computed specifier: the test type-checks without a build.
    const mod = (await import(new URL('../../dist/transport/index.js', import.meta.url).href)) as Record<string, unknown>;
    expect(typeof mod.withResultBudget).toBe('function');
  });

  it('stdio-decorator: a result that fits arrives unchanged; a 5 MB text arrives bounded, reported, with a notice', async () => {
    const { client, stderr } = await connect();
    expect(await client.callTool({ name: 'small', arguments: {} })).toEqual({ content: [{ type: 'text', text: 'hello' }] });

    const r = (await client.callTool({ name: 'big', arguments: {} })) as CallToolResult;
    expect(Buffer.byteLength(JSON.stringify(r))).toBeLessThanOrEqual(64 * 1024);
    const report = reportOf(r);
    expect(report).toMatchObject({ truncated: true, budget_kind: 'text_block_bytes' });
    expect(report.omitted_paths[0]).toBe('/content/0/text');
    const content = r.content as Block[];
    expect(content).toHaveLength(2);
    expect(BIG_LINE.repeat(3000).startsWith(content[0]!.text!)).toBe(true);
    expect(content[0]!.text!.length).toBeGreaterThan(30_000);
    expect(content[1]!._meta?.[NOTICE_KEY]).toBe(true);
    // onTruncated saw it, with the request id and the tool name.
    await until(() => /sdk-server: truncated id=\d+ tool=big kind=text_block_bytes/.test(stderr()));
  });

  it('stdio-decorator: without the decorator the same server sends all 5 MB (baseline)', async () => {
    const { client } = await connect({ SDK_SERVER_NO_BUDGET: '1' });
    const r = (await client.callTool({ name: 'big', arguments: {} })) as CallToolResult;
    expect((r.content as Block[])[0]!.text!.length).toBe(5 * 1024 * 1024);
    expect(r._meta).toBeUndefined();
  });

  it('stdio-decorator: budget options apply (maxResultBytes, maxBlockBytes, notice off)', async () => {
    const { client } = await connect({ SDK_SERVER_BUDGET: JSON.stringify({ maxResultBytes: 16 * 1024, maxBlockBytes: 2000, notice: false }) });
    const r = (await client.callTool({ name: 'big', arguments: {} })) as CallToolResult;
    expect(Buffer.byteLength(JSON.stringify(r))).toBeLessThanOrEqual(16 * 1024);
    const content = r.content as Block[];
    expect(content).toHaveLength(1);
    expect(Buffer.byteLength(JSON.stringify(content[0]!.text)) - 2).toBeLessThanOrEqual(2000);
    expect(reportOf(r).budget_kind).toBe('text_block_bytes');
  });

  it('stdio-decorator: typed results — a valid shrink passes the client validation, an invalid read-only shrink is an isError', async () => {
    const { client } = await connect();
    await client.listTools(); // the client validates structuredContent from here on
    const list = (await client.callTool({ name: 'list_items', arguments: {} })) as CallToolResult;
    expect(list.isError).toBeUndefined();
    const sc = list.structuredContent as { items: { id: number; name: string }[] };
    expect(sc.items).toHaveLength(200);
    expect(JSON.parse((list.content as Block[])[0]!.text!)).toEqual(sc);

    const strict = (await client.callTool({ name: 'report_strict', arguments: {} })) as CallToolResult;
    expect(strict.isError).toBe(true);
    expect(strict.structuredContent).toBeUndefined();
    expect(reportOf(strict)).toMatchObject({ error: 'result_budget_exceeded', continuation: { narrow_with: ['limit', 'cursor'] } });
  });

  it('stdio-decorator: a thrown 1 MB error becomes a bounded isError result', async () => {
    const { client } = await connect();
    const r = (await client.callTool({ name: 'fails', arguments: {} })) as CallToolResult;
    expect(r.isError).toBe(true);
    expect(Buffer.byteLength(JSON.stringify(r))).toBeLessThanOrEqual(64 * 1024);
    expect(reportOf(r).truncated).toBe(true);
  });

  it('stdio-decorator: concurrent calls each get their own answer; notifications pass', async () => {
    const { client } = await connect();
    const logs: unknown[] = [];
    client.setNotificationHandler(LoggingMessageNotificationSchema, (n) => void logs.push(n.params));
    const names = ['big', 'small', 'big', 'logs', 'small', 'big'];
    const results = (await Promise.all(names.map((name) => client.callTool({ name, arguments: {} })))) as CallToolResult[];
    results.forEach((r, i) => {
      const name = names[i]!;
      if (name === 'big') expect(reportOf(r).truncated).toBe(true);
      else expect(r).toEqual({ content: [{ type: 'text', text: name === 'small' ? 'hello' : 'logged' }] });
    });
    await until(() => logs.length > 0);
    expect(logs).toEqual([{ level: 'info', logger: 'sdk-server', data: 'hello from the sdk server' }]);
  });
});
