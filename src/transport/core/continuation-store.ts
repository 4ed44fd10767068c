/**
 * The continuation store: originals of cut results, held for a while so that what the budget cut
 * stays readable, as the bytes of their JSON, in spill files of a private directory or in memory
 * (`continuation-spill.ts`), and read in place (`continuation-bytes.ts`). Bounded three ways (one result, one session, the process), each
 * entry expires a fixed time after it was stored, and the least recently read entries are evicted
 * first when a cap is reached. A handle is 128 random bits (base64url), bound to the session key
 * (and caller, when known) that received it: another session cannot read it, and a handle that
 * was never issued cannot be told from one long gone, so guessing learns nothing.
 *
 * Forgotten handles are remembered for a while (count-capped) with why they went, so that an
 * expired or evicted handle gets an error that says so.
 */
import { randomBytes } from 'node:crypto';
import { BudgetError, DEFAULT_CONTINUATION, resolveContinuation, type ContinuationSettings, type ReadStart } from '../../engine/index.js';
import { JsonBytes } from './continuation-bytes.js';
import { heldInMemory, memoryWriter, SpillDirectory, type HeldBytes, type SpillWriter } from './continuation-spill.js';

declare module '../../engine/errors.js' {
  interface ErrorCodes {
    /** The continuation handle was never issued here (or is too old to be remembered). */
    CONTINUATION_UNKNOWN: true;
    /** The continuation handle expired. */
    CONTINUATION_EXPIRED: true;
    /** The continuation handle was evicted to keep the store within its caps. */
    CONTINUATION_EVICTED: true;
    /** The continuation handle belongs to another session or caller. */
    CONTINUATION_FOREIGN: true;
    /** The path or position asked for cannot be read from the result the handle serves. */
    CONTINUATION_BAD_READ: true;
    /** A result is larger than one continuation may keep. */
    CONTINUATION_TOO_LARGE: true;
  }
}

/** One cut result's original, as stored. */
export interface StoredResult {
  readonly handle: string;
  /** The original result's JSON (its beginning when it was larger than the per-result cap), read in place. */
  readonly reader: JsonBytes;
  /** Where the cut parts start, in document order (the reading tool's `next` walks them). */
  starts: readonly ReadStart[];
  /**
   * Finds the rest of `starts`, when only the first is known yet (a result kept as it streamed:
   * the later ones lie past the cut part); reads call it first, once.
   */
  rest?: () => Promise<void>;
  /** Epoch milliseconds. */
  readonly expiresAt: number;
  readonly bytes: number;
  readonly session: string;
  readonly caller: string | undefined;
}

/** Why a handle is no longer held. */
type Gone = 'expired' | 'evicted' | 'session-closed';

/** Forgotten handles remembered with why they went (older ones read as never issued). */
const MAX_REMEMBERED_GONE = 4096;

export class ContinuationStore {
  readonly settings: Readonly<ContinuationSettings>;
  /** Map order is recency of use: the first entry is the least recently stored or read. */
  private readonly entries = new Map<string, StoredResult>();
  private readonly sessionBytes = new Map<string, number>();
  private readonly gone = new Map<string, Gone>();
  private total = 0;
  /** Bytes being written for originals not stored yet (counted against the process cap as they come). */
  private writing = 0;
  private spillDir: SpillDirectory | undefined;
  /** When expired entries were last swept (epoch milliseconds). */
  private swept = 0;
  /** The sweep due at the next expiry, so an idle process lets expired originals go (unref'd: it never keeps one alive). */
  private timer: NodeJS.Timeout | undefined;

  constructor(
    settings: Partial<ContinuationSettings> = {},
    /** Epoch milliseconds now (injectable for tests). */
    private readonly now: () => number = Date.now,
  ) {
    this.settings = resolveContinuation(settings);
  }

  /** Bytes held by the process, and by one session. */
  get bytes(): number {
    return this.total;
  }

  sessionUsage(session: string): number {
    return this.sessionBytes.get(session) ?? 0;
  }

  get size(): number {
    return this.entries.size;
  }

