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
import { withResultBudget } from '../transport/decorator/with-result-budget.js';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import type { InventoryRow, ToolContext } from './tool-kinds.js';
import { pageBudgetFor, type DeclaredTool } from '../tools/index.js';
import { registerGitTools } from './git-tools.js';
import { registerWorkspaceTools } from './workspace-tools.js';
import { registerTeamTools } from './team-tools.js';
import { TeamSession, type TeamSessionOptions } from '../team/index.js';
import { registerExecTool } from './exec-tool.js';
import { withExecReports, type ActionRegistry } from '../exec/index.js';

export const SERVER_NAME = 'mcp-result-budget-workspace';
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
  /** Connect over a transport; the transport is wrapped with the result budget. */
  connect(transport: Transport): Promise<void>;
  close(): Promise<void>;
}

/**
 * @param team the team store file and the calling member (`--team-db`, `--as`); the store is
 *   opened now when its file exists (a bad file is a startup error), else on the first team call.
 * @param onTruncated observer of every result the budget cut (`serve --log-cuts`).
 * @param faults fault injection for tests: `afterWrite` runs as each call's write is marked applied.
 */
export async function createWorkspaceServer(
  root: string,
  budget: BudgetOptions = {},
  team: TeamSessionOptions = {},
  onTruncated?: TruncationListener,
  faults: { afterWrite?: (what: string) => void } = {},
): Promise<WorkspaceServer> {
  const limits = resolveLimits(budget);
  const page = pageBudgetFor(limits); // limits too small for any page: a startup error naming the minimum
  const workspace = await Workspace.open(root);
  const server = new McpServer({ name: SERVER_NAME, version: SERVER_VERSION }, { capabilities: { tools: {} } });
  let session: TeamSession;
  try {
    session = new TeamSession(workspace.root, team);
    await session.startup();
  } catch (e) {
    await workspace.close(); // a store that stops the start (unknown --as, corrupt file) leaves nothing open
    throw e;
  }
  // Every call's caller is resolved against the team store by the pipeline (runToolCall).
  const ctx: ToolContext = { server, rows: [], resultBudget: `withResultBudget, maxResultBytes ${limits.maxResultBytes}`, page, authority: session, afterWrite: faults.afterWrite };
  const cursors = new CursorCodec();
  const browser = registerWorkspaceTools(ctx, workspace, cursors);
  registerGitTools(ctx, workspace, cursors);
  registerTeamTools(ctx, cursors);
  const exec = registerExecTool(ctx, limits); // last: its actions are the tools declared above
  return {
    server,
    workspace,
    rows: ctx.rows,
    actions: exec.registry,
    tools: ctx.declared ?? [],
    exec: (action, input) => exec.run(action, input),
    // exec's answers move under the report key once the budget has passed them
    connect: (transport) => server.connect(withResultBudget(withExecReports(transport), onTruncated === undefined ? budget : { ...budget, onTruncated })),
    close: async () => {
      browser.close();
      await server.close();
      await session.close();
      await workspace.close(); // the root's descriptor (it was left to the garbage collector)
    },
  };
}
