/**
 * Channels and messages of a SQLite team store: sending (with the continuation inbox rows of its
 * recipients, in the same transaction), the chronology by `(channel_id, created_at DESC, id DESC)`
 * and ranked search over the FTS5 external-content index. Pages carry a body prefix; `getMessage`
 * the whole body.
 */
import type Database from 'better-sqlite3';
import { toFtsQuery } from './fts-query.js';
import { TEAM_INPUT_CAPS, TEAM_READ_LIMITS } from './limits.js';
import type { MemberTable } from './members.js';
import { TeamError, type Member, type Message, type MessageHit, type Page, type RankKey, type SearchPage, type SearchPos, type SendOptions, type TimeKey } from './types.js';
import { checkChannelName, checkSendInput } from './validate.js';
import { nextWindow, windowPage } from './search-window.js';

/** Characters of a body a page row carries (the tool cuts it to its byte preview). */
const PREFIX_CHARS = TEAM_READ_LIMITS.previewBytes;

/** Columns of a message row, with the body as a prefix (`truncated` says whether it was cut). */
const PAGE_COLUMNS = `m.id, c.name AS channel, a.name AS author, substr(m.body, 1, ${PREFIX_CHARS}) AS body,
  length(m.body) > ${PREFIX_CHARS} AS truncated, m.reply_to, m.created_at`;
const FROM = `messages m JOIN channels c ON c.id = m.channel_id LEFT JOIN members a ON a.id = m.author_id`;

interface Row {
  id: number;
  channel: string;
  author: string | null;
  body: string;
  truncated?: number;
  reply_to: number | null;
  created_at: number;
}

/** A message row; `truncated` is set when `body` is only a prefix. */
export type PageMessage = Message & { truncated?: boolean };

const toMessage = (r: Row): PageMessage => {
  const m: PageMessage = { id: r.id, channel: r.channel, author: r.author, body: r.body, reply_to: r.reply_to, created_at: r.created_at };
  if (r.truncated !== undefined) m.truncated = r.truncated === 1;
  return m;
};

export class MessageTable {
  private readonly channelId: Database.Statement<[string], { id: number }>;
  private readonly insertChannel: Database.Statement<[string, number]>;
  private readonly insert: Database.Statement<[number, number | null, string, number | null, number]>;
  private readonly insertInbox: Database.Statement<[number, number]>;
  private readonly exists: Database.Statement<[number], { id: number }>;
  private readonly historyFirst: Database.Statement<[number, number], Row>;
  private readonly historyAfter: Database.Statement<[number, number, number, number], Row>;
  private readonly byId: Database.Statement<[number], Row>;
  private readonly maxId: Database.Statement<[], { id: number | null }>;

  constructor(
    private readonly db: Database.Database,
    private readonly members: MemberTable,
  ) {
    this.channelId = db.prepare(`SELECT id FROM channels WHERE name = ?`);
    this.insertChannel = db.prepare(`INSERT INTO channels (name, created_at) VALUES (?, ?)`);
    this.insert = db.prepare(`INSERT INTO messages (channel_id, author_id, body, reply_to, created_at) VALUES (?, ?, ?, ?, ?)`);
    this.insertInbox = db.prepare(`INSERT OR IGNORE INTO inbox (member_id, message_id) VALUES (?, ?)`);
    this.exists = db.prepare(`SELECT id FROM messages WHERE id = ?`);
    this.historyFirst = db.prepare(`SELECT ${PAGE_COLUMNS} FROM ${FROM} WHERE m.channel_id = ? ORDER BY m.created_at DESC, m.id DESC LIMIT ?`);
    this.historyAfter = db.prepare(
      `SELECT ${PAGE_COLUMNS} FROM ${FROM} WHERE m.channel_id = ? AND (m.created_at, m.id) < (?, ?) ORDER BY m.created_at DESC, m.id DESC LIMIT ?`,
    );
    this.byId = db.prepare(`SELECT m.id, c.name AS channel, a.name AS author, m.body, m.reply_to, m.created_at FROM ${FROM} WHERE m.id = ?`);
    this.maxId = db.prepare(`SELECT max(id) AS id FROM messages`);
  }

  /** The channel's id, or NOT_FOUND. */
  requireChannel(name: string): number {
    const row = this.channelId.get(name.startsWith('#') ? name.slice(1) : name);
    if (row === undefined) throw new TeamError('NOT_FOUND', `No channel named ${JSON.stringify(name)}. Channels are created by their first message (message_send).`);
    return row.id;
  }

  /** The channel's id, created when absent. Call inside a transaction. */
  ensureChannel(name: string, at: number): number {
    const bare = checkChannelName(name);
    return this.channelId.get(bare)?.id ?? Number(this.insertChannel.run(bare, at).lastInsertRowid);
  }

  /** Check every input first, then write the message and its inbox rows. Call inside a transaction. */
  send(author: Member | null, o: SendOptions): Message {
    const { channel, recipients: names } = checkSendInput(o);
    const recipients = names.map((name) => this.members.requireActive(name, 'to'));
    if (o.replyTo !== undefined && this.exists.get(o.replyTo) === undefined) throw new TeamError('NOT_FOUND', `\`reply_to\`: no message ${o.replyTo}.`);
    const at = o.at ?? Date.now();
    const channelId = this.ensureChannel(channel, at);
    const id = Number(this.insert.run(channelId, author?.id ?? null, o.body, o.replyTo ?? null, at).lastInsertRowid);
    for (const r of recipients) this.insertInbox.run(r.id, id);
    return { id, channel, author: author?.name ?? null, body: o.body, reply_to: o.replyTo ?? null, created_at: at };
  }

