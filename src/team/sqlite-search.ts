/**
 * Full-text search on SQLite: the FTS5 external-content indexes (`messages_fts`, `tasks_fts`, kept
 * by triggers), ranked by `bm25()` (lower is better), snippets by `snippet()`. Rows are ranked by
 * (bm25, rowid) straight from the index; a window's low end is the id of the match just below it.
 *
 * Re-anchoring: bm25 reads corpus statistics (row count, average length, rows per term) that
 * change as rows arrive, and a change of a term's weight scales every score alike, so a next page
 * compares against the cursor row's score as the index scores it *now*; that keeps the order of the
 * rows already ranked. The cursor's own score is the fallback when the row is gone. `rowid + 0`:
 * with `rowid = ?` pushed into FTS5, bm25 weighs the term as if only that row matched (a different
 * score); filtering after the match scores it as the page query does.
 */
import type { MessageWindow, RankedWindow, TaskRanking } from './dialect.js';
import { TEAM_READ_LIMITS } from './limits.js';
import { q, type Rule } from './rule.js';
import type { RankedRow } from './search-window.js';
import { MESSAGE_FROM, MESSAGE_PAGE_COLUMNS, TASKS_FROM, type MessageRow, type TaskRow, type WithSnippet } from './service-rows.js';

const WINDOW_LOW = `SELECT rowid AS id FROM messages_fts WHERE messages_fts MATCH ? AND rowid <= ? ORDER BY rowid DESC LIMIT 1 OFFSET ?`;
const MESSAGE_ANCHOR = `SELECT bm25(messages_fts) AS score FROM messages_fts WHERE messages_fts MATCH ? AND rowid > ? AND rowid <= ? AND rowid + 0 = ?`;
const TASK_ANCHOR = `SELECT bm25(tasks_fts) AS score FROM tasks_fts WHERE tasks_fts MATCH ? AND rowid + 0 = ?`;

const marks = (n: number): string => Array.from({ length: n }, () => '?').join(',');

/** The window of `searchWindowMatches` matches ending at `w.hi`, ranked; `lo` the next older match's id, or 0. */
export function* rankMessageWindow(w: MessageWindow): Rule<RankedWindow> {
  const lo = (yield* q.get<{ id: number }>(WINDOW_LOW, [w.match, w.hi, TEAM_READ_LIMITS.searchWindowMatches]))?.id ?? 0;
  const where = [`messages_fts MATCH ?`, `messages_fts.rowid > ?`, `messages_fts.rowid <= ?`];
  const params: unknown[] = [w.match, lo, w.hi];
  if (w.after !== undefined) {
    const now = yield* q.get<{ score: number }>(MESSAGE_ANCHOR, [w.match, lo, w.hi, w.after.id]);
    where.push(`(bm25(messages_fts), messages_fts.rowid) > (?, ?)`);
    params.push(now?.score ?? w.after.score, w.after.id);
  }
  if (w.channelId !== undefined) {
    where.push(`EXISTS (SELECT 1 FROM messages WHERE id = messages_fts.rowid AND channel_id = ?)`);
    params.push(w.channelId);
  }
  params.push(w.rows);
  const ranked = yield* q.all<RankedRow>(`SELECT messages_fts.rowid AS id, bm25(messages_fts) AS score FROM messages_fts WHERE ${where.join(' AND ')} ORDER BY score, id LIMIT ?`, params);
  return { lo, ranked };
}

/** Page rows of `ids` and their snippets (two reads: rows by id, snippets from the index). */
export function* messageHits(match: string, ids: readonly number[]): Rule<WithSnippet<MessageRow>[]> {
  const rows = yield* q.all<MessageRow>(`SELECT ${MESSAGE_PAGE_COLUMNS} FROM ${MESSAGE_FROM} WHERE m.id IN (${marks(ids.length)})`, ids);
  const snippets = yield* q.all<{ id: number; s: string }>(
    `SELECT rowid AS id, snippet(messages_fts, 0, '[', ']', '…', ${TEAM_READ_LIMITS.snippetTokens}) AS s FROM messages_fts WHERE messages_fts MATCH ? AND rowid IN (${marks(ids.length)})`,
    [match, ...ids],
  );
  return withSnippets(rows, snippets);
}

/** Tasks matching `r.match` with id ≤ the snapshot, by (bm25, id). */
export function* rankTasks(r: TaskRanking): Rule<RankedRow[]> {
  const where = [`tasks_fts MATCH ?`, `tasks_fts.rowid <= ?`];
  const params: unknown[] = [r.match, r.snapshot];
  if (r.exclude !== undefined) {
    where.push(`tasks_fts.rowid <> ?`);
    params.push(r.exclude);
  }
  if (r.after !== undefined) {
    const now = yield* q.get<{ score: number }>(TASK_ANCHOR, [r.match, r.after.id]);
    where.push(`(bm25(tasks_fts), tasks_fts.rowid) > (?, ?)`);
    params.push(now?.score ?? r.after.score, r.after.id);
  }
  if (r.status !== undefined) {
    where.push(`EXISTS (SELECT 1 FROM tasks WHERE id = tasks_fts.rowid AND status = ?)`);
    params.push(r.status);
  }
  params.push(r.rows);
  return yield* q.all<RankedRow>(`SELECT tasks_fts.rowid AS id, bm25(tasks_fts) AS score FROM tasks_fts WHERE ${where.join(' AND ')} ORDER BY score, id LIMIT ?`, params);
}

/** Page rows (`columns`: the dialect's task page columns) of `ids` and their snippets. */
export function* taskHits(columns: string, match: string, ids: readonly number[]): Rule<WithSnippet<TaskRow>[]> {
  const rows = yield* q.all<TaskRow>(`SELECT ${columns} FROM ${TASKS_FROM} WHERE t.id IN (${marks(ids.length)})`, ids);
  const snippets = yield* q.all<{ id: number; s: string }>(
    `SELECT rowid AS id, snippet(tasks_fts, -1, '[', ']', '…', ${TEAM_READ_LIMITS.snippetTokens}) AS s FROM tasks_fts WHERE tasks_fts MATCH ? AND rowid IN (${marks(ids.length)})`,
    [match, ...ids],
  );
  return withSnippets(rows, snippets);
}

function withSnippets<R extends { id: number }>(rows: R[], snippets: { id: number; s: string }[]): WithSnippet<R>[] {
  const byId = new Map(snippets.map((r) => [r.id, r.s]));
  return rows.map((r) => ({ ...r, snippet: byId.get(r.id) ?? '' }));
}
