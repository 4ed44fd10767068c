/**
 * `serve`'s `tools/list` as a model's context pays for it, and the surfaces it offers (`--tools`):
 * - the listing carries no `$schema`, no default `execution`, no type arrays (nullable is `anyOf`,
 *   which single-type schema dialects accept), no untyped input member, a title on every tool, and
 *   each paged tool's `limit` maximum in its schema; it stays under its token bound (o200k, the
 *   figures of `npm run tool-tokens`);
 * - every combination of surfaces lists exactly their tools and the reading tool, and `exec` runs
 *   exactly their actions: a surface left out has no route in;
 * - the flag and its variable reach a real `serve`; an unknown surface is a usage error.
 */
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { InMemoryTransport } from '@modelcontextprotocol/sdk/inMemory.js';
import { AjvJsonSchemaValidator } from '@modelcontextprotocol/sdk/validation/ajv';
import fc from 'fast-check';
import { countTokens } from 'gpt-tokenizer';
import { TOOL_ALIASES, leanSchema } from '../../src/server/tool-listing.js';
import { timeBox } from '../helpers/time-box.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { listTools, modelPart } from '../../scripts/tool-tokens.js';
import { TOOLSETS, createWorkspaceServer, parseToolsets, type Toolset } from '../../src/server/create-server.js';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { CONTINUATION_TOOL } from '../../src/engine/index.js';
import { ensureBuilt, repoRoot, runCli } from '../helpers/cli.js';
import { tempTree } from '../helpers/fs-tree.js';
import { connectClient, serveTransport } from '../helpers/mcp-stdio.js';

type Json = Record<string, unknown>;
const inventory = JSON.parse(readFileSync(join(repoRoot, 'specs', 'agent-mcp-tool-inventory.json'), 'utf8')) as { tools: { name: string; limit: { max: number } | null }[] };
const isObject = (v: unknown): v is Json => typeof v === 'object' && v !== null && !Array.isArray(v);

/** Every (path, schema object) under `schema`. */
/** Every schema a schema holds, by the keywords that hold them (members, items, branches, additional members). */
function subschemas(schema: unknown, path: string): [string, unknown][] {
  if (typeof schema !== 'object' || schema === null) return [];
  const s = schema as Json;
  const out: [string, unknown][] = [];
  const visit = (sub: unknown, at: string) => out.push([at, sub], ...subschemas(sub, at));
  for (const [k, v] of Object.entries((s.properties ?? {}) as Json)) visit(v, `${path}/properties/${k}`);
  if (s.items !== undefined) visit(s.items, `${path}/items`);
  for (const k of ['anyOf', 'oneOf', 'allOf'] as const) if (Array.isArray(s[k])) for (const [i, v] of (s[k] as unknown[]).entries()) visit(v, `${path}/${k}/${i}`);
  if (typeof s.additionalProperties === 'object') visit(s.additionalProperties, `${path}/additionalProperties`);
  return out;
}

function* schemas(schema: unknown, path: string): Generator<[string, Json]> {
  if (Array.isArray(schema)) for (const [i, s] of schema.entries()) yield* schemas(s, `${path}/${i}`);
  if (!isObject(schema)) return;
  yield [path, schema];
  for (const [k, v] of Object.entries(schema)) yield* schemas(v, `${path}/${k}`);
}

/** The surface a tool belongs to, by its name. */
function surfaceOf(name: string): Toolset | 'reader' {
  if (name === CONTINUATION_TOOL) return 'reader';
  if (name === 'exec') return 'exec';
  if (name.startsWith('workspace_')) return 'workspace';
  if (name.startsWith('git_')) return 'git';
  return 'team';
}

let all: { tools: Json[] };
beforeAll(async () => {
  all = await listTools(TOOLSETS);
});