  get(id: number): Message {
    const r = this.byId.get(id);
    if (r === undefined) throw new TeamError('NOT_FOUND', `No message ${id}.`);
    return toMessage(r);
  }

  history(channel: string, after: TimeKey | undefined, limit: number): Page<PageMessage> {
    const cid = this.requireChannel(channel);
    const rows = after === undefined ? this.historyFirst.all(cid, limit + 1) : this.historyAfter.all(cid, after.at, after.id, limit + 1);
    return { rows: rows.slice(0, limit).map(toMessage), more: rows.length > limit };
  }

  lastId(): number {
    return this.maxId.get()?.id ?? 0;
  }

  /**
   * The score of the cursor's row as the index scores it now. bm25 reads corpus statistics (row
   * count, average length, rows per term) that change as messages arrive; a change of a term's
   * weight scales every score alike, so comparing against the row's current score keeps the order
   * of the rows already ranked. The cursor's own score is the fallback when the row is gone.
   * `rowid + 0`: with `rowid = ?` pushed into FTS5, bm25 weighs the term as if only that row
   * matched (a different score); filtering after the match scores it as the page query does.
   */
  private anchorScore(match: string, after: RankKey, lo: number, hi: number): number {
    const row = this.db
      .prepare<[string, number, number, number], { score: number }>(
        `SELECT bm25(messages_fts) AS score FROM messages_fts WHERE messages_fts MATCH ? AND rowid > ? AND rowid <= ? AND rowid + 0 = ?`,
      )
      .get(match, lo, hi, after.id);
    return row?.score ?? after.score;
  }

  /** The low end (exclusive) of the window ending at `hi`: the id of the next older match, or 0. */
  private windowLow(match: string, hi: number): number {
    const row = this.db
      .prepare<[string, number, number], { id: number }>(`SELECT rowid AS id FROM messages_fts WHERE messages_fts MATCH ? AND rowid <= ? ORDER BY rowid DESC LIMIT 1 OFFSET ?`)
      .get(match, hi, TEAM_READ_LIMITS.searchWindowMatches);
    return row?.id ?? 0;
  }

  /**
   * Ranked by (bm25, id) within a window of the newest `searchWindowMatches` matches with
   * id ≤ `from.hi`; the next window starts below it. Reads limit+1 rows of the window (rank and
   * keyset from the index), then the page's rows and snippets only.
   */
  search(q: string, channel: string | undefined, from: SearchPos, limit: number): SearchPage<MessageHit & { truncated?: boolean }> {
    const match = toFtsQuery(q);
    const cid = channel === undefined ? undefined : this.requireChannel(channel);
    let { hi, after } = from;
    let windowed = false;
    for (let windows = 1; ; windows++) {
      const lo = this.windowLow(match, hi);
      windowed ||= lo > 0;
      const where = [`messages_fts MATCH ?`, `messages_fts.rowid > ?`, `messages_fts.rowid <= ?`];
      const params: unknown[] = [match, lo, hi];
      if (after !== undefined) {
        where.push(`(bm25(messages_fts), messages_fts.rowid) > (?, ?)`);
        params.push(this.anchorScore(match, after, lo, hi), after.id);
      }
      if (cid !== undefined) {
        where.push(`EXISTS (SELECT 1 FROM messages WHERE id = messages_fts.rowid AND channel_id = ?)`);
        params.push(cid);
      }
      const ranked = this.db
        .prepare<unknown[], { id: number; score: number }>(
          `SELECT messages_fts.rowid AS id, bm25(messages_fts) AS score FROM messages_fts WHERE ${where.join(' AND ')} ORDER BY score, id LIMIT ?`,
        )
        .all(...params, limit + 1);
      const { page, next } = windowPage(ranked, limit, hi, lo);
      if (nextWindow(page, next, windows)) {
        hi = next.hi;
        after = undefined;
        continue;
      }
      return { rows: this.hydrate(match, page), more: next !== undefined, hi, windowed, ...(next === undefined ? {} : { next }) };
    }
  }

  /** The page's rows and snippets, in rank order. */
  private hydrate(match: string, page: { id: number; score: number }[]): (MessageHit & { truncated?: boolean })[] {
    if (page.length === 0) return [];
    const ids = page.map((r) => r.id);
    const marks = ids.map(() => '?').join(',');
    const rows = new Map(this.db.prepare<unknown[], Row>(`SELECT ${PAGE_COLUMNS} FROM ${FROM} WHERE m.id IN (${marks})`).all(...ids).map((r) => [r.id, r]));
    const snippets = new Map(
      this.db
        .prepare<unknown[], { id: number; s: string }>(
          `SELECT rowid AS id, snippet(messages_fts, 0, '[', ']', '…', ${TEAM_READ_LIMITS.snippetTokens}) AS s FROM messages_fts WHERE messages_fts MATCH ? AND rowid IN (${marks})`,
        )
        .all(match, ...ids)
        .map((r) => [r.id, r.s]),
    );
    return page.flatMap((r) => {
      const row = rows.get(r.id);
      return row === undefined ? [] : [{ ...toMessage(row), score: r.score, snippet: snippets.get(r.id) ?? '' }];
    });
  }
}
