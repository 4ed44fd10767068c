/**
 * Byte windows of one file (src/fs/read-window.ts): offset / next_offset / eof, windows that never
 * end inside a UTF-8 sequence, binary (and invalid UTF-8) windows as base64, and reassembly of the
 * exact bytes from any window size.
 */
import { execFileSync } from 'node:child_process';
import { closeSync, constants, mkdirSync, openSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Workspace, WorkspaceError } from '../../src/fs/confine.js';
import { readWindow, type FileWindow } from '../../src/fs/read-window.js';
import { tempTree } from '../helpers/fs-tree.js';

let tree: ReturnType<typeof tempTree>;
let root: string;
let ws: Workspace;

const TEXT = 'ascii, é (2 bytes), € (3 bytes), 😀 (4 bytes), 한국어, ∑∫, 🇫🇷 flags\n'.repeat(40);
const BINARY = Buffer.from(Array.from({ length: 3000 }, (_, i) => (i * 7 + 3) & 0xff));
const MIXED = Buffer.concat([Buffer.from('before é€😀 '.repeat(30)), Buffer.from([0xff, 0xfe]), Buffer.from(' after 😀€é'.repeat(30))]);

beforeAll(async () => {
  tree = tempTree('read');
  root = tree.dir;
  writeFileSync(join(root, 'text.txt'), TEXT);
  writeFileSync(join(root, 'binary.bin'), BINARY);
  writeFileSync(join(root, 'mixed.txt'), MIXED);
  writeFileSync(join(root, 'empty.txt'), '');
  writeFileSync(join(root, 'ascii.txt'), 'abcdefghij'.repeat(10)); // 100 bytes
  writeFileSync(join(root, 'emoji.txt'), '😀😀😀');
  writeFileSync(join(root, 'cut.txt'), Buffer.concat([Buffer.from('ok '), Buffer.from('😀').subarray(0, 2)])); // ends mid-sequence
  mkdirSync(join(root, 'dir'));
  ws = await Workspace.open(root);
});

afterAll(async () => {
  await ws?.close();
  tree?.remove();
});

/** Read a whole file window by window; checks the window invariants on the way. */
async function readAll(path: string, size: number): Promise<{ bytes: Buffer; windows: FileWindow[] }> {
  const parts: Buffer[] = [];
  const windows: FileWindow[] = [];
  let offset = 0;
  for (let guard = 0; guard < 100_000; guard++) {
    const w = await readWindow(ws, path, offset, size);
    windows.push(w);
    expect(w.offset).toBe(offset);
    expect(w.bytes).toBeLessThanOrEqual(size);
    const buf = w.encoding === 'utf8' ? Buffer.from(w.content, 'utf8') : Buffer.from(w.content, 'base64');
    expect(buf.length).toBe(w.bytes);
    parts.push(buf);
    if (w.eof) {
      expect(w.next_offset).toBeUndefined();
      expect(offset + w.bytes).toBe(w.size);
      return { bytes: Buffer.concat(parts), windows };
    }
    expect(w.next_offset).toBe(offset + w.bytes);
    expect(w.bytes).toBeGreaterThan(0); // progress
    offset = w.next_offset!;
  }
  throw new Error('no eof after 100000 windows');
}

describe('offset, next_offset, eof', () => {
  it('ASCII in windows of 30: 30/30/30/10, then eof', async () => {
    const { windows } = await readAll('ascii.txt', 30);
    expect(windows.map((w) => [w.offset, w.bytes, w.next_offset, w.eof])).toEqual([
      [0, 30, 30, false],
      [30, 30, 60, false],
      [60, 30, 90, false],
      [90, 10, undefined, true],
    ]);
    expect(windows.every((w) => w.size === 100 && w.encoding === 'utf8' && w.path === 'ascii.txt')).toBe(true);
  });

  it('an empty file, an offset at the end and beyond it: an empty eof window', async () => {
    expect(await readWindow(ws, 'empty.txt', 0, 100)).toEqual({ path: 'empty.txt', offset: 0, bytes: 0, size: 0, eof: true, encoding: 'utf8', content: '' });
    expect(await readWindow(ws, 'ascii.txt', 100, 10)).toMatchObject({ bytes: 0, eof: true, content: '' });
    expect(await readWindow(ws, 'ascii.txt', 5000, 10)).toMatchObject({ bytes: 0, eof: true, content: '' });
  });

  it('never reads more than maxBytes', async () => {
    const w = await readWindow(ws, 'text.txt', 0, 1000);
    expect(w.bytes).toBeLessThanOrEqual(1000);
    expect(w.bytes).toBeGreaterThan(996);
  });

  it('refuses directories and missing files with stable codes', async () => {
    await expect(readWindow(ws, 'dir', 0, 10)).rejects.toMatchObject({ code: 'NOT_A_FILE' });
    await expect(readWindow(ws, 'nope.txt', 0, 10)).rejects.toMatchObject({ code: 'NOT_FOUND' });
    await expect(readWindow(ws, '../x', 0, 10)).rejects.toBeInstanceOf(WorkspaceError);
  });
});

