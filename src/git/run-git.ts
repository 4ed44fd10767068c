/**
 * Running git safely and boundedly. git is spawned directly by its absolute path (no shell, no
 * wrapper that buffers all of stdout); records are parsed as they stream (`-z` formats) and the
 * process is ended as soon as the caller has what it needs. Every call has a timeout.
 *
 * Confined: before every spawn the root's identity is checked (`checkRoot`), and every call names
 * its repository (`GIT_DIR`, `GIT_WORK_TREE`; see git-env.ts) after repo-shape.ts has checked that
 * it is the root's own. Fail closed: the repository config is read whole (with includes) and the
 * call is refused if that read fails, is cut, times out or prints anything odd; program-naming
 * keys are overridden at command-line scope, and keys that cannot be are refused
 * (config-policy.ts).
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { WorkspaceError } from '../fs/errors.js';
import { configOverrides, parseConfigList } from './config-policy.js';
import { hardenedEnv, resolveGit, type ConfigOverride, type RepoPaths } from './git-env.js';
import { checkRepository } from './repo-shape.js';

/** Every git call is ended after this long. */
export const GIT_TIMEOUT_MS = 10_000;
/** The config read is refused past this many bytes (generous: real configs are a few KiB). */
export const MAX_CONFIG_BYTES = 4 * 1024 * 1024;
/** The config read is refused after this long (an include naming a FIFO blocks). */
export const CONFIG_TIMEOUT_MS = 5_000;

/** What the runner needs of the workspace: its pinned root and the check that it still is. */
export interface RootGuard {
  /** The root's real path, pinned at start. */
  readonly root: string;
  /** Throws `ROOT_CHANGED` when the root path no longer names the pinned directory. */
  checkRoot(): Promise<void>;
}

export interface GitRunnerOptions {
  /** @default CONFIG_TIMEOUT_MS */
  configTimeoutMs?: number;
  /** @default MAX_CONFIG_BYTES */
  maxConfigBytes?: number;
}

/** Output of a finished call (capped). */
export interface GitResult {
  code: number | null;
  stdout: Buffer;
  stderr: string;
  /** Output passed `maxBytes` and git was ended. */
  truncated: boolean;
  timedOut: boolean;
}

export interface GitCallOptions {
  timeoutMs?: number;
  /** Written to git's stdin, then closed. */
  input?: string | Buffer;
  /** Stop reading (and end git) past this many stdout bytes. @default 4 MiB */
  maxBytes?: number;
}

interface Prepared {
  git: string;
  env: NodeJS.ProcessEnv;
  repo: RepoPaths;
}

/**
 * Runs git on the workspace root's own repository. An unscoped runner checks the repository and
 * reads its config before every spawn; `scope()` gives a runner for one tool call that does so
 * once (config can change between calls, so a scope must not outlive its call).
 */
export class GitRunner {
  private prepared: Promise<Prepared> | undefined;

  constructor(
    readonly ws: RootGuard,
    private readonly options: GitRunnerOptions = {},
    private readonly scoped = false,
  ) {}

  /** A runner for one tool call: repository checks and config read once, root checked per spawn. */
  scope(): GitRunner {
    return new GitRunner(this.ws, this.options, true);
  }

  /** The work tree (the root's real path). */
  get workTree(): string {
    return this.ws.root;
  }

  /** The checks a mutation adds (hard links where git writes in place); call before writing. */
  async requireWritable(): Promise<void> {
    await this.ws.checkRoot();
    await checkRepository(this.ws.root, true);
  }

  private prepare(): Promise<Prepared> {
    if (this.scoped && this.prepared !== undefined) return this.prepared;
    const p = this.load();
    if (this.scoped) this.prepared = p;
    return p;
  }

  private async load(): Promise<Prepared> {
    await this.ws.checkRoot();
    const repo = await checkRepository(this.ws.root, false);
    const { path: git, searchPath } = resolveGit(this.ws.root);
    const overrides = await this.readConfig(git, repo, searchPath);
    return { git, repo, env: hardenedEnv(repo, searchPath, overrides) };
  }

  /** The repository's effective config, read whole, turned into overrides (or a refusal). */
  private async readConfig(git: string, repo: RepoPaths, searchPath: string): Promise<ConfigOverride[]> {
    const max = this.options.maxConfigBytes ?? MAX_CONFIG_BYTES;
    await this.ws.checkRoot();
    const env = hardenedEnv(repo, searchPath, []);
    const r = await spawnGit(git, ['config', '--list', '--includes', '--show-scope', '-z'], env, repo.workTree, {
      maxBytes: max + 1,
      timeoutMs: this.options.configTimeoutMs ?? CONFIG_TIMEOUT_MS,
    });
    const why = r.timedOut
      ? `did not finish within ${this.options.configTimeoutMs ?? CONFIG_TIMEOUT_MS} ms (an include may name a FIFO or device)`
      : r.truncated || r.stdout.length > max
        ? `is over ${max} bytes (with its includes)`
        : r.code !== 0
          ? `could not be read (git config exited with ${r.code ?? 'a signal'}; a bad line or a missing include target)`
          : r.stderr !== ''
            ? 'made git print warnings'
            : undefined;
    if (why !== undefined) {
      // Never the stderr text itself: it can name host paths of included files.
      throw new WorkspaceError('UNSAFE_REPOSITORY', `The repository config ${why}; the git tools refuse a config they cannot read completely. Nothing was run.`);
    }
    return configOverrides(parseConfigList(r.stdout.toString('utf8')));
  }

