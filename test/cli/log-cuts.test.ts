/**
 * `--log-cuts` (and `MCP_BUDGET_LOG_CUTS=1`) on `proxy` and `serve`: one JSON line per cut result
 * on stderr, through the real proxy with the scriptable upstream (a result held whole and one
 * bounded while it streams) and through `serve`.
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { ensureBuilt, repoRoot, runCli } from '../helpers/cli.js';

beforeAll(() => {
  ensureBuilt();
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
});
