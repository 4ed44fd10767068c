/**
 * Typed tool contracts: a declaration's `run` gets its arguments typed by `args` and must return a
 * page typed by `outputSchema`, so a page that drifts from the published schema does not compile.
 * The `@ts-expect-error` lines are the proof: `npm test` typechecks this file
 * (`tsc -p tsconfig.test.json`), which fails as soon as one of them is no longer an error. At run
 * time, the same drifts forced past the compiler are what the SDK's server check or a client's
 * validator refuses.
 */
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { InMemoryTransport } from '@modelcontextprotocol/sdk/inMemory.js';
import { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import { describe, expect, expectTypeOf, it } from 'vitest';
import { z } from 'zod';
import { resolveLimits } from '../../src/engine/index.js';
import { EXEC_OUTPUT } from '../../src/exec/index.js';
import { withTeam } from '../../src/server/team-shapes.js';
import { defineDetailTool, defineListTool, defineMutationTool, defineSearchTool, type ToolContext } from '../../src/server/tool-kinds.js';
import { pageBudgetFor, structuredPage, type UnlistedMembers } from '../../src/tools/index.js';

const OUT = {
  name: z.string(),
  size: z.number(),
  parent: z.string().nullable(),
  note: z.string().optional(),
  items: z.array(z.object({ id: z.number() })),
};

/** A backend's own page type, declared apart from the schema (as src/fs and src/git declare theirs). */
interface Page {
  name: string;
  size: number;
  parent: string | null;
  items: { id: number }[];
}
const PAGE: Page = { name: 'a', size: 1, parent: null, items: [{ id: 1 }] };
const backend = async (): Promise<Page> => PAGE;
/** Drifted backends: optional where the schema says nullable; a member the schema does not list, at the top and in an item. */
const optionalParent = async (): Promise<Omit<Page, 'parent'> & { parent?: string }> => ({ name: 'a', size: 1, items: [] });
const withExamined = async (): Promise<Page & { examined: number }> => ({ ...PAGE, examined: 3 });
const labelledItems = async (): Promise<Omit<Page, 'items'> & { items: { id: number; label: string }[] }> => ({ ...PAGE, items: [{ id: 1, label: 'x' }] });

const ROW = { paging: 'none', per_item_budget: 'the page', backend_query_bound: 'none', structured_content: 'the page object' };
const HEAD = { entryPoint: 'test/server/typed-contracts.test.ts', action: 'workspace.read', title: 'A test tool', description: 'A test tool.', row: ROW } as const;
const WRITE = { ...HEAD, action: 'workspace.write', caps: {} } as const;
const LIMIT = { default: 5, max: 10, overMax: 'refuse' } as const;

function contextFor(server: McpServer): ToolContext {
  return { server, rows: [], resultBudget: 'none', page: pageBudgetFor(resolveLimits({})), limits: resolveLimits({}), authority: { caller: async () => ({ name: 'tester' }) } };
}

/** Every drift the contract refuses, one per declaration; registering them is harmless, compiling them is not. */
function declareDrifts(ctx: ToolContext): void {
  defineDetailTool(ctx, {
    ...HEAD,
    name: 'drift_type',
    args: {},
    outputSchema: OUT,
    // @ts-expect-error a member of another type: `size` is a number in the schema
    run: async () => ({ name: 'a', size: '1', parent: null, items: [] }),
  });
  defineDetailTool(ctx, {
    ...HEAD,
    name: 'drift_optional',
    args: {},
    outputSchema: OUT,
    // @ts-expect-error optional where the schema says nullable: `parent` may be missing
    run: () => optionalParent(),
  });
  defineDetailTool(ctx, {
    ...HEAD,
    name: 'drift_missing',
    args: {},
    outputSchema: OUT,
    // @ts-expect-error a required member missing: `parent`
    run: async () => ({ name: 'a', size: 1, items: [] }),
  });
  defineDetailTool(ctx, {
    ...HEAD,
    name: 'drift_unlisted',
    args: {},
    outputSchema: OUT,
    // @ts-expect-error a member the schema does not list (`examined`): a client's validator refuses the page
    run: () => withExamined(),
  });
  defineDetailTool(ctx, {
    ...HEAD,
    name: 'drift_unlisted_item',
    args: {},
    outputSchema: OUT,
    // @ts-expect-error an item member the schema does not list (`items[].label`)
    run: () => labelledItems(),
  });
  defineMutationTool(ctx, {
    ...WRITE,
    name: 'drift_literal',
    args: { dir: z.string() },
    outputSchema: OUT,
    // @ts-expect-error an object literal with an unlisted member is refused as well
    run: async () => ({ ...PAGE, more: true }),
  });
  defineDetailTool(ctx, {
    ...HEAD,
    name: 'drift_args',
    args: { dir: z.string() },
    outputSchema: OUT,
    // @ts-expect-error an argument the input shape does not declare
    run: async ({ path }) => ({ ...PAGE, name: String(path) }),
  });
  defineMutationTool(ctx, {
    ...WRITE,
    name: 'drift_arg_type',
    args: { dir: z.string(), depth: z.number().int().optional() },
    outputSchema: OUT,
    run: async ({ dir, depth }) => {
      // @ts-expect-error `depth` is optional in the input shape, so it may be undefined
      const d: number = depth;
      return { ...PAGE, name: dir, size: d };
    },
  });
  defineSearchTool(ctx, {
    ...HEAD,
    name: 'drift_optional_query',
    args: {},
    query: { name: 'q', required: false },
    limit: LIMIT,
    outputSchema: OUT,
    run: async ({ query }) => {
      // @ts-expect-error an optional query reaches `run` as string | undefined
      const q: string = query;
      return { ...PAGE, name: q };
    },
  });
  defineDetailTool(ctx, {
    ...HEAD,
    name: 'drift_through_team',
    args: {},
    outputSchema: OUT,
    // @ts-expect-error withTeam passes the page type through, so its drift is seen too
    run: withTeam(async () => ({ ...PAGE, size: null })),
  });
  // @ts-expect-error a hand-registered tool's page (exec's envelope) is checked the same way: `ok` is the literal true
  structuredPage(EXEC_OUTPUT, { action: 'a.b', ok: false, result: {} });
  // @ts-expect-error … and may not carry a member its schema does not list
  structuredPage(EXEC_OUTPUT, { action: 'a.b', ok: true, result: {}, bytes: 3 });
}

/** Pages that keep the contract compile, with their arguments inferred from the shapes. */
function declareKept(ctx: ToolContext): void {
  defineDetailTool(ctx, { ...HEAD, name: 'kept_backend', args: {}, outputSchema: OUT, run: backend });
  defineListTool(
    ctx,
    {
      ...HEAD,
      name: 'kept_list',
      args: { dir: z.string().optional() },
      limit: LIMIT,
      outputSchema: OUT,
      run: async ({ dir, limit, cursor }) => {
        expectTypeOf(dir).toEqualTypeOf<string | undefined>();
        expectTypeOf(limit).toEqualTypeOf<number>();
        expectTypeOf(cursor).toEqualTypeOf<string | undefined>();
        return { ...PAGE, name: dir ?? '', size: limit, note: cursor };
      },
    },
    { tool: 'kept_search', surface: 'workspace' },
  );
  defineSearchTool(ctx, {
    ...HEAD,
    name: 'kept_search',
    args: {},
    limit: LIMIT,
    outputSchema: OUT,
    run: async ({ query }) => ({ ...PAGE, name: query }),
  });
  structuredPage(EXEC_OUTPUT, { action: 'a.b', ok: true, result: { any: 'thing' } });
}

describe('typed contracts: drift does not compile', () => {
  it('unlisted members are found at any depth, as paths', () => {
    expectTypeOf<UnlistedMembers<Page & { examined: number }, Page>>().toEqualTypeOf<'examined'>();
    expectTypeOf<UnlistedMembers<{ items: { id: number; label: string }[] }, { items: { id: number }[] }>>().toEqualTypeOf<'items[].label'>();
    expectTypeOf<UnlistedMembers<{ a: { b: 1 } | null }, { a: { b: number } | null }>>().toEqualTypeOf<never>();
  });

  it('the declarations above register (the compiler, not the runtime, refuses their drift)', () => {
    const ctx = contextFor(new McpServer({ name: 'drifts', version: '1' }));
    declareDrifts(ctx);
    declareKept(ctx);
    expect(ctx.rows.map((r) => r.name)).toContain('drift_unlisted');
    expect(ctx.declared?.every((t) => Object.keys(t.outputSchema).length > 0)).toBe(true);
  });
});

describe('typed contracts: what a drift forced past the compiler meets at run time', () => {
  it('a member of another type is refused by the SDK; an unlisted member passes the SDK but a client refuses it', async () => {
    const server = new McpServer({ name: 'forced', version: '1' }, { capabilities: { tools: {} } });
    const ctx = contextFor(server);
    defineDetailTool(ctx, { ...HEAD, name: 'kept', args: {}, outputSchema: OUT, run: backend });
    defineDetailTool(ctx, { ...HEAD, name: 'forced_type', args: {}, outputSchema: OUT, run: (async () => ({ ...PAGE, size: '1' })) as never });
    defineDetailTool(ctx, { ...HEAD, name: 'forced_unlisted', args: {}, outputSchema: OUT, run: (() => withExamined()) as never });
    const [clientSide, serverSide] = InMemoryTransport.createLinkedPair();
    await server.connect(serverSide);
    const client = new Client({ name: 'typed-contracts', version: '1' });
    await client.connect(clientSide);
    try {
      await client.listTools(); // the client validates results against the published schemas it listed
      const kept = await client.callTool({ name: 'kept', arguments: {} });
      expect(kept.structuredContent).toEqual(PAGE);
      const wrong = await client.callTool({ name: 'forced_type', arguments: {} });
      expect(wrong.isError).toBe(true);
      expect(JSON.stringify(wrong.content)).toContain('Output validation error');
      await expect(client.callTool({ name: 'forced_unlisted', arguments: {} })).rejects.toThrow(/does not match the tool's output schema/);
    } finally {
      await client.close();
      await server.close();
    }
  });
});
