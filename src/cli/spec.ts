/**
 * The commands of `mcp-budget` and their flags, written down once: `parseArgs` is configured from
 * these tables (src/cli/parse.ts) and `--help` is printed from them (src/cli/help.ts), so the
 * flags a command accepts and the flags its help lists cannot drift apart.
 */
import { CONTINUATION_LIMIT_NAMES, CONTINUATION_LIMITS, CONTINUATION_TOOL, DEFAULT_LIMITS, minResultBytes, DEFAULT_MAX_MESSAGE_BYTES, DEFAULT_MAX_REQUEST_BYTES, LIMIT_RANGES, LIMITS, MAX_MESSAGE_BYTES_RANGE, type NumericLimit } from '../engine/index.js';
import { DEFAULT_HTTP_MAX_INFLIGHT_BODY_BYTES, DEFAULT_HTTP_MAX_REQUEST_BYTES, DEFAULT_MAX_SESSIONS, HEADERS_TIMEOUT_MS, REQUEST_TIMEOUT_MS, DEFAULT_SESSION_IDLE_MS, DEFAULT_SHUTDOWN_GRACE_MS } from '../transport/http/defaults.js';
import { DEFAULT_SERVE_MAX_REQUEST_BYTES } from '../transport/stdio/defaults.js';
import { BUDGET_FLAGS } from './args.js';

/** One flag: its long name (without `--`), whether it takes a value, and what its help says. */
export interface FlagSpec {
  /** Long name without the dashes, as `parseArgs` keys it: `max-bytes`. */
  name: string;
  type: 'string' | 'boolean';
  /** May be given more than once (values collected in order). */
  multiple?: boolean;
  /** A one-letter alias (`-h`). */
  short?: string;
  /** Placeholder of the value in help: `N`, `DIR`. */
  value?: string;
  /** One line of help. */
  help: string;
  /** The default, as help prints it. */
  default?: string;
  /** The environment variable that also sets it (the flag wins). */
  env?: string;
}

/** One command: its usage lines, flags, whether it takes positionals, and one example. */
export interface CommandSpec {
  name: string;
  /** One line for `mcp-budget --help`. */
  summary: string;
  usage: readonly string[];
  flags: readonly FlagSpec[];
  /** Takes positional arguments (FILE, ACTION, a team subcommand). */
  positionals: boolean;
  example: string;
  /** Extra lines after the flags. */
  notes?: readonly string[];
  /** Flags of other commands this one refuses on purpose, each with the reason (a usage error that says it, and a note in the help). */
  refused?: Readonly<Record<string, string>>;
}

/** Why `proxy` has no `--stateless`: said by the refusal and by the help. */
export const PROXY_STATELESS_REFUSAL =
  '--stateless is serve\'s alone: a proxy holds its upstream\'s session (a server process, or a session of the upstream URL) for each client session, ' +
  'which a transport per request cannot keep; behind a load balancer, route each Mcp-Session-Id to the replica that opened it (sticky sessions)'

/** Sizes in help: `65536` becomes `64KiB`. */
export function formatBytes(n: number): string {
  for (const [unit, size] of [['GiB', 1024 ** 3], ['MiB', 1024 ** 2], ['KiB', 1024]] as const) {
    if (n >= size && n % size === 0) return `${n / size}${unit}`;
  }
  return String(n);
}

/** `0.75` → `3/4`: the shares of the scaled limits are simple fractions. */
export function fraction(x: number): string {
  for (let d = 1; d <= 64; d++) if (Number.isInteger(x * d)) return `${x * d}/${d}`;
  return String(x);
}

/** A budget flag's help line, from the limits table. */
function budgetHelp(limit: NumericLimit): string {
  const d = LIMITS[limit];
  return d.scale === undefined ? d.help : `${d.help} (scales: ${fraction(d.scale)} of ${LIMITS.maxResultBytes.flag})`;
}

/** The budget flags every command that bounds results takes. */
export const BUDGET_FLAG_SPECS: readonly FlagSpec[] = [
  ...BUDGET_FLAGS.map((def): FlagSpec => {
    const n = DEFAULT_LIMITS[def.limit];
    const { min, max } = LIMIT_RANGES[def.limit];
    return {
      name: def.flag.slice(2),
      type: 'string',
      value: 'N',
      // the total's real floor is what the report and notice take, plus room for content
      help:
        def.limit === 'maxResultBytes'
          ? `${budgetHelp(def.limit)} (${minResultBytes(DEFAULT_LIMITS)}–${max} at the defaults; as low as ${min} with fewer --max-omitted-paths or --no-notice)`
          : `${budgetHelp(def.limit)} (${min}–${max})`,
      default: LIMITS[def.limit].defaultText ?? (def.size ? formatBytes(n) : String(n)),
      env: def.hostEnv === undefined ? def.env : `${def.env}, else ${def.hostEnv}`,
    };
  }),
  { name: 'no-notice', type: 'boolean', help: 'do not append the model-visible notice block', env: 'MCP_BUDGET_NOTICE=0' },
  { name: 'protocol-version', type: 'string', value: 'V', help: 'negotiated MCP version (decides version-specific fields)', default: 'unset (both kept)', env: 'MCP_BUDGET_PROTOCOL_VERSION' },
];

