/**
 * The budgeter: every rule of the result budget, applied online to a stream of JSON events
 * (object/array start and end, key, string chunks, scalars). Two sources feed it: a walk over an
 * in-memory value and a tokenizer over bytes; both get the same decisions and the same output.
 * This file holds the end and the hooks sources use for bulk skipping; the class is built in
 * layers, one rule set each: state and accounting (budgeter-state.ts), blocks and an earlier
 * pass's notice and report (budgeter-blocks.ts), the text mirror (budgeter-mirror.ts), containers,
 * keys and scalars (budgeter-values.ts), strings (budgeter-strings.ts).
 *
 * Protocol for sources: a value-start call (`openObject`, `openArray`, `stringStart`, `scalar`)
 * and `key` return false when the value is omitted; the source then skips that value without
 * feeding its events. `stringChunk` returns false once the string is cut; the source may skip to
 * the string's end but still calls `stringEnd`. The whole contract, with its ordering rules, is
 * in events.ts.
 */
import type { Slot } from './budgeter-state.js';
import { BudgeterStrings } from './budgeter-strings.js';
import { BudgetError } from './errors.js';
import type { BudgetEvents } from './events.js';
import { REPORT_KEY } from './limits.js';
import { serializeNotice, serializeReport, type BudgetReport } from './report.js';
import { utf8Length } from './wire.js';

export type { RootKind } from './roles.js';
export { exemptKey } from './roles.js';

/** Event-driven budgeter for one result. Create one per result; call `finish()` at the end. */
export class Budgeter extends BudgeterStrings implements BudgetEvents {
  // ---------------------------------------------------------------- end

  /** Close the output: fill in the report and the notice. Returns the report, if anything was cut. */
  finish(): BudgetReport | undefined {
    if (this.finished) throw new Error('Budgeter.finish() called twice');
    if (this.frames.length > 0 || this.str !== undefined || this.capture !== undefined) {
      throw new BudgetError('INVALID_RESULT', 'The result ended before its last value was complete');
    }
    this.finished = true;
    if (this.candidates.length > 0) this.resolveMirror(undefined);
    if (this.prior !== undefined) this.report.absorb(this.prior);
    const report = this.report.truncated ? this.report.build() : undefined;
    const fill = (slot: Slot | undefined, piece: string): void => {
      if (slot === undefined) return;
      this.out.fill(slot.index, piece, utf8Length(piece));
    };
    if (report !== undefined) {
      const body = JSON.stringify(REPORT_KEY) + ':' + serializeReport(report);
      const rs = this.reportSlot;
      if (rs !== undefined) {
        const comma = rs.comma ? ',' : '';
        fill(rs, rs.wrap === '' ? comma + body : `${comma}"${rs.wrap}":{${body}}`);
      }
      const ns = this.noticeSlot;
      if (ns !== undefined) fill(ns, (ns.comma ? ',' : '') + serializeNotice(report));
    } else {
      fill(this.reportSlot, '');
      fill(this.noticeSlot, '');
    }
    this.out.flush(true);
    return report;
  }

  /** The bounded output as one string (when no sink was given). */
  override toString(): string {
    return this.out.toString();
  }

  // ---------------------------------------------------------------- bulk skipping for sources

  /** The innermost container takes no more children and no more pointers: skip its tail unseen. */
  get canSkipRest(): boolean {
    const f = this.top;
    if (f === undefined || this.capture !== undefined || f.role === 'result' || f.probe !== undefined) return false;
    // A closed block's `_meta` may still mark it as an earlier notice: its members are looked at.
    if (f.role === 'block' && !f.abandoned) return false;
    return f.abandoned || (f.closed !== undefined && !this.report.wantsPaths);
  }

  /** Whether the innermost container takes no more children (a source may skip the rest). */
  get topClosed(): boolean {
    const f = this.top;
    // The result object is never skipped in bulk: its reserved `isError` may still follow.
    if (f === undefined || this.capture !== undefined || f.role === 'result' || f.probe !== undefined) return false;
    // A closed block's `_meta` may still mark it as an earlier notice: its members are looked at.
    return f.role === 'block' ? f.abandoned : f.closed !== undefined || f.abandoned;
  }

  /**
   * Record `n` further children of the innermost (closed) container as omitted without feeding
   * them; `keyAt(i)` names the i-th of them for objects. Same report as feeding them one by one.
   */
  omitRest(n: number, keyAt?: (i: number) => string): void {
    const f = this.top!;
    if (f.abandoned || n <= 0) {
      if (f.array) f.cur += n;
      return;
    }
    const kind = f.closed!;
    const at = this.frames.length - 1;
    const first = f.cur + 1;
    this.report.addMany(kind, n, (i) => {
      if (f.array) f.cur = first + i;
      else f.key = keyAt!(i);
      return this.pointer(at);
    });
    if (f.array) f.cur = first + n - 1;
  }
}
