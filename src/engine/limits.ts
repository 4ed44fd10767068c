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
  /**
   * Estimated tokens of all `content[].text` and embedded-resource `text` together, as the model
   * reads them (decoded); the tighter of this and the byte bounds cuts. The estimate
   * (token-estimate.ts) stays at or above what open tokenizers count on the measured corpus.
   * @default 1073741824 (off: the byte bounds alone)
   */
  maxTokens: number;
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

/** Which bound cut first, as the report names it. Documented in `specs/agent-mcp-result-budget.md`. */
export const BUDGET_KINDS = [
  'result_bytes',
  'text_total_bytes',
  'text_block_bytes',
  'text_tokens',
  'binary_block',
  'array_items',
  'object_keys',
  'string_bytes',
  'depth',
  'top_level_field',
  'invalid_block',
] as const;
export type BudgetKind = (typeof BUDGET_KINDS)[number];

/** Everything about one numeric limit, declared once. */
export interface LimitDeclaration {
  /** The value when nothing sets it (for a scaled limit: its share of the default `maxResultBytes`). */
  readonly default: number;
  readonly min: number;
  readonly max: number;
  /** What one unit counts; `bytes` takes KiB/MiB/GiB on the command line. */
  readonly unit: 'bytes' | 'tokens' | 'items' | 'members' | 'levels' | 'pointers';
  /** How help shows the default when the number would mislead (a bound that is off unless set). */
  readonly defaultText?: string;
  /**
   * A host's own variable for the same bound, read when this limit's variable is unset (the most
   * used agent host reads `MAX_MCP_OUTPUT_TOKENS`).
   */
  readonly hostEnv?: string;
  /**
   * Taken off the host's value (`hostEnv`) before it is used: the host refuses a whole result over
   * its cap, and the notice, which this bound does not count, must fit under it too.
   */
  readonly hostReserve?: number;
  /** Share of `maxResultBytes` this limit takes unless set explicitly. */
  readonly scale?: number;
  /** The command-line flag and the environment variable that set it. */
  readonly flag: `--${string}`;
  readonly env: `MCP_BUDGET_${string}`;
  /** One line for `--help` (the range, scaling and default are added where it is printed). */
  readonly help: string;
  /** The report kinds that name this limit as the bound that cut. */
  readonly kinds: readonly BudgetKind[];
  /**
   * Typed results: whether lifting this bound alone can tell that it is the one keeping a
   * schema-valid shrink from fitting (counts and string sizes can; the byte totals cannot).
   */
  readonly liftable: boolean;
  /** Smallest value `serve` starts with, and why: its pages must fit (absent: no minimum beyond the range). */
  readonly serveMinimum?: { readonly min: number; readonly why: string };
}

const GiB = 1024 * 1024 * 1024;
const PAGE_NEEDS = 'a page holds cursors, file names and nested entries';

/**
 * The numeric limits, in the order they are documented. Every other table of them (the defaults,
 * ranges and shares below, the CLI flags and their help, `specs/limits.json`, the report kinds'
 * bounds, serve's minimums) is derived from this one. Defaults are sized for an agent host with a
 * ~25k-token context: 64 KiB is about 16k tokens. The shares of the scaled limits are the
 * defaults' own at 64 KiB (48, 32 and 8 KiB), so a smaller result budget gets smaller text and
 * string bounds and one text block cannot take the whole budget; counts do not scale.
 */
