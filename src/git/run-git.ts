/**
 * Running git safely and boundedly. git is spawned directly (no shell, no wrapper that buffers all
 * of stdout); records are parsed as they stream (`-z` formats) and the process is ended as soon as
 * the caller has what it needs. Every call has a timeout.
 *
 * Hardened: no system or global config, no pager, no prompts, no optional locks, no lazy fetch, no
 * hooks, no auto gc or maintenance; and a repository's own config cannot make a read run a program:
 * every key that names a program (fsmonitor, filter drivers, textconv, diff and merge drivers,
 * ssh and askpass commands, the pager, the editor) is overridden at command-line scope, including
 * keys the repository defines itself (read first with `git config --list`, which runs nothing).
 */
import { spawn } from 'node:child_process';
import { StringDecoder } from 'node:string_decoder';
import { WorkspaceError } from '../fs/confine.js';

/** Every git call is ended after this long. */
export const GIT_TIMEOUT_MS = 10_000;

const BASE_ENV_KEYS = ['PATH', 'SYSTEMROOT', 'TMPDIR'];

/**
 * The hardened environment, with `overrides` as command-line-scope config. Perf and safety: the
 * GIT_CONFIG_COUNT/KEY/VALUE variables are not split at `=` as `-c key=value` is, so a key that
 * itself contains `=` (a filter named `x=y`) is still overridden.
 */
function hardenedEnv(overrides: readonly (readonly [string, string])[] = []): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = {};
  for (const k of BASE_ENV_KEYS) if (process.env[k] !== undefined) env[k] = process.env[k];
  env.GIT_CONFIG_COUNT = String(overrides.length);
  overrides.forEach(([key, value], i) => {
    env[`GIT_CONFIG_KEY_${i}`] = key;
    env[`GIT_CONFIG_VALUE_${i}`] = value;
  });
  return {
    ...env,
    HOME: '/nonexistent',
    XDG_CONFIG_HOME: '/nonexistent',
    LC_ALL: 'C',
    GIT_CONFIG_NOSYSTEM: '1',
    GIT_CONFIG_GLOBAL: '/dev/null',
    GIT_TERMINAL_PROMPT: '0',
    GIT_ASKPASS: 'false',
    SSH_ASKPASS: 'false',
    GIT_PAGER: 'cat',
    PAGER: 'cat',
    GIT_EDITOR: 'false',
    GIT_OPTIONAL_LOCKS: '0',
    GIT_NO_LAZY_FETCH: '1',
    GIT_ATTR_NOSYSTEM: '1',
    GIT_NO_REPLACE_OBJECTS: '1',
  };
}

/** Config that must never run anything, whatever the repository says. */
const FIXED_OVERRIDES: readonly (readonly [string, string])[] = [
  ['core.fsmonitor', 'false'],
  ['core.hooksPath', '/dev/null'],
  ['core.pager', 'cat'],
  ['core.editor', 'false'],
  ['core.askPass', 'false'],
  ['core.sshCommand', 'false'],
  ['core.untrackedCache', 'false'],
  ['diff.external', ''],
  ['gc.auto', '0'],
  ['maintenance.auto', 'false'],
  ['protocol.allow', 'never'],
  ['credential.helper', ''],
  ['color.ui', 'false'],
  ['log.showSignature', 'false'],
  ['gpg.program', 'false'],
  ['commit.gpgSign', 'false'],
  ['tag.gpgSign', 'false'],
];

/** Repository keys that name a program: overridden with an empty value. */
const PROGRAM_KEY = /^(filter\..+\.(clean|smudge|process)|diff\..+\.(textconv|command)|merge\..+\.driver|.+\.(sshcommand|askpass))$/i;

/** Output of a finished call (capped). */
export interface GitResult {
  code: number | null;
  stdout: Buffer;
  stderr: string;
}

export interface GitCallOptions {
  cwd: string;
  timeoutMs?: number;
  /** Written to git's stdin, then closed. */
  input?: string;
  /** Stop reading (and end git) past this many stdout bytes. @default 4 MiB */
  maxBytes?: number;
}

export class GitRunner {
  constructor(readonly cwd: string) {}

  /**
   * Overrides for this repository: the fixed ones plus every program-naming key its config
   * defines, emptied. Read on every call (one `git config --list`, which runs nothing): config
   * can change between calls.
   */
  private async configArgs(): Promise<(readonly [string, string])[]> {
    const r = await spawnGit(['config', '--list', '--name-only', '-z'], { cwd: this.cwd }, FIXED_OVERRIDES);
    const keys = r.code === 0 ? r.stdout.toString('utf8').split('\0').filter((k) => PROGRAM_KEY.test(k)) : [];
    return [...FIXED_OVERRIDES, ...[...new Set(keys)].map((k) => [k, ''] as const)];
  }

