/**
 * The exec layer's face: the action registry behind `exec`, its envelope, and the rows of
 * `specs/exec-action-inventory.json`.
 */
export { ActionRegistry, actionNameOf, type ActionClass, type ExecAction } from './registry.js';
export { EXEC_LIMITS, EXEC_OUTPUT, actionOf, execute, type ExecSettings } from './envelope.js';
export { continuationPlanOf, receiptPlanOf, type ContinuationPlan, type ReceiptField } from './plan.js';
export { RECEIPT_LIMITS } from './receipt.js';
export { promoteExecReport, withExecReports } from './report-key.js';
export { actionRowOf, type ActionRow } from './inventory.js';
