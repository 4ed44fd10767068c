/**
 * `mcp-budget proxy -- COMMAND [ARGS...]`: spawn any stdio MCP server and bound every
 * `tools/call` result it returns. Framing is ours (linear, capped). Small server lines take a
 * `JSON.parse` fast path; a line over the fast-path size streams through the byte source, so
 * memory stays flat whatever the server writes, and the `id` may come last.
 *
 * Faults: the server exiting answers every request still waiting with a JSON-RPC error; the
 * client closing stdin asks the server to stop (SIGTERM, then SIGKILL after a grace period);
 * a closed stdout (EPIPE) ends quietly. Nothing is left running.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import type { Readable, Writable } from 'node:stream';
import { ByteBudget } from '../engine/byte-source.js';
import { BudgetError } from '../engine/errors.js';
import { DEFAULT_FAST_PATH_BYTES, DEFAULT_MAX_REQUEST_BYTES, type BudgetOptions } from '../engine/limits.js';
import { LineFramer } from './line-framer.js';
import { StreamedBytesCollector } from './memory.js';
import { isRequestId, RequestTable, type RequestId } from './request-ids.js';
import { BOUNDED_METHODS, ResponseBudget } from './response-budget.js';

export interface ProxyOptions {
  command: string;
  args: string[];
  limits: BudgetOptions;
  /** Client→server lines over this are refused with a JSON-RPC error. @default 4 MiB */
  maxRequestBytes?: number;
  /** Server lines up to this size are parsed whole; larger ones stream. @default 1 MiB */
  fastPathBytes?: number;
  /** After asking the server to stop, wait this long before killing it. @default 2000 */
  killGraceMs?: number;
  stdin: Readable;
  stdout: Writable;
  stderr: Writable;
  env?: NodeJS.ProcessEnv;
}

export { DEFAULT_FAST_PATH_BYTES, DEFAULT_MAX_REQUEST_BYTES };

/** JSON-RPC error codes the proxy answers with. */
const INVALID_REQUEST = -32600;
/** Implementation-defined server error range: the upstream is gone or its answer was withheld. */
const UPSTREAM_GONE = -32000;
const RESPONSE_TOO_LARGE = -32001;

/** Run the proxy until the server exits; resolves with the exit code to use. */
export function runProxy(opts: ProxyOptions): Promise<number> {
  return new Promise((resolve) => new Proxy(opts, resolve).start());
}

class Proxy {
  private child!: ChildProcess;
  private readonly budget: ResponseBudget;
  /** Every client request forwarded and not yet answered (to answer them if the server dies). */
  private readonly inflight = new RequestTable();
  private clientClosed = false;
  private outClosed = false;
  private killTimer: NodeJS.Timeout | undefined;
  private finished = false;
  /** The proxy asked the server to stop: a line it leaves unfinished is expected. */
  private stopping = false;
  private readonly name: string;

  constructor(
    private readonly o: ProxyOptions,
    private readonly done: (code: number) => void,
  ) {
    this.budget = new ResponseBudget(o.limits);
    this.name = [o.command, ...o.args].join(' ').slice(0, 200);
  }

  start(): void {
    const o = this.o;
    try {
      this.child = spawn(o.command, o.args, { stdio: ['pipe', 'pipe', 'inherit'], env: o.env ?? process.env });
    } catch (e) {
      this.warn(`cannot start \`${this.name}\`: ${(e as Error).message}`);
      this.finish(1);
      return;
    }
    const child = this.child;
    child.on('error', (e) => {
      this.warn(`cannot start \`${this.name}\`: ${e.message}`);
      this.answerInflight(`The MCP server \`${this.name}\` could not be started: ${e.message}`);
      this.finish(1);
    });
    child.stdin!.on('error', () => undefined); // a dead server's stdin: reported by 'exit'
    this.wireClientToServer();
    this.wireServerToClient();
    let stdoutEnded = false;
    let exit: { code: number | null; signal: NodeJS.Signals | null } | undefined;
    const settle = (): void => {
      if (!stdoutEnded || exit === undefined) return;
      const { code, signal } = exit;
      const how = signal !== null ? `was killed by ${signal}` : `exited with code ${code}`;
      if (this.inflight.size > 0) {
        this.answerInflight(`The MCP server \`${this.name}\` ${how} before answering this request.`);
      }
      if (!this.clientClosed) this.warn(`the MCP server \`${this.name}\` ${how}`);
      this.finish(this.clientClosed && signal !== 'SIGKILL' ? 0 : code !== 0 || signal !== null ? 1 : 0);
    };
    child.stdout!.on('end', () => {
      stdoutEnded = true;
      settle();
    });
    child.on('exit', (code, signal) => {
      exit = { code, signal };
      if (this.killTimer !== undefined) clearTimeout(this.killTimer);
      settle();
    });
    for (const sig of ['SIGINT', 'SIGTERM', 'SIGHUP'] as const) {
      process.once(sig, () => this.stopServer(sig));
    }
  }