/** The continuation flags (the settings from the table in src/engine/limits.ts), taken by the commands that serve tools. */
export const CONTINUATION_FLAG_SPECS: readonly FlagSpec[] = [
  { name: 'no-continuation', type: 'boolean', help: `keep nothing of a cut result: no handle, no ${CONTINUATION_TOOL} tool; the notice asks for less`, env: 'MCP_BUDGET_CONTINUATION=0' },
  { name: 'continuation-memory', type: 'boolean', help: 'hold cut results in memory only, never in spill files', env: 'MCP_BUDGET_CONTINUATION_MEMORY=1' },
  { name: 'continuation-dir', type: 'string', value: 'DIR', help: 'where the private spill directory (mode 0700, removed at exit) is made', default: 'the system temporary directory', env: 'MCP_BUDGET_CONTINUATION_DIR' },
  ...CONTINUATION_LIMIT_NAMES.map((name): FlagSpec => {
    const d = CONTINUATION_LIMITS[name];
    const range = d.unit === 'bytes' ? `${formatBytes(d.min)}–${formatBytes(d.max)}` : `${d.min}–${d.max}`;
    return { name: d.flag.slice(2), type: 'string', value: 'N', help: `${d.help} (${range})`, default: d.unit === 'bytes' ? formatBytes(d.default) : String(d.default), env: d.env };
  }),
];

const LOG_CUTS: FlagSpec = { name: 'log-cuts', type: 'boolean', help: 'one JSON line per cut result on stderr (over HTTP with its session id)', default: 'off', env: 'MCP_BUDGET_LOG_CUTS=1' };

const HELP_FLAG: FlagSpec = { name: 'help', short: 'h', type: 'boolean', help: 'print this help' };

/** The Streamable HTTP flags shared by serve and proxy (checked in src/cli/listen-args.ts). */
export const LISTEN_FLAG_SPECS: readonly FlagSpec[] = [
  { name: 'listen', type: 'string', value: '[HOST:]PORT', help: `serve MCP Streamable HTTP on http://HOST:PORT/mcp (HOST 127.0.0.1 unless named; port 0 picks one); a client sends its headers within ${HEADERS_TIMEOUT_MS / 1000} s and its whole request within ${REQUEST_TIMEOUT_MS / 1000} s, or is answered 408`, default: 'stdio' },
  { name: 'json-response', type: 'boolean', help: 'JSON answers instead of SSE streams (with --listen)' },
  { name: 'max-request-bytes', type: 'string', value: 'N', help: 'largest client message (1KiB–1GiB); with --listen, refused with 413', default: `proxy ${formatBytes(DEFAULT_MAX_REQUEST_BYTES)}, serve ${formatBytes(DEFAULT_SERVE_MAX_REQUEST_BYTES)} over stdio; ${formatBytes(DEFAULT_HTTP_MAX_REQUEST_BYTES)} over HTTP` },
  { name: 'allow-host', type: 'string', multiple: true, value: 'NAME', help: 'accept this Host name too (with --listen)', default: 'loopback names and the bound host' },
  { name: 'allow-origin', type: 'string', multiple: true, value: 'ORIGIN', help: 'accept this Origin too (with --listen)', default: 'loopback origins of the bound port' },
  { name: 'token-file', type: 'string', value: 'FILE', help: 'require Authorization: Bearer TOKEN; lines `TOKEN MEMBER`; mode 600 (with --listen)' },
  { name: 'session-idle-ms', type: 'string', value: 'N', help: 'close sessions idle this long (100–604800000, with --listen)', default: String(DEFAULT_SESSION_IDLE_MS) },
  { name: 'max-sessions', type: 'string', value: 'N', help: 'sessions open at once (1–100000, with --listen)', default: String(DEFAULT_MAX_SESSIONS) },
  { name: 'max-inflight-body-bytes', type: 'string', value: 'N', help: 'request bodies held at once, summed; past it 503 before reading (1KiB–64GiB, with --listen)', default: formatBytes(DEFAULT_HTTP_MAX_INFLIGHT_BODY_BYTES) },
  { name: 'shutdown-ms', type: 'string', value: 'N', help: 'on SIGTERM/SIGINT, time left to requests in flight (0–600000, with --listen)', default: String(DEFAULT_SHUTDOWN_GRACE_MS) },
];

