/**
 * The budgeter's container, key and scalar rules: the root (a result, an error or a response
 * envelope), roles from where a value sits, depth, item and key counts, allowed fields, the
 * reserved `isError` and `_meta`, the holes for the report and the notice.
 */
import { BudgeterMirror } from './budgeter-mirror.js';
import { BudgetError } from './errors.js';
import { ENVELOPE_KEYS, MAX_ENVELOPE_FIELD_BYTES, MAX_KEY_UNITS, NOTICE_KEY } from './limits.js';
import { countsKeys, exemptKey, isNoticeKey, scalarRole, type Role } from './roles.js';
import { NO_COUNTS, type Frame } from './budgeter-state.js';
import { escapedLength } from './wire.js';
import { scalarType, ShapeTracker } from './shapes.js';

export abstract class BudgeterValues extends BudgeterMirror {
  // ---------------------------------------------------------------- containers

  openObject(): boolean {
    return this.open(false);
  }

  openArray(): boolean {
    return this.open(true);
  }

  protected open(array: boolean): boolean {
    if (this.capture !== undefined) {
      this.capture.open(array);
      return true;
    }
    const parent = this.top;
    if (parent === undefined) return this.openRoot(array);
    if (parent.role === 'block' && parent.key === '_meta' && !array && !(parent.abandoned && parent.probe === undefined)) {
      // A block's `_meta` that cannot be written may still mark the block as an earlier notice.
      if (parent.probe !== undefined || parent.closed !== undefined || this.exhausted || this.cost(this.prefix(parent)) + 2 > this.room()) {
        this.pushProbe('meta');
        return true;
      }
    }
    if (parent.abandoned && !parent.array) return false;
    if (this.startsCapture(parent)) return this.beginCapture(array);
    const role = this.childRole(parent, array ? 'array' : 'object');
    // The result's own `_meta` will hold the report: it opens on the reserved wrapper bytes.
    const ownMeta = role === 'meta' && this.metaWrapperReserved;
    // The structure after cut JSON-looking text blocks: bounded first, with their bytes lent to it
    // (less what the summary needs), even past a spent budget; one of them is then rewritten.
    const mirror = role === 'structure' && !this.mirrorDone && this.candidates.length > 0;
    // A block is let past a spent budget only to be probed for an earlier notice (below).
    if (!this.gate(parent, ownMeta || role === 'block' || mirror)) return false;
    if (role === 'drop' || role === 'invalid') return this.dropRole(role);
    const depth = parent.depth + 1;
    if (depth > this.limits.maxDepth) {
      if (parent.array) return this.omitAndClose('depth');
      this.omit('depth');
      return false;
    }
    const mark = role === 'block' ? this.out.mark() : undefined;
    const pre = this.prefix(parent);
    if (ownMeta) this.metaWrapperReserved = false;
    if (role === 'structure') this.mirrorDone = true;
    if (mirror) {
      // A budget spent before the structure does not apply inside it (it is spent again after).
      this.mirror = { from: -1, reserve: this.mirrorReserve(), spent: this.exhausted };
      this.exhausted = false;
    }
    if ((role === 'block' && this.exhausted) || this.cost(pre) + 2 > this.room()) {
      if (ownMeta) this.metaWrapperReserved = true;
      if (mirror) {
        this.exhausted = this.mirror!.spent;
        this.mirror = undefined;
      }
      if (mark !== undefined) this.out.release(mark);
      if (role === 'block') {
        this.pushProbe('block');
        return true;
      }
      return this.omitAndClose('result_bytes');
    }
    const outside = parent.role === 'envelope';
    const parentKept = parent.kept;
    parent.kept++;
    if (mirror) {
      this.emit(pre, outside);
      this.mirror!.from = this.out.length;
      this.emit('{');
    } else if (outside) {
      this.emit(pre, true);
      this.emit(array ? '[' : '{');
    } else {
      this.emit(pre + (array ? '[' : '{'));
    }
    this.closing++;
    this.noteMember(parent, array ? 'array' : 'object');
    const f = this.push(array, role, depth);
    f.mirror = mirror;
    f.inStructure = role === 'structure' || parent.inStructure;
    if (role === 'block' || role === 'resource') f.shape = new ShapeTracker();
    if (role === 'block') this.openBlockAt = this.frames.length - 1;
    if (ownMeta) this.ownMeta = 'open';
    if (role === 'result' || role === 'error') this.enterRoot(f);
    if (mark !== undefined) {
      f.tx = {
        mark,
        report: this.report.mark(),
        textUsed: this.textUsed,
        textCounts: this.textCounts.length === 0 ? NO_COUNTS : this.textCounts.slice(),
        parentKept,
        candidates: this.candidates.length,
        exhausted: this.exhausted,
      };
    }
    return true;
  }

