/**
 * A hand-rolled stdio JSON-RPC peer for transport tests: spawns a process, writes raw lines, and
 * keeps every line it reads as bytes, so tests can compare what went over the wire exactly.
 */
import { spawn, type ChildProcessWithoutNullStreams } from 'node:child_process';
import { fileURLToPath } from 'node:url';

/** Repository root (tests spawn commands relative to it). */
export const REPO_ROOT = fileURLToPath(new URL('../../', import.meta.url));
/** The built CLI (`npm test` builds before running vitest). */
export const CLI = fileURLToPath(new URL('../../dist/cli.js', import.meta.url));
export const UPSTREAM = fileURLToPath(new URL('../fixtures/upstream-server.mjs', import.meta.url));
/** `runServe` with transport options the CLI does not parse. */
export const SERVE_WITH_OPTIONS = fileURLToPath(new URL('../fixtures/serve-with-options.mjs', import.meta.url));

export interface Exit {
  code: number | null;
  signal: NodeJS.Signals | null;
}

export interface JsonRpcMessage {
  jsonrpc?: string;
  id?: string | number | null;
  method?: string;
  params?: Record<string, unknown>;
  result?: Record<string, unknown>;
  error?: { code: number; message: string; data?: unknown };
}

const live = new Set<StdioPeer>();

/** Kill every peer still running (call from afterEach). */
export async function killAllPeers(): Promise<void> {
  await Promise.all([...live].map((p) => p.kill()));
}

export class StdioPeer {
  readonly child: ChildProcessWithoutNullStreams;
  /** Every complete line read from stdout, without its newline, in order. */
  readonly lines: Buffer[] = [];
  stderrText = '';
  readonly exited: Promise<Exit>;
  /** Resolves when stderr has ended (every process holding it has exited): `stderrText` is complete. */
  readonly stderrEnded: Promise<void>;
  exit: Exit | undefined;
  private pending: Buffer[] = [];
  private waiters: (() => void)[] = [];
  private consumed = new Set<number>();

  constructor(command: string, args: string[], env: NodeJS.ProcessEnv = {}) {
    this.child = spawn(command, args, { cwd: REPO_ROOT, env: { ...process.env, ...env }, stdio: ['pipe', 'pipe', 'pipe'] });
    live.add(this);
    this.child.stdin.on('error', () => undefined); // writing to a peer that is gone: seen in `exited`
    this.child.stdout.on('error', () => undefined);
    this.child.stdout.on('data', (chunk: Buffer) => {
      let from = 0;
      for (let nl = chunk.indexOf(0x0a); nl !== -1; nl = chunk.indexOf(0x0a, from)) {
        this.pending.push(chunk.subarray(from, nl));
        this.lines.push(Buffer.concat(this.pending));
        this.pending = [];
        from = nl + 1;
      }
      if (from < chunk.length) this.pending.push(Buffer.from(chunk.subarray(from)));
      this.wake();
    });
    this.child.stderr.on('data', (chunk: Buffer) => {
      this.stderrText += chunk.toString('utf8');
      this.wake();
    });
    this.stderrEnded = new Promise((resolve) => this.child.stderr.once('close', () => resolve()));
    this.exited = new Promise((resolve) => {
      this.child.on('exit', (code, signal) => {
        this.exit = { code, signal };
        live.delete(this);
        this.wake();
        resolve(this.exit);
      });
    });
  }

  /** Spawn `mcp-budget proxy [flags] -- node upstream-server.mjs`. */
  static proxy(flags: string[] = [], env: NodeJS.ProcessEnv = {}, upstream: string[] = [process.execPath, UPSTREAM]): StdioPeer {
    return new StdioPeer(process.execPath, [CLI, 'proxy', ...flags, '--', ...upstream], env);
  }

  /** Spawn `mcp-budget serve --root ROOT [flags]`. */
  static serve(root: string, flags: string[] = [], env: NodeJS.ProcessEnv = {}): StdioPeer {
    return new StdioPeer(process.execPath, [CLI, 'serve', '--root', root, ...flags], env);
  }

  /** Spawn the workspace server with transport options (`maxRequestBytes`, `maxInflight`, …). */
  static serveWith(root: string, options: Record<string, unknown>, env: NodeJS.ProcessEnv = {}): StdioPeer {
    return new StdioPeer(process.execPath, [SERVE_WITH_OPTIONS, root, JSON.stringify(options)], env);
  }

  get pid(): number {
    return this.child.pid!;
  }

