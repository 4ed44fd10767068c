/**
 * The token estimate of text as a model reads it: a fast count that stays at or above what open
 * tokenizers count (OpenAI's o200k_base and cl100k_base, Anthropic's published Claude tokenizer,
 * Llama 3's) on a corpus of tool results of every kind (`npm run bench:tokens`, figures in
 * `bench/RESULTS.md`). It is additive over characters, so a text can be cut at the longest prefix
 * within a budget, and streamed: the count of a text read in pieces is the count of the whole.
 *
 * Each character costs by its class and the class before it: the first character of a run (a
 * word, a number, a run of punctuation) about a token, the rest of an English word a tenth, CJK
 * and other scripts more than one a character, base64 and hex about what they take. The weights
 * were fitted by linear programming (every corpus sample at or above its largest count, least
 * total overestimate, then rounded up); no weight is above the character's UTF-8 bytes, so the
 * estimate never exceeds the text's size in bytes.
 */

/** Classes: ASCII lower, upper, digit, space, other control (newline, tab), punctuation; then by UTF-8 width. */
const L = 0;
const U = 1;
const D = 2;
const S = 3;
const N = 4;
const P = 5;
/** Two UTF-8 bytes: Latin with accents, Greek, Cyrillic, Hebrew, Arabic. */
const X2 = 6;
/** CJK ideographs, kana, Hangul, full-width forms. */
const C = 7;
/** Any other three-byte character (Indic, Thai, symbols), or a lone surrogate. */
const X3 = 8;
/** Outside the BMP (emoji): a surrogate pair, one character. */
const A = 9;
/** The class before a text's first character. */
export const TEXT_START = 10;

/** Hundredths of a token: the cost of a character of class `c` starting a run. */
const FIRST = [100, 100, 100, 100, 100, 100, 200, 129, 122, 150];
/** The cost of a character of class `c` after one of the same class. */
const NEXT = [10, 38, 100, 5, 5, 52, 123, 137, 201, 238];
/** Pairs of classes whose cost differs from both (a space before a word, a capital before lower case…). */
const PAIRS: readonly [number, number, number][] = [
  [S, L, 45], [S, U, 5], [U, L, 100], [L, U, 100], [N, S, 73], [P, S, 5], [S, P, 5], [P, L, 83], [L, P, 100],
];

/** COST[prev * 11 + c]: hundredths of a token for a character of class `c` after one of class `prev`. */
const COST = new Uint16Array(11 * 11);
for (let prev = 0; prev <= TEXT_START; prev++) {
  for (let c = 0; c < TEXT_START; c++) COST[prev * 11 + c] = prev === c ? NEXT[c]! : FIRST[c]!;
}
for (const [prev, c, cost] of PAIRS) COST[prev * 11 + c] = cost;

/** ASCII classes by code unit. */
const ASCII = new Uint8Array(128);
for (let i = 0; i < 128; i++) {
  ASCII[i] = i >= 97 && i <= 122 ? L : i >= 65 && i <= 90 ? U : i >= 48 && i <= 57 ? D : i === 32 ? S : i < 32 || i === 127 ? N : P;
}

/**
 * Perf: one lookup a character for ASCII, the commonest text: STEP[(prev << 7) | u] holds the
 * character's cost (low 16 bits) and its class (above). Three lookups cost ≈ 3 ns a character.
 */
const STEP = new Uint32Array(16 << 7);
for (let prev = 0; prev <= TEXT_START; prev++) {
  for (let u = 0; u < 128; u++) STEP[(prev << 7) | u] = COST[prev * 11 + ASCII[u]!]! | (ASCII[u]! << 16);
}

function wideClass(u: number): number {
  if (u < 0x800) return X2;
  if ((u >= 0x3000 && u <= 0x9fff) || (u >= 0xac00 && u <= 0xd7af) || (u >= 0xf900 && u <= 0xfaff) || (u >= 0xff00 && u <= 0xffef)) return C;
  return X3;
}

/** A running estimate over one text read in pieces: the class of its last character and the cost so far. */
export interface TokenTally {
  prev: number;
  /** Hundredths of a token. */
  cost: number;
}

export function tokenTally(): TokenTally {
  return { prev: TEXT_START, cost: 0 };
}

/**
 * Adds `text[from, to)` to `tally`. The range must not split a surrogate pair (a high surrogate
 * at its end is counted as a lone one).
 */
export function addTokens(tally: TokenTally, text: string, from = 0, to = text.length): void {
  let prev = tally.prev;
  let cost = tally.cost;
  for (let i = from; i < to; i++) {
    const u = text.charCodeAt(i);
    if (u < 128) {
      const step = STEP[(prev << 7) | u]!;
      cost += step & 0xffff;
      prev = step >>> 16;
      continue;
    }
    let c: number;
    if (u >= 0xd800 && u <= 0xdbff && i + 1 < to && (text.charCodeAt(i + 1) & 0xfc00) === 0xdc00) {
      c = A;
      i++;
    } else c = wideClass(u);
    cost += COST[prev * 11 + c]!;
    prev = c;
  }
  tally.prev = prev;
  tally.cost = cost;
}

/**
 * The end of the longest prefix of `text[from…]` whose cost, added to `tally`, stays within
 * `limit` hundredths: `text.length` when all of it does. Never inside a surrogate pair; `tally`
 * is not changed (add the prefix kept with `addTokens`).
 */
export function tokensFitEnd(tally: TokenTally, text: string, from: number, limit: number): number {
  let prev = tally.prev;
  let cost = tally.cost;
  const end = text.length;
  for (let i = from; i < end; i++) {
    const u = text.charCodeAt(i);
    if (u < 128) {
      const step = STEP[(prev << 7) | u]!;
      cost += step & 0xffff;
      if (cost > limit) return i;
      prev = step >>> 16;
      continue;
    }
    let c: number;
    let width = 1;
    if (u >= 0xd800 && u <= 0xdbff && i + 1 < end && (text.charCodeAt(i + 1) & 0xfc00) === 0xdc00) {
      c = A;
      width = 2;
    } else c = wideClass(u);
    cost += COST[prev * 11 + c]!;
    if (cost > limit) return i;
    prev = c;
    i += width - 1;
  }
  return end;
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
    t.prev = TEXT_START;
    t.cost = 0;
    addTokens(t, texts[i]!);
    cost += t.cost;
  }
  return Math.ceil(cost / 100);
}

/**
 * Whether texts read as separate blocks stay within `bound` hundredths of a token together (the
 * fast path's check, on the same texts its byte checks read). Stops at the first text past it.
 */
export function textsWithinTokens(texts: readonly string[], bound: number): boolean {
  if (bound === Infinity) return true;
  let cost = 0;
  const t = tokenTally();
  for (let i = 0; i < texts.length; i++) {
    t.prev = TEXT_START;
    t.cost = 0;
    addTokens(t, texts[i]!);
    cost += t.cost;
    if (cost > bound) return false;
  }
  return true;
}
