/**
 * The one reading of a search query: the glob string read once into tokens, separators and brace
 * groups, expanded (glob-braces.ts) into alternatives, each a list of path segments. Matching
 * (glob-match.ts), the pruning automaton and every limit work on this structure; nothing reads the
 * string again.
 *
 * Grammar (picomatch 2.3 with `dot: false` where it is consistent, refused where it is not):
 *
 * | syntax                        | meaning                                                        |
 * | ----------------------------- | -------------------------------------------------------------- |
 * | `/`, `\/`                     | segment separator                                              |
 * | `*`                           | any run of characters within a segment; a run of stars is one  |
 * | `**` (a whole segment)        | zero or more segments, none starting with `.`                  |
 * | `?`                           | one character (a code point)                                   |
 * | `[abc]` `[a-z]` `[^a]`        | one character of (not of) a set; `]` first is a member; `\x`   |
 * |                               | escapes; `[:alpha:]` and the other POSIX classes inside        |
 * | `{a,b}` (nested)              | alternatives, expanded before matching                         |
 * | `{1..3}` `{01..10}` `{a..c}`  | a range, expanded (integers, or letters of one case)           |
 * | `{x}`, a stray `}`, `,`       | literal characters                                             |
 * | `\c`                          | the character `c` literally                                    |
 * | leading `./`                  | dropped (in every alternative)                                 |
 *
 * Refused, each with a message saying what to write instead: a leading `!` (negation); extglobs
 * (`+(`, `@(`, `!(`, `*(`, `?(`); any other `(`, `)`, `|` or `"` (regular-expression syntax or
 * quoting for picomatch); `[!...]` (a literal `!` for picomatch, a negation for POSIX); `+` after a
 * bracket or a brace (a quantifier for picomatch); `\` before a letter or digit (a class such as
 * `\d` for picomatch); three or more backslashes in a row; where picomatch takes its fast path,
 * `\\` before punctuation (it drops that backslash) and runs of `^`, `$` or `+` (it escapes only the
 * first); a trailing `\`; `/` inside a class; unknown POSIX classes; reversed ranges; an unclosed
 * `{` or `[...`; ranges other than the forms above; and an alternative that is absolute or has a
 * `..` segment (`PATH_ESCAPES_ROOT`).
 */
import { WorkspaceError } from './errors.js';
import { escapes, expandItems, invalid, rangeOf, type Flat, type GlobSegment, type GlobToken, type Item } from './glob-braces.js';

export type { GlobSegment, GlobToken } from './glob-braces.js';
export { MAX_GLOB_ALTERNATIVES } from './glob-braces.js';

/** Longest accepted glob, in bytes. */
export const MAX_QUERY_BYTES = 1024;

/** A parsed query: its brace alternatives, each a list of segments. */
export interface ParsedGlob {
  alternatives: GlobSegment[][];
}

/** POSIX classes as picomatch 2.3 defines them (its `POSIX_REGEX_SOURCE`: `punct` has no `\`). */
const POSIX: Record<string, number[]> = {
  alnum: [0x61, 0x7a, 0x41, 0x5a, 0x30, 0x39],
  alpha: [0x61, 0x7a, 0x41, 0x5a],
  ascii: [0x00, 0x7f],
  blank: [0x20, 0x20, 0x09, 0x09],
  cntrl: [0x00, 0x1f, 0x7f, 0x7f],
  digit: [0x30, 0x39],
  graph: [0x21, 0x7e],
  lower: [0x61, 0x7a],
  print: [0x20, 0x7e],
  punct: [...'-!"#$%&\'()*+,./:;<=>?@[]^_`{|}~'].flatMap((c) => [c.charCodeAt(0), c.charCodeAt(0)]),
  space: [0x20, 0x20, 0x09, 0x0d],
  upper: [0x41, 0x5a],
  word: [0x41, 0x5a, 0x61, 0x7a, 0x30, 0x39, 0x5f, 0x5f],
  xdigit: [0x41, 0x46, 0x61, 0x66, 0x30, 0x39],
};