  private wake(): void {
    const w = this.waiters;
    this.waiters = [];
    for (const f of w) f();
  }

  /** Resolve when `ready()` is true (checked on every stdout/stderr chunk and on exit). */
  until<T>(ready: () => T | undefined, what: string, timeoutMs = 20_000): Promise<T> {
    return new Promise((resolve, reject) => {
      const timer = setTimeout(() => {
        reject(new Error(`timed out after ${timeoutMs} ms waiting for ${what}; stderr:\n${this.stderrText}`));
      }, timeoutMs);
      const check = (): void => {
        const v = ready();
        if (v !== undefined) {
          clearTimeout(timer);
          resolve(v);
        } else {
          this.waiters.push(check);
        }
      };
      check();
    });
  }

  /** The next line (not taken before) whose parsed message satisfies `match`. */
  takeLine(match: (m: JsonRpcMessage) => boolean, what: string, timeoutMs?: number): Promise<{ raw: Buffer; msg: JsonRpcMessage }> {
    return this.until(() => {
      for (let i = 0; i < this.lines.length; i++) {
        if (this.consumed.has(i)) continue;
        let msg: JsonRpcMessage;
        try {
          msg = JSON.parse(this.lines[i]!.toString('utf8')) as JsonRpcMessage;
        } catch {
          continue;
        }
        if (match(msg)) {
          this.consumed.add(i);
          return { raw: this.lines[i]!, msg };
        }
      }
      return undefined;
    }, what, timeoutMs);
  }

  /** The response to request `id` (ids compared by type: 1 and "1" differ). */
  response(id: string | number | null, timeoutMs?: number): Promise<{ raw: Buffer; msg: JsonRpcMessage }> {
    return this.takeLine((m) => m.method === undefined && m.id === id, `the response to ${JSON.stringify(id)}`, timeoutMs);
  }

  stderrMatches(re: RegExp, timeoutMs?: number): Promise<true> {
    return this.until(() => (re.test(this.stderrText) ? true : undefined), `stderr to match ${re}`, timeoutMs);
  }

  /** Write one message (an object is serialized; a string or bytes are written as given). */
  send(message: JsonRpcMessage | string | Buffer, newline = true): void {
    const data = typeof message === 'string' || Buffer.isBuffer(message) ? message : JSON.stringify(message);
    this.child.stdin.write(data);
    if (newline) this.child.stdin.write('\n');
  }

  async request(id: string | number, method: string, params?: Record<string, unknown>, timeoutMs?: number): Promise<{ raw: Buffer; msg: JsonRpcMessage }> {
    this.send({ jsonrpc: '2.0', id, method, ...(params === undefined ? {} : { params }) });
    return this.response(id, timeoutMs);
  }

  callTool(id: string | number, name: string, args: Record<string, unknown> = {}, timeoutMs?: number): Promise<{ raw: Buffer; msg: JsonRpcMessage }> {
    return this.request(id, 'tools/call', { name, arguments: args }, timeoutMs);
  }

  /** The MCP handshake; `tools/list` too when `listTools` (the proxy learns output schemas from it). */
  async initialize(protocolVersion = '2025-06-18', listTools = false): Promise<JsonRpcMessage> {
    const { msg } = await this.request('init', 'initialize', {
      protocolVersion,
      capabilities: { roots: {} },
      clientInfo: { name: 'raw-peer', version: '1.0.0' },
    });
    this.send({ jsonrpc: '2.0', method: 'notifications/initialized' });
    if (listTools) await this.request('list', 'tools/list');
    return msg;
  }

  /** Close our end of stdin (EOF for the peer). */
  endInput(): void {
    this.child.stdin.end();
  }

  waitExit(timeoutMs = 20_000): Promise<Exit> {
    return this.until(() => this.exit, 'the process to exit', timeoutMs);
  }

  async kill(): Promise<void> {
    if (this.exit !== undefined) return;
    this.child.kill('SIGKILL');
    await this.exited;
  }
}

/** Whether a process with this pid exists (signal 0 checks without signalling). */
export function isAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (e) {
    return (e as NodeJS.ErrnoException).code === 'EPERM';
  }
}

/** Resolve once `pid` is gone; reject after `timeoutMs`. */
export async function waitGone(pid: number, timeoutMs = 10_000): Promise<number> {
  const start = Date.now();
  while (isAlive(pid)) {
    if (Date.now() - start > timeoutMs) throw new Error(`process ${pid} still running after ${timeoutMs} ms`);
    await new Promise((r) => setTimeout(r, 25));
  }
  return Date.now();
}