  /** The most one original may hold: a larger one would evict itself at once. */
  get resultCap(): number {
    const s = this.settings;
    return Math.min(s.maxResultBytes, s.maxSessionBytes, s.maxProcessBytes);
  }

  /**
   * A writer for one original's bytes as they come: in a spill file, or in memory with
   * `memory`. Each write counts against the process cap at once (older entries are evicted to make
   * room), so originals being written by many connections stay within it too. Throws
   * `CONTINUATION_SPILL_FAILED` when the spill directory cannot be made, and from `write` when the
   * disk is full or the original passes the per-result cap (`CONTINUATION_TOO_LARGE`).
   */
  writer(): SpillWriter {
    const inner = this.settings.memory ? memoryWriter() : (this.spillDir ??= new SpillDirectory(this.settings.dir || undefined)).writer();
    let counted = 0;
    const uncount = (): void => {
      this.writing -= counted;
      counted = 0;
    };
    const cap = this.resultCap;
    const take = (chunk: Uint8Array, now: boolean): void => {
      if (inner.size + chunk.length > cap) {
        inner.abort();
        uncount();
        throw new BudgetError('CONTINUATION_TOO_LARGE', `The result is larger than one continuation may keep (${cap} bytes).`, { cap });
      }
      this.writing += chunk.length;
      counted += chunk.length;
      this.evictOver(undefined);
      // Other originals being written hold the rest of the process's room: this one gives way.
      if (this.total + this.writing > this.settings.maxProcessBytes) {
        inner.abort();
        uncount();
        throw new BudgetError('CONTINUATION_TOO_LARGE', `Originals being kept now fill the process's cap (${this.settings.maxProcessBytes} bytes).`, { cap: this.settings.maxProcessBytes });
      }
      try {
        if (now && inner.writeNow !== undefined) inner.writeNow(chunk);
        else inner.write(chunk);
      } catch (e) {
        uncount();
        throw e;
      }
    };
    return {
      get size() {
        return inner.size;
      },
      write: (chunk) => take(chunk, false),
      writeNow: (chunk) => take(chunk, true),
      finish: () => {
        uncount();
        return inner.finish();
      },
      finishNow: () => {
        uncount();
        return inner.finishNow?.() ?? (inner as unknown as HeldBytes);
      },
      abort: () => {
        uncount();
        inner.abort();
      },
    };
  }

  /** Bytes held in the store's way (a spill file unless `memory`), from one buffer. */
  hold(bytes: Buffer): HeldBytes {
    if (this.settings.memory) return heldInMemory(bytes);
    const w = this.writer();
    w.writeNow!(bytes);
    return w.finishNow!();
  }

  /** The spill directory's path, once made (tests and diagnostics). */
  get spillPath(): string | undefined {
    return this.spillDir?.path();
  }

  /**
   * Keep one cut result's original, held in `held` (its JSON starting at `rootAt`). Older entries
   * are evicted to make room.
   */
  put(session: string, caller: string | undefined, held: HeldBytes, starts: readonly ReadStart[], rootAt = 0): StoredResult {
    this.sweep();
    const handle = randomBytes(16).toString('base64url');
    const bytes = held.size;
    const entry: StoredResult = { handle, reader: new JsonBytes(held, rootAt), starts, expiresAt: this.now() + this.settings.ttlMs, bytes, session, caller };
    this.entries.set(handle, entry);
    this.total += bytes;
    this.sessionBytes.set(session, this.sessionUsage(session) + bytes);
    this.evictOver(session);
    this.armSweep();
    return entry;
  }

  /** Sweep when the soonest entry expires; again after, while entries remain. */
  private armSweep(): void {
    if (this.timer !== undefined || this.entries.size === 0) return;
    let soonest = Infinity;
    for (const e of this.entries.values()) soonest = Math.min(soonest, e.expiresAt);
    this.timer = setTimeout(() => {
      this.timer = undefined;
      this.sweep();
      this.armSweep();
    }, Math.max(10, soonest - this.now() + 5));
    this.timer.unref();
  }

