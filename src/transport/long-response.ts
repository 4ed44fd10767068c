/**
 * One server line too long for the proxy's fast path, streamed through the byte budget as it
 * arrives. The envelope's top-level `id` is read by the envelope scanner and replaced by `0` on
 * the way into the budget, so that bounding never depends on the id's length (the budget refuses
 * envelope fields over 1 KiB, which would leave the request unanswered); the real id is put back
 * when the bounded response is written. A request or notification from the server is held whole
 * while it stays small enough to pass on.
 */
import { ByteBudget } from '../engine/byte-source.js';
import { BudgetError } from '../engine/errors.js';
import type { ResolvedLimits } from '../engine/options.js';
import { EnvelopeScanner, type EnvelopeFacts } from './envelope-scan.js';

/** A server request or notification longer than the fast path is held and passed up to this size. */
export const PASS_THROUGH_MAX_BYTES = 8 * 1024 * 1024;

/** What a finished long line turned out to be. */
export type LongLineOutcome =
  /** A request or notification small enough to pass on: its raw bytes. */
  | { kind: 'message'; bytes: Buffer[] }
  /** A request or notification too large to pass on. */
  | { kind: 'message-too-large'; facts: EnvelopeFacts }
  /** Not valid JSON-RPC (or the budget refused it). */
  | { kind: 'invalid'; why: string }
  /** A response, bounded; its `id` is the placeholder `0` and `facts` holds the real one. */
  | { kind: 'response'; message: Record<string, unknown>; facts: EnvelopeFacts };

export class LongServerLine {
  private readonly budget: ByteBudget;
  private readonly scanner: EnvelopeScanner;
  private failed: string | undefined;
  /** The line is a request or notification, not a response. */
  private isMessage = false;
  /** Raw bytes held while the line may still need passing on whole. */
  private held: Buffer[] | undefined = [];
  private heldBytes = 0;
  private readonly feed = (piece: Buffer): void => {
    if (this.failed !== undefined) return;
    try {
      this.budget.write(piece);
    } catch (e) {
      this.failed = (e as Error).message;
      this.isMessage = e instanceof BudgetError && e.data?.message === 'request';
    }
  };

  /**
   * @param limits the budget in force
   * @param maxIdBytes longest top-level id read (a longer one cannot be matched and is dropped)
   */
  constructor(
    private readonly limits: ResolvedLimits,
    maxIdBytes: number,
  ) {
    this.budget = new ByteBudget(limits, 'envelope');
    this.scanner = new EnvelopeScanner(maxIdBytes);
  }

  chunk(bytes: Buffer): void {
    if (this.held !== undefined) {
      if (this.heldBytes + bytes.length <= PASS_THROUGH_MAX_BYTES) {
        this.held.push(Buffer.from(bytes));
        this.heldBytes += bytes.length;
      } else {
        this.held = undefined;
      }
    }
    this.scanner.push(bytes, this.feed);
    if (this.failed === undefined && this.held !== undefined && this.heldBytes > this.limits.maxResultBytes * 2) {
      this.held = undefined; // a response: the budget streams it, nothing needs holding
    }
  }

  end(): LongLineOutcome {
    const facts = this.scanner.end();
    if (this.isMessage || facts.hasMethod) {
      return this.held !== undefined ? { kind: 'message', bytes: this.held } : { kind: 'message-too-large', facts };
    }
    if (this.failed !== undefined) return { kind: 'invalid', why: this.failed };
    try {
      const message = JSON.parse(this.budget.end().json) as Record<string, unknown>;
      return { kind: 'response', message, facts };
    } catch (e) {
      return { kind: 'invalid', why: (e as Error).message };
    }
  }
}
