/**
 * The byte path's reading of a text mirror, as the in-memory path reads it. In memory, a text is
 * the mirror of `structuredContent` when it equals `JSON.stringify` of the parsed structure; on
 * the byte path neither is parsed, so both are reduced, as their bytes go by, to the bytes that
 * comparison sees: the text's value (its escapes resolved) and the structure written as
 * `JSON.stringify` writes it (no whitespace, numbers re-serialized, strings escaped the one way
 * it escapes them). Equal digests of the two then mean what equality means in memory, however the
 * server wrote either (`\u007b` for `{`, `\u00e9` for `é`, `\/`, `1.0`, pretty-printed).
 *
 * `JSON.parse` puts an object's array-index keys first, in ascending order; a byte stream cannot
 * reorder without holding the object, so a structure whose index keys are written elsewhere (after
 * another key, or out of order) is not taken for a mirror here. Written by `JSON.stringify` (the
 * usual way a server writes both), they are in that order already. An object with a repeated key
 * is the one case the two paths may judge differently: `JSON.parse` keeps one member (the last
 * value, in the first place), the bytes keep both, so a text written with the same repeat is a
 * mirror here and not in memory, and one written as the parse's JSON the reverse.
 */
import type { Hash } from 'node:crypto';

const QUOTE = 0x22;
const BACKSLASH = 0x5c;

/** A key `JSON.parse` orders first: an array index (a canonical integer below 2^32 - 1). */
export function isIndexKey(name: string): boolean {
  if (name.length === 0 || name.length > 10) return false;
  const c = name.charCodeAt(0);
  if (c < 0x30 || c > 0x39 || (c === 0x30 && name.length > 1)) return false;
  for (let i = 1; i < name.length; i++) {
    const d = name.charCodeAt(i);
    if (d < 0x30 || d > 0x39) return false;
  }
  return Number(name) < 0xffffffff;
}


/** Stands for a key that is no array index, once that is known. */
const NOT_INDEX = '\u0000';

/** Longest number text re-serialized (longer: the structure is not taken for a mirror). */
const MAX_NUMBER_BYTES = 4096;

/** Bytes gathered before they are hashed: one hash update per 64 KiB, not one per piece. */
class HashSink {
  private readonly buf = Buffer.allocUnsafe(1 << 16);
  private n = 0;

  constructor(private readonly h: Hash) {}

  /**
   * Perf: a run is copied without a view of it (a text with an escape every few dozen bytes made a
   * `subarray` object per run: 0.9 s of 3.7 s on 300 MB), a short one byte by byte (`Buffer.copy` costs more than the loop below about a hundred bytes).
   */
  bytes(b: Uint8Array, from: number, to: number): void {
    const len = to - from;
    if (len > this.buf.length - this.n) {
      this.flush();
      if (len > this.buf.length) {
        this.h.update(b.subarray(from, to));
        return;
      }
    }
    if (len <= 96) {
      const out = this.buf;
      let n = this.n;
      for (let k = from; k < to; k++) out[n++] = b[k]!;
      this.n = n;
      return;
    }
    if (Buffer.isBuffer(b)) b.copy(this.buf, this.n, from, to);
    else this.buf.set(b.subarray(from, to), this.n);
    this.n += len;
  }

  byte(c: number): void {
    if (this.n === this.buf.length) this.flush();
    this.buf[this.n++] = c;
  }

  /** A code point as UTF-8. */
  codePoint(cp: number): void {
    if (this.n + 4 > this.buf.length) this.flush();
    if (cp < 0x80) this.buf[this.n++] = cp;
    else if (cp < 0x800) {
      this.buf[this.n++] = 0xc0 | (cp >> 6);
      this.buf[this.n++] = 0x80 | (cp & 0x3f);
    } else if (cp < 0x10000) {
      this.buf[this.n++] = 0xe0 | (cp >> 12);
      this.buf[this.n++] = 0x80 | ((cp >> 6) & 0x3f);
      this.buf[this.n++] = 0x80 | (cp & 0x3f);
    } else {
      this.buf[this.n++] = 0xf0 | (cp >> 18);
      this.buf[this.n++] = 0x80 | ((cp >> 12) & 0x3f);
      this.buf[this.n++] = 0x80 | ((cp >> 6) & 0x3f);
      this.buf[this.n++] = 0x80 | (cp & 0x3f);
    }
  }

  ascii(s: string): void {
    for (let i = 0; i < s.length; i++) this.byte(s.charCodeAt(i));
  }