  /**
   * The entry `handle` names, for `session` and `caller`. Throws the one error with a code saying
   * what happened and a message saying what to do: expired, evicted, never issued, or another
   * session's.
   */
  get(handle: string, session: string, caller: string | undefined): StoredResult {
    // Expired originals go on reads too (at most once a second), not only when another is stored.
    if (this.now() - this.swept >= 1000) this.sweep();
    const entry = this.entries.get(handle);
    if (entry === undefined) throw goneError(handle, this.gone.get(handle));
    if (entry.session !== session || entry.caller !== caller) {
      throw new BudgetError('CONTINUATION_FOREIGN', 'This continuation handle was given to another session or caller and cannot be read here. Use a handle from a result this session received, or call the tool again.', { handle });
    }
    if (this.now() >= entry.expiresAt) {
      this.remove(entry, 'expired');
      throw goneError(handle, 'expired');
    }
    // Read: now the most recently used.
    this.entries.delete(handle);
    this.entries.set(handle, entry);
    return entry;
  }

  /** Let an entry go at once (its offer could not be made). */
  discard(entry: StoredResult): void {
    this.remove(entry, 'evicted');
  }

  /** Forget every entry of a session (its connection closed). */
  dropSession(session: string): void {
    for (const entry of [...this.entries.values()]) if (entry.session === session) this.remove(entry, 'session-closed');
    this.sessionBytes.delete(session);
  }

  /** Forget expired entries. */
  sweep(): void {
    const now = this.now();
    this.swept = now;
    for (const entry of [...this.entries.values()]) if (now >= entry.expiresAt) this.remove(entry, 'expired');
  }

  private evictOver(session: string | undefined): void {
    const { maxSessionBytes, maxProcessBytes } = this.settings;
    if (session !== undefined && this.sessionUsage(session) > maxSessionBytes) {
      for (const entry of [...this.entries.values()]) {
        if (this.sessionUsage(session) <= maxSessionBytes) break;
        if (entry.session === session) this.remove(entry, 'evicted');
      }
    }
    if (this.total + this.writing > maxProcessBytes) {
      for (const entry of [...this.entries.values()]) {
        if (this.total + this.writing <= maxProcessBytes) break;
        this.remove(entry, 'evicted');
      }
    }
  }

  private remove(entry: StoredResult, why: Gone): void {
    if (!this.entries.delete(entry.handle)) return;
    entry.reader.held.release();
    this.total -= entry.bytes;
    const left = this.sessionUsage(entry.session) - entry.bytes;
    if (left > 0) this.sessionBytes.set(entry.session, left);
    else this.sessionBytes.delete(entry.session);
    this.gone.set(entry.handle, why);
    if (this.gone.size > MAX_REMEMBERED_GONE) this.gone.delete(this.gone.keys().next().value!);
  }
}

function goneError(handle: string, why: Gone | undefined): BudgetError {
  switch (why) {
    case 'expired':
      return new BudgetError('CONTINUATION_EXPIRED', 'This continuation handle expired, and what it held was let go. Call the original tool again (asking for less if it can) to get the result anew.', { handle });
    case 'evicted':
      return new BudgetError('CONTINUATION_EVICTED', 'This continuation handle was evicted: newer cut results needed the room its result held. Call the original tool again, and read its continuation sooner.', { handle });
    case 'session-closed':
      return new BudgetError('CONTINUATION_EXPIRED', 'This continuation handle ended with the session that received it. Call the original tool again.', { handle });
    default:
      return new BudgetError('CONTINUATION_UNKNOWN', 'No continuation is held under this handle: it was never issued here, or it is too old to be remembered. Use the handle exactly as a notice or a report gave it, or call the original tool again.', { handle });
  }
}

let processStore: ContinuationStore | undefined;

/** The store every connection of this process shares (so the process cap holds), made on first use with the default settings. */
export function sharedContinuationStore(): ContinuationStore {
  return (processStore ??= new ContinuationStore(DEFAULT_CONTINUATION));
}

/** Set the process's store up with these settings (a command does it once, from its flags, before serving). */
export function configureSharedContinuation(settings: Partial<ContinuationSettings>): ContinuationStore {
  processStore = new ContinuationStore(settings);
  return processStore;
}
