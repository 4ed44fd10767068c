/**
 * The budgeter's string rules, by kind: a block's text (its own bound and the total text bound,
 * spent greedily), an opaque or base64 string (kept whole or not at all), an envelope field, any
 * other string (cut at the string bound). Chunks are escaped as they come; a surrogate pair split
 * across chunks is never cut through.
 */
import { BudgeterValues } from './budgeter-values.js';
import { NO_COUNTS, type Str } from './budgeter-state.js';
import { BudgetError } from './errors.js';
import { MAX_ENVELOPE_FIELD_BYTES, MIN_CUT_BYTES } from './limits.js';
import type { BudgetKind } from './report.js';
import { scalarRole } from './roles.js';
import { Base64Check, looksOpaque } from './shapes.js';
import { startTallies } from './text-measure.js';
import { cutString, escapeContent, utf8Length } from './wire.js';

export abstract class BudgeterStrings extends BudgeterValues {
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
      tallies: kind === 'text' && l.textMeasures.length > 0 ? startTallies(l.textMeasures) : undefined,
      dropIfCut: kind === 'text' && (l.maxTextBytes - this.textUsed <= 0 || this.spentMeasure() >= 0),
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
    // A text under text measures: the longest prefix of this chunk within what each has left first
    // (the tightest cuts; on a tie, the first named).
    let measureCut = -1;
    const tallies = s.tallies;
    if (tallies !== undefined) {
      const ms = this.limits.textMeasures;
      for (let i = 0; i < ms.length; i++) {
        const m = ms[i]!;
        const t = tallies[i]!;
        const end = m.measure.scan({ state: t.state, cost: t.cost }, text, 0, text.length, m.bound - this.textCounts[i]!);
        if (end < text.length) {
          text = text.slice(0, end);
          measureCut = i;
        }
      }
    }
    const left = s.budget - s.used;
    // Perf: a chunk whose worst case (7 bytes per unit) fits is escaped natively in one go.
    if (text.length * 7 <= left) {
      s.b64?.feed(text);
      const esc = escapeContent(text);
      this.emitContent(s, esc, text, text.length);
      return measureCut < 0 || this.cutByMeasure(s, measureCut);
    }
    const cut = cutString(text, 0, left, false);
    if (cut.end === text.length) {
      // Perf: base64 is checked only once it is known to be kept (a cut one goes whole).
      s.b64?.feed(text);
      this.emitContent(s, escapeContent(text), text, text.length);
      return measureCut < 0 || this.cutByMeasure(s, measureCut);
    }
    if (cut.end > 0) this.emitContent(s, escapeContent(text.slice(0, cut.end)), text, cut.end);
    return this.cutHere(s);
  }

  /** A text measure ran out before the bytes: cut, named by that measure's bound. */
  private cutByMeasure(s: Str, measure: number): false {
    s.limitKind = this.limits.textMeasures[measure]!.kind;
    return this.cutHere(s);
  }

  /** The first text measure whose bound the kept texts have reached, or -1. */
  private spentMeasure(): number {
    const ms = this.limits.textMeasures;
    for (let i = 0; i < ms.length; i++) if (this.textCounts[i]! >= ms[i]!.bound) return i;
    return -1;
  }

  /** Writes `esc`, the escaped `text[0, units)`, and counts it. */
  private emitContent(s: Str, esc: string, text: string, units: number): void {
    const tallies = s.tallies;
    if (tallies !== undefined) {
      const ms = this.limits.textMeasures;
      for (let i = 0; i < ms.length; i++) ms[i]!.measure.scan(tallies[i]!, text, 0, units, Infinity);
    }
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
    if (s.dropIfCut) {
      const spent = this.limits.maxTextBytes - this.textUsed <= 0 ? -1 : this.spentMeasure();
      return this.abandonBlock(spent < 0 ? 'text_total_bytes' : this.limits.textMeasures[spent]!.kind);
    }
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
      const counts = s.tallies === undefined ? NO_COUNTS : s.tallies.map((t) => t.cost);
      for (let i = 0; i < counts.length; i++) this.textCounts[i]! += counts[i]!;
      if (s.pin !== undefined) {
        // A structure is an object: only a cut text that starts with `{` can be its mirror.
        const isCandidate = s.cut && this.mayMirror(s);
        if (isCandidate) {
          const block = this.frames[this.frames.length - 2]!.cur;
          this.candidates.push({ block, from: s.contentStart, to: this.out.length - 1, pin: s.pin, raw: s.usedRaw, counts });
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
}
