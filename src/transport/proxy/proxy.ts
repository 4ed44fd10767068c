/**
 * `mcp-budget proxy -- COMMAND [ARGS...]`: spawn any stdio MCP server and bound every
 * `tools/call` result it returns. Framing is ours (linear, capped). Small server lines take a
 * `JSON.parse` fast path; a line over the fast-path size streams through the byte source, so
 * memory stays flat whatever the server writes, and the `id` may come last.
 *
 * Matching: a server response is matched to a pending client request the way the client could
 * match it (`RequestTable.match`: `"7"` answers request 7 for the SDK client), so every response
 * the client could accept for a `tools/call` is bounded; a response that answers nothing pending
 * (a duplicate, a late answer to a cancelled request, an unsolicited one) is dropped with a
 * warning. Oversized client messages are refused under their envelope's top-level id.
 *
 * Faults: the server exiting answers every request still waiting with a JSON-RPC error; the
 * client closing stdin asks the server to stop (SIGTERM, then SIGKILL after a grace period);
 * a closed stdout (EPIPE) ends quietly. Nothing is left running.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import type { Readable, Writable } from 'node:stream';
import { DEFAULT_FAST_PATH_BYTES, DEFAULT_MAX_MESSAGE_BYTES, DEFAULT_MAX_REQUEST_BYTES, type BudgetOptions } from '../../engine/index.js';
import { EnvelopeScanner } from '../core/envelope-scan.js';
import { errorLine, INVALID_REQUEST, refusalTarget, UPSTREAM_GONE } from '../core/jsonrpc-errors.js';
import { LineFramer } from '../core/line-framer.js';
import { LongServerLine } from './long-response.js';
import { ResponseBudget, type TruncationListener } from '../core/response-budget.js';
import { sharedContinuationStore, type ContinuationStore } from '../core/continuation-store.js';
import { ServerOutput } from './server-output.js';
import { isRegularFile, planSpawn, readSmallFile } from './spawn-command.js';
import { StderrWarnings } from '../../shared/warnings.js';
import { readPipe, type PipeReader } from '../../stream/pipe-reader.js';

/** A piece of a long server line is framed for at most about this long before the event loop gets a turn (ms). */
const LONG_TURN_MS = 4;

export interface ProxyOptions {
  command: string;
  args: string[];
  limits: BudgetOptions;
  /** Client→server lines over this are refused with a JSON-RPC error. @default 4 MiB */
  maxRequestBytes?: number;
  /** Server lines up to this size are parsed whole; larger ones stream. At least `maxMessageBytes`. @default 1 MiB */
  fastPathBytes?: number;
  /**
   * Every server message that is not a tool result (a request such as sampling, a notification, a
   * response to another method) passes whole up to this size; over it, it never reaches the client
   * (specs/threat-model.md, "Every message bounded"). @default 1 MiB
   */
  maxMessageBytes?: number;
  /** After asking the server to stop, wait this long before killing it. @default 2000 */
  killGraceMs?: number;
  stdin: Readable;
  stdout: Writable;
  stderr: Writable;
  env?: NodeJS.ProcessEnv;
  /** Called for every response the budget changed (`--log-cuts`). */
  onTruncated?: TruncationListener;
  /**
   * Where a cut result's original is kept so that the client can read the cut parts through the
   * reading tool (answered by the proxy, never passed to the server), or `false` for none. Only
   * results parsed whole (up to the fast-path size) get a continuation; a line streamed through the
   * byte budget is not held. @default the process's store, default settings
   */
  continuation?: ContinuationStore | false;
  /** Stop the server on this process's SIGINT, SIGTERM and SIGHUP (off when an embedder runs many proxies and stops them itself). @default true */
  handleSignals?: boolean;
}

export { DEFAULT_FAST_PATH_BYTES, DEFAULT_MAX_MESSAGE_BYTES, DEFAULT_MAX_REQUEST_BYTES };

/** Run the proxy until the server exits; resolves with the exit code to use. */
export function runProxy(opts: ProxyOptions): Promise<number> {
  return new Promise((resolve) => new Proxy(opts, resolve).start());
}

