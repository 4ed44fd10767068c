/**
 * The PostgreSQL engine of {@link TeamStore}: a small connection pool; reads on the pool, every
 * mutation in one transaction holding the store's write lock (pg-db.ts), its checks first, so a
 * refused call writes nothing. The store id lives in the database, so every replica serving the
 * same database binds its cursors to the same store and accepts the others' cursors.
 */
import pg from 'pg';
import type { PageMessage } from './messages.js';
import { pgConfig, pgLabel, wrapPgError } from './pg-connect.js';
import { inTransaction, type Queryable } from './pg-db.js';
import type { ImportOp } from './import.js';
import { pgImportBatch } from './pg-import.js';
import { pgInbox } from './pg-inbox.js';
import { pgMembers } from './pg-members.js';
import { pgMessages } from './pg-messages.js';
import { preparePgDatabase } from './pg-schema.js';
import { pgTasks } from './pg-tasks.js';
import type { PageTask } from './tasks.js';
import type { Comment, InboxPage, Member, Message, MessageHit, NewTask, Page, RankKey, Role, SearchPage, SearchPos, SendOptions, Task, TaskChanges, TaskFilter, TaskHit, TeamStore, TimeKey } from './types.js';

export class PgTeamStore implements TeamStore {
  private constructor(
    /** The pool (for bulk loads and tests). */
    readonly pool: pg.Pool,
    readonly storeId: string,
    /** The database as errors name it (no password). */
    readonly label: string,
  ) {}

  /**
   * Connect to the database `target` names (a `postgres://` URL or libpq keywords), migrate it,
   * and check that it is a team store of a version this program knows. Throws `TeamError`.
   */
  static async open(target: string): Promise<PgTeamStore> {
    const label = pgLabel(target);
    const pool = new pg.Pool(pgConfig(target));
    // An idle connection the server drops must not crash the process; the next query reconnects.
    pool.on('error', () => undefined);
    try {
      return new PgTeamStore(pool, await preparePgDatabase(pool, label), label);
    } catch (e) {
      await pool.end().catch(() => undefined);
      throw wrapPgError(e, label);
    }
  }

  private async read<T>(fn: (db: Queryable) => Promise<T>): Promise<T> {
    try {
      return await fn(this.pool);
    } catch (e) {
      throw wrapPgError(e, this.label);
    }
  }

  /** Run `fn` in one write transaction (the store's write lock taken first). */
  async write<T>(fn: (db: Queryable) => Promise<T>): Promise<T> {
    try {
      return await inTransaction(this.pool, fn);
    } catch (e) {
      throw wrapPgError(e, this.label);
    }
  }

  /** Write one batch of an import in one transaction (the store's write lock held), with the tools' checks. */
  async importBatch(ops: readonly ImportOp[]): Promise<void> {
    await this.write((db) => pgImportBatch(db, ops));
  }

  /** Send many messages in one transaction (bulk loads and tests). */
  async sendMany(author: Member | null, messages: readonly SendOptions[]): Promise<number> {
    return this.write(async (db) => {
      for (const m of messages) await pgMessages.send(db, author, m);
      return messages.length;
    });
  }

  isEmpty(): Promise<boolean> {
    return this.read((db) => pgMembers.isEmpty(db));
  }
  addFirstOwner(name: string): Promise<boolean> {
    return this.write(async (db) => (await pgMembers.isEmpty(db)) && (await pgMembers.add(db, name, 'owner'), true));
  }
  addMember(name: string, role: Role): Promise<Member> {
    return this.write((db) => pgMembers.add(db, name, role));
  }
  getMember(name: string): Promise<Member | undefined> {
    return this.read((db) => pgMembers.get(db, name));
  }
  setRole(name: string, role: Role): Promise<Member> {
    return this.write((db) => pgMembers.setRole(db, name, role));
  }
  reactivate(name: string): Promise<Member> {
    return this.write((db) => pgMembers.setActive(db, name, true));
  }
  deactivate(name: string): Promise<Member> {
    return this.write((db) => pgMembers.deactivate(db, name));
  }
  listMembers(after: string | undefined, limit: number): Promise<Page<Member>> {
    return this.read((db) => pgMembers.list(db, after, limit));
  }
  memberOptions(viewer: Member, q: string | undefined, after: string | undefined, limit: number): Promise<Page<Member>> {
    return this.read((db) => pgMembers.options(db, viewer, q, after, limit));
  }

  async createChannel(name: string): Promise<void> {
    await this.write((db) => pgMessages.ensureChannel(db, name, Date.now()));
  }
  sendMessage(author: Member, options: SendOptions): Promise<Message> {
    return this.write((db) => pgMessages.send(db, author, options));
  }
  getMessage(id: number): Promise<Message> {
    return this.read((db) => pgMessages.get(db, id));
  }
  history(channel: string, after: TimeKey | undefined, limit: number): Promise<Page<PageMessage>> {
    return this.read((db) => pgMessages.history(db, channel, after, limit));
  }
  searchMessages(q: string, channel: string | undefined, from: SearchPos, limit: number): Promise<SearchPage<MessageHit & { truncated?: boolean }>> {
    return this.read((db) => pgMessages.search(db, q, channel, from, limit));
  }
  lastMessageId(): Promise<number> {
    return this.read((db) => pgMessages.lastId(db));
  }

  createTask(author: Member, task: NewTask, at?: number): Promise<Task> {
    return this.write((db) => pgTasks.create(db, author, task, at));
  }
  updateTask(_author: Member, id: number, changes: TaskChanges, check?: (before: Task) => void): Promise<Task> {
    return this.write((db) => pgTasks.update(db, id, changes, check));
  }
  getTask(id: number): Promise<Task> {
    return this.read((db) => pgTasks.get(db, id));
  }
  listTasks(filter: TaskFilter, after: TimeKey | undefined, limit: number): Promise<Page<PageTask>> {
    return this.read((db) => pgTasks.list(db, filter, after, limit));
  }
  searchTasks(q: string, status: Task['status'] | undefined, snapshot: number, after: RankKey | undefined, withIdentity: boolean, limit: number): Promise<Page<TaskHit & { truncated: boolean }>> {
    return this.read((db) => pgTasks.search(db, q, status, snapshot, after, withIdentity, limit));
  }
  lastTaskId(): Promise<number> {
    return this.read((db) => pgTasks.lastId(db));
  }
  addComment(author: Member, taskId: number, body: string, at?: number): Promise<Comment> {
    return this.write((db) => pgTasks.comment(db, author, taskId, body, at));
  }
  comments(taskId: number, after: TimeKey | undefined, limit: number): Promise<Page<Comment>> {
    return this.read((db) => pgTasks.comments(db, taskId, after, limit));
  }
  labels(after: string | undefined, limit: number): Promise<Page<string>> {
    return this.read((db) => pgTasks.labels(db, after, limit));
  }

  readInbox(member: Member, limit: number): Promise<InboxPage> {
    return this.read((db) => pgInbox.readPage(db, member, limit));
  }
  ackInbox(member: Member, through: number): Promise<number> {
    return this.write((db) => pgInbox.ack(db, member, through));
  }

  private closed = false;
  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    await this.pool.end();
  }
}
