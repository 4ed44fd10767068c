/**
 * spawn-command: the Windows plan (resolution, cmd.exe and its environment, the cmd.exe line, which
 * batch files are shims) on an injected file system, checked against small reference parsers of
 * cmd.exe and of `CommandLineToArgvW`; and on this platform, the file reader and the proxy still
 * starting a real server through the plan.
 *
 * The cmd.exe model (after the published reverse-engineered description of its parser):
 * `/s /c` strips the first and last quote; percent expansion runs first and expands `%NAME%` or
 * `%NAME:…%` only for a defined NAME; then one caret pass: outside quotes `^x` is `x` taken
 * literally, an unescaped `"` opens a quoted run in which everything is literal up to the next `"`.
 * A batch shim forwards `%*`, and cmd.exe runs one more caret pass over that text (percent
 * expansion does not rescan it). The program then reads its arguments by the MSVCRT rules.
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { PassThrough } from 'node:stream';
import { fileURLToPath } from 'node:url';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { runProxy } from '../../src/transport/proxy/proxy.js';
import {
  CMD_LINE_LIMIT,
  planSpawn,
  readSmallFile,
  SHIM_READ_LIMIT,
  SpawnCommandError,
  type SpawnCommandOptions,
  type SpawnPlan,
} from '../../src/transport/proxy/spawn-command.js';
import { timeBox } from '../helpers/time-box.js';

const RUN = timeBox(500, 2000);

const NODE_DIR = 'C:\\Program Files\\nodejs';
const NPX = `${NODE_DIR}\\npx.cmd`;
const CWD = 'C:\\work';

// ------------------------------------------------------------------ reference parsers

/** Variables cmd.exe defines by itself, besides the environment. */
const DYNAMIC = ['CD', 'DATE', 'TIME', 'RANDOM', 'ERRORLEVEL', 'CMDEXTVERSION', 'CMDCMDLINE', 'HIGHESTNUMANODENUMBER', '__CD__', '__APPDIR__', '=C:', '=EXITCODE'];

/**
 * Names percent expansion could replace in command-line mode. Every `%` is read as an opener and
 * the name runs to the next `%` or `:`: a superset of what cmd.exe expands.
 */
function expandableNames(line: string, env: NodeJS.ProcessEnv): string[] {
  const defined = new Set([...Object.keys(env), ...DYNAMIC].map((k) => k.toUpperCase()));
  const hits: string[] = [];
  for (let i = line.indexOf('%'); i !== -1; i = line.indexOf('%', i + 1)) {
    const name = /^[^%:]*/.exec(line.slice(i + 1))![0];
    if (i + 1 + name.length < line.length && defined.has(name.toUpperCase())) hits.push(name);
  }
  return hits;
}

/** What cmd.exe gives meaning to outside quotes. */
const CMD_META = new Set(['"', '&', '|', '<', '>', '^', '%', '!', '(', ')', '\t', '\n']);

/** One caret pass: the text cmd.exe runs, and where a metacharacter stood unescaped outside quotes. */
function caretPass(line: string): { text: string; bare: number[] } {
  let text = '';
  const bare: number[] = [];
  let quoted = false;
  for (let i = 0; i < line.length; i++) {
    const c = line[i]!;
    if (quoted) {
      text += c;
      if (c === '"') quoted = false;
    } else if (c === '^') {
      if (i + 1 === line.length) bare.push(i); // a line continuation
      else text += line[++i];
    } else {
      if (c === '"') quoted = true;
      if (CMD_META.has(c)) bare.push(i);
      text += c;
    }
  }
  return { text, bare };
}

/** `CommandLineToArgvW` for the arguments after the program name (MSVCRT 2008+ rules for `""`). */
function argvOf(line: string): string[] {
  const args: string[] = [];
  let cur: string | undefined;
  let quoted = false;
  for (let i = 0; i < line.length; ) {
    const c = line[i]!;
    if (!quoted && (c === ' ' || c === '\t')) {
      if (cur !== undefined) args.push(cur);
      cur = undefined;
      i++;
      continue;
    }
    cur ??= '';
    if (c === '\\') {
      let n = 0;
      for (; line[i] === '\\'; i++) n++;
      if (line[i] !== '"') cur += '\\'.repeat(n);
      else {
        cur += '\\'.repeat(n >> 1);
        if (n % 2 === 1) (cur += '"'), i++;
      }
    } else if (c === '"') {
      if (quoted && line[i + 1] === '"') (cur += '"'), (i += 2);
      else (quoted = !quoted), i++;
    } else {
      cur += c;
      i++;
    }
  }
  if (cur !== undefined) args.push(cur);
  return args;
}

/**
 * What a batch shim's program receives from a plan: cmd.exe's `/s /c` string, percent expansion
 * (none may happen), the outer caret pass (only the script's own quotes bare), the `%*` pass
 * (nothing bare), then `CommandLineToArgvW`. `text` is the program's command line after the script,
 * which a batch file that parses its arguments again would parse a third time.
 */
function throughCmd(plan: SpawnPlan, env: NodeJS.ProcessEnv): { script: string; args: string[]; text: string } {
  expect(plan.options).toEqual({ windowsHide: true, windowsVerbatimArguments: true });
  expect(plan.args.slice(0, 4)).toEqual(['/d', '/v:off', '/s', '/c']);
  expect(plan.args).toHaveLength(5);
  // libuv joins verbatim arguments with one space: the /c string is the last argument whole.
  const quoted = plan.args[4]!;
  expect(quoted.startsWith('"') && quoted.endsWith('"')).toBe(true);
  const line = quoted.slice(1, -1);
  expect(expandableNames(line, env)).toEqual([]);
  const outer = caretPass(line);
  const end = line.indexOf('"', 1);
  expect(line[0]).toBe('"');
  expect(outer.bare).toEqual([0]); // the script's opening quote; its closing one ends the quoted run
  const shim = caretPass(outer.text.slice(end + 1));
  expect(shim.bare).toEqual([]);
  return { script: line.slice(1, end), args: argvOf(shim.text), text: shim.text };
}

/** What the program gets through a shim: the script and the arguments. */
function shimArgs(plan: SpawnPlan, env: NodeJS.ProcessEnv): { script: string; args: string[] } {
  const { script, args } = throughCmd(plan, env);
  return { script, args };
}

// ------------------------------------------------------------------ helpers

