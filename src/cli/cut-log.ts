/**
 * `--log-cuts` (`MCP_BUDGET_LOG_CUTS=1`) of `proxy` and `serve`: one JSON line per cut result on
 * stderr, for operators. Fields: `event` ("cut"), `tool` (null when unknown), `id` (the request
 * id), `bytes_before` (the original result's bytes; for a response bounded while it streamed, the
 * whole response line as read; null when unknown), `bytes_after` (the result sent), `budget_kind`
 * and `omitted_count` (from the report); over HTTP also `session` (the MCP session id, null when
 * stateless). Peer-chosen strings (tool, id, session) are cut as warnings cut them (`warningText`).
 *
 * A peer decides how many results are cut, and stderr is often a pipe nobody reads: the lines go
 * through the warnings' bound (`BoundedLines`), so while stderr does not drain cuts are counted,
 * and one `{"event":"cuts_not_logged","count":N}` line says how many as soon as it drains.
 */
import type { TruncationListener } from '../transport/core/response-budget.js';
import { BoundedLines, warningText, type LineSink } from '../shared/warnings.js';

/** Whether cut logging is on: the flag, or `MCP_BUDGET_LOG_CUTS` set to `1` or `true`. */
export function logCutsEnabled(flag: unknown, env: NodeJS.ProcessEnv): boolean {
  return flag === true || env.MCP_BUDGET_LOG_CUTS === '1' || env.MCP_BUDGET_LOG_CUTS === 'true';
}

/** One shared writer per stream, so that every session's cuts count against one buffer. */
export class CutLog {
  private readonly lines: BoundedLines;

  constructor(out: LineSink) {
    this.lines = new BoundedLines(out, (count) => JSON.stringify({ event: 'cuts_not_logged', count, why: 'stderr was not draining' }) + '\n');
  }

  /**
   * A truncation listener writing one JSON line per cut. `session`: read at each cut (an HTTP
   * transport learns its session id on `initialize`, after it was connected); without it the line
   * has no `session` field.
   */
  listener(session?: () => string | undefined): TruncationListener {
    return ({ id, tool, report, bytesBefore, bytesAfter }) => {
      const line: Record<string, unknown> = {
        event: 'cut',
        tool: tool === undefined ? null : warningText(tool),
        id: typeof id === 'string' ? warningText(id) : id,
        bytes_before: bytesBefore ?? null,
        bytes_after: bytesAfter ?? null,
        budget_kind: report.budget_kind,
        omitted_count: report.omitted_count,
      };
      if (session !== undefined) {
        const sid = session();
        line.session = sid === undefined ? null : warningText(sid);
      }
      this.lines.write(JSON.stringify(line) + '\n');
    };
  }
}

/** A truncation listener writing one JSON line per cut to `out` (stdio: one connection, no session). */
export function cutLogger(out: LineSink): TruncationListener {
  return new CutLog(out).listener();
}
