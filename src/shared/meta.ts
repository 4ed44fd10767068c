/**
 * The `_meta` keys of the project: what every product writes beside a result, named once. The
 * budget's report and notice keys belong to the engine, which writes them; the others are the
 * tools' (a failure's code and what is known of it; the `exec` envelope's own report).
 */
export { NOTICE_KEY, REPORT_KEY } from '../engine/index.js';

/** A tool failure's code, and what is known when its outcome is unknown (a commit id, a task id). */
export const ERROR_META_KEY = 'io.github.mcp-result-budget/error';

/** What `exec` reports about the envelope it answers with. */
export const EXEC_META_KEY = 'io.github.mcp-result-budget/exec';