/**
 * A Windows file system holding these files (names compared without case); each holds `texts[path]`,
 * else Node's own npx.cmd. A file over `maxBytes` reads as `undefined`, as {@link readSmallFile} does.
 */
function fsOf(held: string[], texts: Record<string, string> = {}): Pick<SpawnCommandOptions, 'isFile' | 'readText'> {
  const byName = new Map(held.map((p) => [p.toLowerCase(), texts[p] ?? NODE_NPX_CMD]));
  return {
    isFile: (path) => byName.has(path.toLowerCase()),
    readText: (path, maxBytes) => {
      const text = byName.get(path.toLowerCase());
      return text === undefined || Buffer.byteLength(text, 'latin1') > maxBytes ? undefined : text;
    },
  };
}

function onWindows(command: string, args: string[], env: NodeJS.ProcessEnv, held: string[], texts?: Record<string, string>): SpawnPlan {
  return planSpawn({ command, args, env, platform: 'win32', cwd: CWD, ...fsOf(held, texts) });
}

/** A full path as Windows takes it without searching: `C:\…` or `\\server\share\…`. */
const FULL_PATH = /^(?:[A-Za-z]:\\|\\\\[^\\]+\\[^\\]+)/;

function refusal(run: () => unknown): SpawnCommandError {
  try {
    run();
  } catch (e) {
    expect(e).toBeInstanceOf(SpawnCommandError);
    return e as SpawnCommandError;
  }
  throw new Error('expected a SpawnCommandError');
}

const BASE_ENV = { Path: `C:\\Windows\\system32;${NODE_DIR}`, PATHEXT: '.COM;.EXE;.BAT;.CMD;.VBS;.JS', ComSpec: 'C:\\Windows\\system32\\cmd.exe' };

/** What the SDK's default environment on Windows carries to find cmd.exe: `SYSTEMROOT`, no `COMSPEC`. */
const SYS = { SYSTEMROOT: 'C:\\WINDOWS' };

/** The child's environment on Windows: the one given, with the current directory's search switched off. */
function childEnvOf(env: NodeJS.ProcessEnv): NodeJS.ProcessEnv {
  return { ...env, NoDefaultCurrentDirectoryInExePath: '1' };
}

// ------------------------------------------------------------------ batch files as installed

/** Node's own npx.cmd (npm 10): `%~dp0` is the script's own directory, `%%F` a FOR variable. */
const NODE_NPX_CMD = [
  ':: Created by npm, please don\'t edit manually.',
  '@ECHO OFF',
  '',
  'SETLOCAL',
  '',
  'SET "NODE_EXE=%~dp0\\node.exe"',
  'IF NOT EXIST "%NODE_EXE%" (',
  '  SET "NODE_EXE=node"',
  ')',
  '',
  'SET "NPM_PREFIX_JS=%~dp0\\node_modules\\npm\\bin\\npm-prefix.js"',
  'SET "NPX_CLI_JS=%~dp0\\node_modules\\npm\\bin\\npx-cli.js"',
  'FOR /F "delims=" %%F IN (\'CALL "%NODE_EXE%" "%NPM_PREFIX_JS%"\') DO (',
  '  SET "NPM_PREFIX_NPX_CLI_JS=%%F\\node_modules\\npm\\bin\\npx-cli.js"',
  ')',
  'IF EXIST "%NPM_PREFIX_NPX_CLI_JS%" (',
  '  SET "NPX_CLI_JS=%NPM_PREFIX_NPX_CLI_JS%"',
  ')',
  '',
  '"%NODE_EXE%" "%NPX_CLI_JS%" %*',
  '',
].join('\r\n');

/** Node's npm.cmd of npm 9, which asks npm itself for the global prefix. */
const NODE_NPM9_CMD = NODE_NPX_CMD.replaceAll('npx-cli.js', 'npm-cli.js')
  .replaceAll('NPX_CLI_JS', 'NPM_CLI_JS')
  .replace('SET "NPM_PREFIX_JS=%~dp0\\node_modules\\npm\\bin\\npm-prefix.js"\r\n', '')
  .replace('"%NPM_PREFIX_JS%"\'', '"%NPM_CLI_JS%" prefix -g\'');

/** An older gradlew.bat: it keeps `%*` in a variable and expands it on a later line, a third parse. */
const NOT_SHIM_GRADLEW =
  '@if "%DEBUG%" == "" @echo off\r\nset CMD_LINE_ARGS=%*\r\n"%JAVA_EXE%" -classpath "%CLASSPATH%" org.gradle.wrapper.GradleWrapperMain %CMD_LINE_ARGS%\r\n';

/** The head npm's cmd-shim writes: a subroutine sets `dp0` (CALL without arguments). */
const CMD_SHIM_HEAD = '@ECHO off\r\nGOTO start\r\n:find_dp0\r\nSET dp0=%~dp0\r\nEXIT /b\r\n:start\r\nSETLOCAL\r\nCALL :find_dp0\r\n';

/** npm's cmd-shim for a `#!/usr/bin/env node` bin (`node_modules\\.bin\\*.cmd`, `%APPDATA%\\npm\\*.cmd`). */
const CMD_SHIM_NODE =
  CMD_SHIM_HEAD +
  '\r\nIF EXIST "%dp0%\\node.exe" (\r\n  SET "_prog=%dp0%\\node.exe"\r\n) ELSE (\r\n  SET "_prog=node"\r\n  SET PATHEXT=%PATHEXT:;.JS;=;%\r\n)\r\n\r\n' +
  'endLocal & goto #_undefined_# 2>NUL || title %COMSPEC% & "%_prog%"  "%dp0%\\..\\@modelcontextprotocol\\server-filesystem\\dist\\index.js" %*\r\n';

/** npm's cmd-shim for a bin without a shebang: the target itself is started. */
const cmdShimDirect = (target: string): string => `${CMD_SHIM_HEAD}"%dp0%\\${target}"   %*\r\n`;

/** The older cmd-shim form (npm 6, pnpm's @zkochan/cmd-shim): one `%*` line in each branch of an IF. */
const BLOCK_SHIM = [
  '@SETLOCAL',
  '@IF NOT DEFINED NODE_PATH (',
  '  @SET "NODE_PATH=C:\\work\\node_modules\\.pnpm\\node_modules"',
  ') ELSE (',
  '  @SET "NODE_PATH=C:\\work\\node_modules\\.pnpm\\node_modules;%NODE_PATH%"',
  ')',
  '@IF EXIST "%~dp0\\node.exe" (',
  '  "%~dp0\\node.exe"  "%~dp0\\..\\server\\dist\\index.js" %*',
  ') ELSE (',
  '  @SET PATHEXT=%PATHEXT:;.JS;=;%',
  '  node  "%~dp0\\..\\server\\dist\\index.js" %*',
  ')',
  '',
].join('\n');