describe('tools/list, lean', () => {
  it('no $schema, no default execution, no type arrays, every input member typed, a title on every tool', () => {
    const titles = new Set<string>();
    for (const tool of all.tools) {
      const name = String(tool.name);
      expect(tool.execution, name).toBeUndefined();
      expect(typeof tool.title === 'string' && tool.title.length > 0 && tool.title.length <= 40, name).toBe(true);
      titles.add(String(tool.title));
      for (const [path, s] of [...schemas(tool.inputSchema, `${name}/in`), ...schemas(tool.outputSchema, `${name}/out`)]) {
        expect(s.$schema, path).toBeUndefined();
        expect(Array.isArray(s.type), path).toBe(false);
        expect(s.maximum, path).not.toBe(Number.MAX_SAFE_INTEGER);
      }
      for (const [path, s] of schemas(tool.inputSchema, `${name}/in`)) {
        if (!/\/properties\/[^/]+$/.test(path)) continue;
        expect(s.type !== undefined || s.anyOf !== undefined || s.enum !== undefined || s.const !== undefined, `${path} is typed`).toBe(true);
      }
      // what strict schema checkers (the Inspector's, a host's) refuse or warn of: an input that is
      // not a closed object, a schema that is `true`, `false` or empty, a member with no type, and
      // (for the model) an argument with no description
      const input = tool.inputSchema as Json;
      expect({ type: input.type, additionalProperties: input.additionalProperties }, `${name} input`).toEqual({ type: 'object', additionalProperties: false });
      if (tool.outputSchema !== undefined) expect((tool.outputSchema as Json).type, `${name} output`).toBe('object');
      for (const [path, sub] of subschemas(input, `${name}/in`).concat(subschemas(tool.outputSchema, `${name}/out`))) {
        expect(typeof sub === 'object' && sub !== null && Object.keys(sub).length > 0, `${path}: a schema that says something`).toBe(true);
        const t = sub as Json;
        expect(t.type !== undefined || t.anyOf !== undefined || t.enum !== undefined || t.const !== undefined, `${path} has a type`).toBe(true);
      }
      // every object an input takes is closed, nested ones too (an item's unknown key was dropped silently)
      for (const [path, sub] of subschemas(input, `${name}/in`)) {
        const t = sub as Json;
        if (t.type === 'object' && t.properties !== undefined) expect(t.additionalProperties, `${path} is closed`).toBe(false);
      }
      for (const [arg, sub] of Object.entries((input.properties ?? {}) as Record<string, Json>)) {
        expect(typeof sub.description === 'string' && sub.description.length > 0, `${name}: \`${arg}\` is described`).toBe(true);
      }
    }
    expect(titles.size, 'titles are distinct').toBe(all.tools.length);
  });

  it("each paged tool publishes its limit's maximum", () => {
    const byName = new Map(all.tools.map((t) => [t.name, t]));
    for (const row of inventory.tools) {
      if (row.limit === null) continue;
      const limit = ((byName.get(row.name)!.inputSchema as Json).properties as Record<string, Json>).limit!;
      expect(limit, row.name).toMatchObject({ type: 'integer', minimum: 1, maximum: row.limit.max });
    }
  });

  it('costs at most 8,600 tokens whole and 4,500 as hosts show it to the model (o200k; was 9,853 and 5,326)', () => {
    expect(countTokens(JSON.stringify(all))).toBeLessThanOrEqual(8_600);
    expect(countTokens(JSON.stringify(all.tools.map(modelPart)))).toBeLessThanOrEqual(4_500);
  });
});

