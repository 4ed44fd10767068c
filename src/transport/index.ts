/**
 * Package entry `mcp-result-budget/transport`: the SDK Transport decorator. Kept apart from the
 * root entry because it loads the MCP SDK's schema validator (for typed tools' output schemas).
 */
export { toolCatalogOf, withResultBudget, type BudgetedTransport, type ResultBudgetOptions, type ToolListingServer } from './decorator/with-result-budget.js';
export { ContinuationStore } from './core/continuation-store.js';
export type { TruncationListener } from './core/response-budget.js';
