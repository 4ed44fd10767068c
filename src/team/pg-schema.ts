/**
 * The PostgreSQL team store's schema: migrations versioned in code (a one-row `schema_version`
 * table), applied in one transaction under the store's write lock so that replicas starting
 * together migrate once, and the startup checks that refuse a newer or foreign database. Nothing
 * here drops or rewrites existing data.
 *
 * Text search: a generated `tsvector` column (`simple` configuration: lower-cased words, no
 * stemming, no stop words) over the text with punctuation turned into spaces, so words split as the
 * SQLite side's `unicode61` tokenizer splits them (`file.txt` is two words), and a GIN index. Since
 * version 2 the text is first folded as that tokenizer folds it (pg-fold.ts: `É` → `e`).
 */
import { randomBytes } from 'node:crypto';
import type pg from 'pg';
import { inTransaction } from './pg-db.js';
import { PG_INDEXED_WORDS, pgFoldFunctions } from './pg-fold.js';
import { wrapPgError } from './pg-connect.js';
import { TeamError } from './types.js';

/** The text search configuration of every `tsvector` and `tsquery` of the store. */
export const TS_CONFIG = `'simple'::regconfig`;

/** The indexed form of a text expression (kept in one place: the queries must parse alike). */
const tsv = (expr: string): string => `to_tsvector(${TS_CONFIG}, regexp_replace(${expr}, '[[:punct:]]+', ' ', 'g'))`;

/**
 * Migrations, in order: `PG_MIGRATIONS[i]` takes the schema from version `i` to `i + 1`. Never edit a
 * released one; append.
 */
export const PG_MIGRATIONS: readonly string[] = [
  `
  CREATE TABLE store_meta (key text PRIMARY KEY, value text NOT NULL);
  CREATE TABLE members (
    id bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    name text COLLATE "C" NOT NULL UNIQUE,
    name_lower text NOT NULL,
    role text NOT NULL CHECK (role IN ('owner','lead','member','agent','guest')),
    active boolean NOT NULL DEFAULT true,
    created_at bigint NOT NULL
  );
  CREATE TABLE channels (id bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY, name text COLLATE "C" NOT NULL UNIQUE, created_at bigint NOT NULL);
  CREATE TABLE messages (
    id bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    channel_id bigint NOT NULL REFERENCES channels(id),
    author_id bigint REFERENCES members(id),
    body text NOT NULL,
    reply_to bigint,
    created_at bigint NOT NULL,
    fts tsvector GENERATED ALWAYS AS (${tsv('body')}) STORED
  );
  CREATE INDEX messages_by_channel_time ON messages (channel_id, created_at DESC, id DESC);
  CREATE INDEX messages_fts ON messages USING gin (fts);
  CREATE TABLE tasks (
    id bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    title text NOT NULL,
    body text NOT NULL DEFAULT '',
    status text NOT NULL,
    priority text NOT NULL,
    assignee_id bigint REFERENCES members(id),
    created_by bigint REFERENCES members(id),
    created_at bigint NOT NULL,
    updated_at bigint NOT NULL,
    fts tsvector GENERATED ALWAYS AS (${tsv(`title || ' ' || body`)}) STORED
  );
  CREATE INDEX tasks_by_updated ON tasks (updated_at DESC, id DESC);
  CREATE INDEX tasks_by_status ON tasks (status, updated_at DESC, id DESC);
  CREATE INDEX tasks_by_assignee ON tasks (assignee_id, status, updated_at DESC, id DESC);
  CREATE INDEX tasks_fts ON tasks USING gin (fts);
  CREATE TABLE labels (name text COLLATE "C" PRIMARY KEY);
  -- updated_at is copied here (kept by the task writes) so that a label filter pages by one index.
  CREATE TABLE task_labels (
    task_id bigint NOT NULL REFERENCES tasks(id),
    label text COLLATE "C" NOT NULL REFERENCES labels(name),
    updated_at bigint NOT NULL,
    PRIMARY KEY (task_id, label)
  );
  CREATE INDEX task_labels_by_label ON task_labels (label, updated_at DESC, task_id DESC);
  CREATE TABLE comments (
    id bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    task_id bigint NOT NULL REFERENCES tasks(id),
    author_id bigint REFERENCES members(id),
    body text NOT NULL,
    created_at bigint NOT NULL
  );
  CREATE INDEX comments_by_task_time ON comments (task_id, created_at DESC, id DESC);
  -- The continuation inbox: one row per (recipient, message) until acked.
  CREATE TABLE inbox (
    member_id bigint NOT NULL REFERENCES members(id),
    message_id bigint NOT NULL REFERENCES messages(id),
    PRIMARY KEY (member_id, message_id)
  );
  CREATE TABLE inbox_acked (member_id bigint PRIMARY KEY REFERENCES members(id), through_id bigint NOT NULL);
  `,
  // 2: accents fold as on SQLite. The columns are rebuilt (a generated column's expression cannot
  // be altered), which rewrites the tables once.
  `${pgFoldFunctions()}
  ALTER TABLE messages DROP COLUMN fts;
  ALTER TABLE messages ADD COLUMN fts tsvector GENERATED ALWAYS AS (${PG_INDEXED_WORDS('body')}) STORED;
  CREATE INDEX messages_fts ON messages USING gin (fts);
  ALTER TABLE tasks DROP COLUMN fts;
  ALTER TABLE tasks ADD COLUMN fts tsvector GENERATED ALWAYS AS (${PG_INDEXED_WORDS(`title || ' ' || body`)}) STORED;
  CREATE INDEX tasks_fts ON tasks USING gin (fts);
  `,
];