describe('--tools: the surfaces offered', () => {
  const root = tempTree('tool-listing');
  const state = tempTree('tool-listing-state');
  afterAll(() => {
    root.remove();
    state.remove();
  });

  it('every combination lists exactly its tools, and exec runs exactly their actions', async () => {
    const byName = new Map(all.tools.map((t) => [String(t.name), t]));
    const combos: Toolset[][] = [];
    for (let mask = 1; mask < 1 << TOOLSETS.length; mask++) combos.push(TOOLSETS.filter((_, i) => (mask & (1 << i)) !== 0));
    for (const set of combos) {
      if (set.length === 1 && set[0] === 'exec') {
        expect(() => parseToolsets('exec')).toThrow(/at least one of workspace, git, team/);
        continue;
      }
      const ws = await createWorkspaceServer(root.dir, {}, { dbPath: `${state.dir}/team.db`, as: 'olga', toolsets: set, checkStoredValues: false });
      const client = new Client({ name: 'tool-listing', version: '1' });
      const [a, b] = InMemoryTransport.createLinkedPair();
      try {
        await Promise.all([ws.connect(b), client.connect(a)]);
        const listed = (await client.listTools()).tools;
        const want = [...byName.keys()].filter((n) => surfaceOf(n) === 'reader' || (set as string[]).includes(surfaceOf(n)));
        expect(listed.map((t) => t.name).sort(), set.join(',')).toEqual(want.sort());
        // what is listed is listed as in the whole server
        // what is listed is listed as in the whole server (exec's description names its actions)
        for (const t of listed) if (t.name !== 'exec') expect(t, t.name).toEqual(byName.get(t.name));
        // every tool an answer advises is offered: a list tool's refusal of a query names its search tool only when listed
        const names = new Set(listed.map((t) => t.name));
        for (const t of listed) {
          if (t.name === 'exec' || t.inputSchema.properties?.limit === undefined || t.inputSchema.properties.q !== undefined) continue;
          const r = (await client.callTool({ name: t.name, arguments: { q: 'x' } })) as { isError?: boolean; content: { text: string }[] };
          expect(r.isError, t.name).toBe(true);
          const text = r.content[0]!.text;
          // a list tool refuses the query with advice; a search tool wants its own query argument
          if (!/search/.test(t.name)) expect(text, t.name).toMatch(/does not take `q`/);
          for (const m of text.matchAll(/\buse ([a-z]+_[a-z_]+) to search/g)) expect(names.has(m[1]!), `${set.join(',')}: ${t.name} advises ${m[1]}`).toBe(true);
        }
        // the old names are answered as the new ones (typed, through the same budget), never listed
        if (set.includes('team')) {
          for (const [old, now] of Object.entries(TOOL_ALIASES)) {
            expect(names.has(old), old).toBe(false);
            const args = now === 'task_search' ? { q: 'x' } : {};
            const r = (await client.callTool({ name: old, arguments: args })) as { isError?: boolean; structuredContent?: unknown };
            expect(r.isError ?? false, `${old} -> ${now}`).toBe(false);
            expect(r.structuredContent, `${old} -> ${now}`).toEqual((await client.callTool({ name: now, arguments: args })).structuredContent);
          }
        }
        if (!set.includes('exec')) continue;
        // exec: an action of every surface, offered or not
        for (const [action, surface] of [['workspace.list_dir', 'workspace'], ['git.status', 'git'], ['task.list', 'team']] as const) {
          const r = (await client.callTool({ name: 'exec', arguments: { action, input: {} } })) as { isError?: boolean; content: { text: string }[] };
          if (set.includes(surface)) expect(r.content[0]!.text, `${set.join(',')} ${action}`).not.toMatch(/unknown action|Unknown action/i);
          else {
            expect(r.isError, `${set.join(',')} ${action}`).toBe(true);
            expect(r.content[0]!.text, `${set.join(',')} ${action}`).toMatch(/action/i);
          }
        }
      } finally {
        await client.close();
        await ws.close();
      }
    }
  });

  it('reaches a real serve by flag and by MCP_BUDGET_TOOLS; an unknown surface is a usage error', async () => {
    ensureBuilt();
    const c = await connectClient(serveTransport(root.dir, ['--team-db', `${state.dir}/team.db`, '--as', 'olga'], { MCP_BUDGET_TOOLS: 'git' }));
    try {
      const names = (await c.client.listTools()).tools.map((t) => t.name);
      expect(names.every((n) => n.startsWith('git_') || n === CONTINUATION_TOOL), names.join()).toBe(true);
      expect(names.length).toBe(all.tools.filter((t) => surfaceOf(String(t.name)) === 'git').length + 1);
    } finally {
      await c.close();
    }
    await expect(createWorkspaceServer(root.dir, {}, { toolsets: [] })).rejects.toThrow(/--tools: no surface named/);
    await expect(createWorkspaceServer(root.dir, {}, { toolsets: ['exec'] })).rejects.toThrow(/--tools: exec runs/);
    for (const bad of ['bogus', ',', 'workspace,,nope', 'exec', 'exec,exec', 'Workspace']) {
      const r = runCli(['serve', '--root', root.dir, '--tools', bad]);
      expect(r.code, bad).toBe(2);
      expect(r.stderr, bad).toMatch(/--tools: .*(workspace, git, team)/);
    }
  });
});

