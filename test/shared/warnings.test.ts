/**
 * `StderrWarnings`: one line per warning, escaped and cut; dropped and counted while stderr does
 * not drain, the count written once it does; one count per stream, whichever writer dropped.
 */
import { Writable } from 'node:stream';
import { describe, expect, it } from 'vitest';
import { MAX_BUFFERED_WARNING_BYTES, MAX_WARNING_CHARS, MAX_WARNING_FIELD_CHARS, StderrWarnings, warningJson, warningText } from '../../src/shared/warnings.js';

/** A stream that holds every write until `release()`, like a pipe nobody reads (Node's default high-water mark for stderr). */
class StalledStream extends Writable {
  text = '';
  private held: (() => void)[] = [];
  private open = false;

  constructor() {
    super({ highWaterMark: 16 * 1024 });
  }

  override _write(chunk: Buffer, _enc: BufferEncoding, cb: () => void): void {
    this.text += chunk.toString('utf8');
    if (this.open) cb();
    else this.held.push(cb);
  }

  release(): void {
    this.open = true;
    const held = this.held;
    this.held = [];
    for (const cb of held) cb();
  }
}

/** A stream that takes every write at once. */
class Sink extends Writable {
  text = '';
  override _write(chunk: Buffer, _enc: BufferEncoding, cb: () => void): void {
    this.text += chunk.toString('utf8');
    cb();
  }
}

const tick = (): Promise<void> => new Promise((r) => setImmediate(r));

describe('warnings', () => {
  it('warnings: one line per warning, control characters escaped', () => {
    const out = new Sink();
    const w = new StderrWarnings(out, 'mcp-budget proxy');
    w.warn('upstream: bad\nfake line\r\u001b[31mred\u2028');
    expect(out.text).toBe('mcp-budget proxy: upstream: bad\\u000afake line\\u000d\\u001b[31mred\\u2028\n');
  });

  it('warnings: a line is cut at MAX_WARNING_CHARS, fields at MAX_WARNING_FIELD_CHARS', () => {
    const out = new Sink();
    const w = new StderrWarnings(out, 'p');
    w.warn('x'.repeat(5_000_000));
    w.warn('\n'.repeat(5_000));
    for (const line of out.text.split('\n').filter(Boolean)) expect(line.length).toBeLessThanOrEqual(MAX_WARNING_CHARS + 4);
    const id = `${'😀'.repeat(MAX_WARNING_FIELD_CHARS)}"`;
    const field = warningJson(id);
    expect(field.length).toBeLessThanOrEqual(MAX_WARNING_FIELD_CHARS + 3);
    expect(field.endsWith('"…')).toBe(true);
    expect(() => JSON.parse(field.slice(0, -1)) as unknown).not.toThrow(); // never half a surrogate pair
    expect(warningJson(7)).toBe('7');
    expect(warningJson('short')).toBe('"short"');
    expect(warningJson({ id: 'x'.repeat(1000) }).length).toBe(MAX_WARNING_FIELD_CHARS + 1);
    expect(warningText('m'.repeat(1_000_000))).toBe('m'.repeat(MAX_WARNING_FIELD_CHARS) + '…');
  });

  it('warnings: dropped and counted while stderr does not drain; the count is written once it does', async () => {
    const out = new StalledStream();
    const w = new StderrWarnings(out, 'mcp-budget proxy');
    for (let i = 0; i < 10_000; i++) w.warn(`dropped a response to request "u-${i}"`);
    expect(out.writableLength).toBeLessThan(MAX_BUFFERED_WARNING_BYTES + 100);
    out.release();
    await tick();
    const lines = out.text.split('\n').filter(Boolean);
    const written = lines.length - 1;
    expect(written).toBeLessThan(2000);
    expect(lines.at(-1)).toBe(`mcp-budget proxy: ${10_000 - written} warnings were not written (stderr was not draining)`);
    w.warn('after');
    expect(out.text.endsWith('mcp-budget proxy: after\n')).toBe(true);
  });

  it('warnings: every writer on one stream counts against its one buffer', async () => {
    const out = new StalledStream();
    const a = new StderrWarnings(out, 'mcp-budget proxy');
    const b = new StderrWarnings(out, 'mcp-budget serve');
    for (let i = 0; i < 10_000; i++) (i % 2 === 0 ? a : b).warn(`warning ${i} ${'w'.repeat(50)}`);
    expect(out.writableLength).toBeLessThan(MAX_BUFFERED_WARNING_BYTES + 100);
    out.release();
    await tick();
    const lines = out.text.split('\n').filter(Boolean);
    const counts = [...out.text.matchAll(/: (\d+) warnings were not written/g)].map((m) => Number(m[1]));
    expect(counts).toHaveLength(1);
    expect(counts[0]).toBe(10_000 - (lines.length - 1));
  });
});
