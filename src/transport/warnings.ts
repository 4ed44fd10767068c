/**
 * Warnings on stderr that a peer cannot turn into unbounded memory: stderr is often a pipe that
 * nobody reads, and a hostile peer can cause one warning per line it sends. While more than
 * `maxBufferedBytes` wait in stderr's buffer, warnings are counted instead of written, and the
 * count is reported once stderr drains.
 */
import type { Writable } from 'node:stream';

/** Bytes of warnings allowed to wait in stderr's buffer. @default 64 KiB */
export const MAX_BUFFERED_WARNING_BYTES = 64 * 1024;

export class StderrWarnings {
  private dropped = 0;

  constructor(
    private readonly stderr: Writable,
    private readonly prefix: string,
    private readonly maxBufferedBytes = MAX_BUFFERED_WARNING_BYTES,
  ) {}

  warn(text: string): void {
    if (this.stderr.writableLength > this.maxBufferedBytes || this.stderr.destroyed) {
      this.dropped++;
      return;
    }
    if (this.dropped > 0) {
      this.stderr.write(`${this.prefix}: ${this.dropped} warnings were not written (stderr was not draining)\n`);
      this.dropped = 0;
    }
    this.stderr.write(`${this.prefix}: ${text}\n`);
  }
}