  protected openRoot(array: boolean): boolean {
    if (array) throw new BudgetError('INVALID_RESULT', 'Expected a JSON object (a CallToolResult or a JSON-RPC response), got an array');
    const role: Role = this.rootKind === 'auto' ? 'auto' : this.rootKind;
    const envelope = role === 'envelope';
    this.emit('{', envelope);
    const f = this.push(false, role, envelope ? 0 : 1);
    if (!envelope) {
      this.closing++;
      if (role !== 'auto') this.enterRoot(f);
    }
    return true;
  }

  protected enterRoot(f: Frame): void {
    this.base = this.frames.length - 1;
    this.isErrorReserved = f.role === 'result';
  }

  /** The root's first key decides whether it is a response envelope or a result. */
  protected resolveAuto(f: Frame, firstKey: string): void {
    if (ENVELOPE_KEYS.has(firstKey)) {
      f.role = 'envelope';
      f.depth = 0;
      this.outside += 1;
      this.closing--;
    } else {
      f.role = 'result';
      this.enterRoot(f);
    }
  }

  closeObject(): void {
    this.close();
  }

  closeArray(): void {
    this.close();
  }

  protected close(): void {
    if (this.capture !== undefined) {
      this.capture.close();
      if (this.capture.done) this.endCapture();
      return;
    }
    const f = this.frames.pop();
    if (f === undefined) throw new BudgetError('INVALID_RESULT', 'Unbalanced end of container');
    if (f.role === 'auto') {
      f.role = 'result';
      this.enterRoot(f);
    }
    if (f.role === 'envelope') {
      this.emit('}', true);
      return;
    }
    this.closing--;
    if (f.abandoned) {
      if (f.probe === 'block') this.endProbe();
      else if (f.probe === 'meta') this.endMetaProbe();
      return; // rolled back already: nothing of it remains in the output
    }
    switch (f.role) {
      case 'content':
        if (this.limits.notice) this.noticeSlot = { index: this.out.hole(), comma: f.kept > 0, wrap: '' };
        break;
      case 'meta':
      case 'errdata':
        if (this.frames.length - 1 === this.base) this.reportSlot = { index: this.out.hole(), comma: f.kept > 0, wrap: '' };
        if (f.role === 'meta' && this.ownMeta === 'open') this.ownMeta = f.kept > 0 ? 'members' : 'empty';
        break;
      case 'result':
        if (this.reportSlot === undefined) this.reportSlot = { index: this.out.hole(), comma: f.kept > 0, wrap: '_meta' };
        this.isErrorReserved = false;
        break;
      case 'error':
        // A non-object `data` gets no report (there is nowhere to put one without a second key).
        if (this.reportSlot === undefined && !this.sawErrorData) {
          this.reportSlot = { index: this.out.hole(), comma: f.kept > 0, wrap: 'data' };
        }
        break;
      case 'block':
        if (!this.closeBlock(f)) return;
        break;
      case 'resource': {
        const block = this.top!;
        if (block.shape !== undefined) block.shape.resourceOk = f.shape!.resourceContentsOk();
        break;
      }
      default:
        break;
    }
    this.emit(f.array ? ']' : '}');
    if (f.mirror) this.endMirror();
  }

