/**
 * Public entry (`mcp-result-budget`): the engine and the byte-stream functions, explicit named
 * exports only. Importing it loads neither the MCP SDK nor a schema validator (a test checks
 * this); the SDK transport decorator is at `mcp-result-budget/transport` and the stdio proxy at
 * `mcp-result-budget/proxy`.
 */
export {
  boundJson,
  boundResult,
  BudgetError,
  BUDGET_KINDS,
  ByteBudget,
  contradictions,
  DEFAULT_LIMITS,
  estimateTokens,
  LIMIT_RANGES,
  minResultBytes,
  MIRROR_SUMMARY,
  NOTICE_KEY,
  REPORT_KEY,
  resolveLimits,
  SCALED_LIMITS,
  scaledLimits,
  type BoundedJson,
  type BudgetErrorCode,
  type BudgetKind,
  type BudgetLimits,
  type BudgetOptions,
  type BlockingBound,
  type BudgetReport,
  type ChunkSink,
  type ResolvedLimits,
  type ResultReport,
  type RootKind,
  type WithheldReport,
} from './engine/index.js';
export { boundBytes, boundStream, type BoundStreamOptions } from './stream/bound-stream.js';