/** pnpm's one-line shim for a given node. */
const PNPM_NODE_SHIM = '@SETLOCAL\r\n@"C:\\Users\\me\\.pnpm\\nodejs\\20.11.0\\node.exe"  "%~dp0\\..\\server\\index.js" %*\r\n';

// ------------------------------------------------------------------ tests

describe('spawn-command: reference parsers', () => {
  it('spawn-command: the argv reference reads the documented MSVCRT examples', () => {
    expect(argvOf('"abc" d e')).toEqual(['abc', 'd', 'e']);
    expect(argvOf('a\\\\\\b d"e f"g h')).toEqual(['a\\\\\\b', 'de fg', 'h']);
    expect(argvOf('a\\\\\\"b c d')).toEqual(['a\\"b', 'c', 'd']);
    expect(argvOf('a\\\\\\\\"b c" d e')).toEqual(['a\\\\b c', 'd', 'e']);
    expect(argvOf('a"b"" c d')).toEqual(['ab" c d']);
  });

  it('spawn-command: the cmd reference flags what a line escaped once would let through', () => {
    expect(caretPass('x ^&^| "a&b" c^^').text).toBe('x &| "a&b" c^');
    expect(caretPass('x ^&^| "a&b" c^^').bare).toEqual([7]);
    // `a"&calc` escaped for one pass only: in the shim's pass the `\"` ends the quoted run and `&` is bare.
    expect(caretPass('^"a\\^"^&calc^"').text).toBe('"a\\"&calc"');
    expect(caretPass(caretPass('^"a\\^"^&calc^"').text).bare).toEqual([0, 4, 9]);
    expect(expandableNames('^%PATH^% ^%CD^:~0,1^% %path%', { PATH: 'x' })).toEqual(['path']);
  });
});