  // ---------------------------------------------------------------- keys

  /** An object member's key. False: the member is omitted and its value must be skipped. */
  key(name: string): boolean {
    if (this.capture !== undefined) {
      this.capture.key(name);
      return true;
    }
    const f = this.top!;
    if (f.role === 'auto') this.resolveAuto(f, name);
    f.key = name;
    f.shape?.seen.add(name);
    if (f.abandoned) return f.probe === 'block' ? name === '_meta' : f.probe === 'meta' && name === NOTICE_KEY;
    if (f.closed !== undefined && !(f.role === 'result' && name === 'isError') && !(f.role === 'block' && name === '_meta')) {
      this.omit(f.closed);
      return false;
    }
    if (f.role === 'error' && name === 'data') this.sawErrorData = true;
    switch (f.role) {
      case 'envelope':
        if (name === 'method' || name === 'params') {
          throw new BudgetError('INVALID_RESULT', 'Expected a JSON-RPC response, got a request or notification', { message: 'request' });
        }
        if (name !== 'result' && name !== 'error' && name !== 'id' && name !== 'jsonrpc') return false;
        break;
      case 'result':
        if (!this.limits.allowedFields.has(name)) {
          this.omit('top_level_field');
          return false;
        }
        break;
      default:
        if (!countsKeys(f.role) || this.startsCapture(f) || isNoticeKey(f.role, name)) break;
        if (f.kept >= this.limits.maxKeys) return this.omitAndClose('object_keys');
        break;
    }
    if (!exemptKey(f.role, name) && (name.length > this.limits.maxStringBytes || name.length > MAX_KEY_UNITS || escapedLength(name) > this.limits.maxStringBytes)) {
      this.omit('string_bytes');
      return false;
    }
    f.keyJson = JSON.stringify(name);
    return true;
  }

  // ---------------------------------------------------------------- scalars

  /** A number (as written), `true`, `false` or `null`. */
  scalar(raw: string): void {
    if (this.capture !== undefined) {
      this.capture.scalar(raw);
      if (this.capture.done) this.endCapture();
      return;
    }
    const parent = this.top;
    if (parent === undefined) throw new BudgetError('INVALID_RESULT', `Expected a JSON object, got ${raw.slice(0, 32)}`);
    if (parent.probe === 'meta' && raw === 'true') this.probeNotice = true;
    if (parent.abandoned && !parent.array) return;
    if (this.startsCapture(parent)) {
      this.beginCapture(undefined);
      this.capture!.scalar(raw);
      this.endCapture();
      return;
    }
    if (isNoticeKey(parent.role, parent.key) && raw === 'true') {
      // The notice an earlier pass appended: drop it silently; a fresh one is written at the end.
      this.abandonBlock(undefined);
      return;
    }
    const isError = parent.role === 'result' && parent.key === 'isError' && (raw === 'true' || raw === 'false');
    const role = scalarRole(parent.role, parent.key, raw === 'true' || raw === 'false');
    if (!this.gate(parent, isError)) return;
    if (role === 'drop' || role === 'invalid') {
      this.dropRole(role);
      return;
    }
    if (isError) this.isErrorReserved = false;
    const piece = this.prefix(parent) + raw;
    if (parent.role === 'envelope') {
      if (raw.length > MAX_ENVELOPE_FIELD_BYTES) throw this.envelopeTooLarge(parent.key);
      parent.kept++;
      this.emit(piece, true);
      return;
    }
    if (this.cost(piece) > this.room()) {
      this.omitAndClose('result_bytes');
      return;
    }
    parent.kept++;
    this.noteMember(parent, scalarType(raw));
    this.emit(piece);
  }
}
