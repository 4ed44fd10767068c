/**
 * Builds the workspace MCP server: an SDK `McpServer` whose tools are declared through the
 * list/search/detail/mutation helpers, connected through `withResultBudget` so every response
 * leaves bounded, whatever a tool does.
 */
import { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import type { Transport } from '@modelcontextprotocol/sdk/shared/transport.js';
import { Workspace } from '../fs/confine.js';
import { CursorCodec } from '../shared/cursor.js';
import { resolveLimits, type BudgetOptions } from '../engine/index.js';
import type { TruncationListener } from '../transport/core/response-budget.js';
import { withResultBudget, type ResultBudgetOptions } from '../transport/decorator/with-result-budget.js';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import type { InventoryRow, ToolContext } from './tool-kinds.js';
import { pageBudgetFor, type DeclaredTool } from '../tools/index.js';
import { registerGitTools } from './git-tools.js';
import { registerWorkspaceTools } from './workspace-tools.js';
import { registerTeamTools } from './team-tools.js';
import { TeamSession, type TeamSessionOptions } from '../team/index.js';
import { registerExecTool } from './exec-tool.js';
import { leanToolListing, withToolAliases } from './tool-listing.js';
import { withExecReports, type ActionRegistry } from '../exec/index.js';

export const SERVER_NAME = 'mcp-result-budget-workspace';

/** The surfaces `serve` can offer (`--tools`): each registers its tools, and `exec` runs only the actions of the tools registered. */
export const TOOLSETS = ['workspace', 'git', 'team', 'exec'] as const;
export type Toolset = (typeof TOOLSETS)[number];

/** The team session's options and the surfaces to offer. */
export interface ServerOptions extends TeamSessionOptions {
  /** The surfaces to register (`--tools`). @default every one */
  toolsets?: readonly Toolset[];
}

/** `--tools workspace,git`: the named surfaces, each once; an unknown name is refused with the list. */
export function parseToolsets(text: string): Toolset[] {
  const names = [...new Set(text.split(',').map((s) => s.trim()).filter((s) => s !== ''))];
  const unknown = names.filter((n) => !(TOOLSETS as readonly string[]).includes(n));
  if (names.length === 1 && names[0] === 'exec') throw new Error('--tools: exec runs the actions of the other surfaces offered; name at least one of workspace, git, team with it');
  if (names.length === 0 || unknown.length > 0) {
    throw new Error(`--tools: ${names.length === 0 ? 'no surface named' : `unknown surface ${unknown.map((n) => JSON.stringify(n.slice(0, 40))).join(', ')}`}; name one or more of ${TOOLSETS.join(', ')}, comma-separated`);
  }
  return TOOLSETS.filter((t) => names.includes(t));
}
export const SERVER_VERSION = '0.1.0';

export interface WorkspaceServer {
  server: McpServer;
  workspace: Workspace;
  /** Inventory rows of the registered tools, in registration order. */
  rows: InventoryRow[];
  /** The actions of `exec`: every other tool, by `domain.verb`. */
  actions: ActionRegistry;
  /** Every tool as declared (name, action, handler), in registration order. */
  tools: readonly DeclaredTool[];
  /** Run one `exec` action through the call pipeline as the server's own member (`mcp-budget exec`). */
  exec(action: string, input: unknown): Promise<CallToolResult>;
  /**
   * Connect a transport through the one wrapper chain every route takes (old tool names, exec's
   * report key, the result budget). `options` replaces the budget's options (HTTP passes a
   * stateless catalog and its cut log).
   */
  connect(transport: Transport, options?: ResultBudgetOptions): Promise<void>;
  close(): Promise<void>;
}

/**
 * @param options the team store file and the calling member (`--team-db`, `--as`), and the surfaces offered (`--tools`); the store is
 *   opened now when its file exists (a bad file is a startup error), else on the first team call.
 * @param onTruncated observer of every result the budget cut (`serve --log-cuts`).
 * @param faults fault injection for tests: `afterWrite` runs as each call's write is marked applied.
 */
export async function createWorkspaceServer(
  root: string,
  budget: BudgetOptions = {},
  options: ServerOptions = {},
  onTruncated?: TruncationListener,
  faults: { afterWrite?: (what: string) => void } = {},
): Promise<WorkspaceServer> {
  // the same check as the flag's: a set with nothing for exec to run, or an unknown name, is refused before anything opens
  if (options.toolsets !== undefined) parseToolsets(options.toolsets.join(','));
  const limits = resolveLimits(budget);
  const page = pageBudgetFor(limits); // limits too small for any page: a startup error naming the minimum
  const workspace = await Workspace.open(root);
  const server = new McpServer({ name: SERVER_NAME, version: SERVER_VERSION }, { capabilities: { tools: {} } });
  let session: TeamSession;
  try {
    const { toolsets: _, ...team } = options;
    session = new TeamSession(workspace.root, team);
    await session.startup();
  } catch (e) {
    await workspace.close(); // a store that stops the start (unknown --as, corrupt file) leaves nothing open
    throw e;
  }
  // Every call's caller is resolved against the team store by the pipeline (runToolCall).
  const offered = new Set<Toolset>(options.toolsets ?? TOOLSETS);
  const ctx: ToolContext = { server, rows: [], resultBudget: `withResultBudget, maxResultBytes ${limits.maxResultBytes}`, page, limits, authority: session, afterWrite: faults.afterWrite, offered };
  const cursors = new CursorCodec();
  const browser = offered.has('workspace') ? registerWorkspaceTools(ctx, workspace, cursors) : undefined;
  if (offered.has('git')) registerGitTools(ctx, workspace, cursors);
  if (offered.has('team')) registerTeamTools(ctx, cursors);
  // last: its actions are the tools declared above, and no other (a surface left out has no route in)
  const exec = offered.has('exec') ? registerExecTool(ctx, limits) : registerExecTool(ctx, limits, false);
  leanToolListing(server);
  return {
    server,
    workspace,
    rows: ctx.rows,
    actions: exec.registry,
    tools: ctx.declared ?? [],
    exec: (action, input) => exec.run(action, input),
    // exec's answers move under the report key once the budget has passed them
    connect: (transport, options) => server.connect(withResultBudget(withExecReports(withToolAliases(transport)), options ?? (onTruncated === undefined ? budget : { ...budget, onTruncated }))),
    close: async () => {
      browser?.close();
      await server.close();
      await session.close();
      await workspace.close(); // the root's descriptor (it was left to the garbage collector)
    },
  };
}
