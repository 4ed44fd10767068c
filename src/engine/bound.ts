/**
 * The in-memory entry points: bound one `CallToolResult` (or JSON-RPC response / error object)
 * held as a value. A value that fits comes back as `JSON.stringify` would write it; anything else
 * is walked by the budgeter, which stops where the budget ends.
 */
import { Budgeter, type RootKind } from './budgeter.js';
import type { BudgetOptions } from './limits.js';
import { resolveLimits, type ResolvedLimits } from './options.js';
import type { ChunkSink } from './output.js';
import type { BudgetReport } from './report.js';
import { serializeIfFits } from './fits.js';
import { walkValue } from './walk.js';

/** The bounded JSON and, when something was cut, the report that was placed in it. */
export interface BoundedJson {
  /** Bounded JSON text (empty when a sink received it). */
  json: string;
  /** True when the value was within every bound and is returned as `JSON.stringify` writes it. */
  unchanged: boolean;
  /** True when anything was removed or shortened. */
  truncated: boolean;
  /** The report written under `_meta` (undefined when nothing was cut). */
  report: BudgetReport | undefined;
}

/**
 * Bound one value. `limits` may be options or an already resolved limits object (resolve once and
 * reuse it on hot paths). With a `sink`, chunks are written to it as they become final.
 */
export function boundJson(
  value: unknown,
  limits: BudgetOptions | ResolvedLimits = {},
  root: RootKind = 'result',
  sink?: ChunkSink,
): BoundedJson {
  const resolved = resolveLimits(limits);
  const fit = serializeIfFits(value, resolved, root);
  if (fit !== undefined) {
    sink?.(fit);
    return { json: sink === undefined ? fit : '', unchanged: true, truncated: false, report: undefined };
  }
  const b = new Budgeter(resolved, root, sink);
  walkValue(b, value);
  const report = b.finish();
  return { json: sink === undefined ? b.toString() : '', unchanged: false, truncated: report !== undefined, report };
}

/**
 * Bound a `CallToolResult` value and return the bounded value: the input object itself when it
 * fits, otherwise a new object parsed from the bounded JSON (at most `maxResultBytes`).
 */
export function boundResult<T = unknown>(
  result: T,
  limits: BudgetOptions | ResolvedLimits = {},
  root: RootKind = 'result',
): { result: T; report: BudgetReport | undefined } {
  const out = boundJson(result, limits, root);
  if (out.unchanged) return { result, report: undefined };
  return { result: JSON.parse(out.json) as T, report: out.report };
}
