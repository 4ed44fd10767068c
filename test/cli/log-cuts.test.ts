/**
 * `--log-cuts` (and `MCP_BUDGET_LOG_CUTS=1`) on `proxy` and `serve`: one JSON line per cut result
 * on stderr, through the real proxy with the scriptable upstream (a result held whole and one
 * bounded while it streams) and through `serve`; over Streamable HTTP in every mode, each line
 * naming the session it was cut in.
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ensureBuilt, repoRoot, runCli } from '../helpers/cli.js';
import { connect, killAll, removeStateDir, startListening } from '../transport/http-harness.js';

beforeAll(() => {
  ensureBuilt();
});

afterAll(() => {
  killAll();
  removeStateDir();
});

const upstream = join(repoRoot, 'test', 'fixtures', 'upstream-server.mjs');

function call(id: number, name: string, args: Record<string, unknown> = {}): string {
  return JSON.stringify({ jsonrpc: '2.0', id, method: 'tools/call', params: { name, arguments: args } }) + '\n';
}

function cuts(stderr: string): Record<string, unknown>[] {
  return stderr.split('\n').filter((l) => l.startsWith('{"event":"cut"')).map((l) => JSON.parse(l) as Record<string, unknown>);
}

describe('--log-cuts', { timeout: 60_000 }, () => {
  it('log-cuts: the proxy logs one line per cut, in memory and streaming, none for a result that fits', () => {
    const input = call(1, 'small') + call(2, 'sized_text', { bytes: 200_000 }) + call(3, 'huge_text', { mb: 2 });
    for (const [flags, env] of [[['--log-cuts'], {}], [[], { MCP_BUDGET_LOG_CUTS: '1' }]] as const) {
      const r = runCli(['proxy', '--max-bytes', '16KiB', ...flags, '--', process.execPath, upstream], { input, env });
      expect(r.stdout.trim().split('\n')).toHaveLength(3);
      const lines = cuts(r.stderr);
      expect(lines.map((l) => l.id)).toEqual([2, 3]);
      const [held, streamed] = lines;
      expect(held).toMatchObject({ event: 'cut', tool: 'sized_text', budget_kind: expect.any(String), omitted_count: expect.any(Number) });
      expect(held!.bytes_before).toBeGreaterThan(200_000);
      expect(held!.bytes_after).toBeLessThanOrEqual(16 * 1024);
      // Streaming: bytes_before is the whole response line as read.
      expect(streamed).toMatchObject({ event: 'cut', tool: 'huge_text' });
      expect(streamed!.bytes_before).toBeGreaterThan(2 * 1024 * 1024);
      expect(streamed!.bytes_after).toBeLessThanOrEqual(16 * 1024);
      expect(Object.keys(held!)).toEqual(['event', 'tool', 'id', 'bytes_before', 'bytes_after', 'budget_kind', 'omitted_count']);
    }
  });

  it('log-cuts: off by default', () => {
    const r = runCli(['proxy', '--max-bytes', '16KiB', '--', process.execPath, upstream], { input: call(2, 'sized_text', { bytes: 200_000 }) });
    expect(r.stdout).toContain('"id":2');
    expect(cuts(r.stderr)).toEqual([]);
  });

  it('log-cuts: serve takes the flag; its paged tools fit, so nothing is logged', () => {
    const root = mkdtempSync(join(tmpdir(), 'log-cuts-'));
    try {
      writeFileSync(join(root, 'big.txt'), 'x'.repeat(200_000));
      const init = JSON.stringify({ jsonrpc: '2.0', id: 0, method: 'initialize', params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 't', version: '1' } } }) + '\n';
      const inited = JSON.stringify({ jsonrpc: '2.0', method: 'notifications/initialized' }) + '\n';
      const r = runCli(['serve', '--root', root, '--max-bytes', '8KiB', '--log-cuts'], { input: init + inited + call(1, 'workspace_read_file', { path: 'big.txt' }) });
      expect(r.code).toBe(0);
      expect(r.stdout).toContain('"id":1');
      expect(cuts(r.stderr)).toEqual([]);
    } finally {
      rmSync(root, { recursive: true, force: true });
    }
  });

  it('log-cuts over HTTP: proxy --listen -- COMMAND logs each cut with the session it was cut in', async () => {
    const p = await startListening(['proxy', '--max-bytes', '16KiB', '--log-cuts', '--listen', '127.0.0.1:0', '--', process.execPath, upstream]);
    try {
      const a = await connect(p.url);
      const b = await connect(p.url);
      await a.callTool({ name: 'sized_text', arguments: { bytes: 200_000 } });
      await b.callTool({ name: 'huge_text', arguments: { mb: 2 } });
      await a.callTool({ name: 'small', arguments: {} });
      const sessions = [(a.transport as { sessionId?: string }).sessionId, (b.transport as { sessionId?: string }).sessionId];
      await a.close();
      await b.close();
      await waitFor(() => cuts(p.stderr()).length >= 2);
      const lines = cuts(p.stderr());
      expect(lines.map((l) => [l.tool, l.session])).toEqual([['sized_text', sessions[0]], ['huge_text', sessions[1]]]);
      for (const l of lines) expect(l.bytes_after).toBeLessThanOrEqual(16 * 1024);
    } finally {
      expect(await p.stop()).toBe(0);
    }
  });

  it('log-cuts over HTTP: proxy --upstream-url in front of serve --listen; serve --listen takes the flag too', async () => {
    const root = mkdtempSync(join(tmpdir(), 'log-cuts-http-'));
    writeFileSync(join(root, 'big.txt'), 'y'.repeat(300_000));
    const s = await startListening(['serve', '--root', root, '--max-bytes', '256KiB', '--log-cuts', '--listen', '127.0.0.1:0']);
    const p = await startListening(['proxy', '--max-bytes', '8KiB', '--listen', '127.0.0.1:0', '--upstream-url', s.url.href], { MCP_BUDGET_LOG_CUTS: '1' });
    try {
      const client = await connect(p.url);
      await client.callTool({ name: 'workspace_read_file', arguments: { path: 'big.txt', max_bytes: 200_000 } });
      const session = (client.transport as { sessionId?: string }).sessionId;
      await client.close();
      await waitFor(() => cuts(p.stderr()).length >= 1);
      expect(cuts(p.stderr())).toEqual([expect.objectContaining({ event: 'cut', tool: 'workspace_read_file', session })]);
      // serve pages its own results to its budget: nothing of it was cut.
      expect(cuts(s.stderr())).toEqual([]);
    } finally {
      expect(await p.stop()).toBe(0);
      expect(await s.stop()).toBe(0);
      rmSync(root, { recursive: true, force: true });
    }
  });
});

/** Wait until `done()` holds (stderr arrives after the answer it logs), or 5 s. */
async function waitFor(done: () => boolean): Promise<void> {
  for (let i = 0; i < 100 && !done(); i++) await new Promise((r) => setTimeout(r, 50));
}