class Proxy {
  private child!: ChildProcess;
  /** Every client request forwarded and not yet answered is remembered in `budget.pending`. */
  private readonly budget: ResponseBudget;
  private clientClosed = false;
  private outClosed = false;
  private killTimer: NodeJS.Timeout | undefined;
  private finished = false;
  /** The proxy asked the server to stop: a line it leaves unfinished is expected. */
  private stopping = false;
  private readonly name: string;
  private readonly output: ServerOutput;
  /** A peer decides how many warnings there are: dropped and counted while stderr does not drain. */
  private readonly warnings: StderrWarnings;
  /** The server's stdout, read into one reused buffer (`readPipe`). */
  private fromServer: PipeReader | undefined;
  /** Reasons the server's output is not read now (see {@link holdServer}). */
  private serverHolds = 0;
  /** Waiting for the client's stdout to drain; the server's stdout is paused meanwhile. */
  private clientFull = false;
  /** The rest of a server piece a long line paused in (framed in a later turn; reading is paused). */
  private framing: Buffer | undefined;
  /** The server's stdout ended (or failed): every line it wrote has been handled. */
  private onServerEnd: () => void = () => undefined;

  constructor(
    private readonly o: ProxyOptions,
    private readonly done: (code: number) => void,
  ) {
    const store = o.continuation === false ? undefined : (o.continuation ?? sharedContinuationStore());
    this.budget = new ResponseBudget(o.limits, o.onTruncated, undefined, o.maxMessageBytes ?? DEFAULT_MAX_MESSAGE_BYTES, store);
    this.warnings = new StderrWarnings(o.stderr, 'mcp-budget proxy');
    this.name = [o.command, ...o.args].join(' ').slice(0, 200);
    this.output = new ServerOutput({
      budget: this.budget,
      toClient: (data) => this.sendToClient(data),
      hold: (on) => this.holdServer(on),
      toServer: (line) => void this.child.stdin?.write(line),
      warn: (text) => this.warn(text),
      quiet: () => this.stopping,
    });
  }

