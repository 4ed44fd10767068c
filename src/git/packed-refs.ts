/**
 * `packed-refs` read for one page: the file is sorted by name (its header says `sorted`), so a
 * binary search over byte offsets finds a line at or before the page's first name, and lines are
 * streamed from there until the namespace ends or the caller stops. Peeled lines (`^<oid>`) are
 * skipped (a tag lists its tag object, as for-each-ref's `objectname` does). Also the merge of
 * the packed and the loose listings, where a loose ref wins over a packed one of the same name.
 */
import type { FileHandle } from 'node:fs/promises';
import type { DirHandle } from '../fs/confine.js';

/** One ref: its full name and the object it names. */
export interface RefRecord {
  name: string;
  target: string;
}

/** An object id: SHA-1 or SHA-256, lowercase hex. */
export const OID = /^(?:[0-9a-f]{40}|[0-9a-f]{64})$/;
// git check-ref-format rules: no control characters, space, ~ ^ : ? * [ \, no "..", no "@{",
// no empty component, no component starting with "." or ending with ".lock", no trailing ".".
const BAD_NAME = /[\x00-\x20\x7f~^:?*[\\]|\.\.|@\{|\/\/|^\/|\/$|\.$|(^|\/)\.|\.lock(\/|$)/;

/** A full ref name valid by git's rules (`refs/...`; U+FFFD marks bytes that were not UTF-8). */
export function isValidRefName(name: string): boolean {
  return name.startsWith('refs/') && !BAD_NAME.test(name) && !name.includes('\ufffd');
}

/** Bytes read per step. */
const CHUNK = 64 * 1024;
/** A line longer than this is skipped with a warning (no real ref name comes near it). */
const MAX_LINE = 64 * 1024;
/** Below this span the search stops and the lines are streamed. */
const SEARCH_SPAN = 16 * 1024;

/**
 * The packed refs of `prefix` from the first name at or after `from`, in name order; `'unsorted'`
 * when the file does not say it is sorted (the caller then asks git).
 */
export async function readPacked(
  gitDir: DirHandle,
  prefix: string,
  from: Buffer,
  warn: (w: string) => void,
): Promise<AsyncIterable<RefRecord> | 'unsorted'> {
  let fh: FileHandle;
  try {
    fh = await gitDir.openFile('packed-refs');
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code === 'ENOENT') return empty();
    return 'unsorted'; // a link or an unreadable file: let git decide
  }
  try {
    const st = await fh.stat();
    if (!st.isFile()) {
      await fh.close();
      return 'unsorted';
    }
    const head = await readAt(fh, 0, Math.min(st.size, 4096));
    const nl = head.indexOf(10);
    const first = head.subarray(0, nl === -1 ? head.length : nl).toString('latin1');
    let start = 0;
    if (first.startsWith('# pack-refs with:')) {
      if (!` ${first.slice(17)} `.includes(' sorted ')) {
        await fh.close();
        return 'unsorted';
      }
      start = nl + 1;
    } else if (st.size > 0) {
      await fh.close();
      return 'unsorted'; // no header: git sorts such a file itself on reading it
    }
    const at = await search(fh, start, st.size, from);
    return stream(fh, at, st.size, prefix, warn);
  } catch (e) {
    await fh.close();
    throw e;
  }
}

async function* empty(): AsyncGenerator<RefRecord> {}

async function readAt(fh: FileHandle, pos: number, len: number): Promise<Buffer> {
  const buf = Buffer.alloc(len);
  const { bytesRead } = await fh.read(buf, 0, len, pos);
  return buf.subarray(0, bytesRead);
}

/** The name on a record line (`<oid> <name>`), or `undefined` for a peeled or odd line. */
function nameOf(line: Buffer): Buffer | undefined {
  if (line[0] === 0x5e || line[0] === 0x23) return undefined; // ^peeled, # comment
  const sp = line.indexOf(32);
  return sp === -1 ? undefined : line.subarray(sp + 1);
}

/**
 * An offset of a line start such that every record before it sorts before `from`. Each step reads
 * the first whole record line after the midpoint; an odd or over-long line ends the search early
 * (streaming from an earlier offset is still correct, only slower).
 */
async function search(fh: FileHandle, start: number, end: number, from: Buffer): Promise<number> {
  let lo = start;
  let hi = end;
  while (hi - lo > SEARCH_SPAN) {
    const mid = lo + Math.floor((hi - lo) / 2);
    const buf = await readAt(fh, mid, Math.min(2 * 4096, end - mid));
    let p = buf.indexOf(10);
    let name: Buffer | undefined;
    let lineStart = -1;
    // The first whole line after `mid`, skipping a peeled line.
    while (p !== -1 && name === undefined) {
      const q = buf.indexOf(10, p + 1);
      if (q === -1) break;
      lineStart = mid + p + 1;
      name = nameOf(buf.subarray(p + 1, q));
      p = q;
    }
    if (name === undefined || lineStart >= hi) {
      hi = mid;
      continue;
    }
    if (Buffer.compare(name, from) < 0) lo = lineStart;
    else hi = mid;
  }
  return lo;
}

async function* stream(fh: FileHandle, at: number, end: number, prefix: string, warn: (w: string) => void): AsyncGenerator<RefRecord> {
  const pre = Buffer.from(prefix);
  try {
    let pos = at;
    let rest: Buffer = Buffer.alloc(0);
    while (pos < end || rest.length > 0) {
      let nl = rest.indexOf(10);
      if (nl === -1 && pos < end) {
        const chunk = await readAt(fh, pos, Math.min(CHUNK, end - pos));
        if (chunk.length === 0) break;
        pos += chunk.length;
        rest = rest.length === 0 ? chunk : Buffer.concat([rest, chunk]);
        if (rest.length > MAX_LINE && rest.indexOf(10) === -1) {
          warn('An over-long line of packed-refs was skipped.');
          return; // nothing after it can be placed safely in order
        }
        continue;
      }
      const line = nl === -1 ? rest : rest.subarray(0, nl);
      rest = nl === -1 ? Buffer.alloc(0) : rest.subarray(nl + 1);
      if (line.length === 0 || line[0] === 0x5e || line[0] === 0x23) continue;
      const sp = line.indexOf(32);
      const name = sp === -1 ? undefined : line.subarray(sp + 1);
      if (name === undefined) {
        warn('A malformed line of packed-refs was skipped.');
        continue;
      }
      const c = Buffer.compare(name.subarray(0, pre.length), pre);
      if (c < 0) continue; // before the namespace (the search lands at or before it)
      if (c > 0) return; // past the namespace: sorted, so nothing more
      const oid = line.subarray(0, sp).toString('latin1');
      const text = name.toString('utf8');
      if (!OID.test(oid) || !isValidRefName(text) || Buffer.byteLength(text) !== name.length) {
        warn('A packed ref with a malformed name or object id was skipped.');
        continue;
      }
      yield { name: text, target: oid };
    }
  } finally {
    await fh.close();
  }
}

/** Merge two name-sorted listings; on the same name the second (loose) wins. */
export async function* mergeSorted(packed: AsyncIterable<RefRecord>, loose: AsyncIterable<RefRecord>): AsyncGenerator<RefRecord> {
  const a = packed[Symbol.asyncIterator]();
  const b = loose[Symbol.asyncIterator]();
  try {
    let x = await a.next();
    let y = await b.next();
    while (!x.done || !y.done) {
      if (y.done || (!x.done && Buffer.compare(Buffer.from(x.value.name), Buffer.from(y.value.name)) < 0)) {
        yield x.value as RefRecord;
        x = await a.next();
      } else {
        if (!x.done && x.value.name === y.value.name) x = await a.next();
        yield y.value;
        y = await b.next();
      }
    }
  } finally {
    await a.return?.();
    await b.return?.();
  }
}
