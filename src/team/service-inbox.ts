/**
 * The continuation inbox: one row per (recipient, message), written with the message. A read
 * selects the member's rows oldest first (limit+1 by the primary key) and changes nothing; an ack
 * deletes the rows up to the id it names and raises the member's high-water mark, so acking the
 * same id twice changes nothing the second time. Message ids grow in commit order (one writer at a
 * time on either engine), so an ack never passes over a message that had not committed when the
 * page was read.
 */
import { q, type Rule } from './rule.js';
import { MESSAGE_PAGE_COLUMNS, toMessage, type MessageRow } from './service-rows.js';
import type { InboxPage, Member } from './types.js';

const READ = `SELECT ${MESSAGE_PAGE_COLUMNS}
  FROM inbox i JOIN messages m ON m.id = i.message_id JOIN channels c ON c.id = m.channel_id LEFT JOIN members a ON a.id = m.author_id
  WHERE i.member_id = ? ORDER BY i.message_id LIMIT ?`;
const DROP = `DELETE FROM inbox WHERE member_id = ? AND message_id <= ?`;
/** The high-water mark only rises (a CASE: SQLite's two-argument max and PostgreSQL's greatest differ). */
const MARK = `INSERT INTO inbox_acked (member_id, through_id) VALUES (?, ?) ON CONFLICT (member_id) DO UPDATE
  SET through_id = CASE WHEN excluded.through_id > inbox_acked.through_id THEN excluded.through_id ELSE inbox_acked.through_id END`;

/** Undelivered messages of `member`, oldest first. */
export function* readInbox(member: Member, limit: number): Rule<InboxPage> {
  const rows = yield* q.all<MessageRow>(READ, [member.id, limit + 1]);
  const page = rows.slice(0, limit).map(toMessage);
  return { rows: page, more: rows.length > limit, through: page.length === 0 ? null : page[page.length - 1]!.id };
}

/** Mark delivered through `through`; how many rows were newly marked. In a write. */
export function* ackInbox(member: Member, through: number): Rule<number> {
  const n = yield* q.run(DROP, [member.id, through]);
  yield* q.run(MARK, [member.id, through]);
  return n;
}
