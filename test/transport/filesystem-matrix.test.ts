/**
 * The end-to-end matrix: `@modelcontextprotocol/server-filesystem` behind `mcp-budget proxy` at
 * --max-bytes 8, 16, 32 and 64 KiB, every one of its tools called on a large tree through the SDK
 * `Client` (which validates every result against the tool's output schema). Zero client-side
 * errors; every result within the budget; typed tools answer typed successes (a schema-valid
 * shrink of their structure always exists here: their outputs are strings and arrays).
 * A tool the server adds later fails the test until it has a call here.
 */
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { REPORT_KEY } from '../../src/engine/limits.js';
import { CLI, REPO_ROOT } from '../helpers/stdio-peer.js';

const require = createRequire(import.meta.url);

function binOf(pkg: string): string {
  const manifest = require.resolve(`${pkg}/package.json`);
  const { bin } = JSON.parse(readFileSync(manifest, 'utf8')) as { bin: string | Record<string, string> };
  return join(dirname(manifest), typeof bin === 'string' ? bin : Object.values(bin)[0]!);
}

let root: string;
const DIRS = 30;
const FILES = 200;

/** Arguments for each tool (a call that returns a large result wherever the tool can). */
function callsFor(r: string, run: string): Record<string, Record<string, unknown>[]> {
  return {
    read_file: [{ path: join(r, 'notes.txt') }],
    read_text_file: [{ path: join(r, 'notes.txt') }, { path: join(r, 'notes.txt'), head: 5 }],
    read_media_file: [{ path: join(r, 'photo.png') }, { path: join(r, 'tiny.png') }],
    read_multiple_files: [{ paths: [join(r, 'notes.txt'), join(r, 'quotes.txt'), join(r, 'missing.txt')] }],
    write_file: [{ path: join(r, 'out', `${run}-w.txt`), content: 'x'.repeat(100_000) }],
    edit_file: [{ path: join(r, 'edit.txt'), edits: [{ oldText: 'line', newText: `edited ${run}` }], dryRun: true }],
    create_directory: [{ path: join(r, 'out', `${run}-dir`) }],
    list_directory: [{ path: join(r, 'directory-000') }, { path: r }],
    list_directory_with_sizes: [{ path: join(r, 'directory-001') }],
    directory_tree: [{ path: r }],
    move_file: [{ source: join(r, 'out', `${run}-w.txt`), destination: join(r, 'out', `${run}-moved.txt`) }],
    search_files: [{ path: r, pattern: '**/*.txt' }],
    get_file_info: [{ path: join(r, 'notes.txt') }],
    list_allowed_directories: [{}],
  };
}

beforeAll(() => {
  root = mkdtempSync(join(tmpdir(), 'mcp-budget-fsmatrix-'));
  for (let d = 0; d < DIRS; d++) {
    const dir = join(root, `directory-${String(d).padStart(3, '0')}`);
    mkdirSync(dir);
    for (let f = 0; f < FILES; f++) writeFileSync(join(dir, `entry "quoted" \\ ünï ${String(f).padStart(4, '0')}.txt`), 'content\n');
  }
  mkdirSync(join(root, 'out'));
  writeFileSync(join(root, 'notes.txt'), 'a line of notes with "quotes" and \\ backslashes\n'.repeat(8_000));
  writeFileSync(join(root, 'quotes.txt'), '"\u0001\u0002'.repeat(20_000)); // with notes.txt: a line over the 1 MiB fast path (streamed)
  writeFileSync(join(root, 'edit.txt'), 'line\n'.repeat(20_000));
  writeFileSync(join(root, 'tiny.png'), Buffer.from('89504e470d0a1a0a0000000d49484452', 'hex'));
  writeFileSync(join(root, 'photo.png'), Buffer.alloc(300_000, 7));
});
afterAll(() => rmSync(root, { recursive: true, force: true }));

describe.each([8, 16, 32, 64])('proxy --max-bytes %iKiB → server-filesystem, every tool', (kib) => {
  let client: Client;
  let tools: { name: string; outputSchema?: unknown }[];
  beforeAll(async () => {
    const transport = new StdioClientTransport({
      command: process.execPath,
      args: [CLI, 'proxy', '--max-bytes', `${kib}KiB`, '--', process.execPath, binOf('@modelcontextprotocol/server-filesystem'), root],
      cwd: REPO_ROOT,
      stderr: 'pipe',
    });
    transport.stderr!.on('data', () => undefined);
    client = new Client({ name: 'fs-matrix', version: '1.0.0' });
    await client.connect(transport);
    tools = (await client.listTools()).tools;
  });
  afterAll(async () => client?.close());

  it('every tool answers without a client-side error, within the budget, typed tools with typed successes', async () => {
    const calls = callsFor(root, `m${kib}`);
    // The proxy's own reading tool needs a handle from a cut result: the continuation tests call it.
    expect(tools.map((t) => t.name).filter((n) => calls[n] === undefined && n !== 'mcp_result_budget__read'), 'tools without a call in this matrix').toEqual([]);
    const outcomes: string[] = [];
    for (const tool of tools) {
      for (const args of calls[tool.name] ?? []) {
        // The SDK client validates structuredContent against the output schema: a broken shrink throws here.
        const r = (await client.callTool({ name: tool.name, arguments: args })) as CallToolResult;
        const bytes = Buffer.byteLength(JSON.stringify(r));
        expect(bytes, `${tool.name} ${bytes} bytes`).toBeLessThanOrEqual(kib * 1024);
        const report = (r._meta as Record<string, { budget_kind?: string }> | undefined)?.[REPORT_KEY];
        if (tool.outputSchema !== undefined) {
          expect(r.isError, `${tool.name}: ${JSON.stringify(r.content).slice(0, 200)}`).not.toBe(true);
          expect(r.structuredContent, tool.name).toBeDefined();
        }
        outcomes.push(`${tool.name}:${report === undefined ? 'fits' : report.budget_kind}`);
      }
    }
    // the matrix really cut results at every setting (the large calls do not fit even 64 KiB)
    expect(outcomes.some((o) => !o.endsWith(':fits'))).toBe(true);
  });
});
