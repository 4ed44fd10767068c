/**
 * One git process run to completion: output capped (git is ended past the cap), stderr kept to its
 * first 4 KiB, a hard timeout, stdin written and closed. The runner and the private config's reads
 * both start git through this; neither ever passes a shell.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { WorkspaceError } from '../fs/errors.js';

/** Every git call is ended after this long. */
export const GIT_TIMEOUT_MS = 10_000;

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

export function spawnGit(git: string, args: string[], env: NodeJS.ProcessEnv, cwd: string, options: GitCallOptions): Promise<GitResult> {
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

