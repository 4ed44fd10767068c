/**
 * One command line through `node:util` `parseArgs` (strict), configured from the command's table
 * in src/cli/spec.ts. The proxy's `-- COMMAND ARGS` is split off first, so nothing after the first
 * `--` is ever read as our flag; without `--`, the command starts at the first word that is not one
 * of our flags or a flag's value (some launchers consume `--`). `parseArgs`' own errors become usage errors that name the flag.
 */
import { parseArgs } from 'node:util';
import { usageError } from './args.js';
import type { CommandSpec } from './spec.js';

/** Flag values as `parseArgs` returns them, keyed by long name without dashes. */
export type FlagValues = Record<string, string | boolean | (string | boolean)[] | undefined>;

/** A parsed command line. */
export interface ParsedCommandLine {
  values: FlagValues;
  positionals: string[];
  /** The words after the first `--` (proxy only; empty when there is none). */
  passthrough: string[];
  /** A `--` was present (proxy only). */
  separated: boolean;
}

/**
 * Parse `argv` (the words after the command name) against `spec`. With `splitAtSeparator` the
 * words after the first `--` are returned untouched in `passthrough`.
 */
export function parseCommandLine(spec: CommandSpec, argv: readonly string[], splitAtSeparator = false): ParsedCommandLine {
  let sep = splitAtSeparator ? argv.indexOf('--') : -1;
  let skip = 1; // the words of the separator itself
  if (splitAtSeparator && sep === -1) {
    // No `--` (some launchers consume it): the command starts at the first word that is neither
    // one of our flags nor a flag's value.
    sep = commandStart(spec, argv);
    skip = 0;
  }
  const own = sep === -1 ? [...argv] : argv.slice(0, sep);
  const options: Record<string, { type: 'string' | 'boolean'; multiple?: boolean; short?: string }> = {};
  for (const f of spec.flags) {
    options[f.name] = { type: f.type, ...(f.multiple === true ? { multiple: true } : {}), ...(f.short === undefined ? {} : { short: f.short }) };
  }
  try {
    const { values, positionals } = parseArgs({ args: own, options, strict: true, allowPositionals: spec.positionals });
    return { values: values as FlagValues, positionals, passthrough: sep === -1 ? [] : argv.slice(sep + skip), separated: sep !== -1 };
  } catch (e) {
    throw usageErrorOf(e, spec);
  }
}

/** Index of the first word that is not a flag of `spec` or a flag's value; -1 when every word is. */
function commandStart(spec: CommandSpec, argv: readonly string[]): number {
  for (let i = 0; i < argv.length; i++) {
    const w = argv[i]!;
    if (!w.startsWith('-') || w === '-') return i;
    const name = w.startsWith('--') ? w.slice(2).split('=')[0]! : w.slice(1);
    const flag = spec.flags.find((f) => (w.startsWith('--') ? f.name === name : f.short === name));
    if (flag === undefined) return -1; // an unknown flag: parseArgs says so
    if (flag.type === 'string' && !w.includes('=')) i++; // its value
  }
  return -1;
}

/** `parseArgs`' error as a usage error in the house wording (flag in backticks). */
function usageErrorOf(e: unknown, spec: CommandSpec): unknown {
  const command = spec.name;
  const code = (e as NodeJS.ErrnoException)?.code;
  const message = (e as Error)?.message ?? '';
  const named = /'([^' ]+)/.exec(message)?.[1] ?? '';
  const reason = spec.refused?.[named.replace(/^--/, '').split('=')[0]!];
  if (code === 'ERR_PARSE_ARGS_UNKNOWN_OPTION' && reason !== undefined) return usageError(`${command} does not take \`${named}\`: ${reason}`);
  switch (code) {
    case 'ERR_PARSE_ARGS_UNKNOWN_OPTION':
      return usageError(command === 'apply' ? `Unknown flag \`${named}\` for apply` : `Unknown argument \`${named}\` for ${command}${command === 'proxy' ? ' (put the server command after --)' : ''}`);
    case 'ERR_PARSE_ARGS_UNEXPECTED_POSITIONAL':
      return usageError(`Unknown argument \`${named}\` for ${command}${command === 'proxy' ? ' (put the server command after --)' : ''}`);
    case 'ERR_PARSE_ARGS_INVALID_OPTION_VALUE':
      if (message.includes('does not take an argument')) return usageError(`\`${named}\` takes no value`);
      if (message.includes('ambiguous')) return usageError(`\`${named}\` needs a value (one starting with a dash goes as \`${named}=-...\`)`);
      return usageError(`\`${named}\` needs a value`);
    default:
      return e;
  }
}

/** The value of string flag `name`, undefined when absent; the last one when repeated. */
export function stringFlag(values: FlagValues, name: string): string | undefined {
  const v = values[name];
  if (Array.isArray(v)) return v.length === 0 ? undefined : String(v[v.length - 1]);
  return typeof v === 'string' ? v : undefined;
}

/** Every value of repeatable flag `name`, in order. */
export function stringFlags(values: FlagValues, name: string): string[] {
  const v = values[name];
  if (v === undefined) return [];
  return (Array.isArray(v) ? v : [v]).map(String);
}

/** A non-empty value of `name`, or undefined when absent; an empty one is a usage error. */
export function requiredValue(values: FlagValues, name: string, what = 'a value'): string | undefined {
  const v = stringFlag(values, name);
  if (v === '') throw usageError(`\`--${name}\` needs ${what}`);
  return v;
}
