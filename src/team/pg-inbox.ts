/**
 * The continuation inbox of a PostgreSQL team store, with the SQLite side's rules (inbox.ts): a
 * read selects the member's rows oldest first (`limit + 1` by the primary key) and changes
 * nothing; an ack deletes the rows up to the id it names and raises the member's high-water mark.
 * Ids are in commit order (writers hold the store's write lock), so an ack never passes over a
 * message that had not committed when the page was read.
 */
import type { PageMessage } from './messages.js';
import { type Queryable } from './pg-db.js';
import { PG_MESSAGE_FROM, PG_PAGE_COLUMNS, pgToMessage } from './pg-messages.js';
import type { InboxPage, Member } from './types.js';

/** The inbox tables' queries; each takes the pool or a transaction's client. */
export const pgInbox = {
  /** Undelivered messages, oldest first. */
  async readPage(db: Queryable, member: Member, limit: number): Promise<InboxPage> {
    const rows = (
      await db.query(`SELECT ${PG_PAGE_COLUMNS} FROM inbox i JOIN ${PG_MESSAGE_FROM.replace('messages m', 'messages m ON m.id = i.message_id')} WHERE i.member_id = $1 ORDER BY i.message_id LIMIT $2`, [
        member.id,
        limit + 1,
      ])
    ).rows as Parameters<typeof pgToMessage>[0][];
    const page: PageMessage[] = rows.slice(0, limit).map((r) => ({ ...pgToMessage(r), truncated: r.truncated === true }));
    return { rows: page, more: rows.length > limit, through: page.length === 0 ? null : page[page.length - 1]!.id };
  },

  /** Mark delivered through `through`; returns how many rows were newly marked. Call inside a write transaction. */
  async ack(db: Queryable, member: Member, through: number): Promise<number> {
    const n = (await db.query(`DELETE FROM inbox WHERE member_id = $1 AND message_id <= $2`, [member.id, through])).rowCount ?? 0;
    await db.query(
      `INSERT INTO inbox_acked (member_id, through_id) VALUES ($1, $2) ON CONFLICT (member_id) DO UPDATE SET through_id = greatest(inbox_acked.through_id, excluded.through_id)`,
      [member.id, through],
    );
    return n;
  },
};
