/**
 * `mcp-budget serve [--root DIR] [--max-request-bytes N]`: the workspace MCP server over stdio.
 * Started in a terminal (stdin is a TTY) it says how to connect a client instead of waiting
 * silently. Its stdio transport is ours (`BoundedStdioServerTransport`), not the SDK's: capped
 * lines, an answer for every malformed request, and reading paused while answers pile up.
 */
import type { BudgetOptions } from '../engine/index.js';
import { createWorkspaceServer, type ServerOptions } from '../server/create-server.js';
import type { TruncationListener } from '../transport/core/response-budget.js';
import { BoundedStdioServerTransport, type BoundedStdioOptions } from '../transport/stdio/stdio-server.js';

/** Quote for a POSIX shell: single quotes, with any single quote closed, escaped and reopened. */
export function shellQuote(s: string): string {
  return `'${s.replace(/'/g, `'\\''`)}'`;
}

export function connectHelp(root: string): string {
  // `npx -y mcp-result-budget`: the package's own name, so the entry works from any directory (a
  // bare `npx mcp-budget` asks the registry for a package of that name, which is not this one).
  const cmd = `npx -y mcp-result-budget serve --root ${shellQuote(root)}`;
  return [
    'mcp-budget serve speaks MCP over stdin/stdout; it is meant to be started by an MCP client.',
    '',
    'Claude Code:',
    `  claude mcp add workspace -- ${cmd}`,
    'Claude Desktop / Cursor (mcpServers in the JSON configuration):',
    `  "workspace": { "command": "npx", "args": ["-y", "mcp-result-budget", "serve", "--root", ${JSON.stringify(root)}] }`,
    '',
    'Waiting for a client on stdin (Ctrl-C to quit).',
    '',
  ].join('\n');
}

/** Options of {@link runServe}: the stdio transport's limits (and streams, for embedding), and the team store (`--team-db`, `--as`). */
export type ServeOptions = BoundedStdioOptions & { team?: ServerOptions; onTruncated?: TruncationListener };

/**
 * Serve the workspace at `root` over stdio until the client goes: the transport closes once stdin
 * has ended and every request read has been answered, or at once when stdout is closed (EPIPE).
 */
export async function runServe(root: string, budget: BudgetOptions, options: ServeOptions = {}): Promise<void> {
  const ws = await createWorkspaceServer(root, budget, options.team, options.onTruncated);
  const stdin = options.stdin ?? process.stdin;
  if ((stdin as { isTTY?: boolean }).isTTY === true) (options.stderr ?? process.stderr).write(connectHelp(ws.workspace.root));
  const transport = new BoundedStdioServerTransport(options);
  // The transport's own onclose belongs to the SDK and the decorator: listen on the server.
  const closed = new Promise<void>((resolve) => {
    ws.server.server.onclose = resolve;
  });
  await ws.connect(transport);
  await closed;
  await ws.close();
}
