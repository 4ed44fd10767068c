#!/usr/bin/env node
/**
 * `mcp-budget` — argument parsing only; every command is a function in its layer.
 * Exit codes: 0 success (truncated or not), 1 invalid input or runtime failure, 2 usage error.
 */
// Perf: each command is imported when it runs, so `apply` does not load the SDK (RSS headroom).
import type { ServerOptions } from './server/create-server.js';
import { BUDGET_FLAGS, budgetOptionsFromEnv, envSourceOf, budgetOptionsFromFlags, continuationFromEnv, continuationFromFlags, messageCapOf, usageError } from './cli/args.js';
import { CutLog, cutLogger, logCutsEnabled } from './cli/cut-log.js';
import { commandHelp, mainHelp, packageVersion, usageText } from './cli/help.js';
import { listenArgsFromFlags } from './cli/listen-args.js';
import { parseCommandLine, requiredValue, stringFlag } from './cli/parse.js';
import { findCommand } from './cli/spec.js';
import { BudgetError, CONTINUATION_LIMIT_NAMES, CONTINUATION_LIMITS, contradictions, isBudgetError, DEFAULT_MAX_REQUEST_BYTES, resolveLimits, type BudgetOptions } from './engine/index.js';

async function main(argv: string[]): Promise<number> {
  const [command, ...args] = argv;
  if (command === undefined || command === '--help' || command === '-h' || command === 'help') {
    // `help COMMAND` is `COMMAND --help`; bare `mcp-budget` is a usage error (exit 2) with the full usage.
    const target = command === 'help' && args[0] !== undefined ? findCommand(args[0]) : undefined;
    process.stdout.write(target !== undefined ? commandHelp(target) : command === undefined ? usageText() : mainHelp() + '\n' + usageText());
    return command === undefined ? 2 : 0;
  }
  if (command === '--version' || command === '-v' || command === 'version') {
    process.stdout.write(packageVersion() + '\n');
    return 0;
  }
  const spec = findCommand(command);
  if (spec === undefined) throw usageError(`Unknown command \`${command}\``);
  // The proxy's server command follows the first `--` and is never read as our flags.
  const { values, positionals, passthrough } = parseCommandLine(spec, args, command === 'proxy');
  if (values.help === true) {
    process.stdout.write(commandHelp(spec));
    return 0;
  }
  const flagOptions = budgetOptionsFromFlags(values);
  const envOptions = budgetOptionsFromEnv(process.env, flagOptions, (m) => process.stderr.write(`${m}\n`));
  const options = { ...envOptions, ...flagOptions };
  checkLimits(options, flagOptions);
  const continuationFlags = continuationFromFlags(values);
  const continuationEnv = continuationFromEnv(process.env);
  const continuation = { ...continuationEnv, ...continuationFlags };
  if (command === 'proxy' || command === 'serve') {
    const { configureSharedContinuation } = await import('./transport/core/continuation-store.js');
    configureSharedContinuation(continuation);
  }
  switch (command) {
    case 'limits': {
      const { runLimits } = await import('./commands/limits.js');
      runLimits(options, sourceNames(flagOptions, envOptions), process.stdout, { settings: continuation, sources: continuationSources(continuationFlags, continuationEnv) });
      return 0;
    }
    case 'apply': {
      const mode = stringFlag(values, 'mode') ?? 'auto';
      if (mode !== 'auto' && mode !== 'memory' && mode !== 'stream') {
        throw usageError(`Expected \`--mode\` to be one of auto, memory, stream, got ${mode}`);
      }
      if (positionals.length > 1) throw usageError(`apply takes one FILE (or - for stdin), got ${positionals.length}`);
      // Ctrl-C: nothing has been written yet (output comes at the end), so stop at once.
      process.once('SIGINT', () => {
        process.stderr.write('mcp-budget: interrupted; nothing was written\n');
        process.exit(130);
      });
      const { runApply } = await import('./commands/apply.js');
      await runApply({ file: positionals[0] ?? '-', limits: options, mode, stdin: process.stdin, stdout: process.stdout });
      return 0;
    }
    case 'proxy': {
      const http = listenArgsFromFlags(values, 'proxy');
      const logCuts = logCutsEnabled(values['log-cuts'], process.env);
      const maxRequestBytes = http.maxRequestBytes ?? DEFAULT_MAX_REQUEST_BYTES;
      const maxMessageBytes = messageCapOf(values['max-message-bytes']);
      if (http.upstreamUrl !== undefined && passthrough.length > 0) throw usageError('proxy takes `--upstream-url URL` or a server command after `--`, not both');
      if (http.upstreamUrl !== undefined || http.listen !== undefined) {
        if (http.upstreamUrl === undefined && passthrough.length === 0) throw usageError('proxy --listen needs the server command after `--` (or `--upstream-url URL`)');
        const { runProxyHttp } = await import('./commands/proxy-http.js');
        const listen = http.listen === undefined ? undefined : { ...http, listen: http.listen };
        const upstream = passthrough.length > 0 ? { command: passthrough[0]!, args: passthrough.slice(1) } : undefined;
        const log = logCuts ? new CutLog(process.stderr) : undefined;
        return runProxyHttp({
          limits: options, maxRequestBytes, maxMessageBytes, command: upstream, upstreamUrl: http.upstreamUrl, listen, stdin: process.stdin, stdout: process.stdout, stderr: process.stderr,
          ...(log === undefined ? {} : { cutLog: (session?: () => string | undefined) => log.listener(session) }),
        });
      }
      if (passthrough.length === 0) throw usageError('proxy needs the server command after `--`, e.g. `mcp-budget proxy -- npx -y some-mcp-server`');
      const { runProxy } = await import('./transport/proxy/proxy.js');
      return runProxy({
        command: passthrough[0]!,
        args: passthrough.slice(1),
        limits: options,
        maxRequestBytes,
        maxMessageBytes,
        stdin: process.stdin,
        stdout: process.stdout,
        stderr: process.stderr,
        ...(logCuts ? { onTruncated: cutLogger(process.stderr) } : {}),
      });
    }
    case 'serve': {
      const root = requiredValue(values, 'root', 'a directory') ?? process.cwd();
      const team: ServerOptions = {};
      const dbPath = requiredValue(values, 'team-db');
      const as = requiredValue(values, 'as');
      if (dbPath !== undefined) team.dbPath = dbPath;
      if (as !== undefined) team.as = as;
      const tools = requiredValue(values, 'tools') ?? process.env.MCP_BUDGET_TOOLS;
      if (tools !== undefined) {
        const { parseToolsets } = await import('./server/create-server.js');
        try {
          team.toolsets = parseToolsets(tools);
        } catch (e) {
          throw usageError((e as Error).message);
        }
      }
      const http = listenArgsFromFlags(values, 'serve');
      const logCuts = logCutsEnabled(values['log-cuts'], process.env);
      if (http.listen !== undefined) {
        const { runServeHttp } = await import('./commands/serve-http.js');
        const log = logCuts ? new CutLog(process.stderr) : undefined;
        return runServeHttp(root, options, team, { ...http, listen: http.listen }, process.stderr, log === undefined ? undefined : (session) => log.listener(session));
      }
      if (http.cursorKeyFile !== undefined) {
        const { useCursorKey } = await import('./commands/serve-http.js');
        await useCursorKey(http.cursorKeyFile);
      }
      const { runServe } = await import('./commands/serve.js');
      const onTruncated = logCuts ? cutLogger(process.stderr) : undefined;
      await runServe(root, options, { team, ...(http.maxRequestBytes === undefined ? {} : { maxRequestBytes: http.maxRequestBytes }), ...(onTruncated === undefined ? {} : { onTruncated }) });
      return 0;
    }
    case 'exec': {
      const { runExec } = await import('./commands/exec.js');
      return runExec({ values, positionals }, options, process.stdout);
    }
    case 'team': {
      const { runTeam } = await import('./commands/team.js');
      return runTeam({ values, positionals }, { stdout: process.stdout, stderr: process.stderr });
    }
    case 'demo': {
      const { runDemo } = await import('./commands/demo.js');
      await runDemo(options, process.stdout);
      return 0;
    }
    default:
      throw usageError(`Unknown command \`${command}\``);
  }
}

