/**
 * Opening a SQLite team store: pragmas (WAL, busy timeout), the schema's migrations versioned in
 * code through `PRAGMA user_version`, and the startup checks that turn a corrupt, locked, foreign
 * or newer store into a clear error. Nothing here ever deletes or re-creates a file.
 */
import { randomBytes } from 'node:crypto';
import type Database from 'better-sqlite3';
import { sqliteDriver } from './drivers.js';
import { SQLITE_SETTINGS } from './limits.js';
import { TeamError } from './types.js';
import { BudgetError } from '../engine/index.js';

type Db = Database.Database;

/**
 * Migrations, in order: `MIGRATIONS[i]` takes the schema from version `i` to `i + 1`. Never edit a
 * released one; append.
 */
const MIGRATIONS: readonly string[] = [
  `
  CREATE TABLE store_meta (key TEXT PRIMARY KEY, value TEXT NOT NULL) WITHOUT ROWID;
  CREATE TABLE members (
    id INTEGER PRIMARY KEY,
    name TEXT NOT NULL UNIQUE,
    name_lower TEXT NOT NULL,
    role TEXT NOT NULL CHECK (role IN ('owner','lead','member','agent','guest')),
    active INTEGER NOT NULL DEFAULT 1,
    created_at INTEGER NOT NULL
  );
  CREATE TABLE channels (id INTEGER PRIMARY KEY, name TEXT NOT NULL UNIQUE, created_at INTEGER NOT NULL);
  CREATE TABLE messages (
    id INTEGER PRIMARY KEY AUTOINCREMENT,
    channel_id INTEGER NOT NULL REFERENCES channels(id),
    author_id INTEGER REFERENCES members(id),
    body TEXT NOT NULL,
    reply_to INTEGER,
    created_at INTEGER NOT NULL
  );
  CREATE INDEX messages_by_channel_time ON messages (channel_id, created_at DESC, id DESC);
  CREATE VIRTUAL TABLE messages_fts USING fts5 (body, content='messages', content_rowid='id', tokenize='unicode61 remove_diacritics 2');
  CREATE TRIGGER messages_ai AFTER INSERT ON messages BEGIN
    INSERT INTO messages_fts (rowid, body) VALUES (new.id, new.body);
  END;
  CREATE TRIGGER messages_ad AFTER DELETE ON messages BEGIN
    INSERT INTO messages_fts (messages_fts, rowid, body) VALUES ('delete', old.id, old.body);
  END;
  CREATE TRIGGER messages_au AFTER UPDATE OF body ON messages BEGIN
    INSERT INTO messages_fts (messages_fts, rowid, body) VALUES ('delete', old.id, old.body);
    INSERT INTO messages_fts (rowid, body) VALUES (new.id, new.body);
  END;
  CREATE TABLE tasks (
    id INTEGER PRIMARY KEY AUTOINCREMENT,
    title TEXT NOT NULL,
    body TEXT NOT NULL DEFAULT '',
    status TEXT NOT NULL,
    priority TEXT NOT NULL,
    assignee_id INTEGER REFERENCES members(id),
    created_by INTEGER REFERENCES members(id),
    created_at INTEGER NOT NULL,
    updated_at INTEGER NOT NULL
  );
  CREATE INDEX tasks_by_updated ON tasks (updated_at DESC, id DESC);
  CREATE INDEX tasks_by_status ON tasks (status, updated_at DESC, id DESC);
  CREATE INDEX tasks_by_assignee ON tasks (assignee_id, status, updated_at DESC, id DESC);
  CREATE VIRTUAL TABLE tasks_fts USING fts5 (title, body, content='tasks', content_rowid='id', tokenize='unicode61 remove_diacritics 2');
  CREATE TRIGGER tasks_ai AFTER INSERT ON tasks BEGIN
    INSERT INTO tasks_fts (rowid, title, body) VALUES (new.id, new.title, new.body);
  END;
  CREATE TRIGGER tasks_ad AFTER DELETE ON tasks BEGIN
    INSERT INTO tasks_fts (tasks_fts, rowid, title, body) VALUES ('delete', old.id, old.title, old.body);
  END;
  CREATE TRIGGER tasks_au AFTER UPDATE OF title, body ON tasks BEGIN
    INSERT INTO tasks_fts (tasks_fts, rowid, title, body) VALUES ('delete', old.id, old.title, old.body);
    INSERT INTO tasks_fts (rowid, title, body) VALUES (new.id, new.title, new.body);
  END;
  CREATE TABLE labels (name TEXT PRIMARY KEY) WITHOUT ROWID;
  -- updated_at is copied here so that a label filter pages by one index, like the others.
  CREATE TABLE task_labels (
    task_id INTEGER NOT NULL REFERENCES tasks(id),
    label TEXT NOT NULL,
    updated_at INTEGER NOT NULL,
    PRIMARY KEY (task_id, label)
  ) WITHOUT ROWID;
  CREATE INDEX task_labels_by_label ON task_labels (label, updated_at DESC, task_id DESC);
  CREATE TRIGGER tasks_touch_labels AFTER UPDATE OF updated_at ON tasks BEGIN
    UPDATE task_labels SET updated_at = new.updated_at WHERE task_id = new.id;
  END;
  CREATE TABLE comments (
    id INTEGER PRIMARY KEY AUTOINCREMENT,
    task_id INTEGER NOT NULL REFERENCES tasks(id),
    author_id INTEGER REFERENCES members(id),
    body TEXT NOT NULL,
    created_at INTEGER NOT NULL
  );
  CREATE INDEX comments_by_task_time ON comments (task_id, created_at DESC, id DESC);
  -- The continuation inbox: one row per (recipient, message) until acked.
  CREATE TABLE inbox (
    member_id INTEGER NOT NULL REFERENCES members(id),
    message_id INTEGER NOT NULL REFERENCES messages(id),
    PRIMARY KEY (member_id, message_id)
  ) WITHOUT ROWID;
  CREATE TABLE inbox_acked (member_id INTEGER PRIMARY KEY REFERENCES members(id), through_id INTEGER NOT NULL);
  `,
];

