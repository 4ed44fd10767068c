/**
 * The stdio server transport of `mcp-budget serve`: an SDK `Transport` that treats its client as
 * untrusted. Lines are framed with a cap (an oversized line is skipped unseen and refused under
 * its envelope's top-level id); every line that is not a valid JSON-RPC message is answered as
 * JSON-RPC says (-32700, -32600) or, for notifications and responses, reported on stderr; and
 * reading pauses while too many requests await their answers or while stdout is not draining,
 * so a client that writes without reading cannot grow the server's memory.
 *
 * Batches (JSON arrays) are refused with -32600 under every protocol version: 2025-06-18 removed
 * them, the SDK's own stdio transport never accepted them, and a batch would let one line start
 * an unbounded number of requests at once.
 */
import type { Readable, Writable } from 'node:stream';
import type { Transport, TransportSendOptions } from '@modelcontextprotocol/sdk/shared/transport.js';
import { JSONRPCMessageSchema, type JSONRPCMessage } from '@modelcontextprotocol/sdk/types.js';
import { EnvelopeScanner } from '../core/envelope-scan.js';
import { InflightSlots } from './inflight-slots.js';
import { errorLine, INVALID_REQUEST, PARSE_ERROR, refusalTarget } from '../core/jsonrpc-errors.js';
import { LineFramer } from '../core/line-framer.js';
import { isRequestId, type RequestId } from '../core/request-ids.js';
import { StderrWarnings } from '../../shared/warnings.js';

import { DEFAULT_SERVE_MAX_REQUEST_BYTES } from './defaults.js';

export { DEFAULT_SERVE_MAX_REQUEST_BYTES };

/** Requests dispatched and not yet answered before reading pauses. @default 32 */
export const DEFAULT_MAX_INFLIGHT_REQUESTS = 32;
/** Longest top-level `id` read out of a refused line, in bytes (longer: answered with `null`). @default 1 MiB */
export const MAX_REFUSED_ID_BYTES = 1024 * 1024;
/** After stdin ends, requests still unanswered after this long are abandoned. @default 10000 */
export const DEFAULT_CLOSE_GRACE_MS = 10_000;

/** Options of {@link BoundedStdioServerTransport}; streams default to the process's. */
export interface BoundedStdioOptions {
  stdin?: Readable;
  stdout?: Writable;
  stderr?: Writable;
  /** What warnings on stderr start with. @default 'mcp-budget serve' */
  name?: string;
  /** Longest client line accepted, in bytes. @default DEFAULT_SERVE_MAX_REQUEST_BYTES */
  maxRequestBytes?: number;
  /** Requests awaiting an answer before reading pauses. @default DEFAULT_MAX_INFLIGHT_REQUESTS */
  maxInflight?: number;
  /** Wait this long for unanswered requests once stdin has ended. @default DEFAULT_CLOSE_GRACE_MS */
  closeGraceMs?: number;
}

/** A stdio server transport that bounds what a client can make it hold. */
export class BoundedStdioServerTransport implements Transport {
  onclose?: (() => void) | undefined;
  onerror?: ((error: Error) => void) | undefined;
  onmessage?: (<T extends JSONRPCMessage>(message: T) => void) | undefined;

  private readonly stdin: Readable;
  private readonly stdout: Writable;
  private readonly warnings: StderrWarnings;
  private readonly maxRequestBytes: number;
  private readonly slots: InflightSlots;
  private readonly framer: LineFramer;
  /** Lines read while dispatch was paused, and refusals ordered after them (at most one read's worth). */
  private readonly waiting: (Buffer | { answer: string })[] = [];
  private scanner: EnvelopeScanner | undefined;
  private outBlocked = false;
  private drainWaiters: (() => void)[] = [];
  private inputEnded = false;
  private outClosed = false;
  private closed = false;
  private started = false;
  private graceTimer: NodeJS.Timeout | undefined;
  private protocolVersion = 'unknown';

  constructor(private readonly o: BoundedStdioOptions = {}) {
    this.stdin = o.stdin ?? process.stdin;
    this.stdout = o.stdout ?? process.stdout;
    this.warnings = new StderrWarnings(o.stderr ?? process.stderr, o.name ?? 'mcp-budget serve');
    this.maxRequestBytes = o.maxRequestBytes ?? DEFAULT_SERVE_MAX_REQUEST_BYTES;
    this.slots = new InflightSlots(o.maxInflight ?? DEFAULT_MAX_INFLIGHT_REQUESTS, this.maxRequestBytes);
    this.framer = new LineFramer(this.maxRequestBytes, {
      line: (bytes) => this.lineRead(bytes),
      long: {
        // Perf: an oversized line is only scanned for its top level, never held.
        start: () => (this.scanner = new EnvelopeScanner(MAX_REFUSED_ID_BYTES)),
        chunk: (bytes) => {
          if (this.scanner !== undefined && !this.scanner.done) this.scanner.push(bytes);
        },
        end: (total) => this.oversized(total),
      },
    });
  }