describe('spawn-command: plans', () => {
  it('spawn-command: elsewhere than Windows the command goes to spawn as it is', () => {
    const env = { PATH: '/usr/bin', ComSpec: 'cmd.exe' };
    const plan = planSpawn({ command: 'npx', args: ['-y', 'a&b|c'], env, platform: 'linux', cwd: '/', isFile: () => false, readText: () => undefined });
    expect(plan).toEqual({ file: 'npx', args: ['-y', 'a&b|c'], env, options: {} });
    expect(plan.env).toBe(env);
  });

  it('spawn-command: a shim on PATH runs through ComSpec with each argument escaped for two passes', () => {
    const plan = onWindows('npx', ['-y', '@modelcontextprotocol/server-filesystem', 'C:\\My Files'], BASE_ENV, [NPX, `${NODE_DIR}\\npx`]);
    expect(plan.file).toBe('C:\\Windows\\system32\\cmd.exe');
    expect(plan.args[4]).toBe(
      '""C:\\Program Files\\nodejs\\npx.cmd" ^^^"-y^^^" ^^^"@modelcontextprotocol/server-filesystem^^^" ^^^"C^^^:\\My^^^ Files^^^""',
    );
    expect(shimArgs(plan, BASE_ENV)).toEqual({ script: NPX, args: ['-y', '@modelcontextprotocol/server-filesystem', 'C:\\My Files'] });
  });

  it('spawn-command: a program runs directly with its arguments as given', () => {
    const uvx = 'C:\\Users\\me\\.local\\bin\\uvx.exe';
    const env = { ...BASE_ENV, Path: `C:\\Users\\me\\.local\\bin;${BASE_ENV.Path}` };
    const plan = onWindows('uvx', ['mcp-server-git', 'a "b" & c\n'], env, [uvx, NPX]);
    expect(plan).toEqual({ file: uvx, args: ['mcp-server-git', 'a "b" & c\n'], env: childEnvOf(env), options: { windowsHide: true } });
  });

  it('spawn-command: PATH directories in order, and in each, PATHEXT in order', () => {
    const env = { ...SYS, PATH: 'C:\\a;C:\\b', PATHEXT: '.CMD;.EXE' };
    expect(onWindows('tool', [], env, ['C:\\b\\tool.exe', 'C:\\a\\tool.cmd']).args[4]).toBe('""C:\\a\\tool.cmd""');
    expect(onWindows('tool', [], env, ['C:\\a\\tool.exe', 'C:\\a\\tool.cmd']).args[4]).toBe('""C:\\a\\tool.cmd""');
    expect(onWindows('tool', [], { PATH: 'C:\\a;C:\\b' }, ['C:\\a\\tool.cmd', 'C:\\a\\tool.exe']).file).toBe('C:\\a\\tool.exe');
    expect(onWindows('tool', [], env, ['C:\\b\\tool.exe']).file).toBe('C:\\b\\tool.exe');
  });

  it('spawn-command: extensions PATHEXT lists but that need another program are skipped in the search', () => {
    const env = { ...SYS, PATH: 'C:\\a', PATHEXT: '.JS;.PS1;.CMD' };
    expect(onWindows('tool', [], env, ['C:\\a\\tool.js', 'C:\\a\\tool.ps1', 'C:\\a\\tool.cmd']).args[4]).toBe('""C:\\a\\tool.cmd""');
  });

  it('spawn-command: variable names without case; of two spellings, the one Node passes to the child', () => {
    expect(onWindows('tool', [], { pAtH: 'C:\\a', pathext: '.EXE' }, ['C:\\a\\tool.exe']).file).toBe('C:\\a\\tool.exe');
    // Node keeps the first key in sorted order: `PATH` sorts before `Path`.
    const both = { Path: 'C:\\a', PATH: 'C:\\b' };
    expect(onWindows('tool', [], both, ['C:\\a\\tool.exe', 'C:\\b\\tool.exe']).file).toBe('C:\\b\\tool.exe');
    expect(onWindows('tool', [], { PATH: 'C:\\a', comspec: 'D:\\shell\\cmd.exe' }, ['C:\\a\\tool.cmd']).file).toBe('D:\\shell\\cmd.exe');
    expect(onWindows('tool', [], { PATH: 'C:\\a', systemroot: 'E:\\Win' }, ['C:\\a\\tool.cmd']).file).toBe('E:\\Win\\System32\\cmd.exe');
  });

  it('spawn-command: an explicit extension or path is kept, a relative path resolved against cwd', () => {
    const held = ['C:\\a\\tool.exe', 'C:\\a\\tool.cmd', 'C:\\work\\bin\\server.cmd', 'D:\\srv\\server.exe', 'C:\\a\\py3.11.exe'];
    expect(onWindows('tool.cmd', [], { ...SYS, PATH: 'C:\\a' }, held).args[4]).toBe('""C:\\a\\tool.cmd""');
    expect(onWindows('TOOL.EXE', [], { PATH: 'C:\\a' }, held).file).toBe('C:\\a\\TOOL.EXE');
    expect(onWindows('bin/server', [], SYS, held).args[4]).toBe('""C:\\work\\bin\\server.cmd""');
    expect(onWindows('.\\bin\\server.cmd', [], SYS, held).args[4]).toBe('""C:\\work\\bin\\server.cmd""');
    expect(onWindows('D:\\srv\\server.exe', [], {}, held).file).toBe('D:\\srv\\server.exe');
    // A dot in the name is not an extension Windows runs: PATHEXT is tried after it.
    expect(onWindows('py3.11', [], { PATH: 'C:\\a' }, held).file).toBe('C:\\a\\py3.11.exe');
  });

  it('spawn-command: paths with spaces, parentheses and `&` stay inside the script quotes', () => {
    const dir = 'C:\\Program Files (x86)\\R&D tools!';
    const env = { ...SYS, PATH: `"${dir}"` };
    const plan = onWindows('serve', ['x y'], env, [`${dir}\\serve.bat`]);
    expect(shimArgs(plan, env)).toEqual({ script: `${dir}\\serve.bat`, args: ['x y'] });
  });

  it('spawn-command: the current directory and relative PATH entries are not searched', () => {
    const held = ['C:\\work\\npx.cmd', 'C:\\work\\rel\\npx.cmd'];
    const e = refusal(() => onWindows('npx', [], { PATH: 'rel;;C:\\a' }, held));
    expect(e.code).toBe('COMMAND_NOT_FOUND');
    expect(e.message).toContain('cannot find `npx`');
    expect(e.message).toContain('npx.com, npx.exe, npx.bat, npx.cmd in the 1 directories of PATH; the current directory is not searched');
    expect(e.message).toContain('give the full path to the program');
    expect(e.data).toEqual({ command: 'npx', looked: ['npx.com', 'npx.exe', 'npx.bat', 'npx.cmd'] });
  });

  it('spawn-command: an explicit path that holds nothing runnable names the files looked for', () => {
    const e = refusal(() => onWindows('.\\server', [], {}, []));
    expect(e.code).toBe('COMMAND_NOT_FOUND');
    expect(e.message).toContain('C:\\work\\server.com, C:\\work\\server.exe, C:\\work\\server.bat, C:\\work\\server.cmd');
    expect(e.message).toContain('check the path');
  });

  it('spawn-command: PowerShell scripts and other file types are refused with what to do', () => {
    const ps = refusal(() => onWindows('.\\server.ps1', [], {}, ['C:\\work\\server.ps1']));
    expect(ps.code).toBe('COMMAND_NOT_RUNNABLE');
    expect(ps.message).toContain('PowerShell script');
    expect(ps.message).toContain('powershell -NoProfile -File .\\server.ps1');
    const js = refusal(() => onWindows('server.js', [], { PATH: 'C:\\a' }, ['C:\\a\\server.js']));
    expect(js.code).toBe('COMMAND_NOT_RUNNABLE');
    expect(js.message).toContain('C:\\a\\server.js, which is neither a program (.exe, .com) nor a batch file (.cmd, .bat)');
    expect(refusal(() => onWindows('', [], BASE_ENV, [])).code).toBe('COMMAND_NOT_FOUND');
  });

  it('spawn-command: a newline, CR, NUL or other control character cannot pass to a batch file', () => {
    for (const ch of ['\n', '\r', '\0', '\x1a', '\x0b']) {
      const e = refusal(() => onWindows('npx', ['ok', `a${ch}b`], BASE_ENV, [NPX]));
      expect(e.code).toBe('ARGUMENT_NOT_PASSABLE');
      expect(e.message).toContain('argument 2 holds a control character');
      expect(e.data.index).toBe(1);
    }
    expect(shimArgs(onWindows('npx', ['a\tb'], BASE_ENV, [NPX]), BASE_ENV).args).toEqual(['a\tb']);
  });

  it('spawn-command: a batch file whose path holds `%` is refused', () => {
    const e = refusal(() => onWindows('tool', [], { ...SYS, PATH: 'C:\\100%\\bin' }, ['C:\\100%\\bin\\tool.cmd']));
    expect(e.code).toBe('COMMAND_NOT_RUNNABLE');
    expect(e.message).toContain('C:\\100%\\bin\\tool.cmd');
  });

  it('spawn-command: `%` is refused while a variable name ends in `^` (it could be expanded)', () => {
    const env = { ...BASE_ENV, 'a^': 'x' };
    const e = refusal(() => onWindows('npx', ['%a^%'], env, [NPX]));
    expect(e.code).toBe('ARGUMENT_NOT_PASSABLE');
    expect(e.message).toContain('`a^`');
    expect(shimArgs(onWindows('npx', ['no percent'], env, [NPX]), env).args).toEqual(['no percent']);
  });
});

