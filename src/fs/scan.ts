/**
 * `workspace_scan`: pages the agent directories (the root's immediate subdirectories), each
 * summarised by a bounded one-level scan: entries are counted up to a cap, with a flag when the
 * cap was reached, so a directory of a million entries costs the same as one of a thousand.
 */
import { CURSOR_ROOM_BYTES, type DirEntry, type DirectoryBrowser, type ListMeasure } from './browse.js';
import type { PageSizer } from '../shared/page-meter.js';
import type { DirHandle, EntryName, Workspace } from './confine.js';

/** Entries counted per directory before the count is reported as capped. */
export const SCAN_COUNT_CAP = 1000;

export interface DirSummary {
  name: string;
  /** The raw name, base64, when it is not valid UTF-8. */
  name_base64?: string;
  entries: number;
  files: number;
  directories: number;
  /** True when the directory has more than `entries` entries (the count stopped at the cap). */
  capped: boolean;
  error?: string;
}

export interface ScanPage {
  directories: DirSummary[];
  has_more: boolean;
  next_cursor?: string;
}

/** Count one subdirectory's entries, opened from the root handle without following a link. */
async function summarize(root: DirHandle, raw: EntryName, name: string, nameBase64: string | undefined): Promise<DirSummary> {
  const s: DirSummary = { name, entries: 0, files: 0, directories: 0, capped: false };
  if (nameBase64 !== undefined) s.name_base64 = nameBase64;
  try {
    const sub = await root.openDir(raw);
    // The handle stays open while the listing reads: Node may look names up through
    // `/proc/self/fd/N/<name>`, and N must not be closed and reused meanwhile.
    try {
      const dir = await sub.list(128);
      try {
        for (;;) {
          const d = await dir.read();
          if (d === null) break;
          if (s.entries === SCAN_COUNT_CAP) {
            s.capped = true;
            break;
          }
          s.entries++;
          if (d.isFile()) s.files++;
          else if (d.isDirectory()) s.directories++;
        }
      } finally {
        await dir.close().catch(() => undefined);
      }
    } finally {
      await sub.close();
    }
  } catch (e) {
    s.error = `unreadable (${(e as NodeJS.ErrnoException).code ?? 'error'})`;
  }
  return s;
}

/**
 * One page of the agent directories. With `sizer`, each directory is summarized as the listing
 * reaches it and measured as its summary will be sent, so the page stops where the answer would
 * pass a bound (the summary of the first directory of the next page is read, then left).
 */
export async function scanWorkspace(browser: DirectoryBrowser, ws: Workspace, limit: number, cursor: string | undefined, sizer?: PageSizer): Promise<ScanPage> {
  const root = await ws.openRoot();
  try {
    const summaries: DirSummary[] = [];
    const summary = (e: DirEntry): Promise<DirSummary> =>
      // A name that is not UTF-8 is opened by its raw bytes.
      summarize(root, e.name_base64 === undefined ? e.name : Buffer.from(e.name_base64, 'base64'), e.name, e.name_base64);
    const measure: ListMeasure | undefined =
      sizer === undefined
        ? undefined
        : {
            sizer,
            fixed: { directories: [], has_more: true, next_cursor: 'c'.repeat(CURSOR_ROOM_BYTES) },
            list: 'directories',
            asItem: async (e) => {
              const s = await summary(e);
              summaries.push(s);
              return s;
            },
          };
    const page = await browser.list(undefined, limit, cursor, (d) => d.isDirectory(), 'scan', measure);
    const directories: DirSummary[] = [];
    for (const [i, e] of page.entries.entries()) directories.push(summaries[i] ?? (await summary(e)));
    const out: ScanPage = { directories, has_more: page.has_more };
    if (page.next_cursor !== undefined) out.next_cursor = page.next_cursor;
    return out;
  } finally {
    await root.close();
  }
}
