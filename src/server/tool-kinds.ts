/**
 * Helpers to declare a list tool, a search tool, a detail tool and a mutation tool on an SDK
 * `McpServer`, owning the contract every such tool keeps: limit defaults and maxima, limit+1
 * paging with signed cursors, a required query for search, list tools refusing a query, input
 * caps for mutations, and errors as tool failures with a stable code. Each declaration carries its
 * inventory row, so `specs/agent-mcp-tool-inventory.json` is generated from (and tested against)
 * the code.
 *
 * The helpers are generic in a tool's input shape `S`, output shape `O` and page `R`, all inferred
 * from the declaration: `run` gets its arguments typed by `args` and must return a page typed by
 * `outputSchema` (src/tools/contract.ts), so a backend whose page drifts does not compile.
 */
import type { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import { z } from 'zod';
import { WorkspaceError } from '../fs/confine.js';
import type { Action } from '../team/index.js';
import type { ResolvedLimits } from '../engine/index.js';
import type { PageSizer } from '../shared/page-meter.js';
import {
  PAGE_SHARES,
  answerFits,
  answerSizer,
  runToolCall,
  strictInput,
  structured,
  type Call,
  type CallExtra,
  type CallHost,
  type DeclaredTool,
  type Shape,
  type PageBudget,
  type ToolArgs,
  type ToolPage,
  type ToolRun,
} from '../tools/index.js';

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

export interface ToolContext extends CallHost {
  server: McpServer;
  rows: InventoryRow[];
  /** The final result budget the server applies (quoted in every row). */
  resultBudget: string;
  /** What one page may hold under the active limits (field caps and windows are sized to it at the source). */
  page: PageBudget;
  /** The active limits: pages are sized to what their answer weighs under them (src/tools/page-sizer.ts). */
  limits: ResolvedLimits;
  /** Every tool as registered, in order: the one source `exec` derives its actions from. */
  declared?: DeclaredTool[];
  /** The surfaces this server offers (`serve --tools`): advice names only tools that exist. @default every surface */
  offered?: ReadonlySet<string>;
}

/** What searches what a list tool lists: a tool of a surface (`--tools`), or one of its own arguments (`the \`path\` argument`). */
export type SearchTool = { tool: string; surface: string } | { argument: string };

/** What every declaration names besides its schemas and body (the inventory row reads only these). */
interface SpecHead {
  name: string;
  /** A short human name for the tool (MCP `title`), shown by clients in place of `name`. */
  title: string;
  entryPoint: string;
  /** What the tool does, as the permission table names it (the pipeline checks it before `run`). */
  action: Action;
  description: string;
  row: Omit<InventoryRow, 'name' | 'entry_point' | 'classification' | 'limit' | 'result_budget'>;
  /** Shape of `structuredContent`: published as the tool's `outputSchema`, checked by the SDK, and the type of `run`'s page. */
  outputSchema: Shape;
}

/**
 * A declaration with input shape `S`, output shape `O` and page `R`; `A` is what `run` receives
 * (the arguments `S` parses to, plus what the tool's kind adds). Every tool declares an output
 * schema: `exec` types every action's result by it.
 */
interface BaseSpec<S extends Shape, O extends Shape, R, A = ToolArgs<S>> extends SpecHead {
  /** Tool-specific arguments (limit and cursor are added for paged tools). */
  args: S;
  outputSchema: O;
  run: ToolRun<A, O, R>;
}

/** What a paged tool's `run` gets besides its own arguments: the page size to read, the cursor, and what measures the page. */
export interface PageArgs {
  limit: number;
  cursor: string | undefined;
  /** Measures the page as its answer is sent: the page stops where the answer would pass a bound. */
  sizer: PageSizer;
}

/** The sizer for `call`'s pages (answered as the tool's own, or inside exec's envelope), at `share` of every bound. */
export function sizerOf(ctx: ToolContext, call: Call, share = 1): PageSizer {
  return answerSizer(ctx.limits, { ...call.answerAs, share });
}

/**
 * A page made by `make` for the sizer it is given, answered: made again for a smaller share of
 * the bounds while its answer does not fit (its own fields passed what its source kept for them),
 * so the budget never cuts it.
 */
async function sizedAnswer(ctx: ToolContext, call: Call, make: (sizer: PageSizer) => Promise<object>): Promise<ReturnType<typeof structured>> {
  let page: object | undefined;
  for (const share of PAGE_SHARES) {
    page = await make(sizerOf(ctx, call, share));
    if (answerFits(page, ctx.limits, call.answerAs)) break;
  }
  return structured(page!);
}

/** How a paged tool sizes its pages. */
interface PageLimit {
  default: number;
  max: number;
  overMax: 'clamp' | 'refuse';
}

interface PagedSpec<S extends Shape, O extends Shape, R, Extra = unknown> extends BaseSpec<S, O, R, ToolArgs<S> & PageArgs & Extra> {
  limit: PageLimit;
  /** Take a `cursor` argument. @default true */
  cursor?: boolean;
}

/** The query argument of a search tool. @default { name: 'query', required: true } */
export interface QueryArg<Required extends boolean = boolean> {
  name: string;
  /** A required query reaches `run` as a string; an optional one may be `undefined`. */
  required: Required;
  /** Longest accepted query (UTF-16 units); longer is a validation error. */
  maxChars?: number;
  description?: string;
}

/**
 * The page size to read: the documented default or the caller's `limit` (over the documented max:
 * refused or clamped), then clamped to the items a page may hold under the active limits, so the
 * budget never drops items a cursor would skip (`has_more` and the cursor continue instead).
 */
function resolveLimit(ctx: ToolContext, name: string, raw: unknown, spec: PageLimit): number {
  return Math.min(requestedLimit(name, raw, spec), ctx.page.maxPageItems);
}

function requestedLimit(name: string, raw: unknown, spec: PageLimit): number {
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
  spec: { name: string; title: string; action: Action; description: string },
  shape: Shape,
  annotations: DeclaredTool['annotations'],
  handler: DeclaredTool['handler'],
  outputSchema: Shape,
  refused?: Readonly<Record<string, string>>,
): void {
  const { name, title, action, description } = spec;
  // A tool that writes names a write action, and a read-only one a read: the table cannot be dodged by a label.
  if (annotations.readOnlyHint !== action.endsWith('.read')) throw new Error(`tool ${name}: action ${action} does not match readOnlyHint ${annotations.readOnlyHint}`);
  const tool: DeclaredTool = { name, inputShape: shape, ...(refused === undefined ? {} : { refused }), outputSchema, annotations, action, handler };
  (ctx.declared ??= []).push(tool);
  const inputSchema = strictInput(name, shape, refused);
  ctx.server.registerTool(name, { title, description, inputSchema, annotations, outputSchema }, (args: Record<string, unknown>, extra: CallExtra) => runToolCall(ctx, extra, action, (call) => tool.handler(args, call)));
}

/**
 * `limit`: its maximum is published in the schema; a larger value is refused or clamped by the
 * tool's own rule (`overMax`), with an error that names the range.
 */
const limitArg = (max: number): z.ZodTypeAny => z.number().int().min(1).optional().meta({ maximum: max }).describe('Page size.');
const cursorArg = z.string().max(4096).optional().describe('`next_cursor` of the previous page.');

/**
 * The arguments as `run` sees them. The SDK (or `exec`) parsed them with the tool's strict input
 * schema, built from `args` and the kind's own members, so they are `ToolArgs<S>` and more: the
 * contract's one cast, made here so no tool asserts its own argument types.
 */
function parsedArgs<S extends Shape>(args: Record<string, unknown>): ToolArgs<S> {
  return args as ToolArgs<S>;
}

/** The parsed arguments with what the tool's kind adds (the page size it resolved, the query under one name). */
function withKindArgs<S extends Shape, K extends object>(args: Record<string, unknown>, added: K): ToolArgs<S> & K {
  return { ...parsedArgs<S>(args), ...added };
}

/** A browse/list tool: one bounded page; refuses a query and points to the search tool. */
export function defineListTool<S extends Shape, O extends Shape, R extends ToolPage<O>>(ctx: ToolContext, spec: PagedSpec<S, O, R>, search: SearchTool): void {
  const shape: Shape = { ...spec.args, limit: limitArg(spec.limit.max), ...(spec.cursor === false ? {} : { cursor: cursorArg }) };
  // A query is refused by the input schema with this advice, and is not published.
  // The advice names the search tool only where this server offers it (`--tools` may leave its surface out).
  const advice =
    'argument' in search
      ? `use ${search.argument} to search`
      : ctx.offered === undefined || ctx.offered.has(search.surface)
        ? `use ${search.tool} to search`
        : 'this server offers no tool that searches them';
  const refused = Object.fromEntries(QUERY_ARGS.map((q) => [q, `${spec.name} lists without filtering and does not take \`${q}\`; ${advice}.`]));
  register(ctx, { ...spec, description: `${spec.description} Pages of ${spec.limit.default} (max ${spec.limit.max}).` }, shape, { readOnlyHint: true }, async (args, call) => {
    const limit = resolveLimit(ctx, spec.name, args.limit, spec.limit);
    return sizedAnswer(ctx, call, (sizer) => spec.run(withKindArgs<S, PageArgs>(args, { limit, cursor: args.cursor as string | undefined, sizer }), call));
  }, spec.outputSchema, refused);
  ctx.rows.push(rowOf(ctx, spec, 'browse/list'));
}

/** The query as `run` gets it: a string when the query is required, else possibly `undefined`. */
type QueryOf<Required extends boolean> = Required extends true ? string : string | undefined;

/**
 * A search/lookup tool: a query (required unless `query.required` is false), streamed and stopped
 * at limit+1. `run` gets the query as `query` whatever the argument is called.
 */
export function defineSearchTool<S extends Shape, O extends Shape, R extends ToolPage<O>, Required extends boolean = true>(
  ctx: ToolContext,
  spec: PagedSpec<S, O, R, { query: QueryOf<Required> }> & { query?: QueryArg<Required> },
): void {
  const q: QueryArg = spec.query ?? { name: 'query', required: true };
  let qArg = z.string().min(1);
  if (q.maxChars !== undefined) qArg = qArg.max(q.maxChars);
  const qSchema = (q.required ? qArg : qArg.optional()).describe(q.description ?? 'What to look for (required).');
  const shape: Shape = { ...spec.args, [q.name]: qSchema, limit: limitArg(spec.limit.max), cursor: cursorArg };
  register(ctx, { ...spec, description: `${spec.description} Pages of ${spec.limit.default} (max ${spec.limit.max}).` }, shape, { readOnlyHint: true }, async (args, call) => {
    const limit = resolveLimit(ctx, spec.name, args.limit, spec.limit);
    // The input schema made the query required or optional as `QueryOf` says.
    const query = args[q.name] as QueryOf<Required>;
    return sizedAnswer(ctx, call, (sizer) => spec.run(withKindArgs<S, PageArgs & { query: QueryOf<Required> }>(args, { query, limit, cursor: args.cursor as string | undefined, sizer }), call));
  }, spec.outputSchema);
  ctx.rows.push(rowOf(ctx, spec, 'search/lookup'));
}

/**
 * A detail tool: one item (or one window of it). `textView`: what its text block renders of the
 * page when not the page itself (the same content in another form: a window's pieces joined).
 */
export function defineDetailTool<S extends Shape, O extends Shape, R extends ToolPage<O>>(
  ctx: ToolContext,
  spec: BaseSpec<S, O, R> & { textView?: (page: R) => object },
  classification: 'detail' | 'single-item' = 'detail',
): void {
  register(ctx, spec, spec.args, { readOnlyHint: true }, async (args, call) => {
    const page = await spec.run(parsedArgs<S>(args), call);
    return structured(page, spec.textView?.(page));
  }, spec.outputSchema);
  ctx.rows.push(rowOf(ctx, spec, classification));
}

/** A mutation tool: input caps are checked by `run` before anything is written. */
export function defineMutationTool<S extends Shape, O extends Shape, R extends ToolPage<O>>(
  ctx: ToolContext,
  spec: BaseSpec<S, O, R> & {
    caps: Record<string, number>;
    /** The tool can replace or remove existing data (MCP `destructiveHint`). @default false */
    destructive?: boolean;
    /** Repeating the call with the same arguments changes nothing more (MCP `idempotentHint`). @default false */
    idempotent?: boolean;
  },
): void {
  // The SDK checks a result against the output schema after the handler, outside the call
  // pipeline: a mutation's answer that failed there would reach the model as a protocol error after
  // its write. It is checked here first, so that such an answer is APPLIED.
  const output = z.object(spec.outputSchema);
  register(
    ctx,
    spec,
    spec.args,
    { readOnlyHint: false, destructiveHint: spec.destructive === true, ...(spec.idempotent === true ? { idempotentHint: true } : {}) },
    async (args, call) => {
      const page = await spec.run(parsedArgs<S>(args), call);
      // The mutation returned: its write is made, so nothing after this may answer a failure.
      call.markApplied(spec.name, identifiersOf(page));
      const checked = output.safeParse(page);
      if (!checked.success) throw new Error(`${spec.name}'s answer does not match its output schema: ${checked.error.issues[0]?.message ?? 'invalid'}`);
      return structured(page);
    },
    spec.outputSchema,
  );
  ctx.rows.push({ ...rowOf(ctx, spec, 'mutation'), input_caps: spec.caps });
}

/** A mutation's top-level scalars that can identify what it did (short strings, numbers, booleans). */
function identifiersOf(page: object): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(page)) {
    if (typeof v === 'number' || typeof v === 'boolean' || (typeof v === 'string' && v.length <= 200)) out[k] = v;
  }
  return out;
}

/** How a paged tool's page is sized, as its inventory row says it. */
export const PAGE_SIZING = 'the page stops where its answer would pass an active limit, each item weighed as sent (its JSON in the structure and its line in the text block)';

function rowOf(ctx: ToolContext, spec: SpecHead & { limit?: PageLimit }, classification: Classification): InventoryRow {
  const limit = spec.limit === undefined ? null : { default: spec.limit.default, max: spec.limit.max, over_max: spec.limit.overMax };
  return {
    name: spec.name,
    entry_point: spec.entryPoint,
    classification,
    limit,
    // Every paged tool fills its page the same way: say so in its row.
    paging: limit === null ? spec.row.paging : `${spec.row.paging}; ${PAGE_SIZING}`,
    per_item_budget: spec.row.per_item_budget,
    result_budget: ctx.resultBudget,
    backend_query_bound: spec.row.backend_query_bound,
    structured_content: `${spec.row.structured_content}; outputSchema: ${membersOf(spec.outputSchema)}`,
  };
}

/** The members an output schema lists, optional ones marked `?` (the inventory quotes them). */
function membersOf(shape: Shape): string {
  return Object.entries(shape)
    .map(([k, s]) => (s.safeParse(undefined).success ? `${k}?` : k))
    .join(', ');
}
