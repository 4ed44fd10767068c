/**
 * Warnings on stderr that a peer cannot turn into unbounded memory: stderr is often a pipe that
 * nobody reads, and a hostile peer can cause one warning per line or request it sends. While more
 * than `maxBufferedBytes` wait in stderr's buffer, warnings are counted instead of written, and
 * one `N warnings were not written` line reports the count once stderr drains (or before the next
 * warning that is written).
 *
 * Every writer on one stream shares one count: the stdio proxy, each proxy behind `--listen`, the
 * HTTP front and the relays of one process all write to `process.stderr`, so they all count
 * against its one buffer (as the cut log does, `src/cli/cut-log.ts`). Each line is one line: its
 * control characters are escaped and it is cut at {@link MAX_WARNING_CHARS}; a peer-given value
 * goes in through {@link warningJson} or {@link warningText}, cut at
 * {@link MAX_WARNING_FIELD_CHARS}, so a megabyte id or message costs a warning of a few hundred
 * bytes.
 */
import type { Writable } from 'node:stream';

/** Bytes of warnings allowed to wait in stderr's buffer. @default 64 KiB */
export const MAX_BUFFERED_WARNING_BYTES = 64 * 1024;
/** Characters of a peer-given value (an id, a tool name, an error message) kept in a warning. @default 200 */
export const MAX_WARNING_FIELD_CHARS = 200;
/** Characters of one warning after its prefix, escapes included. @default 2000 */
export const MAX_WARNING_CHARS = 2000;

/** What every writer on one stream shares. */
interface StreamCount {
  /** Warnings not written since the last count line. */
  dropped: number;
  /** The prefix of the last writer that dropped one (the count line's). */
  prefix: string;
  /** A `drain` listener waits to write the count. */
  waiting: boolean;
}

const counts = new WeakMap<Writable, StreamCount>();

/** One writer of warnings to `stderr`, each line starting with `prefix: `. */
export class StderrWarnings {
  private readonly count: StreamCount;

  constructor(
    private readonly stderr: Writable,
    private readonly prefix: string,
    private readonly maxBufferedBytes = MAX_BUFFERED_WARNING_BYTES,
  ) {
    let count = counts.get(stderr);
    if (count === undefined) {
      count = { dropped: 0, prefix, waiting: false };
      counts.set(stderr, count);
    }
    this.count = count;
  }

  warn(text: string): void {
    if (this.full()) {
      this.count.dropped++;
      this.count.prefix = this.prefix;
      this.reportOnDrain();
      return;
    }
    this.writeCount();
    this.stderr.write(`${this.prefix}: ${oneLine(text)}\n`);
  }

  private full(): boolean {
    return this.stderr.destroyed || this.stderr.writableLength > this.maxBufferedBytes;
  }

  /** Write how many warnings were not written, if any. */
  private writeCount(): void {
    const c = this.count;
    if (c.dropped === 0) return;
    this.stderr.write(`${c.prefix}: ${c.dropped} warnings were not written (stderr was not draining)\n`);
    c.dropped = 0;
  }

  /**
   * Once stderr drains, say how many were dropped, without waiting for another warning. A buffer
   * over the bound is over Node's default high-water mark, so a write has returned false and
   * `drain` will come; with a higher mark, the next warning written reports the count instead.
   */
  private reportOnDrain(): void {
    const c = this.count;
    if (c.waiting || this.stderr.destroyed) return;
    c.waiting = true;
    this.stderr.once('drain', () => {
      c.waiting = false;
      if (!this.full()) this.writeCount();
      else if (c.dropped > 0) this.reportOnDrain();
    });
  }
}

/** A peer-given value as JSON (an id, a tool name), cut to {@link MAX_WARNING_FIELD_CHARS} characters. */
export function warningJson(v: unknown): string {
  if (typeof v === 'string') return v.length > MAX_WARNING_FIELD_CHARS ? `${JSON.stringify(cut(v))}…` : JSON.stringify(v);
  const s = JSON.stringify(v) ?? String(v);
  return s.length > MAX_WARNING_FIELD_CHARS ? `${cut(s)}…` : s;
}

/** A peer-given text (an error message), cut to {@link MAX_WARNING_FIELD_CHARS} characters; escaped when written. */
export function warningText(s: string): string {
  return s.length > MAX_WARNING_FIELD_CHARS ? `${cut(s)}…` : s;
}

/** The first {@link MAX_WARNING_FIELD_CHARS} characters of `s`, never half a surrogate pair. */
function cut(s: string, max = MAX_WARNING_FIELD_CHARS): string {
  const end = isHighSurrogate(s.charCodeAt(max - 1)) ? max - 1 : max;
  return s.slice(0, end);
}

function isHighSurrogate(c: number): boolean {
  return c >= 0xd800 && c <= 0xdbff;
}

// Control characters (C0, DEL, C1) and the line and paragraph separators: never written raw, so
// a warning is one line and cannot drive a terminal.
const CONTROL = /[\u0000-\u001f\u007f-\u009f\u2028\u2029]/g;

/** `text` as one line: control characters escaped as `\uXXXX`, cut at {@link MAX_WARNING_CHARS}. */
function oneLine(text: string): string {
  // Perf: cut before escaping (an escape is 6 characters: at most 6x the cut is escaped).
  const short = text.length > MAX_WARNING_CHARS ? `${cut(text, MAX_WARNING_CHARS)}…` : text;
  const escaped = short.replace(CONTROL, (ch) => `\\u${ch.charCodeAt(0).toString(16).padStart(4, '0')}`);
  return escaped.length > MAX_WARNING_CHARS ? `${cut(escaped, MAX_WARNING_CHARS)}…` : escaped;
}
