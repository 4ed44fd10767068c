/**
 * One batch of `team import` as a rule, run in one write transaction: every line through the same
 * checks as the tools (`checkSendInput`, the member, task and comment rules), the members and
 * channels it looks up kept for the batch. Messages, the bulk of an import, go to the dialect's
 * bulk writer when it has one (held until the batch ends or a line of another kind needs the
 * messages before it); without one each is written as it comes. A failure names its line.
 */
import type { MessageToWrite, TeamDialect } from './dialect.js';
import { atLine, unknownAuthor } from './import.js';
import type { Rule } from './rule.js';
import { noActiveMember } from './service-errors.js';
import type { MemberRules } from './service-members.js';
import type { MessageRules } from './service-messages.js';
import type { TaskRules } from './service-tasks.js';
import type { ImportOp, Member } from './types.js';
import { checkSendInput } from './validate.js';

export class ImportRules {
  constructor(
    private readonly d: TeamDialect,
    private readonly members: MemberRules,
    private readonly messages: MessageRules,
    private readonly tasks: TaskRules,
  ) {}

  /** Write `ops` (in a write). */
  *batch(ops: readonly ImportOp[]): Rule<void> {
    const { d, members, messages, tasks } = this;
    const known = new Map<string, Member | undefined>();
    const channels = new Map<string, number>();
    let pending: MessageToWrite[] = [];
    function* memberNamed(name: string): Rule<Member | undefined> {
      if (!known.has(name)) known.set(name, yield* members.get(name));
      return known.get(name);
    }
    function* author(field: string, name: string | undefined): Rule<Member | null> {
      if (name === undefined) return null;
      const m = yield* memberNamed(name);
      if (m === undefined) throw unknownAuthor(field, name);
      return m;
    }
    function* flush(): Rule<void> {
      if (pending.length === 0 || d.writeMessages === undefined) return;
      const batch = pending;
      pending = [];
      yield* d.writeMessages(batch);
    }
    for (const op of ops) {
      try {
        if (op.kind === 'message') {
          // The author first, as for every kind of line; then the tools' own checks of a send.
          const who = yield* author('author', op.author);
          const { channel, recipients } = checkSendInput(op.send);
          const to: number[] = [];
          for (const name of new Set(recipients)) {
            const m = yield* memberNamed(name);
            if (m === undefined || !m.active) throw noActiveMember('to', name);
            to.push(m.id);
          }
          const at = op.send.at ?? Date.now();
          let channelId = channels.get(channel);
          if (channelId === undefined) {
            channelId = yield* messages.ensureChannel(channel, at);
            channels.set(channel, channelId);
          }
          const m: MessageToWrite = { no: op.no, channelId, authorId: who?.id ?? null, body: op.send.body, replyTo: op.send.replyTo ?? null, at, recipients: to };
          if (d.writeMessages === undefined) yield* messages.write(m);
          else pending.push(m);
          continue;
        }
        yield* flush(); // the other kinds may refer to the messages before them
        switch (op.kind) {
          case 'member':
            yield* members.add(op.name, op.role, op.at);
            if (!op.active) yield* members.setActive(op.name, false);
            known.delete(op.name);
            break;
          case 'channel':
            channels.set(op.name.startsWith('#') ? op.name.slice(1) : op.name, yield* messages.ensureChannel(op.name, op.at));
            break;
          case 'task':
            yield* tasks.create(yield* author('created_by', op.author), op.task, op.at, op.updatedAt);
            break;
          case 'comment':
            yield* tasks.comment(yield* author('author', op.author), op.task, op.body, op.at);
            break;
        }
      } catch (e) {
        throw atLine(op.no, e);
      }
    }
    yield* flush();
  }
}
