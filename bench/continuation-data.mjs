// The content of bench/continuation-upstream.mjs's results, as a function of the position: the
// server writes it and the bench checks what it reads back against it, neither holding it whole.

/** Bytes of text written at once. */
export const PIECE_BYTES = 1 << 20;

/** A line of the text (ASCII, with escapes in its JSON: quotes and backslashes). */
const LINE = 'the quick brown fox jumps over the lazy dog "quoted" \\ end\n';

/** Piece `k` of the text as the JSON string's raw content (`bytes` long once decoded, cut within ASCII). */
export function textPiece(k, bytes) {
  return JSON.stringify(textOf(k, bytes)).slice(1, -1);
}

/** Piece `k` of the text, decoded. */
export function textOf(k, bytes) {
  const head = `[piece ${k}]`;
  return (head + LINE.repeat(Math.ceil(bytes / LINE.length) + 1)).slice(0, bytes);
}

/** Item `i` of the array. */
export function item(i) {
  return { i, s: `item ${i} ${'x'.repeat(i % 50)}` };
}

export function itemJson(i) {
  return JSON.stringify(item(i));
}
