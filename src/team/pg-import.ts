/**
 * An import batch written to PostgreSQL in one write transaction: members, channels, tasks and
 * comments one statement each (they are few), messages (the bulk) checked one by one and then
 * written together: their ids taken from the sequence in line order, one multi-row insert, one for
 * their inbox rows, one check of their `reply_to`s. Lookups of members and channels are kept for
 * the batch. The checks are the tools' own (`checkSendInput`, the task and member checks).
 */
import { atLine, unknownAuthor, type ImportOp } from './import.js';
import type { Queryable } from './pg-db.js';
import { noActiveMember } from './members.js';
import { pgMembers } from './pg-members.js';
import { pgMessages } from './pg-messages.js';
import { pgTasks } from './pg-tasks.js';
import { TeamError, type Member } from './types.js';
import { checkSendInput } from './validate.js';

interface PendingMessage {
  no: number;
  channelId: number;
  authorId: number | null;
  body: string;
  replyTo: number | null;
  at: number;
  recipients: number[];
}

export async function pgImportBatch(db: Queryable, ops: readonly ImportOp[]): Promise<void> {
  const members = new Map<string, Member | undefined>();
  const memberNamed = async (name: string): Promise<Member | undefined> => {
    if (!members.has(name)) members.set(name, await pgMembers.get(db, name));
    return members.get(name);
  };
  const author = async (field: string, name: string | undefined): Promise<Member | null> => {
    if (name === undefined) return null;
    const m = await memberNamed(name);
    if (m === undefined) throw unknownAuthor(field, name);
    return m;
  };
  const channels = new Map<string, number>();
  let pending: PendingMessage[] = [];

  const flushMessages = async (): Promise<void> => {
    if (pending.length === 0) return;
    const batch = pending;
    pending = [];
    const ids = (
      await db.query<{ id: number }>(`SELECT nextval(pg_get_serial_sequence('messages', 'id')) AS id FROM generate_series(1, $1::int)`, [batch.length])
    ).rows
      .map((r) => Number(r.id))
      .sort((a, b) => a - b);
    // A reply names an earlier message: one of an earlier line, never a later one.
    for (const [i, m] of batch.entries()) {
      if (m.replyTo !== null && m.replyTo >= ids[i]!) throw atLine(m.no, new TeamError('NOT_FOUND', `\`reply_to\`: no message ${m.replyTo}.`));
    }
    await db.query(
      `INSERT INTO messages (id, channel_id, author_id, body, reply_to, created_at) OVERRIDING SYSTEM VALUE
       SELECT * FROM unnest($1::bigint[], $2::bigint[], $3::bigint[], $4::text[], $5::bigint[], $6::bigint[])`,
      [ids, batch.map((m) => m.channelId), batch.map((m) => m.authorId), batch.map((m) => m.body), batch.map((m) => m.replyTo), batch.map((m) => m.at)],
    );
    const replies = batch.filter((m) => m.replyTo !== null).map((m) => m.replyTo!);
    if (replies.length > 0) {
      const missing = new Set(
        (await db.query<{ r: number }>(`SELECT r FROM unnest($1::bigint[]) AS r WHERE NOT EXISTS (SELECT 1 FROM messages WHERE id = r)`, [replies])).rows.map((x) => Number(x.r)),
      );
      const bad = batch.find((m) => m.replyTo !== null && missing.has(m.replyTo));
      if (bad !== undefined) throw atLine(bad.no, new TeamError('NOT_FOUND', `\`reply_to\`: no message ${bad.replyTo}.`));
    }
    const inboxMembers: number[] = [];
    const inboxMessages: number[] = [];
    for (const [i, m] of batch.entries()) {
      for (const r of m.recipients) {
        inboxMembers.push(r);
        inboxMessages.push(ids[i]!);
      }
    }
    if (inboxMembers.length > 0) {
      await db.query(`INSERT INTO inbox (member_id, message_id) SELECT * FROM unnest($1::bigint[], $2::bigint[]) ON CONFLICT DO NOTHING`, [inboxMembers, inboxMessages]);
    }
  };

  for (const op of ops) {
    try {
      if (op.kind === 'message') {
        const { channel, recipients } = checkSendInput(op.send);
        const who = await author('author', op.author);
        const to: number[] = [];
        for (const name of new Set(recipients)) {
          const m = await memberNamed(name);
          if (m === undefined || !m.active) throw noActiveMember('to', name);
          to.push(m.id);
        }
        const at = op.send.at ?? Date.now();
        let channelId = channels.get(channel);
        if (channelId === undefined) {
          channelId = await pgMessages.ensureChannel(db, channel, at);
          channels.set(channel, channelId);
        }
        pending.push({ no: op.no, channelId, authorId: who?.id ?? null, body: op.send.body, replyTo: op.send.replyTo ?? null, at, recipients: to });
        continue;
      }
      await flushMessages(); // the other kinds may refer to the messages before them
      switch (op.kind) {
        case 'member': {
          await pgMembers.add(db, op.name, op.role, op.at);
          if (!op.active) await pgMembers.deactivate(db, op.name);
          members.delete(op.name);
          break;
        }
        case 'channel':
          channels.set(op.name.startsWith('#') ? op.name.slice(1) : op.name, await pgMessages.ensureChannel(db, op.name, op.at));
          break;
        case 'task':
          await pgTasks.create(db, await author('created_by', op.author), op.task, op.at, op.updatedAt);
          break;
        case 'comment':
          await pgTasks.comment(db, await author('author', op.author), op.task, op.body, op.at);
          break;
      }
    } catch (e) {
      throw atLine(op.no, e);
    }
  }
  await flushMessages();
}
