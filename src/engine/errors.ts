/**
 * One error class for every real failure of the library. Truncation is never an error: it is an
 * outcome reported in `_meta`. Callers match on `code`, never on the message.
 */

/** Stable error codes. */
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

/** Thrown for real failures; `data` carries what was expected and what was seen. */
export class BudgetError extends Error {
  override readonly name = 'BudgetError';
  readonly code: BudgetErrorCode;
  readonly data: Record<string, unknown> | undefined;

  constructor(code: BudgetErrorCode, message: string, data?: Record<string, unknown>) {
    super(message);
    this.code = code;
    this.data = data;
  }
}