  start(): void {
    const o = this.o;
    try {
      const env = o.env ?? process.env;
      const plan = planSpawn({ command: o.command, args: o.args, env, platform: process.platform, cwd: process.cwd(), isFile: isRegularFile, readText: readSmallFile });
      // The server's stderr is piped, not inherited: a child given our descriptor 2 makes it
      // blocking for both processes, and a stderr nobody reads would then stall the proxy.
      this.child = spawn(plan.file, plan.args, { ...plan.options, stdio: ['pipe', 'pipe', 'pipe'], env: plan.env });
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
    // Passed on with backpressure: while our stderr does not drain, the server's waits.
    child.stderr!.on('error', () => undefined);
    child.stderr!.pipe(o.stderr, { end: false });
    this.wireClientToServer();
    let stdoutEnded = false;
    let exit: { code: number | null; signal: NodeJS.Signals | null } | undefined;
    const settle = (): void => {
      if (!stdoutEnded || exit === undefined) return;
      const { code, signal } = exit;
      const how = signal !== null ? `was killed by ${signal}` : `exited with code ${code}`;
      if (this.budget.pending.size > 0) {
        this.answerInflight(`The MCP server \`${this.name}\` ${how} before answering this request.`);
      }
      if (!this.clientClosed) this.warn(`the MCP server \`${this.name}\` ${how}`);
      this.finish(this.clientClosed && signal !== 'SIGKILL' ? 0 : code !== 0 || signal !== null ? 1 : 0);
    };
    this.onServerEnd = () => {
      stdoutEnded = true;
      settle();
    };
    child.on('exit', (code, signal) => {
      exit = { code, signal };
      if (this.killTimer !== undefined) clearTimeout(this.killTimer);
      settle();
    });
    this.wireServerToClient();
    if (o.handleSignals === false) return;
    for (const sig of ['SIGINT', 'SIGTERM', 'SIGHUP'] as const) {
      process.once(sig, () => this.stopServer(sig));
    }
  }

  // ------------------------------------------------------------ client → server

  private wireClientToServer(): void {
    const o = this.o;
    const toServer = this.child.stdin!;
    const max = o.maxRequestBytes ?? DEFAULT_MAX_REQUEST_BYTES;
    let scanner: EnvelopeScanner | undefined;
    /** Waiting for the server's stdin to drain (one wait at a time: a chunk may hold many lines). */
    let serverFull = false;
    const framer = new LineFramer(max, {
      line: (line) => {
        const bytes = this.noteRequest(line);
        if (bytes === undefined) return;
        if (!toServer.write(Buffer.concat([bytes, NEWLINE])) && !serverFull) {
          serverFull = true;
          o.stdin.pause();
          toServer.once('drain', () => {
            serverFull = false;
            o.stdin.resume();
          });
        }
      },
      // An oversized message is never held: only its top level is scanned for the id.
      long: {
        start: () => (scanner = new EnvelopeScanner(max)),
        chunk: (bytes) => {
          if (scanner !== undefined && !scanner.done) scanner.push(bytes);
        },
        end: (total) => {
          const facts = scanner!.end();
          const target = refusalTarget(facts);
          scanner = undefined;
          const what = `a client message of ${total} bytes (over --max-request-bytes ${max})`;
          if (target.answer) {
            this.warn(`refused ${what}`);
            this.sendToClient(errorLine(target.id, INVALID_REQUEST, `Message of more than ${max} bytes refused by mcp-budget proxy; raise --max-request-bytes to allow it.`));
          } else {
            this.warn(`dropped ${what}: a ${target.kind}, which gets no answer`);
            if (target.kind === 'response' && facts.idState === 'value') {
              // The server's request must not wait forever for an answer that will never pass.
              this.child.stdin?.write(errorLine(facts.id!, INVALID_REQUEST, `mcp-budget proxy: the client's response of ${total} bytes is over --max-request-bytes ${max}`));
            }
          }
        },
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

  /**
   * Remember a client line's requests, and answer its calls of the reading tool here (never passed
   * on: a handle is this session's). Returns what goes on to the server: the line, the rest of a
   * batch without those calls (their answers come back as a batch of their own), or nothing.
   */
  private noteRequest(bytes: Buffer): Buffer | undefined {
    let msg: unknown;
    try {
      msg = JSON.parse(bytes.toString('utf8'));
    } catch {
      return bytes; // the server answers a parse error itself
    }
    if (!Array.isArray(msg)) {
      const local = this.budget.answerLocally(msg);
      if (local !== undefined) {
        void local.then((answer) => this.sendToClient(JSON.stringify(answer) + '\n'), (e: unknown) => this.readFailed(e));
        return undefined;
      }
      this.budget.inbound(msg);
      return bytes;
    }
    const answers: Promise<unknown>[] = [];
    const rest: unknown[] = [];
    for (const m of msg) {
      const local = this.budget.answerLocally(m);
      if (local !== undefined) answers.push(local);
      else {
        this.budget.inbound(m);
        rest.push(m);
      }
    }
    if (answers.length > 0) void Promise.all(answers).then((all) => this.sendToClient(JSON.stringify(all) + '\n'), (e: unknown) => this.readFailed(e));
    if (answers.length === 0) return bytes;
    return rest.length === 0 ? undefined : Buffer.from(JSON.stringify(rest));
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
    let long: LongServerLine | undefined;
    // A line the fast path parses whole may be any message; a longer one is over the cap on
    // messages that are not tool results, so the streamed path need hold none of it.
    const fastPath = Math.max(this.o.fastPathBytes ?? DEFAULT_FAST_PATH_BYTES, this.budget.maxMessageBytes);
    const framer = new LineFramer(fastPath, {
      line: (bytes) => this.output.line(bytes),
      long: {
        // An id longer than any client message cannot answer a request: it is not held. The
        // structure's scalar members are captured only while a typed call is pending (the line's
        // id may come last): a mutation's receipt, and what the typed policy needs after a cut.
        start: () =>
          (long = new LongServerLine(
            this.budget.streamLimits(),
            this.o.maxRequestBytes ?? DEFAULT_MAX_REQUEST_BYTES,
            this.budget.typedPending(),
            this.budget.spillWriter((text) => this.warn(text)),
            (text) => this.warn(text),
          )),
        chunk: (bytes) => long!.chunk(bytes),
        end: (total) => {
          const l = long!;
          long = undefined;
          this.output.longLine(l, total);
        },
        yield: () => performance.now() - since > LONG_TURN_MS,
      },
    });
    // A long line gives the event loop a turn once a piece has been framed for LONG_TURN_MS (the
    // first long line, cold, held it for 20-70 ms): the reader stays paused meanwhile, so the piece
    // stays valid, and its rest is framed in the next turn.
    let since = 0;
    const frame = (bytes: Buffer): void => {
      const took = framer.push(bytes);
      if (took === bytes.length && !framer.pending) {
        this.framing = undefined;
        return;
      }
      this.framing = bytes.subarray(took);
      this.fromServer!.pause();
      setImmediate(() => {
        since = performance.now();
        const rest = this.framing;
        if (rest === undefined) return; // the server's output ended meanwhile
        frame(rest);
        if (this.framing === undefined && this.serverHolds === 0) this.fromServer?.resume();
      });
    };
    // Pieces of up to 256 KiB, handed on when a read ends a line and empties the socket, or once the
    // reads ready in this turn are done (a message must not wait for more bytes); the framer copies
    // what it holds, the scanners copy what they keep.
    const done = (): void => {
      const rest = this.framing;
      this.framing = undefined;
      if (rest !== undefined) framer.push(rest, false);
      framer.end();
      this.onServerEnd();
    };
    const piece = (bytes: Buffer): void => {
      since = performance.now();
      frame(bytes);
    };
    this.fromServer = readPipe(fromServer, { piece, end: done, error: done }, { flush: 'lines' });
    this.o.stdout.on('error', (e: NodeJS.ErrnoException) => {
      // The client went away (EPIPE): nobody is left to answer; stop quietly.
      this.outClosed = true;
      if (e.code !== 'EPIPE') this.warn(`cannot write to the client: ${e.message}`);
      this.clientClosed = true;
      // A failed output never drains: what it held is let go, so the server's end is still read.
      if (this.clientFull) {
        this.clientFull = false;
        this.holdServer(false);
      }
      this.stopServer('SIGTERM'); // nobody can read the answers any more: no point waiting
    });
  }

  // ------------------------------------------------------------ output and faults

  /** A read of a continuation that failed outside its own errors (each of which is answered). */
  private readFailed(e: unknown): void {
    this.warn(`a read of a continuation failed: ${(e as Error)?.message ?? String(e)}`);
  }

  private sendToClient(data: string | Buffer): void {
    if (this.outClosed) return;
    // One wait for 'drain' at a time: a piece read from the server may hold many lines.
    if (!this.o.stdout.write(data) && !this.clientFull) {
      this.clientFull = true;
      this.holdServer(true);
      this.o.stdout.once('drain', () => {
        this.clientFull = false;
        this.holdServer(false);
      });
    }
  }

  /** Stop reading the server while anything holds it (the client is full, an answer ahead is being made), and read on once nothing does. */
  private holdServer(on: boolean): void {
    this.serverHolds += on ? 1 : -1;
    if (on && this.serverHolds === 1) this.fromServer?.pause();
    else if (!on && this.serverHolds === 0 && this.framing === undefined) this.fromServer?.resume(); // else once the piece is framed
  }

  private answerInflight(message: string): void {
    for (const id of this.budget.pending.ids()) this.sendToClient(errorLine(id, UPSTREAM_GONE, message));
    this.budget.pending.clear();
  }

  private warn(text: string): void {
    this.warnings.warn(text);
  }

  private finish(code: number): void {
    if (this.finished) return;
    this.finished = true;
    // The session is over: its continuation handles end with it.
    this.budget.close();
    if (this.killTimer !== undefined) clearTimeout(this.killTimer);
    // The server is done: what it still writes to stderr is no longer passed on.
    const serverErr = this.child?.stderr;
    if (serverErr !== undefined && serverErr !== null) {
      serverErr.unpipe(this.o.stderr);
      serverErr.destroy();
    }
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
