/** JSON-RPC error answers of the HTTP front, shaped like the MCP SDK's own (`id: null`). */
import type { ServerResponse } from 'node:http';

/** Answer `status` with a JSON-RPC error body (`id: null`: the request was not read, or not as one message). */
export function sendJsonError(res: ServerResponse, status: number, code: number, message: string): void {
  const body = JSON.stringify({ jsonrpc: '2.0', error: { code, message }, id: null });
  res.writeHead(status, { 'Content-Type': 'application/json', 'Content-Length': Buffer.byteLength(body) });
  res.end(body);
}
