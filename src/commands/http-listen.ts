/**
 * Runs an {@link McpHttpApp} behind the Streamable HTTP front until SIGTERM or SIGINT: loads the
 * token file, warns when the address is reachable from other hosts, prints the bound URL on
 * stderr (`… listening on http://127.0.0.1:PORT/mcp`, which tests and scripts read), and shuts
 * down gracefully.
 */
import type { Writable } from 'node:stream';
import type { ListenArgs } from '../cli/listen-args.js';
import { DEFAULT_HTTP_MAX_REQUEST_BYTES } from '../transport/http/defaults.js';
import { McpHttpServer, type McpHttpApp } from '../transport/http/http-server.js';
import type { HttpListenOptions } from '../transport/http/options.js';
import { isLoopbackHost, isWildcardHost } from '../transport/http/request-gate.js';
import { BearerTokens } from '../transport/http/tokens.js';

/** `args` with `--listen` given. */
export type ListeningArgs = ListenArgs & { listen: NonNullable<ListenArgs['listen']> };

/** The front's options from the parsed flags (the token file is read and checked here). */
export async function httpOptionsFrom(args: ListeningArgs, name: string, stderr: Writable): Promise<HttpListenOptions> {
  return {
    host: args.listen.host,
    port: args.listen.port,
    stateless: args.stateless,
    jsonResponse: args.jsonResponse,
    maxRequestBytes: args.maxRequestBytes ?? DEFAULT_HTTP_MAX_REQUEST_BYTES,
    maxInflightBodyBytes: args.maxInflightBodyBytes,
    allowHosts: args.allowHosts,
    allowOrigins: args.allowOrigins,
    tokens: args.tokenFile === undefined ? undefined : await BearerTokens.fromFile(args.tokenFile),
    sessionIdleMs: args.sessionIdleMs,
    maxSessions: args.maxSessions,
    shutdownGraceMs: args.shutdownGraceMs,
    stderr,
    name,
  };
}

/** Listen, serve until SIGTERM/SIGINT, shut down; resolves with the exit code (0). */
export async function runHttpListener(app: McpHttpApp, options: HttpListenOptions, onClosed?: () => Promise<void>): Promise<number> {
  const { stderr, name, host } = options;
  if (!isLoopbackHost(host)) {
    const how = isWildcardHost(host) ? 'every network interface' : `the address ${host}`;
    const auth = options.tokens === undefined ? ' with NO authentication (use --token-file)' : '';
    stderr.write(`${name}: WARNING: listening on ${how}: reachable from other hosts${auth}. Put TLS in front of it (a reverse proxy).\n`);
  }
  const server = new McpHttpServer(app, options);
  const url = await server.listen();
  stderr.write(`${name}: listening on ${url.href}${options.stateless ? ' (stateless)' : ''}\n`);
  await new Promise<void>((resolve) => {
    const stop = (signal: NodeJS.Signals): void => {
      process.off('SIGTERM', stop);
      process.off('SIGINT', stop);
      stderr.write(`${name}: ${signal}: shutting down (up to ${options.shutdownGraceMs} ms for requests in flight)\n`);
      void server.shutdown(options.shutdownGraceMs).then(resolve, resolve);
    };
    process.on('SIGTERM', stop);
    process.on('SIGINT', stop);
  });
  await onClosed?.();
  stderr.write(`${name}: stopped\n`);
  return 0;
}