  /** Run git to completion (output capped); throws a workspace error on a non-zero exit. */
  async run(args: string[], options: Omit<GitCallOptions, 'cwd'> = {}): Promise<GitResult> {
    const r = await spawnGit(args, { ...options, cwd: this.cwd }, await this.configArgs());
    if (r.code !== 0) throw gitError(args, r);
    return r;
  }

  /** Like `run` but a non-zero exit is returned, not thrown. */
  async tryRun(args: string[], options: Omit<GitCallOptions, 'cwd'> = {}): Promise<GitResult> {
    return spawnGit(args, { ...options, cwd: this.cwd }, await this.configArgs());
  }

  /**
   * Stream NUL-separated records; the generator's consumer may stop early (`break`), which ends
   * git at once. Records are never all held.
   */
  async *records(args: string[], timeoutMs = GIT_TIMEOUT_MS): AsyncGenerator<string> {
    const child = spawn('git', args, {
      cwd: this.cwd,
      env: hardenedEnv(await this.configArgs()),
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let stderr = '';
    child.stderr.on('data', (d: Buffer) => {
      if (stderr.length < 4096) stderr += d.toString();
    });
    const timer = setTimeout(() => child.kill('SIGKILL'), timeoutMs);
    const exited = new Promise<number | null>((resolve) => child.on('close', (code) => resolve(code)));
    child.on('error', () => undefined);
    let pending = '';
    let finished = false;
    // A character split across two reads must not be decoded in halves.
    const decoder = new StringDecoder('utf8');
    try {
      for await (const chunk of child.stdout) {
        pending += decoder.write(chunk as Buffer);
        let at: number;
        while ((at = pending.indexOf('\0')) !== -1) {
          const rec = pending.slice(0, at);
          pending = pending.slice(at + 1);
          yield rec;
        }
      }
      pending += decoder.end();
      if (pending.length > 0) yield pending;
      finished = true;
      const code = await exited;
      if (code !== 0) throw gitError(args, { code, stdout: Buffer.alloc(0), stderr });
    } finally {
      clearTimeout(timer);
      if (!finished) child.kill('SIGKILL'); // the consumer has its page: stop git now
    }
  }
}

function spawnGit(args: string[], options: GitCallOptions, config: readonly (readonly [string, string])[]): Promise<GitResult> {
  return new Promise((resolve, reject) => {
    const child = spawn('git', args, { cwd: options.cwd, env: hardenedEnv(config), stdio: ['pipe', 'pipe', 'pipe'] });
    const max = options.maxBytes ?? 4 * 1024 * 1024;
    const out: Buffer[] = [];
    let size = 0;
    let stderr = '';
    const timer = setTimeout(() => child.kill('SIGKILL'), options.timeoutMs ?? GIT_TIMEOUT_MS);
    child.stdout.on('data', (d: Buffer) => {
      if (size >= max) return;
      out.push(d);
      size += d.length;
      if (size >= max) child.kill('SIGKILL');
    });
    child.stderr.on('data', (d: Buffer) => {
      if (stderr.length < 4096) stderr += d.toString();
    });
    child.on('error', (e) => {
      clearTimeout(timer);
      reject(new WorkspaceError('IO_ERROR', `git could not be started: ${e.message}`));
    });
    child.on('close', (code) => {
      clearTimeout(timer);
      resolve({ code, stdout: Buffer.concat(out), stderr });
    });
    child.stdin.on('error', () => undefined);
    child.stdin.end(options.input ?? '');
  });
}

function gitError(args: string[], r: GitResult): WorkspaceError {
  const first = r.stderr.split('\n').find((l) => l.trim() !== '') ?? `exit code ${r.code}`;
  return new WorkspaceError('IO_ERROR', `git ${args[0]} failed: ${first.replace(/^(fatal|error): /, '')}`);
}

/** Refuse a user value that git could read as an option. */
export function checkNotOption(name: string, value: string): string {
  if (value.startsWith('-')) {
    throw new WorkspaceError('INVALID_PARAMS', `Invalid params: \`${name}\` may not start with "-", got ${JSON.stringify(value.slice(0, 80))}`);
  }
  if (value.includes('\0') || value.length > 1024) {
    throw new WorkspaceError('INVALID_PARAMS', `Invalid params: \`${name}\` must be at most 1024 characters without NUL bytes`);
  }
  return value;
}
