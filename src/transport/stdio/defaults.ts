/**
 * The stdio transport's defaults, apart from the transport itself so that the CLI's flag table
 * reads them without loading the SDK's schemas.
 */

/**
 * Default cap on one client line for `serve`, in bytes: the largest valid call is a
 * `workspace_seed_files` batch of 8 MiB of content, which JSON escaping can grow up to 6x (every
 * byte written as `\u00XX`), so 48 MiB, plus 100 paths of up to 1 KiB (also up to 6x) and the
 * envelope; 64 MiB leaves room for whitespace and stays one line the server can parse.
 * @default 64 MiB
 */
export const DEFAULT_SERVE_MAX_REQUEST_BYTES = 64 * 1024 * 1024;
