/**
 * The proxied server's command as `child_process.spawn` must be given it, without a shell.
 *
 * Elsewhere than Windows the command and its environment go to `spawn` as they are (`execvp`
 * searches `PATH`). On Windows the commands people proxy (`npx`, `npm`, `pnpm`, a project's
 * `node_modules\.bin\x`) are `.cmd` shims, which `CreateProcess` cannot start and Node refuses
 * without a shell (`spawn EINVAL`, the CVE-2024-27980 fix); `shell: true` would hand every argument
 * to cmd.exe unescaped. So:
 *
 * - **Resolution.** A bare name is looked up in each `PATH` directory in order, and in each directory
 *   with each `PATHEXT` extension in order (only `.com`, `.exe`, `.bat`, `.cmd` are tried). A name
 *   with a path (`\`, `/` or a drive) is resolved against `cwd` and not searched; an extension given
 *   is kept. Variable names are matched without case (`Path`, `PATH`), and when several spellings
 *   are set the one Node passes to the child wins (the first in sorted order). Unlike cmd.exe, the
 *   current directory and `PATH` entries that are not full paths (relative ones, and `\dir`, which
 *   names a directory on the current drive) are not searched (as Go's `exec.LookPath` and Rust's
 *   `Command` do), so a file planted in the working directory cannot shadow a program.
 * - **Full paths only.** The file planned is always a full path (`C:\…` or `\\server\share\…`), so
 *   libuv, which searches the current directory before `PATH` for a bare or relative name, never
 *   searches for it again.
 * - **cmd.exe** is `ComSpec` when that is a full path whose file name is `cmd.exe`, otherwise
 *   `<SystemRoot>\System32\cmd.exe` when `SystemRoot` is a full path; with neither the command is
 *   refused. A bare `cmd.exe` would be found in the current directory first, and the environment an
 *   SDK client gives its server on Windows has `SYSTEMROOT` but no `COMSPEC`.
 * - **The child's environment** on Windows is the one given with `NoDefaultCurrentDirectoryInExePath`
 *   set (other spellings of the name dropped): cmd.exe then does not search the current directory for
 *   a bare name (the `node` a shim starts), nor does `CreateProcess` in the server.
 * - **Programs** (`.exe`, `.com`) are spawned directly; Node quotes their arguments.
 * - **Batch files** (`.cmd`, `.bat`) run as `cmd.exe /d /v:off /s /c "<line>"` with
 *   `windowsVerbatimArguments`, the form Node's own `shell` option uses, plus `/v:off` so that no
 *   registry setting turns on `!VAR!` expansion. The line is the script's path in quotes (a file
 *   name cannot hold `"`; inside quotes cmd.exe takes `&`, `(`, `)`, spaces literally), then each
 *   argument quoted by the MSVCRT rules (`CommandLineToArgvW`: backslashes before a quote doubled,
 *   the quote escaped) and then escaped for cmd.exe with a caret before every ASCII character but
 *   letters, digits and `_ . - / \ + @ # $ ~` (cross-spawn's approach, after "Everyone quotes
 *   command line arguments the wrong way"). A quote escaped as `^"` never opens cmd.exe's quoted
 *   mode, so every metacharacter of the argument stays behind a caret.
 * - **Twice escaped.** A batch shim forwards its arguments with `%*`, and cmd.exe parses that line
 *   again: each caret pass is removed once per parse, so the escaping covers exactly two parses (the
 *   `/c` line and the `%*` line). cross-spawn assumes this only under `node_modules\.bin`, which
 *   misses `npx.cmd` and `npm.cmd` in Node's own directory; here the batch file is read instead.
 * - **Shims.** When an argument holds one of `" % ! ^ & | < > ( )`, the batch file is read (at most
 *   64 KiB). It is a shim when its arguments reach it only through `%*`, handed once to one program:
 *   no `%1`…`%9`, `%~1`, `SHIFT`, `%CMDCMDLINE%` or `EnableDelayedExpansion` anywhere, no line
 *   continued by a caret; each `%*` is the last word of its line, outside quotes and outside any
 *   `FOR`, on a line without `CALL`, and ends a command that is not `SET`, `IF` or `START` and does not
 *   start cmd, `%COMSPEC%`, PowerShell or a `.cmd`/`.bat`. `%~dp0` (the batch file's own directory)
 *   and `CALL :label` without arguments are allowed: the forms npm's and pnpm's cmd-shim write and
 *   Node's own `npm.cmd` and `npx.cmd` are shims.
 * - **What is guaranteed.** An argument that is not refused reaches the program a shim starts exactly
 *   as that program's `CommandLineToArgvW` reads it, as long as that program is not itself a batch
 *   file: the shim's text is checked, not what its variables or a bare `node` turn out to name (a
 *   `node.cmd` ahead of `node.exe` on `PATH` would parse the arguments a third time). Any other batch
 *   file may parse its arguments again (`%~1` strips the quotes; `set A=%*` then `%A%`, `call` and
 *   delayed expansion parse them a third time), so for it an argument holding one of those characters
 *   is refused. What is left means nothing to cmd.exe however often it parses it (no quote can end a
 *   quoted run, nothing expands): such a batch file may split or change its arguments (spaces,
 *   `, ; =`, wildcards), but none of its operators, redirections, blocks or variables can come from
 *   one. A batch file made to run an argument as a command (`cmd /c %1`) still does.
 * - **`%`.** cmd.exe expands `%NAME%` (and `%NAME:~0,5%`, `%NAME:a=b%`) before it looks at carets
 *   and leaves an undefined name as it is. With a caret before every `%` and `:`, every name cmd.exe
 *   could read ends in `^`, so none is defined unless the environment has a name ending in `^`: an
 *   argument with `%` is refused in that environment. The second parse does not re-expand the text
 *   `%*` put in. **`!`** gets its caret too (harmless; `/v:off` already keeps it literal).
 * - **Refused**: a control character other than tab in an argument (cmd.exe ends the line at LF,
 *   drops CR, and a NUL ends the string), `%`, `"` or a control character in the script's path, a
 *   command line over cmd.exe's 8191 characters, PowerShell scripts and files of any other type.
 */
