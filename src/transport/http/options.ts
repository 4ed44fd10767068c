/** Options of the Streamable HTTP front, after parsing (`src/cli/listen-args.ts`) and defaults. */
import type { Writable } from 'node:stream';
import type { BearerTokens } from './tokens.js';

/** Everything {@link McpHttpServer} needs; every field is set (defaults live in `defaults.ts`). */
export interface HttpListenOptions {
  /** Address to bind; loopback unless given. */
  host: string;
  /** Port to bind; 0 picks a free one (the bound address is printed on stderr). */
  port: number;
  /** One transport per request, no sessions (`--stateless`). */
  stateless: boolean;
  /** Answer POSTs with a JSON body instead of an SSE stream (`--json-response`). */
  jsonResponse: boolean;
  /** Largest request body, in bytes (`--max-request-bytes`). */
  maxRequestBytes: number;
  /** Request bodies held at once, summed, in bytes (`--max-inflight-body-bytes`). */
  maxInflightBodyBytes: number;
  /** Host names allowed in `Host` besides the loopback names and the bound host (`--allow-host`). */
  allowHosts: string[];
  /** Origins allowed in `Origin` besides the loopback ones (`--allow-origin`). */
  allowOrigins: string[];
  /** Bearer tokens (`--token-file`); without them no token is asked for. */
  tokens?: BearerTokens;
  /** Close a session after this long without a request, in ms (`--session-idle-ms`). */
  sessionIdleMs: number;
  /** Sessions open at once (`--max-sessions`). */
  maxSessions: number;
  /** On SIGTERM/SIGINT, how long requests in flight may still take, in ms (`--shutdown-ms`). */
  shutdownGraceMs: number;
  /** Where the bound address, warnings and refusals are written. */
  stderr: Writable;
  /** Prefix of log lines (`mcp-budget serve`). */
  name: string;
}
