/**
 * Stateless Streamable HTTP: the server builds a new transport (and server) for every request, so
 * the decorator around it never sees `tools/list` and cannot learn the output schemas. Given the
 * catalog up front (`tools: await toolCatalogOf(server)`), a typed tool never gets a partial
 * typed success; without it the SDK client rejects the bounded result (-32602). Real HTTP on
 * loopback, the SDK client and server.
 */
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import { StreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/streamableHttp.js';
import { ErrorCode, McpError } from '@modelcontextprotocol/sdk/types.js';
import { afterEach, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { DEFAULT_LIMITS, REPORT_KEY } from '../../src/engine/limits.js';
import { toolCatalogOf, withResultBudget } from '../../src/transport/decorator/with-result-budget.js';

const MAX = DEFAULT_LIMITS.maxResultBytes;

function makeServer(): McpServer {
  const server = new McpServer({ name: 'stateless', version: '1.0.0' });
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
    { description: 'typed mutation', outputSchema: { id: z.string(), written: z.number(), log: z.array(z.string()).min(1000) } },
    async () => ({ content: [], structuredContent: { id: 'batch-7', written: 1000, log: Array.from({ length: 1000 }, (_, i) => `wrote file ${i}`) } }),
  );
  server.registerTool(
    'list_items',
    { description: 'typed list; a shorter list still validates', outputSchema: { items: z.array(z.object({ id: z.number() })) }, annotations: { readOnlyHint: true } },
    async () => {
      const structuredContent = { items: Array.from({ length: 5000 }, (_, i) => ({ id: i })) };
      return { content: [{ type: 'text', text: JSON.stringify(structuredContent) }], structuredContent };
    },
  );
  return server;
}

const servers: Server[] = [];
afterEach(async () => {
  await Promise.all(servers.splice(0).map((s) => new Promise((r) => s.close(r))));
});

/** A stateless Streamable HTTP endpoint: a new server and transport per request. */
async function statelessEndpoint(withCatalog: boolean): Promise<URL> {
  const http = createServer((req, res) => {
    void (async () => {
      const server = makeServer();
      const transport = new StreamableHTTPServerTransport({ sessionIdGenerator: undefined, enableJsonResponse: true });
      const tools = withCatalog ? await toolCatalogOf(server) : undefined;
      // A transport per request: no handle could be read back, so no continuation (as the README advises).
      const budgeted = withResultBudget(transport, { maxResultBytes: MAX, continuation: false, ...(tools ? { tools } : {}) });
      await server.connect(budgeted);
      res.on('close', () => void server.close());
      // The decorated transport keeps the wrapped one's members, typed: `handleRequest` reaches it.
      await budgeted.handleRequest(req, res);
    })();
  });
  servers.push(http);
  await new Promise<void>((r) => http.listen(0, '127.0.0.1', r));
  return new URL(`http://127.0.0.1:${(http.address() as AddressInfo).port}/mcp`);
}

/** An SDK client that has listed the tools (so it validates typed results, as hosts do). */
async function connect(url: URL): Promise<Client> {
  const client = new Client({ name: 'stateless-test', version: '1.0.0' });
  await client.connect(new StreamableHTTPClientTransport(url));
  await client.listTools();
  return client;
}

describe('stateless Streamable HTTP', () => {
  it('stateless-http: toolCatalogOf gives what tools/list lists', async () => {
    const server = makeServer();
    const listed = await toolCatalogOf(server);
    expect(listed.tools.map((t) => (t as { name: string }).name)).toEqual(['report_strict', 'write_strict', 'list_items']);
    const strict = listed.tools[0] as { outputSchema?: { properties?: { items?: { minItems?: number } } }; annotations?: unknown };
    expect(strict.outputSchema?.properties?.items?.minItems).toBe(5000);
    expect(strict.annotations).toEqual({ readOnlyHint: true });
  });

  it('stateless-http: without the catalog the client rejects a partial typed success (-32602): the baseline', async () => {
    const client = await connect(await statelessEndpoint(false));
    try {
      const e = await client.callTool({ name: 'report_strict', arguments: {} }).then(
        () => undefined,
        (err: unknown) => err,
      );
      expect(e).toBeInstanceOf(McpError);
      expect((e as McpError).code).toBe(ErrorCode.InvalidParams);
    } finally {
      await client.close();
    }
  });

  it('stateless-http: with the catalog, typed tools get a valid shrink, an isError with guidance, or a receipt', async () => {
    const client = await connect(await statelessEndpoint(true));
    try {
      const strict = await client.callTool({ name: 'report_strict', arguments: {} });
      expect(strict.isError).toBe(true);
      const report = (strict._meta as Record<string, Record<string, unknown>>)[REPORT_KEY]!;
      expect(report.error).toBe('result_budget_exceeded');
      expect(report.continuation).toEqual({ narrow_with: ['limit', 'cursor'] });

      const write = await client.callTool({ name: 'write_strict', arguments: {} });
      expect(write.isError).toBe(true);
      expect((write._meta as Record<string, Record<string, unknown>>)[REPORT_KEY]!.receipt).toMatchObject({ id: 'batch-7', written: 1000 });

      const list = await client.callTool({ name: 'list_items', arguments: {} });
      expect(list.isError, JSON.stringify(list).slice(0, 600)).toBeUndefined();
      const items = (list.structuredContent as { items: unknown[] }).items;
      expect(items.length).toBeGreaterThan(0);
      expect(items.length).toBeLessThan(5000);
      expect(Buffer.byteLength(JSON.stringify(list))).toBeLessThanOrEqual(MAX);
    } finally {
      await client.close();
    }
  });
});
