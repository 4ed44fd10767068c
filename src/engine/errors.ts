/**
 * The one error of the project, at its lowest floor: a stable `code` (what callers match on,
 * never the message), a message for the model (what happened and what to do) and `data` for the
 * operator (the limit, the value, what is known). Truncation is never an error: it is an outcome
 * reported in `_meta`.
 *
 * Layers extend the tree with codes, not classes: each declares its codes by merging them into
 * {@link ErrorCodes} (`declare module` on this file), so a code is one string wherever it is
 * raised and however many borders it crosses, and `instanceof BudgetError` recognizes every
 * failure the project describes. A layer may export a constructor typed to its own codes (the
 * same class: `WorkspaceError`, `TeamError`), so it cannot raise another layer's code by mistake.
 */

/** The engine's codes (the library's failures). */
export type BudgetErrorCode =
  /** A limit or option is outside its accepted range. `data` names the option and the range. */
  | 'LIMIT_OUT_OF_RANGE'
  /** The input is not a JSON object shaped like a `CallToolResult` or a JSON-RPC response. */
  | 'INVALID_RESULT'
  /** The input bytes are not valid JSON (the message names the byte offset). */
  | 'INVALID_JSON'
  /** A JSON-RPC envelope field (such as `id`) is malformed or too large to pass. */
  | 'INVALID_ENVELOPE'
  /** The work was cancelled through an `AbortSignal`. */
  | 'ABORTED';

/**
 * Every code of every layer, as the keys of this interface. A layer adds its own with
 * `declare module '…/engine/errors.js' { interface ErrorCodes extends Record<MyCode, true> {} }`.
 */
// eslint-disable-next-line @typescript-eslint/no-empty-object-type
export interface ErrorCodes extends Record<BudgetErrorCode, true> {}

/** A code of any layer. */
export type ErrorCode = keyof ErrorCodes & string;

/** Thrown for real failures; `data` carries what was expected and what was seen. */
export class BudgetError<C extends ErrorCode = ErrorCode> extends Error {
  override readonly name = 'BudgetError';

  constructor(
    readonly code: C,
    message: string,
    readonly data: Record<string, unknown> = {},
  ) {
    super(message);
  }
}

/** A constructor of the one error typed to one layer's codes (the same class at run time). */
export type LayerError<C extends ErrorCode> = new (code: C, message: string, data?: Record<string, unknown>) => BudgetError<C>;

/** `e` is a failure the project describes, with code `code` when one is given. */
export function isBudgetError<C extends ErrorCode>(e: unknown, ...codes: C[]): e is BudgetError<C> {
  return e instanceof BudgetError && (codes.length === 0 || codes.includes(e.code as C));
}
