/**
 * Through `mcp-budget proxy` to real MCP servers installed from npm (exact-pinned devDependencies),
 * each started with `node` on its package's bin entry: @modelcontextprotocol/server-filesystem and
 * @modelcontextprotocol/server-everything. Results are compared with a direct connection.
 */
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { NOTICE_KEY, REPORT_KEY } from '../../src/engine/limits.js';
import type { BudgetReport } from '../../src/engine/report.js';
import { CLI, killAllPeers, REPO_ROOT, StdioPeer } from '../helpers/stdio-peer.js';

const require = createRequire(import.meta.url);
const MAX = 64 * 1024;

/** The file a package's `bin` entry points at (the first one when there are several). */
function binOf(pkg: string): string {
  const manifest = require.resolve(`${pkg}/package.json`);
  const { bin } = JSON.parse(readFileSync(manifest, 'utf8')) as { bin: string | Record<string, string> };
  return join(dirname(manifest), typeof bin === 'string' ? bin : Object.values(bin)[0]!);
}

type Block = { type: string; text?: string; data?: string; _meta?: Record<string, unknown>; resource?: Record<string, unknown> };

interface Pair {
  direct: Client;
  proxied: Client;
  close: () => Promise<void>;
}

async function connect(args: string[]): Promise<Client> {
  const transport = new StdioClientTransport({ command: process.execPath, args, cwd: REPO_ROOT, stderr: 'pipe' });
  transport.stderr!.on('data', () => undefined); // servers log their banner there
  const client = new Client({ name: 'real-servers-test', version: '1.0.0' });
  await client.connect(transport);
  return client;
}

/** The same server twice: directly, and behind the proxy with the default budget. */
async function pair(serverArgs: string[]): Promise<Pair> {
  const [direct, proxied] = await Promise.all([connect(serverArgs), connect([CLI, 'proxy', '--', process.execPath, ...serverArgs])]);
  return { direct, proxied, close: async () => void (await Promise.all([direct.close(), proxied.close()])) };
}

function reportOf(r: CallToolResult): BudgetReport {
  const report = (r._meta as Record<string, BudgetReport> | undefined)?.[REPORT_KEY];
  expect(report).toBeDefined();
  return report!;
}

function expectBounded(r: CallToolResult): BudgetReport {
  expect(Buffer.byteLength(JSON.stringify(r))).toBeLessThanOrEqual(MAX);
  const report = reportOf(r);
  expect(report.truncated).toBe(true);
  expect((r.content as Block[]).at(-1)!._meta?.[NOTICE_KEY]).toBe(true);
  return report;
}

// ------------------------------------------------------------------ server-filesystem

