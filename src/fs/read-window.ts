/**
 * Read one byte window of one file: never more than `maxBytes` are read. Text is returned when the
 * window is valid UTF-8 (a sequence cut by the window's end is left for the next window);
 * otherwise the bytes come back as base64.
 */
import { isUtf8 } from 'node:buffer';
import type { Workspace } from './confine.js';

export interface FileWindow {
  path: string;
  offset: number;
  /** Bytes returned in this window. */
  bytes: number;
  size: number;
  eof: boolean;
  next_offset?: number;
  encoding: 'utf8' | 'base64';
  content: string;
}

/** Bytes to step back so a window does not end inside a UTF-8 sequence (0–3). */
function incompleteTail(buf: Buffer): number {
  for (let back = 1; back <= Math.min(3, buf.length); back++) {
    const c = buf[buf.length - back]!;
    if ((c & 0xc0) === 0x80) continue; // continuation byte: keep looking for the lead
    if (c >= 0xc0) {
      const need = c >= 0xf0 ? 4 : c >= 0xe0 ? 3 : 2;
      return need > back ? back : 0;
    }
    return 0;
  }
  return 0;
}

export async function readWindow(ws: Workspace, path: string, offset: number, maxBytes: number): Promise<FileWindow> {
  const { handle, rel, size } = await ws.openFile(path);
  try {
    const want = Math.max(0, Math.min(maxBytes, size - offset));
    const buf = Buffer.allocUnsafe(want);
    let got = 0;
    while (got < want) {
      const { bytesRead } = await handle.read(buf, got, want - got, offset + got);
      if (bytesRead === 0) break;
      got += bytesRead;
    }
    let data = buf.subarray(0, got);
    let encoding: FileWindow['encoding'] = 'utf8';
    const end = offset + got < size ? incompleteTail(data) : 0;
    if (isUtf8(data.subarray(0, data.length - end))) {
      data = data.subarray(0, data.length - end);
    } else {
      encoding = 'base64';
    }
    const next = offset + data.length;
    const w: FileWindow = {
      path: rel,
      offset,
      bytes: data.length,
      size,
      eof: next >= size,
      encoding,
      content: encoding === 'utf8' ? data.toString('utf8') : data.toString('base64'),
    };
    if (next < size) w.next_offset = next;
    return w;
  } finally {
    await handle.close();
  }
}
