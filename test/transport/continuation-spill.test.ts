/**
 * Where cut results are kept: a private spill directory (mode 0700, files 0600, removed when the
 * process exits, stale ones of dead processes swept at start-up, links and other users' entries
 * never touched), the process cap counting originals still being written, reads of one handle
 * at once, and a full disk, on a real tmpfs, as a clear warning and a result without a handle.
 */
import { execFileSync, spawnSync } from 'node:child_process';
import { existsSync, lstatSync, mkdirSync, mkdtempSync, readdirSync, rmSync, statSync, symlinkSync, utimesSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { REPORT_KEY } from '../../src/engine/limits.js';
import { resolveLimits } from '../../src/engine/options.js';
import { isBudgetError } from '../../src/engine/errors.js';
import { ConnectionContinuation } from '../../src/transport/core/continuation.js';
import { ContinuationStore } from '../../src/transport/core/continuation-store.js';
import { ensureBuilt } from '../helpers/cli.js';

type Json = Record<string, unknown>;

const CLI = fileURLToPath(new URL('../../dist/cli.js', import.meta.url));
const SERVER = fileURLToPath(new URL('../fixtures/pageless-server.mjs', import.meta.url));
const REPO_ROOT = fileURLToPath(new URL('../../', import.meta.url));

let base: string;
beforeAll(() => {
  ensureBuilt();
  base = mkdtempSync(join(tmpdir(), 'spill-test-'));
});
afterAll(() => rmSync(base, { recursive: true, force: true }));

function mode(path: string): number {
  return statSync(path).mode & 0o777;
}

describe('continuation spill files', () => {
  it('continuation-spill: originals go to 0600 files of one 0700 directory, unlinked when their entry goes', async () => {
    const dir = mkdtempSync(join(base, 'a-'));
    const store = new ContinuationStore({ dir });
    const held = store.hold(Buffer.from(JSON.stringify({ content: [{ type: 'text', text: 'x'.repeat(5000) }] })));
    const spill = store.spillPath!;
    expect(spill.startsWith(join(dir, 'mcp-budget-spill-'))).toBe(true);
    expect(mode(spill)).toBe(0o700);
    const [file] = readdirSync(spill);
    expect(mode(join(spill, file!))).toBe(0o600);
    const e = store.put('s', undefined, held, [{ path: '/content/0/text', position: 10 }]);
    expect((await e.reader.held.read(0, 20)).toString()).toBe('{"content":[{"type":');
    store.dropSession('s');
    expect(readdirSync(spill)).toEqual([]);
  });

  it('continuation-spill: the directory is removed when the process exits; a dead process\'s left for a day is swept at start-up, a recent one\'s, a live one\'s and a link are not', () => {
    const dir = mkdtempSync(join(base, 'b-'));
    const script = `
      import { ContinuationStore } from ${JSON.stringify(new URL('../../dist/transport/core/continuation-store.js', import.meta.url).href)};
      const s = new ContinuationStore({ dir: process.argv[1] });
      s.hold(Buffer.from('"abc"'));
      console.log(s.spillPath);`;
    const first = execFileSync(process.execPath, ['--input-type=module', '-e', script, dir], { encoding: 'utf8' }).trim();
    expect(first.startsWith(dir)).toBe(true);
    expect(existsSync(first)).toBe(false);
    // Left behind by a process killed before it could clean up (pid 2^22+1 runs nowhere).
    const stale = join(dir, 'mcp-budget-spill-4194305-AbC123');
    mkdirSync(join(stale, 'x'), { recursive: true });
    const dayAgo = new Date(Date.now() - 25 * 3600 * 1000);
    utimesSync(stale, dayAgo, dayAgo);
    // A dead pid's directory changed within the day may be a live process of another PID namespace.
    const recent = join(dir, 'mcp-budget-spill-4194307-ReC456');
    mkdirSync(recent);
    const live = join(dir, `mcp-budget-spill-${process.pid}-XyZ789`);
    mkdirSync(live);
    const target = mkdtempSync(join(base, 'target-'));
    symlinkSync(target, join(dir, 'mcp-budget-spill-4194306-LnK000'));
    execFileSync(process.execPath, ['--input-type=module', '-e', script, dir], { encoding: 'utf8' });
    expect(existsSync(stale)).toBe(false);
    expect(existsSync(recent)).toBe(true);
    expect(existsSync(live)).toBe(true);
    expect(lstatSync(join(dir, 'mcp-budget-spill-4194306-LnK000')).isSymbolicLink()).toBe(true);
    expect(existsSync(target)).toBe(true);
  });

  it('continuation-spill: the process cap counts originals still being written; one that would pass it gives way', () => {
    const store = new ContinuationStore({ maxProcessBytes: 100_000, maxSessionBytes: 100_000, maxResultBytes: 100_000, memory: true });
    const a = store.writer();
    const b = store.writer();
    a.write(Buffer.alloc(60_000, 0x20));
    let code: string | undefined;
    try {
      b.write(Buffer.alloc(60_000, 0x20));
    } catch (e) {
      code = isBudgetError(e) ? e.code : String(e);
    }
    expect(code).toBe('CONTINUATION_TOO_LARGE');
    a.abort();
    // The room the abandoned writes took is free again.
    const c = store.writer();
    c.write(Buffer.alloc(90_000, 0x20));
    c.abort();
  });

  it('continuation-spill: two reads of one handle at once each get their own part, whatever the order they finish', async () => {
    const store = new ContinuationStore({ memory: true });
    const c = new ConnectionContinuation(store);
    const items = Array.from({ length: 3000 }, (_, i) => ({ i, s: 'é'.repeat(i % 40) }));
    const text = 'ab€😀'.repeat(30_000);
    const original = { content: [{ type: 'text', text }], structuredContent: { items } };
    const sent = { content: [{ type: 'text', text: text.slice(0, 10) }], structuredContent: { items: items.slice(0, 5) }, _meta: { [REPORT_KEY]: { truncated: true, budget_kind: 'text_block_bytes', omitted_count: 2, omitted_paths: [], omitted_paths_capped: false } } };
    const limits = resolveLimits({ maxResultBytes: 8192 });
    const offered = c.offer(original, sent, limits, undefined);
    const handle = ((offered._meta as Json)[REPORT_KEY] as { continuation: { handle: string } }).continuation.handle;
    const call = (args: Json): Promise<Json> => c.answer({ jsonrpc: '2.0', id: 1, method: 'tools/call', params: { name: 'mcp_result_budget__read', arguments: { handle, ...args } } }, limits, undefined);
    const asks = [
      { path: '/structuredContent/items', position: 2500 },
      { path: '/content/0/text', position: 39_996 },
      { path: '/structuredContent/items', position: 5 },
      { path: '/content/0/text', position: 18 },
    ];
    for (let round = 0; round < 5; round++) {
      const answers = await Promise.all(asks.map((a) => call(a)));
      for (const [k, r] of answers.entries()) {
        expect((r.result as Json).isError, JSON.stringify(r.result)).toBeUndefined();
        const a = (r.result as Json).structuredContent as { path: string; position: number; text?: string; items?: unknown[] };
        expect(a.position).toBe(asks[k]!.position);
        if (a.items !== undefined) expect(a.items[0]).toEqual(items[a.position]);
        else expect(Buffer.from(text).subarray(a.position, a.position + Buffer.byteLength(a.text!)).toString()).toBe(a.text);
      }
    }
  });
});

/** A 1 MiB tmpfs, when this process may mount one (root in a container that allows it). */
function smallDisk(): string | undefined {
  const at = mkdtempSync(join(tmpdir(), 'spill-disk-'));
  const r = spawnSync('mount', ['-t', 'tmpfs', '-o', 'size=1m', 'tmpfs', at]);
  return r.status === 0 ? at : undefined;
}

describe('continuation on a full disk', { timeout: 60_000 }, () => {
  const disk = smallDisk();
  afterAll(() => {
    if (disk !== undefined) spawnSync('umount', [disk]);
    if (disk !== undefined) rmSync(disk, { recursive: true, force: true });
  });

  it.skipIf(disk === undefined)('continuation-spill: a full disk is a clear warning, the result goes out cut without a handle, and the next result that fits is kept', async () => {
    const transport = new StdioClientTransport({
      command: process.execPath,
      args: [CLI, 'proxy', '--max-bytes', '32768', '--continuation-dir', disk!, '--', process.execPath, SERVER],
      env: { ...(process.env as Record<string, string>), PAGELESS_SCALE: '12' },
      cwd: REPO_ROOT,
      stderr: 'pipe',
    });
    let stderr = '';
    transport.stderr!.on('data', (d: Buffer) => (stderr += d.toString()));
    const client = new Client({ name: 'disk', version: '1' });
    await client.connect(transport);
    try {
      // 1.4 MB: streamed, and larger than the disk.
      const big = (await client.callTool({ name: 'read_log', arguments: {} })) as Json;
      const report = (big._meta as Json)[REPORT_KEY] as Json;
      expect(report.truncated).toBe(true);
      expect(report.continuation).toBeUndefined();
      expect(JSON.stringify(big.content)).toContain('call the tool again asking for less');
      expect(stderr).toMatch(/the disk holding the spill directory is full/);
      // The disk is free again (the partial file went): a result that fits on it gets its handle.
      expect(readdirSync(readdirSync(disk!).map((d) => join(disk!, d))[0]!)).toEqual([]);
    } finally {
      await client.close();
    }
  });
});
