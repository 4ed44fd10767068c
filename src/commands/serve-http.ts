/**
 * `mcp-budget serve --listen [HOST:]PORT`: the workspace server over Streamable HTTP. One
 * workspace server per session (tools, directory-handle cache and team session of their own), or
 * with `--stateless` one per request, drawn from a small pool, with the tool catalog given to the
 * result budget up front (`toolCatalogOf`), since a per-request transport never sends `tools/list`.
 *
 * Cursors: every server of the process signs with one key, so a cursor outlives its session; give
 * replicas the same key (`MCP_BUDGET_CURSOR_KEY` or `--cursor-key-file`) and a cursor from one is
 * served by another. Nothing else a cursor needs is per process (the directory browser falls back
 * to a re-scan when its cached handle is elsewhere).
 */
import { randomBytes } from 'node:crypto';
import { readFile, stat } from 'node:fs/promises';
import type { Writable } from 'node:stream';
import { usageError } from '../cli/args.js';
import type { BudgetOptions } from '../engine/index.js';
import { createWorkspaceServer, type ServerOptions, type WorkspaceServer } from '../server/create-server.js';
import type { McpHttpApp } from '../transport/http/http-server.js';
import type { TruncationListener } from '../transport/core/response-budget.js';
import { toolCatalogOf, type ResultBudgetOptions } from '../transport/decorator/with-result-budget.js';
import { httpOptionsFrom, runHttpListener, type ListeningArgs } from './http-listen.js';

/** Idle workspace servers kept for reuse in stateless mode. @default 8 */
export const STATELESS_POOL_SIZE = 8;
/** Shortest cursor key accepted from `--cursor-key-file`, in bytes. @default 32 */
export const MIN_CURSOR_KEY_BYTES = 32;

/**
 * Set the process's cursor key: from `file` when given (not readable by others, at least
 * {@link MIN_CURSOR_KEY_BYTES} bytes, surrounding whitespace trimmed), else `MCP_BUDGET_CURSOR_KEY`
 * as it is, else a random key for this process, shared by all its sessions.
 */
export async function useCursorKey(file: string | undefined): Promise<void> {
  if (file !== undefined) {
    const info = await stat(file).catch((e: Error) => {
      throw usageError(`cannot read \`--cursor-key-file\` ${JSON.stringify(file)}: ${e.message}`);
    });
    if (process.platform !== 'win32' && (info.mode & 0o006) !== 0) {
      throw usageError(`\`--cursor-key-file\` ${JSON.stringify(file)} is readable or writable by others; run \`chmod 600\` on it`);
    }
    const key = (await readFile(file, 'utf8')).trim();
    if (Buffer.byteLength(key) < MIN_CURSOR_KEY_BYTES) throw usageError(`\`--cursor-key-file\` holds fewer than ${MIN_CURSOR_KEY_BYTES} bytes of key`);
    process.env.MCP_BUDGET_CURSOR_KEY = key;
  } else if (process.env.MCP_BUDGET_CURSOR_KEY === undefined || process.env.MCP_BUDGET_CURSOR_KEY === '') {
    // Read by every CursorCodec this process makes: one key for all sessions.
    process.env.MCP_BUDGET_CURSOR_KEY = randomBytes(32).toString('base64url');
  }
}

/**
 * Serve the workspace at `root` over Streamable HTTP until SIGTERM/SIGINT; resolves with the exit
 * code. `cutLog`: makes the truncation listener of one session (`--log-cuts`), given a way to read
 * its session id.
 */
export async function runServeHttp(
  root: string,
  budget: BudgetOptions,
  team: ServerOptions,
  args: ListeningArgs,
  stderr: Writable,
  cutLog?: (session: () => string | undefined) => TruncationListener,
): Promise<number> {
  await useCursorKey(args.cursorKeyFile);
  // With a token file every call names its member; the OS user need not be one (an explicit --as still must).
  if (args.tokenFile !== undefined && team.as === undefined) team = { ...team, callersFromTokens: true };
  const options = await httpOptionsFrom(args, 'mcp-budget serve', stderr);
  // Built now, so that a bad root, store or limit is a startup error, not a failed session.
  const first = await createWorkspaceServer(root, budget, team);
  const catalog = await toolCatalogOf(first.server);
  const pool: WorkspaceServer[] = [first];
  let closing = false;
  const app: McpHttpApp = {
    async connect(transport, stateless) {
      const ws = stateless ? (pool.pop() ?? (await createWorkspaceServer(root, budget, team))) : await createWorkspaceServer(root, budget, team);
      // exec's answers move under the report key after the budget, as over stdio.
      // Stateless: one transport per request, so no handle could be read back; no continuation is offered.
      const options: ResultBudgetOptions = stateless ? { ...budget, tools: catalog, continuation: false } : { ...budget };
      if (cutLog !== undefined) options.onTruncated = cutLog(() => transport.sessionId);
      await ws.connect(transport, options);
      return async () => {
        if (stateless && !closing && pool.length < STATELESS_POOL_SIZE) {
          // The transport is closed, so the server is free to connect again.
          await ws.server.close();
          pool.push(ws);
        } else {
          await ws.close();
        }
      };
    },
  };
  return runHttpListener(app, options, async () => {
    closing = true;
    await Promise.all(pool.splice(0).map((ws) => ws.close()));
  });
}
