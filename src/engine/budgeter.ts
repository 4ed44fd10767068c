/**
 * The budgeter: every rule of the result budget, applied online to a stream of JSON events
 * (object/array start and end, key, string chunks, scalars). Two sources feed it: a walk over an
 * in-memory value and a tokenizer over bytes; both get the same decisions and the same output.
 * This file holds the string rules, the text mirror's verdict, the end and the hooks sources use;
 * the state and the container, key and scalar rules are in budgeter-base.ts.
 *
 * Protocol for sources: a value-start call (`openObject`, `openArray`, `stringStart`, `scalar`)
 * and `key` return false when the value is omitted; the source then skips that value without
 * feeding its events. `stringChunk` returns false once the string is cut; the source may skip to
 * the string's end but still calls `stringEnd`. The whole contract, with its ordering rules, is
 * in events.ts.
 */
import { BudgeterBase, type Str, type Slot } from './budgeter-base.js';
import { BudgetError } from './errors.js';
import type { BudgetEvents } from './events.js';
import { MAX_ENVELOPE_FIELD_BYTES, MIN_CUT_BYTES, REPORT_KEY } from './limits.js';
import { serializeNotice, serializeReport, type BudgetKind, type BudgetReport } from './report.js';
import { Base64Check, looksOpaque } from './shapes.js';
import { rewriteMirror, type MirrorCandidate } from './text-mirror.js';
import { cutString, escapeContent, utf8Length } from './wire.js';

export type { RootKind } from './roles.js';
export { exemptKey } from './roles.js';
import { scalarRole } from './roles.js';

/** Event-driven budgeter for one result. Create one per result; call `finish()` at the end. */
export class Budgeter extends BudgeterBase implements BudgetEvents {
  // ---------------------------------------------------------------- strings

  /** Start of a string value. False: omitted, skip it (no chunks, no `stringEnd`). */
  stringStart(): boolean {
    if (this.capture !== undefined) {
      this.capture.stringStart();
      return true;
    }
    const parent = this.top;
    if (parent === undefined) throw new BudgetError('INVALID_RESULT', 'Expected a JSON object, got a string');
    if (parent.abandoned && !parent.array) return false;
    if (this.startsCapture(parent)) {
      this.beginCapture(undefined);
      this.capture!.stringStart();
      return true;
    }
    const role = scalarRole(parent.role, parent.key, false);
    const kind = this.strKind(parent);
    if (!this.gate(parent, false)) return false;
    if (role === 'drop' || role === 'invalid') return this.dropRole(role);
    const l = this.limits;
    let limit: number;
    let limitKind: BudgetKind;
    if (kind === 'text') {
      const textLeft = l.maxTextBytes - this.textUsed;
      // Spent: an empty text still fits; any other goes with its block (see cutHere).
      limit = Math.max(0, Math.min(l.maxBlockBytes, textLeft));
      limitKind = l.maxBlockBytes <= textLeft ? 'text_block_bytes' : 'text_total_bytes';
    } else if (kind === 'envelope') {
      limit = MAX_ENVELOPE_FIELD_BYTES;
      limitKind = 'string_bytes';
    } else if (kind === 'atomic') {
      limit = Infinity;
      limitKind = 'binary_block';
    } else {
      limit = l.maxStringBytes;
      limitKind = 'string_bytes';
    }
    const mark = this.out.mark();
    const pre = this.prefix(parent) + '"';
    const quote = this.cost('"');
    if (kind !== 'envelope' && this.cost(pre) + quote > this.room()) {
      this.out.release(mark);
      if (kind === 'text') return this.abandonBlock('result_bytes');
      if (kind === 'atomic') return this.abandonBlock('binary_block');
      return this.omitAndClose('result_bytes');
    }
    parent.kept++;
    this.emit(pre, kind === 'envelope');
    let budget = limit;
    if (kind !== 'envelope') {
      const room = this.room() - quote;
      if (room < limit) {
        budget = room;
        limitKind = kind === 'atomic' ? 'binary_block' : 'result_bytes';
      }
    }
    this.str = {
      kind,
      mark,
      budget,
      limitKind,
      used: 0,
      usedRaw: 0,
      cut: false,
      pending: '',
      first: -1,
      contentStart: this.out.length,
      pin: kind === 'text' && parent.role === 'block' ? this.out.mark() : undefined,
      dropIfCut: kind === 'text' && l.maxTextBytes - this.textUsed <= 0,
      b64: kind === 'atomic' ? new Base64Check() : undefined,
      value: kind === 'opaque' && parent.role === 'block' && parent.key === 'type' ? '' : undefined,
    };
    return true;
  }

