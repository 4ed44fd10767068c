/**
 * MCP client helpers for the workspace server tests: a transport wrapper that records every
 * message the client receives (so result sizes are measured as sent, not as the SDK re-parsed
 * them), a stdio client transport that can start the server as another user (the SDK's
 * StdioClientTransport has no uid/gid option), and small assertions on tool results.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { ReadBuffer, serializeMessage } from '@modelcontextprotocol/sdk/shared/stdio.js';
import type { Transport } from '@modelcontextprotocol/sdk/shared/transport.js';
import type { JSONRPCMessage } from '@modelcontextprotocol/sdk/types.js';
import { REPORT_KEY } from '../../src/engine/limits.js';
import { cleanEnv, cliPath } from './cli.js';

/** Wraps a client transport and keeps the `result` of every response it receives, by request id. */
export class RecordingTransport implements Transport {
  onclose?: () => void;
  onerror?: (error: Error) => void;
  onmessage?: (message: JSONRPCMessage) => void;
  /** Wire size (UTF-8 bytes of the JSON) of each response's `result`, in arrival order. */
  readonly results: { id: unknown; bytes: number; result: unknown }[] = [];

  constructor(readonly inner: Transport) {}

  start(): Promise<void> {
    this.inner.onmessage = (message) => {
      const m = message as { id?: unknown; result?: unknown };
      if (m.result !== undefined) this.results.push({ id: m.id, bytes: Buffer.byteLength(JSON.stringify(m.result)), result: m.result });
      this.onmessage?.(message);
    };
    this.inner.onclose = () => this.onclose?.();
    this.inner.onerror = (e) => this.onerror?.(e);
    return this.inner.start();
  }

  send(message: JSONRPCMessage): Promise<void> {
    return this.inner.send(message);
  }

  close(): Promise<void> {
    return this.inner.close();
  }

  /** Wire size of the last result received. */
  get lastBytes(): number {
    const last = this.results[this.results.length - 1];
    if (last === undefined) throw new Error('no result received yet');
    return last.bytes;
  }
}

/**
 * Client side of stdio, spawning the server with `uid`/`gid` (the test runs as root; a server
 * started as `nobody` sees permissions the way an ordinary user does).
 */
export class SpawnedStdioTransport implements Transport {
  onclose?: () => void;
  onerror?: (error: Error) => void;
  onmessage?: (message: JSONRPCMessage) => void;
  stderr = '';
  private child: ChildProcess | undefined;
  private readonly buffer = new ReadBuffer();

  constructor(
    private readonly command: string,
    private readonly args: string[],
    private readonly options: { uid?: number; gid?: number; env?: NodeJS.ProcessEnv; cwd?: string } = {},
  ) {}

  start(): Promise<void> {
    return new Promise((resolve, reject) => {
      const child = spawn(this.command, this.args, {
        stdio: ['pipe', 'pipe', 'pipe'],
        env: this.options.env ?? cleanEnv(),
        cwd: this.options.cwd,
        uid: this.options.uid,
        gid: this.options.gid,
      });
      this.child = child;
      child.once('error', (e) => {
        reject(e);
        this.onerror?.(e);
      });
      child.once('spawn', () => resolve());
      child.once('close', () => {
        this.child = undefined;
        this.onclose?.();
      });
      child.stdin!.on('error', (e) => this.onerror?.(e));
      child.stderr!.on('data', (c: Buffer) => (this.stderr += c.toString('utf8')));
      child.stdout!.on('data', (c: Buffer) => {
        this.buffer.append(c);
        for (;;) {
          let m: JSONRPCMessage | null;
          try {
            m = this.buffer.readMessage();
          } catch (e) {
            this.onerror?.(e as Error);
            continue;
          }
          if (m === null) break;
          this.onmessage?.(m);
        }
      });
    });
  }

  send(message: JSONRPCMessage): Promise<void> {
    return new Promise((resolve) => {
      if (this.child?.stdin?.write(serializeMessage(message)) ?? true) resolve();
      else this.child!.stdin!.once('drain', resolve);
    });
  }

  async close(): Promise<void> {
    const child = this.child;
    if (child === undefined) return;
    const closed = new Promise<void>((resolve) => child.once('close', () => resolve()));
    child.stdin?.end();
    const timer = setTimeout(() => child.kill('SIGKILL'), 5000);
    await closed;
    clearTimeout(timer);
  }
}

export interface Connected {
  client: Client;
  wire: RecordingTransport;
  close: () => Promise<void>;
}

/** Connect an SDK client through a recording wrapper. */
export async function connectClient(transport: Transport): Promise<Connected> {
  const wire = new RecordingTransport(transport);
  const client = new Client({ name: 'workspace-tests', version: '1.0.0' });
  await client.connect(wire);
  return { client, wire, close: () => client.close() };
}

/** `node dist/cli.js serve --root <root> [...flags]` over the SDK's StdioClientTransport. */
export function serveTransport(root: string, flags: string[] = [], env: Record<string, string> = {}): StdioClientTransport {
  return new StdioClientTransport({ command: process.execPath, args: [cliPath, 'serve', '--root', root, ...flags], env: { ...env }, stderr: 'pipe' });
}

/** The same command started as another user (e.g. `nobody`). */
export function serveTransportAs(root: string, uid: number, gid: number): SpawnedStdioTransport {
  return new SpawnedStdioTransport(process.execPath, [cliPath, 'serve', '--root', root], { uid, gid, cwd: root });
}

export interface ToolResult {
  content?: { type: string; text?: string }[];
  structuredContent?: Record<string, unknown>;
  isError?: boolean;
  _meta?: Record<string, unknown>;
}

/** Call a tool and expect success; returns its structured content. */
export async function callOk<T = Record<string, unknown>>(client: Client, name: string, args: Record<string, unknown> = {}): Promise<T> {
  const r = (await client.callTool({ name, arguments: args })) as ToolResult;
  if (r.isError === true) throw new Error(`${name} failed: ${r.content?.[0]?.text ?? '(no text)'}`);
  if (r.structuredContent === undefined) throw new Error(`${name} returned no structuredContent`);
  return r.structuredContent as T;
}

/** Call a tool and expect a tool error; returns its text (which starts with the code). */
export async function callErr(client: Client, name: string, args: Record<string, unknown> = {}): Promise<string> {
  const r = (await client.callTool({ name, arguments: args })) as ToolResult;
  if (r.isError !== true) throw new Error(`${name} was expected to fail, got ${JSON.stringify(r).slice(0, 300)}`);
  return r.content?.[0]?.text ?? '';
}

/** The budget report of a result, if the budget changed it. */
export function reportOf(r: unknown): { truncated: true; budget_kind: string; omitted_paths: string[] } | undefined {
  const meta = (r as ToolResult)._meta;
  return meta?.[REPORT_KEY] as { truncated: true; budget_kind: string; omitted_paths: string[] } | undefined;
}
