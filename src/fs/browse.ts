/**
 * One-level directory browsing, paged at the source: `fs.opendir` iteration reads `limit + 1`
 * entries and stops (never read-and-sort the whole directory). Order is the directory's own
 * order. The next page is served from a small cache of open directory handles (bounded count,
 * short TTL, closed on eviction); when the handle is gone, the directory is re-scanned to the
 * last returned name (compared as raw bytes), with a cap on how far a re-scan may go.
 */
import { isUtf8 } from 'node:buffer';
import { createHash, randomBytes } from 'node:crypto';
import type { Dir, Dirent } from 'node:fs';
import { WorkspaceError, fsError, type DirHandle, type Workspace } from './confine.js';
import type { CursorCodec } from '../shared/cursor.js';
import { jsonSizer, type PageSizer } from '../shared/page-meter.js';

export type EntryType = 'file' | 'directory' | 'symlink' | 'other';

/** One directory entry, from the dirent alone (no stat). */
export interface DirEntry {
  name: string;
  type: EntryType;
  /**
   * The raw name, base64, when it is not valid UTF-8 or too long as JSON for the string bound
   * (`name` then holds a lossy rendering).
   */
  name_base64?: string;
}

export interface DirPage {
  path: string;
  entries: DirEntry[];
  has_more: boolean;
  next_cursor?: string;
  /** Set when the directory could not be read to the end of this page (removed, unreadable). */
  warning?: string;
}

export interface BrowseOptions {
  /** Open handles kept for resuming. @default 16 */
  maxCachedHandles?: number;
  /** How long an idle handle is kept. @default 30000 */
  handleTtlMs?: number;
  /** Entries a re-scan may pass while looking for the cursor's position. @default 200000 */
  maxRescanEntries?: number;
  /** Without a sizer, a page stops before its entries' JSON passes this size. @default no bound */
  maxPageBytes?: number;
  /** Entries a filter (scan: directories only) may pass over in one call before the page ends. @default 10000 */
  maxFilterSkip?: number;
  /**
   * Longest name as JSON (escaped, quotes included) given as it is: a longer one (255 control
   * characters are 1,530 bytes escaped) would be cut by the string bound and name no file, so it
   * is given as a lossy rendering with its raw bytes in `name_base64`. @default no bound
   */
  maxNameBytes?: number;
}

interface Cached {
  dir: Dir;
  /** The directory handle the listing was opened through: kept open as long as the listing. */
  owner: DirHandle;
  peek: Dirent<Buffer> | null;
  dev: number;
  ino: number;
  expires: number;
}

/**
 * Close a listing, then the handle it was opened through. Order matters: Node may still look up
 * names through `/proc/self/fd/N/<name>` while reading (file systems without entry types), so N
 * must not be closed, and its number reused by another open, while the listing lives.
 */
function closeListing(c: { dir: Dir; owner: DirHandle }): void {
  void c.dir
    .close()
    .catch(() => undefined)
    .then(() => c.owner.close());
}

/** Bounded cache of open directory handles; evicted handles are closed. */
class HandleCache {
  private readonly map = new Map<string, Cached>();
  constructor(
    private readonly max: number,
    private readonly ttlMs: number,
  ) {}

  put(id: string, c: Omit<Cached, 'expires'>): void {
    if (this.max <= 0) {
      closeListing(c); // no cache: every next page re-scans
      return;
    }
    this.sweep();
    while (this.map.size >= this.max) {
      const [oldest, v] = this.map.entries().next().value as [string, Cached];
      this.map.delete(oldest);
      closeListing(v);
    }
    this.map.set(id, { ...c, expires: Date.now() + this.ttlMs });
  }

  take(id: string): Cached | undefined {
    this.sweep();
    const c = this.map.get(id);
    if (c !== undefined) this.map.delete(id);
    return c;
  }

  get size(): number {
    return this.map.size;
  }

  closeAll(): void {
    for (const c of this.map.values()) closeListing(c);
    this.map.clear();
  }

  private sweep(): void {
    const now = Date.now();
    for (const [id, c] of this.map) {
      if (c.expires > now) continue;
      this.map.delete(id);
      closeListing(c);
    }
  }
}

/**
 * Room a page keeps for its `next_cursor`: the cursor carries a hash of the path (never the path,
 * which may be 4 KiB), the last name (≤ 255 bytes, base64) and small numbers, signed.
 */
