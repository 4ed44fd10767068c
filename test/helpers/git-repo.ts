/**
 * Helpers for the git tests: throw-away repositories under the OS temp directory, git run with an
 * environment that ignores this machine's system and global config, fast history with
 * `git fast-import`, and a hostile repository config whose every program drops a marker file.
 */
import { execFileSync } from 'node:child_process';
import { existsSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Workspace } from '../../src/fs/confine.js';

/** git's environment for building fixtures: no system/global config, fixed identities and dates. */
export function gitEnv(): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = {};
  for (const [k, v] of Object.entries(process.env)) if (!k.startsWith('GIT_') && !k.startsWith('MCP_BUDGET_')) env[k] = v;
  return {
    ...env,
    GIT_CONFIG_NOSYSTEM: '1',
    GIT_CONFIG_GLOBAL: '/dev/null',
    GIT_AUTHOR_NAME: 'Tester',
    GIT_AUTHOR_EMAIL: 'tester@example.com',
    GIT_COMMITTER_NAME: 'Tester',
    GIT_COMMITTER_EMAIL: 'tester@example.com',
    GIT_AUTHOR_DATE: '1700000000 +0000',
    GIT_COMMITTER_DATE: '1700000000 +0000',
    GIT_TERMINAL_PROMPT: '0',
  };
}

/** Run git in `cwd` (stdout as UTF-8, trailing newline kept). Throws on a non-zero exit. */
export function git(cwd: string, args: string[], input?: string | Buffer): string {
  return execFileSync('git', args, { cwd, env: gitEnv(), input: input ?? '', encoding: 'utf8', maxBuffer: 256 * 1024 * 1024, stdio: ['pipe', 'pipe', 'pipe'] });
}

/** Like `git` but returns the exit status instead of throwing. */
export function gitStatusCode(cwd: string, args: string[]): number {
  try {
    execFileSync('git', args, { cwd, env: gitEnv(), stdio: 'ignore' });
    return 0;
  } catch (e) {
    return (e as { status?: number }).status ?? -1;
  }
}

export interface TempRepo {
  dir: string;
  remove: () => void;
}

/** `git init -b main` in a fresh temp directory. */
export function tempRepo(prefix: string): TempRepo {
  const dir = mkdtempSync(join(tmpdir(), `mcp-budget-git-${prefix}-`));
  git(dir, ['init', '-q', '-b', 'main']);
  return { dir, remove: () => rmSync(dir, { recursive: true, force: true }) };
}

/**
 * A fast-import stream of `count` commits on `refs/heads/main`, oldest first. Commit `i` (1-based)
 * writes `files(i)` (path → content); its message is `c<i>`.
 */
export function fastImportStream(count: number, files: (i: number) => Record<string, string>): string {
  const parts: string[] = [];
  for (let i = 1; i <= count; i++) {
    const msg = `c${i}`;
    parts.push(`commit refs/heads/main\nmark :${i}\ncommitter Tester <tester@example.com> ${1700000000 + i} +0000\ndata ${Buffer.byteLength(msg)}\n${msg}\n`);
    for (const [path, content] of Object.entries(files(i))) {
      parts.push(`M 100644 inline ${path}\ndata ${Buffer.byteLength(content)}\n${content}\n`);
    }
    parts.push('\n');
  }
  return parts.join('');
}

/** Import `count` commits into the repository and check out `main`. */
export function importHistory(dir: string, count: number, files: (i: number) => Record<string, string>): void {
  git(dir, ['fast-import', '--quiet'], fastImportStream(count, files));
  git(dir, ['checkout', '-q', '-f', 'main']);
}

/** Create branches (or tags) at HEAD in one `update-ref --stdin` call. */
export function createRefs(dir: string, refs: string[]): void {
  const head = git(dir, ['rev-parse', 'HEAD']).trim();
  git(dir, ['update-ref', '--stdin'], refs.map((r) => `create ${r} ${head}\n`).join(''));
}

/**
 * Make the repository config name programs that each create `marker` (an absolute path outside the
 * repository) and that the git tools neutralize by override: core.fsmonitor, a textconv driver,
 * the pager, a hooks path. The tools keep working on such a repository.
 */
export function makeHostile(dir: string, marker: string): void {
  const cmd = `touch '${marker}'`;
  git(dir, ['config', 'core.fsmonitor', cmd]);
  git(dir, ['config', 'diff.x.textconv', `${cmd}; cat`]);
  git(dir, ['config', 'core.pager', cmd]);
  git(dir, ['config', 'pager.log', cmd]);
  writeFileSync(join(dir, '.gitattributes'), '* diff=x\n');
}

/**
 * Make the repository config name a clean/smudge filter applied to every file, each creating
 * `marker`: a driver no override can switch off safely, so the git tools refuse the repository.
 */
export function makeFilterHostile(dir: string, marker: string, driver = 'evil'): void {
  const cmd = `touch '${marker}'`;
  git(dir, ['config', `filter.${driver}.clean`, `${cmd}; cat`]);
  git(dir, ['config', `filter.${driver}.smudge`, `${cmd}; cat`]);
  writeFileSync(join(dir, '.gitattributes'), `* filter=${driver} diff=x\n`);
}

export { existsSync };

/**
 * Workspaces a test file opens, closed together after it (each holds the root's descriptor; left
 * to the garbage collector they warn).
 */
export function workspaceTracker(): { open: (dir: string) => Promise<Workspace>; closeAll: () => Promise<void> } {
  const opened: Workspace[] = [];
  return {
    open: async (dir) => {
      const ws = await Workspace.open(dir);
      opened.push(ws);
      return ws;
    },
    closeAll: async () => {
      for (const ws of opened.splice(0)) await ws.close();
    },
  };
}
