/**
 * The tool contract's face: what `server/` and `exec/` share (declared tools, their typed contract,
 * the call pipeline, page budgets, work slots). Neither imports the other for it.
 */
export { fitEchoes, MIN_PAGE_BYTES, PAGE_OVERHEAD_BYTES, pageBudgetFor, searchPathBytes, SERVE_MINIMUMS, type PageBudget } from './page-budget.js';
export { answerFits, answerSizer, PAGE_SHARES, type AnswerShape } from './page-sizer.js';
export { Call, asToolFailure, describeFailure, runToolCall, structured, toolError, type Authority, type CallExtra, type CallHost, type DeclaredTool, type Shape } from './pipeline.js';
export { structuredPage, type OnlyListed, type ToolArgs, type ToolPage, type ToolRun, type UnlistedMembers } from './contract.js';
export { appliedAnswer, type Applied } from './applied.js';
export { editDistance, nearestNames, strictInput } from './input.js';
export { MAX_RUNNING_TOOL_CALLS, WorkLimiter } from './work-limiter.js';
