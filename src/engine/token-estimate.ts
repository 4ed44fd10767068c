/**
 * The token estimate of text as a model reads it: a fast count that stays at or above what open
 * tokenizers count (OpenAI's o200k_base and cl100k_base, Anthropic's published Claude tokenizer,
 * Llama 3's) on a corpus of tool results of every kind and of adversarial text (`npm run
 * bench:tokens`, figures in `bench/RESULTS.md`), with one known miss: short runs of random
 * letters read as words (about two-thirds of the count there). It is additive over characters,
 * so a text can be cut at the longest prefix within a budget, and streamed: the count of a text
 * read in pieces is the count of the whole.
 *
 * Each character costs by its class, the class before it and the length of its run: the first
 * character of a run (a word, a number, a run of punctuation) about a token, the rest of an
 * English word a tenth, a long run of letters or punctuation (no word a tokenizer knows) half a
 * token or more a character, CJK and other scripts more than one, control characters one each.
 * The pair weights were fitted by linear programming (every corpus piece at or above its largest
 * count, least total overestimate, then rounded up); the run, control and combining-mark costs
 * were set on adversarial text. No cost is above the character's UTF-8 bytes, so the estimate
 * never exceeds the text's size in bytes.
 */

/** Classes: ASCII lower, upper, digit, space, newline, other control (CR too), punctuation; then by UTF-8 width; tab. */
const L = 0;
const U = 1;
const D = 2;
const S = 3;
const N = 4;
/** A control character other than newline, tab and carriage return, or DEL: a token each. */
const K = 5;
const P = 6;
/** Two UTF-8 bytes: Latin with accents, Greek, Cyrillic, Hebrew, Arabic. */
const X2 = 7;
/** A combining mark (accents written apart, and the like): a token or two each. */
const M = 8;
/** CJK ideographs, kana, Hangul, full-width forms. */
const C = 9;
/** Any other three-byte character (Indic, Thai, symbols), or a lone surrogate. */
const X3 = 10;
/** Outside the BMP (emoji): a surrogate pair, one character. */
const A = 11;
/** A tab (runs of tabs indent code, like runs of spaces). */
const T = 12;
/** The class before a text's first character. */
export const TEXT_START = 13;
const W = TEXT_START + 1;

/** Hundredths of a token: the cost of a character of class `c` starting a run. */
const FIRST = [100, 100, 100, 100, 100, 100, 100, 200, 200, 129, 122, 150, 100];
/** The cost of a character of class `c` after one of the same class. */
const NEXT = [10, 38, 100, 5, 30, 100, 52, 123, 200, 137, 201, 238, 75];
/**
 * Long runs: past this many characters of one class in a row, each costs `LONG_COST` (a long run
 * of letters or punctuation is no word the tokenizer knows: random letters take about one token
 * for two, capitals and punctuation more).
 */
const LONG_AFTER = [8, 4, 0, 0, 0, 0, 2, 0, 0, 0, 0, 0, 0];
const LONG_COST = [58, 64, 0, 0, 0, 0, 88, 0, 0, 0, 0, 0, 0];
/** Pairs of classes whose cost differs from both (a space before a word, a capital before lower case…). */
const PAIRS: readonly [number, number, number][] = [
  [S, L, 45], [S, U, 5], [U, L, 100], [L, U, 100], [N, S, 73], [P, S, 5], [S, P, 5], [P, L, 83], [L, P, 100],
];

/** COST[prev * W + c]: hundredths of a token for a character of class `c` after one of class `prev`. */
const COST = new Uint16Array(W * W);
for (let prev = 0; prev <= TEXT_START; prev++) {
  for (let c = 0; c < TEXT_START; c++) COST[prev * W + c] = prev === c ? NEXT[c]! : FIRST[c]!;
}
for (const [prev, c, cost] of PAIRS) COST[prev * W + c] = cost;

/** ASCII classes by code unit. */
const ASCII = new Uint8Array(128);
for (let i = 0; i < 128; i++) {
  ASCII[i] =
    i >= 97 && i <= 122 ? L : i >= 65 && i <= 90 ? U : i >= 48 && i <= 57 ? D : i === 32 ? S : i === 10 ? N : i === 9 ? T : i < 32 || i === 127 ? K : P;
}

/**
 * States: a class and, for the classes with a long-run cost, how long its run is (1 up to past
 * `LONG_AFTER`), so that a character's cost and the next state are one lookup. State 0 is the
 * start of a text.
 */
const STATE_CLASS: number[] = [TEXT_START];
const STATE_RUN: number[] = [0];
const FIRST_STATE: number[] = [];
for (let c = 0; c < TEXT_START; c++) {
  FIRST_STATE[c] = STATE_CLASS.length;
  const runs = LONG_AFTER[c]! === 0 ? 1 : LONG_AFTER[c]! + 1;
  for (let r = 1; r <= runs; r++) {
    STATE_CLASS.push(c);
    STATE_RUN.push(r);
  }
}
const STATES = STATE_CLASS.length;

