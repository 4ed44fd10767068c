/**
 * The workspace tools of `mcp-budget serve`. Each reads at the source only what one page needs;
 * names, limits and rows are part of the contract (`specs/agent-mcp-tool-inventory.json`).
 */
import { z } from 'zod';
import { DirectoryBrowser } from '../fs/browse.js';
import type { Workspace } from '../fs/confine.js';
import type { CursorCodec } from '../shared/cursor.js';
import { readWindow, type FileWindow } from '../fs/read-window.js';
import { scanWorkspace } from '../fs/scan.js';
import { DEFAULT_SEARCH_LIMITS, searchFiles } from '../fs/search.js';
import { SEED_LIMITS, seedFiles } from '../fs/seed.js';
import { cutString, type ResolvedLimits } from '../engine/index.js';
import { answerFits, fitEchoes, searchPathBytes, type Call } from '../tools/index.js';
import { defineDetailTool, defineListTool, defineMutationTool, defineSearchTool, type ToolContext } from './tool-kinds.js';

/** Page sizes and windows of the workspace tools. */
export const WORKSPACE_LIMITS = Object.freeze({
  listDir: { default: 50, max: 200 },
  scan: { default: 20, max: 100 },
  search: { default: 50, max: 200 },
  /** Bytes one read may read (the window the budget carries is smaller: see {@link readWindowBytes}). */
  readFile: { maxBytes: 48 * 1024 },
});

const ENTRY = 'src/server/workspace-tools.ts';

/** Output schemas (published as `outputSchema`; clients reject members a schema does not list). */
const flag = z.boolean().optional();
const pageFields = { has_more: z.boolean(), next_cursor: z.string().optional() };
const LIST_DIR_OUTPUT = {
  path: z.string(),
  path_truncated: flag,
  entries: z.array(z.object({ name: z.string(), type: z.enum(['file', 'directory', 'symlink', 'other']), name_base64: z.string().optional() })),
  ...pageFields,
  warning: z.string().optional(),
};
const SCAN_OUTPUT = {
  directories: z.array(
    z.object({ name: z.string(), name_base64: z.string().optional(), entries: z.number(), files: z.number(), directories: z.number(), capped: z.boolean(), error: z.string().optional() }),
  ),
  ...pageFields,
};
const SEARCH_OUTPUT = {
  query: z.string(),
  query_truncated: flag,
  glob: z.string().optional(),
  glob_truncated: flag,
  path: z.string(),
  path_truncated: flag,
  matches: z.array(z.string()),
  ...pageFields,
  non_utf8: z.array(z.object({ index: z.number(), path_base64: z.string() })).optional(),
  truncated_scan: flag,
  note: z.string().optional(),
};
const READ_FILE_OUTPUT = {
  path: z.string(),
  path_truncated: flag,
  offset: z.number(),
  bytes: z.number(),
  size: z.number(),
  eof: z.boolean(),
  next_offset: z.number().optional(),
  encoding: z.enum(['utf8', 'base64']),
  content: z.array(z.string()).describe('The window in pieces, in order, each within the string bound: joined, they are the text (or the base64) of the window.'),
};
const SEED_OUTPUT = { written: z.number(), bytes: z.number(), paths: z.array(z.string()), created_directories: z.number() };
/** A read window's fields besides its path and content (offsets, sizes, flags, encoding), in the structure and in the text. */
const WINDOW_FIELDS_BYTES = 320;
/** The documented window holds for paths up to this many bytes as JSON; a longer path leaves less room. */
const DOCUMENTED_PATH_BYTES = 258;
/** Plain text holds a line break at most every this many bytes (source code and prose hold fewer). */
const PLAIN_LINE_BYTES = 40;

/**
 * The read window under the active limits. A window's content is sent twice, in the structure (in
 * pieces within the string bound) and in the text block (as lines), so it is at most what one text
 * block carries beside the window's own fields: `max`, for text with nothing to escape. The default
 * is what the block carries of plain text, whose line breaks cost 3 bytes each there (`\n`
 * escaped, and the line's indentation): the largest window the budget carries for plain text.
 * A window of text that escapes more (quotes, control characters), or of base64, comes back
 * shorter, cut where its answer fits, and `next_offset` goes on from there.
 */