describe('spawn-command: cmd.exe and the child environment', () => {
  /** The environment an SDK client gives its server on Windows (`getDefaultEnvironment`): no COMSPEC, no PATHEXT. */
  const SDK_ENV = {
    APPDATA: 'C:\\Users\\me\\AppData\\Roaming',
    HOMEDRIVE: 'C:',
    PATH: `C:\\WINDOWS\\system32;${NODE_DIR};C:\\Users\\me\\AppData\\Roaming\\npm`,
    SYSTEMDRIVE: 'C:',
    SYSTEMROOT: 'C:\\WINDOWS',
    USERPROFILE: 'C:\\Users\\me',
  };

  it('spawn-command: without ComSpec (an SDK client launching the proxy), cmd.exe is SystemRoot\'s, by its full path', () => {
    // A hostile workspace as the working directory: its cmd.exe and npx.cmd are never candidates.
    const held = [NPX, 'C:\\work\\cmd.exe', 'C:\\work\\npx.cmd'];
    const plan = onWindows('npx', ['-y', '@modelcontextprotocol/server-filesystem', 'C:\\work'], SDK_ENV, held);
    expect(plan.file).toBe('C:\\WINDOWS\\System32\\cmd.exe');
    expect(shimArgs(plan, SDK_ENV)).toEqual({ script: NPX, args: ['-y', '@modelcontextprotocol/server-filesystem', 'C:\\work'] });
    for (const key of ['SystemRoot', 'systemroot', 'SYSTEMROOT']) {
      expect(onWindows('npx', [], { PATH: NODE_DIR, [key]: 'D:\\Win' }, [NPX]).file).toBe('D:\\Win\\System32\\cmd.exe');
    }
  });

  it('spawn-command: a ComSpec that is not a full path to a file named cmd.exe is ignored', () => {
    const ignored = [
      'cmd.exe',
      'cmd',
      '.\\cmd.exe',
      'system32\\cmd.exe',
      '\\Windows\\system32\\cmd.exe', // the current drive's
      'C:cmd.exe', // the current directory of drive C:
      '"C:\\Windows\\system32\\cmd.exe"',
      '%SystemRoot%\\system32\\cmd.exe',
      'C:\\Tools\\powershell.exe',
      'C:\\Tools\\cmd.exe.bak',
      'C:\\Tools\\notcmd.exe',
      'C:\\Tools\\cmd.exe\n',
      '',
    ];
    for (const comSpec of ignored) {
      expect(onWindows('npx', [], { ...SYS, PATH: NODE_DIR, ComSpec: comSpec }, [NPX]).file, comSpec).toBe('C:\\WINDOWS\\System32\\cmd.exe');
    }
    const taken = ['D:\\shell\\CMD.EXE', 'C:/Windows/System32/cmd.exe', '\\\\server\\share\\cmd.exe', '\\\\?\\C:\\Windows\\System32\\cmd.exe'];
    for (const comSpec of taken) expect(onWindows('npx', [], { ...SYS, PATH: NODE_DIR, COMSPEC: comSpec }, [NPX]).file).toBe(comSpec);
  });

  it('spawn-command: with neither a usable ComSpec nor SystemRoot a batch file is refused, saying what to set; programs still start', () => {
    for (const systemRoot of [undefined, '', 'Windows', '\\Windows', 'C:Windows', '%SystemDrive%\\Windows']) {
      const env = { PATH: NODE_DIR, ComSpec: 'cmd.exe', ...(systemRoot === undefined ? {} : { SystemRoot: systemRoot }) };
      const e = refusal(() => onWindows('npx', ['-y', 'x'], env, [NPX]));
      expect(e.code).toBe('INTERPRETER_NOT_FOUND');
      expect(e.message).toContain(`the batch file ${NPX} needs cmd.exe`);
      expect(e.message).toContain('ComSpec (`cmd.exe`) must be a full path to cmd.exe');
      expect(e.message).toContain('set SystemRoot (usually C:\\Windows) or ComSpec (C:\\Windows\\System32\\cmd.exe)');
      expect(e.data).toEqual({ file: NPX, ComSpec: 'cmd.exe', SystemRoot: systemRoot });
    }
    expect(refusal(() => onWindows('npx', [], { PATH: NODE_DIR }, [NPX])).message).toContain('ComSpec (not set)');
    expect(onWindows('node', ['x.js'], { PATH: NODE_DIR }, [`${NODE_DIR}\\node.exe`]).file).toBe(`${NODE_DIR}\\node.exe`);
  });

  it('spawn-command: the child gets NoDefaultCurrentDirectoryInExePath=1 and every other variable, for programs and batch files', () => {
    const env: NodeJS.ProcessEnv = {
      ...BASE_ENV,
      PATH: 'C:\\other', // a second spelling of Path: kept as given, Node picks one
      TEMP: 'C:\\Temp',
      UNSET: undefined,
      nodefaultcurrentdirectoryinexepath: '',
      NODEFAULTCURRENTDIRECTORYINEXEPATH: '0',
    };
    const before = { ...env };
    const node = `${NODE_DIR}\\node.exe`;
    const held = [NPX, node, 'C:\\other\\npx.cmd', 'C:\\other\\node.exe'];
    for (const plan of [onWindows('npx', ['a'], env, held), onWindows('node', ['a'], env, held)]) {
      const { nodefaultcurrentdirectoryinexepath: _a, NODEFAULTCURRENTDIRECTORYINEXEPATH: _b, ...rest } = env;
      expect(plan.env).toEqual({ ...rest, NoDefaultCurrentDirectoryInExePath: '1' });
      expect(Object.keys(plan.env).filter((k) => k.toUpperCase() === 'NODEFAULTCURRENTDIRECTORYINEXEPATH')).toEqual(['NoDefaultCurrentDirectoryInExePath']);
      expect('UNSET' in plan.env).toBe(true);
    }
    expect(env).toEqual(before);
    expect(onWindows('node', [], { PATH: NODE_DIR }, [node]).env).toEqual({ PATH: NODE_DIR, NoDefaultCurrentDirectoryInExePath: '1' });
  });

  it('spawn-command: the file planned is a full path: PATH entries on the current drive are not searched', () => {
    const held = ['C:\\tools\\tool.exe', 'C:\\work\\tool.exe', 'D:\\tools\\tool.exe'];
    expect(refusal(() => onWindows('tool', [], { PATH: '\\tools;tools;C:tools' }, held)).message).toContain('in the 0 directories of PATH');
    expect(onWindows('tool', [], { PATH: '\\tools;D:\\tools' }, held).file).toBe('D:\\tools\\tool.exe');
    expect(onWindows('tool', [], { PATH: '\\\\srv\\share\\bin' }, ['\\\\srv\\share\\bin\\tool.exe']).file).toBe('\\\\srv\\share\\bin\\tool.exe');
    // A path the operator gives is made full from the working directory, whatever its form.
    expect(onWindows('\\tools\\tool.exe', [], {}, held).file).toBe('C:\\tools\\tool.exe');
    expect(onWindows('.\\tool', [], {}, held).file).toBe('C:\\work\\tool.exe');
    const relativeCwd = refusal(() => planSpawn({ command: '.\\tool.exe', args: [], env: {}, platform: 'win32', cwd: 'work', ...fsOf(['work\\tool.exe']) }));
    expect(relativeCwd.code).toBe('COMMAND_NOT_FOUND');
    expect(relativeCwd.message).toContain('give the full path to the program');
  });
});