import { closeSync, openSync, readSync, statSync } from 'node:fs';
import { win32 } from 'node:path';
import { BudgetError, type LayerError } from '../../engine/index.js';
import { notAShim } from './batch-shim.js';

/** Why a command cannot be started. */
export type SpawnCommandErrorCode =
  /** No file for the command on `PATH` (or at the path given). `data.looked` lists the names tried. */
  | 'COMMAND_NOT_FOUND'
  /** The file found is of a type that cannot be started without a shell (`.ps1`, `.js`, …). */
  | 'COMMAND_NOT_RUNNABLE'
  /** A batch file needs cmd.exe, and neither `ComSpec` nor `SystemRoot` names it by a full path. */
  | 'INTERPRETER_NOT_FOUND'
  /** An argument cannot pass through cmd.exe unchanged. `data.index` names it. */
  | 'ARGUMENT_NOT_PASSABLE'
  /** The batch file's command line would be longer than cmd.exe reads. */
  | 'COMMAND_LINE_TOO_LONG';

declare module '../../engine/errors.js' {
  interface ErrorCodes extends Record<SpawnCommandErrorCode, true> {}
}

/** Thrown by {@link planSpawn} (the one error, with a spawn code); the message says what to do. */
export type SpawnCommandError = BudgetError<SpawnCommandErrorCode>;
/** The one error's constructor, typed to the spawn codes. */
export const SpawnCommandError: LayerError<SpawnCommandErrorCode> = BudgetError;

/** What {@link planSpawn} plans from. */
export interface SpawnCommandOptions {
  command: string;
  args: readonly string[];
  /** The child's environment: `PATH`, `PATHEXT`, `ComSpec` and `SystemRoot` are read from it. */
  env: NodeJS.ProcessEnv;
  platform: NodeJS.Platform;
  /** The child's working directory: a relative command path is resolved against it. */
  cwd: string;
  /** Whether a regular file exists at this path ({@link isRegularFile} outside tests). */
  isFile: (path: string) => boolean;
  /** A file's bytes as Latin-1 text, or `undefined` when it is unreadable or over `maxBytes` ({@link readSmallFile} outside tests). */
  readText: (path: string, maxBytes: number) => string | undefined;
}

/** What to give `child_process.spawn`. */
export interface SpawnPlan {
  file: string;
  args: string[];
  /** The child's environment: the one given, on Windows with `NoDefaultCurrentDirectoryInExePath` set. */
  env: NodeJS.ProcessEnv;
  /** Merged into the spawn options; empty outside Windows. */
  options: { windowsHide?: boolean; windowsVerbatimArguments?: boolean };
}

