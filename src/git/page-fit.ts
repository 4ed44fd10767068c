/**
 * Sizing git pages at the source, so the result budget never has to cut one: a page stops before
 * its JSON (its own fields, the longest cursor it may carry, and its items) passes the page size;
 * every free-text field (subjects, names, paths, emails) is cut here, with an explicit
 * `<field>_truncated: true`, to a share of the page that lets one item with every field at its
 * cap fit; nested arrays stay within the item bound. Cursors stay short: user values (ref, path,
 * match) are bound by a hash, and a resume-after name by a bounded prefix plus a hash.
 */
import { createHash } from 'node:crypto';
import { cutString } from '../engine/index.js';
import { WorkspaceError } from '../fs/errors.js';
import type { PageMeter, PageSizer } from '../shared/page-meter.js';

/** The bounds one git page is built to (the server's page budget for the active limits). */
export interface GitPageLimits {
  /** Bytes the whole page may take as JSON. */
  maxPageBytes: number;
  /** Items in any one array of the page. */
  maxPageItems: number;
  /** JSON-escaped bytes of any one string of the page. */
  maxPageStringBytes: number;
  /** Measures a page as it is sent (`serve`); without it, a page stops at `maxPageBytes` of JSON. */
  sizer?: PageSizer | undefined;
}

/** No bound beyond the tools' own caps (unit tests and benchmarks calling the reads directly). */
export const UNBOUNDED_PAGE: GitPageLimits = Object.freeze({ maxPageBytes: Infinity, maxPageItems: Infinity, maxPageStringBytes: Infinity });

/** A free-text field is cut to this many characters even when the page has room (the documented per-item cap). */
export const MAX_FIELD_CHARS = 200;
/** A user value echoed on a page (`ref`, `path`) is cut to this many escaped bytes. */
export const MAX_ECHO_BYTES = 256;
/** Bytes of a name a cursor keeps to resume after it; a longer name adds its hash. */
export const ANCHOR_BYTES = 64;

/** UTF-8 bytes of a value's JSON. */
export const jsonBytes = (v: unknown): number => Buffer.byteLength(JSON.stringify(v));

/** A string cut to `maxBytes` escaped bytes and `maxChars` characters (never inside a pair or escape). */
export function cutField(s: string, maxBytes: number, maxChars = MAX_FIELD_CHARS): { value: string; cut: boolean } {
  let t = s;
  if (t.length > maxChars) {
    let end = maxChars;
    const c = t.charCodeAt(end - 1);
    if (c >= 0xd800 && c <= 0xdbff) end--; // keep a surrogate pair whole
    t = t.slice(0, end);
  }
  if (maxBytes !== Infinity && t.length > 0) {
    const { end } = cutString(t, 0, Math.max(0, maxBytes), false);
    t = t.slice(0, end);
  }
  return { value: t, cut: t.length !== s.length };
}

/**
 * Set `item[key]` to `value` cut to `maxBytes`, adding `<key>_truncated: true` when it was cut.
 * Returns the item for chaining.
 */
export function putField<T extends object>(item: T, key: string, value: string, maxBytes: number, maxChars = MAX_FIELD_CHARS): T {
  const { value: v, cut } = cutField(value, maxBytes, maxChars);
  const rec = item as Record<string, unknown>;
  rec[key] = v;
  if (cut) rec[`${key}_truncated`] = true;
  return item;
}

/**
 * Bytes each of `fields` free-text fields of an item may take: one item shaped like `template`
 * (every flag set, empty strings) with each field at this size fits `room`, and no field passes
 * the string bound.
 */
export function fieldBytes(limits: GitPageLimits, room: number, template: object, fields: number): number {
  const share = Math.floor((room - jsonBytes(template)) / fields);
  return Math.max(0, Math.min(limits.maxPageStringBytes, share));
}

/** Fills one page's items under a byte room (or a meter) and the item bound. */
export class PageFill<T> {
  readonly items: T[] = [];
  private used = 0;

  constructor(
    /** Bytes the items array's contents may take. */
    readonly room: number,
    readonly maxItems: number,
    /** Measures the page as it is sent; without it, items' JSON under `room`. */
    private readonly meter?: PageMeter,
  ) {}

  /** Whether the page is full by count. */
  get full(): boolean {
    return this.items.length >= this.maxItems;
  }