/** The schema version this program writes. */
export const PG_SCHEMA_VERSION = PG_MIGRATIONS.length;

/** The schema's version, 0 when the database holds no team store (`null`: it holds other tables). */
async function versionOf(db: pg.ClientBase): Promise<number | null> {
  const has = await db.query<{ t: string | null }>(`SELECT to_regclass('schema_version')::text AS t`);
  if (has.rows[0]?.t == null) {
    const other = await db.query(`SELECT 1 FROM pg_tables WHERE schemaname = current_schema() LIMIT 1`);
    return other.rowCount === 0 ? 0 : null;
  }
  const v = await db.query<{ version: number }>(`SELECT version FROM schema_version`);
  return v.rows[0]?.version ?? 0;
}

/**
 * Check and migrate the database behind `pool`; returns the store id. `label` names the store in
 * errors. Throws {@link TeamError}: STORE_NEWER_SCHEMA, STORE_FOREIGN, or a wrapped driver failure.
 */
export async function preparePgDatabase(pool: pg.Pool, label: string, migrating: (text: string) => void = (t) => process.stderr.write(`mcp-budget: ${t}\n`)): Promise<string> {
  try {
    return await inTransaction(pool, async (db) => {
      const version = await versionOf(db);
      if (version === null) {
        throw new TeamError('STORE_FOREIGN', `The database ${label} holds tables but no team store; it was left as it is. Name an empty database (or one this program created) in \`--team-db\`.`);
      }
      if (version > PG_SCHEMA_VERSION) {
        throw new TeamError(
          'STORE_NEWER_SCHEMA',
          `The team store ${label} has schema version ${version}, newer than this program's ${PG_SCHEMA_VERSION}; upgrade mcp-result-budget (the database was left as it is).`,
          { version, supported: PG_SCHEMA_VERSION },
        );
      }
      if (version < PG_SCHEMA_VERSION) {
        // A migration may rewrite a table (version 2 rebuilds the search columns: about 45 s for
        // a million messages): the pool's per-statement timeout would cancel it on every start,
        // each time after holding the write lock, so it is lifted for this transaction only.
        await db.query(`SET LOCAL statement_timeout = 0`);
        if (version > 0) migrating(`The team store ${label} is being migrated from schema version ${version} to ${PG_SCHEMA_VERSION}; on a large store this takes a while (the search columns are rebuilt), and other replicas wait for it.`);
        for (let v = version; v < PG_SCHEMA_VERSION; v++) await db.query(PG_MIGRATIONS[v]!);
        if (version === 0) {
          await db.query(`CREATE TABLE schema_version (one boolean PRIMARY KEY DEFAULT true CHECK (one), version integer NOT NULL)`);
          await db.query(`INSERT INTO schema_version (version) VALUES ($1)`, [PG_SCHEMA_VERSION]);
          await db.query(`INSERT INTO store_meta (key, value) VALUES ('store_id', $1)`, [randomBytes(12).toString('base64url')]);
        } else {
          await db.query(`UPDATE schema_version SET version = $1`, [PG_SCHEMA_VERSION]);
        }
      }
      const row = await db.query<{ value: string }>(`SELECT value FROM store_meta WHERE key = 'store_id'`);
      const id = row.rows[0]?.value;
      if (id === undefined) throw new TeamError('STORE_CORRUPT', `The team store ${label} has no store id.`);
      return id;
    });
  } catch (e) {
    throw wrapPgError(e, label);
  }
}
