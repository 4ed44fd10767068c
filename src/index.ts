/** Public entry: explicit named exports only. */
export { boundJson, boundResult, type BoundedJson } from './engine/bound.js';
export { Budgeter, type RootKind } from './engine/budgeter.js';
export { ByteBudget } from './engine/byte-source.js';
export { BudgetError, type BudgetErrorCode } from './engine/errors.js';
export {
  DEFAULT_LIMITS,
  LIMIT_RANGES,
  NOTICE_KEY,
  REPORT_KEY,
  SCALED_LIMITS,
  type BudgetLimits,
  type BudgetOptions,
} from './engine/limits.js';
export { contradictions, minResultBytes, resolveLimits, scaledLimits, type ResolvedLimits } from './engine/options.js';
export { MIRROR_SUMMARY } from './engine/text-mirror.js';
export { BUDGET_KINDS, type BudgetKind, type BudgetReport } from './engine/report.js';
export type { ChunkSink } from './engine/output.js';
export { boundBytes, boundStream, type BoundStreamOptions } from './stream/bound-stream.js';
export { withResultBudget, type ResultBudgetOptions } from './transport/with-result-budget.js';
export { runProxy, type ProxyOptions } from './transport/proxy.js';