  /** A piece of the current string's content (decoded). False: cut, the rest may be skipped. */
  stringChunk(chunk: string): boolean {
    if (this.capture !== undefined) {
      this.capture.stringChunk(chunk);
      return true;
    }
    const s = this.str;
    if (s === undefined || s.cut) return false;
    let text = s.pending.length > 0 ? s.pending + chunk : chunk;
    s.pending = '';
    if (text.length === 0) return true;
    const last = text.charCodeAt(text.length - 1);
    if (last >= 0xd800 && last <= 0xdbff) {
      // Perf: hold a trailing high surrogate until the next chunk says whether it pairs.
      s.pending = text[text.length - 1]!;
      text = text.slice(0, -1);
      if (text.length === 0) return true;
    }
    return this.take(s, text);
  }

  private take(s: Str, text: string): boolean {
    if (s.first < 0) s.first = text.charCodeAt(0);
    if (s.value !== undefined && s.value.length <= 64) s.value += text.slice(0, 65);
    const left = s.budget - s.used;
    // Perf: a chunk whose worst case (7 bytes per unit) fits is escaped natively in one go.
    if (text.length * 7 <= left) {
      s.b64?.feed(text);
      const esc = escapeContent(text);
      this.emitContent(s, esc);
      return true;
    }
    const cut = cutString(text, 0, left, false);
    if (cut.end === text.length) {
      // Perf: base64 is checked only once it is known to be kept (a cut one goes whole).
      s.b64?.feed(text);
      this.emitContent(s, escapeContent(text));
      return true;
    }
    if (cut.end > 0) this.emitContent(s, escapeContent(text.slice(0, cut.end)));
    return this.cutHere(s);
  }

  private emitContent(s: Str, esc: string): void {
    const bytes = utf8Length(esc);
    this.out.write(esc, bytes);
    if (s.kind === 'envelope') this.outside += bytes;
    s.usedRaw += bytes;
    s.used += bytes;
  }

  /** The current string does not fit: apply the rule of its kind. */
  private cutHere(s: Str): false {
    s.cut = true;
    if (s.kind === 'atomic') return this.abandonBlock('binary_block');
    if (s.kind === 'envelope') throw this.envelopeTooLarge(this.top!.key);
    if (s.dropIfCut) return this.abandonBlock('text_total_bytes');
    const opaque = s.kind === 'opaque' || (s.kind === 'generic' && looksOpaque(this.out.read(s.contentStart, this.out.length)));
    if (opaque && s.limitKind !== 'result_bytes') {
      // Opaque strings are kept whole or not at all: the member goes, later siblings stay.
      this.out.rollback(s.mark);
      this.str = undefined;
      this.top!.kept--;
      this.omit(s.limitKind);
      return false;
    }
    if (s.limitKind === 'result_bytes' && (opaque || s.usedRaw < MIN_CUT_BYTES)) {
      if (s.kind === 'text') return this.abandonBlock('result_bytes');
      this.out.rollback(s.mark);
      this.str = undefined;
      this.top!.kept--;
      return this.omitAndClose('result_bytes');
    }
    this.omit(s.limitKind);
    if (s.limitKind === 'result_bytes') this.spend();
    return false;
  }