  /**
   * The checks every call makes (root identity, repository shape, config policy), without running
   * a command: for reads served from the repository's files, which must be refused exactly when a
   * git call would be.
   */
  async check(): Promise<void> {
    await this.prepare();
    await this.ws.checkRoot();
  }

  /** Run git to completion (output capped); throws a workspace error on a non-zero exit. */
  async run(args: string[], options: GitCallOptions = {}): Promise<GitResult> {
    const r = await this.tryRun(args, options);
    if (r.code !== 0) throw this.gitError(args, r);
    return r;
  }

  /** Like `run` but a non-zero exit is returned, not thrown. */
  async tryRun(args: string[], options: GitCallOptions = {}): Promise<GitResult> {
    const p = await this.prepare();
    await this.ws.checkRoot();
    return spawnGit(p.git, args, p.env, p.repo.workTree, options);
  }

  /**
   * Stream NUL-separated records as text; the generator's consumer may stop early (`break`), which
   * ends git at once. Records are never all held. `input` is written to git's stdin, then closed.
   */
  async *records(args: string[], timeoutMs = GIT_TIMEOUT_MS, input?: string | Buffer): AsyncGenerator<string> {
    // A NUL never falls inside a UTF-8 sequence, so each record decodes on its own.
    for await (const rec of this.rawRecords(args, timeoutMs, input)) yield rec.toString('utf8');
  }

  /** {@link records} as raw bytes: for names that must be opened or compared exactly (they may not be UTF-8). */
  async *rawRecords(args: string[], timeoutMs = GIT_TIMEOUT_MS, input?: string | Buffer): AsyncGenerator<Buffer> {
    const p = await this.prepare();
    await this.ws.checkRoot();
    const child = spawn(p.git, args, { cwd: p.repo.workTree, env: p.env, stdio: [input === undefined ? 'ignore' : 'pipe', 'pipe', 'pipe'] });
    if (input !== undefined) {
      child.stdin!.on('error', () => undefined); // git may stop reading once it has its page
      child.stdin!.end(input);
    }
    let stderr = '';
    child.stderr!.on('data', (d: Buffer) => {
      if (stderr.length < 4096) stderr += d.toString();
    });
    const timer = setTimeout(() => child.kill('SIGKILL'), timeoutMs);
    const exited = new Promise<number | null>((resolve) => child.on('close', (code) => resolve(code)));
    child.on('error', () => undefined);
    let carried: Buffer[] = [];
    let finished = false;
    try {
      for await (const chunk of child.stdout! as AsyncIterable<Buffer>) {
        let start = 0;
        for (let at = chunk.indexOf(0); at !== -1; at = chunk.indexOf(0, start)) {
          const piece = chunk.subarray(start, at);
          yield carried.length === 0 ? piece : Buffer.concat([...carried, piece]);
          carried = [];
          start = at + 1;
        }
        if (start < chunk.length) carried.push(chunk.subarray(start));
      }
      if (carried.length > 0) yield Buffer.concat(carried);
      finished = true;
      const code = await exited;
      if (code !== 0) throw this.gitError(args, { code, stdout: Buffer.alloc(0), stderr, truncated: false, timedOut: false });
    } finally {
      clearTimeout(timer);
      if (!finished) child.kill('SIGKILL'); // the consumer has its page: stop git now
    }
  }

  private gitError(args: string[], r: GitResult): WorkspaceError {
    const first = r.stderr.split('\n').find((l) => l.trim() !== '') ?? `exit code ${r.code}`;
    // No host paths in messages: the root is shown as `.`.
    const text = first.replace(/^(fatal|error): /, '').split(this.ws.root).join('.');
    return new WorkspaceError('IO_ERROR', `git ${args.find((a) => !a.startsWith('-') && !a.includes('=')) ?? args[0]} failed: ${text}`);
  }
}

function spawnGit(git: string, args: string[], env: NodeJS.ProcessEnv, cwd: string, options: GitCallOptions): Promise<GitResult> {
  return new Promise((resolve, reject) => {
    const child: ChildProcess = spawn(git, args, { cwd, env, stdio: ['pipe', 'pipe', 'pipe'] });
    const max = options.maxBytes ?? 4 * 1024 * 1024;
    const out: Buffer[] = [];
    let size = 0;
    let stderr = '';
    let truncated = false;
    let timedOut = false;
    const timer = setTimeout(() => {
      timedOut = true;
      child.kill('SIGKILL');
    }, options.timeoutMs ?? GIT_TIMEOUT_MS);
    child.stdout!.on('data', (d: Buffer) => {
      if (size >= max) return;
      out.push(d);
      size += d.length;
      if (size >= max) {
        truncated = true;
        child.kill('SIGKILL');
      }
    });
    child.stderr!.on('data', (d: Buffer) => {
      if (stderr.length < 4096) stderr += d.toString();
    });
    child.on('error', (e) => {
      clearTimeout(timer);
      reject(new WorkspaceError('IO_ERROR', `git could not be started: ${e.message}`));
    });
    child.on('close', (code) => {
      clearTimeout(timer);
      resolve({ code, stdout: Buffer.concat(out), stderr, truncated, timedOut });
    });
    child.stdin!.on('error', () => undefined);
    child.stdin!.end(options.input ?? '');
  });
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
