/**
 * The continuation inbox of a SQLite team store: one row per (recipient, message) written with the
 * message. A read selects the member's rows oldest first (limit+1 by the primary key) and changes
 * nothing; an ack deletes the rows up to the id it names and raises the member's high-water mark,
 * so acking the same id twice changes nothing the second time.
 */
import type Database from 'better-sqlite3';
import type { InboxPage, Member } from './types.js';
import type { PageMessage } from './messages.js';
import { TEAM_READ_LIMITS } from './limits.js';

const PREFIX_CHARS = TEAM_READ_LIMITS.previewBytes;

interface Row {
  id: number;
  channel: string;
  author: string | null;
  body: string;
  truncated: number;
  reply_to: number | null;
  created_at: number;
}

export class InboxTable {
  private readonly read: Database.Statement<[number, number], Row>;
  private readonly drop: Database.Statement<[number, number]>;
  private readonly mark: Database.Statement<[number, number]>;

  constructor(db: Database.Database) {
    this.read = db.prepare(
      `SELECT m.id, c.name AS channel, a.name AS author, substr(m.body, 1, ${PREFIX_CHARS}) AS body, length(m.body) > ${PREFIX_CHARS} AS truncated,
         m.reply_to, m.created_at
       FROM inbox i JOIN messages m ON m.id = i.message_id JOIN channels c ON c.id = m.channel_id LEFT JOIN members a ON a.id = m.author_id
       WHERE i.member_id = ? ORDER BY i.message_id LIMIT ?`,
    );
    this.drop = db.prepare(`DELETE FROM inbox WHERE member_id = ? AND message_id <= ?`);
    this.mark = db.prepare(
      `INSERT INTO inbox_acked (member_id, through_id) VALUES (?, ?) ON CONFLICT (member_id) DO UPDATE SET through_id = max(through_id, excluded.through_id)`,
    );
  }

  /** Undelivered messages, oldest first (message ids grow with commit order: one writer at a time). */
  readPage(member: Member, limit: number): InboxPage {
    const rows = this.read.all(member.id, limit + 1);
    const page: PageMessage[] = rows.slice(0, limit).map((r) => ({
      id: r.id,
      channel: r.channel,
      author: r.author,
      body: r.body,
      truncated: r.truncated === 1,
      reply_to: r.reply_to,
      created_at: r.created_at,
    }));
    return { rows: page, more: rows.length > limit, through: page.length === 0 ? null : page[page.length - 1]!.id };
  }

  /** Mark delivered through `through`. Call inside a transaction. */
  ack(member: Member, through: number): number {
    const n = this.drop.run(member.id, through).changes;
    this.mark.run(member.id, through);
    return n;
  }
}
