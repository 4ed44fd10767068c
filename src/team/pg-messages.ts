/**
 * Channels and messages of a PostgreSQL team store, with the SQLite side's contract (messages.ts):
 * sending with the recipients' inbox rows in the same transaction, the chronology by
 * `(channel_id, created_at DESC, id DESC)`, and search ranked within windows of the newest
 * `searchWindowMatches` matches, newest window first.
 *
 * Ranking: the score is `-ts_rank(fts, query)` (a `real`; lower is better, as bm25 on the SQLite
 * side), tie-broken by id. `ts_rank` reads only the row and the query, not corpus statistics, so
 * a row's score never drifts as messages arrive: the cursor's own `(score, id)` is the anchor.
 * The query is the user's words, each quoted, through `websearch_to_tsquery` (fts-query.ts): no
 * text can reach the operator syntax (`or`, `-`, quotes). Snippets (`ts_headline`, costly) are
 * computed for the page's rows only.
 */
import { toFtsQuery } from './fts-query.js';
import { TEAM_INPUT_CAPS, TEAM_READ_LIMITS } from './limits.js';
import type { PageMessage } from './messages.js';
import { pageOf, type Queryable } from './pg-db.js';
import { pgMembers } from './pg-members.js';
import { TS_CONFIG } from './pg-schema.js';
import { TeamError, type Member, type Message, type MessageHit, type Page, type SearchPage, type SearchPos, type SendOptions, type TimeKey } from './types.js';
import { checkChannelName, checkSendInput } from './validate.js';
import { nextWindow, windowPage } from './search-window.js';

const PREFIX_CHARS = TEAM_READ_LIMITS.previewBytes;

/** Columns of a page row: the body as a prefix, `truncated` saying whether it was cut. */
export const PG_PAGE_COLUMNS = `m.id, c.name AS channel, a.name AS author, left(m.body, ${PREFIX_CHARS}) AS body,
  length(m.body) > ${PREFIX_CHARS} AS truncated, m.reply_to, m.created_at`;
export const PG_MESSAGE_FROM = `messages m JOIN channels c ON c.id = m.channel_id LEFT JOIN members a ON a.id = m.author_id`;
/** The tsquery of parameter `$n` (the quoted words of fts-query.ts). */
export const tsQuery = (n: number): string => `websearch_to_tsquery(${TS_CONFIG}, $${n})`;
/** `ts_headline` options: bounded fragments marked like the SQLite snippets. */
export const HEADLINE_OPTIONS = `StartSel=[, StopSel=], MaxWords=${TEAM_READ_LIMITS.snippetTokens}, MinWords=${Math.ceil(TEAM_READ_LIMITS.snippetTokens / 2)}, ShortWord=0, MaxFragments=1, FragmentDelimiter=…`;

interface Row {
  id: number;
  channel: string;
  author: string | null;
  body: string;
  truncated?: boolean;
  reply_to: number | null;
  created_at: number;
}

/** A database row as a message (`truncated` kept when the row has it). */
export const pgToMessage = (r: Row): PageMessage => {
  const m: PageMessage = { id: r.id, channel: r.channel, author: r.author, body: r.body, reply_to: r.reply_to, created_at: r.created_at };
  if (r.truncated !== undefined) m.truncated = r.truncated;
  return m;
};

async function requireChannel(db: Queryable, name: string): Promise<number> {
  const row = (await db.query<{ id: number }>(`SELECT id FROM channels WHERE name = $1`, [name.startsWith('#') ? name.slice(1) : name])).rows[0];
  if (row === undefined) throw new TeamError('NOT_FOUND', `No channel named ${JSON.stringify(name)}. Channels are created by their first message (message_send).`);
  return row.id;
}

