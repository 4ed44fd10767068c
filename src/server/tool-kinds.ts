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
import type { WorkspaceErrorCode } from '../fs/errors.js';
import { TeamError, accessOf, isTeamAction, permissionDenied, type Access, type Action, type Caller, type Member, type TeamStore } from '../team/index.js';
import type { PageBudget } from './page-budget.js';
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
  /** Who calls: resolves the request's member (or the server's own) against the team store. */
  authority: Authority;
}

/** Resolves the caller of one call (the team session): refuses an unknown or deactivated member. */
export interface Authority {
  /** `member`: the member a transport authenticated, else the server's own; `team`: the call needs the store. */
  caller(member: string | undefined, team: boolean): Promise<Caller>;
}

/** Zod shape of a tool's input or output object. */
export type Shape = Record<string, z.ZodTypeAny>;

/** A registered tool as `exec` reuses it: the same input shape, output schema and handler. */
export interface DeclaredTool {
  name: string;
  inputShape: Shape;
  outputSchema: Shape | undefined;
  annotations: { readOnlyHint: boolean; destructiveHint?: boolean; idempotentHint?: boolean };
  /** What the tool does, as the permission table names it. */
  action: Action;
  /** The tool's handler on validated arguments, for a call the pipeline admitted (it holds the work slot). */
  handler: (args: Record<string, unknown>, call: Call) => Promise<CallToolResult>;
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

/** Team codes the model already knows from the workspace tools; the rest are the store's trouble. */
const TEAM_CODES: readonly string[] = ['NOT_FOUND', 'INVALID_PARAMS', 'INPUT_TOO_LARGE', 'ALREADY_EXISTS', 'INVALID_CURSOR', 'PERMISSION_DENIED'];

/** A team failure (or a busy SQLite store) as a tool failure with a workspace code. */
function asWorkspaceError(e: unknown): unknown {
  if (e instanceof TeamError) {
    const code = (TEAM_CODES.includes(e.code) ? e.code : e.code === 'UNKNOWN_MEMBER' ? 'NOT_FOUND' : 'IO_ERROR') as WorkspaceErrorCode;
    return new WorkspaceError(code, e.message, e.data);
  }
  const sqlite = (e as { code?: unknown } | null)?.code;
  if (typeof sqlite === 'string' && sqlite.startsWith('SQLITE_BUSY')) {
    return new WorkspaceError('IO_ERROR', 'The team store is busy (another process is writing); try again.');
  }
  return e;
}

/** A tool failure the model can act on: `isError` with the code and what to do. */
export function toolError(failure: unknown): CallToolResult {
  const e = asWorkspaceError(failure);
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

/** Only {@link runToolCall} holds it, so only the pipeline can make a {@link Call}. */
const PIPELINE: unique symbol = Symbol('runToolCall');

/**
 * One call as the pipeline admitted it, handed to the handler explicitly: who calls (resolved
 * against the store, never assumed), the action and the access the permission table gives the
 * caller for it. Only {@link runToolCall} can make one, so a route into a handler that skips the
 * pipeline has no call to hand it and does not compile.
 */
export class Call {
  constructor(
    token: typeof PIPELINE,
    /** The action admitted; undefined for an `exec` action that does not exist (nothing runs). */
    readonly action: Action | undefined,
    readonly access: Access,
    readonly caller: Caller,
    readonly signal: AbortSignal | undefined,
  ) {
    if (token !== PIPELINE) throw new Error('a Call is made by runToolCall only');
  }

  /** The store and the calling member, for a team action (the pipeline opened the store for it). */
  team(): { store: TeamStore; me: Member } {
    const { store, me } = this.caller;
    if (store === undefined || me === undefined) throw new Error(`${this.action ?? 'this action'} ran without the team store`);
    return { store, me };
  }

  /**
   * Settle `own` access on the item about to change, read inside the write that changes it (never
   * on an earlier read): refused unless the caller may act on any item or `mine` says it is its own.
   */
  requireOwn(mine: boolean): void {
    if (this.access === 'allowed') return;
    if (this.access === 'own' && mine) return;
    throw permissionDenied(this.action!, this.team().me, this.access);
  }
}

/** The member a transport authenticated (`extra.authInfo.clientId`: an HTTP bearer token's member). */
function tokenMember(authInfo: CallExtra['authInfo']): string | undefined {
  const id = authInfo?.clientId;
  return typeof id === 'string' && id !== '' ? id : undefined;
}

/**
 * The one way into a tool handler, for every route (a tool's own `tools/call` over stdio and HTTP,
 * `exec`, the `mcp-budget exec` CLI): a work slot for the whole call; the caller resolved from the
 * request's `authInfo` (else the server's own member) against the store, an unknown or deactivated
 * one refused; the permission table's access for the caller's role and `action` (`denied` refused
 * here, `own` handed on in the call); the handler with that {@link Call}; errors mapped to a tool
 * result. `action` is undefined only for an `exec` action that does not exist.
 */
export async function runToolCall(
  ctx: ToolContext,
  extra: CallExtra,
  action: Action | undefined,
  handler: (call: Call) => Promise<CallToolResult>,
): Promise<CallToolResult> {
  const work = (ctx.work ??= new WorkLimiter());
  try {
    return await work.run(extra.signal, async () => {
      const caller = await ctx.authority.caller(tokenMember(extra.authInfo), action !== undefined && isTeamAction(action));
      const access = action === undefined ? 'denied' : accessOf(action, caller.me);
      if (action !== undefined && access === 'denied') {
        if (caller.me === undefined) throw new Error(`${action} needs a member record`);
        throw permissionDenied(action, caller.me, access);
      }
      return handler(new Call(PIPELINE, action, access, caller, extra.signal));
    });
  } catch (e) {
    return toolError(e);
  }
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
  const config = outputSchema === undefined ? { description, inputSchema: shape, annotations } : { description, inputSchema: shape, annotations, outputSchema };
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