/** The schema version this program writes. */
export const SCHEMA_VERSION = MIGRATIONS.length;

function wrapOpenError(e: unknown, label: string): TeamError {
  if (e instanceof BudgetError) return e;
  const code = (e as { code?: string }).code ?? '';
  const msg = e instanceof Error ? e.message : String(e);
  if (code === 'SQLITE_NOTADB' || code.startsWith('SQLITE_CORRUPT')) {
    return new TeamError('STORE_CORRUPT', `The team store ${label} is not a readable database (${code}); it was left as it is. Restore it from a backup, or pass \`--team-db\` to use another file.`);
  }
  if (code.startsWith('SQLITE_BUSY') || code.startsWith('SQLITE_LOCKED')) {
    return new TeamError('STORE_LOCKED', `The team store ${label} is locked by another process (${code}); stop that process or try again.`);
  }
  if (code.startsWith('SQLITE_CANTOPEN') || code.startsWith('SQLITE_READONLY') || code.startsWith('SQLITE_PERM')) {
    return new TeamError('STORE_CORRUPT', `Cannot open the team store ${label} for writing (${code}).`);
  }
  return new TeamError('STORE_CORRUPT', `Cannot open the team store ${label}: ${msg}`);
}

/**
 * Open (or create) the store at `file`, apply pending migrations in one transaction, and check
 * that it is ours and not newer. `label` names the file in errors (never a host path the user did
 * not give). Throws {@link TeamError}.
 */
export function openDatabase(file: string, label: string): { db: Db; storeId: string } {
  let db: Db | undefined;
  try {
    const Driver = sqliteDriver();
    db = new Driver(file, { timeout: SQLITE_SETTINGS.busyTimeoutMs });
    db.pragma(`busy_timeout = ${SQLITE_SETTINGS.busyTimeoutMs}`);
    // The first read of the header: a file that is not a database fails here.
    const version = db.pragma('user_version', { simple: true }) as number;
    if (version > SCHEMA_VERSION) {
      throw new TeamError(
        'STORE_NEWER_SCHEMA',
        `The team store ${label} has schema version ${version}, newer than this program's ${SCHEMA_VERSION}; upgrade mcp-result-budget (the file was left as it is).`,
        { version, supported: SCHEMA_VERSION },
      );
    }
    if (version === 0) {
      const tables = db.prepare(`SELECT count(*) AS n FROM sqlite_schema`).get() as { n: number };
      if (tables.n > 0) {
        throw new TeamError('STORE_FOREIGN', `The file ${label} is a SQLite database but not a team store; it was left as it is. Pass \`--team-db\` to use another file.`);
      }
    }
    // Switching takes a lock; a store already in WAL (every one but a new file) is left alone.
    const current = db.pragma('journal_mode', { simple: true }) as string;
    const mode = current === 'wal' ? current : (db.pragma('journal_mode = WAL', { simple: true }) as string);
    if (mode !== 'wal') throw new TeamError('STORE_LOCKED', `The team store ${label} could not switch to WAL mode (got ${mode}).`);
    db.pragma('synchronous = NORMAL');
    db.pragma('foreign_keys = ON');
    db.pragma(`cache_size = -${SQLITE_SETTINGS.cacheKiB}`);
    db.pragma(`mmap_size = ${SQLITE_SETTINGS.mmapBytes}`);
    migrate(db, version);
    const row = db.prepare(`SELECT value FROM store_meta WHERE key = 'store_id'`).get() as { value: string } | undefined;
    if (row === undefined) throw new TeamError('STORE_CORRUPT', `The team store ${label} has no store id.`);
    return { db, storeId: row.value };
  } catch (e) {
    db?.close();
    throw wrapOpenError(e, label);
  }
}

function migrate(db: Db, from: number): void {
  if (from === SCHEMA_VERSION) return;
  // IMMEDIATE: take the write lock first, so two processes starting together cannot both migrate.
  db.transaction(() => {
    const now = db.pragma('user_version', { simple: true }) as number;
    for (let v = now; v < SCHEMA_VERSION; v++) db.exec(MIGRATIONS[v]!);
    if (now === 0) db.prepare(`INSERT INTO store_meta (key, value) VALUES ('store_id', ?)`).run(randomBytes(12).toString('base64url'));
    db.pragma(`user_version = ${SCHEMA_VERSION}`);
  }).immediate();
}