export const CURSOR_ROOM_BYTES = 640;
/** Room kept for a page's warning (the longest this file writes is about 110 characters). */
const WARNING_ROOM_CHARS = 128;

/**
 * How a listing's page is measured: the sizer, and for a caller whose page is not the listing
 * itself (the scan), its page's own fields, its list member and each entry as that page holds it.
 */
export interface ListMeasure {
  sizer: PageSizer;
  fixed?: object;
  list?: string;
  asItem?: (e: DirEntry) => object | Promise<object>;
}

/** A cursor is bound to its directory's path by a hash, so its length does not grow with the path. */
function pathKey(rel: string): string {
  return createHash('sha256').update(rel).digest('base64url').slice(0, 22);
}

/** What JSON escapes or a reader may break lines at: replaced in a lossy rendering of a name. */
const ESCAPED_OR_BREAKING = /[\u0000-\u001f"\\\u007f-\u009f\u2028\u2029]/g;

function entryOf(d: Dirent<Buffer>, maxNameBytes: number): DirEntry {
  const raw = d.name;
  const type: EntryType = d.isFile() ? 'file' : d.isDirectory() ? 'directory' : d.isSymbolicLink() ? 'symlink' : 'other';
  const name = raw.toString('utf8');
  const e: DirEntry = { name, type };
  if (!isUtf8(raw)) e.name_base64 = raw.toString('base64');
  else if (Buffer.byteLength(JSON.stringify(name)) > maxNameBytes) {
    // At most 255 bytes of name: U+FFFD for each escaped character keeps it within 3 bytes each.
    e.name = name.replace(ESCAPED_OR_BREAKING, '\ufffd');
    e.name_base64 = raw.toString('base64');
  }
  return e;
}

export class DirectoryBrowser {
  private readonly cache: HandleCache;
  private readonly maxRescan: number;

  constructor(
    private readonly ws: Workspace,
    private readonly cursors: CursorCodec,
    options: BrowseOptions = {},
  ) {
    this.cache = new HandleCache(options.maxCachedHandles ?? 16, options.handleTtlMs ?? 30_000);
    this.maxRescan = options.maxRescanEntries ?? 200_000;
    this.maxPageBytes = options.maxPageBytes ?? Infinity;
    this.maxFilterSkip = options.maxFilterSkip ?? 10_000;
    this.maxNameBytes = options.maxNameBytes ?? Infinity;
  }

  private readonly maxNameBytes: number;

  private readonly maxFilterSkip: number;

  private readonly maxPageBytes: number;

  /** Open handles currently cached (for tests and diagnostics). */
  get cachedHandles(): number {
    return this.cache.size;
  }

  close(): void {
    this.cache.closeAll();
  }

  /**
   * One page of a directory. `filter` keeps only some entries (e.g. subdirectories), still reading
   * at most what the page needs plus what the filter passes over.
   */
  async list(
    path: string | undefined,
    limit: number,
    cursor: string | undefined,
    filter?: (d: Dirent<Buffer>) => boolean,
    kind = 'dir',
    measure?: ListMeasure,
  ): Promise<DirPage> {
    // The directory is opened through the gate (no link on the way) and iterated through that
    // descriptor; the path string is never opened again.
    const opened = await this.ws.openDir(path);
    const owned = { transferred: false };
    try {
      return await this.listOpened(opened, owned, path, limit, cursor, filter, kind, measure);
    } finally {
      if (!owned.transferred) await opened.close();
    }
  }

  private async listOpened(
    dir: DirHandle,
    owned: { transferred: boolean },
    path: string | undefined,
    limit: number,
    cursor: string | undefined,
    filter: ((d: Dirent<Buffer>) => boolean) | undefined,
    kind: string,
    measure: ListMeasure | undefined,
  ): Promise<DirPage> {
    let handle: Dir;
    /** The handle the listing was opened through (this call's `dir`, or a cached one). */
    let owner: DirHandle = dir;
    let peek: Dirent<Buffer> | null = null;
    let position = 0;
    if (cursor !== undefined) {
      const c = this.cursors.decode(kind, cursor);
      if (c.p !== pathKey(dir.rel)) {
        throw new WorkspaceError('INVALID_CURSOR', `Invalid params: \`cursor\` belongs to another directory than ${JSON.stringify(dir.rel)}. Start again without a cursor.`);
      }
      if (c.d !== dir.dev || c.i !== dir.ino) {
        throw new WorkspaceError('INVALID_CURSOR', 'Invalid params: the directory was replaced since the cursor was issued. Start again without a cursor.');
      }
      position = Number(c.k);
      const cached = this.cache.take(String(c.c));
      if (cached !== undefined && cached.dev === dir.dev && cached.ino === dir.ino) {
        handle = cached.dir;
        owner = cached.owner;
        peek = cached.peek;
      } else {
        if (cached !== undefined) closeListing(cached);
        handle = await this.rescan(dir, Buffer.from(String(c.n), 'base64'));
        owned.transferred = true;
      }
    } else {
      try {
        handle = await dir.list(64, true);
      } catch (e) {
        throw fsError(e, path);
      }
      owned.transferred = true;
    }

    const entries: DirEntry[] = [];
    // The page's own fields count too: its path, the longest cursor and warning it may carry.
    const sizer = measure?.sizer ?? jsonSizer(this.maxPageBytes);
    const fixed = measure?.fixed ?? { path: dir.rel, path_truncated: true, entries: [], has_more: true, next_cursor: 'c'.repeat(CURSOR_ROOM_BYTES), warning: 'w'.repeat(WARNING_ROOM_CHARS) };
    const meter = sizer.meter(fixed, measure?.list ?? 'entries');
    /** The last entry examined (listed or passed over by the filter): the cursor resumes after it. */
    let last: Buffer | undefined;
    let warning: string | undefined;
    let extra: Dirent<Buffer> | null = null;
    /** The filter passed over this many entries in a row: the page ends, and the cursor goes on. */
    let skipped = 0;
    let skipCapped = false;
    try {
      for (;;) {
        const d = peek ?? ((await handle.read()) as Dirent<Buffer> | null);
        peek = null;
        if (d === null) break;
        if (filter !== undefined && !filter(d)) {
          last = d.name;
          if (++skipped >= this.maxFilterSkip) {
            skipCapped = true;
            break;
          }
          continue;
        }
        const e = entryOf(d, this.maxNameBytes);
        if (entries.length === limit || !meter.take(measure?.asItem === undefined ? e : await measure.asItem(e))) {
          extra = d; // the entry after the page: there is more
          break;
        }
        entries.push(e);
        last = d.name;
      }
    } catch (e) {
      warning = `The directory could not be read to the end (${(e as NodeJS.ErrnoException).code ?? 'error'}); the listing stops here.`;
    }
    const page: DirPage = { path: dir.rel, entries, has_more: extra !== null || skipCapped };
    if (warning !== undefined) page.warning = warning;
    if (skipCapped) {
      page.warning = `Passed over ${skipped} entries that are not listed here; the page stops early. Continue with next_cursor.`;
    }
    if ((extra !== null || skipCapped) && last !== undefined) {
      const id = randomBytes(9).toString('base64url');
      this.cache.put(id, { dir: handle, owner, peek: extra, dev: dir.dev, ino: dir.ino });
      page.next_cursor = this.cursors.encode(kind, {
        p: pathKey(dir.rel),
        d: dir.dev,
        i: dir.ino,
        n: last.toString('base64'),
        k: position + entries.length,
        c: id,
      });
    } else {
      closeListing({ dir: handle, owner });
    }
    return page;
  }

  /** Re-open a directory and move past the entry named `after` (raw bytes). */
  private async rescan(dir: DirHandle, after: Buffer): Promise<Dir> {
    let handle: Dir;
    try {
      handle = await dir.list(256, true);
    } catch (e) {
      throw fsError(e, undefined);
    }
    let seen = 0;
    try {
      for (;;) {
        const d = (await handle.read()) as Dirent<Buffer> | null;
        if (d === null) {
          throw new WorkspaceError(
            'INVALID_CURSOR',
            'Invalid params: the directory changed since the cursor was issued (its last entry is gone). Start again without a cursor.',
          );
        }
        if (d.name.equals(after)) return handle;
        if (++seen > this.maxRescan) {
          throw new WorkspaceError(
            'INVALID_CURSOR',
            `Invalid params: the cursor expired and resuming would re-read more than ${this.maxRescan} entries. Start again without a cursor.`,
          );
        }
      }
    } catch (e) {
      await handle.close().catch(() => undefined);
      throw e;
    }
  }
}
