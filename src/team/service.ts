/**
 * The team service: the one implementation of {@link TeamStore}, over a dialect. Each method is
 * one rule run by the dialect: reads as they come, every mutation in one write transaction with
 * its checks first, so a refused call writes nothing. The rules (service-*.ts) are written once;
 * what SQLite and PostgreSQL do differently is the dialect's (dialect.ts).
 */
import { checkStoredValues, type StoredValueWindow } from './service-check.js';
import type { TeamDialect } from './dialect.js';
import { ackInbox, readInbox } from './service-inbox.js';
import { ImportRules } from './service-import.js';
import { MemberRules } from './service-members.js';
import { MessageRules, type MessageHitRow } from './service-messages.js';
import type { PageMessage, PageTask } from './service-rows.js';
import { TaskRules, type TaskHitRow } from './service-tasks.js';
import type { Comment, ImportOp, InboxPage, Member, Message, NewTask, Page, RankKey, Role, SearchPage, SearchPos, SendOptions, Task, TaskChanges, TaskFilter, TaskStatus, TeamStore, TimeKey } from './types.js';

export class TeamService<D extends TeamDialect = TeamDialect> implements TeamStore {
  readonly storeId: string;
  private readonly members: MemberRules;
  private readonly messages: MessageRules;
  private readonly tasks: TaskRules;
  private readonly imports: ImportRules;

  constructor(
    /** The engine underneath (its connection or pool, for bulk loads and tests). */
    readonly dialect: D,
  ) {
    this.storeId = dialect.storeId;
    this.members = new MemberRules(dialect);
    this.messages = new MessageRules(dialect, this.members);
    this.tasks = new TaskRules(dialect, this.members);
    this.imports = new ImportRules(dialect, this.members, this.messages, this.tasks);
  }

  /** Write one batch of an import in one transaction, each line through the same checks as the tools. */
  importBatch(ops: readonly ImportOp[]): Promise<void> {
    return this.dialect.write(this.imports.batch(ops));
  }

  /** Send many messages in one transaction (bulk loads and tests); how many were sent. */
  sendMany(author: Member | null, messages: readonly SendOptions[]): Promise<number> {
    const rules = this.messages;
    return this.dialect.write(
      (function* () {
        for (const m of messages) yield* rules.send(author, m);
        return messages.length;
      })(),
    );
  }

  isEmpty(): Promise<boolean> {
    return this.dialect.read(this.members.isEmpty());
  }
  addFirstOwner(name: string): Promise<boolean> {
    const members = this.members;
    return this.dialect.write(
      (function* () {
        if (!(yield* members.isEmpty())) return false;
        yield* members.add(name, 'owner');
        return true;
      })(),
    );
  }
  addMember(name: string, role: Role): Promise<Member> {
    return this.dialect.write(this.members.add(name, role));
  }
  getMember(name: string): Promise<Member | undefined> {
    return this.dialect.read(this.members.get(name));
  }
  setRole(name: string, role: Role): Promise<Member> {
    return this.dialect.write(this.members.setRole(name, role));
  }
  deactivate(name: string): Promise<Member> {
    return this.dialect.write(this.members.setActive(name, false));
  }
  reactivate(name: string): Promise<Member> {
    return this.dialect.write(this.members.setActive(name, true));
  }
  listMembers(after: string | undefined, limit: number): Promise<Page<Member>> {
    return this.dialect.read(this.members.list(after, limit));
  }
  memberOptions(viewer: Member, q: string | undefined, after: string | undefined, limit: number): Promise<Page<Member>> {
    return this.dialect.read(this.members.options(viewer, q, after, limit));
  }

  async createChannel(name: string): Promise<void> {
    await this.dialect.write(this.messages.ensureChannel(name));
  }
  sendMessage(author: Member, options: SendOptions): Promise<Message> {
    return this.dialect.write(this.messages.send(author, options));
  }
  getMessage(id: number): Promise<Message> {
    return this.dialect.read(this.messages.get(id));
  }
  history(channel: string, after: TimeKey | undefined, limit: number): Promise<Page<PageMessage>> {
    return this.dialect.read(this.messages.history(channel, after, limit));
  }
  searchMessages(q: string, channel: string | undefined, from: SearchPos, limit: number): Promise<SearchPage<MessageHitRow>> {
    return this.dialect.read(this.messages.search(q, channel, from, limit));
  }
  lastMessageId(): Promise<number> {
    return this.dialect.read(this.messages.lastId());
  }

  createTask(author: Member, task: NewTask, at?: number): Promise<Task> {
    return this.dialect.write(this.tasks.create(author, task, at));
  }
  updateTask(_author: Member, id: number, changes: TaskChanges, check?: (before: Task) => void): Promise<Task> {
    return this.dialect.write(this.tasks.update(id, changes, check));
  }
  getTask(id: number): Promise<Task> {
    return this.dialect.read(this.tasks.get(id));
  }
  listTasks(filter: TaskFilter, after: TimeKey | undefined, limit: number): Promise<Page<PageTask>> {
    return this.dialect.read(this.tasks.list(filter, after, limit));
  }
  searchTasks(q: string, status: TaskStatus | undefined, snapshot: number, after: RankKey | undefined, withIdentity: boolean, limit: number): Promise<Page<TaskHitRow>> {
    return this.dialect.read(this.tasks.search(q, status, snapshot, after, withIdentity, limit));
  }
  lastTaskId(): Promise<number> {
    return this.dialect.read(this.tasks.lastId());
  }
  addComment(author: Member, taskId: number, body: string, at?: number): Promise<Comment> {
    return this.dialect.write(this.tasks.comment(author, taskId, body, at));
  }
  comments(taskId: number, after: TimeKey | undefined, limit: number): Promise<Page<Comment>> {
    return this.dialect.read(this.tasks.comments(taskId, after, limit));
  }
  labels(after: string | undefined, limit: number): Promise<Page<string>> {
    return this.dialect.read(this.tasks.labels(after, limit));
  }

  readInbox(member: Member, limit: number): Promise<InboxPage> {
    return this.dialect.read(readInbox(member, limit));
  }
  ackInbox(member: Member, through: number): Promise<number> {
    return this.dialect.write(ackInbox(member, through));
  }

  checkStoredValues(after: number, span: number, keep: number): Promise<StoredValueWindow> {
    return this.dialect.read(checkStoredValues(after, span, keep, (c) => this.dialect.hasNul(c), (c, k) => this.dialect.notKind(c, k)));
  }

  close(): Promise<void> {
    return this.dialect.close();
  }
}