  async start(): Promise<void> {
    if (this.started) throw new Error('BoundedStdioServerTransport already started');
    this.started = true;
    this.stdin.on('data', this.onData);
    this.stdin.on('end', this.onEnd);
    this.stdin.on('error', this.onInputError);
    this.stdout.on('error', this.onOutputError);
  }

  /** Write one message; resolves once stdout has taken it (or at once if stdout is gone). */
  send(message: JSONRPCMessage, _options?: TransportSendOptions): Promise<void> {
    const m = message as { id?: unknown; method?: unknown; result?: { protocolVersion?: unknown; serverInfo?: unknown } };
    if (m.method === undefined && isRequestId(m.id)) {
      const v = m.result?.protocolVersion;
      if (typeof v === 'string' && m.result?.serverInfo !== undefined) this.protocolVersion = v;
      // Deferred: dispatching the next request from inside the SDK's send would nest handlers.
      if (this.slots.release(m.id)) queueMicrotask(() => this.pump());
    }
    return this.write(JSON.stringify(message) + '\n');
  }

  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    if (this.graceTimer !== undefined) clearTimeout(this.graceTimer);
    this.stdin.off('data', this.onData);
    this.stdin.off('end', this.onEnd);
    this.stdin.off('error', this.onInputError);
    // Destroyed, not paused: a paused pipe still holds the event loop, and a server whose client
    // is gone (EPIPE) must be able to exit while the client keeps stdin open.
    this.stdin.on('error', () => undefined);
    this.stdin.destroy();
    this.waiting.length = 0;
    this.slots.clear();
    for (const resolve of this.drainWaiters.splice(0)) resolve();
    this.onclose?.();
  }

  // ------------------------------------------------------------ input

  private readonly onData = (chunk: Buffer): void => void this.framer.push(chunk);

  private readonly onEnd = (): void => {
    this.framer.end();
    this.inputEnded = true;
    this.maybeFinish();
  };

  private readonly onInputError = (e: Error): void => {
    this.onerror?.(e);
    void this.close();
  };

  private lineRead(bytes: Buffer): void {
    if (this.waiting.length > 0 || !this.canDispatch()) {
      this.waiting.push(bytes);
      this.stdin.pause();
      return;
    }
    this.dispatch(bytes);
  }

  private canDispatch(): boolean {
    return !this.closed && !this.outBlocked && this.slots.hasRoom();
  }

  /** Dispatch waiting lines while there is room; read again once none wait. */
  private pump(): void {
    while (this.waiting.length > 0 && this.canDispatch()) this.dispatch(this.waiting.shift()!);
    if (this.waiting.length === 0 && this.canDispatch() && !this.inputEnded) this.stdin.resume();
    this.maybeFinish();
  }

  private dispatch(entry: Buffer | { answer: string }): void {
    if (!Buffer.isBuffer(entry)) {
      void this.write(entry.answer);
      return;
    }
    const bytes = entry;
    const text = bytes.toString('utf8');
    let value: unknown;
    try {
      value = JSON.parse(text);
    } catch {
      if (text.trim() === '') return;
      this.answer(null, PARSE_ERROR, 'Parse error: the line is not valid JSON.');
      return;
    }
    const parsed = JSONRPCMessageSchema.safeParse(value);
    if (!parsed.success) {
      this.invalid(value);
      return;
    }
    const message = parsed.data as JSONRPCMessage & { id?: unknown; method?: unknown; params?: { requestId?: unknown } };
    if (typeof message.method === 'string' && isRequestId(message.id)) this.slots.take(message.id, bytes.length);
    else if (message.method === 'notifications/cancelled' && isRequestId(message.params?.requestId)) {
      // The SDK sends nothing for a cancelled request: its slot is free now.
      if (this.slots.release(message.params.requestId)) queueMicrotask(() => this.pump());
    }
    try {
      this.onmessage?.(message);
    } catch (e) {
      this.onerror?.(e as Error);
    }
  }

  /** A JSON value that is not a JSON-RPC message: answer it, or report it when no answer is allowed. */
  private invalid(value: unknown): void {
    if (Array.isArray(value)) {
      const why = value.length === 0 ? 'an empty batch' : `a batch of ${value.length}`;
      this.answer(null, INVALID_REQUEST, `Invalid Request: ${why}; JSON-RPC batches are not supported (protocol ${this.protocolVersion}; MCP 2025-06-18 removed them). Send one message per line.`);
      return;
    }
    if (value === null || typeof value !== 'object') {
      this.answer(null, INVALID_REQUEST, 'Invalid Request: a message must be a JSON object.');
      return;
    }
    const m = value as Record<string, unknown>;
    if ('method' in m && !('id' in m)) {
      this.warnings.warn(`ignored a malformed notification ${preview(m.method)} (notifications get no answer)`);
      return;
    }
    if (!('method' in m) && ('result' in m || 'error' in m) && 'id' in m) {
      this.warnings.warn(`ignored a malformed response to request ${preview(m.id)}`);
      return;
    }
    const id = validId(m.id);
    this.answer(id, INVALID_REQUEST, 'Invalid Request: not a valid JSON-RPC 2.0 request (`jsonrpc` "2.0", `method` a string, `id` a string or an integer, no other top-level fields).');
  }

  private oversized(total: number): void {
    const facts = this.scanner?.end();
    this.scanner = undefined;
    const max = this.maxRequestBytes;
    if (facts === undefined) return;
    const target = refusalTarget(facts);
    if (!target.answer) {
      this.warnings.warn(`ignored a ${target.kind} of ${total} bytes (over --max-request-bytes ${max})`);
      return;
    }
    this.warnings.warn(`refused a message of ${total} bytes (over --max-request-bytes ${max})`);
    const id = target.id === null ? null : validId(target.id);
    // Ordered after what is already waiting, so answers keep the order of the requests.
    const line = errorLine(id, INVALID_REQUEST, `Request of ${total} bytes refused: over the server's limit of ${max} bytes per message (--max-request-bytes).`);
    if (this.waiting.length > 0) this.waiting.push({ answer: line });
    else void this.write(line);
  }

  // ------------------------------------------------------------ output

  private answer(id: RequestId | null, code: number, message: string): void {
    void this.write(errorLine(id, code, message));
  }

  private write(line: string): Promise<void> {
    if (this.outClosed || this.closed) return Promise.resolve();
    if (this.stdout.write(line)) return Promise.resolve();
    if (!this.outBlocked) {
      this.outBlocked = true;
      this.stdin.pause();
      this.stdout.once('drain', this.onDrain);
    }
    return new Promise((resolve) => this.drainWaiters.push(resolve));
  }

  private readonly onDrain = (): void => {
    this.outBlocked = false;
    for (const resolve of this.drainWaiters.splice(0)) resolve();
    this.pump();
  };

  private readonly onOutputError = (e: NodeJS.ErrnoException): void => {
    // The client went away: nobody is left to answer. A closed pipe ends quietly.
    this.outClosed = true;
    this.stdout.destroy(); // what is still buffered can never be delivered
    if (e.code !== 'EPIPE') this.onerror?.(e);
    void this.close();
  };

  /** Input over and every request answered (or the grace period spent): close. */
  private maybeFinish(): void {
    if (!this.inputEnded || this.closed) return;
    if (this.waiting.length === 0 && this.slots.size === 0) {
      // Let what was written reach the pipe before the server goes.
      if (this.outClosed) void this.close();
      else this.stdout.write('', () => void this.close());
      return;
    }
    if (this.graceTimer === undefined) {
      this.graceTimer = setTimeout(() => {
        this.warnings.warn(`stdin closed; ${this.slots.size + this.waiting.length} requests left unanswered after ${this.o.closeGraceMs ?? DEFAULT_CLOSE_GRACE_MS} ms`);
        void this.close();
      }, this.o.closeGraceMs ?? DEFAULT_CLOSE_GRACE_MS);
      this.graceTimer.unref();
    }
  }
}

/** An id the answer may carry: a string or an integer (MCP's `RequestId`); anything else is `null`. */
function validId(id: unknown): RequestId | null {
  return typeof id === 'string' || (typeof id === 'number' && Number.isInteger(id)) ? id : null;
}

function preview(v: unknown): string {
  const s = JSON.stringify(v) ?? String(v);
  return s.length > 80 ? `${s.slice(0, 80)}…` : s;
}