/** `--stateless` (serve with `--listen`). */
const TOOLS: FlagSpec = { name: 'tools', type: 'string', value: 'LIST', help: 'the surfaces to offer, comma-separated: workspace, git, team, exec (exec runs only the actions of those offered)', default: 'all', env: 'MCP_BUDGET_TOOLS' };
export const STATELESS: FlagSpec = { name: 'stateless', type: 'boolean', help: 'one transport per request, no sessions (with --listen)' };
/** `--cursor-key-file` (serve). */
export const CURSOR_KEY_FILE: FlagSpec = { name: 'cursor-key-file', type: 'string', value: 'FILE', help: 'cursor signing key shared by replicas', default: 'random per process', env: 'MCP_BUDGET_CURSOR_KEY (the key itself)' };
/** `--max-message-bytes` (proxy). */
export const MAX_MESSAGE_BYTES: FlagSpec = {
  name: 'max-message-bytes',
  type: 'string',
  value: 'N',
  help: `largest server message that is not a tool result, passed whole (${formatBytes(MAX_MESSAGE_BYTES_RANGE.min)}–${formatBytes(MAX_MESSAGE_BYTES_RANGE.max)}): a larger request is answered to the server with an error, a notification dropped, a response withheld`,
  default: formatBytes(DEFAULT_MAX_MESSAGE_BYTES),
};
/** `--upstream-url` (proxy). */
export const UPSTREAM_URL: FlagSpec = { name: 'upstream-url', type: 'string', value: 'URL', help: 'bound a remote Streamable HTTP server instead of spawning COMMAND' };

const ROOT: FlagSpec = { name: 'root', type: 'string', value: 'DIR', help: 'the workspace root', default: 'the current directory' };
const TEAM_DB: FlagSpec = { name: 'team-db', type: 'string', value: 'PATH', help: 'the team store: a SQLite file or a postgres:// URL', default: 'the user state directory, one file per root' };
const AS: FlagSpec = { name: 'as', type: 'string', value: 'NAME', help: 'the calling member', default: 'the OS user (the first one on an empty store is owner)' };