describe('spawn-command: which batch files are shims', () => {
  /** Arguments a third parse would turn into commands, and ones only a missing escape would garble. */
  const HOSTILE = ['a"&calc', '"&calc&"', '%PATH%', '!PATH!', 'x^', '(a) | b > c < d', 'C:\\My Files\\', 'a\\"b'];

  it('spawn-command: the shims npm, pnpm and Node install pass every argument on exactly', () => {
    const shims: Record<string, string> = {
      "Node's npx.cmd": NODE_NPX_CMD,
      "Node's npm.cmd of npm 9": NODE_NPM9_CMD,
      "npm's cmd-shim for a node bin": CMD_SHIM_NODE,
      "npm's cmd-shim for a program": cmdShimDirect('..\\server\\bin\\server.exe'),
      'the IF-block shim of npm 6 and pnpm': BLOCK_SHIM,
      "pnpm's shim for a given node": PNPM_NODE_SHIM,
      'a percent sign escaped as %% before %*': '@echo 100%%* sure\r\nnode "%~dp0\\x.js" %*\r\n',
    };
    for (const [name, text] of Object.entries(shims)) {
      const script = 'C:\\work\\node_modules\\.bin\\server.cmd';
      const plan = onWindows('server', HOSTILE, { ...SYS, PATH: 'C:\\work\\node_modules\\.bin' }, [script], { [script]: text });
      expect(shimArgs(plan, SYS), name).toEqual({ script, args: HOSTILE });
    }
  });

  /** Batch files that are not known to pass `%*` on once, and the reason each is given. */
  const NOT_SHIMS: [string, string, string][] = [
    ['older gradlew.bat', NOT_SHIM_GRADLEW, 'line 2: %* is part of a SET command'],
    ['argument slurping', ':loop\r\nif "x%~1" == "x" goto run\r\nset ARGS=%ARGS% %1\r\n', 'line 2 reads an argument by number'],
    ['%1 read', 'node x.js %1 %*', 'line 1 reads an argument by number'],
    ['%~f1 read', 'node %~f1 %*', 'line 1 reads an argument by number'],
    ['%~$PATH:1 read', 'echo %~$PATH:1\nnode x.js %*', 'line 1 reads an argument by number'],
    ['a CALL forward', '@call "%~dp0\\run.cmd" %*', 'line 1: the line that passes on %* uses CALL'],
    ['delayed expansion', '@echo off\nsetlocal EnableDelayedExpansion\nnode "%~dp0\\x.js" %*', 'line 2 turns on delayed expansion'],
    ["pnpm's shim for a .bat", '@SETLOCAL\n@IF EXIST "%~dp0\\cmd.exe" (\n  "%~dp0\\cmd.exe" /C "%~dp0\\src.bat" %*\n) ELSE (\n  cmd /C "%~dp0\\src.bat" %*\n)\n', 'line 3: %* is passed to %~dp0\\cmd.exe, which parses it again'],
    ["cmd-shim's for a .cmd", cmdShimDirect('..\\tool\\bin\\tool.cmd'), 'line 9: %* is passed to %dp0%\\..\\tool\\bin\\tool.cmd, which parses it again'],
    ['a cmd.exe by ComSpec', '%COMSPEC% /c node x.js %*', 'line 1: %* is passed to %comspec%, which parses it again'],
    ['PowerShell', 'powershell -NoProfile -File "%~dp0\\x.ps1" %*', 'line 1: %* is passed to powershell, which parses it again'],
    ['a redirection after %*', 'node "%~dp0\\x.js" %* 2>NUL', 'line 1: %* is not the last word of its line'],
    ['%* glued to a word', 'node "%~dp0\\x.js" --%*', 'line 1: %* is not the last word of its line'],
    ['%* in quotes', 'node "%~dp0\\x.js %*"', 'line 1: %* stands inside quotes'],
    ['%* after a caret', 'node x.js ^%*', 'line 1: %* follows a caret'],
    ['%* as the command', '@%*', 'line 1: the arguments themselves are the command'],
    ['%* in a FOR body', 'for %%a in (1 2) do (\n  node x.js %*\n)', 'line 2: %* is inside a FOR body'],
    ['%* in a one-line FOR', 'for %%a in (1) do node x.js %*', 'line 1: %* is part of a FOR command'],
    ['%* in a one-line IF', 'if exist x.js node x.js %*', 'line 1: %* is part of a IF command'],
    ['SHIFT', 'shift\nnode x.js %*', 'line 1 shifts its arguments'],
    ['%CMDCMDLINE%', 'set "L=%CMDCMDLINE%"\nnode x.js %*', 'line 1 reads %CMDCMDLINE%'],
    ['a line continued', 'node x.js ^\n  %*', 'line 1 continues on the next line'],
    ['%* twice', 'node x.js %* %*', 'line 1 holds %* more than once'],
    ['no %*', '@echo off\r\necho hello\r\n', 'it never passes on %*'],
    ['cmd ended by a slash', '@cmd/c node x.js %*', 'line 1: %* is passed to cmd, which parses it again'],
    ['powershell ended by a slash', 'powershell/c node x.js %*', 'line 1: %* is passed to powershell, which parses it again'],
    ['cmd through a variable the file sets', 'set P=cmd\n%P% /c node x.js %*', 'line 2: %* is passed to cmd, which parses it again'],
    ['a program from the environment', '%TOOL% x.js %*', 'line 1: %* is passed to a program named by %tool%, which the batch file does not set'],
    ['%* in a REM', 'rem %*', 'line 1: %* is part of a REM command'],
  ];

  it('spawn-command: a batch file that may parse its arguments again refuses the characters cmd.exe acts on, naming the argument', () => {
    const script = 'C:\\work\\run.cmd';
    for (const [name, text, reason] of NOT_SHIMS) {
      for (const [i, ch] of [...'"%!^&|<>()'].entries()) {
        const args = ['--port', '8080', `a${ch}b`];
        const e = refusal(() => onWindows('.\\run.cmd', args, SYS, [script], { [script]: text }));
        expect(e.code, name).toBe('ARGUMENT_NOT_PASSABLE');
        expect(e.data, name).toEqual({ index: 2, char: ch, file: script, reason });
        if (i > 0) continue;
        expect(e.message).toContain(`argument 3 holds \`${ch}\`, which cmd.exe could act on if the batch file ${script} parses its arguments again`);
        expect(e.message).toContain(`(${reason})`);
        expect(e.message).toContain('run the program it starts directly');
      }
      // Arguments without them pass, exactly through the shim's two parses.
      const safe = ['C:\\My Files\\', 'a=b,c;d', '*.txt', '~/x', 'é 😀', 'tab\there', ''];
      expect(shimArgs(onWindows('.\\run.cmd', safe, SYS, [script], { [script]: text }), SYS), name).toEqual({ script, args: safe });
    }
  });

  it('spawn-command: a batch file that cannot be read, or is over 64 KiB, is not a shim', () => {
    const e = refusal(() => planSpawn({ command: NPX, args: ['a&b'], env: SYS, platform: 'win32', cwd: CWD, isFile: () => true, readText: () => undefined }));
    expect(e.data.reason).toBe('it cannot be read or is over 64 KiB');
    const padded = (size: number): string => NODE_NPX_CMD + ':: ' + 'x'.repeat(size - NODE_NPX_CMD.length - 3);
    expect(shimArgs(onWindows('npx', ['a&b'], { ...SYS, PATH: NODE_DIR }, [NPX], { [NPX]: padded(SHIM_READ_LIMIT) }), SYS).args).toEqual(['a&b']);
    expect(refusal(() => onWindows('npx', ['a&b'], { ...SYS, PATH: NODE_DIR }, [NPX], { [NPX]: padded(SHIM_READ_LIMIT + 1) })).data.reason).toBe(
      'it cannot be read or is over 64 KiB',
    );
  });

  it('spawn-command: the batch file is read only when an argument needs it, and then once', () => {
    const reads: string[] = [];
    const fs = fsOf([NPX]);
    const plan = (args: string[]): SpawnPlan =>
      planSpawn({ command: 'npx', args, env: { ...SYS, PATH: NODE_DIR }, platform: 'win32', cwd: CWD, isFile: fs.isFile, readText: (p, max) => (reads.push(p), fs.readText(p, max)) });
    plan(['-y', 'server', 'C:\\My Files']);
    expect(reads).toEqual([]);
    plan(['a&b', 'c|d', '%x%']);
    expect(reads).toEqual([NPX]);
  });

  it('spawn-command: a command line over cmd.exe\'s 8191 characters is refused; one at the limit is not', () => {
    const env = { ...SYS, PATH: NODE_DIR };
    const lineOf = (plan: SpawnPlan): number => [plan.file, ...plan.args].join(' ').length;
    const room = CMD_LINE_LIMIT - lineOf(onWindows('npx', [''], env, [NPX]));
    expect(lineOf(onWindows('npx', ['a'.repeat(room)], env, [NPX]))).toBe(CMD_LINE_LIMIT);
    const e = refusal(() => onWindows('npx', ['a'.repeat(room + 1)], env, [NPX]));
    expect(e.code).toBe('COMMAND_LINE_TOO_LONG');
    expect(e.data).toEqual({ file: NPX, length: CMD_LINE_LIMIT + 1, limit: CMD_LINE_LIMIT });
    expect(e.message).toContain(`would be ${CMD_LINE_LIMIT + 1} characters, and cmd.exe reads at most ${CMD_LINE_LIMIT}`);
    // Escaping counts: 2100 `&` take four characters each on the line.
    expect(refusal(() => onWindows('npx', ['&'.repeat(2100)], env, [NPX])).code).toBe('COMMAND_LINE_TOO_LONG');
    // A program is not started through cmd.exe: its limit is CreateProcess's, Node's to report.
    expect(onWindows('node', ['a'.repeat(20_000)], env, [`${NODE_DIR}\\node.exe`]).args[0]).toHaveLength(20_000);
  });
});

