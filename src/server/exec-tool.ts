/**
 * `exec {action, input}`: one typed front door for every built-in tool of `serve`. Registered
 * last, from the tools already declared, so every tool is an action and no list is kept twice.
 * The envelope and its limit are `src/exec/envelope.ts`; the action rows are
 * `specs/exec-action-inventory.json`.
 */
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { z } from 'zod';
import type { ResolvedLimits } from '../engine/index.js';
import { ActionRegistry, EXEC_LIMITS, EXEC_OUTPUT, actionOf, execute } from '../exec/index.js';
import { runToolCall, strictInput, type CallExtra } from '../tools/index.js';
import type { ToolContext } from './tool-kinds.js';

const ENTRY = 'src/server/exec-tool.ts';

/** exec's arguments: the action's name and its input (the action's own tool's arguments). */
const EXEC_INPUT = {
  action: z.string().min(1).max(EXEC_LIMITS.maxActionChars).describe('Action name, domain.verb (e.g. workspace.list_dir, git.log, task.create).'),
  input: z.record(z.string(), z.unknown()).optional().describe("The action's input: the same arguments as its tool (default {})."),
};

/** `exec` as registered: its actions, and the route the `mcp-budget exec` CLI takes (the same pipeline). */
export interface ExecRoute {
  registry: ActionRegistry;
  /** Run one action through the call pipeline, as `extra`'s caller (none: the server's own member). */
  run(action: unknown, input: unknown, extra?: CallExtra): Promise<CallToolResult>;
}

/**
 * `exec` over the tools declared so far: registered as a tool when `publish` (else only the route
 * `mcp-budget exec` runs actions through).
 */
export function registerExecTool(ctx: ToolContext, limits: ResolvedLimits, publish = true): ExecRoute {
  const registry = new ActionRegistry(ctx.declared ?? []);
  const settings = { limits, page: ctx.page };
  // Every route into an action: the pipeline admits the caller for the action's own permission,
  // then the action's handler runs inside that one call (one work slot, never a second).
  const run = (action: unknown, input: unknown, extra: CallExtra = {}): Promise<CallToolResult> =>
    runToolCall(ctx, extra, actionOf(registry, action)?.declared.action, (call) => execute(registry, settings, action, input, call));
  const names = registry.list().map((a) => a.name);
  if (!publish) return { registry, run };
  ctx.server.registerTool(
    'exec',
    {
      title: 'Run an action',
      description:
        `Run one built-in action by name with its tool's input; the answer is {action, ok, result}, result typed by the action's output schema, ` +
        `at most ${EXEC_LIMITS.envelopeBytes} bytes. A larger read answer is withheld with what to change (limit, max_bytes, cursor); a larger mutation answer is a receipt (applied: do not repeat). ` +
        `Actions: ${names.join(', ')}.`,
      inputSchema: strictInput('exec', EXEC_INPUT),
      outputSchema: EXEC_OUTPUT,
      annotations: { readOnlyHint: false, destructiveHint: true, idempotentHint: false },
    },
    // the strict schema parsed them: `action` a string, `input` an object or absent, nothing else
    (args: Record<string, unknown>, extra: CallExtra) => run(args.action, args.input, extra),
  );
  ctx.rows.push({
    name: 'exec',
    entry_point: `${ENTRY}#exec`,
    classification: 'mutation',
    limit: null,
    paging: 'per action, as its tool pages (specs/exec-action-inventory.json); an answer over the envelope limit names the inputs that shrink it and the cursor or offset to keep',
    per_item_budget: `envelope {action, ok, result} ≤ ${EXEC_LIMITS.envelopeBytes} bytes and within the server budget whole; over it: result_budget_exceeded guidance (read-only) or an applied receipt (mutation)`,
    result_budget: ctx.resultBudget,
    backend_query_bound: "the action's tool: the same input schema, caps and run function",
    structured_content: 'the envelope object; the text block is its compact rendering (its JSON when that is no larger); outputSchema: action, ok, result',
  });
  return { registry, run };
}
