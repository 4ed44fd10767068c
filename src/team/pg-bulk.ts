/**
 * An import batch's messages written to PostgreSQL together, where one statement per row would
 * cost a round trip each: their ids taken from the sequence in line order, one multi-row insert
 * (`unnest` of arrays), one check of their `reply_to`s, one insert of their inbox rows. A reply
 * must name an earlier message: one already stored, or one of an earlier line (a smaller id).
 */
import type { MessageToWrite } from './dialect.js';
import { atLine } from './import.js';
import { q, type Rule } from './rule.js';
import { noReplyTarget } from './service-errors.js';

const NEXT_IDS = `SELECT nextval(pg_get_serial_sequence('messages', 'id')) AS id FROM generate_series(1, $1::int)`;
const INSERT = `INSERT INTO messages (id, channel_id, author_id, body, reply_to, created_at) OVERRIDING SYSTEM VALUE
  SELECT * FROM unnest($1::bigint[], $2::bigint[], $3::bigint[], $4::text[], $5::bigint[], $6::bigint[])`;
const MISSING = `SELECT r FROM unnest($1::bigint[]) AS r WHERE NOT EXISTS (SELECT 1 FROM messages WHERE id = r)`;
const INBOX = `INSERT INTO inbox (member_id, message_id) SELECT * FROM unnest($1::bigint[], $2::bigint[]) ON CONFLICT DO NOTHING`;

/** Write `batch` (in a write holding the store's lock, so the sequence's ids follow line order). */
export function* writeMessages(batch: readonly MessageToWrite[]): Rule<void> {
  const ids = (yield* q.all<{ id: number }>(NEXT_IDS, [batch.length])).map((r) => Number(r.id)).sort((a, b) => a - b);
  // A reply names an earlier message: one of an earlier line, never a later one.
  for (const [i, m] of batch.entries()) {
    if (m.replyTo !== null && m.replyTo >= ids[i]!) throw atLine(m.no, noReplyTarget(m.replyTo));
  }
  yield* q.run(INSERT, [ids, batch.map((m) => m.channelId), batch.map((m) => m.authorId), batch.map((m) => m.body), batch.map((m) => m.replyTo), batch.map((m) => m.at)]);
  const replies = batch.filter((m) => m.replyTo !== null).map((m) => m.replyTo!);
  if (replies.length > 0) {
    const missing = new Set((yield* q.all<{ r: number }>(MISSING, [replies])).map((x) => Number(x.r)));
    const bad = batch.find((m) => m.replyTo !== null && missing.has(m.replyTo));
    if (bad !== undefined) throw atLine(bad.no, noReplyTarget(bad.replyTo!));
  }
  const inboxMembers: number[] = [];
  const inboxMessages: number[] = [];
  for (const [i, m] of batch.entries()) {
    for (const r of m.recipients) {
      inboxMembers.push(r);
      inboxMessages.push(ids[i]!);
    }
  }
  if (inboxMembers.length > 0) yield* q.run(INBOX, [inboxMembers, inboxMessages]);
}
