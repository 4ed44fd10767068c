/**
 * The proxy over HTTP, real processes on loopback: `proxy --listen -- COMMAND` in front of the
 * stdio fixture server bounds a huge result for an HTTP client; SIGTERM with a request in flight
 * answers it with a JSON-RPC error and exits 0; `proxy --upstream-url` in front of
 * `serve --listen` bounds results for a stdio client.
 */
import { spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { REPORT_KEY } from '../../src/engine/limits.js';
import { cleanEnv, cliPath, ensureBuilt, repoRoot } from '../helpers/cli.js';
import { connect, killAll, removeStateDir, startListening, stateDir } from './http-harness.js';

const UPSTREAM = join(repoRoot, 'test', 'fixtures', 'upstream-server.mjs');
let dir: string;

beforeAll(() => {
  ensureBuilt();
  dir = mkdtempSync(join(tmpdir(), 'mcp-budget-http-proxy-'));
  writeFileSync(join(dir, 'big.txt'), 'y'.repeat(300_000));
});

afterAll(() => {
  killAll();
  rmSync(dir, { recursive: true, force: true });
  removeStateDir();
});

describe('proxy --listen -- COMMAND', () => {
  it('bounds a 20 MB result of a stdio server for an HTTP client', async () => {
    const p = await startListening(['proxy', '--max-bytes', '32KiB', '--listen', '127.0.0.1:0', '--', process.execPath, UPSTREAM]);
    const client = await connect(p.url);
    const tools = await client.listTools();
    expect(tools.tools.map((t) => t.name)).toContain('huge_text');
    const r = await client.callTool({ name: 'huge_text', arguments: { mb: 20 } });
    expect(JSON.stringify(r).length).toBeLessThanOrEqual(32 * 1024);
    expect((r._meta as Record<string, { truncated?: boolean }>)[REPORT_KEY]?.truncated).toBe(true);
    const small = await client.callTool({ name: 'small', arguments: {} });
    expect(small.isError).not.toBe(true);
    await client.close();
    expect(await p.stop()).toBe(0);
  });

  it('SIGTERM with a request in flight: the request gets a JSON-RPC error, the process exits 0', async () => {
    const p = await startListening(['proxy', '--listen', '127.0.0.1:0', '--shutdown-ms', '300', '--', process.execPath, UPSTREAM]);
    const client = await connect(p.url);
    const inflight = client.callTool({ name: 'slow', arguments: {} }).then(
      (r) => ({ ok: r }),
      (e: unknown) => ({ error: e as Error }),
    );
    while (!p.stderr().includes('upstream: slow started')) await new Promise((r) => setTimeout(r, 20));
    const t0 = Date.now();
    const exited = p.stop('SIGTERM');
    const outcome = await inflight;
    expect('error' in outcome ? outcome.error.message : 'answered').toMatch(/Server shutting down/);
    expect(await exited).toBe(0);
    expect(Date.now() - t0).toBeLessThan(8000);
    await client.close().catch(() => undefined);
  });
});

describe('proxy --upstream-url', () => {
  it('bounds the results of a remote serve --listen for a stdio client', async () => {
    const s = await startListening(['serve', '--root', dir, '--max-bytes', '256KiB', '--listen', '127.0.0.1:0']);
    const transport = new StdioClientTransport({
      command: process.execPath,
      args: [cliPath, 'proxy', '--max-bytes', '8KiB', '--upstream-url', s.url.href],
      env: cleanEnv({ XDG_STATE_HOME: stateDir() }) as Record<string, string>,
      stderr: 'pipe',
    });
    const client = new Client({ name: 'stdio-via-proxy', version: '1.0.0' });
    await client.connect(transport);
    const tools = await client.listTools();
    expect(tools.tools.map((t) => t.name)).toContain('workspace_read_file');
    const r = await client.callTool({ name: 'workspace_read_file', arguments: { path: 'big.txt', max_bytes: 200_000 } });
    expect(JSON.stringify(r).length).toBeLessThanOrEqual(8 * 1024);
    const list = await client.callTool({ name: 'workspace_list_dir', arguments: {} });
    expect(list.isError).not.toBe(true);
    await client.close();
    expect(await s.stop()).toBe(0);
  });

  it('proxy --listen --upstream-url: an HTTP client through two HTTP hops, bounded', async () => {
    const s = await startListening(['serve', '--root', dir, '--max-bytes', '256KiB', '--listen', '127.0.0.1:0']);
    const p = await startListening(['proxy', '--max-bytes', '8KiB', '--listen', '127.0.0.1:0', '--upstream-url', s.url.href]);
    const client = await connect(p.url);
    const r = await client.callTool({ name: 'workspace_read_file', arguments: { path: 'big.txt', max_bytes: 200_000 } });
    expect(JSON.stringify(r).length).toBeLessThanOrEqual(8 * 1024);
    await client.close();
    expect(await p.stop()).toBe(0);
    expect(await s.stop()).toBe(0);
  });
});

describe('proxy --upstream-url nobody answers', () => {
  it('is a startup error naming the URL and the reason (exit 1), over stdio and with --listen', async () => {
    // a port nothing listens on: take one from the OS, then close it
    const { createServer } = await import('node:net');
    const port = await new Promise<number>((resolve) => {
      const srv = createServer().listen(0, '127.0.0.1', () => {
        const p = (srv.address() as { port: number }).port;
        srv.close(() => resolve(p));
      });
    });
    const url = `http://127.0.0.1:${port}/mcp`;
    for (const extra of [[], ['--listen', '127.0.0.1:0']]) {
      const t0 = Date.now();
      const r = spawnSync(process.execPath, [cliPath, 'proxy', '--upstream-url', url, ...extra], { env: cleanEnv(), encoding: 'utf8', timeout: 20_000, input: '' });
      expect(r.status, r.stderr).toBe(1);
      expect(r.stderr).toContain(`cannot reach the upstream ${url} (ECONNREFUSED)`);
      expect(Date.now() - t0).toBeLessThan(10_000);
    }
  });
});

describe('proxy COMMAND without --', () => {
  it('the command starts at the first word that is not our flag or its value (a launcher may consume --), and flags after it are the command\'s', async () => {
    const transport = new StdioClientTransport({
      command: process.execPath,
      args: [cliPath, 'proxy', '--max-bytes', '8KiB', '--log-cuts', process.execPath, UPSTREAM, '--not-ours'],
      env: cleanEnv({ XDG_STATE_HOME: stateDir() }) as Record<string, string>,
      stderr: 'pipe',
    });
    const client = new Client({ name: 'no-separator', version: '1.0.0' });
    await client.connect(transport);
    try {
      const { tools } = await client.listTools();
      expect(tools.length).toBeGreaterThan(0);
    } finally {
      await client.close();
    }
    // an unknown flag before any command is still a usage error
    const r = spawnSync(process.execPath, [cliPath, 'proxy', '--nope', 'node', 'x.js'], { env: cleanEnv(), encoding: 'utf8', input: '' });
    expect(r.status).toBe(2);
    expect(r.stderr).toMatch(/Unknown argument `--nope` for proxy/);
  });
});