describe('proxy → @modelcontextprotocol/server-filesystem', () => {
  let root: string;
  let s: Pair;
  const DIRS = 40;
  const FILES = 250;

  beforeAll(async () => {
    root = mkdtempSync(join(tmpdir(), 'mcp-budget-fs-'));
    for (let d = 0; d < DIRS; d++) {
      const dir = join(root, `directory-${String(d).padStart(3, '0')}`);
      mkdirSync(dir);
      for (let f = 0; f < FILES; f++) writeFileSync(join(dir, `entry-with-a-reasonably-long-file-name-${String(f).padStart(4, '0')}.txt`), '');
    }
    mkdirSync(join(root, 'small'));
    for (const n of ['a.txt', 'b.txt']) writeFileSync(join(root, 'small', n), n);
    mkdirSync(join(root, 'small', 'nested'));
    writeFileSync(join(root, 'notes.txt'), 'a line of notes\n'.repeat(20_000)); // 320 KB
    writeFileSync(join(root, 'tiny.png'), Buffer.from('89504e470d0a1a0a0000000d49484452', 'hex'));
    writeFileSync(join(root, 'photo.png'), Buffer.alloc(300_000, 7));
    s = await pair([binOf('@modelcontextprotocol/server-filesystem'), root]);
  });
  afterAll(async () => {
    await s?.close();
    rmSync(root, { recursive: true, force: true });
  });

  it('real-servers: tools/list is the server\'s through the proxy, with the reading tool after it', async () => {
    const [direct, proxied] = await Promise.all([s.direct.listTools(), s.proxied.listTools()]);
    // The server's list whole and in order, and the proxy's reading tool after it (the last page).
    expect(proxied).toEqual({ ...direct, tools: [...direct.tools, expect.objectContaining({ name: 'mcp_result_budget__read' })] });
    expect(proxied.tools.map((t) => t.name)).toEqual(expect.arrayContaining(['directory_tree', 'read_text_file', 'read_media_file']));
  });

  it('real-servers: directory_tree of a 10,000-entry tree comes back bounded and still valid for its output schema', async () => {
    const [direct, proxied] = (await Promise.all([
      s.direct.callTool({ name: 'directory_tree', arguments: { path: root } }),
      s.proxied.callTool({ name: 'directory_tree', arguments: { path: root } }),
    ])) as CallToolResult[];
    const fullText = (direct!.content as Block[])[0]!.text!;
    expect(fullText.length).toBeGreaterThan(1024 * 1024); // a long line: the streaming path
    const report = expectBounded(proxied!);
    expect(report.omitted_paths).toContain('/content/0/text');
    const text = (proxied!.content as Block[])[0]!.text!;
    expect(text.length).toBeGreaterThan(16 * 1024);
    expect(fullText.startsWith(text)).toBe(true);
    // structuredContent ({ content: string }) is cut but still a string: the SDK client validated it.
    const sc = proxied!.structuredContent as { content: string };
    expect(typeof sc.content).toBe('string');
    expect(fullText.startsWith(sc.content)).toBe(true);
    expect(proxied!.isError).toBeUndefined();
  });

  it('real-servers: directory_tree of one directory (fast path) is bounded the same way', async () => {
    const path = join(root, 'directory-007');
    const r = (await s.proxied.callTool({ name: 'directory_tree', arguments: { path } })) as CallToolResult;
    const report = expectBounded(r);
    expect(report.omitted_paths).toContain('/structuredContent/content');
    expect(typeof (r.structuredContent as { content: string }).content).toBe('string');
  });

  it('real-servers: results that fit are identical to the direct connection', async () => {
    const calls = [
      { name: 'directory_tree', arguments: { path: join(root, 'small') } },
      { name: 'list_directory', arguments: { path: join(root, 'small') } },
      { name: 'read_text_file', arguments: { path: join(root, 'notes.txt'), head: 3 } },
      { name: 'read_media_file', arguments: { path: join(root, 'tiny.png') } },
      { name: 'get_file_info', arguments: { path: join(root, 'notes.txt') } },
    ];
    for (const call of calls) {
      const [direct, proxied] = await Promise.all([s.direct.callTool(call), s.proxied.callTool(call)]);
      expect(proxied, call.name).toEqual(direct);
      expect(proxied._meta, call.name).toBeUndefined();
    }
  });

  it('real-servers: a 320 KB read_text_file is bounded; a 300 KB image is dropped whole, never cut', async () => {
    const text = (await s.proxied.callTool({ name: 'read_text_file', arguments: { path: join(root, 'notes.txt') } })) as CallToolResult;
    expect(expectBounded(text).budget_kind).toBe('text_block_bytes');
    expect((text.content as Block[])[0]!.text).toMatch(/^(a line of notes\n)+/);

    const image = (await s.proxied.callTool({ name: 'read_media_file', arguments: { path: join(root, 'photo.png') } })) as CallToolResult;
    const report = expectBounded(image);
    expect(report.budget_kind).toBe('binary_block');
    expect(report.omitted_paths[0]).toBe('/content/0');
    expect((image.content as Block[]).filter((b) => b.type === 'image')).toEqual([]);
  });
});

// ------------------------------------------------------------------ server-everything