  flush(): void {
    if (this.n > 0) this.h.update(this.buf.subarray(0, this.n));
    this.n = 0;
  }
}

/**
 * The escapes of a JSON string, resolved one by one across pieces of input: `take` is given each
 * byte after a backslash and answers the UTF-16 unit it completes, if any; surrogate halves are
 * joined into one code point, and a half alone is reported as such.
 */
class EscapeReader {
  /** 0: not in an escape; 1: after a backslash; 2..5: reading the hex digits of `\u`. */
  state = 0;
  private hex = 0;
  /** A high surrogate read from an escape, waiting for its low half. */
  private high = -1;

  constructor(private readonly unit: (codePoint: number, lone: boolean) => void) {}

  /** One byte of an escape (the backslash already seen). */
  take(c: number): void {
    if (this.state === 1) {
      if (c === 0x75 /* u */) {
        this.state = 2;
        this.hex = 0;
        return;
      }
      this.state = 0;
      this.code(c === 0x62 ? 0x08 : c === 0x66 ? 0x0c : c === 0x6e ? 0x0a : c === 0x72 ? 0x0d : c === 0x74 ? 0x09 : c);
      return;
    }
    // A hex digit of `\uXXXX` (the tokenizer has checked the syntax).
    this.hex = this.hex * 16 + (c <= 0x39 ? c - 0x30 : (c | 0x20) - 0x57);
    if (++this.state === 6) {
      this.state = 0;
      this.code(this.hex);
    }
  }

  /** Anything but an escape follows: a high surrogate still waiting is alone. */
  settle(): void {
    if (this.high < 0) return;
    const h = this.high;
    this.high = -1;
    this.unit(h, true);
  }

  private code(u: number): void {
    if (this.high >= 0) {
      if (u >= 0xdc00 && u <= 0xdfff) {
        const cp = 0x10000 + ((this.high - 0xd800) << 10) + (u - 0xdc00);
        this.high = -1;
        this.unit(cp, false);
        return;
      }
      this.settle();
    }
    if (u >= 0xd800 && u <= 0xdbff) this.high = u;
    else this.unit(u, u >= 0xdc00 && u <= 0xdfff);
  }
}

const SHORT_ESCAPES: Readonly<Record<number, string>> = { 0x08: '\\b', 0x09: '\\t', 0x0a: '\\n', 0x0c: '\\f', 0x0d: '\\r', 0x22: '\\"', 0x5c: '\\\\' };

/** Hashes a text block's value (its escapes resolved), fed the raw bytes inside its quotes. */
export class TextValueHash {
  /** A lone surrogate: the text equals no `JSON.stringify` output, so it is no mirror. */
  lone = false;
  private readonly out: HashSink;
  private readonly escapes: EscapeReader;

  constructor(h: Hash) {
    this.out = new HashSink(h);
    this.escapes = new EscapeReader((cp, lone) => {
      if (lone) this.lone = true;
      else this.out.codePoint(cp);
    });
  }

  push(bytes: Uint8Array): void {
    const buf = Buffer.isBuffer(bytes) ? bytes : Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength);
    let i = 0;
    while (i < buf.length) {
      if (this.escapes.state !== 0) {
        this.escapes.take(buf[i++]!);
        continue;
      }
      if (buf[i] === BACKSLASH) {
        this.escapes.state = 1;
        i++;
        continue;
      }
      this.escapes.settle();
      const next = buf.indexOf(BACKSLASH, i);
      const end = next < 0 ? buf.length : next;
      this.out.bytes(buf, i, end);
      i = end;
    }
  }

  /** The text's bytes have all been fed. */
  end(): void {
    this.escapes.settle();
    this.out.flush();
  }
}

/**
 * Hashes a JSON value written any valid way as `JSON.stringify` would write its parse, fed its raw
 * bytes in pieces. `broken` is set when that cannot be told on the fly (an array-index key out of
 * `JSON.parse`'s order, a number too long): the structure is then no mirror.
 */
export class CanonicalJsonHash {
  broken = false;
  private inString = false;
  private number = '';
  /** Per open container: true for an object. */
  private readonly objects: boolean[] = [];
  /** Per open container, for an object: the last index key read, -1 before any, -2 after another key. */
  private readonly lastIndex: number[] = [];
  /** The next string is an object's key (after `{` or `,` in an object). */
  private keyNext = false;
  /** The key being read, while it can still be an index (at most 10 digits), else NOT_INDEX. */
  private key: string | undefined;
  private readonly out: HashSink;
  private readonly escapes: EscapeReader;