export function readWindowBytes(limits: ResolvedLimits): { defaultBytes: number; maxBytes: number } {
  // Under a text measure's bound, no byte counts more than the measure's most: that many bytes always fit it.
  const byMeasures = Math.min(Infinity, ...limits.textMeasures.map((m) => Math.floor(m.bound / m.measure.maxPerByte)));
  const room = Math.min(limits.maxBlockBytes, limits.maxTextBytes, Math.floor(limits.maxResultBytes / 2), byMeasures) - WINDOW_FIELDS_BYTES - DOCUMENTED_PATH_BYTES;
  const maxBytes = Math.max(64, Math.min(WORKSPACE_LIMITS.readFile.maxBytes, room));
  const plain = Math.floor((room * PLAIN_LINE_BYTES) / (PLAIN_LINE_BYTES + 3));
  return { defaultBytes: Math.max(64, Math.min(maxBytes, plain)), maxBytes };
}

type WindowPage = Omit<FileWindow, 'content'> & { path_truncated?: boolean; content: string[] };

/** `text` in pieces of at most `pieceBytes` written bytes each, cut on character boundaries (base64: on 4-character groups). */
function piecesOf(text: string, encoding: FileWindow['encoding'], pieceBytes: number): string[] {
  const out: string[] = [];
  if (encoding === 'base64') {
    const step = Math.max(4, Math.floor(pieceBytes / 4) * 4);
    for (let i = 0; i < text.length; i += step) out.push(text.slice(i, i + step));
    return out;
  }
  for (let i = 0; i < text.length; ) {
    const end = Math.max(i + 1, cutString(text, i, pieceBytes, false).end);
    out.push(text.slice(i, end));
    i = end;
  }
  return out;
}

/**
 * The window as sent: its content in pieces within the string bound, cut to the longest prefix
 * whose answer fits every active limit (measured as `structured` sends it, or inside exec's
 * envelope), so the budget never cuts it and `next_offset` matches what was returned. At least
 * its first character (or base64 group) is kept: a window always makes progress.
 */
function fittedWindow(ctx: ToolContext, call: Call, w: FileWindow): WindowPage {
  const text = w.content;
  const page = (end: number): WindowPage => {
    const kept = text.slice(0, end);
    const bytes = end === text.length ? w.bytes : w.encoding === 'base64' ? (end / 4) * 3 : Buffer.byteLength(kept);
    const next = w.offset + bytes;
    const out: WindowPage = { ...w, bytes, eof: next >= w.size, content: piecesOf(kept, w.encoding, ctx.page.maxPageStringBytes) };
    if (next < w.size) out.next_offset = next;
    else delete out.next_offset;
    return fitEchoes(out, ctx.page, ['path']);
  };
  const fits = (p: WindowPage): boolean => answerFits(p, ctx.limits, call.answerAs, call.answerAs === undefined ? windowView(p) : undefined);
  const whole = page(text.length);
  if (text.length === 0 || fits(whole)) return whole;
  // A cut point on a character boundary (never inside a surrogate pair), or a base64 group's end.
  const boundary = (n: number): number => {
    if (w.encoding === 'base64') return Math.max(4, n - (n % 4));
    const c = text.charCodeAt(n - 1);
    return c >= 0xd800 && c <= 0xdbff ? (n > 1 ? n - 1 : n + 1) : n;
  };
  let lo = boundary(1);
  let hi = text.length;
  // Perf: at most about 16 measures of a window (each a rendering and a fit check, well under a millisecond).
  while (hi - lo > (w.encoding === 'base64' ? 4 : 1)) {
    const mid = boundary(Math.floor((lo + hi) / 2));
    if (mid <= lo || mid >= hi) break;
    if (fits(page(mid))) lo = mid;
    else hi = mid;
  }
  return page(lo);
}