/** The messages table's queries; each takes the pool or a transaction's client. */
export const pgMessages = {
  /** The channel's id, created when absent. Call inside a write transaction. */
  async ensureChannel(db: Queryable, name: string, at: number): Promise<number> {
    const bare = checkChannelName(name);
    const found = (await db.query<{ id: number }>(`SELECT id FROM channels WHERE name = $1`, [bare])).rows[0];
    return found?.id ?? (await db.query<{ id: number }>(`INSERT INTO channels (name, created_at) VALUES ($1, $2) RETURNING id`, [bare, at])).rows[0]!.id;
  },

  /** Check every input first, then write the message and its inbox rows. Call inside a write transaction. */
  async send(db: Queryable, author: Member | null, o: SendOptions): Promise<Message> {
    const { channel, recipients: names } = checkSendInput(o);
    const recipients: Member[] = [];
    for (const name of names) recipients.push(await pgMembers.requireActive(db, name, 'to'));
    if (o.replyTo !== undefined && (await db.query(`SELECT 1 FROM messages WHERE id = $1`, [o.replyTo])).rowCount === 0) {
      throw new TeamError('NOT_FOUND', `\`reply_to\`: no message ${o.replyTo}.`);
    }
    const at = o.at ?? Date.now();
    const channelId = await pgMessages.ensureChannel(db, channel, at);
    const id = (
      await db.query<{ id: number }>(`INSERT INTO messages (channel_id, author_id, body, reply_to, created_at) VALUES ($1, $2, $3, $4, $5) RETURNING id`, [
        channelId,
        author?.id ?? null,
        o.body,
        o.replyTo ?? null,
        at,
      ])
    ).rows[0]!.id;
    if (recipients.length > 0) {
      await db.query(`INSERT INTO inbox (member_id, message_id) SELECT r, $2 FROM unnest($1::bigint[]) AS r ON CONFLICT DO NOTHING`, [recipients.map((r) => r.id), id]);
    }
    return { id, channel, author: author?.name ?? null, body: o.body, reply_to: o.replyTo ?? null, created_at: at };
  },

  async get(db: Queryable, id: number): Promise<Message> {
    const r = (await db.query<Row>(`SELECT m.id, c.name AS channel, a.name AS author, m.body, m.reply_to, m.created_at FROM ${PG_MESSAGE_FROM} WHERE m.id = $1`, [id])).rows[0];
    if (r === undefined) throw new TeamError('NOT_FOUND', `No message ${id}.`);
    return pgToMessage(r);
  },

  async history(db: Queryable, channel: string, after: TimeKey | undefined, limit: number): Promise<Page<PageMessage>> {
    const cid = await requireChannel(db, channel);
    const rows =
      after === undefined
        ? (await db.query<Row>(`SELECT ${PG_PAGE_COLUMNS} FROM ${PG_MESSAGE_FROM} WHERE m.channel_id = $1 ORDER BY m.created_at DESC, m.id DESC LIMIT $2`, [cid, limit + 1])).rows
        : (
            await db.query<Row>(
              `SELECT ${PG_PAGE_COLUMNS} FROM ${PG_MESSAGE_FROM} WHERE m.channel_id = $1 AND (m.created_at, m.id) < ($2, $3) ORDER BY m.created_at DESC, m.id DESC LIMIT $4`,
              [cid, after.at, after.id, limit + 1],
            )
          ).rows;
    return pageOf(rows.map(pgToMessage), limit);
  },

  async lastId(db: Queryable): Promise<number> {
    return (await db.query<{ id: number | null }>(`SELECT max(id) AS id FROM messages`)).rows[0]?.id ?? 0;
  },

  /**
   * One statement per window: the newest `searchWindowMatches + 1` matches with id ≤ `hi` (their
   * oldest is the window's exclusive low end when there are that many), ranked, the keyset
   * applied, `limit + 1` rows kept. Then the page's rows and snippets.
   */
  async search(db: Queryable, q: string, channel: string | undefined, from: SearchPos, limit: number): Promise<SearchPage<MessageHit & { truncated?: boolean }>> {
    const match = toFtsQuery(q);
    const cid = channel === undefined ? undefined : await requireChannel(db, channel);
    const window = TEAM_READ_LIMITS.searchWindowMatches;
    let { hi, after } = from;
    let windowed = false;
    for (let windows = 1; ; windows++) {
      const params: unknown[] = [match, hi, window + 1, limit + 1];
      const conds: string[] = [`w.id > b.lo`];
      if (cid !== undefined) conds.push(`w.channel_id = $${params.push(cid)}`);
      let keyset = '';
      if (after !== undefined) keyset = `WHERE (r.score, r.id) > ($${params.push(after.score)}::real, $${params.push(after.id)}::bigint)`;
      const res = await db.query<{ lo: number; id: number | null; score: number | null }>(
        `WITH w AS MATERIALIZED (
           SELECT id, channel_id, fts FROM messages WHERE fts @@ ${tsQuery(1)} AND id <= $2 ORDER BY id DESC LIMIT $3
         ), b AS (SELECT CASE WHEN count(*) >= $3 THEN min(id) ELSE 0 END AS lo FROM w)
         SELECT b.lo, p.id, p.score FROM b LEFT JOIN LATERAL (
           SELECT r.id, r.score FROM (SELECT w.id, -ts_rank(w.fts, ${tsQuery(1)}) AS score FROM w WHERE ${conds.join(' AND ')}) r
           ${keyset} ORDER BY r.score, r.id LIMIT $4
         ) p ON true`,
        params,
      );
      const lo = res.rows[0]?.lo ?? 0;
      windowed ||= lo > 0;
      const ranked = res.rows.filter((r) => r.id !== null).map((r) => ({ id: r.id!, score: r.score! }));
      const { page, next } = windowPage(ranked, limit, hi, lo);
      if (nextWindow(page, next, windows)) {
        hi = next.hi;
        after = undefined;
        continue;
      }
      return { rows: await hydrate(db, match, page), more: next !== undefined, hi, windowed, ...(next === undefined ? {} : { next }) };
    }
  },
};

/** The page's rows and snippets, in rank order. */
async function hydrate(db: Queryable, match: string, page: { id: number; score: number }[]): Promise<(MessageHit & { truncated?: boolean })[]> {
  if (page.length === 0) return [];
  const rows = (
    await db.query<Row & { snippet: string }>(
      `SELECT ${PG_PAGE_COLUMNS}, ts_headline(${TS_CONFIG}, m.body, ${tsQuery(1)}, '${HEADLINE_OPTIONS}') AS snippet FROM ${PG_MESSAGE_FROM} WHERE m.id = ANY($2::bigint[])`,
      [match, page.map((r) => r.id)],
    )
  ).rows;
  const byId = new Map(rows.map((r) => [r.id, r]));
  return page.flatMap((r) => {
    const row = byId.get(r.id);
    return row === undefined ? [] : [{ ...pgToMessage(row), score: r.score, snippet: row.snippet }];
  });
}
