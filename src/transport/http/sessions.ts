/**
 * The sessions of a stateful Streamable HTTP server: one SDK server transport and one
 * application state (a workspace server, or an upstream connection) per session, a cap on how
 * many are open, and expiry of idle ones so that their state is freed.
 *
 * The cap is taken before the first await of an initialize (`reserve`), not when the session is
 * finally added: a burst of concurrent initializes can never hold more than `maxSessions` sessions,
 * made or in the making.
 */
import type { StreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/streamableHttp.js';
import type { AnswerTracker } from './answer-tracker.js';

/** One open session. */
export interface HttpSession {
  id: string;
  transport: StreamableHTTPServerTransport;
  tracker: AnswerTracker;
  /** Frees the application state behind the transport (called once, after the transport closed). */
  release: () => Promise<void>;
  /**
   * Who opened it: the bearer token's fingerprint (`undefined` without tokens). Every later request
   * of the session must come from the same principal; another one is told the session does not exist.
   */
  principal: string | undefined;
  /** Requests of this session being handled now; a busy session never expires. */
  active: number;
  lastActiveMs: number;
}

/** Options of {@link SessionTable}. */
export interface SessionTableOptions {
  /** Close a session after this long without a request, in ms. */
  idleMs: number;
  /** Sessions open at once. */
  maxSessions: number;
  /** Told when a session expires (for the operator's log). */
  onExpired?: (id: string) => void;
}

/** Open sessions by id, with idle expiry. */
export class SessionTable {
  private readonly sessions = new Map<string, HttpSession>();
  /** Sessions being opened: counted against the cap from before their first await. */
  private reserved = 0;
  private readonly sweeper: NodeJS.Timeout;

  constructor(private readonly o: SessionTableOptions) {
    // Perf: one timer for the table, not one per session; expiry is late by at most a quarter of idleMs (capped at 30 s).
    this.sweeper = setInterval(() => this.sweep(), Math.max(10, Math.min(o.idleMs / 4, 30_000)));
    this.sweeper.unref();
  }

  get size(): number {
    return this.sessions.size;
  }

  /**
   * Take one place under the cap for a session about to be opened, synchronously; `undefined` when
   * the cap is reached. The place is given back by `add` (it becomes the session) or `cancel`.
   */
  reserve(): { add(session: HttpSession): void; cancel(): void } | undefined {
    if (this.sessions.size + this.reserved >= this.o.maxSessions) return undefined;
    this.reserved++;
    let held = true;
    const give = (): void => {
      if (held) this.reserved--;
      held = false;
    };
    return {
      add: (session) => {
        give();
        this.sessions.set(session.id, session);
      },
      cancel: give,
    };
  }

  /** The session `id` if `principal` opened it; any other caller is told it does not exist. */
  get(id: string, principal: string | undefined): HttpSession | undefined {
    const s = this.sessions.get(id);
    return s !== undefined && s.principal === principal ? s : undefined;
  }

  /** Mark a request of the session started; the returned function marks it done. */
  begin(session: HttpSession): () => void {
    session.active++;
    session.lastActiveMs = Date.now();
    return () => {
      session.active--;
      session.lastActiveMs = Date.now();
    };
  }

  /** Close one session and free its state; unknown ids are ignored. */
  async close(id: string): Promise<void> {
    const s = this.sessions.get(id);
    if (s === undefined) return;
    this.sessions.delete(id);
    await s.transport.close().catch(() => undefined);
    await s.release().catch(() => undefined);
  }

  /** Every open session's tracker (for a shutdown). */
  trackers(): AnswerTracker[] {
    return [...this.sessions.values()].map((s) => s.tracker);
  }

  /** Close every session and stop the sweeper. */
  async closeAll(): Promise<void> {
    clearInterval(this.sweeper);
    await Promise.all([...this.sessions.keys()].map((id) => this.close(id)));
  }

  private sweep(): void {
    const now = Date.now();
    for (const s of this.sessions.values()) {
      if (s.active === 0 && now - s.lastActiveMs >= this.o.idleMs) {
        this.o.onExpired?.(s.id);
        void this.close(s.id);
      }
    }
  }
}
