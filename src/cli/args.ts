/**
 * Argument parsing shared by the commands: sizes with KiB/MiB/GiB suffixes, the budget flags,
 * and usage errors that name the flag and its accepted range.
 */
import { BudgetError, CONTINUATION_LIMIT_NAMES, CONTINUATION_LIMITS, LIMIT_RANGES, LIMITS, MAX_MESSAGE_BYTES_RANGE, NUMERIC_LIMITS, type BudgetOptions, type ContinuationSettings, type NumericLimit } from '../engine/index.js';

declare module '../engine/errors.js' {
  interface ErrorCodes {
    /** A command-line mistake: printed with the command's usage, exit code 2. */
    USAGE: true;
  }
}

/** A command-line mistake (the one error, code `USAGE`): printed with usage, exit code 2. */
export function usageError(message: string): BudgetError<'USAGE'> {
  return new BudgetError('USAGE', message);
}

/**
 * Size units, case-insensitive. `KB`, `MB` and `GB` are read as `KiB`, `MiB` and `GiB` (as `K`, `M`
 * and `G` already were): a budget is a count of bytes a client holds, and 1000-based units here
 * would give two readings of one flag. The help says so.
 */
const UNITS: Record<string, number> = { '': 1, b: 1, kib: 1024, kb: 1024, k: 1024, mib: 1024 ** 2, mb: 1024 ** 2, m: 1024 ** 2, gib: 1024 ** 3, gb: 1024 ** 3, g: 1024 ** 3 };

/** Parse `65536`, `64KiB`, `64KB`, `1.5MiB`, `2GiB` into a whole number of bytes (every unit 1024-based). */
export function parseSize(flag: string, text: string): number {
  const m = /^(\d+(?:\.\d+)?)\s*([a-zA-Z]*)$/.exec(text.trim());
  const unit = m ? UNITS[m[2]!.toLowerCase()] : undefined;
  if (!m || unit === undefined) {
    throw usageError(`Expected \`${flag}\` to be a size in bytes (e.g. 65536, 64KiB, 1MiB), got ${JSON.stringify(text)}`);
  }
  const n = Number(m[1]) * unit;
  if (!Number.isFinite(n)) throw usageError(`\`${flag}\` is too large: ${text}`);
  return Math.floor(n);
}

function parseCount(flag: string, text: string): number {
  if (!/^\d+$/.test(text.trim())) throw usageError(`Expected \`${flag}\` to be a whole number, got ${JSON.stringify(text)}`);
  return Number(text);
}

/** Budget flags: name, the limit it sets, and whether it takes a size (with units) or a count (from the limits table). */
export const BUDGET_FLAGS: readonly { flag: string; limit: NumericLimit; size: boolean; env: string; hostEnv: string | undefined }[] = NUMERIC_LIMITS.map((limit) => ({
  flag: LIMITS[limit].flag,
  limit,
  size: LIMITS[limit].unit === 'bytes',
  env: LIMITS[limit].env,
  hostEnv: LIMITS[limit].hostEnv,
}));

/** The variable a budget limit is read from: its own, else the host's for the same bound when that is set. */
export function envSourceOf(def: (typeof BUDGET_FLAGS)[number], env: NodeJS.ProcessEnv): string | undefined {
  if (env[def.env] !== undefined && env[def.env] !== '') return def.env;
  if (def.hostEnv !== undefined && env[def.hostEnv] !== undefined && env[def.hostEnv] !== '') return def.hostEnv;
  return undefined;
}

/**
 * Budget options from parsed flags (`parseArgs` values keyed by long name: `max-bytes`,
 * `no-notice`, `protocol-version`). Values are range-checked here so that a usage error names the
 * flag, not the option.
 */
export function budgetOptionsFromFlags(values: Readonly<Record<string, unknown>>): BudgetOptions {
  const options: BudgetOptions = {};
  for (const def of BUDGET_FLAGS) {
    const v = values[def.flag.slice(2)];
    if (typeof v !== 'string') continue;
    const n = def.size ? parseSize(def.flag, v) : parseCount(def.flag, v);
    const { min, max } = LIMIT_RANGES[def.limit];
    if (n < min || n > max) throw usageError(`Expected \`${def.flag}\` to be from ${min} to ${max}, got ${v}`);
    options[def.limit] = n;
  }
  if (values['no-notice'] === true) options.notice = false;
  if (typeof values['protocol-version'] === 'string') options.protocolVersion = values['protocol-version'];
  return options;
}

/**
 * Budget options from `MCP_BUDGET_*` environment variables (flags override them). A host's own
 * variable (`hostEnv` of a limit) is read only when neither the flag (`fromFlags`) nor our
 * variable sets the limit; a value of it this command cannot use is left aside with a warning
 * (it is the host's setting, not ours to refuse), and what is read keeps room for the notice.
 */
