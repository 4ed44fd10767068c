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

/** Where bounded lines go: a stream that reports what waits in its buffer (stderr, a test's sink). */
export interface LineSink {
  write(line: string): unknown;
  readonly writableLength?: number;
  readonly destroyed?: boolean;
  /** A stream's `once('drain')`: the count of lines not written goes out as soon as it drains. */
  once?(event: 'drain', listener: () => void): unknown;
}

/**
 * Lines a peer cannot turn into unbounded memory: while more than `maxBufferedBytes` wait in the
 * sink's buffer, lines are counted instead of written, and `countLine(n)` is written as soon as it
 * drains (or before the next line written). The one mechanism behind warnings and the cut log.
 */
export class BoundedLines {
  private dropped = 0;
  private waiting = false;

  constructor(
    private readonly out: LineSink,
    private readonly countLine: (n: number) => string,
    private readonly maxBufferedBytes = MAX_BUFFERED_WARNING_BYTES,
  ) {}

  /** Write `line` (ending in a newline), or count it; false when it was counted. */
  write(line: string): boolean {
    if (this.full()) {
      this.dropped++;
      this.countOnDrain();
      return false;
    }
    this.writeCount();
    this.out.write(line);
    return true;
  }

  private full(): boolean {
    return this.out.destroyed === true || (this.out.writableLength ?? 0) > this.maxBufferedBytes;
  }

  private writeCount(): void {
    if (this.dropped === 0) return;
    this.out.write(this.countLine(this.dropped));
    this.dropped = 0;
  }

  /**
   * Once the sink drains, write the count without waiting for another line. A buffer over the
   * bound is over Node's default high-water mark, so a write has returned false and `drain` will
   * come; with a higher mark, the next line written reports the count instead.
   */
  private countOnDrain(): void {
    if (this.waiting || this.out.once === undefined || this.out.destroyed === true) return;
    this.waiting = true;
    this.out.once('drain', () => {
      this.waiting = false;
      if (!this.full()) this.writeCount();
      else if (this.dropped > 0) this.countOnDrain();
    });
  }
}

/** What every warning writer on one stream shares: one bound, and the prefix of the last one not written. */
interface StreamLines {
  lines: BoundedLines;
  prefix: string;
}

const streams = new WeakMap<Writable, StreamLines>();

/** One writer of warnings to `stderr`, each line starting with `prefix: `. */
export class StderrWarnings {
  private readonly shared: StreamLines;

  constructor(
    stderr: Writable,
    private readonly prefix: string,
    maxBufferedBytes = MAX_BUFFERED_WARNING_BYTES,
  ) {
    let shared = streams.get(stderr);
    if (shared === undefined) {
      const s: StreamLines = { prefix, lines: undefined as unknown as BoundedLines };
      s.lines = new BoundedLines(stderr, (n) => `${s.prefix}: ${n} warnings were not written (stderr was not draining)\n`, maxBufferedBytes);
      streams.set(stderr, s);
      shared = s;
    }
    this.shared = shared;
  }

  warn(text: string): void {
    if (!this.shared.lines.write(`${this.prefix}: ${oneLine(text)}\n`)) this.shared.prefix = this.prefix;
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
