/**
 * Helpers for the CLI tests: locate the repository, build dist/ when it is missing or older than
 * src/ (once, even when several test files ask at the same time), and run `node dist/cli.js`.
 */
import { spawn, spawnSync, type SpawnSyncReturns } from 'node:child_process';
import { createHash } from 'node:crypto';
import { existsSync, mkdirSync, readdirSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

export const repoRoot = resolve(dirname(fileURLToPath(import.meta.url)), '..', '..');
export const cliPath = join(repoRoot, 'dist', 'cli.js');

function newestMtime(dir: string): number {
  let newest = 0;
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    const p = join(dir, entry.name);
    if (entry.isDirectory()) newest = Math.max(newest, newestMtime(p));
    else if (entry.name.endsWith('.ts')) newest = Math.max(newest, statSync(p).mtimeMs);
  }
  return newest;
}

function isStale(): boolean {
  if (!existsSync(cliPath)) return true;
  return newestMtime(join(repoRoot, 'src')) > statSync(cliPath).mtimeMs;
}

function sleep(ms: number): void {
  Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, ms);
}

/**
 * Build with `npx tsc -p tsconfig.json` when dist/cli.js is missing or older than any src file.
 * A lock directory in the OS temp dir keeps parallel test files from building at the same time.
 */
export function ensureBuilt(): void {
  if (!isStale()) return;
  const lock = join(tmpdir(), `mcp-budget-build-${createHash('sha1').update(repoRoot).digest('hex').slice(0, 12)}.lock`);
  const deadline = Date.now() + 170_000;
  for (;;) {
    try {
      mkdirSync(lock);
      break;
    } catch {
      // Someone else is building; a lock older than 3 minutes is left over from a killed run.
      try {
        if (Date.now() - statSync(lock).mtimeMs > 180_000) rmSync(lock, { recursive: true, force: true });
      } catch {
        // gone already
      }
      if (Date.now() > deadline) throw new Error(`timed out waiting for the build lock ${lock}`);
      sleep(200);
    }
  }
  try {
    if (!isStale()) return;
    const r = spawnSync('npx', ['tsc', '-p', 'tsconfig.json'], { cwd: repoRoot, encoding: 'utf8', timeout: 170_000 });
    if (r.status !== 0) throw new Error(`build failed (${String(r.status)}):\n${r.stdout}\n${r.stderr}`);
  } finally {
    rmSync(lock, { recursive: true, force: true });
  }
}

/** The environment without any MCP_BUDGET_* variable, plus `extra`. */
export function cleanEnv(extra: Record<string, string> = {}): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = {};
  for (const [k, v] of Object.entries(process.env)) if (!k.startsWith('MCP_BUDGET_') && k !== 'MAX_MCP_OUTPUT_TOKENS') env[k] = v;
  return { ...env, ...extra };
}

export interface CliRun {
  code: number | null;
  stdout: string;
  stderr: string;
}

/** Run `node dist/cli.js ...args` synchronously with `input` on stdin. */
export function runCli(args: readonly string[], options: { input?: string | Buffer; env?: Record<string, string>; cwd?: string } = {}): CliRun {
  const r: SpawnSyncReturns<string> = spawnSync(process.execPath, [cliPath, ...args], {
    input: options.input ?? '',
    env: cleanEnv(options.env),
    cwd: options.cwd ?? repoRoot,
    encoding: 'utf8',
    maxBuffer: 64 * 1024 * 1024,
    timeout: 120_000,
  });
  if (r.error) throw r.error;
  return { code: r.status, stdout: r.stdout, stderr: r.stderr };
}

/** Run `node dist/cli.js ...args` asynchronously with `input` on stdin. */
export function runCliAsync(
  args: readonly string[],
  options: { input?: string | Buffer; env?: Record<string, string>; cwd?: string } = {},
): Promise<CliRun> {
  return new Promise((resolvePromise, reject) => {
    const child = spawn(process.execPath, [cliPath, ...args], {
      env: cleanEnv(options.env),
      cwd: options.cwd ?? repoRoot,
      stdio: ['pipe', 'pipe', 'pipe'],
    });
    const out: Buffer[] = [];
    const err: Buffer[] = [];
    child.stdout.on('data', (b: Buffer) => out.push(b));
    child.stderr.on('data', (b: Buffer) => err.push(b));
    child.stdin.on('error', () => undefined); // the CLI may exit before reading all of stdin
    child.on('error', reject);
    child.on('close', (code) =>
      resolvePromise({ code, stdout: Buffer.concat(out).toString('utf8'), stderr: Buffer.concat(err).toString('utf8') }),
    );
    child.stdin.end(options.input ?? '');
  });
}

/** Run many CLI invocations, a few at a time, keeping their order. */
export async function runAll(
  runs: readonly { args: readonly string[]; input?: string | Buffer; env?: Record<string, string> }[],
  concurrency = 4,
): Promise<CliRun[]> {
  const results: CliRun[] = new Array(runs.length);
  let next = 0;
  const worker = async (): Promise<void> => {
    while (next < runs.length) {
      const i = next++;
      const r = runs[i]!;
      results[i] = await runCliAsync(r.args, { input: r.input, env: r.env });
    }
  };
  await Promise.all(Array.from({ length: Math.min(concurrency, runs.length) }, worker));
  return results;
}
