/**
 * Helpers for the Streamable HTTP tests: start the real CLI with `--listen 127.0.0.1:0`, read the
 * bound URL it prints on stderr, connect the SDK client, and stop the process with a signal.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { cleanEnv, cliPath, repoRoot } from '../helpers/cli.js';

/** A CLI process listening on loopback. */
export interface Listening {
  url: URL;
  proc: ChildProcess;
  /** Everything written on stderr so far. */
  stderr: () => string;
  /** Send `signal` and wait for the exit; resolves with the exit code (null when killed). */
  stop: (signal?: NodeJS.Signals) => Promise<number | null>;
}

const running = new Set<ChildProcess>();

/** Start `node dist/cli.js ...args` and wait for `listening on URL` on stderr. */
export function startListening(args: readonly string[], env: Record<string, string> = {}): Promise<Listening> {
  const proc = spawn(process.execPath, [cliPath, ...args], { cwd: repoRoot, env: cleanEnv({ XDG_STATE_HOME: stateDir(), ...env }), stdio: ['ignore', 'pipe', 'pipe'] });
  running.add(proc);
  let err = '';
  proc.stderr!.on('data', (b: Buffer) => (err += b.toString('utf8')));
  proc.stdout!.resume();
  const exited = new Promise<number | null>((resolve) =>
    proc.once('exit', (code) => {
      running.delete(proc);
      resolve(code);
    }),
  );
  const stop = async (signal: NodeJS.Signals = 'SIGTERM'): Promise<number | null> => {
    if (proc.exitCode === null && proc.signalCode === null) proc.kill(signal);
    return exited;
  };
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`no listening line within 20 s:\n${err}`)), 20_000);
    const onData = (): void => {
      const m = /listening on (http:\/\/\S+)/.exec(err);
      if (m === null) return;
      clearTimeout(timer);
      proc.stderr!.off('data', onData);
      resolve({ url: new URL(m[1]!), proc, stderr: () => err, stop });
    };
    proc.stderr!.on('data', onData);
    void exited.then((code) => {
      clearTimeout(timer);
      reject(new Error(`exited with ${String(code)} before listening:\n${err}`));
    });
  });
}

/** Kill every process a test left running (afterAll). */
export function killAll(): void {
  for (const p of running) p.kill('SIGKILL');
}

let state: string | undefined;
/** A state directory for the team store, so tests never touch the user's. */
export function stateDir(): string {
  state ??= mkdtempSync(join(tmpdir(), 'mcp-budget-http-state-'));
  return state;
}
export function removeStateDir(): void {
  if (state !== undefined) rmSync(state, { recursive: true, force: true });
  state = undefined;
}

/** An SDK client connected over Streamable HTTP (with a bearer token when given). */
export async function connect(url: URL, token?: string): Promise<Client> {
  const headers: Record<string, string> = token === undefined ? {} : { Authorization: `Bearer ${token}` };
  const transport = new StreamableHTTPClientTransport(url, { requestInit: { headers } });
  const client = new Client({ name: 'http-test', version: '1.0.0' });
  await client.connect(transport);
  return client;
}

/** The text of a tool result's first content block, parsed as JSON. */
export function firstJson(result: unknown): Record<string, unknown> {
  const content = (result as { content?: { type: string; text?: string }[] }).content ?? [];
  return JSON.parse(content[0]?.text ?? 'null') as Record<string, unknown>;
}

/** An initialize request body, for raw fetches. */
export const INITIALIZE = { jsonrpc: '2.0', id: 1, method: 'initialize', params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'raw', version: '1' } } };

/** Headers every Streamable HTTP POST carries. */
export const POST_HEADERS = { 'Content-Type': 'application/json', Accept: 'application/json, text/event-stream' };
