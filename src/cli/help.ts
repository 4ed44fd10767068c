/**
 * `mcp-budget --help`, `mcp-budget <command> --help` and `--version`, printed from the command
 * table in src/cli/spec.ts (usage, each flag with its default and environment variable, one
 * example).
 */
import { readFileSync } from 'node:fs';
import { BUDGET_FLAG_SPECS, COMMANDS, LISTEN_FLAG_SPECS, type CommandSpec, type FlagSpec } from './spec.js';

function flagLine(f: FlagSpec): string {
  const name = `${f.short === undefined ? '' : `-${f.short}, `}--${f.name}${f.value === undefined ? '' : ` ${f.value}`}`;
  const extras = [f.default === undefined ? undefined : `default: ${f.default}`, f.env === undefined ? undefined : `env: ${f.env}`].filter((x) => x !== undefined);
  return `  ${name.padEnd(28)} ${f.help}${extras.length === 0 ? '' : ` [${extras.join('; ')}]`}`;
}

/** The help of one command: usage, summary, flags, notes, one example. */
export function commandHelp(spec: CommandSpec): string {
  return [
    'Usage:',
    ...spec.usage.map((u) => `  ${u}`),
    '',
    spec.summary,
    '',
    'Flags (flags win over environment variables; sizes take plain bytes or KiB/MiB/GiB; KB/MB/GB mean the same):',
    ...spec.flags.map(flagLine),
    ...(spec.notes === undefined ? [] : ['', ...spec.notes]),
    '',
    'Example:',
    `  ${spec.example}`,
    '',
  ].join('\n');
}

/** `mcp-budget --help`: every command with its summary. */
export function mainHelp(): string {
  const width = Math.max(...COMMANDS.map((c) => c.name.length));
  return [
    'Usage: mcp-budget <command> [flags]',
    '',
    'Commands:',
    ...COMMANDS.map((c) => `  ${c.name.padEnd(width)}  ${c.summary}`),
    '',
    'mcp-budget <command> --help   flags, defaults and environment variables of one command',
    'mcp-budget --version          the package version',
    '',
  ].join('\n');
}

/**
 * The usage of every command with its summary, then the flags most commands share (what a bare
 * `mcp-budget` prints); with `only`, that command's usage alone (what a usage error prints). Each
 * command's own flags are in its `--help`.
 */
export function usageText(only?: CommandSpec): string {
  const commands = only === undefined ? COMMANDS : [only];
  const lines = ['Usage:'];
  for (const c of commands) lines.push(...c.usage.map((u) => `  ${u}`), `      ${c.summary}`);
  if (only === undefined) {
    lines.push('', 'Budget flags (also read from MCP_BUDGET_* environment variables; flags win; sizes take plain bytes or KiB/MiB/GiB; KB/MB/GB mean the same):', ...BUDGET_FLAG_SPECS.map(flagLine));
    lines.push('', 'HTTP flags (serve and proxy):', ...LISTEN_FLAG_SPECS.map(flagLine));
  }
  lines.push('', `mcp-budget ${only?.name ?? '<command>'} --help   every flag${only === undefined ? ' of one command' : ''}, with defaults and environment variables`, '');
  return lines.join('\n');
}

/**
 * The package's version, read at run time from the package.json next to the build: this file is
 * `dist/cli/help.js` (or `src/cli/help.ts` under a test runner), two levels below the package root.
 */
export function packageVersion(): string {
  const pkg = JSON.parse(readFileSync(new URL('../../package.json', import.meta.url), 'utf8')) as { version?: unknown };
  return typeof pkg.version === 'string' ? pkg.version : 'unknown';
}
