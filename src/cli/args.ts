/**
 * Argument parsing shared by the commands: sizes with KiB/MiB/GiB suffixes, the budget flags,
 * and usage errors that name the flag and its accepted range.
 */
import { LIMIT_RANGES, type BudgetOptions, type NumericLimit } from '../engine/index.js';

/** A command-line mistake: printed with usage, exit code 2. */
export class UsageError extends Error {
  override readonly name = 'UsageError';
}

const UNITS: Record<string, number> = { '': 1, b: 1, kib: 1024, k: 1024, mib: 1024 ** 2, m: 1024 ** 2, gib: 1024 ** 3, g: 1024 ** 3 };

/** Parse `65536`, `64KiB`, `1.5MiB`, `2GiB` into a whole number of bytes. */
export function parseSize(flag: string, text: string): number {
  const m = /^(\d+(?:\.\d+)?)\s*([a-zA-Z]*)$/.exec(text.trim());
  const unit = m ? UNITS[m[2]!.toLowerCase()] : undefined;
  if (!m || unit === undefined) {
    throw new UsageError(`Expected \`${flag}\` to be a size in bytes (e.g. 65536, 64KiB, 1MiB), got ${JSON.stringify(text)}`);
  }
  const n = Number(m[1]) * unit;
  if (!Number.isFinite(n)) throw new UsageError(`\`${flag}\` is too large: ${text}`);
  return Math.floor(n);
}

function parseCount(flag: string, text: string): number {
  if (!/^\d+$/.test(text.trim())) throw new UsageError(`Expected \`${flag}\` to be a whole number, got ${JSON.stringify(text)}`);
  return Number(text);
}

/** Budget flags: name, the limit it sets, and whether it takes a size (with units) or a count. */
export const BUDGET_FLAGS: readonly { flag: string; limit: NumericLimit; size: boolean; env: string }[] = [
  { flag: '--max-bytes', limit: 'maxResultBytes', size: true, env: 'MCP_BUDGET_MAX_BYTES' },
  { flag: '--max-text-bytes', limit: 'maxTextBytes', size: true, env: 'MCP_BUDGET_MAX_TEXT_BYTES' },
  { flag: '--max-block-bytes', limit: 'maxBlockBytes', size: true, env: 'MCP_BUDGET_MAX_BLOCK_BYTES' },
  { flag: '--max-items', limit: 'maxItems', size: false, env: 'MCP_BUDGET_MAX_ITEMS' },
  { flag: '--max-keys', limit: 'maxKeys', size: false, env: 'MCP_BUDGET_MAX_KEYS' },
  { flag: '--max-string-bytes', limit: 'maxStringBytes', size: true, env: 'MCP_BUDGET_MAX_STRING_BYTES' },
  { flag: '--max-depth', limit: 'maxDepth', size: false, env: 'MCP_BUDGET_MAX_DEPTH' },
  { flag: '--max-omitted-paths', limit: 'maxOmittedPaths', size: false, env: 'MCP_BUDGET_MAX_OMITTED_PATHS' },
];

/** Result of {@link parseBudgetArgs}: the budget options and the arguments left for the command. */
export interface ParsedBudgetArgs {
  options: BudgetOptions;
  rest: string[];
}

/**
 * Take the budget flags out of `argv` (`--flag value` or `--flag=value`), `--no-notice` and
 * `--protocol-version V`. Other arguments are returned in order. Values are range-checked here so
 * that a usage error names the flag, not the option.
 */
export function parseBudgetArgs(argv: readonly string[]): ParsedBudgetArgs {
  const options: BudgetOptions = {};
  const rest: string[] = [];
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i]!;
    if (arg === '--') {
      rest.push(...argv.slice(i));
      break;
    }
    const eq = arg.indexOf('=');
    const name = arg.startsWith('--') && eq !== -1 ? arg.slice(0, eq) : arg;
    const takeValue = (): string => {
      if (eq !== -1 && arg.startsWith('--')) return arg.slice(eq + 1);
      const v = argv[++i];
      if (v === undefined) throw new UsageError(`\`${name}\` needs a value`);
      return v;
    };
    const def = BUDGET_FLAGS.find((f) => f.flag === name);
    if (def !== undefined) {
      const v = takeValue();
      const n = def.size ? parseSize(name, v) : parseCount(name, v);
      const { min, max } = LIMIT_RANGES[def.limit];
      if (n < min || n > max) throw new UsageError(`Expected \`${name}\` to be from ${min} to ${max}, got ${v}`);
      options[def.limit] = n;
    } else if (name === '--no-notice') {
      options.notice = false;
    } else if (name === '--protocol-version') {
      options.protocolVersion = takeValue();
    } else {
      rest.push(arg);
    }
  }
  return { options, rest };
}

/** Budget options from `MCP_BUDGET_*` environment variables (flags override them). */
export function budgetOptionsFromEnv(env: NodeJS.ProcessEnv): BudgetOptions {
  const options: BudgetOptions = {};
  for (const def of BUDGET_FLAGS) {
    const v = env[def.env];
    if (v === undefined || v === '') continue;
    const n = def.size ? parseSize(def.env, v) : parseCount(def.env, v);
    const { min, max } = LIMIT_RANGES[def.limit];
    if (n < min || n > max) throw new UsageError(`Expected \`${def.env}\` to be from ${min} to ${max}, got ${v}`);
    options[def.limit] = n;
  }
  if (env.MCP_BUDGET_NOTICE === '0' || env.MCP_BUDGET_NOTICE === 'false') options.notice = false;
  if (env.MCP_BUDGET_PROTOCOL_VERSION) options.protocolVersion = env.MCP_BUDGET_PROTOCOL_VERSION;
  return options;
}
