/**
 * Rows of `specs/exec-action-inventory.json`, one per action, built from the registry (never
 * written by hand): `scripts/exec-inventory.ts` writes the file and a test compares it with the
 * registry, so an action without a row, a row without an action, or a stale row fails.
 */
import { EXEC_LIMITS } from './envelope.js';
import { continuationPlanOf, describeReceiptField, receiptPlanOf, type ContinuationPlan } from './plan.js';
import type { ActionClass, ExecAction } from './registry.js';

/** One action's row. */
export interface ActionRow {
  name: string;
  class: ActionClass;
  idempotent: boolean;
  /** The tool whose input schema (with its caps) the action takes as `input`. */
  input_schema: { same_as_tool: string; required: string[]; properties: string[] };
  /** The tool whose output schema `result` validates against. */
  output_schema: { same_as_tool: string; members: string[] };
  /** UTF-8 bytes of the whole success envelope `{action, ok, result}` (less when the server's budget is smaller). */
  envelope_limit_bytes: number;
  /** Read-only: inputs that shrink, position and narrow it, and output members that continue it. */
  continuation?: ContinuationPlan;
  /** Mutation: what the receipt holds when the envelope is over its limit. */
  receipt_fields?: string[];
}

export function actionRowOf(a: ExecAction): ActionRow {
  const props = Object.keys(a.inputShape);
  const optional = (s: { safeParse(v: unknown): { success: boolean } }): boolean => s.safeParse(undefined).success;
  const row: ActionRow = {
    name: a.name,
    class: a.class,
    idempotent: a.idempotent,
    input_schema: { same_as_tool: a.tool, required: props.filter((k) => !optional(a.inputShape[k]!)), properties: props },
    output_schema: { same_as_tool: a.tool, members: Object.entries(a.outputShape).map(([k, s]) => (optional(s) ? `${k}?` : k)) },
    envelope_limit_bytes: EXEC_LIMITS.envelopeBytes,
  };
  if (a.class === 'read_only') row.continuation = continuationPlanOf(a.inputShape, a.outputShape);
  else row.receipt_fields = ['action', 'applied', ...receiptPlanOf(a.outputShape).map(describeReceiptField)];
  return row;
}
