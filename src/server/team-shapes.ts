/**
 * What the team tools return, and how: output schemas (zod shapes the SDK publishes and checks),
 * rows shaped for a page (times as ISO text, bodies cut to a preview with a flag), pages filled up
 * to the byte size the result budget never cuts, signed cursors bound to the store and the query,
 * and team failures turned into tool failures with the workspace codes.
 */
import { z } from 'zod';
import { cutString, mirrorLength } from '../engine/index.js';
import { WorkspaceError } from '../fs/errors.js';
import type { CursorCodec } from '../shared/cursor.js';
import { TEAM_READ_LIMITS, type Comment, type Member, type Message, type Task, type TeamStore, type TimeKey } from '../team/index.js';
import type { PageSizer } from '../shared/page-meter.js';
import type { Call } from '../tools/index.js';

/**
 * A stored time as ISO 8601, for any value a store may hold: the write boundary keeps times within
 * the range every reader renders, but a store written before it (or by hand) may not, and one row
 * must never fail a page (or make an inbox impossible to acknowledge). Out of range, the raw
 * milliseconds are shown.
 */
export function iso(ms: number): string {
  const d = new Date(ms);
  return Number.isNaN(d.getTime()) ? `invalid time (${String(ms).slice(0, 40)} ms)` : d.toISOString();
}

/** `text` cut to `maxBytes` written (escaped) bytes on a character boundary. */
export function preview(text: string, maxBytes: number): { text: string; cut: boolean } {
  const c = cutString(text, 0, maxBytes, false);
  return c.end >= text.length ? { text, cut: false } : { text: text.slice(0, c.end), cut: true };
}

/** One window of a long text: from `offset` (UTF-16 units), at most `maxBytes` written bytes. */
export function textWindow(text: string, offset: number, maxBytes: number): { text: string; offset: number; next_offset: number | null } {
  const start = Math.min(Math.max(0, offset), text.length);
  // never start inside a surrogate pair
  const from = start > 0 && start < text.length && (text.charCodeAt(start) & 0xfc00) === 0xdc00 ? start - 1 : start;
  const c = cutString(text, from, maxBytes, false);
  return { text: text.slice(from, c.end), offset: from, next_offset: c.end >= text.length ? null : c.end };
}

export const messageItem = z.object({
  id: z.number(),
  channel: z.string(),
  author: z.string().nullable(),
  body: z.string(),
  body_truncated: z.boolean(),
  reply_to: z.number().nullable(),
  created_at: z.string(),
});

/** A message as a page row: body cut to the preview (`body_truncated`; message_get has all of it). */
export function messageRow(m: Message & { truncated?: boolean }, previewBytes: number = TEAM_READ_LIMITS.previewBytes): z.infer<typeof messageItem> {
  const p = preview(m.body, previewBytes);
  return { id: m.id, channel: m.channel, author: m.author, body: p.text, body_truncated: p.cut || m.truncated === true, reply_to: m.reply_to, created_at: iso(m.created_at) };
}

export const taskItem = z.object({
  id: z.number(),
  key: z.string(),
  title: z.string(),
  status: z.string(),
  priority: z.string(),
  assignee: z.string().nullable(),
  labels: z.array(z.string()),
  body: z.string(),
  body_truncated: z.boolean(),
  created_by: z.string().nullable(),
  created_at: z.string(),
  updated_at: z.string(),
});

/** A task as a page row (body cut to the task preview). */
export function taskRow(t: Task & { truncated?: boolean }, previewBytes: number = TEAM_READ_LIMITS.taskPreviewBytes): z.infer<typeof taskItem> {
  const p = preview(t.body, previewBytes);
  return {
    id: t.id,
    key: t.key,
    title: t.title,
    status: t.status,
    priority: t.priority,
    assignee: t.assignee,
    labels: t.labels,
    body: p.text,
    body_truncated: p.cut || t.truncated === true,
    created_by: t.created_by,
    created_at: iso(t.created_at),
    updated_at: iso(t.updated_at),
  };
}

export const commentItem = z.object({ id: z.number(), author: z.string().nullable(), body: z.string(), body_truncated: z.boolean(), created_at: z.string() });

/** A comment in task_get's section (body cut to the preview). */
export function commentRow(c: Comment, previewBytes: number): z.infer<typeof commentItem> {
  const p = preview(c.body, previewBytes);
  return { id: c.id, author: c.author, body: p.text, body_truncated: p.cut, created_at: iso(c.created_at) };
}

