/**
 * Every number of the team store and its tools, in one place, each with its unit in the name.
 * Page sizes are the contract of `specs/agent-mcp-result-budget.md` (§6); caps bound what a
 * mutation or an import line may write, checked before anything is written.
 */

/** Page sizes: `default` when `limit` is absent, `max` the largest accepted (over it is refused). */
export const TEAM_PAGE_LIMITS = Object.freeze({
  /** `message_history_read`: newest first. */
  history: { default: 20, max: 100 },
  /** `message_search`: bm25 order. */
  messageSearch: { default: 20, max: 100 },
  /** `task_list`: updated_at desc. */
  listTasks: { default: 20, max: 100 },
  /** `task_search`: identity hit first, then bm25 order. */
  searchTasks: { default: 20, max: 100 },
  /** The comments section of `task_get`. */
  comments: { default: 10, max: 100 },
  /** `task_options`: a field's options or matching members. */
  options: { default: 20, max: 100 },
  /** `inbox_read`: the continuation inbox. */
  inbox: { default: 50, max: 50 },
});

/** Caps on what a mutation (or an import line) writes; over a cap nothing is written. */
export const TEAM_INPUT_CAPS = Object.freeze({
  /** A member name (UTF-8 bytes). */
  maxNameBytes: 64,
  /** A channel name (UTF-8 bytes). */
  maxChannelBytes: 80,
  /** A message body (UTF-8 bytes). */
  maxMessageBytes: 16 * 1024,
  /** Recipients in one message's `to`. */
  maxRecipients: 50,
  /** A task title (UTF-8 bytes). */
  maxTitleBytes: 200,
  /** A task body (UTF-8 bytes). */
  maxTaskBodyBytes: 32 * 1024,
  /** Labels on one task. */
  maxLabels: 20,
  /** One label (UTF-8 bytes). */
  maxLabelBytes: 64,
  /** A comment body (UTF-8 bytes). */
  maxCommentBytes: 16 * 1024,
  /** Every string of one mutation together (UTF-8 bytes). */
  maxTotalBytes: 48 * 1024,
});

/** Caps on reads that are not page sizes. */
export const TEAM_READ_LIMITS = Object.freeze({
  /** A search query (UTF-16 units); longer is refused. */
  maxQueryChars: 256,
  /** Terms of a search query after tokenizing; more is refused. */
  maxQueryTerms: 16,
  /** Message body preview in a page (escaped UTF-8 bytes). */
  previewBytes: 200,
  /** Task body preview in a page (escaped UTF-8 bytes). */
  taskPreviewBytes: 160,
  /** Tokens of context around a search match in a snippet (FTS5 `snippet()`, at most 64). */
  snippetTokens: 12,
  /** Escaped UTF-8 bytes a snippet may take in a page (cut after `snippet()`). */
  snippetBytes: 240,
  /**
   * Matches ranked together by a message search: bm25 scores every row it ranks, so a word in
   * 100,000 messages cost 40-50 ms to rank whole at 1M messages; ranked in windows of the newest
   * 10,000 matches it costs about 10 ms (bench/team.bench.ts).
   */
  searchWindowMatches: 10_000,
  /** Windows one search call may examine to find a row (a channel filter can leave one empty). */
  searchWindowsPerCall: 2,
});

/** The SQLite engine's settings. */
export const SQLITE_SETTINGS = Object.freeze({
  /** How long a statement waits for another process's lock before SQLITE_BUSY (ms). */
  busyTimeoutMs: 2000,
  /** Page cache per connection (KiB; SQLite's `cache_size` takes negative KiB). */
  cacheKiB: 16 * 1024,
  /**
   * Memory-mapped I/O window (bytes). Off: mapped file pages count in the server's resident set
   * (a search over a 1M-message store raised `serve`'s peak RSS from about 100 to 210 MiB), while
   * reads through the page cache hold only `cacheKiB` in the process.
   */
  mmapBytes: 0,
});

/** `mcp-budget team import`. */
export const TEAM_IMPORT_LIMITS = Object.freeze({
  /** Longest accepted line (bytes); a longer line is an error naming its number. */
  maxLineBytes: 1024 * 1024,
  /** Rows per transaction. */
  batchRows: 5000,
  /** Progress on stderr at most this often (ms). */
  progressEveryMs: 1000,
});

/**
 * Times every reader renders: ISO 8601 with a four-digit year (0001-01-01 to 9999-12-31), in whole
 * milliseconds. The store accepts no other (a time past `Date`'s range once made every page that
 * held it fail, and an inbox holding it could never be acknowledged).
 */
export const TIME_RANGE_MS = Object.freeze({ min: Date.parse('0001-01-01T00:00:00.000Z'), max: Date.parse('9999-12-31T23:59:59.999Z') });
