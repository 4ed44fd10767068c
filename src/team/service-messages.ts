/**
 * Channels and messages of the team store: sending (with the continuation inbox rows of its
 * recipients, in the same transaction), the chronology by `(channel_id, created_at DESC, id DESC)`,
 * and search ranked within windows of the newest `searchWindowMatches` matches, newest window
 * first (the window policy is search-window.ts; the ranking inside a window is the dialect's).
 * Pages carry a body prefix; `get` the whole body.
 */
import type { MessageToWrite, TeamDialect } from './dialect.js';
import { toFtsQuery } from './fts-query.js';
import { pageOf, insertedId, q, withExactTimes, type Rule } from './rule.js';
import { nextWindow, windowPage, type RankedRow } from './search-window.js';
import type { MemberRules } from './service-members.js';
import { noChannel, noMessage, noReplyTarget } from './service-errors.js';
import { MESSAGE_COLUMNS, MESSAGE_FROM, MESSAGE_PAGE_COLUMNS, toMessage, type MessageRow, type PageMessage } from './service-rows.js';
import type { Member, Message, MessageHit, Page, SearchPage, SearchPos, SendOptions, TimeKey } from './types.js';
import { checkChannelName, checkSendInput } from './validate.js';

const CHANNEL_ID = `SELECT id FROM channels WHERE name = ?`;
const INSERT_CHANNEL = `INSERT INTO channels (name, created_at) VALUES (?, ?) RETURNING id`;
const EXISTS = `SELECT 1 AS one FROM messages WHERE id = ?`;
const INSERT = `INSERT INTO messages (channel_id, author_id, body, reply_to, created_at) VALUES (?, ?, ?, ?, ?) RETURNING id`;
const BY_ID = `SELECT ${MESSAGE_COLUMNS} FROM ${MESSAGE_FROM} WHERE m.id = ?`;
const HISTORY_FIRST = `SELECT ${MESSAGE_PAGE_COLUMNS} FROM ${MESSAGE_FROM} WHERE m.channel_id = ? ORDER BY m.created_at DESC, m.id DESC LIMIT ?`;
const HISTORY_AFTER = `SELECT ${MESSAGE_PAGE_COLUMNS} FROM ${MESSAGE_FROM}
  WHERE m.channel_id = ? AND (m.created_at, m.id) < (?, ?) ORDER BY m.created_at DESC, m.id DESC LIMIT ?`;
const LAST_ID = `SELECT max(id) AS id FROM messages`;
const EXACT_TIME = `SELECT CAST(created_at AS TEXT) AS k FROM messages WHERE id = ?`;

/** The inbox rows of one message, one `(member, message)` pair per recipient. */
const inboxInsert = (n: number): string => `INSERT INTO inbox (member_id, message_id) VALUES ${Array.from({ length: n }, () => '(?, ?)').join(', ')} ON CONFLICT DO NOTHING`;

export type MessageHitRow = MessageHit & { truncated?: boolean };

/** The channels and messages tables' rules. */
export class MessageRules {
  constructor(
    private readonly d: TeamDialect,
    private readonly members: MemberRules,
  ) {}

  /** The channel's id, or NOT_FOUND. */
  *requireChannel(name: string): Rule<number> {
    const row = yield* q.get<{ id: number }>(CHANNEL_ID, [name.startsWith('#') ? name.slice(1) : name]);
    if (row === undefined) throw noChannel(name);
    return row.id;
  }

  /** The channel's id, created when absent (at `at`, else when the write runs). In a write. */
  *ensureChannel(name: string, at?: number): Rule<number> {
    const bare = checkChannelName(name);
    const found = yield* q.get<{ id: number }>(CHANNEL_ID, [bare]);
    return found?.id ?? (yield* insertedId(INSERT_CHANNEL, [bare, at ?? Date.now()]));
  }

  /** Check every input first, then write the message and its inbox rows. In a write. */
  *send(author: Member | null, o: SendOptions): Rule<Message> {
    const { channel, recipients: names } = checkSendInput(o);
    const recipients: number[] = [];
    for (const name of names) recipients.push((yield* this.members.requireActive(name, 'to')).id);
    const at = o.at ?? Date.now();
    const channelId = yield* this.ensureChannel(channel, at);
    const id = yield* this.write({ no: 0, channelId, authorId: author?.id ?? null, body: o.body, replyTo: o.replyTo ?? null, at, recipients });
    return { id, channel, author: author?.name ?? null, body: o.body, reply_to: o.replyTo ?? null, created_at: at };
  }

  /**
   * Write one checked message and its inbox rows; a `replyTo` must name a message already there
   * (in an import, one of an earlier line). Returns its id. In a write.
   */
  *write(m: MessageToWrite): Rule<number> {
    if (m.replyTo !== null && (yield* q.get(EXISTS, [m.replyTo])) === undefined) throw noReplyTarget(m.replyTo);
    const id = yield* insertedId(INSERT, [m.channelId, m.authorId, m.body, m.replyTo, m.at]);
    if (m.recipients.length > 0) {
      const to = [...new Set(m.recipients)];
      yield* q.run(inboxInsert(to.length), to.flatMap((r) => [r, id]));
    }
    return id;
  }

  *get(id: number): Rule<Message> {
    const r = yield* q.get<MessageRow>(BY_ID, [id]);
    if (r === undefined) throw noMessage(id);
    return toMessage(r);
  }

  *history(channel: string, after: TimeKey | undefined, limit: number): Rule<Page<PageMessage>> {
    const cid = yield* this.requireChannel(channel);
    const rows = after === undefined ? yield* q.all<MessageRow>(HISTORY_FIRST, [cid, limit + 1]) : yield* q.all<MessageRow>(HISTORY_AFTER, [cid, after.at, after.id, limit + 1]);
    return pageOf(yield* withExactTimes(rows.map(toMessage), (m) => m.created_at, EXACT_TIME), limit);
  }

  *lastId(): Rule<number> {
    return (yield* q.get<{ id: number | null }>(LAST_ID))?.id ?? 0;
  }

  /**
   * Ranked by (score, id) within a window of the newest `searchWindowMatches` matches with
   * id ≤ `from.hi`; the next window starts below it. The dialect reads limit+1 ranked rows of the
   * window; then the page's rows and snippets only.
   */
  *search(query: string, channel: string | undefined, from: SearchPos, limit: number): Rule<SearchPage<MessageHitRow>> {
    const match = toFtsQuery(query);
    const channelId = channel === undefined ? undefined : yield* this.requireChannel(channel);
    let { hi, after } = from;
    let windowed = false;
    for (let windows = 1; ; windows++) {
      const { lo, ranked } = yield* this.d.rankMessages({ match, channelId, hi, after, rows: limit + 1 });
      windowed ||= lo > 0;
      const { page, next } = windowPage(ranked, limit, hi, lo);
      if (nextWindow(page, next, windows)) {
        hi = next.hi;
        after = undefined;
        continue;
      }
      return { rows: yield* this.hydrate(match, page), more: next !== undefined, hi, windowed, ...(next === undefined ? {} : { next }) };
    }
  }

  /** The page's rows and snippets, in rank order. */
  private *hydrate(match: string, page: readonly RankedRow[]): Rule<MessageHitRow[]> {
    if (page.length === 0) return [];
    const rows = new Map((yield* this.d.messageHits(match, page.map((r) => r.id))).map((r) => [r.id, r]));
    return page.flatMap((r) => {
      const row = rows.get(r.id);
      return row === undefined ? [] : [{ ...toMessage(row), score: r.score, snippet: row.snippet }];
    });
  }
}
