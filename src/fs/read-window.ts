/**
 * Read one byte window of one file: never more than `maxBytes` are read. Text is returned when the
 * window is valid UTF-8 (a sequence cut by the window's end is left for the next window);
 * otherwise the bytes come back as base64.
 */
import { isUtf8 } from 'node:buffer';
import { cutString } from '../engine/index.js';
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

/**
 * Read the window at `offset`: at most `maxBytes` bytes, and at most `maxContentBytes` once written
 * as a JSON string (escaped text, or base64), so the result budget never has to cut `content`
 * and `next_offset` always matches what was returned. A window always makes progress: if it would
 * end inside its first character, that character is returned whole (at most 4 bytes).
 */
/** UTF-16 units of the first character (2 for a surrogate pair). */
function firstCharLength(s: string): number {
  const c = s.charCodeAt(0);
  return c >= 0xd800 && c <= 0xdbff && s.length > 1 ? 2 : Math.min(1, s.length);
}

/** Bytes of the UTF-8 sequence a lead byte starts (1 for anything else). */
function utf8Lead(c: number): number {
  return c >= 0xf0 ? 4 : c >= 0xe0 ? 3 : c >= 0xc0 ? 2 : 1;
}

export async function readWindow(
  ws: Workspace,
  path: string,
  offset: number,
  maxBytes: number,
  maxContentBytes = Infinity,
): Promise<FileWindow> {
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
    let content: string;
    const end = offset + got < size ? incompleteTail(data) : 0;
    if ((end < data.length || data.length === 0) && isUtf8(data.subarray(0, data.length - end))) {
      data = data.subarray(0, data.length - end);
      content = data.toString('utf8');
      if (maxContentBytes !== Infinity) {
        const cut = cutString(content, 0, maxContentBytes, false);
        if (cut.end < content.length) {
          content = content.slice(0, Math.max(cut.end, firstCharLength(content)));
          data = data.subarray(0, Buffer.byteLength(content));
        }
      }
    } else if (end > 0 && end === data.length) {
      // The window is smaller than its first character: widen it to that character.
      const more = Buffer.allocUnsafe(4);
      const { bytesRead } = await handle.read(more, 0, 4, offset);
      const whole = more.subarray(0, bytesRead);
      const n = Math.min(bytesRead, utf8Lead(whole[0]!));
      data = whole.subarray(0, n);
      if (isUtf8(data)) content = data.toString('utf8');
      else {
        encoding = 'base64';
        content = data.toString('base64');
      }
    } else {
      encoding = 'base64';
      data = buf.subarray(0, Math.min(got, Math.max(3, Math.floor((maxContentBytes * 3) / 4))));
      content = data.toString('base64');
    }
    const next = offset + data.length;
    const w: FileWindow = {
      path: rel,
      offset,
      bytes: data.length,
      size,
      eof: next >= size,
      encoding,
      content,
    };
    if (next < size) w.next_offset = next;
    return w;
  } finally {
    await handle.close();
  }
}
