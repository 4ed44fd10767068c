/**
 * The grammar of a JSON scalar (RFC 8259 §3 and §6: a number, `true`, `false` or `null`) as a
 * byte-at-a-time automaton, so that a scalar read as it streams is checked without being held.
 * A state is a small integer (see `S`); a bad one stays bad.
 */
import { Byte, isDigit } from './json-bytes.js';

/** Automaton states; the three "complete" ones and a whole literal end a valid scalar. */
const enum S {
  Bad = -1,
  Start = 0,
  /** After `-`. */
  Minus,
  /** A leading `0` (complete; no digit may follow). */
  Zero,
  /** In the integer digits (complete). */
  Int,
  /** After `.`. */
  Dot,
  /** In the fraction digits (complete). */
  Frac,
  /** After `e` or `E`. */
  E,
  /** After the exponent's sign. */
  ESign,
  /** In the exponent digits (complete). */
  Exp,
  /** `true`, `false`, `null`: `Literal + 8 × which + bytes matched`. */
  Literal = 16,
}

/** The state before a scalar's first byte. */
export const SCALAR_START: number = S.Start;
const LITERALS = ['true', 'false', 'null'];

/** The state after byte `c` in state `s`. */
export function stepScalar(s: number, c: number): number {
  switch (s) {
    case S.Start:
      if (c === Byte.Minus) return S.Minus;
      // `t`, `f`, `n`: the first byte of literal 0, 1 or 2 matched.
      if (c === Byte.LowerT) return S.Literal + 1;
      if (c === Byte.LowerF) return S.Literal + 8 + 1;
      if (c === Byte.LowerN) return S.Literal + 16 + 1;
      return c === Byte.Zero ? S.Zero : isDigit(c) ? S.Int : S.Bad;
    case S.Minus:
      return c === Byte.Zero ? S.Zero : isDigit(c) ? S.Int : S.Bad;
    case S.Zero:
    case S.Int:
    case S.Frac:
      if (isDigit(c)) return s === S.Zero ? S.Bad : s;
      if (c === Byte.Dot) return s === S.Frac ? S.Bad : S.Dot;
      return c === Byte.LowerE || c === Byte.UpperE ? S.E : S.Bad;
    case S.Dot:
      return isDigit(c) ? S.Frac : S.Bad;
    case S.E:
      if (c === Byte.Plus || c === Byte.Minus) return S.ESign;
      return isDigit(c) ? S.Exp : S.Bad;
    case S.ESign:
    case S.Exp:
      return isDigit(c) ? S.Exp : S.Bad;
    case S.Bad:
      return S.Bad;
    default: {
      const word = LITERALS[(s - S.Literal) >> 3]!;
      const matched = (s - S.Literal) & 7;
      return matched < word.length && c === word.charCodeAt(matched) ? s + 1 : S.Bad;
    }
  }
}

/** A scalar in state `s` is complete: a whole number or a whole literal. */
export function scalarComplete(s: number): boolean {
  if (s < S.Literal) return s === S.Zero || s === S.Int || s === S.Frac || s === S.Exp;
  return ((s - S.Literal) & 7) === LITERALS[(s - S.Literal) >> 3]!.length;
}