describe('UTF-8 is never split', () => {
  it.each([4, 5, 6, 7, 9, 13, 64, 1000])('window size %i: every window is whole UTF-8 and the text reassembles exactly', async (size) => {
    const { bytes, windows } = await readAll('text.txt', size);
    expect(bytes.equals(Buffer.from(TEXT))).toBe(true);
    for (const w of windows) {
      expect(w.encoding).toBe('utf8');
      expect(w.content).not.toContain('\uFFFD');
      expect(Buffer.byteLength(w.content)).toBe(w.bytes);
    }
    expect(windows.map((w) => w.content).join('')).toBe(TEXT);
  });

  it('a file that ends inside a sequence: the last window comes back as base64, bytes exact', async () => {
    const { bytes, windows } = await readAll('cut.txt', 4);
    expect(bytes.equals(Buffer.concat([Buffer.from('ok '), Buffer.from('😀').subarray(0, 2)]))).toBe(true);
    expect(windows[windows.length - 1]!.encoding).toBe('base64');
  });

  // Regression: a window smaller than the character at its offset (max_bytes 1–3 on a 4-byte emoji)
  // used to come back empty with next_offset === offset, so a client following it looped forever.
  // It now widens to that one character (at most 4 bytes).
  it('a window smaller than the character at its offset still makes progress', async () => {
    const w = await readWindow(ws, 'emoji.txt', 0, 2);
    expect(w.eof || (w.next_offset ?? 0) > 0).toBe(true);
    // the same with binary data: a 1-byte window on a byte >= 0xC0
    const at = BINARY.findIndex((b) => b >= 0xc0);
    const b = await readWindow(ws, 'binary.bin', at, 1);
    expect(b.bytes).toBeGreaterThanOrEqual(1);
    expect(b.bytes).toBeLessThanOrEqual(4);
  });
});

describe('binary windows', () => {
  it.each([4, 5, 100, 4096])('binary content comes back as base64 in windows of %i; bytes reassemble exactly', async (size) => {
    const { bytes, windows } = await readAll('binary.bin', size);
    expect(bytes.equals(BINARY)).toBe(true);
    expect(windows.some((w) => w.encoding === 'base64')).toBe(true);
  });

  it('text with one invalid byte: the windows around it are base64, the rest text; bytes reassemble exactly', async () => {
    const { bytes, windows } = await readAll('mixed.txt', 50);
    expect(bytes.equals(MIXED)).toBe(true);
    const b64 = windows.filter((w) => w.encoding === 'base64');
    expect(b64.length).toBeGreaterThanOrEqual(1);
    expect(b64.length).toBeLessThanOrEqual(2);
    expect(windows.filter((w) => w.encoding === 'utf8').length).toBeGreaterThan(10);
  });
});

describe('special files', () => {
  // Regression (a fixed bug): openFile() opens with O_RDONLY | O_NOFOLLOW and only then checks that it is a regular file;
  // opening a FIFO blocks until a writer appears, so read_file on a named pipe inside the workspace
  // hangs the call and pins a libuv thread-pool thread (four of them stall every fs call of the
  // server). Adding O_NONBLOCK to the open (harmless for regular files) would let the isFile check
  // refuse it.
  it('a named pipe is refused (NOT_A_FILE) instead of blocking the open', async () => {
    const fifo = join(root, 'pipe');
    execFileSync('mkfifo', [fifo]);
    const pending = readWindow(ws, 'pipe', 0, 10).then(
      () => 'read',
      (e: unknown) => (e as WorkspaceError).code,
    );
    const outcome = await Promise.race([pending, new Promise((r) => setTimeout(() => r('still blocked after 1 s'), 1000))]);
    if (outcome === 'still blocked after 1 s') {
      // release the blocked open (a writer appearing completes it), so the thread-pool thread is freed
      closeSync(openSync(fifo, constants.O_WRONLY | constants.O_NONBLOCK));
      await pending;
    }
    expect(outcome).toBe('NOT_A_FILE');
  });
});