const ALNUM = /^[A-Za-z0-9]$/;


/** A recursive-descent reader of one query; `parse()` is its only entry. */
class Reader {
  private i = 0;
  /** Whether the last thing read was an unescaped bracket or brace (a `+` after it is refused). */
  private afterBracket = false;

  /**
   * Whether picomatch compiles this query on its fast path: after one leading `./`, no `/()[]{}"`
   * and no leading `*` or `!` (picomatch's `parse`).
   */
  private readonly fastPath: boolean;

  constructor(private readonly q: string) {
    const body = q.startsWith('./') ? q.slice(2) : q;
    this.fastPath = !/[/()[\]{}"]/.test(body) && !/^[*!]/.test(body);
  }

  parse(): Item[] {
    // `./` prefixes are dropped by picomatch before it looks for a negation: `./!a` is negated.
    let start = 0;
    while (this.q.startsWith('./', start)) start += 2;
    if (this.q[start] === '!' && this.q[start + 1] !== '(') {
      throw invalid('Negated queries (a leading `!`) are not supported; give the glob of the files to find');
    }
    const { items } = this.sequence(0);
    return items;
  }

  /** Items up to the end, or (inside a brace, `depth > 0`) up to a top-level `,` or `}`. */
  private sequence(depth: number): { items: Item[]; end: 'eof' | ',' | '}' } {
    const items: Item[] = [];
    const q = this.q;
    while (this.i < q.length) {
      const c = q[this.i]!;
      const wasAfterBracket = this.afterBracket;
      this.afterBracket = false;
      if (depth > 0 && (c === ',' || c === '}')) {
        this.i++;
        return { items, end: c };
      }
      switch (c) {
        case '\\':
          items.push(this.escape());
          continue;
        case '/':
          this.i++;
          items.push({ kind: 'slash' });
          continue;
        case '*':
        case '?':
          if (q[this.i + 1] === '(') throw extglob();
          this.i++;
          items.push(c === '*' ? { kind: 'star', src: c } : { kind: 'any', src: c });
          continue;
        case '[':
          items.push(this.bracket());
          this.afterBracket = true;
          continue;
        case '{':
          items.push(...this.brace(depth));
          this.afterBracket = true;
          continue;
        case '}':
          this.afterBracket = true;
          break;
        case '(':
        case ')':
        case '|':
          throw invalid(`\`query\` contains \`${c}\`: parentheses and \`|\` are regular-expression syntax in other glob matchers and are not supported; escape it (\`\\${c}\`) to match it, or use braces \`{a,b}\` for alternatives`);
        case '"':
          throw invalid('`query` contains `"`: quoting is not supported; escape it (`\\"`) to match a double quote');
        case '+':
          if (q[this.i + 1] === '(') throw extglob();
          if (wasAfterBracket) throw invalid('`+` right after a bracket or a brace is a regular-expression quantifier in other glob matchers; escape it (`\\+`) to match a plus sign');
          break;
        case '@':
        case '!':
          if (q[this.i + 1] === '(') throw extglob();
          break;
      }
      if (this.fastPath && (c === '^' || c === '$' || c === '+') && q[this.i + 1] === c) {
        // picomatch's fast path escapes only the first of a run: `a$$` is `a\$` then an anchor.
        throw invalid(`\`${c}${c}\` in \`query\`: other glob matchers read a repeated \`${c}\` as regular-expression syntax in a query without \`/\`; escape each one (\`\\${c}\\${c}\`)`);
      }
      const cp = q.codePointAt(this.i)!;
      const src = String.fromCodePoint(cp);
      this.i += src.length;
      items.push({ kind: 'char', cp, src });
    }
    if (depth > 0) throw invalid('`query` has a `{` without its closing `}`; escape it (`\\{`) to match a brace');
    return { items, end: 'eof' };
  }

  /** The code point after a backslash (at `this.i`), checked; advances past both. */
  private escaped(): { cp: number; src: string } {
    const q = this.q;
    let run = 0;
    while (q[this.i + run] === '\\') run++;
    if (run >= 3) {
      throw invalid('`query` has three or more backslashes in a row, which glob matchers read differently; match such a name with `?` or `*`');
    }
    const next = q.codePointAt(this.i + 1);
    if (next === undefined) throw invalid('`query` ends with a lone `\\`; write `\\\\` to match a backslash');
    const ch = String.fromCodePoint(next);
    if (ALNUM.test(ch)) {
      throw invalid(`\`\\${ch}\` in \`query\`: a backslash before a letter or digit is a regular-expression class in other glob matchers; write \`${ch}\` itself`);
    }
    this.i += 1 + ch.length;
    return { cp: next, src: `\\${ch}` };
  }

  private escape(): Item {
    const { cp, src } = this.escaped();
    // picomatch's fast path drops the backslash of `\\` before punctuation (`a\\~` reads `a~`),
    // its full parser does not (`x/a\\~`): refused where the fast path would read it.
    const next = this.q[this.i];
    if (cp === 0x5c && this.fastPath && next !== undefined && !/^[\w*?]$/.test(next)) {
      throw invalid(`\`\\\\${next}\` in \`query\`: glob matchers read an escaped backslash before \`${next}\` two ways; match the backslash with \`?\``);
    }
    return cp === 0x2f ? { kind: 'slash' } : { kind: 'char', cp, src };
  }

  /** `[` at `this.i`: a class, or a literal `[` when no `]` follows anywhere (as picomatch reads it). */
  private bracket(): GlobToken {
    const q = this.q;
    const open = this.i;
    if (!q.includes(']', open + 1)) {
      this.i++;
      return { kind: 'char', cp: 0x5b, src: '[' };
    }
    this.i++;
    let negated = false;
    if (q[this.i] === '!') {
      throw invalid('`[!...]` is a literal `!` to some glob matchers and a negation to others; write `[^...]` to negate, or `[\\!...]` to match `!`');
    }
    if (q[this.i] === '^') {
      negated = true;
      this.i++;
    }
    const ranges: number[] = [];
    /** The last member when it was a single character (a `-` after it makes a range). */
    let single: number | null = null;
    for (let first = true; ; first = false) {
      if (this.i >= q.length) throw invalid('`query` has a `[` without its closing `]`; escape it (`\\[`) to match a bracket');
      const c = q[this.i]!;
      if (c === ']' && !first) {
        this.i++;
        break;
      }
      if (c === '[' && q[this.i + 1] === ':') {
        const close = q.indexOf(':]', this.i + 2);
        const name = close < 0 ? '' : q.slice(this.i + 2, close);
        const set = Object.hasOwn(POSIX, name) ? POSIX[name] : undefined;
        if (set === undefined) {
          throw invalid(`Unknown POSIX class \`[:${name.slice(0, 20)}:]\`; use one of ${Object.keys(POSIX).map((k) => `[:${k}:]`).join(', ')}`);
        }
        ranges.push(...set);
        this.i = close + 2;
        single = null;
        continue;
      }
      if (c === '-' && single !== null && q[this.i + 1] !== ']' && this.i + 1 < q.length) {
        this.i++;
        const hi = this.member();
        if (hi < single) {
          throw invalid(`\`query\` has a reversed range \`${String.fromCodePoint(single)}-${String.fromCodePoint(hi)}\` in a class; write the lower end first`);
        }
        ranges[ranges.length - 1] = hi;
        single = null;
        continue;
      }
      const cp = this.member();
      ranges.push(cp, cp);
      single = cp;
    }
    return { kind: 'class', negated, ranges, src: q.slice(open, this.i) };
  }

  /** One class member character (escapes read), never `/`. */
  private member(): number {
    const q = this.q;
    let cp: number;
    if (q[this.i] === '\\') cp = this.escaped().cp;
    else {
      if (q.startsWith('[:', this.i)) throw invalid('A POSIX class cannot end a range in a `[...]` class');
      cp = q.codePointAt(this.i)!;
      this.i += cp > 0xffff ? 2 : 1;
    }
    if (cp === 0x2f) throw invalid('`/` inside `[...]` never matches (a class matches one character of a name); remove it');
    return cp;
  }

  /** `{` at `this.i`: a group of alternatives, a range (`..` in a one-item body), or literal braces. */
  private brace(depth: number): Item[] {
    const open = this.i++;
    this.afterBracket = true; // `{+` is a quantifier for picomatch too
    const alts: Item[][] = [];
    for (;;) {
      const { items, end } = this.sequence(depth + 1);
      alts.push(items);
      if (end === '}') break;
    }
    if (alts.length > 1) return [{ kind: 'group', alts }];
    const body = alts[0]!;
    const isDot = (it: Item | undefined): boolean => it?.kind === 'char' && it.cp === 0x2e;
    if (!body.some((it, k) => isDot(it) && isDot(body[k + 1]))) {
      // `{x}`: literal braces around whatever `x` is (picomatch and bash alike).
      return [{ kind: 'char', cp: 0x7b, src: '{' }, ...body, { kind: 'char', cp: 0x7d, src: '}' }];
    }
    const text = body.every((it) => it.kind === 'char') ? String.fromCodePoint(...body.map((it) => (it as { cp: number }).cp)) : null;
    return [{ kind: 'group', alts: rangeOf(text, this.q.slice(open + 1, this.i - 1)) }];
  }
}

const extglob = (): WorkspaceError => invalid('Extended globs such as `+(a|b)` or `@(x)` are not supported; use braces `{a,b}` instead');

/** Split one expanded alternative into segments: leading `./` dropped, stars collapsed, `**` found. */
function segmentsOf(flat: Flat[]): GlobSegment[] {
  const parts: GlobToken[][] = [[]];
  for (const t of flat) {
    if (t.kind === 'slash') parts.push([]);
    else parts[parts.length - 1]!.push(t);
  }
  const dot = (t: GlobToken | undefined): boolean => t?.kind === 'char' && t.cp === 0x2e;
  const isDot = (p: GlobToken[]): boolean => p.length === 1 && dot(p[0]);
  while (parts.length > 1 && isDot(parts[0]!)) parts.shift();
  if (parts.length > 1 && parts[0]!.length === 0) throw escapes(); // absolute
  return parts.map((p): GlobSegment => {
    if (p.length === 2 && dot(p[0]) && dot(p[1])) throw escapes();
    if (p.length === 2 && p[0]?.kind === 'star' && p[1]?.kind === 'star') return { kind: 'globstar' };
    // Any other run of stars is one star (picomatch: `a**` is `a*`, a `***` segment is `*`).
    return { kind: 'tokens', tokens: p.filter((t, k) => !(t.kind === 'star' && p[k - 1]?.kind === 'star')) };
  });
}

/**
 * Parse a query once: checks (type, size, NUL, syntax, escapes from the root) and brace expansion.
 * Throws `INVALID_PARAMS`, `INPUT_TOO_LARGE` or `PATH_ESCAPES_ROOT`.
 */
export function parseGlob(query: unknown, maxBytes = MAX_QUERY_BYTES): ParsedGlob {
  if (typeof query !== 'string' || query.trim() === '') {
    throw invalid('Expected `query` to be a non-empty glob such as "**/*.ts"');
  }
  if (Buffer.byteLength(query) > maxBytes) {
    throw new WorkspaceError('INPUT_TOO_LARGE', `Expected \`query\` to be at most ${maxBytes} bytes`, { max: maxBytes });
  }
  if (query.includes('\0')) throw invalid('`query` contains a NUL byte');
  return { alternatives: expandItems(new Reader(query).parse()).map(segmentsOf) };
}

/** An alternative written back as a glob (escapes as written; ranges as their values). */
export function renderAlternative(segments: GlobSegment[]): string {
  return segments.map((s) => (s.kind === 'globstar' ? '**' : s.tokens.map((t) => t.src).join(''))).join('/');
}
