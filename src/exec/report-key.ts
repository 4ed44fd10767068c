/**
 * Exec's own answers (`result_budget_exceeded`, a receipt) belong under the report key
 * (`_meta["io.github.mcp-result-budget/budget"]`), but the budget owns that key: a value a tool
 * writes there is not one of its reports, so the budget drops it as forged. `exec` therefore
 * writes its answer under {@link EXEC_META_KEY}, and the answer is moved under the report key
 * after the budget has passed it, on the way to the wire. Only `isError` results of `serve`'s own
 * transport are touched; a result the budget cut keeps its report and exec's key as they are.
 */
import type { Transport } from '@modelcontextprotocol/sdk/shared/transport.js';
import { REPORT_KEY } from '../engine/index.js';
import { EXEC_META_KEY } from '../shared/meta.js';

/** A result with exec's answer moved under the report key (the same object when there is none). */
export function promoteExecReport<T>(result: T): T {
  const r = result as { isError?: unknown; _meta?: Record<string, unknown> } | null;
  const meta = r?._meta;
  if (r === null || r.isError !== true || meta === undefined || !Object.hasOwn(meta, EXEC_META_KEY) || Object.hasOwn(meta, REPORT_KEY)) return result;
  const { [EXEC_META_KEY]: answer, ...rest } = meta;
  return { ...r, _meta: { ...rest, [REPORT_KEY]: answer } } as T;
}

/**
 * Wrap the transport `withResultBudget` sends to (inside it), so that exec's answers reach the
 * client under the report key: `withResultBudget(withExecReports(transport))`.
 */
export function withExecReports<T extends Transport>(transport: T): T {
  const send = transport.send.bind(transport);
  transport.send = (message, options) => {
    const m = message as { result?: unknown };
    if (m.result === undefined) return send(message, options);
    const result = promoteExecReport(m.result);
    return send(result === m.result ? message : ({ ...message, result } as typeof message), options);
  };
  return transport;
}