  // ------------------------------------------------------------ client → server

  private wireClientToServer(): void {
    const o = this.o;
    const toServer = this.child.stdin!;
    const framer = new LineFramer(o.maxRequestBytes ?? DEFAULT_MAX_REQUEST_BYTES, {
      line: (bytes) => {
        this.noteRequest(bytes);
        if (!toServer.write(Buffer.concat([bytes, NEWLINE]))) {
          o.stdin.pause();
          toServer.once('drain', () => o.stdin.resume());
        }
      },
      overflow: (n, head) => {
        const max = o.maxRequestBytes ?? DEFAULT_MAX_REQUEST_BYTES;
        this.warn(`refused a client message of more than ${n} bytes (--max-request-bytes ${max})`);
        // The id usually comes first in a request (the SDK writes it before params); when it does
        // not, the refused line's end is read for it once the line is over.
        const id = findId(head);
        if (id !== undefined) this.refuse(id, max);
        else this.pendingRefusal = max;
      },
      discarded: (tail) => {
        if (this.pendingRefusal === undefined) return;
        const max = this.pendingRefusal;
        this.pendingRefusal = undefined;
        this.refuse(findId(tail) ?? null, max);
      },
    });
    o.stdin.on('data', (chunk: Buffer) => framer.push(chunk));
    o.stdin.on('end', () => {
      framer.end();
      this.clientClosed = true;
      this.shutDown();
    });
    o.stdin.on('error', () => {
      this.clientClosed = true;
      this.shutDown();
    });
  }

  private pendingRefusal: number | undefined;

  private refuse(id: RequestId | null, max: number): void {
    this.sendToClient(
      errorLine(id, INVALID_REQUEST, `Message of more than ${max} bytes refused by mcp-budget proxy; raise --max-request-bytes to allow it.`),
    );
  }

  private noteRequest(bytes: Buffer): void {
    let msg: unknown;
    try {
      msg = JSON.parse(bytes.toString('utf8'));
    } catch {
      return; // the server answers a parse error itself
    }
    for (const m of Array.isArray(msg) ? msg : [msg]) {
      this.budget.inbound(m);
      const r = m as { id?: unknown; method?: unknown } | null;
      if (r !== null && typeof r === 'object' && typeof r.method === 'string' && isRequestId(r.id)) {
        this.inflight.remember(r.id, { method: r.method, tool: undefined });
      }
    }
  }

  /**
   * The client is done: as the MCP stdio shutdown goes, close the server's stdin and let it answer
   * what is pending and exit; SIGTERM it if it has not exited after the grace period, and SIGKILL
   * it after another.
   */
  private shutDown(): void {
    const child = this.child;
    if (child === undefined || child.exitCode !== null || child.signalCode !== null || this.killTimer !== undefined) return;
    child.stdin?.end();
    const grace = this.o.killGraceMs ?? 2000;
    this.killTimer = setTimeout(() => this.stopServer('SIGTERM'), grace);
    this.killTimer.unref();
  }

  /** Signal the server, and kill it if it is still there after the grace period. */
  private stopServer(signal: NodeJS.Signals): void {
    const child = this.child;
    if (child === undefined || child.exitCode !== null || child.signalCode !== null) return;
    this.stopping = true;
    child.stdin?.end();
    child.kill(signal);
    if (this.killTimer !== undefined) clearTimeout(this.killTimer);
    this.killTimer = setTimeout(() => child.kill('SIGKILL'), this.o.killGraceMs ?? 2000);
    this.killTimer.unref();
  }

