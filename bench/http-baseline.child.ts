/**
 * The baseline server of `bench/http.bench.ts`: the same workspace `McpServer` (same tools) on the
 * MCP SDK's `StreamableHTTPServerTransport` directly, one server per session, on a plain Node HTTP
 * server: no result budget, no allow-lists, no body cap of ours. Prints `listening on URL` on
 * stderr. Run: node --import tsx bench/http-baseline.child.ts ROOT
 */
import { randomUUID } from 'node:crypto';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { StreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/streamableHttp.js';
import { createWorkspaceServer } from '../dist/server/create-server.js';

const root = process.argv[2]!;
const sessions = new Map<string, StreamableHTTPServerTransport>();
const http = createServer((req, res) => {
  void (async () => {
    const sid = req.headers['mcp-session-id'];
    let transport = typeof sid === 'string' ? sessions.get(sid) : undefined;
    if (transport === undefined) {
      const t = new StreamableHTTPServerTransport({ sessionIdGenerator: () => randomUUID(), onsessioninitialized: (id) => void sessions.set(id, t) });
      const ws = await createWorkspaceServer(root);
      await ws.server.connect(t); // no withResultBudget
      transport = t;
    }
    await transport.handleRequest(req, res);
  })();
});
http.listen(0, '127.0.0.1', () => {
  process.stderr.write(`listening on http://127.0.0.1:${(http.address() as AddressInfo).port}/mcp\n`);
});
process.on('SIGTERM', () => process.exit(0));
