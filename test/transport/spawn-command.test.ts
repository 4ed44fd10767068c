/**
 * spawn-command: the Windows plan (resolution, cmd.exe and its environment, the cmd.exe line) on an
 * injected file system, checked against small reference parsers of cmd.exe and of
 * `CommandLineToArgvW`; and on this platform, the proxy still starting a real server through the
 * plan.
 *
 * The cmd.exe model (after the published reverse-engineered description of its parser):
 * `/s /c` strips the first and last quote; percent expansion runs first and expands `%NAME%` or
 * `%NAME:…%` only for a defined NAME; then one caret pass: outside quotes `^x` is `x` taken
 * literally, an unescaped `"` opens a quoted run in which everything is literal up to the next `"`.
 * A batch shim forwards `%*`, and cmd.exe runs one more caret pass over that text (percent
 * expansion does not rescan it). The program then reads its arguments by the MSVCRT rules.
 */
import { PassThrough } from 'node:stream';
import { fileURLToPath } from 'node:url';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { runProxy } from '../../src/transport/proxy.js';
import { planSpawn, SpawnCommandError, type SpawnCommandOptions, type SpawnPlan } from '../../src/transport/spawn-command.js';

const RUN = { numRuns: Number(process.env.FC_RUNS ?? 500), interruptAfterTimeLimit: Number(process.env.FC_TIME_MS ?? 4000) };

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
 * (nothing bare), then `CommandLineToArgvW`.
 */
function throughCmd(plan: SpawnPlan, env: NodeJS.ProcessEnv): { script: string; args: string[] } {
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
  return { script: line.slice(1, end), args: argvOf(shim.text) };
}

// ------------------------------------------------------------------ helpers

/** A Windows file system holding these files (names compared without case). */
function fsOf(held: string[]): Pick<SpawnCommandOptions, 'isFile'> {
  const byName = new Set(held.map((p) => p.toLowerCase()));
  return { isFile: (path) => byName.has(path.toLowerCase()) };
}

function onWindows(command: string, args: string[], env: NodeJS.ProcessEnv, held: string[]): SpawnPlan {
  return planSpawn({ command, args, env, platform: 'win32', cwd: CWD, ...fsOf(held) });
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
    const plan = planSpawn({ command: 'npx', args: ['-y', 'a&b|c'], env, platform: 'linux', cwd: '/', isFile: () => false });
    expect(plan).toEqual({ file: 'npx', args: ['-y', 'a&b|c'], env, options: {} });
    expect(plan.env).toBe(env);
  });

  it('spawn-command: a shim on PATH runs through ComSpec with each argument escaped for two passes', () => {
    const plan = onWindows('npx', ['-y', '@modelcontextprotocol/server-filesystem', 'C:\\My Files'], BASE_ENV, [NPX, `${NODE_DIR}\\npx`]);
    expect(plan.file).toBe('C:\\Windows\\system32\\cmd.exe');
    expect(plan.args[4]).toBe(
      '""C:\\Program Files\\nodejs\\npx.cmd" ^^^"-y^^^" ^^^"@modelcontextprotocol/server-filesystem^^^" ^^^"C^^^:\\My^^^ Files^^^""',
    );
    expect(throughCmd(plan, BASE_ENV)).toEqual({ script: NPX, args: ['-y', '@modelcontextprotocol/server-filesystem', 'C:\\My Files'] });
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
    expect(throughCmd(plan, env)).toEqual({ script: `${dir}\\serve.bat`, args: ['x y'] });
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
    expect(throughCmd(onWindows('npx', ['a\tb'], BASE_ENV, [NPX]), BASE_ENV).args).toEqual(['a\tb']);
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
    expect(throughCmd(onWindows('npx', ['no percent'], env, [NPX]), env).args).toEqual(['no percent']);
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
    expect(throughCmd(plan, SDK_ENV)).toEqual({ script: NPX, args: ['-y', '@modelcontextprotocol/server-filesystem', 'C:\\work'] });
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
        expect(throughCmd(plan, env)).toEqual({ script: `${dir}\\npx.cmd`, args });
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
        expect(expected.endsWith('.exe') || expected.endsWith('.com') ? plan.file : throughCmd(plan, env).script).toBe(expected);
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