describe('leanSchema', () => {
  const validator = new AjvJsonSchemaValidator();
  /** Values that look like schemas: a `const`, `enum`, `default` or name must come through as it is. */
  const lookalike = fc.constantFrom<unknown>(
    { $schema: 'x', type: ['string', 'null'], maximum: Number.MAX_SAFE_INTEGER },
    { additionalProperties: {}, propertyNames: { type: 'string' } },
    ['integer', 'null'],
    Number.MAX_SAFE_INTEGER,
    Number.MIN_SAFE_INTEGER,
    'x',
    null,
  );
  const names = fc.constantFrom('type', 'anyOf', '$schema', 'maximum', 'properties', 'const', 'a');
  const schema: fc.Arbitrary<Record<string, unknown>> = fc.letrec<{ s: Record<string, unknown> }>((tie) => ({
    s: fc.oneof(
      { depthSize: 'small', withCrossShrink: true },
      fc.record({ type: fc.constantFrom<unknown>('string', 'integer', 'null', ['string', 'null'], ['integer', 'null', 'string']) }, { requiredKeys: [] }),
      fc.record({ type: fc.constantFrom<unknown>('integer', ['integer', 'null']), maximum: fc.constantFrom(Number.MAX_SAFE_INTEGER, 5), minimum: fc.constantFrom(Number.MIN_SAFE_INTEGER, -5) }, { requiredKeys: ['type'] }),
      fc.record({ const: lookalike }),
      fc.record({ enum: fc.array(lookalike, { minLength: 1, maxLength: 3 }), default: lookalike }, { requiredKeys: ['enum'] }),
      fc.record({ type: fc.constant(['string', 'null']), anyOf: fc.array(tie('s'), { minLength: 1, maxLength: 2 }) }),
      fc.record({
        type: fc.constant('object'),
        properties: fc.dictionary(names, tie('s'), { maxKeys: 3 }),
        additionalProperties: fc.constantFrom<unknown>({}, false, { type: 'string' }),
        propertyNames: fc.constant({ type: 'string' }),
        $schema: fc.constant('http://json-schema.org/draft-07/schema#'),
      }, { requiredKeys: ['type'] }),
      fc.record({ type: fc.constant('array'), items: tie('s') }),
      fc.record({ not: tie('s') }),
    ),
  })).s;

  it('keeps what every schema accepts, and every value and name as it was', () => {
    fc.assert(
      fc.property(schema, fc.array(fc.jsonValue({ maxDepth: 3 }), { maxLength: 20 }), (s, values) => {
        const lean = leanSchema(s);
        const before = validator.getValidator(s);
        const after = validator.getValidator(lean as Record<string, unknown>);
        // the values of the schema itself are instances worth trying too; an integer past the safe
        // range is the one thing told differently (zod's bound is left out; the server's own check keeps it)
        // (and an object with its own `toString` or `valueOf`, which ajv's deep equality calls)
        for (const v of [...values, ...collectValues(s)].filter((x) => !hasUnsafeNumber(x) && !/"(toString|valueOf)":/.test(JSON.stringify(x) ?? ''))) expect(after(v).valid, JSON.stringify({ s, v })).toBe(before(v).valid);
        expect(collectValues(lean)).toEqual(collectValues(s));
      }),
      timeBox(300, 3000),
    );
  });
});

/** Every `const`, `enum` and `default` value of a schema, and its member names, in order. */
function collectValues(s: unknown, out: unknown[] = []): unknown[] {
  if (Array.isArray(s)) for (const x of s) collectValues(x, out);
  else if (typeof s === 'object' && s !== null) {
    for (const [k, v] of Object.entries(s)) {
      if (k === 'const' || k === 'default') out.push(v);
      else if (k === 'enum') out.push(...(v as unknown[]));
      else if (k === 'properties') {
        out.push(...Object.keys(v as object));
        for (const x of Object.values(v as object)) collectValues(x, out);
      } else collectValues(v, out);
    }
  }
  return out;
}

const hasUnsafeNumber = (v: unknown): boolean =>
  typeof v === 'number' ? Math.abs(v) > Number.MAX_SAFE_INTEGER : typeof v === 'object' && v !== null && Object.values(v).some(hasUnsafeNumber);