describe('proxy → @modelcontextprotocol/server-everything', () => {
  let s: Pair;
  const server = [binOf('@modelcontextprotocol/server-everything'), 'stdio'];

  beforeAll(async () => {
    s = await pair(server);
  });
  afterAll(async () => {
    await s?.close();
    await killAllPeers();
  });

  /** Times in generated resource text ("created at 5:19:30 PM") differ between two calls. */
  const normalize = (v: unknown): unknown => JSON.parse(JSON.stringify(v).replace(/created at [^"\\]+/g, 'created at <time>'));

  it('real-servers: tools/list is the server\'s through the proxy, with the reading tool after it', async () => {
    const [direct, proxied] = await Promise.all([s.direct.listTools(), s.proxied.listTools()]);
    // The server's list whole and in order, and the proxy's reading tool after it (the last page).
    expect(proxied).toEqual({ ...direct, tools: [...direct.tools, expect.objectContaining({ name: 'mcp_result_budget__read' })] });
    expect(proxied.tools.map((t) => t.name)).toEqual(
      expect.arrayContaining(['get-tiny-image', 'get-annotated-message', 'get-resource-reference', 'get-resource-links', 'get-structured-content']),
    );
  });

  it('real-servers: mixed content (text, image, embedded resource, resource links, structured) survives intact when it fits', async () => {
    const calls = [
      { name: 'get-tiny-image', arguments: {} },
      { name: 'get-annotated-message', arguments: { messageType: 'error', includeImage: true } },
      { name: 'get-resource-reference', arguments: { resourceType: 'Text', resourceId: 3 } },
      { name: 'get-resource-reference', arguments: { resourceType: 'Blob', resourceId: 2 } },
      { name: 'get-resource-links', arguments: { count: 4 } },
      { name: 'get-structured-content', arguments: { location: 'Chicago' } },
      { name: 'echo', arguments: { message: 'héllo ✓' } },
      { name: 'gzip-file-as-resource', arguments: { name: 'small.gz', data: 'data:text/plain;base64,' + Buffer.from('hello '.repeat(100)).toString('base64'), outputType: 'resource' } },
    ];
    await s.proxied.listTools();
    await s.direct.listTools();
    for (const call of calls) {
      const [direct, proxied] = await Promise.all([s.direct.callTool(call), s.proxied.callTool(call)]);
      expect(normalize(proxied), call.name).toEqual(normalize(direct));
      expect(proxied._meta, call.name).toBeUndefined();
    }
    const image = (await s.proxied.callTool({ name: 'get-tiny-image', arguments: {} })) as CallToolResult;
    expect((image.content as Block[]).map((b) => b.type)).toEqual(['text', 'image', 'text']);
  });

  it('real-servers: get-tiny-image — the line through the proxy is the server\'s line, byte for byte', async () => {
    const exchange = async (p: StdioPeer): Promise<string[]> => {
      await p.initialize('2025-06-18');
      const { raw } = await p.callTool(1, 'get-tiny-image');
      const ann = await p.callTool(2, 'get-annotated-message', { messageType: 'success', includeImage: true });
      return [raw.toString(), ann.raw.toString()];
    };
    const [direct, proxied] = await Promise.all([
      exchange(new StdioPeer(process.execPath, server)),
      exchange(StdioPeer.proxy([], {}, [process.execPath, ...server])),
    ]);
    expect(proxied).toEqual(direct);
  });

  it('real-servers: an oversized blob resource is dropped whole, the rest of the result is kept', async () => {
    // Incompressible input, so the gzip blob stays large (~270 KB of base64).
    const bytes = Buffer.alloc(200_000);
    for (let i = 0, x = 12345; i < bytes.length; i++) bytes[i] = (x = (Math.imul(x, 1103515245) + 12345) >>> 0) >>> 24;
    const call = { name: 'gzip-file-as-resource', arguments: { name: 'big.gz', data: 'data:application/octet-stream;base64,' + bytes.toString('base64'), outputType: 'resource' } };
    const [direct, proxied] = (await Promise.all([s.direct.callTool(call), s.proxied.callTool(call)])) as CallToolResult[];
    const blob = ((direct!.content as Block[])[0]!.resource as { blob: string }).blob;
    expect(blob.length).toBeGreaterThan(MAX);
    const report = expectBounded(proxied!);
    expect(report.budget_kind).toBe('binary_block');
    expect(report.omitted_paths).toEqual(['/content/0']);
    expect(JSON.stringify(proxied)).not.toContain(blob.slice(0, 64)); // not even a prefix of it
  });
});
