/**
 * `McpHttpServer`: the Streamable HTTP front of `serve --listen` and `proxy --listen`, on the MCP
 * SDK's `StreamableHTTPServerTransport`. It owns what the SDK leaves to the application: where it
 * listens (loopback by default), the `Host`/`Origin` allow-lists (403), bearer tokens mapped to a
 * member (401), the request-body cap (413, never buffered whole), sessions with a cap and idle
 * expiry (or one transport per request when stateless), and a graceful shutdown that answers or
 * fails every request in flight.
 *
 * Order of checks on every request: shutting down (503), path (404), Host and Origin (403),
 * token (401), then by method: POST bodies are read with the cap and parsed here, and the parsed
 * body is handed to the SDK transport with the caller's auth info (`extra.authInfo` in handlers).
 */
import { randomUUID } from 'node:crypto';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { StreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/streamableHttp.js';
import type { AuthInfo } from '@modelcontextprotocol/sdk/server/auth/types.js';
import { StderrWarnings, warningText } from '../../shared/warnings.js';
import { AnswerTracker } from './answer-tracker.js';
import { HEADERS_TIMEOUT_MS, MCP_HTTP_PATH, REFUSED_BODY_DRAIN_MS, REQUEST_TIMEOUT_MS, RETRY_AFTER_S, SHUTTING_DOWN, TIMEOUT_CHECK_MS } from './defaults.js';
import { buildAllowLists, readCappedBody, refusedHeaders, urlHost, type AllowLists } from './request-gate.js';
import { SessionTable, type HttpSession } from './sessions.js';
import type { HttpListenOptions } from './options.js';
import { sendJsonError } from './responses.js';

/**
 * What the HTTP front serves: given a fresh SDK transport (one per session, or one per request
 * when stateless), connect it to its own server-side state and resolve with what frees it.
 */
export interface McpHttpApp {
  connect(transport: StreamableHTTPServerTransport, stateless: boolean): Promise<() => Promise<void>>;
}

/** A Streamable HTTP server in front of an {@link McpHttpApp}. */
export class McpHttpServer {
  private readonly http: Server;
  private readonly sessions: SessionTable;
  /** POST requests being handled now, with the tracker of their transport. */
  private readonly inflight = new Map<ServerResponse, AnswerTracker>();
  /** Bytes of request bodies reserved now, over every connection (`maxInflightBodyBytes`). */
  private bodyBytes = 0;
  private lists: AllowLists | undefined;
  private stopping = false;
  /** Clients decide how many lines are logged: dropped and counted while stderr does not drain. */
  private readonly warnings: StderrWarnings;

  constructor(
    private readonly app: McpHttpApp,
    private readonly o: HttpListenOptions,
  ) {
    this.warnings = new StderrWarnings(o.stderr, o.name);
    this.sessions = new SessionTable({
      idleMs: o.sessionIdleMs,
      maxSessions: o.maxSessions,
      onExpired: (id) => this.log(`session ${id} expired after ${o.sessionIdleMs} ms idle`),
    });
    // The timeouts are checked every TIMEOUT_CHECK_MS (Node's default interval would let them run 30 s late).
    this.http = createServer({ headersTimeout: HEADERS_TIMEOUT_MS, requestTimeout: REQUEST_TIMEOUT_MS, connectionsCheckingInterval: TIMEOUT_CHECK_MS }, (req, res) => {
      this.route(req, res).catch((e: unknown) => {
        this.log(`internal error: ${warningText((e as Error)?.message ?? String(e))}`);
        if (!res.headersSent) sendJsonError(res, 500, -32603, 'Internal error');
        else res.destroy();
      });
    });
  }

  /** Listen; resolves with the bound URL of the MCP endpoint. */
  async listen(): Promise<URL> {
    await new Promise<void>((resolve, reject) => {
      this.http.once('error', reject);
      this.http.listen(this.o.port, this.o.host, () => {
        this.http.off('error', reject);
        resolve();
      });
    });
    const port = (this.http.address() as AddressInfo).port;
    this.lists = buildAllowLists(this.o.host, port, this.o.allowHosts, this.o.allowOrigins);
    return new URL(`http://${urlHost(this.o.host)}:${port}${MCP_HTTP_PATH}`);
  }

  /** Open sessions (for tests and diagnostics). */
  get sessionCount(): number {
    return this.sessions.size;
  }

  /**
   * Stop accepting, give requests in flight `graceMs` to be answered, answer the rest with a
   * JSON-RPC error, close every session and every connection.
   */
  async shutdown(graceMs: number): Promise<void> {
    if (this.stopping) return;
    this.stopping = true;
    this.http.close();
    this.http.closeIdleConnections();
    const deadline = Date.now() + graceMs;
    while (this.inflight.size > 0 && Date.now() < deadline) await sleep(Math.min(25, Math.max(1, deadline - Date.now())));
    const trackers = new Set([...this.inflight.values(), ...this.sessions.trackers()]);
    for (const t of trackers) await t.failPending(SHUTTING_DOWN, 'Server shutting down: the request was not finished; retry it on another server.');
    await this.sessions.closeAll();
    // Let the failures reach the sockets before they are cut.
    const flushed = Date.now() + 500;
    while (this.inflight.size > 0 && Date.now() < flushed) await sleep(10);
    this.http.closeAllConnections();
  }

  // ------------------------------------------------------------ routing

  private async route(req: IncomingMessage, res: ServerResponse): Promise<void> {
    if (this.stopping) {
      res.setHeader('Connection', 'close');
      sendJsonError(res, 503, SHUTTING_DOWN, 'Server shutting down');
      return;
    }
    const path = (req.url ?? '/').split('?')[0];
    if (path !== MCP_HTTP_PATH) {
      sendJsonError(res, 404, -32000, `Not found: the MCP endpoint is ${MCP_HTTP_PATH}`);
      return;
    }
    const refused = refusedHeaders(req, this.lists!);
    if (refused !== undefined) {
      this.log(`refused a request: ${refused}`);
      sendJsonError(res, 403, -32000, refused);
      return;
    }
    let auth: AuthInfo | undefined;
    if (this.o.tokens !== undefined) {
      auth = this.o.tokens.authenticate(req.headers.authorization);
      if (auth === undefined) {
        const had = req.headers.authorization !== undefined;
        res.setHeader('WWW-Authenticate', had ? 'Bearer realm="mcp-budget", error="invalid_token"' : 'Bearer realm="mcp-budget"');
        sendJsonError(res, 401, -32000, had ? 'Unauthorized: unknown bearer token' : 'Unauthorized: an `Authorization: Bearer TOKEN` header is required');
        return;
      }
      (req as IncomingMessage & { auth?: AuthInfo }).auth = auth;
    }
    if (req.method === 'POST') return this.post(req, res);
    if (req.method === 'GET' || req.method === 'DELETE') return this.sessionRequest(req, res);
    res.setHeader('Allow', this.o.stateless ? 'POST' : 'GET, POST, DELETE');
    sendJsonError(res, 405, -32000, 'Method not allowed.');
  }

  /** The caller's principal: the token fingerprint, or `undefined` without tokens. */
  private principal(req: IncomingMessage): string | undefined {
    return (req as IncomingMessage & { auth?: AuthInfo }).auth?.token;
  }

  /**
   * Reserve a body's bytes under the process-wide budget before reading it: its `Content-Length`,
   * or the per-body cap when it declares none. False when the budget is full (the body is not read).
   * The reservation is given back when the answer ends.
   */
  private reserveBody(req: IncomingMessage, res: ServerResponse): boolean {
    const declared = Number(req.headers['content-length']);
    const bytes = Number.isSafeInteger(declared) && declared >= 0 ? Math.min(declared, this.o.maxRequestBytes) : this.o.maxRequestBytes;
    if (this.bodyBytes + bytes > this.o.maxInflightBodyBytes) return false;
    this.bodyBytes += bytes;
    res.once('close', () => {
      this.bodyBytes -= bytes;
    });
    return true;
  }

  private async post(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const declared = Number(req.headers['content-length']);
    if (!(declared > this.o.maxRequestBytes) && !this.reserveBody(req, res)) {
      this.log(`refused a request body: ${this.bodyBytes} bytes of bodies are held (--max-inflight-body-bytes ${this.o.maxInflightBodyBytes})`);
      res.setHeader('Retry-After', String(RETRY_AFTER_S));
      this.refuseBody(req, res, 503, -32000, `Service unavailable: request bodies in memory are at --max-inflight-body-bytes (${this.o.maxInflightBodyBytes} bytes); retry in ${RETRY_AFTER_S} s`);
      return;
    }
    const read = await readCappedBody(req, this.o.maxRequestBytes);
    if (!read.ok) {
      if (!read.tooLarge) {
        res.destroy();
        return;
      }
      this.log(`refused a request body of ${read.seenBytes}+ bytes (over --max-request-bytes ${this.o.maxRequestBytes})`);
      this.refuseBody(req, res, 413, -32600, `Payload Too Large: the request body is over ${this.o.maxRequestBytes} bytes (--max-request-bytes)`);
      return;
    }
    let body: unknown;
    try {
      body = JSON.parse(read.body.toString('utf8'));
    } catch {
      sendJsonError(res, 400, -32700, 'Parse error: Invalid JSON');
      return;
    }
    if (this.o.stateless) return this.postStateless(req, res, body);
    const sid = req.headers['mcp-session-id'];
    if (typeof sid === 'string') {
      // Another principal's session is answered as if it did not exist.
      const session = this.sessions.get(sid, this.principal(req));
      if (session === undefined) {
        sendJsonError(res, 404, -32001, 'Session not found');
        return;
      }
      return this.handle(session, req, res, body);
    }
    if (!isInitialize(body)) {
      sendJsonError(res, 400, -32000, 'Bad Request: Mcp-Session-Id header is required');
      return;
    }
    // Taken before the first await: concurrent initializes cannot pass the cap together.
    const place = this.sessions.reserve();
    if (place === undefined) {
      res.setHeader('Retry-After', String(RETRY_AFTER_S));
      sendJsonError(res, 503, -32000, `Service unavailable: ${this.o.maxSessions} sessions are open (--max-sessions)`);
      return;
    }
    try {
      await this.openSession(req, res, body, place);
    } finally {
      place.cancel(); // no-op once the session was added
    }
  }

  private async openSession(req: IncomingMessage, res: ServerResponse, body: unknown, place: { add(session: HttpSession): void }): Promise<void> {
    let session: HttpSession | undefined;
    const transport = new StreamableHTTPServerTransport({
      sessionIdGenerator: () => randomUUID(),
      enableJsonResponse: this.o.jsonResponse,
      onsessioninitialized: (id) => {
        session!.id = id;
        place.add(session!);
      },
      // DELETE: the SDK closes the transport right after.
      onsessionclosed: (id) => void this.sessions.close(id),
    });
    const tracker = new AnswerTracker(transport);
    const release = await this.app.connect(transport, false);
    session = { id: '', transport, tracker, release, principal: this.principal(req), active: 0, lastActiveMs: Date.now() };
    await this.handle(session, req, res, body);
    if (transport.sessionId === undefined) {
      // The initialize was refused: no session was made.
      await transport.close().catch(() => undefined);
      await release();
    }
  }

  private async handle(session: HttpSession, req: IncomingMessage, res: ServerResponse, body: unknown): Promise<void> {
    const done = this.sessions.begin(session);
    session.tracker.noteBody(body);
    this.inflight.set(res, session.tracker);
    res.once('close', () => {
      this.inflight.delete(res);
      done();
    });
    await session.transport.handleRequest(req, res, body);
  }

  /**
   * A stateless request is a session for as long as it runs (its own server and transport): it
   * holds a place of `--max-sessions`, taken before the first await and given back when its answer
   * ends, so concurrent requests cannot build servers (and start work) without bound.
   */
  private async postStateless(req: IncomingMessage, res: ServerResponse, body: unknown): Promise<void> {
    const place = this.sessions.reserve();
    if (place === undefined) {
      res.setHeader('Retry-After', String(RETRY_AFTER_S));
      sendJsonError(res, 503, -32000, `Service unavailable: ${this.o.maxSessions} requests are being served (--max-sessions)`);
      return;
    }
    res.once('close', () => place.cancel()); // idempotent
    try {
      const transport = new StreamableHTTPServerTransport({ sessionIdGenerator: undefined, enableJsonResponse: this.o.jsonResponse });
      const tracker = new AnswerTracker(transport);
      const release = await this.app.connect(transport, true);
      tracker.noteBody(body);
      this.inflight.set(res, tracker);
      res.once('close', () => {
        this.inflight.delete(res);
        void transport.close().then(release, release);
      });
      await transport.handleRequest(req, res, body);
    } catch (e) {
      place.cancel();
      throw e;
    }
  }

  /** GET (the session's SSE stream) and DELETE (end the session). */
  private async sessionRequest(req: IncomingMessage, res: ServerResponse): Promise<void> {
    if (this.o.stateless) {
      res.setHeader('Allow', 'POST');
      sendJsonError(res, 405, -32000, 'Method not allowed: this server is stateless (POST only)');
      return;
    }
    const sid = req.headers['mcp-session-id'];
    const session = typeof sid === 'string' ? this.sessions.get(sid, this.principal(req)) : undefined;
    if (session === undefined) {
      if (typeof sid === 'string') sendJsonError(res, 404, -32001, 'Session not found');
      else sendJsonError(res, 400, -32000, 'Bad Request: Mcp-Session-Id header is required');
      return;
    }
    // An open GET stream is not activity: a client that only listens still expires when idle.
    session.lastActiveMs = Date.now();
    await session.transport.handleRequest(req, res);
  }

  /**
   * A refusal of a body that is not read (413 too large, 503 over the in-flight budget) with a
   * JSON-RPC error, and the connection closed after it. What the client still sends is
   * discarded (never held) until its end or for a short while, and only then is the answer sent:
   * Node closes a `Connection: close` socket once the response ends, and a client still writing its
   * body would see EPIPE instead of the 413. Past the drain time the answer goes anyway and the
   * socket is cut.
   */
  private refuseBody(req: IncomingMessage, res: ServerResponse, status: number, code: number, message: string): void {
    let answered = false;
    const answer = (): void => {
      if (answered) return;
      answered = true;
      res.setHeader('Connection', 'close');
      sendJsonError(res, status, code, message);
    };
    const cut = setTimeout(() => {
      answer();
      setTimeout(() => req.socket.destroy(), REFUSED_BODY_DRAIN_MS).unref();
    }, REFUSED_BODY_DRAIN_MS);
    cut.unref();
    req.once('end', () => {
      clearTimeout(cut);
      answer();
    });
    req.once('error', () => req.socket.destroy());
    if (req.readableEnded) answer();
    else req.resume();
  }

  private log(text: string): void {
    this.warnings.warn(text);
  }
}

function isInitialize(body: unknown): boolean {
  const first = Array.isArray(body) ? (body.length === 1 ? body[0] : undefined) : body;
  return (first as { method?: unknown } | null)?.method === 'initialize';
}

function sleep(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}
