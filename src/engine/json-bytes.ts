/**
 * The byte table of every JSON reader of the engine (the tokenizer, the skip scanner, the member
 * scanner and its scalar automaton, and the JSON-RPC policies built on them): the structural bytes
 * by name, whitespace, digits, hex digits of `\u` escapes, UTF-8 sequences (lengths, the first
 * invalid byte), the number grammar and its length cap, and how a byte is named in an error.
 */

/**
 * Structural and scalar bytes by name, one table for every reader (like the tokenizer's states,
 * an object under isolated modules whose fields never change: the optimizing compiler folds them).
 */
export const enum Byte {
  Tab = 0x09,
  Lf = 0x0a,
  Cr = 0x0d,
  Space = 0x20,
  Quote = 0x22,
  Plus = 0x2b,
  Comma = 0x2c,
  Minus = 0x2d,
  Dot = 0x2e,
  Slash = 0x2f,
  Zero = 0x30,
  Nine = 0x39,
  Colon = 0x3a,
  UpperE = 0x45,
  OpenBracket = 0x5b,
  Backslash = 0x5c,
  CloseBracket = 0x5d,
  LowerE = 0x65,
  LowerF = 0x66,
  LowerN = 0x6e,
  LowerT = 0x74,
  OpenBrace = 0x7b,
  CloseBrace = 0x7d,
}

/** A number token longer than this is rejected. */
export const MAX_NUMBER_BYTES = 4096;

/** JSON whitespace: space, line feed, carriage return, tab. */
export function isWs(c: number): boolean {
  return c === Byte.Space || c === Byte.Lf || c === Byte.Cr || c === Byte.Tab;
}

/** An ASCII digit. */
export function isDigit(c: number): boolean {
  return c >= Byte.Zero && c <= Byte.Nine;
}

/** The index of the first byte at or after `i` that is not JSON whitespace (`buf.length` if none). */
export function skipWs(buf: Uint8Array, i: number): number {
  while (i < buf.length && isWs(buf[i]!)) i++;
  return i;
}

/** A byte that ends a number or literal: a separator, a closing bracket or whitespace. */
export function endsScalar(c: number): boolean {
  return c === Byte.Comma || c === Byte.CloseBrace || c === Byte.CloseBracket || isWs(c);
}

const NUMBER_RE = /^-?(?:0|[1-9][0-9]*)(?:\.[0-9]+)?(?:[eE][+-]?[0-9]+)?$/;

/** Whether a token made of number characters is a JSON number. */
export function isJsonNumber(raw: string): boolean {
  return NUMBER_RE.test(raw);
}

/** A byte as an error message names it: the character when printable, else its hex code. */
export function describeByte(c: number): string {
  if (c >= 0x21 && c < 0x7f) return `'${String.fromCharCode(c)}'`;
  return `byte 0x${c.toString(16).padStart(2, '0')}`;
}

/** The value of a hex digit, or -1. */
export function hexValue(c: number): number {
  if (c >= 0x30 && c <= 0x39) return c - 0x30;
  if (c >= 0x61 && c <= 0x66) return c - 0x57;
  if (c >= 0x41 && c <= 0x46) return c - 0x37;
  return -1;
}

/**
 * Length of the UTF-8 sequence at `i` (2–4), 0 when it is cut off by the end of the buffer,
 * -1 when invalid (bad lead, bad continuation, overlong, surrogate, above U+10FFFF).
 */
export function utf8SequenceLength(buf: Uint8Array, i: number, n: number): number {
  const c = buf[i]!;
  let len: number;
  let min: number;
  if (c >= 0xc2 && c <= 0xdf) {
    len = 2;
    min = 0x80;
  } else if (c >= 0xe0 && c <= 0xef) {
    len = 3;
    min = 0x800;
  } else if (c >= 0xf0 && c <= 0xf4) {
    len = 4;
    min = 0x10000;
  } else {
    return -1;
  }
  let cp = c & (len === 2 ? 0x1f : len === 3 ? 0x0f : 0x07);
  for (let k = 1; k < len; k++) {
    if (i + k >= n) return 0;
    const d = buf[i + k]!;
    if ((d & 0xc0) !== 0x80) return -1;
    cp = (cp << 6) | (d & 0x3f);
  }
  if (cp < min || cp > 0x10ffff || (cp >= 0xd800 && cp <= 0xdfff)) return -1;
  return len;
}

/** Index of the first byte of `buf` that does not start a valid UTF-8 sequence (its length if none). */
export function firstInvalidUtf8(buf: Uint8Array): number {
  let i = 0;
  while (i < buf.length) {
    if (buf[i]! < 0x80) {
      i++;
      continue;
    }
    const len = utf8SequenceLength(buf, i, buf.length);
    if (len <= 0) return i;
    i += len;
  }
  return buf.length;
}