/**
 * Validate the merged limits once, before any work, and name what the user typed: the flag, or
 * the environment variable when the value came from there (the floor of `--max-bytes` depends on
 * the other limits, so it can only be checked here).
 */
function checkLimits(options: BudgetOptions, fromFlags: BudgetOptions): void {
  // Every option name in a message becomes the flag (or variable) the user typed.
  const rename = (message: string): string =>
    BUDGET_FLAGS.reduce((m, def) => m.replaceAll(`\`${def.limit}\``, `\`${def.limit in fromFlags || !(def.limit in options) ? def.flag : def.env}\``), message);
  const contradicting = contradictions(options);
  if (contradicting.length > 0) throw usageError(rename(contradicting.join('; ')));
  try {
    resolveLimits(options);
  } catch (e) {
    if (!(e instanceof BudgetError) || e.code !== 'LIMIT_OUT_OF_RANGE') throw e;
    throw usageError(rename(e.message));
  }
}

/** Which flag or environment variable gave each option (for `limits`). */
function sourceNames(fromFlags: BudgetOptions, fromEnv: BudgetOptions): Record<string, string> {
  const named: Record<string, string> = {};
  for (const def of BUDGET_FLAGS) {
    if (fromFlags[def.limit] !== undefined) named[def.limit] = def.flag;
    else if (fromEnv[def.limit] !== undefined) named[def.limit] = envSourceOf(def, process.env) ?? def.env;
  }
  if (fromFlags.notice !== undefined) named.notice = '--no-notice';
  else if (fromEnv.notice !== undefined) named.notice = 'MCP_BUDGET_NOTICE';
  if (fromFlags.protocolVersion !== undefined) named.protocolVersion = '--protocol-version';
  else if (fromEnv.protocolVersion !== undefined) named.protocolVersion = 'MCP_BUDGET_PROTOCOL_VERSION';
  return named;
}

