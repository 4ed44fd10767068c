/**
 * Wire-level string arithmetic: how many bytes a string takes once JSON-escaped and UTF-8 encoded
 * (exactly as `JSON.stringify` writes it), and where to cut it without splitting a UTF-8 sequence,
 * a surrogate pair or an escape.
 */

// Perf: printable ASCII other than `"` and `\` is one byte each and needs no escape; a native
// regex answers that for a whole string faster than any JS loop.
const NEEDS_WORK = /[^\x20-\x21\x23-\x5b\x5d-\x7e]/;

/** UTF-8 bytes of an already-escaped JSON fragment (keys, numbers, punctuation, escaped strings). */
export function utf8Length(s: string): number {
  if (s.length < 32) {
    let n = s.length;
    for (let i = 0; i < s.length; i++) {
      const c = s.charCodeAt(i);
      if (c >= 0x80) return Buffer.byteLength(s, 'utf8');
    }
    return n;
  }
  return NEEDS_WORK.test(s) ? Buffer.byteLength(s, 'utf8') : s.length;
}

/**
 * Bytes the mirror of a serialized fragment takes when that fragment is itself written inside a
 * JSON string: every `"` and `\` gains a backslash. Fragments never hold raw control characters or
 * lone surrogates (the serializer escapes those as ASCII), so nothing else grows.
 */
export function mirrorLength(fragment: string): number {
  let extra = 0;
  for (let i = fragment.indexOf('"'); i !== -1; i = fragment.indexOf('"', i + 1)) extra++;
  for (let i = fragment.indexOf('\\'); i !== -1; i = fragment.indexOf('\\', i + 1)) extra++;
  return utf8Length(fragment) + extra;
}

/**
 * Escaped UTF-8 bytes of a string's content (without the quotes). Call only on strings already
 * known to be of bounded length: it may build the escaped form.
 */
export function escapedLength(s: string): number {
  if (!NEEDS_WORK.test(s)) return s.length;
  return Buffer.byteLength(JSON.stringify(s), 'utf8') - 2;
}

/** Escape a string's content (without quotes), exactly as `JSON.stringify` does. */
export function escapeContent(s: string): string {
  if (!NEEDS_WORK.test(s)) return s;
  const q = JSON.stringify(s);
  return q.slice(1, q.length - 1);
}

/** Result of {@link cutString}. */
export interface Cut {
  /** Index (UTF-16 units) where the kept part ends. */
  end: number;
  /** Wire bytes of the kept part. */
  bytes: number;
  /** Mirror bytes of the kept part (see {@link mirrorLength}); equals `bytes` when not asked. */
  mirror: number;
}

/**
 * Walk `s` from `start` and keep characters while the running cost stays within `budget`.
 * With `mirror` set, the cost of a character is its mirror length (its escaped form written once
 * more inside a JSON string) instead of its wire length. A surrogate pair is kept or dropped whole;
 * an escape is never split (escapes are atomic in the cost model).
 */
export function cutString(s: string, start: number, budget: number, mirror: boolean): Cut {
  let i = start;
  let bytes = 0;
  let mcost = 0;
  const n = s.length;
  while (i < n) {
    const c = s.charCodeAt(i);
    let w: number; // wire bytes
    let m: number; // mirror bytes
    let step = 1;
    if (c < 0x80) {
      if (c >= 0x20 && c !== 0x22 && c !== 0x5c) {
        w = 1;
        m = 1;
      } else if (c === 0x22 || c === 0x5c) {
        w = 2;
        m = 4;
      } else if (c === 0x08 || c === 0x09 || c === 0x0a || c === 0x0c || c === 0x0d) {
        w = 2;
        m = 3;
      } else {
        w = 6;
        m = 7;
      }
    } else if (c < 0x800) {
      w = m = 2;
    } else if (c >= 0xd800 && c <= 0xdbff) {
      const d = i + 1 < n ? s.charCodeAt(i + 1) : 0;
      if (d >= 0xdc00 && d <= 0xdfff) {
        w = m = 4;
        step = 2;
      } else {
        w = 6;
        m = 7;
      }
    } else if (c >= 0xdc00 && c <= 0xdfff) {
      w = 6;
      m = 7;
    } else {
      w = m = 3;
    }
    const cost = mirror ? mcost + m : bytes + w;
    if (cost > budget) break;
    bytes += w;
    mcost += m;
    i += step;
  }
  return { end: i, bytes, mirror: mirror ? mcost : bytes };
}