// ------------------------------------------------------------------ properties

/** cmd.exe and MSVCRT metacharacters, with letters and `:~,=` to build `%NAME:~0,5%` forms. */
const argChar = fc.constantFrom(...'"\\&|<>^%!() \t:~,=;a5CDP', 'é', '😀');
/** Pieces the single characters rarely line up into: expansions, escapes, backslash runs before quotes. */
const argPiece = fc.constantFrom('%a%', '%C:~0,5%', '%P:a=b%', '%CD%', '!a!', '^^', '\\\\"', '\\\\', '"&calc&"', '%%');
const argument = fc.array(fc.oneof({ weight: 4, arbitrary: argChar }, { weight: 1, arbitrary: argPiece }), { maxLength: 20 }).map((cs) => cs.join(''));
const dirPart = fc.array(fc.constantFrom(...'ab &()!^;,=@ \u00e9'), { minLength: 1, maxLength: 8 }).map((cs) => cs.join('').trim() || 'd');
/** Variables the fuzzed arguments could name. */
const FUZZ_ENV = { ...BASE_ENV, a: '1', C: '2', D: '3', P: '4', CD5: '5', 'a:': '6' };

describe('spawn-command: properties', () => {
  it('spawn-command: any arguments reach a shim through cmd.exe exactly, nothing bare', () => {
    fc.assert(
      fc.property(fc.array(argument, { maxLength: 6 }), dirPart, (args, part) => {
        const dir = `C:\\${part}\\bin`;
        const env = { ...FUZZ_ENV, Path: `${dir.includes(';') ? `"${dir}"` : dir};${NODE_DIR}` };
        const plan = onWindows('npx', args, env, [`${dir}\\npx.cmd`, NPX]);
        expect(shimArgs(plan, env)).toEqual({ script: `${dir}\\npx.cmd`, args });
      }),
      RUN,
    );
  });

  it('spawn-command: a program gets its arguments untouched; a control character refuses a shim', () => {
    const control = fc.integer({ min: 0, max: 31 }).filter((c) => c !== 9).map((c) => String.fromCharCode(c));
    fc.assert(
      fc.property(fc.array(argument, { maxLength: 4 }), control, fc.nat(), (args, ch, at) => {
        const bad = [...args, 'x'];
        const i = at % bad.length;
        bad[i] = bad[i]! + ch;
        expect(onWindows('node', bad, BASE_ENV, [`${NODE_DIR}\\node.exe`]).args).toEqual(bad);
        const e = refusal(() => onWindows('npx', bad, BASE_ENV, [NPX]));
        expect(e.code).toBe('ARGUMENT_NOT_PASSABLE');
        expect(e.data.index).toBe(bad.findIndex((a) => /[\0-\x08\x0a-\x1f]/.test(a)));
      }),
      RUN,
    );
  });

  it('spawn-command: resolution takes the first PATH directory holding the name, with the first PATHEXT extension it holds', () => {
    const exts = ['.com', '.exe', '.bat', '.cmd', '.js'];
    const layout = fc.record({
      dirs: fc.integer({ min: 1, max: 4 }),
      pathext: fc.shuffledSubarray(exts),
      present: fc.array(fc.tuple(fc.nat(3), fc.constantFrom(...exts)), { maxLength: 8 }),
      pathKey: fc.constantFrom('PATH', 'Path', 'path', 'pAtH'),
      extKey: fc.constantFrom('PATHEXT', 'PathExt', 'pathext'),
    });
    fc.assert(
      fc.property(layout, ({ dirs, pathext, present, pathKey, extKey }) => {
        const dirNames = Array.from({ length: dirs }, (_, i) => `C:\\d${i}`);
        const held = present.filter(([d]) => d < dirs).map(([d, e]) => `C:\\d${d}\\tool${e}`);
        const env = { ...SYS, [pathKey]: dirNames.join(';'), [extKey]: pathext.map((e) => e.toUpperCase()).join(';') };
        const tried = pathext.filter((e) => e !== '.js');
        const order = tried.length > 0 ? tried : ['.com', '.exe', '.bat', '.cmd'];
        const expected = dirNames.flatMap((d) => order.map((e) => `${d}\\tool${e}`)).find((f) => held.includes(f));
        if (expected === undefined) {
          expect(refusal(() => onWindows('tool', [], env, held)).code).toBe('COMMAND_NOT_FOUND');
          return;
        }
        const plan = onWindows('tool', [], env, held);
        expect(plan.file).toMatch(FULL_PATH);
        expect(expected.endsWith('.exe') || expected.endsWith('.com') ? plan.file : shimArgs(plan, env).script).toBe(expected);
      }),
      RUN,
    );
  });

  it('spawn-command: a batch file that is not a shim gets only arguments a third parse cannot act on', () => {
    const script = 'C:\\work\\run.cmd';
    const gradlew = NOT_SHIM_GRADLEW;
    /** Characters an argument may hold for it: what cmd.exe takes as text, in any number of parses. */
    const calmChar = fc.constantFrom(...' \t\\:~,=;a5*?/@#$+-_.\'`[]{}', 'é', '😀');
    const calm = fc.array(fc.oneof({ weight: 4, arbitrary: calmChar }, { weight: 1, arbitrary: fc.constantFrom('\\\\', 'C:\\My Files\\', ' ') }), { maxLength: 12 }).map((cs) => cs.join(''));
    fc.assert(
      fc.property(fc.array(fc.oneof({ weight: 3, arbitrary: calm }, { weight: 1, arbitrary: argument }), { maxLength: 5 }), (args) => {
        const first = args.findIndex((a) => /["%!^&|<>()]/.test(a));
        if (first !== -1) {
          const e = refusal(() => onWindows('.\\run.cmd', args, SYS, [script], { [script]: gradlew }));
          expect(e.code).toBe('ARGUMENT_NOT_PASSABLE');
          expect(e.data.index).toBe(first);
          return;
        }
        const { args: got, text } = throughCmd(onWindows('.\\run.cmd', args, SYS, [script], { [script]: gradlew }), SYS);
        expect(got).toEqual(args);
        // `set A=%*` then `%A%`, or `call`: a third parse, in which only the quotes around each argument are bare.
        const third = caretPass(text);
        expect(third.bare.map((i) => text[i]).filter((c) => c !== '"' && c !== '\t')).toEqual([]);
        expect(text).not.toMatch(/[%!^]/);
        // `%~1` strips the quotes: what is left is text to cmd.exe.
        for (const a of got) expect(a).not.toMatch(/[&|<>()^%!"]/);
      }),
      RUN,
    );
  });
});

// ------------------------------------------------------------------ on this platform

describe('spawn-command: the proxy', () => {
  it('spawn-command: the proxy starts a real server through the plan and answers through it', async () => {
    const upstream = fileURLToPath(new URL('../fixtures/upstream-server.mjs', import.meta.url));
    const stdin = new PassThrough();
    const stdout = new PassThrough();
    const stderr = new PassThrough();
    let out = '';
    stdout.on('data', (c: Buffer) => (out += c.toString('utf8')));
    const exit = runProxy({ command: process.execPath, args: [upstream], limits: {}, stdin, stdout, stderr, handleSignals: false });
    stdin.write('{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"small","arguments":{}}}\n');
    for (let i = 0; i < 200 && !out.includes('\n'); i++) await new Promise((r) => setTimeout(r, 25));
    const answer = JSON.parse(out.split('\n')[0]!) as { id: number; result: { content: unknown[] } };
    expect(answer.id).toBe(1);
    expect(answer.result.content.length).toBeGreaterThan(0);
    stdin.end();
    expect(await exit).toBe(0);
  });
});

describe('spawn-command: reading a batch file', () => {
  it('spawn-command: readSmallFile gives the bytes as Latin-1, or nothing for a file over the cap, a directory or no file', () => {
    const dir = mkdtempSync(join(tmpdir(), 'spawn-command-'));
    try {
      const file = join(dir, 'npx.cmd');
      writeFileSync(file, Buffer.from([0x40, 0x65, 0x63, 0x68, 0x6f, 0x20, 0xe9, 0x82, 0x0d, 0x0a]));
      expect(readSmallFile(file, 64)).toBe('@echo \u00e9\u0082\r\n');
      expect(readSmallFile(file, 10)).toBe('@echo \u00e9\u0082\r\n');
      expect(readSmallFile(file, 9)).toBeUndefined();
      const big = join(dir, 'big.cmd');
      writeFileSync(big, 'x'.repeat(SHIM_READ_LIMIT + 1));
      expect(readSmallFile(big, SHIM_READ_LIMIT)).toBeUndefined();
      expect(readSmallFile(big, SHIM_READ_LIMIT + 1)).toHaveLength(SHIM_READ_LIMIT + 1);
      expect(readSmallFile(dir, SHIM_READ_LIMIT)).toBeUndefined();
      expect(readSmallFile(join(dir, 'none.cmd'), SHIM_READ_LIMIT)).toBeUndefined();
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
