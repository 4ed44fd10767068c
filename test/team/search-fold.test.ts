/**
 * Accent and case folding is the same on both engines (src/team/pg-fold.ts): the generated table
 * equals what SQLite's tokenizer does today (regenerate with `npm run search-fold` when it fails).
 * On a database whose LC_CTYPE is `C`, PostgreSQL indexes `q<c>q` exactly as SQLite does for every
 * character of the Basic Multilingual Plane. On `C.UTF-8` it does so for every character of the
 * table, and differs only where SQLite keeps `q<c>q` one word: characters PostgreSQL's parser
 * splits words at (private use, unassigned, number forms like `²`, symbols, characters newer than
 * SQLite's Unicode tables) or lower-cases where SQLite's older tables do not. Those are counted here
 * and in the README; a new kind of difference fails.
 */
import { readFileSync } from 'node:fs';
import Database from 'better-sqlite3';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { deriveFoldTable, renderFoldTable } from '../../scripts/search-fold.js';
import { pgConfig } from '../../src/team/pg-connect.js';
import { PG_INDEXED_WORDS, pgFoldFunctions } from '../../src/team/pg-fold.js';
import { FOLD_DROP, FOLD_FROM, FOLD_SPLIT } from '../../src/team/search-fold-table.js';
import { createTestDatabase, probePostgres, type TestDatabase } from './pg-harness.js';

/** What SQLite's tokenizer makes of each text: its terms, sorted and unique (as a tsvector holds them). */
function sqliteTerms(texts: string[]): string[] {
  const db = new Database(':memory:');
  try {
    db.exec(`CREATE VIRTUAL TABLE t USING fts5(b, tokenize='unicode61 remove_diacritics 2'); CREATE VIRTUAL TABLE v USING fts5vocab(t, 'instance');`);
    const ins = db.prepare('INSERT INTO t (rowid, b) VALUES (?, ?)');
    db.transaction(() => texts.forEach((x, i) => ins.run(i + 1, x)))();
    const terms = texts.map(() => new Set<string>());
    for (const r of db.prepare('SELECT doc, term FROM v').all() as { doc: number; term: string }[]) terms[r.doc - 1]!.add(r.term);
    return terms.map((s) => [...s].sort().join(' '));
  } finally {
    db.close();
  }
}

it('the fold table is what SQLite’s tokenizer does (npm run search-fold regenerates it)', () => {
  expect(renderFoldTable(deriveFoldTable())).toBe(readFileSync(new URL('../../src/team/search-fold-table.ts', import.meta.url), 'utf8'));
});

const ready = await probePostgres();

describe.skipIf(!ready).each([{ ctype: 'C.UTF-8' }, { ctype: 'C' }] as const)('PostgreSQL folds as SQLite does (LC_CTYPE $ctype)', ({ ctype }) => {
  let db: TestDatabase;
  let client: pg.Client;

  beforeAll(async () => {
    db = await createTestDatabase(ctype === 'C' ? { ctype } : {});
    client = new pg.Client(pgConfig(db.target) as pg.ClientConfig);
    await client.connect();
    await client.query(pgFoldFunctions());
  });
  afterAll(async () => {
    await client?.end();
    await db?.drop();
  });

  async function pgTerms(texts: string[]): Promise<string[]> {
    const res = await client.query<{ w: string[] }>(`SELECT tsvector_to_array(${PG_INDEXED_WORDS('x')}) AS w FROM unnest($1::text[]) WITH ORDINALITY AS u(x, i) ORDER BY i`, [texts]);
    return res.rows.map((r) => [...r.w].sort().join(' '));
  }

  it('every character of the table, alone, between letters, and in runs, indexes alike', async () => {
    const table = [...FOLD_FROM, ...FOLD_DROP, ...FOLD_SPLIT];
    const texts = table.flatMap((c) => [`q${c}q`, c, `${c}${c}x ${c.toUpperCase()}y`]);
    // Runs mixing folded, dropped and split characters with ASCII, in a fixed pseudo-random order.
    let seed = 7;
    for (let n = 0; n < 500; n++) {
      let s = '';
      for (let k = 0; k < 12; k++) {
        seed = (seed * 1103515245 + 12345) & 0x7fffffff;
        s += seed % 4 === 0 ? ' ab'[seed % 3] : table[seed % table.length];
      }
      texts.push(s);
    }
    const [lite, post] = [sqliteTerms(texts), await pgTerms(texts)];
    const differ = texts.filter((_, i) => lite[i] !== post[i]).slice(0, 5).map((t, i) => `${JSON.stringify(t)}: [${lite[texts.indexOf(t)]}] vs [${post[texts.indexOf(t)]}]`);
    expect(differ, `${differ.length} differ; first: ${differ[0]} (${i18nHint})`).toEqual([]);
  });

  it('over the whole BMP, the only differences are the documented residual', async () => {
    const chars: string[] = [];
    for (let c = 1; c <= 0xffff; c++) if (c < 0xd800 || c > 0xdfff) chars.push(String.fromCharCode(c));
    const texts = chars.map((c) => `q${c}q`);
    const [lite, post] = [sqliteTerms(texts), await pgTerms(texts)];
    const counts = { privateUse: 0, unassigned: 0, numberForms: 0, symbols: 0, otherSplits: 0, lowerCased: 0 };
    const unexpected: string[] = [];
    chars.forEach((c, i) => {
      if (lite[i] === post[i]) return;
      const hex = c.charCodeAt(0).toString(16).padStart(4, '0');
      // SQLite keeps `q<c>q` one word in every difference; a difference of another shape is new.
      if (lite[i] !== `q${c}q` || !(post[i] === 'q' || post[i]!.split(' ').length === 1)) return void unexpected.push(`U+${hex} [${lite[i]}] vs [${post[i]}]`);
      if (post[i] !== 'q') counts.lowerCased++;
      else if (/\p{Co}/u.test(c)) counts.privateUse++;
      else if (/\p{Cn}/u.test(c)) counts.unassigned++;
      else if (/\p{No}/u.test(c)) counts.numberForms++;
      else if (/\p{So}/u.test(c)) counts.symbols++;
      else counts.otherSplits++;
    });
    expect(unexpected.slice(0, 10)).toEqual([]);
    // Under LC_CTYPE `C` PostgreSQL's parser takes every non-ASCII character for a letter, so with
    // the table's splits the two engines index every character of the BMP alike.
    if (ctype === 'C') expect(counts).toEqual({ privateUse: 0, unassigned: 0, numberForms: 0, symbols: 0, otherSplits: 0, lowerCased: 0 });
    // Measured with SQLite's unicode61 and PostgreSQL 15 on a C.UTF-8 database; the bounds catch a
    // regression (a table character differing is caught above, exactly).
    expect(counts.privateUse).toBeLessThanOrEqual(6_400);
    expect(counts.otherSplits + counts.lowerCased + counts.numberForms + counts.symbols).toBeLessThanOrEqual(1_000);
    expect(Object.values(counts).reduce((a, b) => a + b, 0)).toBeLessThanOrEqual(8_700);
  });
});

const i18nHint = 'regenerate the table with npm run search-fold and add a migration that replaces the functions';
