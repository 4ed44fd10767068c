/**
 * The one pipe reader (apply's stdin, the proxy's server stdout): every byte in order whatever the
 * writer's pieces, a message handed on without waiting for more bytes (`turn`), nothing read while
 * the consumer keeps it paused (and the piece it holds left intact), a child's stdout taken over.
 */
import { spawn } from 'node:child_process';
import { describe, expect, it } from 'vitest';
import { readPipe, type PipeReader } from '../../src/stream/pipe-reader.js';

/** A child writing `count` pieces of `size` bytes (byte i of the whole is i % 251), then `tail`. */
function writer(size: number, count: number, tail = '') {
  const src = `const fs = require('node:fs');
const size = ${size}, count = ${count};
for (let k = 0; k < count; k++) {
  const b = Buffer.alloc(size);
  for (let i = 0; i < size; i++) b[i] = (k * size + i) % 251;
  for (let off = 0; off < b.length; ) { try { off += fs.writeSync(1, b, off); } catch (e) { if (e.code !== 'EAGAIN') throw e; } }
}
process.stdout.write(${JSON.stringify(tail)});`;
  return spawn(process.execPath, ['-e', src], { stdio: ['ignore', 'pipe', 'inherit'] });
}

function expected(size: number, count: number): Buffer {
  const b = Buffer.alloc(size * count);
  for (let i = 0; i < b.length; i++) b[i] = i % 251;
  return b;
}

describe('readPipe', () => {
  for (const size of [1000, 4096, 65536, 1 << 20]) {
    it(`pipe-reader: a child's stdout in pieces of ${size} bytes arrives whole and in order, pieces at most 256 KiB`, async () => {
      const count = Math.ceil((3 << 20) / size);
      const child = writer(size, count);
      const parts: Buffer[] = [];
      let largest = 0;
      await new Promise<void>((resolve, reject) => {
        readPipe(child.stdout, { piece: (b) => (parts.push(Buffer.from(b)), (largest = Math.max(largest, b.length))), end: resolve, error: reject }, { flush: 'full' });
      });
      expect(Buffer.concat(parts).equals(expected(size, count))).toBe(true);
      expect(largest).toBeLessThanOrEqual(256 * 1024);
    });
  }

  it('pipe-reader: with `lines`, a short message is handed on while the writer stays open', async () => {
    const child = spawn(process.execPath, ['-e', `process.stdout.write('{"id":1}\\n'); setTimeout(() => {}, 5000)`], { stdio: ['ignore', 'pipe', 'inherit'] });
    const got = await new Promise<string>((resolve, reject) => {
      readPipe(child.stdout, { piece: (b) => resolve(b.toString()), end: () => resolve('(end)'), error: reject }, { flush: 'lines' });
    });
    child.kill();
    expect(got).toBe('{"id":1}\n');
  });

  it('pipe-reader: a paused reader reads nothing more and leaves the piece it lent intact until resumed', async () => {
    const size = 65536;
    const count = 64; // 4 MiB: far more than the pipe and the reader's buffers hold
    const child = writer(size, count);
    const parts: Buffer[] = [];
    let lent: { copy: Buffer; view: Buffer } | undefined;
    let reader!: PipeReader;
    let inPause = 0;
    await new Promise<void>((resolve, reject) => {
      reader = readPipe(
        child.stdout,
        {
          piece: (b) => {
            if (lent === undefined && parts.length === 2) {
              // Hold the piece across turns of the event loop while paused.
              lent = { copy: Buffer.from(b), view: b };
              reader.pause();
              const before = parts.length;
              setTimeout(() => {
                inPause = parts.length - before;
                expect(lent!.view.equals(lent!.copy)).toBe(true);
                parts.push(lent!.copy);
                reader.resume();
              }, 100);
              return;
            }
            parts.push(Buffer.from(b));
          },
          end: resolve,
          error: reject,
        },
        { flush: 'full' },
      );
    });
    expect(inPause).toBe(0);
    expect(Buffer.concat(parts).equals(expected(size, count))).toBe(true);
  });
});
