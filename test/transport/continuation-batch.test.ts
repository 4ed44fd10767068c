/**
 * A call of the reading tool inside a JSON-RPC batch (protocol 2025-03-26) is answered by the
 * stdio proxy itself, never passed on to the server (a handle is the session's): its answer comes
 * back as a batch of its own (the server, which has no such tool, would answer an error), and the
 * rest of the batch goes on to the server.
 */
import { fileURLToPath } from 'node:url';
import { afterEach, expect, it } from 'vitest';
import { REPORT_KEY } from '../../src/engine/limits.js';
import { StdioPeer, killAllPeers } from '../helpers/stdio-peer.js';
import { ensureBuilt } from '../helpers/cli.js';

const SERVER = fileURLToPath(new URL('../fixtures/pageless-server.mjs', import.meta.url));

afterEach(killAllPeers);

it('a read call in a batch is answered by the proxy, as a batch of its own', async () => {
  ensureBuilt();
  const peer = StdioPeer.proxy(['--max-bytes', '8KiB'], {}, [process.execPath, SERVER]);
  await peer.initialize('2025-03-26');
  const { msg } = await peer.callTool(2, 'read_log');
  const handle = ((msg.result?._meta as Record<string, unknown>)[REPORT_KEY] as { continuation: { handle: string } }).continuation.handle;
  peer.send(JSON.stringify([
    { jsonrpc: '2.0', id: 3, method: 'tools/call', params: { name: 'mcp_result_budget__read', arguments: { handle } } },
    { jsonrpc: '2.0', id: 4, method: 'tools/list' },
  ]));
  const batch = await peer.until(() => {
    const parsed = peer.lines.map((l) => JSON.parse(l.toString('utf8')) as unknown);
    return parsed.find((m) => Array.isArray(m) && m.some((x) => (x as { id?: unknown }).id === 3)) as { id: number; result: { structuredContent?: { kind?: string } } }[] | undefined;
  }, 'the batch answer');
  expect(batch).toHaveLength(1);
  expect(batch[0]!.result.structuredContent?.kind).toBe('string');
});
