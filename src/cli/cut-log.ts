/**
 * `--log-cuts` (`MCP_BUDGET_LOG_CUTS=1`) of `proxy` and `serve`: one JSON line per cut result on
 * stderr, for operators. Fields: `event` ("cut"), `tool` (null when unknown), `id` (the request
 * id), `bytes_before` (the original result's bytes; for a response bounded while it streamed, the
 * whole response line as read; null when unknown), `bytes_after` (the result sent), `budget_kind`
 * and `omitted_count` (from the report).
 */
import type { TruncationListener } from '../transport/response-budget.js';

/** Whether cut logging is on: the flag, or `MCP_BUDGET_LOG_CUTS` set to `1` or `true`. */
export function logCutsEnabled(flag: unknown, env: NodeJS.ProcessEnv): boolean {
  return flag === true || env.MCP_BUDGET_LOG_CUTS === '1' || env.MCP_BUDGET_LOG_CUTS === 'true';
}

/** A truncation listener writing one JSON line per cut to `out`. */
export function cutLogger(out: NodeJS.WritableStream): TruncationListener {
  return ({ id, tool, report, bytesBefore, bytesAfter }) => {
    const line = {
      event: 'cut',
      tool: tool ?? null,
      id,
      bytes_before: bytesBefore ?? null,
      bytes_after: bytesAfter ?? null,
      budget_kind: report.budget_kind,
      omitted_count: report.omitted_count,
    };
    out.write(JSON.stringify(line) + '\n');
  };
}