/** A character of class `c` read in state `s`: its cost (low 16 bits) and the state after it (above). */
function transition(s: number, c: number): number {
  const prev = STATE_CLASS[s]!;
  if (prev !== c) return COST[prev * W + c]! | (FIRST_STATE[c]! << 16);
  const runs = LONG_AFTER[c]! === 0 ? 1 : LONG_AFTER[c]! + 1;
  const run = STATE_RUN[s]! + 1;
  const cost = LONG_AFTER[c]! !== 0 && run > LONG_AFTER[c]! ? LONG_COST[c]! : COST[prev * W + c]!;
  return cost | ((FIRST_STATE[c]! + Math.min(run, runs) - 1) << 16);
}

/** Perf: ASCII in one lookup a character, ASCII_STEP[(state << 7) | u] (the commonest text, ≈ 2.5 ns a character). */
const ASCII_STEP = new Uint32Array(STATES << 7);
/** Any other class: WIDE_STEP[state * TEXT_START + class]. */
const WIDE_STEP = new Uint32Array(STATES * TEXT_START);
for (let st = 0; st < STATES; st++) {
  for (let u = 0; u < 128; u++) ASCII_STEP[(st << 7) | u] = transition(st, ASCII[u]!);
  for (let c = 0; c < TEXT_START; c++) WIDE_STEP[st * TEXT_START + c] = transition(st, c);
}

function wideClass(u: number): number {
  if ((u >= 0x300 && u <= 0x36f) || (u >= 0x1ab0 && u <= 0x1aff) || (u >= 0x1dc0 && u <= 0x1dff) || (u >= 0x20d0 && u <= 0x20ff) || (u >= 0xfe20 && u <= 0xfe2f)) return M;
  if (u < 0x800) return X2;
  if ((u >= 0x3000 && u <= 0x9fff) || (u >= 0xac00 && u <= 0xd7af) || (u >= 0xf900 && u <= 0xfaff) || (u >= 0xff00 && u <= 0xffef)) return C;
  return X3;
}

/** A running estimate over one text read in pieces: where it stands (the last character's class and run) and the cost so far. */
export interface TokenTally {
  state: number;
  /** Hundredths of a token. */
  cost: number;
}

export function tokenTally(): TokenTally {
  return { state: 0, cost: 0 };
}

/**
 * Scans `text[from, to)` on from `tally`'s state, stopping before the first character that would
 * take the cost past `limit`; updates `tally` to what was scanned and returns where it stopped.
 * Never stops inside a surrogate pair (a high surrogate at `to` is counted as a lone one).
 */
export function scanTokens(tally: TokenTally, text: string, from: number, to: number, limit: number): number {
  let state = tally.state;
  let cost = tally.cost;
  let i = from;
  for (; i < to; i++) {
    const u = text.charCodeAt(i);
    let step: number;
    let width = 1;
    if (u < 128) step = ASCII_STEP[(state << 7) | u]!;
    else {
      let c: number;
      if (u >= 0xd800 && u <= 0xdbff && i + 1 < to && (text.charCodeAt(i + 1) & 0xfc00) === 0xdc00) {
        c = A;
        width = 2;
      } else c = wideClass(u);
      step = WIDE_STEP[state * TEXT_START + c]!;
    }
    const next = cost + (step & 0xffff);
    if (next > limit) break;
    cost = next;
    state = step >>> 16;
    i += width - 1;
  }
  tally.state = state;
  tally.cost = cost;
  return i;
}

/** Adds `text[from, to)` to `tally` (the range must not split a surrogate pair). */
export function addTokens(tally: TokenTally, text: string, from = 0, to = text.length): void {
  scanTokens(tally, text, from, to, Infinity);
}

/**
 * The end of the longest prefix of `text[from…]` whose cost, added to `tally`, stays within
 * `limit` hundredths: `text.length` when all of it does. Never inside a surrogate pair; `tally`
 * is not changed (add the prefix kept with `addTokens`).
 */
export function tokensFitEnd(tally: TokenTally, text: string, from: number, limit: number): number {
  return scanTokens({ ...tally }, text, from, text.length, limit);
}

/** Estimated tokens of a whole text. */
export function estimateTokens(text: string): number {
  const t = tokenTally();
  addTokens(t, text);
  return Math.ceil(t.cost / 100);
}

/** Estimated tokens of texts read as separate blocks, each from its own start. */
export function estimateTextsTokens(texts: readonly string[]): number {
  let cost = 0;
  const t = tokenTally();
  for (let i = 0; i < texts.length; i++) {
    t.state = 0;
    t.cost = 0;
    addTokens(t, texts[i]!);
    cost += t.cost;
  }
  return Math.ceil(cost / 100);
}

/**
 * The estimate as a text measure's counting rule (text-measure.ts): in hundredths of a token; no
 * character costs more than its UTF-8 bytes; every character costs at least 0.05 of a token (a
 * surrogate pair, two units, as much), so a unit at least 2.5 hundredths.
 */
export const TOKEN_COUNT_RULE = Object.freeze({ scan: scanTokens, perUnit: 100, maxPerByte: 100, minPerUnit: 5 / 2 });
