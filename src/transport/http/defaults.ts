/**
 * Every default of the Streamable HTTP front (`serve --listen`, `proxy --listen`), and serve's
 * stdio request cap, with its unit in the name. The CLI flags, their help, and the options of
 * {@link McpHttpServer} read them from here only.
 */

/** Host bound when `--listen` names only a port: loopback, never every interface. @default '127.0.0.1' */
export const DEFAULT_HTTP_HOST = '127.0.0.1';
/** The path the MCP endpoint answers on; every other path is 404. @default '/mcp' */
export const MCP_HTTP_PATH = '/mcp';
/**
 * Largest request body accepted, in bytes (`--max-request-bytes`): checked on `Content-Length`
 * first, then counted as the body streams, so an oversized body is never held. The MCP SDK's own
 * default is the same. @default 4 MiB
 */
export const DEFAULT_HTTP_MAX_REQUEST_BYTES = 4 * 1024 * 1024;
/**
 * Request bodies held in memory at once, summed over every connection, in bytes
 * (`--max-inflight-body-bytes`): a body reserves its `Content-Length` (or the per-body cap when it
 * has none) before any byte is read, and gives it back when its answer ends; a body that would pass
 * the sum is answered 503 with `Retry-After`, unread. @default 32 MiB (8 bodies at the 4 MiB cap)
 */
export const DEFAULT_HTTP_MAX_INFLIGHT_BODY_BYTES = 32 * 1024 * 1024;
/** Seconds a client is told to wait (`Retry-After`) when the in-flight body budget or the session cap is full. @default 1 */
export const RETRY_AFTER_S = 1;
/** How often the HTTP server checks the header and request timeouts, in ms (Node's default is 30 s late). @default 1000 */
export const TIMEOUT_CHECK_MS = 1000;
/** A session with no request for this long is closed and its state freed (`--session-idle-ms`). @default 600000 (10 min) */
export const DEFAULT_SESSION_IDLE_MS = 10 * 60 * 1000;
/** Sessions open at once (`--max-sessions`); an `initialize` over it is answered 503. @default 64 */
export const DEFAULT_MAX_SESSIONS = 64;
/** Client requests (and progress tokens) one proxy session relates server messages to, at most (relation.ts). */
export const MAX_RELATED_REQUESTS = 1024;
/**
 * On SIGTERM/SIGINT, requests in flight get this long to be answered before they are failed with
 * a JSON-RPC error (`--shutdown-ms`); the process exits 0 soon after. @default 5000
 */
export const DEFAULT_SHUTDOWN_GRACE_MS = 5000;
/** After an oversized body is refused, what the client still sends is discarded for at most this long, then the connection is cut. @default 2000 */
export const REFUSED_BODY_DRAIN_MS = 2000;
/** Shortest bearer token accepted in a token file, in characters (a guessable token is a config error). @default 16 */
export const MIN_TOKEN_CHARS = 16;
/** The HTTP server's timeouts, in ms: a client must send its headers within this long (slowloris). @default 10000 */
export const HEADERS_TIMEOUT_MS = 10_000;
/** A whole request (headers and body) must arrive within this long. @default 60000 */
export const REQUEST_TIMEOUT_MS = 60_000;
/** How long `proxy --upstream-url` waits at startup for any answer from the upstream, in ms. @default 5000 */
export const UPSTREAM_PROBE_MS = 5000;
/** JSON-RPC code of the answer given to a request the server could not finish because it is shutting down. */
export const SHUTTING_DOWN = -32000;