  /** End of the current string. */
  stringEnd(): void {
    if (this.capture !== undefined) {
      this.capture.stringEnd();
      if (this.capture.done) this.endCapture();
      return;
    }
    const s = this.str;
    if (s === undefined) return; // omitted or rolled back
    if (!s.cut && s.pending.length > 0) {
      const lone = s.pending;
      s.pending = '';
      this.take(s, lone);
    }
    if (this.str === undefined) return; // the lone surrogate did not fit
    this.str = undefined;
    this.emit('"', s.kind === 'envelope');
    const shape = this.top!.shape;
    if (shape !== undefined) {
      const key = this.top!.key;
      shape.note(key, 'string');
      if (s.value !== undefined) shape.type = s.value;
      if (s.b64 !== undefined && !s.b64.valid) shape.badBase64.add(key);
    }
    if (s.kind === 'text') {
      this.textUsed += s.usedRaw;
      if (s.pin !== undefined) {
        // A structure is an object: only a cut text that starts with `{` can be its mirror.
        const isCandidate = s.cut && this.mayMirror(s);
        if (isCandidate) {
          const block = this.frames[this.frames.length - 2]!.cur;
          this.candidates.push({ block, from: s.contentStart, to: this.out.length - 1, pin: s.pin, raw: s.usedRaw });
        } else {
          this.out.release(s.pin);
        }
      }
    }
    this.out.release(s.mark);
  }

  /** Convenience for a whole string (the in-memory source). */
  string(value: string): void {
    if (!this.stringStart()) return;
    this.stringChunk(value);
    this.stringEnd();
  }

  // ---------------------------------------------------------------- text mirror

  /** After `structuredContent` ends: is there a mirror candidate waiting for the source's verdict? */
  get mirrorPending(): boolean {
    return this.mirrorRange !== undefined && this.candidates.length > 0;
  }

  /** Indexes in `content` of the cut text blocks that may mirror `structuredContent`. */
  get mirrorBlocks(): readonly number[] {
    return this.candidates.map((c) => c.block);
  }



  /**
   * The source's verdict: which candidate block (if any) was exactly the JSON of
   * `structuredContent`. That block's cut text is replaced by the JSON of the bounded structure,
   * or the summary when that does not fit (see text-mirror.ts); the other candidates stay as cut.
   */
  resolveMirror(block: number | undefined): void {
    const r = this.mirrorRange;
    const c = r === undefined || block === undefined ? undefined : this.candidates.find((x) => x.block === block);
    const others = this.candidates.filter((x) => x !== c);
    if (c !== undefined) {
      const l = this.limits;
      let spare = this.room();
      for (const o of others) spare += o.raw;
      const rw = rewriteMirror(this.out.read(r!.from, r!.to), c, { maxBlockBytes: l.maxBlockBytes, textLeft: l.maxTextBytes - this.textUsed, room: spare });
      this.rewriteCandidate(c, rw.text, rw.delta);
    }
    // Bytes lent to the structure come back from the other candidates, last first: emptied.
    for (let i = others.length - 1; i >= 0 && this.room() < 0; i--) this.rewriteCandidate(others[i]!, '', -others[i]!.raw);
    for (const x of this.candidates) this.out.release(x.pin);
    this.candidates = [];
    this.mirrorRange = undefined;
  }

  private rewriteCandidate(c: MirrorCandidate, text: string, delta: number): void {
    this.out.replaceRange(c.from, c.to, text, delta);
    this.textUsed += delta;
  }

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

  // ---------------------------------------------------------------- hooks for the byte source

  /** True while `structuredContent` is being bounded as the rebuild of a text mirror. */
  get mirroring(): boolean {
    return this.mirror !== undefined;
  }

  /** True while the current string is a content block's `text` (a possible mirror). */
  get inBlockText(): boolean {
    return this.str?.pin !== undefined;
  }

  /** The innermost container takes no more children and no more pointers: skip its tail unseen. */
  get canSkipRest(): boolean {
    const f = this.top;
    if (f === undefined || this.capture !== undefined || f.role === 'result' || f.probe !== undefined) return false;
    // A closed block's `_meta` may still mark it as an earlier notice: its members are looked at.
    if (f.role === 'block' && !f.abandoned) return false;
    return f.abandoned || (f.closed !== undefined && !this.report.wantsPaths);
  }

  // ---------------------------------------------------------------- bulk skipping for sources

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