  /**
   * Add the item if it fits; `false` when it does not (it is the first of the next page). The
   * first item is always taken: field caps are sized so that it fits.
   */
  offer(item: T): boolean {
    if (this.full) return false;
    if (this.meter !== undefined) {
      if (!this.meter.take(item)) return false;
      this.items.push(item);
      return true;
    }
    const size = jsonBytes(item) + (this.items.length > 0 ? 1 : 0);
    if (this.items.length > 0 && this.used + size > this.room) return false;
    this.items.push(item);
    this.used += size;
    return true;
  }
}

/** The meter of a page whose own fields are `fixed` and items go in `list`, when the limits carry a sizer. */
export function meterOf(limits: GitPageLimits, fixed: object, list: string): PageMeter | undefined {
  return limits.sizer?.meter(fixed, list);
}

/** Bytes left for items: the page size less the page's own fields (with the longest cursor it may carry). */
export function itemRoom(limits: GitPageLimits, fixedPage: object): number {
  return limits.maxPageBytes - jsonBytes(fixedPage);
}

/** A short hash binding a cursor to user values (ref, path, match), whatever their length. */
export function bindKey(...parts: (string | null | undefined)[]): string {
  const h = createHash('sha256');
  for (const p of parts) h.update(p === null || p === undefined ? '\u0000n' : `\u0000s${p}`);
  return h.digest('base64url').slice(0, 22);
}

const nameHash = (name: string): string => createHash('sha256').update(name).digest('base64url').slice(0, 22);

/** Where a cursor resumes in a name-sorted listing: after the name, kept as a bounded prefix (+ hash). */
export interface Anchor {
  /** The name's UTF-8 bytes as base64url, or its first {@link ANCHOR_BYTES} bytes when longer. */
  a: string;
  /** Hash of the whole name, when `a` is a prefix. */
  h?: string;
}

/** The anchor for resuming after `name`. Perf: base64url bytes never need JSON escaping, so its size is known. */
export function anchorOf(name: string): Anchor {
  const b = Buffer.from(name);
  if (b.length <= ANCHOR_BYTES) return { a: b.toString('base64url') };
  return { a: b.subarray(0, ANCHOR_BYTES).toString('base64url'), h: nameHash(name) };
}

/** The anchor a cursor carried, checked. */
export function anchorFrom(c: Record<string, unknown>): Anchor {
  const bad = (): WorkspaceError => new WorkspaceError('INVALID_CURSOR', 'Invalid params: `cursor` is malformed. Start again without a cursor.');
  if (typeof c.a !== 'string' || (c.h !== undefined && typeof c.h !== 'string')) throw bad();
  return c.h === undefined ? { a: c.a } : { a: c.a, h: c.h };
}

/** Names compared by their UTF-8 bytes (git's order), not by UTF-16 units. */
export function compareNames(x: string, y: string): number {
  return Buffer.compare(Buffer.from(x), Buffer.from(y));
}

/**
 * Skips the names a cursor's page already covered, in a name-sorted stream: everything up to and
 * including the anchor's name. With a hashed (long) anchor, names that share its prefix are
 * skipped until the name itself is seen; if it disappeared meanwhile, resuming could skip names
 * nobody saw, so the cursor is refused instead.
 */
export class AnchorSkip {
  private found = false;
  private skippedShared = 0;
  private readonly prefix: Buffer;

  constructor(private readonly anchor: Anchor | undefined) {
    this.prefix = Buffer.from(anchor?.a ?? '', 'base64url');
  }

  /** True when `name` comes after the anchor (is to be listed). */
  after(name: string): boolean {
    const anchor = this.anchor;
    if (anchor === undefined || this.found) return true;
    const b = Buffer.from(name);
    if (anchor.h === undefined) {
      if (Buffer.compare(b, this.prefix) > 0) {
        this.found = true;
        return true;
      }
      return false;
    }
    if (Buffer.compare(b, this.prefix) < 0) return false;
    if (b.length >= this.prefix.length && b.subarray(0, this.prefix.length).equals(this.prefix)) {
      if (nameHash(name) === anchor.h) this.found = true;
      else this.skippedShared++;
      return false;
    }
    if (this.skippedShared > 0) {
      throw new WorkspaceError('INVALID_CURSOR', 'Invalid params: the name this `cursor` resumes after no longer exists. Start again without a cursor.');
    }
    this.found = true;
    return true;
  }
}
