/**
 * The `exec` envelope. Success is `structuredContent {action, ok: true, result}`, `result` valid
 * against the action's output schema, and the whole envelope within its own limit (64 KiB of
 * JSON) and within the server's budget whole (structure and text mirror under every active limit),
 * so the budget never cuts it. An envelope over either is never cut into a partial typed success:
 * a read-only action answers `result_budget_exceeded` with what to change to get a smaller answer
 * (a smaller `limit` or `max_bytes`, the same `cursor` or `offset`); a mutation, which has already
 * been applied, answers a compact receipt of what it did and never advises a replay.
 */
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { z } from 'zod';
import { BudgetError, fitsWithinBudget, type ResolvedLimits } from '../engine/index.js';
import { WorkspaceError } from '../fs/errors.js';
import { appliedAnswer, asToolFailure, describeFailure, structuredPage, toolError, type Applied, type Call, type PageBudget } from '../tools/index.js';
import { continuationPlanOf, receiptPlanOf } from './plan.js';
import { receiptOf } from './receipt.js';
import type { ActionRegistry, ExecAction } from './registry.js';
import { ERROR_META_KEY, EXEC_META_KEY } from '../shared/meta.js';

/** Every number of `exec`, with its unit. */
export const EXEC_LIMITS = Object.freeze({
  /** The success envelope, `JSON.stringify({action, ok, result})` in UTF-8 bytes. */
  envelopeBytes: 64 * 1024,
  /** Nearest names offered for an unknown action. */
  nearestNames: 5,
  /** A retry is advised at this share of what would fit (room for uneven items and escaping). */
  retryShare: 0.8,
  /** Schema issues listed for refused input. */
  maxIssues: 10,
  /** Longest action name accepted (UTF-16 units). */
  maxActionChars: 128,
});

/** exec's `outputSchema`: the success envelope (an `isError` answer has no structure). Built here, so the envelope is typed by it. */
export const EXEC_OUTPUT = {
  action: z.string(),
  ok: z.literal(true),
  result: z.record(z.string(), z.unknown()),
};

/** `_meta` key of exec's own answers; `withExecReports` moves it under the report key once bounded. */

/** What an execution runs under: the server's resolved limits and page budget. */
export interface ExecSettings {
  limits: ResolvedLimits;
  page: PageBudget;
}

/** The action an `exec` call names, for the pipeline to admit before {@link execute} runs it. */
export function actionOf(registry: ActionRegistry, actionName: unknown): ExecAction | undefined {
  return registry.get(typeof actionName === 'string' ? actionName : '');
}

/**
 * Run `action` on `input` for `call` (admitted by the pipeline for this action) and answer with the
 * envelope (never throws for a tool failure).
 */
export async function execute(registry: ActionRegistry, settings: ExecSettings, actionName: unknown, input: unknown, call: Call): Promise<CallToolResult> {
  const action = actionOf(registry, actionName);
  if (action === undefined) return unknownAction(registry, typeof actionName === 'string' ? actionName : '');
  if (call.action !== action.declared.action) return toolError(new Error(`exec: ${action.name} was admitted as ${call.action ?? 'no action'}`));
  const parsed = action.input.safeParse(input ?? {});
  if (!parsed.success) return refusedInput(action, parsed.error.issues);
  let structure: unknown;
  // The action's pages are sized to fit this envelope, not the tool's own answer.
  call.answerAs = { execAction: action.name, maxEnvelopeBytes: EXEC_LIMITS.envelopeBytes };
  try {
    structure = (await action.declared.handler(parsed.data, call)).structuredContent;
  } catch (e) {
    if (call.applied !== undefined) return appliedThen(action, call.applied, e);
    const failure = asToolFailure(e);
    return failure instanceof BudgetError && failure.code === 'OUTCOME_UNKNOWN' ? mayHaveApplied(action, failure) : toolError(e);
  }
  if (!action.output.safeParse(structure).success) {
    const e = new Error(`exec: ${action.name} returned a result its output schema rejects`);
    return call.applied !== undefined ? appliedThen(action, call.applied, e) : toolError(e);
  }
  const envelope = { action: action.name, ok: true as const, result: structure as Record<string, unknown> };
  const bytes = Buffer.byteLength(JSON.stringify(envelope));
  const answer = structuredPage(EXEC_OUTPUT, envelope);
  const overOwn = bytes > EXEC_LIMITS.envelopeBytes;
  if (!overOwn && fitsWithinBudget(answer, settings.limits, 'result')) return answer;
  // Over the server's budget only: the structure the budget carries whole is about one page.
  const limitBytes = overOwn ? EXEC_LIMITS.envelopeBytes : Math.min(EXEC_LIMITS.envelopeBytes, settings.page.maxPageBytes);
  const over = { action: action.name, envelope_bytes: bytes, limit_bytes: limitBytes, limited_by: overOwn ? 'exec_envelope' : 'server_budget' };
  return action.class === 'read_only'
    ? withheld(action, parsed.data, envelope.result, over)
    : applied(action, envelope.result, over, settings.limits);
}

type Over = { action: string; envelope_bytes: number; limit_bytes: number; limited_by: string };