  // ------------------------------------------------------------ server → client

  private wireServerToClient(): void {
    const fromServer = this.child.stdout!;
    let stream: LongLine | undefined;
    const collector = new StreamedBytesCollector();
    const framer = new LineFramer(this.o.fastPathBytes ?? DEFAULT_FAST_PATH_BYTES, {
      line: (bytes) => this.serverLine(bytes),
      long: {
        start: () => {
          stream = { budget: new ByteBudget(this.budget.limits, 'envelope'), failed: undefined, isMessage: false, held: [], heldBytes: 0, head: undefined };
        },
        chunk: (bytes) => {
          collector.add(bytes.length);
          const s = stream;
          if (s === undefined) return;
          if (s.head === undefined) s.head = Buffer.from(bytes.subarray(0, 512));
          // A request or notification is passed on whole when it is not too big to hold.
          if (s.held !== undefined) {
            if (s.heldBytes + bytes.length <= PASS_THROUGH_MAX_BYTES) {
              s.held.push(Buffer.from(bytes));
              s.heldBytes += bytes.length;
            } else {
              s.held = undefined;
            }
          }
          if (s.failed !== undefined) return;
          try {
            s.budget.write(bytes);
          } catch (e) {
            s.failed = (e as Error).message;
            s.isMessage = e instanceof BudgetError && e.data?.message === 'request';
          }
          if (s.failed === undefined && s.held !== undefined && s.heldBytes > this.budget.limits.maxResultBytes * 2) {
            s.held = undefined; // a response: the budget streams it, nothing needs holding
          }
        },
        end: (total) => {
          const s = stream!;
          stream = undefined;
          this.serverLongLine(s, total);
        },
      },
    });
    fromServer.on('data', (chunk: Buffer) => framer.push(chunk));
    fromServer.on('end', () => framer.end());
    this.o.stdout.on('error', (e: NodeJS.ErrnoException) => {
      // The client went away (EPIPE): nobody is left to answer; stop quietly.
      this.outClosed = true;
      if (e.code !== 'EPIPE') this.warn(`cannot write to the client: ${e.message}`);
      this.clientClosed = true;
      this.stopServer('SIGTERM'); // nobody can read the answers any more: no point waiting
    });
  }

  private serverLine(bytes: Buffer): void {
    let msg: unknown;
    try {
      msg = JSON.parse(bytes.toString('utf8'));
    } catch {
      if (!this.stopping) this.warn(`dropped a line the MCP server printed on stdout that is not JSON: ${preview(bytes)}`);
      return;
    }
    const messages = Array.isArray(msg) ? msg : [msg];
    let changed = false;
    const out = messages.map((m) => {
      this.answered(m);
      const o = this.budget.outbound(m);
      if (o !== m) changed = true;
      return o;
    });
    // A response that fits is passed on byte for byte.
    if (!changed) this.sendToClient(Buffer.concat([bytes, NEWLINE]));
    else this.sendToClient(JSON.stringify(Array.isArray(msg) ? out : out[0]) + '\n');
  }