const LIMIT_TABLE = {
  maxResultBytes: {
    default: 64 * 1024, min: 1024, max: GiB, unit: 'bytes', flag: '--max-bytes', env: 'MCP_BUDGET_MAX_BYTES',
    help: 'whole result, report and notice included',
    kinds: ['result_bytes', 'binary_block', 'top_level_field', 'invalid_block'], liftable: false,
  },
  maxTextBytes: {
    default: 48 * 1024, min: 1, max: GiB, unit: 'bytes', scale: 3 / 4, flag: '--max-text-bytes', env: 'MCP_BUDGET_MAX_TEXT_BYTES',
    help: 'all text blocks together',
    kinds: ['text_total_bytes'], liftable: false,
  },
  maxBlockBytes: {
    default: 32 * 1024, min: 1, max: GiB, unit: 'bytes', scale: 1 / 2, flag: '--max-block-bytes', env: 'MCP_BUDGET_MAX_BLOCK_BYTES',
    help: 'one text block',
    kinds: ['text_block_bytes'], liftable: false,
  },
  maxTokens: {
    // The maximum is off: an estimate never exceeds the text's bytes, which no bound lets past 1 GiB.
    // At least 256: a withheld typed result's message and the reading tool's smallest answer fit.
    // 300 off the host's cap: the notice is about 260 estimated tokens at most.
    default: GiB, min: 256, max: GiB, unit: 'tokens', flag: '--max-tokens', env: 'MCP_BUDGET_MAX_TOKENS', hostEnv: 'MAX_MCP_OUTPUT_TOKENS', hostReserve: 300,
    defaultText: 'off (the byte bounds alone)',
    help: 'estimated tokens of all text blocks together, at or above what open tokenizers count (the tighter of this and the byte bounds cuts)',
    kinds: ['text_tokens'], liftable: false,
  },
  maxItems: {
    default: 200, min: 1, max: 10_000_000, unit: 'items', flag: '--max-items', env: 'MCP_BUDGET_MAX_ITEMS',
    help: 'items per array',
    kinds: ['array_items'], liftable: true,
  },
  maxKeys: {
    default: 200, min: 1, max: 10_000_000, unit: 'members', flag: '--max-keys', env: 'MCP_BUDGET_MAX_KEYS',
    help: 'members per object',
    kinds: ['object_keys'], liftable: true, serveMinimum: { min: 32, why: PAGE_NEEDS },
  },
  maxStringBytes: {
    default: 8 * 1024, min: 16, max: GiB, unit: 'bytes', scale: 1 / 8, flag: '--max-string-bytes', env: 'MCP_BUDGET_MAX_STRING_BYTES',
    help: 'any other string',
    kinds: ['string_bytes'], liftable: true, serveMinimum: { min: 1024, why: PAGE_NEEDS },
  },
  maxDepth: {
    // 1000: far past any real result, and within what JSON.stringify can nest without overflowing.
    default: 32, min: 4, max: 1000, unit: 'levels', flag: '--max-depth', env: 'MCP_BUDGET_MAX_DEPTH',
    help: 'nesting depth, the result object is 1',
    kinds: ['depth'], liftable: true, serveMinimum: { min: 8, why: PAGE_NEEDS },
  },
  maxOmittedPaths: {
    default: 16, min: 0, max: 1000, unit: 'pointers', flag: '--max-omitted-paths', env: 'MCP_BUDGET_MAX_OMITTED_PATHS',
    help: 'pointers listed in the report',
    kinds: [], liftable: false,
  },
} as const satisfies Record<string, LimitDeclaration>;

export type NumericLimit = keyof typeof LIMIT_TABLE;
export const LIMITS: Readonly<Record<NumericLimit, LimitDeclaration>> = Object.freeze(LIMIT_TABLE);
/** The numeric limits, in the order they are documented. */
export const NUMERIC_LIMITS = Object.freeze(Object.keys(LIMITS) as NumericLimit[]);
const declared = (): [NumericLimit, LimitDeclaration][] => NUMERIC_LIMITS.map((n) => [n, LIMITS[n]]);

export const DEFAULT_LIMITS: Readonly<BudgetLimits> = Object.freeze({
  ...(Object.fromEntries(declared().map(([n, d]) => [n, d.default])) as Record<NumericLimit, number>),
  notice: true,
  protocolVersion: undefined,
});

/** Limits that scale with `maxResultBytes` unless set explicitly: the share of it each takes. */
export const SCALED_LIMITS: Readonly<Partial<Record<NumericLimit, number>>> = Object.freeze(
  Object.fromEntries(declared().flatMap(([n, d]) => (d.scale === undefined ? [] : [[n, d.scale]]))),
);

/** Accepted ranges. `maxResultBytes` has a floor that depends on the other limits. */
export const LIMIT_RANGES: Readonly<Record<NumericLimit, { min: number; max: number }>> = Object.freeze(
  Object.fromEntries(declared().map(([n, d]) => [n, Object.freeze({ min: d.min, max: d.max })])) as Record<NumericLimit, { min: number; max: number }>,
);

/** The limit each report kind names as the bound that cut. */
export const KIND_LIMIT: Readonly<Record<BudgetKind, NumericLimit>> = Object.freeze(
  Object.fromEntries(declared().flatMap(([n, d]) => d.kinds.map((k) => [k, n]))) as Record<BudgetKind, NumericLimit>,
);

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
/**
 * Every message from a server that is not a tool result (a request such as sampling or
 * elicitation, a notification, a response to another method) is passed whole up to this size and
 * never cut (a cut changes what it asks or says): over it, a request is answered to the server
 * with an error, a notification dropped with a counted warning, a response withheld with an error
 * (`--max-message-bytes`, specs/threat-model.md). @default 1 MiB
 */
