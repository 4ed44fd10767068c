/**
 * Typed results: a shrunk structure that validates is sent; only when no schema-valid shrink fits
 * is the result withheld, and the report then names the bound that made it impossible. Unit cases
 * through the budget and the policy, then @modelcontextprotocol/server-filesystem's typed tools
 * behind `mcp-budget proxy --max-bytes 32KiB`.
 */
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { CallToolResultSchema, type CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { trickyLimits, typedStructure } from '../helpers/arbitraries.js';
import { boundJson } from '../../src/engine/bound.js';
import { REPORT_KEY, type BudgetOptions } from '../../src/engine/limits.js';
import { resolveLimits } from '../../src/engine/options.js';
import { enforceOutputSchema, shrinkToSchema, ToolCatalog } from '../../src/transport/core/typed-results.js';
import { CLI, REPO_ROOT } from '../helpers/stdio-peer.js';
import { timeBox } from '../helpers/time-box.js';

type Json = Record<string, unknown>;

/** read_media_file's output schema (server-filesystem), as JSON Schema. */
const MEDIA_SCHEMA = {
  type: 'object',
  required: ['content'],
  properties: {
    content: {
      type: 'array',
      items: { type: 'object', required: ['type', 'data', 'mimeType'], properties: { type: { enum: ['image', 'audio'] }, data: { type: 'string' }, mimeType: { type: 'string' } } },
    },
  },
};
const RECORD_SCHEMA = { type: 'object', required: ['id', 'data'], properties: { id: { type: 'string' }, data: { type: 'string' } } };

function catalog(readOnly: boolean): ToolCatalog {
  const c = new ToolCatalog();
  c.learn({
    tools: [
      { name: 'media', inputSchema: { properties: { path: {} } }, outputSchema: MEDIA_SCHEMA, annotations: { readOnlyHint: readOnly } },
      { name: 'record', inputSchema: { properties: { id: {} } }, outputSchema: RECORD_SCHEMA, annotations: { readOnlyHint: readOnly } },
    ],
  });
  return c;
}

function apply(tool: 'media' | 'record', input: Json, options: BudgetOptions, readOnly = true): Json {
  const limits = resolveLimits(options);
  const out = boundJson(input, limits);
  const bounded = JSON.parse(out.json) as Json;
  if (out.report === undefined) return bounded;
  return enforceOutputSchema(tool, catalog(readOnly).get(tool)!, input, bounded, out.report, limits.maxResultBytes, limits);
}

const b64 = (n: number): string => Buffer.alloc(n, 'A1b2C3d4').toString('base64');

describe('typed results', () => {
  it('typed-results: an image too large for the budget: the structure shrinks to a valid one and is sent', () => {
    const item = { type: 'image', data: b64(300_000), mimeType: 'image/png' };
    const out = apply('media', { content: [item], structuredContent: { content: [item] } }, { maxResultBytes: 32 * 1024 });
    expect(out.isError).toBeUndefined();
    expect(out.structuredContent).toEqual({ content: [] });
    expect(CallToolResultSchema.safeParse(out).success).toBe(true);
    const report = (out._meta as Json)[REPORT_KEY] as { omitted_count: number };
    expect(report.omitted_count).toBeGreaterThanOrEqual(3); // the block, the data member, the dropped item
  });

  it('typed-results: shrinking keeps the valid items and drops only the broken ones', () => {
    const small = { type: 'image', data: b64(300), mimeType: 'image/png' };
    const big = { type: 'image', data: b64(30_000), mimeType: 'image/png' };
    const out = apply('media', { content: [], structuredContent: { content: [small, big, small] } }, { maxResultBytes: 32 * 1024 });
    expect(out.isError).toBeUndefined();
    expect(out.structuredContent).toEqual({ content: [small, small] });
  });

  it('typed-results: withheld only when no valid shrink fits; the report names the bound (read-only: guidance)', () => {
    const input = { content: [], structuredContent: { id: 'r-1', data: b64(5000) } };
    const out = apply('record', input, { maxResultBytes: 32 * 1024 });
    expect(out.isError).toBe(true);
    const report = (out._meta as Json)[REPORT_KEY] as Json;
    expect(report.error).toBe('result_budget_exceeded');
    // 32 KiB scales the string bound to 4 KiB: lifting it alone would let `data` through whole.
    // The part of the smallest valid structure that cannot fit: the required base64 string, whole.
    expect(report.blocked_by).toEqual({ bound: 'maxStringBytes', limit: 4096, needs: { path: '/structuredContent/data', bytes: JSON.stringify(b64(5000)).length } });
    expect(((out.content as Json[])[0]!.text as string)).toContain('`maxStringBytes`');
    expect(((out.content as Json[])[0]!.text as string)).toContain(`found that the schema accepts still holds ${JSON.stringify(b64(5000)).length} bytes at \`/structuredContent/data\``);
    // The same data within the bound is a typed success.
    expect(apply('record', { content: [{ type: 'text', text: 'x'.repeat(40_000) }], structuredContent: { id: 'r-1', data: b64(1000) } }, { maxResultBytes: 32 * 1024 }).isError).toBeUndefined();
  });

  it('typed-results: a mutation gets a receipt naming the bound, and no advice to call again', () => {
    const out = apply('record', { content: [], structuredContent: { id: 'r-1', data: b64(50_000) } }, { maxResultBytes: 32 * 1024 }, false);
    expect(out.isError).toBe(true);
    const report = (out._meta as Json)[REPORT_KEY] as Json;
    expect(report).toMatchObject({ applied: true, receipt: { id: 'r-1' } });
    expect((report.blocked_by as Json).bound).toBe('maxResultBytes');
  });

  it('typed-results: shrinkToSchema gives up on an error outside any array item', () => {
    const tool = catalog(true).get('record')!;
    expect(shrinkToSchema({ id: 'x' }, tool)).toBeUndefined();
    expect(shrinkToSchema({ id: 'x', data: 'y' }, tool)).toEqual({ value: { id: 'x', data: 'y' }, dropped: 0 });
  });
});

/** The output schema `typedStructure` values follow: entries with ids and optional base64 data. */
const ENTRIES_SCHEMA = {
  type: 'object',
  required: ['entries', 'total'],
  properties: {
    entries: {
      type: 'array',
      items: {
        type: 'object',
        required: ['id', 'name'],
        properties: { id: { type: ['string', 'number'] }, name: { type: 'string' }, data: { type: 'string', pattern: '^[A-Za-z0-9+/]*={0,2}$' } },
      },
    },
    total: { type: 'integer' },
  },
};

describe('typed results (property)', () => {
  it('typed-results: a typed success validates against the tool schema; a withheld result names its bound', () => {
    const c = new ToolCatalog();
    c.learn({ tools: [{ name: 'list', inputSchema: { properties: { cursor: {} } }, outputSchema: ENTRIES_SCHEMA, annotations: { readOnlyHint: true } }] });
    const tool = c.get('list')!;
    fc.assert(
      fc.property(typedStructure, trickyLimits, fc.boolean(), (structure, options, mirror) => {
        const input: Json = { content: mirror ? [{ type: 'text', text: JSON.stringify(structure) }] : [], structuredContent: structure };
        const limits = resolveLimits(options);
        const out = boundJson(input, limits);
        const bounded = JSON.parse(out.json) as Json;
        const r = out.report === undefined ? bounded : enforceOutputSchema('list', tool, input, bounded, out.report, limits.maxResultBytes, limits);
        expect(CallToolResultSchema.safeParse(r).success).toBe(true);
        if (r.isError === true) {
          const report = (r._meta as Json)[REPORT_KEY] as Json;
          expect(report.error).toBe('result_budget_exceeded');
          expect(typeof (report.blocked_by as Json).bound).toBe('string');
        } else {
          expect(tool.validate!(r.structuredContent)).toBe(true);
          expect(Buffer.byteLength(JSON.stringify(r))).toBeLessThanOrEqual(limits.maxResultBytes);
        }
      }),
      timeBox(300, 3000),
    );
  });
});

// ------------------------------------------------------------------ the real server behind the proxy

const require = createRequire(import.meta.url);
function binOf(pkg: string): string {
  const manifest = require.resolve(`${pkg}/package.json`);
  const { bin } = JSON.parse(readFileSync(manifest, 'utf8')) as { bin: string | Record<string, string> };
  return join(dirname(manifest), typeof bin === 'string' ? bin : Object.values(bin)[0]!);
}

describe('proxy --max-bytes 32KiB → server-filesystem typed tools', { timeout: 60_000 }, () => {
  let root: string;
  let client: Client;

  beforeAll(async () => {
    root = mkdtempSync(join(tmpdir(), 'mcp-budget-typed-'));
    writeFileSync(join(root, 'photo.png'), Buffer.alloc(300_000, 7));
    writeFileSync(join(root, 'notes.txt'), 'a line of notes\n'.repeat(20_000));
    const transport = new StdioClientTransport({
      command: process.execPath,
      args: [CLI, 'proxy', '--max-bytes', '32KiB', '--', process.execPath, binOf('@modelcontextprotocol/server-filesystem'), root],
      cwd: REPO_ROOT,
      stderr: 'pipe',
    });
    transport.stderr!.on('data', () => undefined);
    client = new Client({ name: 'typed-results-test', version: '1.0.0' });
    await client.connect(transport);
    await client.listTools(); // the proxy learns the output schemas from here
  });
  afterAll(async () => {
    await client?.close();
    rmSync(root, { recursive: true, force: true });
  });

  it('typed-results: read_media_file of a 300 KB image is a typed success with a valid, shrunk structure', async () => {
    const r = (await client.callTool({ name: 'read_media_file', arguments: { path: join(root, 'photo.png') } })) as CallToolResult;
    expect(r.isError).toBeUndefined();
    expect(r.structuredContent).toEqual({ content: [] });
    expect(Buffer.byteLength(JSON.stringify(r))).toBeLessThanOrEqual(32 * 1024);
  });

  it('typed-results: read_text_file of 320 KB is a typed success, its text within the scaled bounds', async () => {
    const r = (await client.callTool({ name: 'read_text_file', arguments: { path: join(root, 'notes.txt') } })) as CallToolResult;
    expect(r.isError).toBeUndefined();
    expect(typeof (r.structuredContent as { content: string }).content).toBe('string');
    expect(Buffer.byteLength(JSON.stringify(r))).toBeLessThanOrEqual(32 * 1024);
  });
});

describe('typed results: the search for a valid shrink is bounded in time, whatever the schema costs', () => {
  const run = (schema: Record<string, unknown>, sc: Record<string, unknown>, maxResultBytes: number): { out: Record<string, unknown>; ms: number } => {
    const c = new ToolCatalog();
    c.learn({ tools: [{ name: 't', inputSchema: { type: 'object' }, outputSchema: schema, annotations: { readOnlyHint: true } }] });
    const tool = c.get('t')!;
    const original = { content: [{ type: 'text', text: JSON.stringify(sc) }], structuredContent: sc };
    const limits = resolveLimits({ maxResultBytes });
    const b = boundJson(original, limits, 'result');
    const t0 = performance.now();
    const out = enforceOutputSchema('t', tool, original, JSON.parse(b.json) as Record<string, unknown>, b.report!, maxResultBytes, limits);
    return { out, ms: performance.now() - t0 };
  };

  it('uniqueItems over thousands of objects (quadratic in the validator), and thousands of optional members', () => {
    // Each took 29 s and 86 s before: the validations were of the whole original, and unbounded in number.
    const unique: Record<string, unknown> = { u: Array.from({ length: 4000 }, (_, i) => ({ i })) };
    for (let p = 0; p < 400; p++) unique[`p${p}`] = p;
    const a = run({ type: 'object', required: ['u'], properties: { u: { type: 'array', minItems: 150, uniqueItems: true, items: { type: 'object' } } }, additionalProperties: { type: 'number' } }, unique, 8192);
    const many: Record<string, unknown> = { r: Array.from({ length: 3000 }, (_, i) => i) };
    for (let k = 0; k < 6400; k++) many[`k${k}`] = '';
    const b = run({ type: 'object', required: ['r'], properties: { r: { type: 'array', minItems: 3000, items: { type: 'number' } } }, additionalProperties: { type: 'string' } }, many, 8192);
    // 150 small unique objects fit: a typed success; 3000 required numbers do not fit 8 KiB.
    expect(a.out.isError).toBeUndefined();
    expect((a.out.structuredContent as { u: unknown[] }).u.length).toBeGreaterThanOrEqual(150);
    expect(b.out.isError).toBe(true);
    // The search's own limit is 500 ms; the margin is for a loaded machine.
    for (const { ms } of [a, b]) expect(ms).toBeLessThan(3000);
  });
});