export function budgetOptionsFromEnv(env: NodeJS.ProcessEnv, fromFlags: BudgetOptions = {}, warn: (message: string) => void = () => {}): BudgetOptions {
  const options: BudgetOptions = {};
  for (const def of BUDGET_FLAGS) {
    const name = envSourceOf(def, env);
    if (name === undefined) continue;
    const v = env[name]!;
    const { min, max } = LIMIT_RANGES[def.limit];
    if (name === def.hostEnv) {
      if (fromFlags[def.limit] !== undefined) continue;
      // The host's value less what the limit's row keeps for the notice (`hostReserve`).
      const reserve = LIMITS[def.limit].hostReserve ?? 0;
      const n = /^\d+$/.test(v.trim()) ? Number(v.trim()) - reserve : NaN;
      if (!(n >= min && n <= max)) {
        warn(`mcp-budget: ${name}=${JSON.stringify(v.slice(0, 40))} is not a count of ${LIMITS[def.limit].unit} this bound can use (${min + reserve}–${max}); ${def.flag} is left at its default`);
        continue;
      }
      options[def.limit] = n;
      continue;
    }
    const n = def.size ? parseSize(name, v) : parseCount(name, v);
    if (n < min || n > max) throw usageError(`Expected \`${name}\` to be from ${min} to ${max}, got ${v}`);
    options[def.limit] = n;
  }
  if (envSwitch(env, 'MCP_BUDGET_NOTICE') === false) options.notice = false;
  if (env.MCP_BUDGET_PROTOCOL_VERSION) options.protocolVersion = env.MCP_BUDGET_PROTOCOL_VERSION;
  return options;
}

/**
 * An on/off variable: `0`, `false`, `no`, `off` switch it off, `1`, `true`, `yes`, `on` on (any
 * case); unset or empty is undefined. Any other value is a usage error naming the variable (`off`
 * used to leave a feature on, silently).
 */
export function envSwitch(env: NodeJS.ProcessEnv, name: string): boolean | undefined {
  const v = env[name];
  if (v === undefined || v === '') return undefined;
  const t = v.trim().toLowerCase();
  if (['0', 'false', 'no', 'off'].includes(t)) return false;
  if (['1', 'true', 'yes', 'on'].includes(t)) return true;
  throw usageError(`Expected \`${name}\` to be on or off (1/0, true/false, yes/no, on/off), got ${JSON.stringify(v.slice(0, 40))}`);
}

/** `--max-message-bytes` as a number of bytes, checked against its range (undefined: the default). */
export function messageCapOf(value: unknown): number | undefined {
  if (typeof value !== 'string') return undefined;
  const n = parseSize('--max-message-bytes', value);
  const { min, max } = MAX_MESSAGE_BYTES_RANGE;
  if (n < min || n > max) throw usageError(`Expected \`--max-message-bytes\` to be from ${min} to ${max} bytes (1KiB–8MiB), got ${JSON.stringify(value)}`);
  return n;
}

/** Continuation settings from parsed flags (`--no-continuation`, `--continuation-*`), range-checked naming the flag. */
export function continuationFromFlags(values: Readonly<Record<string, unknown>>): Partial<ContinuationSettings> {
  const out: Partial<ContinuationSettings> = {};
  for (const name of CONTINUATION_LIMIT_NAMES) {
    const d = CONTINUATION_LIMITS[name];
    const v = values[d.flag.slice(2)];
    if (typeof v === 'string') out[name] = continuationNumber(d.flag, v, name);
  }
  if (values['no-continuation'] === true) out.enabled = false;
  if (values['continuation-memory'] === true) out.memory = true;
  if (typeof values['continuation-dir'] === 'string') out.dir = values['continuation-dir'];
  return out;
}

/** Continuation settings from `MCP_BUDGET_CONTINUATION*` variables (flags override them). */
export function continuationFromEnv(env: NodeJS.ProcessEnv): Partial<ContinuationSettings> {
  const out: Partial<ContinuationSettings> = {};
  for (const name of CONTINUATION_LIMIT_NAMES) {
    const d = CONTINUATION_LIMITS[name];
    const v = env[d.env];
    if (v !== undefined && v !== '') out[name] = continuationNumber(d.env, v, name);
  }
  if (envSwitch(env, 'MCP_BUDGET_CONTINUATION') === false) out.enabled = false;
  if (envSwitch(env, 'MCP_BUDGET_CONTINUATION_MEMORY') === true) out.memory = true;
  const dir = env.MCP_BUDGET_CONTINUATION_DIR;
  if (dir !== undefined && dir !== '') out.dir = dir;
  return out;
}

function continuationNumber(flag: string, text: string, name: (typeof CONTINUATION_LIMIT_NAMES)[number]): number {
  const d = CONTINUATION_LIMITS[name];
  const n = d.unit === 'bytes' ? parseSize(flag, text) : parseCount(flag, text);
  if (n < d.min || n > d.max) throw usageError(`Expected \`${flag}\` to be from ${d.min} to ${d.max}, got ${text}`);
  return n;
}
