/**
 * Full-text search on PostgreSQL: the generated `tsvector` columns and their GIN indexes
 * (pg-schema.ts). The score is `-ts_rank(fts, query)` (a `real`; lower is better, as bm25 on
 * SQLite), tie-broken by id. `ts_rank` reads only the row and the query, not corpus statistics, so
 * a row's score never drifts as rows arrive: the cursor's own `(score, id)` is the anchor, and a
 * window is ranked in one statement. The query is the user's words, each quoted, through
 * `websearch_to_tsquery` (fts-query.ts): no text can reach the operator syntax (`or`, `-`,
 * quotes). Snippets (`ts_headline`, costly) are computed for the page's rows only, in the same
 * statement that reads them.
 */
import type { MessageWindow, RankedWindow, TaskRanking } from './dialect.js';
import { TEAM_READ_LIMITS } from './limits.js';
import { TS_CONFIG } from './pg-schema.js';
import { q, type Rule } from './rule.js';
import type { RankedRow } from './search-window.js';
import { MESSAGE_FROM, MESSAGE_PAGE_COLUMNS, TASKS_FROM, type MessageRow, type TaskRow, type WithSnippet } from './service-rows.js';

/** The tsquery of parameter `$n` (the quoted words of fts-query.ts), folded as the indexed text is (pg-fold.ts). */
const tsQuery = (n: number): string => `websearch_to_tsquery(${TS_CONFIG}, mcp_budget_fold($${n}))`;

/** What a snippet of `doc` highlights: the document's own words that fold to a word of the query. */
const headlineQuery = (doc: string, n: number): string => `mcp_budget_headline_query(${doc}, $${n})`;

/** `ts_headline` options: bounded fragments marked like the SQLite snippets. */
const HEADLINE_OPTIONS = `StartSel=[, StopSel=], MaxWords=${TEAM_READ_LIMITS.snippetTokens}, MinWords=${Math.ceil(TEAM_READ_LIMITS.snippetTokens / 2)}, ShortWord=0, MaxFragments=1, FragmentDelimiter=…`;

const MESSAGE_HITS = `SELECT ${MESSAGE_PAGE_COLUMNS}, ts_headline(${TS_CONFIG}, m.body, ${headlineQuery('m.body', 1)}, '${HEADLINE_OPTIONS}') AS snippet
  FROM ${MESSAGE_FROM} WHERE m.id = ANY($2::bigint[])`;

/**
 * One statement per window: the newest `searchWindowMatches + 1` matches with id ≤ `hi` (their
 * oldest is the window's exclusive low end when there are that many), ranked, the keyset applied,
 * `w.rows` rows kept.
 */
export function* rankMessageWindow(w: MessageWindow): Rule<RankedWindow> {
  const params: unknown[] = [w.match, w.hi, TEAM_READ_LIMITS.searchWindowMatches + 1, w.rows];
  const conds: string[] = [`w.id > b.lo`];
  if (w.channelId !== undefined) conds.push(`w.channel_id = $${params.push(w.channelId)}`);
  const keyset = w.after === undefined ? '' : `WHERE (r.score, r.id) > ($${params.push(w.after.score)}::real, $${params.push(w.after.id)}::bigint)`;
  const rows = yield* q.all<{ lo: number; id: number | null; score: number | null }>(
    `WITH w AS MATERIALIZED (
       SELECT id, channel_id, fts FROM messages WHERE fts @@ ${tsQuery(1)} AND id <= $2 ORDER BY id DESC LIMIT $3
     ), b AS (SELECT CASE WHEN count(*) >= $3 THEN min(id) ELSE 0 END AS lo FROM w)
     SELECT b.lo, p.id, p.score FROM b LEFT JOIN LATERAL (
       SELECT r.id, r.score FROM (SELECT w.id, -ts_rank(w.fts, ${tsQuery(1)}) AS score FROM w WHERE ${conds.join(' AND ')}) r
       ${keyset} ORDER BY r.score, r.id LIMIT $4
     ) p ON true`,
    params,
  );
  return { lo: rows[0]?.lo ?? 0, ranked: rows.filter((r) => r.id !== null).map((r) => ({ id: r.id!, score: r.score! })) };
}

/** Page rows of `ids` with their headlines. */
export function* messageHits(match: string, ids: readonly number[]): Rule<WithSnippet<MessageRow>[]> {
  return yield* q.all<WithSnippet<MessageRow>>(MESSAGE_HITS, [match, ids]);
}

/** Tasks matching `r.match` with id ≤ the snapshot, by `(-ts_rank, id)`, in one statement. */
export function* rankTasks(r: TaskRanking): Rule<RankedRow[]> {
  const params: unknown[] = [r.match, r.snapshot];
  const where = [`fts @@ ${tsQuery(1)}`, `id <= $2`];
  if (r.exclude !== undefined) where.push(`id <> $${params.push(r.exclude)}`);
  if (r.status !== undefined) where.push(`status = $${params.push(r.status)}`);
  const keyset = r.after === undefined ? '' : `WHERE (r.score, r.id) > ($${params.push(r.after.score)}::real, $${params.push(r.after.id)}::bigint)`;
  return yield* q.all<RankedRow>(
    `SELECT r.id, r.score FROM (SELECT id, -ts_rank(fts, ${tsQuery(1)}) AS score FROM tasks WHERE ${where.join(' AND ')}) r ${keyset} ORDER BY r.score, r.id LIMIT $${params.push(r.rows)}`,
    params,
  );
}

/** Page rows (`columns`: the dialect's task page columns) of `ids` with their headlines. */
export function* taskHits(columns: string, match: string, ids: readonly number[]): Rule<WithSnippet<TaskRow>[]> {
  return yield* q.all<WithSnippet<TaskRow>>(
    `SELECT ${columns}, ts_headline(${TS_CONFIG}, t.title || ' ' || t.body, ${headlineQuery(`t.title || ' ' || t.body`, 1)}, '${HEADLINE_OPTIONS}') AS snippet FROM ${TASKS_FROM} WHERE t.id = ANY($2::bigint[])`,
    [match, ids],
  );
}
