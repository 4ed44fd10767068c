/**
 * `mcp-budget serve [--root DIR]`: the workspace MCP server over stdio. Started in a terminal
 * (stdin is a TTY) it says how to connect a client instead of waiting silently.
 */
import { StdioServerTransport } from '@modelcontextprotocol/sdk/server/stdio.js';
import type { BudgetOptions } from '../engine/limits.js';
import { createWorkspaceServer } from '../server/create-server.js';

/** Quote for a POSIX shell: single quotes, with any single quote closed, escaped and reopened. */
export function shellQuote(s: string): string {
  return `'${s.replace(/'/g, `'\\''`)}'`;
}

export function connectHelp(root: string): string {
  const cmd = `npx mcp-budget serve --root ${shellQuote(root)}`;
  return [
    'mcp-budget serve speaks MCP over stdin/stdout; it is meant to be started by an MCP client.',
    '',
    'Claude Code:',
    `  claude mcp add workspace -- ${cmd}`,
    'Claude Desktop / Cursor (mcpServers in the JSON configuration):',
    `  "workspace": { "command": "npx", "args": ["mcp-budget", "serve", "--root", ${JSON.stringify(root)}] }`,
    '',
    'Waiting for a client on stdin (Ctrl-C to quit).',
    '',
  ].join('\n');
}

export async function runServe(root: string, budget: BudgetOptions): Promise<void> {
  const ws = await createWorkspaceServer(root, budget);
  if (process.stdin.isTTY) process.stderr.write(connectHelp(ws.workspace.root));
  const transport = new StdioServerTransport();
  await ws.connect(transport);
  // The transport's own onclose belongs to the SDK and the decorator: listen on the server.
  await new Promise<void>((resolve) => {
    ws.server.server.onclose = resolve;
    process.stdin.once('end', resolve);
  });
  await ws.close();
}