/** What the text block shows of a window: its pieces as the one text they are. */
function windowView(p: WindowPage): object {
  return { ...p, content: p.content.join('') };
}

export function registerWorkspaceTools(ctx: ToolContext, ws: Workspace, cursors: CursorCodec): DirectoryBrowser {
  const pageBytes = ctx.page.maxPageBytes;
  const browser = new DirectoryBrowser(ws, cursors, { maxPageBytes: pageBytes, maxNameBytes: ctx.page.maxPageStringBytes });
  const window = readWindowBytes(ctx.limits);
  const path = z.string().max(4096).optional().describe('Directory relative to the workspace root (default: the root).');

  defineListTool(
    ctx,
    {
      name: 'workspace_list_dir',
      title: 'List directory',
      action: 'workspace.read',
      entryPoint: `${ENTRY}#workspace_list_dir`,
      description: 'List one level of a directory in its own (unsorted) order: name and type of each entry.',
      args: { path },
      limit: { ...WORKSPACE_LIMITS.listDir, overMax: 'refuse' },
      row: {
        paging: 'limit+1 read, and a page stops at a byte size the budget never cuts; has_more; signed next_cursor bound to path and directory identity',
        per_item_budget: 'name (≤ 255 bytes on common file systems; as base64 too, with a lossy rendering, when not UTF-8 or longer as JSON than the string bound) + type',
        backend_query_bound: 'fs.opendir iteration stops after limit+1 entries; resume from a cached handle or a capped re-scan',
        structured_content: 'the page object; the text block is its compact rendering (its JSON when that is no larger)',
      },
      outputSchema: LIST_DIR_OUTPUT,
      run: async ({ path: p, limit, cursor, sizer }) => fitEchoes(await browser.list(p, limit, cursor, undefined, 'dir', { sizer }), ctx.page, ['path']),
    },
    { tool: 'workspace_search_files', surface: 'workspace' },
  );

  defineListTool(
    ctx,
    {
      name: 'workspace_scan',
      title: 'Scan workspace',
      action: 'workspace.read',
      entryPoint: `${ENTRY}#workspace_scan`,
      description: "Page the agent directories (the root's immediate subdirectories), each with a capped count of its entries.",
      args: {},
      limit: { ...WORKSPACE_LIMITS.scan, overMax: 'refuse' },
      row: {
        paging: 'limit+1 read; has_more; signed next_cursor',
        per_item_budget: 'name + counts; each count stops at 1000 with `capped`',
        backend_query_bound: 'root opendir stops after limit+1 directories; each summary reads at most 1001 entries',
        structured_content: 'the page object; the text block is its compact rendering (its JSON when that is no larger)',
      },
      outputSchema: SCAN_OUTPUT,
      run: ({ limit, cursor, sizer }) => scanWorkspace(browser, ws, limit, cursor, sizer),
    },
    { tool: 'workspace_search_files', surface: 'workspace' },
  );

  defineSearchTool(ctx, {
    name: 'workspace_search_files',
    title: 'Find files',
    action: 'workspace.read',
    entryPoint: `${ENTRY}#workspace_search_files`,
    description:
      'Find files under a directory by glob (`query`, e.g. "**/*.md"; braces allowed, extglobs not), or by a plain word (no glob character or `/`): every file whose name contains it, in any case (`glob` shows how it was read). Dot files match only a pattern that names the dot; links are never followed. A scan stopped by its per-call cap says truncated_scan: continue with next_cursor.',
    args: { path },
    limit: { ...WORKSPACE_LIMITS.search, overMax: 'refuse' },
    row: {
      paging:
        'limit+1 matches, and a page stops at a byte size the budget never cuts; has_more; signed next_cursor holding the walk position (bound to query, path and directory identity); a scan stopped by its cap says truncated_scan with a note',
      per_item_budget: 'one relative path per match (raw bytes in non_utf8 when not UTF-8)',
      backend_query_bound:
        'confined depth-first walk: opendir streamed on directory descriptors, links never entered, directories that cannot match pruned; at most 100,000 entries and 2 s per call; a resume re-reads to its position (at most 1,000,000 entries); matching bounded by construction (no regular expression: a few ms per path at most); extglobs, regex-like forms and over 256 brace alternatives refused',
      structured_content: 'the page object; the text block is its compact rendering (its JSON when that is no larger)',
    },
    outputSchema: SEARCH_OUTPUT,
    run: async ({ query, path: p, limit, cursor, sizer }) =>
      fitEchoes(
        await searchFiles(ws, cursors, query, p, limit, cursor, sizer, { maxPathBytes: searchPathBytes(ctx.page, DEFAULT_SEARCH_LIMITS.maxPathBytes) }),
        ctx.page,
        ['path', 'query', 'glob'],
      ),
  });

  defineDetailTool(ctx, {
    name: 'workspace_read_file',
    title: 'Read file',
    action: 'workspace.read',
    entryPoint: `${ENTRY}#workspace_read_file`,
    description: `Read one byte window of a file (default ${window.defaultBytes} bytes, max ${window.maxBytes}; text that escapes more, binary sent as base64, or a path over 256 bytes returns fewer); continue from next_offset until eof. content is the window in pieces: join them.`,
    args: {
      path: z.string().min(1).max(4096).describe('File relative to the workspace root.'),
      offset: z.number().int().min(0).optional().describe('Byte offset to start at (default 0).'),
      max_bytes: z.number().int().min(1).optional().describe(`Window size in bytes (at most ${window.maxBytes}; larger is clamped).`),
    },
    row: {
      paging: 'byte window: offset, next_offset, eof',
      per_item_budget: `window ≤ ${WORKSPACE_LIMITS.readFile.maxBytes} bytes read (over-max max_bytes is clamped); cut to the longest prefix whose answer fits every limit (content in the structure, in pieces each within maxStringBytes, and in the text block), next_offset matches it`,
      backend_query_bound: 'reads at most max_bytes bytes at offset; never the whole file',
      structured_content: 'the window object, content in pieces; the text block is its compact rendering with the pieces joined (its JSON when that is no larger)',
    },
    outputSchema: READ_FILE_OUTPUT,
    textView: windowView,
    run: async ({ path: p, offset, max_bytes }, call) => fittedWindow(ctx, call, await readWindow(ws, p, offset ?? 0, Math.min(max_bytes ?? window.defaultBytes, window.maxBytes))),
  });

  defineMutationTool(ctx, {
    name: 'workspace_seed_files',
    title: 'Write files',
    action: 'workspace.write',
    entryPoint: `${ENTRY}#workspace_seed_files`,
    description: `Write a batch of files, all or nothing (at most ${SEED_LIMITS.maxFiles} files, ${SEED_LIMITS.maxFileBytes} bytes each, ${SEED_LIMITS.maxTotalBytes} in total). Oversized batches are refused before anything is written; nothing is written under \`.git\`. With overwrite: true, existing files are replaced.`,
    args: {
      files: z.array(z.strictObject({ path: z.string(), content: z.string() })).describe('Files to write: {path, content}.'),
      overwrite: z.boolean().optional().describe('Replace existing files (default false: an existing file refuses the batch).'),
    },
    caps: { ...SEED_LIMITS },
    // With overwrite it replaces existing files.
    destructive: true,
    row: {
      paging: 'none',
      per_item_budget: 'receipt: counts and the written paths',
      backend_query_bound:
        'caps and paths (no `.git` component) checked before any write; directories opened from the root descriptor without following links; staged with O_EXCL|O_NOFOLLOW, then linked or renamed within the opened directory; rolled back on failure; refused off Linux',
      structured_content: 'the receipt object; the text block is its compact rendering (its JSON when that is no larger)',
    },
    outputSchema: SEED_OUTPUT,
    run: ({ files, overwrite }) => seedFiles(ws, files, overwrite === true),
  });
  return browser;
}