/** Every command, in the order `mcp-budget --help` lists them. */
export const COMMANDS: readonly CommandSpec[] = [
  {
    name: 'apply',
    summary: 'Bound one CallToolResult or JSON-RPC response (file or stdin) and print the bounded JSON.',
    usage: ['mcp-budget apply [budget flags] [--mode auto|memory|stream] [FILE | -]'],
    flags: [{ name: 'mode', type: 'string', value: 'MODE', help: 'auto (= stream, flat memory), memory (JSON.parse, for debugging), stream', default: 'auto' }, ...BUDGET_FLAG_SPECS, HELP_FLAG],
    positionals: true,
    example: 'mcp-budget apply --max-bytes 16KiB result.json',
    notes: ['Exit codes: 0 success (truncated or not), 1 invalid input, 2 usage error, 130 interrupted.'],
  },
  {
    name: 'proxy',
    summary: 'Run a stdio MCP server (or reach a Streamable HTTP one) and bound every tools/call result it returns.',
    usage: ['mcp-budget proxy [budget flags] [--max-request-bytes N] [--max-message-bytes N] [--log-cuts] [--listen [HOST:]PORT ...] -- COMMAND [ARGS...]', 'mcp-budget proxy [budget flags] [--max-message-bytes N] [--log-cuts] [--listen [HOST:]PORT ...] --upstream-url URL'],
    flags: [UPSTREAM_URL, MAX_MESSAGE_BYTES, LOG_CUTS, ...LISTEN_FLAG_SPECS, ...BUDGET_FLAG_SPECS, ...CONTINUATION_FLAG_SPECS, HELP_FLAG],
    positionals: false,
    example: 'mcp-budget proxy --max-bytes 32KiB -- npx -y @modelcontextprotocol/server-filesystem .',
    refused: { stateless: PROXY_STATELESS_REFUSAL },
    notes: [
      `${PROXY_STATELESS_REFUSAL}.`,
      'The `--` may be left out (some launchers consume it): the command then starts at the first word that is not a flag of proxy or a flag\'s value.',
      `A cut result keeps its original for a while: the notice gives a handle, and the ${CONTINUATION_TOOL} tool (added to tools/list, answered by the proxy) reads the cut parts within the budget. Results over the fast-path size stream and get none.`,
    ],
  },
  {
    name: 'serve',
    summary: 'The workspace MCP server over stdio, or Streamable HTTP with --listen.',
    usage: ['mcp-budget serve [--root DIR] [--team-db PATH] [--as NAME] [--tools LIST] [--log-cuts] [--listen [HOST:]PORT ...] [budget flags]'],
    flags: [
      ROOT, TEAM_DB, AS, TOOLS, LOG_CUTS, STATELESS, CURSOR_KEY_FILE,
      ...LISTEN_FLAG_SPECS, ...BUDGET_FLAG_SPECS, ...CONTINUATION_FLAG_SPECS, HELP_FLAG,
    ],
    positionals: false,
    example: 'mcp-budget serve --root . --max-bytes 32KiB',
    notes: [`A cut result keeps its original for a while: the notice gives a handle, and the ${CONTINUATION_TOOL} tool reads the cut parts within the budget (none with --stateless).`],
  },
  {
    name: 'limits',
    summary: 'Print the effective limits (after flags, environment and scaling) as JSON.',
    usage: ['mcp-budget limits [budget flags] [continuation flags]'],
    flags: [...BUDGET_FLAG_SPECS, ...CONTINUATION_FLAG_SPECS, HELP_FLAG],
    positionals: false,
    example: 'MCP_BUDGET_MAX_ITEMS=50 mcp-budget limits --max-bytes 32KiB',
  },
  {
    name: 'team',
    summary: 'Administer the team store\'s members, or import JSON Lines.',
    usage: ['mcp-budget team [--root DIR] [--team-db PATH] [--as NAME] add NAME [--role R] | list | deactivate NAME | reactivate NAME | set-role NAME ROLE | import FILE [--skip-bad-lines] [--skip-existing] | check'],
    flags: [
      ROOT,
      TEAM_DB,
      { name: 'as', type: 'string', value: 'NAME', help: 'the administrator: made the owner when `add` writes the first member of an empty store (serve runs as this member by default)', default: 'the OS user' },
      { name: 'role', type: 'string', value: 'R', help: 'the role of `add` (or of `set-role` without ROLE): owner, lead, member, agent or guest', default: 'member' },
      { name: 'skip-bad-lines', type: 'boolean', help: 'import: skip a bad line (reported with its number and reason) instead of stopping' },
      { name: 'skip-existing', type: 'boolean', help: 'import: keep a member that exists already as it is instead of stopping (messages, tasks and comments have no key to match and are written again)' },
      ...BUDGET_FLAG_SPECS,
      HELP_FLAG,
    ],
    positionals: true,
    example: 'mcp-budget team --root . add alice --role lead',
    notes: [
      'import reads JSON Lines, one object per line (kind: member, channel, message, task, comment), into SQLite or PostgreSQL; a bad line stops it (lines before its batch stay imported) unless --skip-bad-lines.',
      'On an empty store, add makes the administrator (--as, the OS user by default) its owner first, so that serve, which runs as that member, can start; import says so when that member is missing.',
      'check lists rows stored before today\'s checks (a time outside years 1-9999, an id past 2^53, a NUL in a text, a value of another type in a SQLite column) and exits 1 when there are any; serve reports the same on stderr.',
    ],
  },
  {
    name: 'exec',
    summary: 'Run one action of serve\'s exec tool and print its envelope as JSON.',
    usage: ['mcp-budget exec ACTION [--input JSON | --input-file FILE] [--root DIR] [--team-db PATH] [--as NAME] [budget flags]'],
    flags: [
      { name: 'input', type: 'string', value: 'JSON', help: 'the action\'s input, a JSON object', default: '{}' },
      { name: 'input-file', type: 'string', value: 'FILE', help: 'read the input from FILE (- for stdin)' },
      ROOT, TEAM_DB, AS, ...BUDGET_FLAG_SPECS, HELP_FLAG,
    ],
    positionals: true,
    example: 'mcp-budget exec workspace.list_dir --input \'{"path":"."}\'',
    notes: ['Exit codes: 0 ok, 1 an isError envelope, 2 usage error, 3 an isError envelope whose write was made or may have been (its report says applied: do not repeat it).'],
  },
  {
    name: 'demo',
    summary: 'Bound a generated oversized result and print what came out, with its report.',
    usage: ['mcp-budget demo [budget flags]'],
    flags: [...BUDGET_FLAG_SPECS, HELP_FLAG],
    positionals: false,
    example: 'mcp-budget demo --max-bytes 8KiB',
  },
];

/** The spec of `name`, or undefined for an unknown command. */
export function findCommand(name: string): CommandSpec | undefined {
  return COMMANDS.find((c) => c.name === name);
}
