/**
 * Every default number of the result budget, in one place. The spec's defaults table
 * (`specs/limits.json`) is checked against this module by a test, so the two cannot drift.
 */
/** The bounds one result is held to. Sizes are UTF-8 bytes as written on the wire. */
export interface BudgetLimits {
  /** Whole bounded result (or JSON-RPC error object), report and notice included. @default 65536 */
  maxResultBytes: number;
  /** Sum of all `content[].text` and embedded-resource `text`, escaped, without quotes. @default 49152 */
  maxTextBytes: number;
  /** One text block's `text` (or resource `text`), escaped, without quotes. @default 32768 */
  maxBlockBytes: number;
  /** Items kept per array (outside `content[]`, which text and byte bounds limit). @default 200 */
  maxItems: number;
  /** Members kept per object. @default 200 */
  maxKeys: number;
  /** Any other string value or object key, escaped, without quotes. @default 8192 */
  maxStringBytes: number;
  /** Containers nested at most this deep; the result object itself is depth 1. @default 32 */
  maxDepth: number;
  /** JSON Pointers listed in `omitted_paths`. @default 16 */
  maxOmittedPaths: number;
  /** Append a short model-visible notice block to `content` when something was cut. @default true */
  notice: boolean;
  /**
   * Negotiated MCP protocol version. It decides which version-specific top-level fields are
   * kept (`task` from 2025-11-25, `resultType` from 2026-07-28). Unset keeps all of them.
   * @default undefined
   */
  protocolVersion: string | undefined;
}

/** Options accepted wherever limits are: any subset of {@link BudgetLimits}. */
export type BudgetOptions = Partial<BudgetLimits>;

/** The numeric limits, in the order they are documented. */
export const NUMERIC_LIMITS = [
  'maxResultBytes',
  'maxTextBytes',
  'maxBlockBytes',
  'maxItems',
  'maxKeys',
  'maxStringBytes',
  'maxDepth',
  'maxOmittedPaths',
] as const;
export type NumericLimit = (typeof NUMERIC_LIMITS)[number];

/** Defaults sized for an agent host with a ~25k-token context: 64 KiB is about 16k tokens. */
export const DEFAULT_LIMITS: Readonly<BudgetLimits> = Object.freeze({
  maxResultBytes: 64 * 1024,
  maxTextBytes: 48 * 1024,
  maxBlockBytes: 32 * 1024,
  maxItems: 200,
  maxKeys: 200,
  maxStringBytes: 8 * 1024,
  maxDepth: 32,
  maxOmittedPaths: 16,
  notice: true,
  protocolVersion: undefined,
});

/**
 * Limits that scale with `maxResultBytes` unless set explicitly: the share of it each takes. The
 * shares are the defaults' own at 64 KiB (48, 32 and 8 KiB), so the defaults do not move; a
 * smaller result budget gets smaller text and string bounds, so that one text block cannot take
 * the whole budget. Counts (items, keys, depth, pointers) do not scale: the byte bounds cut there.
 */
export const SCALED_LIMITS: Readonly<Partial<Record<NumericLimit, number>>> = Object.freeze({
  maxTextBytes: 3 / 4,
  maxBlockBytes: 1 / 2,
  maxStringBytes: 1 / 8,
});

const GiB = 1024 * 1024 * 1024;

/** Accepted ranges. `maxResultBytes` has a floor that depends on the other limits. */
export const LIMIT_RANGES: Readonly<Record<NumericLimit, { min: number; max: number }>> = Object.freeze({
  maxResultBytes: { min: 1024, max: GiB },
  maxTextBytes: { min: 1, max: GiB },
  maxBlockBytes: { min: 1, max: GiB },
  maxItems: { min: 1, max: 10_000_000 },
  maxKeys: { min: 1, max: 10_000_000 },
  maxStringBytes: { min: 16, max: GiB },
  // 1000: far past any real result, and within what JSON.stringify can nest without overflowing.
  maxDepth: { min: 4, max: 1000 },
  maxOmittedPaths: { min: 0, max: 1000 },
});

/** `_meta` key of the report (reverse-DNS prefix, outside the reserved `mcp` namespaces). */
export const REPORT_KEY = 'io.github.mcp-result-budget/budget';
/** `_meta` key that marks the notice block this library appends. */
export const NOTICE_KEY = 'io.github.mcp-result-budget/notice';

/** A JSON Pointer longer than this (escaped, in bytes) is not listed; the list is flagged capped. */
export const MAX_POINTER_BYTES = 256;
/**
 * A string cut by the result-size bound that would keep fewer than this many bytes is dropped
 * instead: a few characters of a long value help nobody and cost a pointer.
 */
export const MIN_CUT_BYTES = 16;
/**
 * An object key longer than this (UTF-16 units) drops its member whatever `maxStringBytes` says:
 * the byte source never assembles a longer key, so both paths apply the same rule.
 */
export const MAX_KEY_UNITS = 1024 * 1024;
/** A JSON-RPC `id` (or `jsonrpc` value) larger than this is rejected, not passed. */
export const MAX_ENVELOPE_FIELD_BYTES = 1024;
/** A captured earlier report larger than this is treated as foreign data and dropped. */
export const MAX_CAPTURED_REPORT_BYTES = 64 * 1024;

/**
 * Top-level fields of a `CallToolResult` that are always kept, and those a protocol version adds.
 * `task` is the result of a task-creating call (2025-11-25); `resultType` is in 2026-07-28.
 */
export const STANDARD_RESULT_FIELDS: readonly string[] = ['content', 'structuredContent', 'isError', '_meta'];
export const VERSIONED_RESULT_FIELDS: Readonly<Record<string, string>> = Object.freeze({
  task: '2025-11-25',
  resultType: '2026-07-28',
});


/** First keys that mark a JSON-RPC message rather than a bare result (root kind `auto`). */
export const ENVELOPE_KEYS: ReadonlySet<string> = new Set(['jsonrpc', 'id', 'result', 'error', 'method', 'params']);

/** Proxy: a client message over this is refused with a JSON-RPC error (`--max-request-bytes`). */
export const DEFAULT_MAX_REQUEST_BYTES = 4 * 1024 * 1024;
/** Proxy: server lines up to this size are parsed whole (JSON.parse wins below ~1 MiB); larger ones stream. */
export const DEFAULT_FAST_PATH_BYTES = 1024 * 1024;
