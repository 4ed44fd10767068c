/**
 * Running git safely and boundedly. git is spawned directly by its absolute path (no shell, no
 * wrapper that buffers all of stdout); records are parsed as they stream (`-z` formats) and the
 * process is ended as soon as the caller has what it needs. Every call has a timeout.
 *
 * Confined: before every spawn the root's identity is checked (`checkRoot`), and every call names
 * its repository (`GIT_DIR`, `GIT_WORK_TREE`; see git-env.ts) after repo-shape.ts has checked that
 * it is the root's own. git reads no configuration of the workspace: every call names a private
 * common directory holding a vetted copy of the repository's config (private-config.ts), so what
 * the policy judged is what git reads, whatever is written in `.git` meanwhile. Fail closed: a config
 * that cannot be read completely, or a key the policy cannot leave out, refuses the call.
 */
import { spawn } from 'node:child_process';
import { WorkspaceError } from '../fs/errors.js';
import { hardenedEnv, resolveGit, type RepoPaths } from './git-env.js';
import { privateCommonDir, privateExecDir, type ConfigSource } from './private-config.js';
import { checkRepository } from './repo-shape.js';
import { GIT_TIMEOUT_MS, spawnGit, type GitCallOptions, type GitResult } from './spawn-git.js';

export { GIT_TIMEOUT_MS, type GitCallOptions, type GitResult } from './spawn-git.js';
/** The config read is refused past this many bytes (generous: real configs are a few KiB). */
export const MAX_CONFIG_BYTES = 4 * 1024 * 1024;
/** The config read is refused after this long (an include naming a FIFO blocks). */
export const CONFIG_TIMEOUT_MS = 5_000;

/**
 * What the runner needs of the workspace: its pinned root, the check that it still is, and the
 * gate's regular-file open (the config is read through it, never by path).
 */
export interface RootGuard extends ConfigSource {
  /** Throws `ROOT_CHANGED` when the root path no longer names the pinned directory. */
  checkRoot(): Promise<void>;
}

export interface GitRunnerOptions {
  /** @default CONFIG_TIMEOUT_MS */
  configTimeoutMs?: number;
  /** @default MAX_CONFIG_BYTES */
  maxConfigBytes?: number;
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
    const git = resolveGit(this.ws.root);
    const commonDir = await privateCommonDir(this.ws, {
      git,
      maxConfigBytes: this.options.maxConfigBytes ?? MAX_CONFIG_BYTES,
      configTimeoutMs: this.options.configTimeoutMs ?? CONFIG_TIMEOUT_MS,
    });
    return { git, repo, env: hardenedEnv(repo, privateExecDir(), commonDir) };
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