export const DEFAULT_MAX_MESSAGE_BYTES = 1024 * 1024;
/** The range of `--max-message-bytes`: up to what the proxy holds of one line it does not bound. */
export const MAX_MESSAGE_BYTES_RANGE = Object.freeze({ min: 1024, max: 8 * 1024 * 1024 });

/**
 * The continuation: what the budget cut of a result is kept for a while, readable through one tool
 * (`specs/agent-mcp-result-budget.md`, "Continuation"). These are not bounds on a result but on
 * what is held to serve it later; each is declared once, and the flags, help and `limits` derive
 * from this table.
 */
export interface ContinuationSettings {
  /** Offer a continuation when a result is cut (`--no-continuation` turns it off). @default true */
  enabled: boolean;
  /** A handle expires this long after the result it serves was cut. @default 600000 (10 min) */
  ttlMs: number;
  /** One result's original, as JSON, held at most this large; a larger one keeps its beginning. @default 16 MiB */
  maxResultBytes: number;
  /** Originals held for one session (one connection), summed; the least recently read go first. @default 64 MiB */
  maxSessionBytes: number;
  /** Originals held by the whole process, summed; the least recently read go first. @default 256 MiB */
  maxProcessBytes: number;
  /** Hold originals in memory only, never in spill files (`--continuation-memory`). @default false */
  memory: boolean;
  /** The directory the private spill directory is made in; empty: the system's temporary directory. @default '' */
  dir: string;
}

/** One numeric continuation setting: default, range, flag, variable and help, once. */
export interface ContinuationDeclaration {
  readonly default: number;
  readonly min: number;
  readonly max: number;
  readonly unit: 'bytes' | 'ms';
  readonly flag: `--${string}`;
  readonly env: `MCP_BUDGET_${string}`;
  readonly help: string;
}

const MiB = 1024 * 1024;
const CONTINUATION_TABLE = {
  ttlMs: { default: 10 * 60 * 1000, min: 1000, max: 24 * 60 * 60 * 1000, unit: 'ms', flag: '--continuation-ttl-ms', env: 'MCP_BUDGET_CONTINUATION_TTL_MS', help: 'how long a continuation handle stays readable' },
  maxResultBytes: { default: 16 * MiB, min: 1024, max: 64 * GiB, unit: 'bytes', flag: '--continuation-max-result-bytes', env: 'MCP_BUDGET_CONTINUATION_MAX_RESULT_BYTES', help: 'one cut result kept for its continuation (a larger one keeps its beginning)' },
  maxSessionBytes: { default: 64 * MiB, min: 1024, max: 64 * GiB, unit: 'bytes', flag: '--continuation-max-session-bytes', env: 'MCP_BUDGET_CONTINUATION_MAX_SESSION_BYTES', help: 'cut results kept per session, summed (least recently read evicted)' },
  maxProcessBytes: { default: 256 * MiB, min: 1024, max: 64 * GiB, unit: 'bytes', flag: '--continuation-max-bytes', env: 'MCP_BUDGET_CONTINUATION_MAX_BYTES', help: 'cut results kept by the process, summed (least recently read evicted)' },
} as const satisfies Record<string, ContinuationDeclaration>;

export type ContinuationLimit = keyof typeof CONTINUATION_TABLE;
export const CONTINUATION_LIMITS: Readonly<Record<ContinuationLimit, ContinuationDeclaration>> = Object.freeze(CONTINUATION_TABLE);
export const CONTINUATION_LIMIT_NAMES = Object.freeze(Object.keys(CONTINUATION_TABLE) as ContinuationLimit[]);
export const DEFAULT_CONTINUATION: Readonly<ContinuationSettings> = Object.freeze({
  enabled: true,
  memory: false,
  dir: '',
  ...(Object.fromEntries(CONTINUATION_LIMIT_NAMES.map((n) => [n, CONTINUATION_TABLE[n].default])) as Record<ContinuationLimit, number>),
});

/** The reading tool's name: namespaced like the `_meta` keys, so that no upstream tool is shadowed by chance. */
export const CONTINUATION_TOOL = 'mcp_result_budget__read';