/** Which flag or environment variable gave each continuation setting (for `limits`). */
function continuationSources(fromFlags: Record<string, unknown>, fromEnv: Record<string, unknown>): Record<string, string> {
  const named: Record<string, string> = {};
  for (const name of CONTINUATION_LIMIT_NAMES) {
    if (fromFlags[name] !== undefined) named[name] = CONTINUATION_LIMITS[name].flag;
    else if (fromEnv[name] !== undefined) named[name] = CONTINUATION_LIMITS[name].env;
  }
  if (fromFlags.enabled !== undefined) named.enabled = '--no-continuation';
  else if (fromEnv.enabled !== undefined) named.enabled = 'MCP_BUDGET_CONTINUATION';
  return named;
}

/**
 * Once the command is done and stdout has drained, wait at most this long for stderr: bytes a
 * reader never takes (a pipe nobody reads) would keep the process alive forever. @default 2000
 */
const STDERR_GRACE_MS = 2000;

/**
 * End with `code` once stdout has drained. Unreferenced: a process that ends by itself is not held;
 * one held by unread stderr, or by a handle a failed start left (a database driver's socket after a
 * refused sign-in), ends.
 */
function exitWhenDrained(code: number, failed = false): void {
  setInterval(() => {
    if (process.stdout.writableLength === 0) process.exit(code);
  }, STDERR_GRACE_MS).unref();
  // A failed command has nothing left to do once its message is out.
  if (failed) {
    const out = setInterval(() => {
      if (process.stdout.writableLength === 0 && process.stderr.writableLength === 0) process.exit(code);
    }, 20);
    out.unref();
  }
}

main(process.argv.slice(2)).then(
  (code) => {
    process.exitCode = code;
    exitWhenDrained(code);
  },
  (err: unknown) => {
    if (isBudgetError(err, 'USAGE')) {
      // The usage of the command that was run (all of them when it is unknown), not every flag.
      const spec = findCommand(process.argv[2] ?? '');
      process.stderr.write(`mcp-budget: ${err.message}\n\n${usageText(spec)}`);
      process.exitCode = 2;
    } else if (err instanceof BudgetError && err.code === 'LIMIT_OUT_OF_RANGE') {
      process.stderr.write(`mcp-budget: ${err.message}\n`);
      process.exitCode = 2;
    } else if (err instanceof BudgetError) {
      process.stderr.write(`mcp-budget: ${err.message}\n`);
      process.exitCode = 1;
    } else if ((err as NodeJS.ErrnoException)?.code === 'EPIPE') {
      process.exitCode = 0;
    } else {
      process.stderr.write(`mcp-budget: ${(err as Error)?.message ?? String(err)}\n`);
      process.exitCode = 1;
    }
    exitWhenDrained(Number(process.exitCode), true);
  },
);
