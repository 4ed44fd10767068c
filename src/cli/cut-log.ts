/**
 * `--log-cuts` (`MCP_BUDGET_LOG_CUTS=1`) of `proxy` and `serve`: one JSON line per cut result on
 * stderr, for operators. Fields: `event` ("cut"), `tool` (null when unknown), `id` (the request
 * id), `bytes_before` (the original result's bytes; for a response bounded while it streamed, the
 * whole response line as read; null when unknown), `bytes_after` (the result sent), `budget_kind`
 * and `omitted_count` (from the report); over HTTP also `session` (the MCP session id, null when
 * stateless). Peer-chosen strings (tool, id, session) are cut at {@link MAX_CUT_LOG_FIELD_CHARS}.
 *
 * A peer decides how many results are cut, and stderr is often a pipe nobody reads: while more
 * than {@link MAX_BUFFERED_CUT_LOG_BYTES} wait in stderr's buffer, cuts are counted instead of
 * written, and one `{"event":"cuts_not_logged","count":N}` line says how many as soon as it drains.
 */
import type { TruncationListener } from '../transport/response-budget.js';

/** Bytes of cut lines allowed to wait in stderr's buffer. @default 64 KiB */
export const MAX_BUFFERED_CUT_LOG_BYTES = 64 * 1024;
/** Characters kept of a peer-chosen field (tool name, string id, session id); longer ones end in `…`. @default 200 */
export const MAX_CUT_LOG_FIELD_CHARS = 200;

/** A peer-chosen string cut for the log (a tool name or id may be megabytes long). */
function clip(s: string): string {
  return s.length <= MAX_CUT_LOG_FIELD_CHARS ? s : `${s.slice(0, MAX_CUT_LOG_FIELD_CHARS)}…`;
}

/** Whether cut logging is on: the flag, or `MCP_BUDGET_LOG_CUTS` set to `1` or `true`. */
export function logCutsEnabled(flag: unknown, env: NodeJS.ProcessEnv): boolean {
  return flag === true || env.MCP_BUDGET_LOG_CUTS === '1' || env.MCP_BUDGET_LOG_CUTS === 'true';
}

/** Where cut lines go: stderr, or any stream that reports what waits in its buffer. */
export interface CutLogSink {
  write(line: string): unknown;
  readonly writableLength?: number;
  readonly destroyed?: boolean;
  /** A stream's `once('drain')`: the count of cuts not logged is written as soon as it drains. */
  once?(event: 'drain', listener: () => void): unknown;
}

/** One shared writer per stream, so that every session's cuts count against one buffer. */
export class CutLog {
  private notLogged = 0;
  private waiting = false;

  constructor(
    private readonly out: CutLogSink,
    private readonly maxBufferedBytes = MAX_BUFFERED_CUT_LOG_BYTES,
  ) {}

  /**
   * A truncation listener writing one JSON line per cut. `session`: read at each cut (an HTTP
   * transport learns its session id on `initialize`, after it was connected); without it the line
   * has no `session` field.
   */
  listener(session?: () => string | undefined): TruncationListener {
    return ({ id, tool, report, bytesBefore, bytesAfter }) => {
      const line: Record<string, unknown> = {
        event: 'cut',
        tool: tool === undefined ? null : clip(tool),
        id: typeof id === 'string' ? clip(id) : id,
        bytes_before: bytesBefore ?? null,
        bytes_after: bytesAfter ?? null,
        budget_kind: report.budget_kind,
        omitted_count: report.omitted_count,
      };
      if (session !== undefined) {
        const sid = session();
        line.session = sid === undefined ? null : clip(sid);
      }
      this.write(JSON.stringify(line));
    };
  }

  private write(line: string): void {
    if (this.full()) {
      this.notLogged++;
      this.countOnDrain();
      return;
    }
    this.writeCount();
    this.out.write(line + '\n');
  }

  private full(): boolean {
    return this.out.destroyed === true || (this.out.writableLength ?? 0) > this.maxBufferedBytes;
  }

  private writeCount(): void {
    if (this.notLogged === 0) return;
    this.out.write(JSON.stringify({ event: 'cuts_not_logged', count: this.notLogged, why: 'stderr was not draining' }) + '\n');
    this.notLogged = 0;
  }

  /** Once the stream drains, say how many cuts were not logged, without waiting for another cut. */
  private countOnDrain(): void {
    if (this.waiting || this.out.once === undefined || this.out.destroyed === true) return;
    this.waiting = true;
    this.out.once('drain', () => {
      this.waiting = false;
      if (!this.full()) this.writeCount();
      else if (this.notLogged > 0) this.countOnDrain();
    });
  }
}

/** A truncation listener writing one JSON line per cut to `out` (stdio: one connection, no session). */
export function cutLogger(out: CutLogSink): TruncationListener {
  return new CutLog(out).listener();
}
