/**
 * The file reader behind `apply`: every byte in order whatever the chunk size, a regular file
 * read synchronously but with turns of the event loop (so an abort is seen mid-file), a FIFO and
 * a descriptor read with awaited reads.
 */
import { spawn, spawnSync } from 'node:child_process';
import { closeSync, mkdtempSync, openSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { BudgetError } from '../../src/engine/errors.js';
import { boundBytes } from '../../src/stream/bound-stream.js';
import { readChunks } from '../../src/stream/read-chunks.js';

let dir: string;
beforeAll(() => {
  dir = mkdtempSync(join(tmpdir(), 'read-chunks-'));
});
afterAll(() => rmSync(dir, { recursive: true, force: true }));

async function collect(source: string | number, chunkBytes?: number): Promise<Buffer> {
  const parts: Buffer[] = [];
  // Copies: a chunk is valid only until the next one is requested.
  for await (const c of readChunks(source, chunkBytes)) parts.push(Buffer.from(c));
  return Buffer.concat(parts);
}

describe('readChunks', () => {
  it('read-chunks: a regular file arrives whole and in order at any chunk size', async () => {
    const data = Buffer.from(Array.from({ length: 100_003 }, (_, i) => i % 251));
    const file = join(dir, 'bytes.bin');
    writeFileSync(file, data);
    for (const size of [1, 7, 4096, 65536, 1 << 20]) expect((await collect(file, size)).equals(data)).toBe(true);
    writeFileSync(join(dir, 'empty'), '');
    expect((await collect(join(dir, 'empty'))).length).toBe(0);
  });

  it('read-chunks: an open descriptor is read to its end', async () => {
    const file = join(dir, 'fd.bin');
    writeFileSync(file, 'x'.repeat(70_000));
    const fd = openSync(file, 'r');
    try {
      expect((await collect(fd, 4096)).toString()).toBe('x'.repeat(70_000));
    } finally {
      closeSync(fd);
    }
  });

  it('read-chunks: a FIFO is read with awaited reads until its writer closes', async () => {
    const fifo = join(dir, 'fifo');
    if (spawnSync('mkfifo', [fifo]).status !== 0) return; // no mkfifo here
    const writer = spawn(process.execPath, ['-e', `require('node:fs').writeFileSync(${JSON.stringify(fifo)}, 'abc'.repeat(50000))`]);
    // Listen before reading: the writer may exit before the read ends.
    const exited = new Promise((r) => writer.once('exit', r));
    expect((await collect(fifo, 8192)).toString()).toBe('abc'.repeat(50_000));
    await exited;
  });

  it('read-chunks: a large file read synchronously still lets an abort in mid-file', async () => {
    const file = join(dir, 'big.json');
    // 64 MiB of a skipped array: long enough that an abort on the next event-loop turn lands mid-file.
    const item = '{"id":1,"name":"n","tags":["a"]},';
    writeFileSync(file, '{"content":[],"structuredContent":{"items":[' + item.repeat(Math.ceil((64 << 20) / item.length)) + '{}]}}');
    const controller = new AbortController();
    setImmediate(() => controller.abort());
    const err = await boundBytes(readChunks(file), {}, { signal: controller.signal }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(BudgetError);
    expect((err as BudgetError).code).toBe('ABORTED');
    expect((err as BudgetError & { data: { offset: number } }).data.offset).toBeLessThan(64 << 20);
  });
});
