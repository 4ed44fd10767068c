/**
 * Accent folding on PostgreSQL, as SQLite's FTS5 tokenizer (`unicode61 remove_diacritics 2`) does
 * it: the SQL functions a migration installs, rendered from the one table both engines share
 * (search-fold-table.ts, derived from SQLite and checked against it by a test).
 *
 * `mcp_budget_fold(t)` is what the store indexes and searches instead of the text: characters that
 * SQLite folds become the letter it folds them to (`É` → `e`, `Д` → `д`), the combining marks it
 * drops vanish, and characters it splits words at become spaces. Only ASCII lower-casing is left to
 * `to_tsvector`, so a database whose LC_CTYPE is `C` (where PostgreSQL lower-cases no other letter)
 * folds as one on `C.UTF-8` does.
 *
 * Cost: PL/pgSQL, so the table's literals are parsed once per connection (a SQL function is planned
 * again for every statement: about 0.5 ms more per single-row insert). ASCII text is returned as it
 * is after one regular-expression test. Otherwise only the distinct non-ASCII characters of the
 * text are looked up, and `translate` (which scans its whole `from` list for every character of the
 * text) is given just those that fold: with the whole table it took about 8 ms for 4,000
 * characters; with the handful a real text holds, a fraction of that.
 *
 * `mcp_budget_headline_query(doc, q)` is the query a snippet highlights with: the document's own
 * words whose folded form is a folded word of `q`, so that `elegant` marks `Élégant` in the text as
 * it was written (the snippet shows the original, never the folded form). The document's distinct
 * words are folded in one call (joined by newlines, which folding keeps; a folded word is lower-case
 * already), and only a folded word holding punctuation or a space is split again before it is
 * compared; the two arrays are walked together (`unnest` of both: indexing `w[i]` re-reads the
 * array from its start, quadratic in the words). A page of
 * 100 rows of 32 KB of distinct accented words took 15 s when each word was folded on its own.
 *
 * A released migration is never edited: when SQLite's tokenizer changes and the table is generated
 * again, a new migration replaces the functions (`CREATE OR REPLACE`) and rebuilds the columns.
 */
import { FOLD_DROP, FOLD_FROM, FOLD_SPLIT, FOLD_TO } from './search-fold-table.js';

/** A SQL string literal (standard_conforming_strings, PostgreSQL's default since 9.1). */
const literal = (s: string): string => `'${s.replace(/'/g, "''")}'`;

/** A regular-expression bracket expression for `chars` (none is ASCII, so none needs escaping), runs written as ranges. */
function bracket(chars: string): string {
  const cps = [...chars].map((c) => c.codePointAt(0)!).sort((a, b) => a - b);
  let out = '';
  for (let i = 0; i < cps.length; ) {
    let j = i;
    while (j + 1 < cps.length && cps[j + 1] === cps[j]! + 1) j++;
    out += j - i >= 2 ? `${String.fromCodePoint(cps[i]!)}-${String.fromCodePoint(cps[j]!)}` : String.fromCodePoint(...cps.slice(i, j + 1));
    i = j + 1;
  }
  if (/[\x00-\x7f]/.test(out.replace(/-/g, ''))) throw new Error('the fold table holds an ASCII character');
  return `[${out}]`;
}

function foldMap(): string {
  const map: Record<string, string> = {};
  for (let i = 0; i < FOLD_FROM.length; i++) map[FOLD_FROM[i]!] = FOLD_TO[i]!;
  return JSON.stringify(map);
}

/**
 * The words of a text as the store indexes them (the punctuation split the first migration set).
 * ASCII text is told apart inline: a PL/pgSQL call per row, even one that returns at once, cost an
 * import of a million ASCII messages about a fifth of its speed.
 */
export const PG_INDEXED_WORDS = (expr: string): string =>
  `to_tsvector('simple'::regconfig, regexp_replace(CASE WHEN ${expr} ~ '[^\x01-\x7f]' THEN mcp_budget_fold(${expr}) ELSE ${expr} END, '[[:punct:]]+', ' ', 'g'))`;

/** The functions, installed by a migration. */
export function pgFoldFunctions(): string {
  return `
  CREATE OR REPLACE FUNCTION mcp_budget_fold(t text) RETURNS text
  LANGUAGE plpgsql IMMUTABLE STRICT PARALLEL SAFE AS $fold$
  DECLARE
    u text;
    f text;
    o text;
  BEGIN
    IF t !~ '[^\x01-\x7f]' THEN
      RETURN t;
    END IF;
    u := regexp_replace(regexp_replace(t, ${literal(bracket(FOLD_DROP))}, '', 'g'), ${literal(bracket(FOLD_SPLIT))}, ' ', 'g');
    SELECT coalesce(string_agg(d.c, ''), ''), coalesce(string_agg(${literal(foldMap())}::jsonb ->> d.c, ''), '') INTO f, o
      FROM (SELECT DISTINCT c FROM regexp_split_to_table(regexp_replace(u, '[\x01-\x7f]+', '', 'g'), '') AS c) d
      WHERE ${literal(foldMap())}::jsonb ? d.c;
    RETURN translate(u, f, o);
  END
  $fold$;

  CREATE OR REPLACE FUNCTION mcp_budget_headline_query(doc text, q text) RETURNS tsquery
  LANGUAGE sql IMMUTABLE STRICT PARALLEL SAFE AS $headline$
    WITH d AS (SELECT tsvector_to_array(to_tsvector('simple'::regconfig, doc)) AS w),
         f AS (SELECT d.w, string_to_array(mcp_budget_fold(array_to_string(d.w, E'\n')), E'\n') AS fw FROM d),
         k AS (SELECT tsvector_to_array(${PG_INDEXED_WORDS('q')}) AS qw)
    SELECT coalesce((
      SELECT string_agg(array_to_tsvector(ARRAY[u.w])::text, ' | ')::tsquery
      FROM f, k, unnest(f.w, f.fw) AS u(w, fw)
      WHERE u.fw = ANY (k.qw)
         OR (u.fw ~ '[[:punct:][:space:]]' AND string_to_array(lower(regexp_replace(u.fw, '[[:punct:][:space:]]+', ' ', 'g')), ' ') && k.qw)
    ), websearch_to_tsquery('simple'::regconfig, mcp_budget_fold(q)))
  $headline$;
  `;
}
