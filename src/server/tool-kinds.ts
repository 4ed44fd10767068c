/**
 * Helpers to declare a list tool, a search tool, a detail tool and a mutation tool on an SDK
 * `McpServer`, owning the contract every such tool keeps: limit defaults and maxima, limit+1
 * paging with signed cursors, a required query for search, list tools refusing a query, input
 * caps for mutations, and errors as tool failures with a stable code. Each declaration carries its
 * inventory row, so `specs/agent-mcp-tool-inventory.json` is generated from (and tested against)
 * the code.
 */
import type { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { z } from 'zod';
import { WorkspaceError } from '../fs/confine.js';
import type { PageBudget } from './page-budget.js';
import { runAsCaller } from './call-context.js';
import { WorkLimiter } from './work-limiter.js';
import { StderrWarnings } from '../transport/warnings.js';

/** Unexpected tool errors for the operator: a client can cause many, so they share stderr's bound. */
const toolErrors = new StderrWarnings(process.stderr, 'mcp-budget');

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
  /** Bounds the tool handlers running at once (created on first registration). */
  work?: WorkLimiter;
  /** Every tool as registered, in order: the one source `exec` derives its actions from. */
  declared?: DeclaredTool[];
}

/** Zod shape of a tool's input or output object. */
export type Shape = Record<string, z.ZodTypeAny>;

/** A registered tool as `exec` reuses it: the same input shape, output schema and handler. */
export interface DeclaredTool {
  name: string;
  inputShape: Shape;
  outputSchema: Shape | undefined;
  annotations: { readOnlyHint: boolean; destructiveHint?: boolean; idempotentHint?: boolean };
  /** The tool's handler on validated arguments, outside the work limiter (the caller holds a slot). */
  handler: (args: Record<string, unknown>) => Promise<CallToolResult>;
}

interface BaseSpec<A> {
  name: string;
  entryPoint: string;
  description: string;
  /** Tool-specific arguments (limit and cursor are added for paged tools). */
  args: Shape;
  row: Omit<InventoryRow, 'name' | 'entry_point' | 'classification' | 'limit' | 'result_budget'>;
  /** Shape of `structuredContent` (published as the tool's `outputSchema`; the SDK checks results against it). */
  outputSchema?: Shape;
  run: (args: A) => Promise<object>;
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

/** A tool failure the model can act on: `isError` with the code and what to do. */
export function toolError(e: unknown): CallToolResult {
  const code = e instanceof WorkspaceError ? e.code : 'INTERNAL_ERROR';
  let message: string;
  if (e instanceof WorkspaceError) {
    message = e.message;
  } else if (e instanceof Error && e.name === 'AbortError') {
    message = 'The call was cancelled'; // the client asked for it: nothing to log (no answer is sent)
  } else {
    // Not a failure we describe: its message may name host paths or descriptors, so the model
    // gets the error code only and the operator gets the whole error on stderr.
    const errno = (e as NodeJS.ErrnoException | undefined)?.code;
    message = `An unexpected error occurred (${typeof errno === 'string' ? errno : 'error'}); the server log has the details. Try again; if it persists, report it.`;
    toolErrors.warn(`unexpected tool error: ${e instanceof Error ? (e.stack ?? e.message) : String(e)}`);
  }
  return { content: [{ type: 'text', text: `${code}: ${message}` }], isError: true, _meta: { 'io.github.mcp-result-budget/error': { code } } };
}

/** The structure, with its JSON as the text block (the mirror the budget knows how to rebuild). */
export function structured(value: object): CallToolResult {
  return { content: [{ type: 'text', text: JSON.stringify(value) }], structuredContent: value as Record<string, unknown> };
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

/** What the SDK hands a tool handler that the pipeline reads. */
export interface CallExtra {
  signal?: AbortSignal;
  authInfo?: { clientId?: unknown };
}

/**
 * The one way into a tool handler, for every route (a tool's own `tools/call`, `exec`): a work slot
 * for the whole call, the caller from the request's `authInfo` (the handler and everything it
 * awaits see it through `callerMember()`), and errors mapped to a tool result. A route that does not
 * go through here runs as the server's own `--as` member: that is the defect this prevents.
 */
export async function runToolCall(ctx: ToolContext, extra: CallExtra, handler: () => Promise<CallToolResult>): Promise<CallToolResult> {
  const work = (ctx.work ??= new WorkLimiter());
  try {
    return await work.run(extra.signal, () => runAsCaller(extra.authInfo, handler));
  } catch (e) {
    return toolError(e);
  }
}

function register(
  ctx: ToolContext,
  name: string,
  description: string,
  shape: Shape,
  annotations: DeclaredTool['annotations'],
  handler: (args: Record<string, unknown>) => Promise<CallToolResult>,
  outputSchema?: Shape,
): void {
  (ctx.declared ??= []).push({ name, inputShape: shape, outputSchema, annotations, handler });
  const config = outputSchema === undefined ? { description, inputSchema: shape, annotations } : { description, inputSchema: shape, annotations, outputSchema };
  ctx.server.registerTool(name, config, (args: Record<string, unknown>, extra: CallExtra) => runToolCall(ctx, extra, () => handler(args)));
}

const limitArg = (max: number): z.ZodTypeAny =>
  z.number().int().min(1).optional().describe(`Page size (default shown in the description; at most ${max}).`);
const cursorArg = z.string().max(4096).optional().describe('Opaque cursor from a previous page (`next_cursor`).');

/** A browse/list tool: one bounded page; refuses a query and points to the search tool. */
export function defineListTool<A>(ctx: ToolContext, spec: PagedSpec<A>, searchTool: string): void {
  const shape: Shape = { ...spec.args, limit: limitArg(spec.limit.max), ...(spec.cursor === false ? {} : { cursor: cursorArg }) };
  for (const q of QUERY_ARGS) shape[q] = z.unknown().optional().describe(`Not accepted: use ${searchTool} to search.`);
  register(ctx, spec.name, `${spec.description} Pages of ${spec.limit.default} (max ${spec.limit.max}).`, shape, { readOnlyHint: true }, async (args) => {
    for (const q of QUERY_ARGS) {
      if (args[q] !== undefined) {
        throw new WorkspaceError('INVALID_PARAMS', `Invalid params: ${spec.name} lists without filtering and does not take \`${q}\`; use ${searchTool} to search.`);
      }
    }
    const limit = resolveLimit(ctx, spec.name, args.limit, spec.limit);
    return structured(await spec.run({ ...(args as A), limit, cursor: args.cursor as string | undefined }));
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
  register(ctx, spec.name, `${spec.description} Pages of ${spec.limit.default} (max ${spec.limit.max}).`, shape, { readOnlyHint: true }, async (args) => {
    const limit = resolveLimit(ctx, spec.name, args.limit, spec.limit);
    return structured(await spec.run({ ...(args as A & { query: string }), query: args[q.name] as string, limit, cursor: args.cursor as string | undefined }));
  }, spec.outputSchema);
  ctx.rows.push(rowOf(ctx, spec, 'search/lookup'));
}

/** A detail tool: one item (or one window of it). */
export function defineDetailTool<A>(ctx: ToolContext, spec: BaseSpec<A>, classification: 'detail' | 'single-item' = 'detail'): void {
  register(ctx, spec.name, spec.description, spec.args, { readOnlyHint: true }, async (args) => structured(await spec.run(args as A)), spec.outputSchema);
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
    spec.name,
    spec.description,
    spec.args,
    { readOnlyHint: false, destructiveHint: spec.destructive === true, ...(spec.idempotent === true ? { idempotentHint: true } : {}) },
    async (args) => structured(await spec.run(args as A)),
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
