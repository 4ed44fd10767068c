/**
 * Package entry `mcp-result-budget/proxy`: the stdio proxy as a function (what `mcp-budget proxy`
 * runs). Kept apart from the root entry because it loads the MCP SDK's schema validator.
 */
export { runProxy, type ProxyOptions } from './transport/proxy/proxy.js';