/** Paging fields every page carries. */
export const pageFields = {
  has_more: z.boolean(),
  next_cursor: z.string().optional(),
};

/**
 * How many of `items` the page takes (at least one): its own fields are `fixed` (at their largest),
 * its items go in `list`, and the sizer weighs each as the answer is sent (its JSON in the
 * structure, its line in the text). The page is then cut at the source, so the result budget never
 * has to, and `has_more` / `next_cursor` continue from the last kept.
 */
export function fitItems(items: readonly object[], sizer: PageSizer, fixed: object, list: string): number {
  const meter = sizer.meter(fixed, list);
  let n = 0;
  while (n < items.length && meter.take(items[n]!)) n++;
  return n;
}

/** A stand-in for a cursor, longer than `cursor` by room for larger numbers (a page's own fields hold it before its last row is known). */
export function cursorRoom(cursor: string): string {
  return 'c'.repeat(cursor.length + 32);
}


/** Signed cursors of the team tools: bound to the store (its id) and to the query that made them. */
export class TeamCursors {
  constructor(private readonly codec: CursorCodec) {}

  encode(kind: string, storeId: string, bind: unknown, pos: Record<string, unknown>): string {
    return this.codec.encode(`team.${kind}`, { s: storeId, b: bind, p: pos });
  }

  /** The position, or INVALID_CURSOR when the cursor is altered, foreign, or made for another query. */
  decode(kind: string, storeId: string, bind: unknown, cursor: string): Record<string, unknown> {
    const payload = this.codec.decode(`team.${kind}`, cursor);
    if (payload.s !== storeId) throw new WorkspaceError('INVALID_CURSOR', 'Invalid params: `cursor` comes from another team store. Start again without a cursor.');
    if (JSON.stringify(payload.b) !== JSON.stringify(bind)) {
      throw new WorkspaceError('INVALID_CURSOR', 'Invalid params: `cursor` was made for other arguments; pass the same arguments as the first page, or start again without a cursor.');
    }
    const pos = payload.p;
    if (pos === null || typeof pos !== 'object') throw new WorkspaceError('INVALID_CURSOR', 'Invalid params: `cursor` is malformed. Start again without a cursor.');
    return pos as Record<string, unknown>;
  }
}

/** A number field of a decoded position (else INVALID_CURSOR). */
export function num(pos: Record<string, unknown>, key: string): number {
  const v = pos[key];
  if (typeof v !== 'number' || !Number.isFinite(v)) throw new WorkspaceError('INVALID_CURSOR', 'Invalid params: `cursor` is malformed. Start again without a cursor.');
  return v;
}

/** A cursor's chronology position (`a`: a time, a decimal string for one past 2^53; `i`: an id). */
export function timeKeyOf(pos: Record<string, unknown>): TimeKey {
  const a = pos.a;
  // A string only this server wrote (the cursor is signed): an exact integer, or a text time a hand-written SQLite row holds.
  if (typeof a === 'string' && a.length <= 256) return { at: a, id: num(pos, 'i') };
  return { at: num(pos, 'a'), id: num(pos, 'i') };
}

/** The cursor position after `row`: its exact time when the number read is rounded (see TimeKey). */
export function timePosition(time: number, row: { id: number; at_key?: string }): { a: number | string; i: number } {
  return { a: row.at_key ?? time, i: row.id };
}

/** Room a page keeps for its own fields (channel, query, has_more, next_cursor) outside its items. */
export const TEAM_PAGE_FIELDS_BYTES = 1024;

/** The store and the calling member of one call, and the call (its `own` access). */
export interface TeamCall {
  store: TeamStore;
  me: Member;
  call: Call;
}

/**
 * A team tool body on the store and the member the call pipeline resolved (it opened the store and
 * refused a role the permission table denies the tool's action). A tool that settles `own` access
 * itself (`ownable`: on the item inside its write, with `call.requireOwn`) runs for such a caller;
 * any other tool refuses it. Arguments and page pass through untouched, so the tool's contract
 * types both (`A` from the declaration's `args`, `R` checked against its `outputSchema`).
 */
export function withTeam<A, R>(fn: (args: A, team: TeamCall) => Promise<R>, ownable = false): (args: A, call: Call) => Promise<R> {
  return async (args, call) => {
    const team = { ...call.team(), call };
    if (!ownable) call.requireOwn(false);
    return fn(args, team);
  };
}

