/**
 * One server line too long for the proxy's fast path, streamed through the byte budget as it
 * arrives. The envelope scanner reads every top-level key and passes the budget only a response's
 * members, with the top-level `id` replaced by `0`, so that bounding never depends on the id's
 * length (the budget refuses envelope fields over 1 KiB, which would leave the request
 * unanswered); the real id is put back when the bounded response is written.
 *
 * What the line is gets decided only when its top level has ended, from all of its keys: a
 * `method` or `params` may come after a huge `result`, or before it. Nothing of it is held: the
 * fast path is at least the cap on messages that are not tool results (`maxMessageBytes`), so a
 * request or notification this long is over that cap and is refused whatever it holds. A line
 * whose top level repeats a classifying member is invalid whatever it holds (parsers disagree on
 * which one counts): once the repeat is seen, the budget is fed no more.
 */
import { ByteBudget, HAND_REFUSED, type ResolvedLimits, type SkipState } from '../../engine/index.js';
import { EnvelopeScanner, type EnvelopeFacts } from '../core/envelope-scan.js';
import { repeatWhy } from '../core/repeated-members.js';
import { classifyEnvelope } from '../core/jsonrpc-errors.js';
import { ReceiptCapture } from '../core/receipt-capture.js';
import { isBudgetError } from '../../engine/index.js';
import type { HeldBytes, SpillWriter } from '../core/continuation-spill.js';

/** What a finished long line turned out to be. */
export type LongLineOutcome =
  /** A request or notification: longer than the fast path, so over the cap on messages. */
  | { kind: 'message-too-large'; facts: EnvelopeFacts }
  /**
   * Not a valid JSON-RPC message, or a response the budget could not read; `facts` says whether
   * its id names a request (which must then be answered with an error).
   */
  | { kind: 'invalid'; why: string; facts: EnvelopeFacts }
  /**
   * A response, bounded, with only its standard members; its `id` is the placeholder `0` and
   * `facts` holds the real one. `receiptFrom`: the original structure's receipt members, when
   * they were captured (see {@link ReceiptCapture}).
   */
  | { kind: 'response'; message: Record<string, unknown>; facts: EnvelopeFacts; receiptFrom?: Record<string, unknown> | null; held?: Promise<HeldBytes> };

/** One long server line: fed with {@link chunk} as it arrives, judged by {@link end}. */
export class LongServerLine {
  private readonly budget: ByteBudget;
  private readonly scanner: EnvelopeScanner;
  private readonly capture: ReceiptCapture | undefined;
  private failed: string | undefined;
  /** The budget threw (it has read part of what it was given). */
  private broken = false;
  private readonly feed = (piece: Buffer): void => {
    if (this.failed !== undefined) return;
    try {
      this.budget.write(piece);
    } catch (e) {
      this.failed = (e as Error).message;
      this.broken = true;
    }
  };
  // Perf: a passed member's object or array value (the huge `result`) is read by the budget alone,
  // which tells the scan where it ends; once the budget is fed no more, the scan skips it itself.
  private readonly hand = (bytes: Buffer, st: SkipState): number => {
    if (this.broken) return HAND_REFUSED; // it broke before this value: `st` is the value's start
    this.budget.memberSkipState(st);
    if (this.failed !== undefined) return HAND_REFUSED;
    try {
      return this.budget.writeMember(bytes); // bytes taken when the value ended, or -1 (HAND_MORE)
    } catch (e) {
      this.failed = (e as Error).message;
      this.broken = true;
      return HAND_REFUSED;
    }
  };

  /**
   * @param limits the budget in force
   * @param maxIdBytes longest top-level id read (a longer one cannot be matched and is dropped)
   * @param captureReceipt also capture the original structure's scalar members (a mutation's
   *   receipt, and what the typed policy puts back after a cut; set while a call to a typed tool
   *   is pending, other lines pay nothing for it)
   */
  constructor(
    limits: ResolvedLimits,
    maxIdBytes: number,
    captureReceipt = false,
    /** Where the line is kept as it comes, for its result's continuation (see `continuation-spill.ts`). */
    private spill?: SpillWriter,
    /** Told why keeping the line stopped, when it was not for its size. */
    private readonly warn?: (text: string) => void,
  ) {
    this.budget = new ByteBudget(limits, 'envelope');
    this.scanner = new EnvelopeScanner(maxIdBytes);
    this.capture = captureReceipt ? new ReceiptCapture() : undefined;
  }

  chunk(bytes: Buffer): void {
    if (this.spill !== undefined) this.keep(bytes);
    this.scanner.push(bytes, this.feed, this.hand);
    this.capture?.push(bytes);
    const f = this.scanner.facts;
    if (f.repeated !== undefined) this.failed ??= repeatWhy(f.repeated);
  }

  /** Keep a piece of the line; a line past the per-result cap, or a full disk, stops the keeping (no continuation is offered). */
  private keep(bytes: Buffer): void {
    try {
      this.spill!.write(bytes);
    } catch (e) {
      this.spill = undefined;
      if (!isBudgetError(e)) throw e;
      if (e.code !== 'CONTINUATION_TOO_LARGE') this.warn?.(e.message);
    }
  }

  end(): LongLineOutcome {
    const outcome = this.judge();
    const spill = this.spill;
    this.spill = undefined;
    if (spill === undefined) return outcome;
    if (outcome.kind !== 'response') {
      spill.abort();
      return outcome;
    }
    return { ...outcome, held: spill.finish() };
  }

  private judge(): LongLineOutcome {
    const facts = this.scanner.end();
    if (facts.repeated !== undefined) return { kind: 'invalid', why: repeatWhy(facts.repeated), facts };
    const kind = classifyEnvelope(facts);
    if (kind === 'request' || kind === 'notification') return { kind: 'message-too-large', facts };
    if (kind === 'invalid') return { kind: 'invalid', why: invalidWhy(facts), facts };
    if (this.failed !== undefined) return { kind: 'invalid', why: this.failed, facts };
    try {
      const message = JSON.parse(this.budget.end().json) as Record<string, unknown>;
      const receiptFrom = this.capture?.structure();
      return receiptFrom === undefined ? { kind: 'response', message, facts } : { kind: 'response', message, facts, receiptFrom };
    } catch (e) {
      return { kind: 'invalid', why: (e as Error).message, facts };
    }
  }
}

/** Why a scanned line is not a valid message (see `classifyKeys`). */
function invalidWhy(f: EnvelopeFacts): string {
  if (f.shape !== 'object' || f.broken) return 'not a JSON object';
  if (f.hasMethod) return 'it has a method as well as a result or error';
  if (f.hasResult && f.hasError) return 'it has both a result and an error';
  return 'it has neither a result nor an error';
}
