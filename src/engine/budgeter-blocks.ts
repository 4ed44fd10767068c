/**
 * Blocks are kept whole or not at all, and what an earlier pass left in a result is recognized:
 * a block rolled back to its start (cut, too big, or rejected by its shape when it closes), a
 * block that does not fit probed only far enough to tell whether it is an earlier notice (dropped
 * silently) or a block to report as omitted, and an earlier report captured to be merged.
 */
import { ValueCapture } from './capture.js';
import { BudgeterState, type Frame } from './budgeter-state.js';
import type { BudgetKind } from './report.js';

export abstract class BudgeterBlocks extends BudgeterState {
  /** Omit a block that cannot be kept whole: roll back to its start and record it once. */
  protected abandonBlock(kind: BudgetKind | undefined): false {
    let b = this.frames.length - 1;
    while (b >= 0 && this.frames[b]!.role !== 'block') b--;
    for (let i = b; i < this.frames.length; i++) this.frames[i]!.abandoned = true;
    return this.dropBlock(this.frames[b]!, b - 1, kind);
  }

  /** Roll the output back to the start of `block` (a child of `frames[parentAt]`) and record it once. */
  protected dropBlock(block: Frame, parentAt: number, kind: BudgetKind | undefined): false {
    const tx = block.tx!;
    this.out.rollback(tx.mark);
    this.report.rollback(tx.report);
    this.textUsed = tx.textUsed;
    for (let i = 0; i < tx.textCounts.length; i++) this.textCounts[i] = tx.textCounts[i]!;
    this.candidates.length = tx.candidates;
    this.exhausted = tx.exhausted;
    this.frames[parentAt]!.kept = tx.parentKept;
    this.str = undefined;
    this.openBlockAt = -1;
    if (kind !== undefined) this.omit(kind, parentAt);
    if (kind === 'result_bytes') this.spend();
    return false;
  }

  /**
   * A content block closes: one the client's schema rejects (a required member missing, cut or of
   * the wrong type) is never sent; it goes whole, reported under the bound that cut it, if any.
   * Returns whether it is kept.
   */
  protected closeBlock(f: Frame): boolean {
    this.openBlockAt = -1;
    if (!f.shape!.blockOk()) {
      const byBudget = f.cutKind !== undefined && f.shape!.completeInInput();
      this.dropBlock(f, this.frames.length - 1, byBudget ? f.cutKind : 'invalid_block');
      return false;
    }
    this.out.release(f.tx!.mark);
    return true;
  }

  /** Open a probe frame: nothing of it is written; see {@link Frame.probe}. */
  protected pushProbe(probe: 'block' | 'meta'): void {
    const f = this.push(false, probe === 'block' ? 'block' : 'blockmeta', 0);
    f.abandoned = true;
    f.probe = probe;
    this.closing++;
    this.probeNotice = false;
  }

  /** A probed block closed: unless it was an earlier notice, it is omitted and the budget is spent. */
  protected endProbe(): void {
    if (this.probeNotice) return;
    this.omitAndClose('result_bytes');
  }

  /** A probed block `_meta` closed: an earlier notice goes silently, any other `_meta` did not fit. */
  protected endMetaProbe(): void {
    const block = this.top!;
    if (block.probe !== undefined) return; // the probed block decides when it closes
    if (this.probeNotice) {
      this.abandonBlock(undefined);
      return;
    }
    this.omitAndClose('result_bytes');
  }

  // ---------------------------------------------------------------- capture of an earlier report

  protected beginCapture(array: boolean | undefined): true {
    this.capture = new ValueCapture();
    this.captureFrame = this.frames.length - 1;
    if (array !== undefined) this.capture.open(array);
    return true;
  }

  protected endCapture(): void {
    const c = this.capture!;
    this.capture = undefined;
    const prior = this.prior === undefined ? c.asReport(this.limits.maxOmittedPaths) : undefined;
    if (prior !== undefined) this.prior = prior;
    else this.omit('top_level_field', this.captureFrame);
  }
}