  constructor(h: Hash) {
    this.out = new HashSink(h);
    this.escapes = new EscapeReader((cp, lone) => {
      this.keyChar(cp);
      const short = SHORT_ESCAPES[cp];
      if (short !== undefined) this.out.ascii(short);
      else if (cp < 0x20 || lone) this.out.ascii(`\\u${cp.toString(16).padStart(4, '0')}`);
      else this.out.codePoint(cp);
    });
  }

  push(bytes: Uint8Array): void {
    const buf = Buffer.isBuffer(bytes) ? bytes : Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength);
    let i = 0;
    // `run`: the start of bytes passed on as written, not yet given to the sink.
    let run = 0;
    while (i < buf.length && !this.broken) {
      if (this.inString) {
        if (this.escapes.state !== 0) {
          this.escapes.take(buf[i++]!);
          run = i;
          continue;
        }
        const c = buf[i]!;
        if (c === BACKSLASH) {
          this.out.bytes(buf, run, i);
          this.escapes.state = 1;
          i++;
          continue;
        }
        this.escapes.settle();
        if (c === QUOTE) {
          this.inString = false;
          if (this.key !== undefined) this.keyRead(this.key);
          this.key = undefined;
          i++;
          continue;
        }
        if (this.key !== undefined && this.key !== NOT_INDEX) {
          this.keyChar(c < 0x80 ? c : 0x100);
          i++;
          continue;
        }
        // The rest of the string up to its next quote or escape, as written.
        const q = buf.indexOf(QUOTE, i);
        const b = buf.indexOf(BACKSLASH, i);
        const end = q < 0 ? (b < 0 ? buf.length : b) : b < 0 ? q : Math.min(q, b);
        i = end;
        continue;
      }
      const c = buf[i]!;
      if (this.number.length > 0) {
        if ((c >= 0x30 && c <= 0x39) || c === 0x2e || c === 0x65 || c === 0x45 || c === 0x2b || c === 0x2d) {
          this.number += String.fromCharCode(c);
          if (this.number.length > MAX_NUMBER_BYTES) this.broken = true;
          i++;
          continue;
        }
        this.flushNumber();
        run = i;
      }
      if (c === 0x20 || c === 0x09 || c === 0x0a || c === 0x0d) {
        this.out.bytes(buf, run, i);
        run = ++i;
        continue;
      }
      if ((c >= 0x30 && c <= 0x39) || c === 0x2d) {
        this.out.bytes(buf, run, i);
        this.number = String.fromCharCode(c);
        run = ++i;
        continue;
      }
      i++;
      if (c === QUOTE) {
        this.inString = true;
        this.key = this.keyNext ? '' : undefined;
        this.keyNext = false;
        continue;
      }
      if (c === 0x7b || c === 0x5b) {
        this.objects.push(c === 0x7b);
        this.lastIndex.push(-1);
      } else if (c === 0x7d || c === 0x5d) {
        this.objects.pop();
        this.lastIndex.pop();
      }
      this.keyNext = (c === 0x7b || c === 0x2c) && this.objects[this.objects.length - 1] === true;
    }
    if (this.number.length === 0 && (this.inString ? this.escapes.state === 0 : true)) this.out.bytes(buf, run, Math.min(i, buf.length));
  }

  /** The value's bytes have all been fed. */
  end(): void {
    if (this.number.length > 0) this.flushNumber();
    this.out.flush();
  }

  private flushNumber(): void {
    const n = Number(this.number);
    this.out.ascii(Number.isFinite(n) ? String(n) : 'null');
    this.number = '';
  }

  /** One character of a key being read (0x100: one that no index holds). */
  private keyChar(cp: number): void {
    if (this.key === undefined || this.key === NOT_INDEX) return;
    if (this.key.length >= 10 || cp < 0x30 || cp > 0x39) {
      this.key = NOT_INDEX;
      return;
    }
    this.key += String.fromCharCode(cp);
  }

  /** A whole key of the innermost object: `JSON.parse` would move an index key written after another key, or out of order. */
  private keyRead(key: string): void {
    const top = this.lastIndex.length - 1;
    const last = this.lastIndex[top]!;
    if (key !== NOT_INDEX && isIndexKey(key)) {
      const n = Number(key);
      if (last === -2 || n <= last) this.broken = true;
      else this.lastIndex[top] = n;
    } else {
      this.lastIndex[top] = -2;
    }
  }
}
