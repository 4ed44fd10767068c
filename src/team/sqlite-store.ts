/**
 * The SQLite engine of {@link TeamStore}: one better-sqlite3 connection in WAL mode. Calls are
 * synchronous underneath (the async signatures are the interface's); every mutation runs in one
 * `BEGIN IMMEDIATE` transaction, its checks first, so a refused call writes nothing.
 */
import type Database from 'better-sqlite3';
import { InboxTable } from './inbox.js';
import { MemberTable } from './members.js';
import { MessageTable } from './messages.js';
import { atLine, unknownAuthor, type ImportOp } from './import.js';
import { openDatabase } from './sqlite-schema.js';
import { TaskTable } from './tasks.js';
import type { Comment, InboxPage, Member, Message, NewTask, Page, RankKey, Role, SearchPos, SendOptions, Task, TaskChanges, TaskFilter, TeamStore, TimeKey } from './types.js';
import type { PageMessage } from './messages.js';
import type { PageTask } from './tasks.js';

export class SqliteTeamStore implements TeamStore {
  readonly members: MemberTable;
  readonly messages: MessageTable;
  readonly tasks: TaskTable;
  readonly inbox: InboxTable;

  private constructor(
    /** The connection (for import batches and tests). */
    readonly db: Database.Database,
    readonly storeId: string,
  ) {
    this.members = new MemberTable(db);
    this.messages = new MessageTable(db, this.members);
    this.tasks = new TaskTable(db, this.members);
    this.inbox = new InboxTable(db);
  }

  /** Open or create the store at `file` (`label` names it in errors). Throws `TeamError`. */
  static open(file: string, label = file): SqliteTeamStore {
    const { db, storeId } = openDatabase(file, label);
    return new SqliteTeamStore(db, storeId);
  }

  /** Run `fn` in one write transaction (taken up front: BEGIN IMMEDIATE). */
  /** Write one batch of an import in one transaction, each line through the same checks as the tools. */
  async importBatch(ops: readonly ImportOp[]): Promise<void> {
    const authors = new Map<string, Member>();
    const author = (field: string, name: string | undefined): Member | null => {
      if (name === undefined) return null;
      let m = authors.get(name);
      if (m === undefined) {
        m = this.members.get(name);
        if (m === undefined) throw unknownAuthor(field, name);
        authors.set(name, m);
      }
      return m;
    };
    this.write(() => {
      for (const op of ops) {
        try {
          switch (op.kind) {
            case 'member':
              this.members.add(op.name, op.role, op.at);
              if (!op.active) this.members.deactivate(op.name);
              break;
            case 'channel':
              this.messages.ensureChannel(op.name, op.at);
              break;
            case 'message':
              this.messages.send(author('author', op.author), op.send);
              break;
            case 'task':
              this.tasks.create(author('created_by', op.author), op.task, op.at, op.updatedAt);
              break;
            case 'comment':
              this.tasks.comment(author('author', op.author), op.task, op.body, op.at);
              break;
          }
        } catch (e) {
          throw atLine(op.no, e);
        }
      }
    });
  }

  write<T>(fn: () => T): T {
    return this.db.transaction(fn).immediate();
  }

  async isEmpty(): Promise<boolean> {
    return this.members.isEmpty();
  }
  async addFirstOwner(name: string): Promise<boolean> {
    return this.write(() => this.members.isEmpty() && (this.members.add(name, 'owner'), true));
  }
  async addMember(name: string, role: Role): Promise<Member> {
    return this.write(() => this.members.add(name, role));
  }
  async getMember(name: string): Promise<Member | undefined> {
    return this.members.get(name);
  }
  async setRole(name: string, role: Role): Promise<Member> {
    return this.write(() => this.members.setRole(name, role));
  }
  async reactivate(name: string): Promise<Member> {
    return this.write(() => this.members.setActive(name, true));
  }
  async deactivate(name: string): Promise<Member> {
    return this.write(() => this.members.deactivate(name));
  }
  async listMembers(after: string | undefined, limit: number): Promise<Page<Member>> {
    return this.members.list(after, limit);
  }
  async memberOptions(viewer: Member, q: string | undefined, after: string | undefined, limit: number): Promise<Page<Member>> {
    return this.members.options(viewer, q, after, limit);
  }

  async createChannel(name: string): Promise<void> {
    this.write(() => this.messages.ensureChannel(name, Date.now()));
  }
  async sendMessage(author: Member, options: SendOptions): Promise<Message> {
    return this.write(() => this.messages.send(author, options));
  }
  async getMessage(id: number): Promise<Message> {
    return this.messages.get(id);
  }
  async history(channel: string, after: TimeKey | undefined, limit: number): Promise<Page<PageMessage>> {
    return this.messages.history(channel, after, limit);
  }
  async searchMessages(q: string, channel: string | undefined, from: SearchPos, limit: number) {
    return this.messages.search(q, channel, from, limit);
  }
  async lastMessageId(): Promise<number> {
    return this.messages.lastId();
  }

  async createTask(author: Member, task: NewTask, at?: number): Promise<Task> {
    return this.write(() => this.tasks.create(author, task, at));
  }
  async updateTask(_author: Member, id: number, changes: TaskChanges, check?: (before: Task) => void): Promise<Task> {
    return this.write(() => this.tasks.update(id, changes, check));
  }
  async getTask(id: number): Promise<Task> {
    return this.tasks.get(id);
  }
  async listTasks(filter: TaskFilter, after: TimeKey | undefined, limit: number): Promise<Page<PageTask>> {
    return this.tasks.list(filter, after, limit);
  }
  async searchTasks(q: string, status: Task['status'] | undefined, snapshot: number, after: RankKey | undefined, withIdentity: boolean, limit: number) {
    return this.tasks.search(q, status, snapshot, after, withIdentity, limit);
  }
  async lastTaskId(): Promise<number> {
    return this.tasks.lastId();
  }
  async addComment(author: Member, taskId: number, body: string, at?: number): Promise<Comment> {
    return this.write(() => this.tasks.comment(author, taskId, body, at));
  }
  async comments(taskId: number, after: TimeKey | undefined, limit: number): Promise<Page<Comment>> {
    return this.tasks.comments(taskId, after, limit);
  }
  async labels(after: string | undefined, limit: number): Promise<Page<string>> {
    return this.tasks.labels(after, limit);
  }

  async readInbox(member: Member, limit: number): Promise<InboxPage> {
    return this.inbox.readPage(member, limit);
  }
  async ackInbox(member: Member, through: number): Promise<number> {
    return this.write(() => this.inbox.ack(member, through));
  }

  async close(): Promise<void> {
    if (this.db.open) this.db.close();
  }
}
