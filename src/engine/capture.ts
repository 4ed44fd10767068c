/**
 * Builds a small JSON value from budgeter events, with a byte cap. Used to read back a report that
 * an earlier pass left in `_meta`, so that applying the budget twice equals applying it once.
 */
import { MAX_CAPTURED_REPORT_BYTES, MAX_POINTER_BYTES } from './limits.js';
import { BUDGET_KINDS, type BudgetReport } from './report.js';
import { utf8Length } from './wire.js';

type Container = unknown[] | Record<string, unknown>;

export class ValueCapture {
  /**
   * @param maxBytes stop storing once about this many bytes were seen (`over` is then set)
   * @param exactNumbers flag (`inexact`) any number whose text `JSON.stringify` would not write back
   */
  constructor(
    private readonly maxBytes = MAX_CAPTURED_REPORT_BYTES,
    private readonly exactNumbers = false,
  ) {}

  private stack: Container[] = [];
  private keys: (string | undefined)[] = [];
  private bytes = 0;
  private text: string[] | undefined;
  /** More than `maxBytes` were seen; the value is incomplete. */
  over = false;
  /** A number was seen that would not survive a round trip through a JS number. */
  inexact = false;
  value: unknown;
  done = false;

  /** Depth of open containers; the capture ends when it returns to zero after a value. */
  get depth(): number {
    return this.stack.length;
  }

  private charge(n: number): void {
    this.bytes += n;
    if (this.bytes > this.maxBytes) this.over = true;
  }

  private put(v: unknown): void {
    this.charge(2);
    const top = this.stack[this.stack.length - 1];
    if (top === undefined) {
      this.value = v;
      this.done = true;
    } else if (Array.isArray(top)) {
      if (!this.over) top.push(v);
    } else {
      const k = this.keys[this.keys.length - 1];
      // defineProperty: a "__proto__" member is data, as JSON.parse makes it, not a prototype.
      if (!this.over && k !== undefined) Object.defineProperty(top, k, { value: v, writable: true, enumerable: true, configurable: true });
    }
  }

  open(array: boolean): void {
    const c: Container = array ? [] : {};
    this.put(c);
    this.done = false;
    this.stack.push(c);
    this.keys.push(undefined);
  }

  close(): void {
    this.stack.pop();
    this.keys.pop();
    if (this.stack.length === 0) this.done = true;
  }

  key(k: string): void {
    this.charge(utf8Length(k));
    this.keys[this.keys.length - 1] = k;
  }

  scalar(raw: string): void {
    if (raw === 'true' || raw === 'false' || raw === 'null') {
      this.charge(raw.length);
      this.put(raw === 'true' ? true : raw === 'false' ? false : null);
      return;
    }
    const n = Number(raw);
    if (this.exactNumbers && String(n) !== raw) this.inexact = true;
    this.charge(raw.length);
    this.put(n);
  }

  stringStart(): void {
    this.text = [];
  }

  stringChunk(s: string): void {
    this.charge(s.length);
    if (!this.over) this.text?.push(s);
  }

  stringEnd(): void {
    const s = this.text?.join('') ?? '';
    this.text = undefined;
    this.put(s);
  }

  /** The captured value as an earlier pass's report, or undefined when it is not one. */
  asReport(maxPaths: number): BudgetReport | undefined {
    if (this.over || !this.done) return undefined;
    const v = this.value as Partial<BudgetReport> | null;
    if (v === null || typeof v !== 'object' || Array.isArray(v)) return undefined;
    const keys = Object.keys(v);
    const expected = ['truncated', 'budget_kind', 'omitted_count', 'omitted_paths', 'omitted_paths_capped'];
    // An earlier pass's continuation may follow: it is not the engine's to keep (the transport that
    // made the offer, or the one in front of it, writes it back), but it leaves the report valid.
    const continued = keys.length === expected.length + 1 && keys[expected.length] === 'continuation';
    if (continued) {
      const c = (v as { continuation?: unknown }).continuation;
      if (c === null || typeof c !== 'object' || Array.isArray(c)) return undefined;
    }
    if ((keys.length !== expected.length && !continued) || !expected.every((k, i) => keys[i] === k)) return undefined;
    if (v.truncated !== true) return undefined;
    if (!(BUDGET_KINDS as readonly unknown[]).includes(v.budget_kind)) return undefined;
    const n = v.omitted_count;
    if (typeof n !== 'number' || !Number.isSafeInteger(n) || n < 1) return undefined;
    const paths = v.omitted_paths;
    if (!Array.isArray(paths) || paths.length > maxPaths || paths.length > n) return undefined;
    for (const p of paths) {
      if (typeof p !== 'string' || (p !== '' && !p.startsWith('/'))) return undefined;
      if (utf8Length(JSON.stringify(p)) > MAX_POINTER_BYTES) return undefined;
    }
    if (typeof v.omitted_paths_capped !== 'boolean') return undefined;
    return v as BudgetReport;
  }
}