/** File types started on Windows: programs directly, batch files through cmd.exe. */
const RUNNABLE: ReadonlyMap<string, 'program' | 'batch'> = new Map([
  ['.com', 'program'],
  ['.exe', 'program'],
  ['.bat', 'batch'],
  ['.cmd', 'batch'],
]);

/** The runnable part of Windows' default `PATHEXT` (`.COM;.EXE;.BAT;.CMD;.VBS;…`), in its order. */
const DEFAULT_EXTENSIONS = ['.com', '.exe', '.bat', '.cmd'];

/** ASCII characters cmd.exe gives no meaning in an argument; every other one gets a caret. */
const CMD_META = /[^A-Za-z0-9_.\-/\\+@#$~\u0080-\uffff]/g;

/** What cmd.exe can act on in an argument a batch file parses a third time, or unquotes (`%~1`). */
const ACTIVE_IN_LATER_PARSE = /["%!^&|<>()]/;

/** The longest batch file read to tell whether it is a shim. */
export const SHIM_READ_LIMIT = 64 * 1024;

/** The longest command line cmd.exe reads (its documented limit, in UTF-16 units). */
export const CMD_LINE_LIMIT = 8191;

/** The variable that keeps cmd.exe and `CreateProcess` from searching the current directory. */
const NO_CWD_SEARCH = 'NoDefaultCurrentDirectoryInExePath';

/** Plan the spawn of `command args` on `platform`; throws {@link SpawnCommandError}. */
export function planSpawn(o: SpawnCommandOptions): SpawnPlan {
  if (o.platform !== 'win32') return { file: o.command, args: [...o.args], env: o.env, options: {} };
  const file = resolveCommand(o);
  const env = childEnv(o.env);
  if (RUNNABLE.get(extensionOf(file)) === 'program') return { file, args: [...o.args], env, options: { windowsHide: true } };
  const shell = commandInterpreter(o.env, file);
  const args = ['/d', '/v:off', '/s', '/c', `"${batchLine(file, o)}"`];
  // libuv joins verbatim arguments with one space after the program's path.
  const length = [shell, ...args].join(' ').length;
  if (length > CMD_LINE_LIMIT) {
    throw new SpawnCommandError(
      'COMMAND_LINE_TOO_LONG',
      `the command line that runs the batch file ${file} would be ${length} characters, and cmd.exe reads at most ${CMD_LINE_LIMIT}: pass fewer or shorter arguments (a file or an environment variable can carry long values), or run the program the batch file starts directly`,
      { file, length, limit: CMD_LINE_LIMIT },
    );
  }
  return { file: shell, args, env, options: { windowsHide: true, windowsVerbatimArguments: true } };
}

/** Whether `path` is a regular file (following links), for {@link SpawnCommandOptions.isFile}. */
export function isRegularFile(path: string): boolean {
  try {
    return statSync(path).isFile();
  } catch {
    return false;
  }
}

/** A file's bytes as Latin-1 text, `undefined` when it cannot be read or holds more than `maxBytes`. */
export function readSmallFile(path: string, maxBytes: number): string | undefined {
  let fd: number | undefined;
  try {
    fd = openSync(path, 'r');
    const buf = Buffer.alloc(maxBytes + 1);
    let n = 0;
    for (let got = -1; got !== 0 && n < buf.length; n += got) got = readSync(fd, buf, n, buf.length - n, null);
    return n > maxBytes ? undefined : buf.toString('latin1', 0, n);
  } catch {
    return undefined;
  } finally {
    if (fd !== undefined) closeSync(fd);
  }
}

/**
 * A variable of a Windows environment, whatever the case of its name. Of several spellings, the
 * one Node's `spawn` keeps for the child: the first in sorted order (`PATH` before `Path`).
 */
function envValue(env: NodeJS.ProcessEnv, name: string): string | undefined {
  const wanted = name.toUpperCase();
  const key = Object.keys(env)
    .sort()
    .find((k) => k.toUpperCase() === wanted);
  return key === undefined ? undefined : env[key];
}

/** The environment given, with `NoDefaultCurrentDirectoryInExePath=1` in place of any spelling of it. */
function childEnv(env: NodeJS.ProcessEnv): NodeJS.ProcessEnv {
  const out: NodeJS.ProcessEnv = {};
  const drop = NO_CWD_SEARCH.toUpperCase();
  for (const [key, value] of Object.entries(env)) if (key.toUpperCase() !== drop) out[key] = value;
  out[NO_CWD_SEARCH] = '1';
  return out;
}

/** A path Windows takes as it is: `C:\…` or `\\server\share\…` (`\\?\C:\…` too), holding nothing a file name cannot. */
function isFullPath(path: string): boolean {
  const full = /^[A-Za-z]:[\\/]/.test(path) || /^[\\/]{2}[^\\/]+[\\/][^\\/]+/.test(path);
  return full && !/[\0-\x1f"*?<>|]/.test(path.replace(/^[\\/]{2}[?.][\\/]/, ''));
}

function extensionOf(path: string): string {
  return win32.extname(path).toLowerCase();
}

/** The cmd.exe that runs `script`: see the module comment. */
function commandInterpreter(env: NodeJS.ProcessEnv, script: string): string {
  const comSpec = envValue(env, 'ComSpec');
  if (comSpec !== undefined && isFullPath(comSpec) && win32.basename(comSpec).toLowerCase() === 'cmd.exe') return comSpec;
  const systemRoot = envValue(env, 'SystemRoot');
  if (systemRoot !== undefined && isFullPath(systemRoot)) return win32.join(systemRoot, 'System32', 'cmd.exe');
  const shown = (v: string | undefined): string => (v === undefined || v === '' ? 'not set' : `\`${v}\``);
  throw new SpawnCommandError(
    'INTERPRETER_NOT_FOUND',
    `the batch file ${script} needs cmd.exe, which is taken only from a full path: ComSpec (${shown(comSpec)}) must be a full path to cmd.exe, or SystemRoot (${shown(systemRoot)}) a full path; set SystemRoot (usually C:\\Windows) or ComSpec (C:\\Windows\\System32\\cmd.exe) in the proxy's environment`,
    { file: script, ComSpec: comSpec, SystemRoot: systemRoot },
  );
}

/** `PATHEXT`'s runnable extensions in its order (its default's when it names none). */
function pathExtensions(env: NodeJS.ProcessEnv): string[] {
  const listed = (envValue(env, 'PATHEXT') ?? '')
    .split(';')
    .map((e) => e.trim().toLowerCase())
    .filter((e, i, all) => RUNNABLE.has(e) && all.indexOf(e) === i);
  return listed.length > 0 ? listed : DEFAULT_EXTENSIONS;
}

/** `PATH`'s full-path directories in order; a `;` inside quotes is part of the entry, the quotes are not. */
function searchDirectories(env: NodeJS.ProcessEnv): string[] {
  return (envValue(env, 'PATH') ?? '')
    .split(/;(?=(?:[^"]*"[^"]*")*[^"]*$)/)
    .map((d) => d.replaceAll('"', '').trim())
    .filter((d) => d !== '' && isFullPath(d));
}

/** The file a Windows command names, as a full path: see the module comment for the order. */
function resolveCommand(o: SpawnCommandOptions): string {
  const { command } = o;
  const ext = extensionOf(command);
  if (ext === '.ps1') {
    throw new SpawnCommandError(
      'COMMAND_NOT_RUNNABLE',
      `\`${command}\` is a PowerShell script, which cannot be started directly: give \`powershell -NoProfile -File ${command}\` (or \`pwsh\`) as the command`,
      { command },
    );
  }
  if (command === '' || /[\0"*?<>|]/.test(command)) {
    throw new SpawnCommandError('COMMAND_NOT_FOUND', `\`${command}\` is not a file name: give the path to the program`, { command, looked: [] });
  }
  const explicit = /[\\/]/.test(command) || /^[A-Za-z]:/.test(command);
  if (explicit && !isFullPath(win32.resolve(o.cwd, command))) {
    // Only when the working directory is not a full path, which a Windows process's never is.
    throw new SpawnCommandError('COMMAND_NOT_FOUND', `\`${command}\` cannot be made a full path from the working directory ${o.cwd}: give the full path to the program`, {
      command,
      looked: [],
    });
  }
  // An extensionless file next to a shim (npm's `npx` for sh) is never a candidate.
  const names = RUNNABLE.has(ext) ? [command] : [...(ext === '' ? [] : [command]), ...pathExtensions(o.env).map((e) => command + e)];
  const dirs = explicit ? [o.cwd] : searchDirectories(o.env);
  for (const dir of dirs) {
    for (const name of names) {
      const candidate = win32.resolve(o.cwd, dir, name);
      if (!o.isFile(candidate)) continue;
      if (!RUNNABLE.has(extensionOf(candidate))) {
        throw new SpawnCommandError(
          'COMMAND_NOT_RUNNABLE',
          `\`${command}\` is ${candidate}, which is neither a program (.exe, .com) nor a batch file (.cmd, .bat): give the program that runs it (e.g. \`node\`) as the command`,
          { command, file: candidate },
        );
      }
      return candidate;
    }
  }
  const looked = explicit ? names.map((n) => win32.resolve(o.cwd, n)) : names;
  const where = explicit
    ? `looked for ${looked.join(', ')}`
    : `looked for ${looked.join(', ')} in the ${dirs.length} directories of PATH; the current directory is not searched`;
  const hint = explicit ? 'check the path' : `give the full path to the program, e.g. \`C:\\path\\to\\${names.at(-1)}\``;
  throw new SpawnCommandError('COMMAND_NOT_FOUND', `cannot find \`${command}\` (${where}): ${hint}`, { command, looked });
}

/** The line cmd.exe runs: the script in quotes, then each argument escaped for two parses. */
function batchLine(script: string, o: SpawnCommandOptions): string {
  const { args, env } = o;
  if (/[%"\0-\x1f]/.test(script)) {
    throw new SpawnCommandError(
      'COMMAND_NOT_RUNNABLE',
      `the batch file ${script} cannot be run through cmd.exe: its path holds \`%\`, \`"\` or a control character; move it, or run the program it starts directly`,
      { file: script },
    );
  }
  const caretNamed = Object.keys(env).find((k) => k.endsWith('^') && env[k] !== undefined);
  let notShim: string | null | undefined; // read once, when an argument needs it; null: a shim
  args.forEach((arg, index) => {
    const bad = /[\0-\x08\x0a-\x1f]/.exec(arg);
    if (bad !== null) {
      const char = `U+${bad[0].charCodeAt(0).toString(16).toUpperCase().padStart(4, '0')}`;
      throw new SpawnCommandError(
        'ARGUMENT_NOT_PASSABLE',
        `argument ${index + 1} holds a control character (${char}), which cannot pass through cmd.exe to the batch file ${script} (a newline ends its command line); pass it another way (a file, an environment variable) or run the program the batch file starts directly`,
        { index, char },
      );
    }
    if (caretNamed !== undefined && arg.includes('%')) {
      throw new SpawnCommandError(
        'ARGUMENT_NOT_PASSABLE',
        `argument ${index + 1} holds \`%\`, which cannot be kept from expansion by cmd.exe while the environment has a variable named \`${caretNamed}\`; unset it`,
        { index, variable: caretNamed },
      );
    }
    const active = ACTIVE_IN_LATER_PARSE.exec(arg);
    if (active === null) return;
    if (notShim === undefined) {
      const text = o.readText(script, SHIM_READ_LIMIT);
      notShim = text === undefined ? `it cannot be read or is over ${SHIM_READ_LIMIT / 1024} KiB` : (notAShim(text) ?? null);
    }
    if (notShim === null) return;
    throw new SpawnCommandError(
      'ARGUMENT_NOT_PASSABLE',
      `argument ${index + 1} holds \`${active[0]}\`, which cmd.exe could act on if the batch file ${script} parses its arguments again: it is not known to pass them on once as a generated shim does (${notShim}); run the program it starts directly (for a Node.js tool, \`node\` and its script), or leave \`${active[0]}\` out`,
      { index, char: active[0], file: script, reason: notShim },
    );
  });
  return [`"${script}"`, ...args.map((a) => escapeForCmd(escapeForCmd(quoteArgument(a))))].join(' ');
}

/** One argument as `CommandLineToArgvW` reads it back: always quoted, quotes and their backslashes escaped. */
function quoteArgument(arg: string): string {
  let out = '"';
  let backslashes = 0;
  for (const ch of arg) {
    if (ch === '\\') {
      backslashes++;
      continue;
    }
    out += ch === '"' ? '\\'.repeat(2 * backslashes + 1) + '"' : '\\'.repeat(backslashes) + ch;
    backslashes = 0;
  }
  // The closing quote follows: the backslashes before it are doubled too.
  return out + '\\'.repeat(2 * backslashes) + '"';
}

/** One cmd.exe parse's worth of carets: each one is removed, and what follows it is literal. */
function escapeForCmd(text: string): string {
  return text.replace(CMD_META, '^$&');
}
