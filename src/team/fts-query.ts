/**
 * A user's search text as an FTS5 query: the words (letters and digits) of the text, each quoted as
 * a string, all required. Quoting keeps FTS5 syntax (`OR`, `NEAR`, `*`, `:`, quotes) from ever
 * reaching the parser, so no query text can fail to parse or widen the match. PostgreSQL reads the
 * same text through `websearch_to_tsquery` (pg-search.ts), where the quotes keep its operators out.
 */
import { TEAM_READ_LIMITS } from './limits.js';
import { TeamError } from './types.js';

/** Words of `q` as an FTS5 AND-query of quoted strings; INVALID_PARAMS when there are none or too many. */
export function toFtsQuery(q: string): string {
  if (q.length > TEAM_READ_LIMITS.maxQueryChars) {
    throw new TeamError('INVALID_PARAMS', `Expected \`q\` to be at most ${TEAM_READ_LIMITS.maxQueryChars} characters, got ${q.length}`);
  }
  const words = q.match(/[\p{L}\p{M}\p{N}]+/gu) ?? [];
  if (words.length === 0) throw new TeamError('INVALID_PARAMS', '`q` has no words to search for (letters or digits).');
  if (words.length > TEAM_READ_LIMITS.maxQueryTerms) {
    throw new TeamError('INVALID_PARAMS', `Expected \`q\` to have at most ${TEAM_READ_LIMITS.maxQueryTerms} words, got ${words.length}`);
  }
  return words.map((w) => `"${w}"`).join(' ');
}