/** A read-only answer over the limit: nothing to lose, so say how to ask for less. */
function withheld(action: ExecAction, input: Record<string, unknown>, result: Record<string, unknown>, over: Over): CallToolResult {
  const plan = continuationPlanOf(action.inputShape, action.outputShape);
  const share = (over.limit_bytes / over.envelope_bytes) * EXEC_LIMITS.retryShare;
  const change: Record<string, unknown> = {};
  for (const k of plan.shrink) {
    const now = currentSize(k, input, result);
    if (now !== undefined && now > 1) change[k] = Math.max(1, Math.floor(now * share));
  }
  // The retry starts where this call did: the same cursor or offset (the withheld page's own next_cursor would skip it).
  for (const k of plan.position) if (input[k] !== undefined) change[k] = input[k];
  const how =
    Object.keys(change).length > 0
      ? `Call exec again with the same action and input, changing ${Object.entries(change).map(([k, v]) => `\`${k}\` to ${JSON.stringify(v)}`).join(', ')}`
      : `Call exec again asking for less${plan.narrow.length > 0 ? `, narrowing with ${plan.narrow.map((k) => `\`${k}\``).join(', ')}` : ''}`;
  return {
    content: [
      {
        type: 'text',
        text: `result_budget_exceeded: the answer of \`${action.name}\` (${over.envelope_bytes} bytes) is over exec's ${over.limit_bytes}-byte envelope limit, so it was withheld (never cut). ${how}.`,
      },
    ],
    isError: true,
    _meta: {
      [EXEC_META_KEY]: {
        error: 'result_budget_exceeded',
        ...over,
        continuation: { continue_with: change, narrow_with: [...plan.shrink, ...plan.position, ...plan.narrow], cursor_fields: plan.cursors },
      },
    },
  };
}

/** The size a shrink input has now: a page's item count, a window's bytes, a comments page's length. */
function currentSize(input: string, args: Record<string, unknown>, result: Record<string, unknown>): number | undefined {
  if (input === 'max_bytes') return typeof result.bytes === 'number' ? result.bytes : undefined;
  if (input === 'comments_limit') return Array.isArray(result.comments) ? result.comments.length : undefined;
  let longest: number | undefined;
  for (const v of Object.values(result)) if (Array.isArray(v)) longest = Math.max(longest ?? 0, v.length);
  return longest ?? (typeof args.limit === 'number' ? args.limit : undefined);
}

/** A mutation's answer over the limit: it was applied, so a receipt, and no advice to call again. */
function applied(action: ExecAction, result: Record<string, unknown>, over: Over, limits: ResolvedLimits): CallToolResult {
  const receipt = receiptOf(receiptPlanOf(action.outputShape), result, limits);
  const answer = {
    content: [
      {
        type: 'text' as const,
        text:
          `\`${action.name}\` was applied. Its answer (${over.envelope_bytes} bytes) is over exec's ${over.limit_bytes}-byte envelope limit, ` +
          `so it is not returned; the receipt in _meta identifies what was done. Do not repeat the call: it has already taken effect.`,
      },
    ],
    isError: true,
    _meta: { [EXEC_META_KEY]: { error: 'result_budget_exceeded', ...over, applied: true, receipt: { action: action.name, applied: true, ...receipt.fields } } },
  };
  // The receipt must leave whole: shed list entries, then its last fields, until the answer fits the server's budget.
  while (!fitsWithinBudget(answer, limits, 'result') && receipt.drop()) {
    answer._meta[EXEC_META_KEY].receipt = { action: action.name, applied: true, ...receipt.fields };
  }
  return answer;
}

/** A mutation whose write committed and whose answer then failed: a receipt of what is known, and no replay. */
function appliedThen(action: ExecAction, done: Applied, e: unknown): CallToolResult {
  const answer = appliedAnswer(done, describeFailure(e));
  const receipt = { action: action.name, applied: true, ...done.known };
  return { ...answer, _meta: { ...answer._meta, [EXEC_META_KEY]: { error: 'answer_failed', applied: true, receipt } } };
}

/** A mutation whose outcome is unknown: the receipt says so with what is known, and never invites a replay. */
function mayHaveApplied(action: ExecAction, e: WorkspaceError): CallToolResult {
  const answer = toolError(e);
  const receipt = { action: action.name, ...e.data, applied: 'unknown' };
  return { ...answer, _meta: { ...answer._meta, [EXEC_META_KEY]: { error: 'outcome_unknown', applied: 'unknown', receipt } } };
}

function unknownAction(registry: ActionRegistry, name: string): CallToolResult {
  const nearest = registry.nearest(name.slice(0, EXEC_LIMITS.maxActionChars), EXEC_LIMITS.nearestNames);
  const shown = JSON.stringify(name.slice(0, EXEC_LIMITS.maxActionChars));
  return failure(
    'INVALID_PARAMS',
    `Unknown action ${shown}. Nearest: ${nearest.join(', ')}. Actions are named domain.verb (${registry.list().length} in all).`,
    { nearest },
  );
}

function refusedInput(action: ExecAction, issues: readonly { path: readonly PropertyKey[]; message: string }[]): CallToolResult {
  const listed = issues.slice(0, EXEC_LIMITS.maxIssues).map((i) => ({ path: pointerOf(['input', ...i.path]), message: i.message }));
  const text = listed.map((i) => `${i.path}: ${i.message.replace(/[.\s]+$/, '')}`).join('; ');
  const nothing = action.class === 'mutation' ? ' Nothing was applied.' : '';
  return failure('INVALID_PARAMS', `Invalid params: the input does not match the input schema of ${action.name}: ${text}.${nothing}`, { issues: listed });
}

/** RFC 6901 pointer into exec's arguments. */
function pointerOf(path: readonly PropertyKey[]): string {
  return path.map((p) => '/' + String(p).replace(/~/g, '~0').replace(/\//g, '~1')).join('');
}

function failure(code: 'INVALID_PARAMS', message: string, data: Record<string, unknown>): CallToolResult {
  const e = toolError(new WorkspaceError(code, message));
  return { ...e, _meta: { [ERROR_META_KEY]: { code, ...data } } };
}
