// The content of bench/continuation-upstream.mjs's results, as a function of the position: the
// server writes it and the bench checks what it reads back against it, neither holding it whole.
// Made from fixed-width templates with the position's digits written in, so that the server costs
// little next to the proxy it feeds.

/** Bytes of text written at once. */
export const PIECE_BYTES = 1 << 20;

/** A line of the text (ASCII, with escapes in its JSON: quotes and backslashes). */
const LINE = 'the quick brown fox jumps over the lazy dog "quoted" \\ end\n';
const HEAD = 'piece 0000000000: ';
/** One piece of decoded text; piece `k` has its number in the head. */
const TEXT = (HEAD + LINE.repeat(Math.ceil(PIECE_BYTES / LINE.length) + 1)).slice(0, PIECE_BYTES);
/** The same piece as a JSON string's content (escaped), and where the digits sit in it. */
const RAW = Buffer.from(JSON.stringify(TEXT).slice(1, -1));

function digits(n) {
  return String(n).padStart(10, '0');
}

/** Piece `k` of the text as the JSON string's raw content, `bytes` long once decoded (a piece is cut only at its end, within ASCII, never inside an escape: the last piece is cut whole lines). */
export function textPiece(k, bytes) {
  if (bytes < PIECE_BYTES) return JSON.stringify(textOf(k, bytes)).slice(1, -1);
  const out = Buffer.from(RAW);
  out.write(digits(k), 6, 'latin1');
  return out;
}

/** Piece `k` of the text, decoded. */
export function textOf(k, bytes) {
  return (`piece ${digits(k)}: ` + TEXT.slice(HEAD.length)).slice(0, bytes);
}

/** Item `i` of the array (about 60 bytes of JSON). */
export function item(i) {
  return { i: digits(i), s: 'item of the array, the same words each time' };
}

const ITEM = JSON.stringify(item(0));
/** Items written at once. */
export const BLOCK_ITEMS = 16384;
const BLOCK = Buffer.from(Array.from({ length: BLOCK_ITEMS }, () => ITEM).join(','));
const DIGITS_AT = ITEM.indexOf('0000000000');

/** Items `from` to `from + n - 1` as JSON separated by commas (n at most a block). */
export function itemsJson(from, n) {
  const out = Buffer.from(BLOCK.subarray(0, n * (ITEM.length + 1) - 1));
  for (let j = 0; j < n; j++) out.write(digits(from + j), j * (ITEM.length + 1) + DIGITS_AT, 'latin1');
  return out;
}
