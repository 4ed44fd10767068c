/**
 * Helpers to declare a list tool, a search tool, a detail tool and a mutation tool on an SDK
 * `McpServer`, owning the contract every such tool keeps: limit defaults and maxima, limit+1
 * paging with signed cursors, a required query for search, list tools refusing a query, input
 * caps for mutations, and errors as tool failures with a stable code. Each declaration carries its
 * inventory row, so `specs/agent-mcp-tool-inventory.json` is generated from (and tested against)
 * the code.
 */
import type { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import { z } from 'zod';
import { WorkspaceError } from '../fs/confine.js';
import type { Action } from '../team/index.js';
import { runToolCall, strictInput, structured, type Authority, type CallExtra, type Call, type DeclaredTool, type Shape, type PageBudget, type WorkLimiter } from '../tools/index.js';

export type Classification = 'browse/list' | 'search/lookup' | 'detail' | 'single-item' | 'mutation';

/** One row of the tool inventory. */
export interface InventoryRow {
  name: string;
  entry_point: string;
  classification: Classification;
  limit: { default: number; max: number; over_max: 'clamp' | 'refuse' } | null;
  paging: string;
  per_item_budget: string;
  result_budget: string;
  backend_query_bound: string;
  structured_content: string;
  input_caps?: Record<string, number>;
}

/** Arguments a list tool refuses, pointing to the search tool instead. */
export const QUERY_ARGS = ['q', 'query', 'search'] as const;

export interface ToolContext {
  server: McpServer;
  rows: InventoryRow[];
  /** The final result budget the server applies (quoted in every row). */
  resultBudget: string;
  /** What one page may hold under the active limits (pages are sized to it at the source). */
  page: PageBudget;
  /** Bounds the tool handlers running at once. @default the process-wide slots (src/tools/pipeline.ts) */
  work?: WorkLimiter;
  /** Every tool as registered, in order: the one source `exec` derives its actions from. */
  declared?: DeclaredTool[];
  /** Who calls: resolves the request's member (or the server's own) against the team store. */
  authority: Authority;
}

interface BaseSpec<A> {
  name: string;
  entryPoint: string;
  /** What the tool does, as the permission table names it (the pipeline checks it before `run`). */
  action: Action;
  description: string;
  /** Tool-specific arguments (limit and cursor are added for paged tools). */
  args: Shape;
  row: Omit<InventoryRow, 'name' | 'entry_point' | 'classification' | 'limit' | 'result_budget'>;
  /** Shape of `structuredContent` (published as the tool's `outputSchema`; the SDK checks results against it). */
  outputSchema?: Shape;
  run: (args: A, call: Call) => Promise<object>;
}

interface PagedSpec<A> extends BaseSpec<A & { limit: number; cursor: string | undefined }> {
  limit: { default: number; max: number; overMax: 'clamp' | 'refuse' };
  /** Take a `cursor` argument. @default true */
  cursor?: boolean;
}

/** The query argument of a search tool. @default { name: 'query', required: true } */
export interface QueryArg {
  name: string;
  required: boolean;
  /** Longest accepted query (UTF-16 units); longer is a validation error. */
  maxChars?: number;
  description?: string;
}

/**
 * The page size to read: the documented default or the caller's `limit` (over the documented max:
 * refused or clamped), then clamped to the items a page may hold under the active limits, so the
 * budget never drops items a cursor would skip (`has_more` and the cursor continue instead).
 */
function resolveLimit(ctx: ToolContext, name: string, raw: unknown, spec: PagedSpec<never>['limit']): number {
  return Math.min(requestedLimit(name, raw, spec), ctx.page.maxPageItems);
}

function requestedLimit(name: string, raw: unknown, spec: PagedSpec<never>['limit']): number {
  if (raw === undefined) return spec.default;
  const n = raw as number;
  if (n > spec.max) {
    if (spec.overMax === 'clamp') return spec.max;
    throw new WorkspaceError('INVALID_PARAMS', `Invalid params: expected \`limit\` to be an integer from 1 to ${spec.max} for ${name}, got ${n}`, {
      max: spec.max,
      value: n,
    });
  }
  return n;
}

function register(
  ctx: ToolContext,
  spec: { name: string; action: Action; description: string },
  shape: Shape,
  annotations: DeclaredTool['annotations'],
  handler: DeclaredTool['handler'],
  outputSchema?: Shape,
): void {
  const { name, action, description } = spec;
  // A tool that writes names a write action, and a read-only one a read: the table cannot be dodged by a label.
  if (annotations.readOnlyHint !== action.endsWith('.read')) throw new Error(`tool ${name}: action ${action} does not match readOnlyHint ${annotations.readOnlyHint}`);
  const tool: DeclaredTool = { name, inputShape: shape, outputSchema, annotations, action, handler };
  (ctx.declared ??= []).push(tool);
  const inputSchema = strictInput(name, shape);
  const config = outputSchema === undefined ? { description, inputSchema, annotations } : { description, inputSchema, annotations, outputSchema };
  ctx.server.registerTool(name, config, (args: Record<string, unknown>, extra: CallExtra) => runToolCall(ctx, extra, action, (call) => tool.handler(args, call)));
}

const limitArg = (max: number): z.ZodTypeAny =>
  z.number().int().min(1).optional().describe(`Page size (default shown in the description; at most ${max}).`);
const cursorArg = z.string().max(4096).optional().describe('Opaque cursor from a previous page (`next_cursor`).');

/** A browse/list tool: one bounded page; refuses a query and points to the search tool. */
export function defineListTool<A>(ctx: ToolContext, spec: PagedSpec<A>, searchTool: string): void {
  const shape: Shape = { ...spec.args, limit: limitArg(spec.limit.max), ...(spec.cursor === false ? {} : { cursor: cursorArg }) };
  for (const q of QUERY_ARGS) shape[q] = z.unknown().optional().describe(`Not accepted: use ${searchTool} to search.`);
  register(ctx, { ...spec, description: `${spec.description} Pages of ${spec.limit.default} (max ${spec.limit.max}).` }, shape, { readOnlyHint: true }, async (args, call) => {
    for (const q of QUERY_ARGS) {
      if (args[q] !== undefined) {
        throw new WorkspaceError('INVALID_PARAMS', `Invalid params: ${spec.name} lists without filtering and does not take \`${q}\`; use ${searchTool} to search.`);
      }
    }
    const limit = resolveLimit(ctx, spec.name, args.limit, spec.limit);
    return structured(await spec.run({ ...(args as A), limit, cursor: args.cursor as string | undefined }, call));
  }, spec.outputSchema);
  ctx.rows.push(rowOf(ctx, spec, 'browse/list'));
}

/**
 * A search/lookup tool: a query (required unless `query.required` is false), streamed and stopped
 * at limit+1. `run` gets the query as `query` whatever the argument is called.
 */
export function defineSearchTool<A>(ctx: ToolContext, spec: PagedSpec<A & { query: string }> & { query?: QueryArg }): void {
  const q = spec.query ?? { name: 'query', required: true };
  let qArg = z.string().min(1);
  if (q.maxChars !== undefined) qArg = qArg.max(q.maxChars);
  const qSchema = (q.required ? qArg : qArg.optional()).describe(q.description ?? 'What to look for (required).');
  const shape: Shape = { ...spec.args, [q.name]: qSchema, limit: limitArg(spec.limit.max), cursor: cursorArg };
  register(ctx, { ...spec, description: `${spec.description} Pages of ${spec.limit.default} (max ${spec.limit.max}).` }, shape, { readOnlyHint: true }, async (args, call) => {
    const limit = resolveLimit(ctx, spec.name, args.limit, spec.limit);
    return structured(await spec.run({ ...(args as A & { query: string }), query: args[q.name] as string, limit, cursor: args.cursor as string | undefined }, call));
  }, spec.outputSchema);
  ctx.rows.push(rowOf(ctx, spec, 'search/lookup'));
}

/** A detail tool: one item (or one window of it). */
export function defineDetailTool<A>(ctx: ToolContext, spec: BaseSpec<A>, classification: 'detail' | 'single-item' = 'detail'): void {
  register(ctx, spec, spec.args, { readOnlyHint: true }, async (args, call) => structured(await spec.run(args as A, call)), spec.outputSchema);
  ctx.rows.push(rowOf(ctx, spec, classification));
}

/** A mutation tool: input caps are checked by `run` before anything is written. */
export function defineMutationTool<A>(
  ctx: ToolContext,
  spec: BaseSpec<A> & {
    caps: Record<string, number>;
    /** The tool can replace or remove existing data (MCP `destructiveHint`). @default false */
    destructive?: boolean;
    /** Repeating the call with the same arguments changes nothing more (MCP `idempotentHint`). @default false */
    idempotent?: boolean;
  },
): void {
  register(
    ctx,
    spec,
    spec.args,
    { readOnlyHint: false, destructiveHint: spec.destructive === true, ...(spec.idempotent === true ? { idempotentHint: true } : {}) },
    async (args, call) => structured(await spec.run(args as A, call)),
    spec.outputSchema,
  );
  ctx.rows.push({ ...rowOf(ctx, spec, 'mutation'), input_caps: spec.caps });
}

function rowOf(ctx: ToolContext, spec: BaseSpec<never> | PagedSpec<never>, classification: Classification): InventoryRow {
  const limit = 'limit' in spec ? { default: spec.limit.default, max: spec.limit.max, over_max: spec.limit.overMax } : null;
  return {
    name: spec.name,
    entry_point: spec.entryPoint,
    classification,
    limit,
    paging: spec.row.paging,
    per_item_budget: spec.row.per_item_budget,
    result_budget: ctx.resultBudget,
    backend_query_bound: spec.row.backend_query_bound,
    structured_content: spec.outputSchema === undefined ? spec.row.structured_content : `${spec.row.structured_content}; outputSchema: ${membersOf(spec.outputSchema)}`,
  };
}

/** The members an output schema lists, optional ones marked `?` (the inventory quotes them). */
function membersOf(shape: Shape): string {
  return Object.entries(shape)
    .map(([k, s]) => (s.safeParse(undefined).success ? `${k}?` : k))
    .join(', ');
}