  private serverLongLine(s: LongLine, total: number): void {
    if (s.isMessage) {
      if (s.held !== undefined) {
        this.sendToClient(Buffer.concat([...s.held, NEWLINE]));
        return;
      }
      this.warn(`dropped a ${total}-byte request or notification from the MCP server (over ${PASS_THROUGH_MAX_BYTES} bytes)`);
      const id = s.head === undefined ? undefined : findId(s.head);
      if (id !== undefined) {
        // A request nobody will see must not leave the server waiting forever.
        this.child.stdin?.write(errorLine(id, INVALID_REQUEST, `mcp-budget proxy: request of ${total} bytes is too large to pass to the client`));
      }
      return;
    }
    let json: string;
    try {
      if (s.failed !== undefined) throw new Error(s.failed);
      json = s.budget.end().json;
    } catch (e) {
      const msg = e instanceof BudgetError || e instanceof Error ? e.message : String(e);
      if (!this.stopping) this.warn(`dropped a ${total}-byte line from the MCP server that is not valid JSON-RPC: ${msg}`);
      return;
    }
    const m = JSON.parse(json) as { id?: unknown; result?: unknown; error?: unknown };
    if (!isRequestId(m.id)) {
      this.warn(`dropped a ${total}-byte response without an id`);
      return;
    }
    const id = m.id;
    this.inflight.forget(id);
    const request = this.budget.pending.take(id);
    if (request === undefined || !BOUNDED_METHODS.has(request.method)) {
      this.warn(`withheld a ${total}-byte response to request ${JSON.stringify(id)}: too large and not a tool result`);
      this.sendToClient(
        errorLine(
          id,
          RESPONSE_TOO_LARGE,
          `The MCP server's response (${total} bytes) is over mcp-budget's ${this.budget.limits.maxResultBytes}-byte budget ` +
            `and is not a tools/call result, so it was withheld. Ask for less (use paging or filters).`,
        ),
      );
      return;
    }
    if ('result' in m && m.result !== null && typeof m.result === 'object') {
      const result = m.result as Record<string, unknown>;
      const report = (result._meta as Record<string, unknown> | undefined)?.['io.github.mcp-result-budget/budget'];
      const typed = this.budget.typed(request, result, result, report as never, id);
      if (typed !== result) {
        this.sendToClient(JSON.stringify({ ...m, result: typed }) + '\n');
        return;
      }
    }
    this.sendToClient(json + '\n');
  }

  private answered(m: unknown): void {
    const r = m as { id?: unknown; method?: unknown } | null;
    if (r !== null && typeof r === 'object' && r.method === undefined && isRequestId(r.id)) this.inflight.forget(r.id);
  }

  // ------------------------------------------------------------ output and faults

  private sendToClient(data: string | Buffer): void {
    if (this.outClosed) return;
    if (!this.o.stdout.write(data)) {
      const fromServer = this.child.stdout!;
      fromServer.pause();
      this.o.stdout.once('drain', () => fromServer.resume());
    }
  }

  private answerInflight(message: string): void {
    for (const id of this.inflight.ids()) this.sendToClient(errorLine(id, UPSTREAM_GONE, message));
    this.inflight.clear();
  }

  private warn(text: string): void {
    this.o.stderr.write(`mcp-budget proxy: ${text}\n`);
  }

  private finish(code: number): void {
    if (this.finished) return;
    this.finished = true;
    if (this.killTimer !== undefined) clearTimeout(this.killTimer);
    // Stop reading the client: an open stdin must not keep a finished proxy alive.
    this.o.stdin.pause();
    this.o.stdin.removeAllListeners('data');
    if (typeof (this.o.stdin as { destroy?: unknown }).destroy === 'function') this.o.stdin.destroy();
    // Let pending output drain before reporting the exit code.
    if (this.outClosed) this.done(code);
    else this.o.stdout.write('', () => this.done(code));
  }
}

const NEWLINE = Buffer.from('\n');

/** A server request or notification longer than the fast path is held and passed up to this size. */
export const PASS_THROUGH_MAX_BYTES = 8 * 1024 * 1024;

interface LongLine {
  budget: ByteBudget;
  failed: string | undefined;
  /** The line is a request or notification, not a response. */
  isMessage: boolean;
  /** Raw bytes held while the line may still need passing on whole. */
  held: Buffer[] | undefined;
  heldBytes: number;
  head: Buffer | undefined;
}

function errorLine(id: RequestId | null, code: number, message: string): string {
  return JSON.stringify({ jsonrpc: '2.0', id, error: { code, message } }) + '\n';
}

/** A top-level `"id"` in a piece of a JSON-RPC message (its head or its tail), if one is there. */
export function findId(piece: Buffer): RequestId | undefined {
  const text = piece.toString('utf8');
  const m = /"id"\s*:\s*("(?:[^"\\]|\\.){0,200}"|-?\d{1,20})\s*[,}]/.exec(text);
  if (m === null) return undefined;
  try {
    const v = JSON.parse(m[1]!) as unknown;
    return typeof v === 'string' || typeof v === 'number' ? v : undefined;
  } catch {
    return undefined;
  }
}

function preview(bytes: Buffer): string {
  const s = bytes.subarray(0, 120).toString('utf8');
  return JSON.stringify(bytes.length > 120 ? s + '…' : s);
}
