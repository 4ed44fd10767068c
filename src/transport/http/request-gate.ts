/**
 * What an HTTP request must pass before the MCP transport sees it: the `Host` and `Origin`
 * allow-lists (DNS rebinding: a page on a hostile name that resolves to 127.0.0.1 sends its own
 * name as `Host` and its own origin as `Origin`), and a request body read with a byte cap that is
 * checked on `Content-Length` first and then counted as the body streams, so an oversized body is
 * never held whole.
 */
import type { IncomingMessage } from 'node:http';

/** Names every loopback client may use for this server. */
export const LOOPBACK_NAMES: readonly string[] = ['localhost', '127.0.0.1', '[::1]'];

/** Is `host` (a bind address or a Host name, IPv6 with or without brackets) a loopback address? */
export function isLoopbackHost(host: string): boolean {
  const h = host.toLowerCase().replace(/^\[|\]$/g, '');
  return h === 'localhost' || h === '::1' || /^127\.\d+\.\d+\.\d+$/.test(h);
}

/** Is `host` a wildcard bind address (every interface)? */
export function isWildcardHost(host: string): boolean {
  const h = host.replace(/^\[|\]$/g, '');
  return h === '0.0.0.0' || h === '::' || h === '0:0:0:0:0:0:0:0';
}

/** A bind address as it appears in a URL or a Host header (IPv6 in brackets). */
export function urlHost(host: string): string {
  return host.includes(':') && !host.startsWith('[') ? `[${host}]` : host;
}

/** The allow-lists one server checks; built once the port is known. */
export interface AllowLists {
  /** Host names (lower case, IPv6 in brackets, no port) a `Host` header may carry. */
  hosts: ReadonlySet<string>;
  /** Exact origins (`scheme://host[:port]`, lower case) an `Origin` header may carry. */
  origins: ReadonlySet<string>;
}

/**
 * Default lists: the loopback names and the bound host (a wildcard bind adds nothing: its real
 * names must be given), plus what `--allow-host` and `--allow-origin` add. A `--allow-host` value
 * may carry a port; only the name is compared (rebinding is about the name).
 */
export function buildAllowLists(boundHost: string, port: number, extraHosts: readonly string[], extraOrigins: readonly string[]): AllowLists {
  const hosts = new Set<string>(LOOPBACK_NAMES);
  if (!isWildcardHost(boundHost)) hosts.add(urlHost(boundHost).toLowerCase());
  for (const h of extraHosts) hosts.add(hostName(h.toLowerCase()));
  const origins = new Set<string>();
  for (const h of hosts) {
    if (isLoopbackHost(h) || h === urlHost(boundHost).toLowerCase()) origins.add(`http://${h}:${port}`);
  }
  for (const o of extraOrigins) origins.add(o.toLowerCase().replace(/\/+$/, ''));
  return { hosts, origins };
}

/** The name part of a Host header value (`[::1]:8080` → `[::1]`, `a.example:443` → `a.example`). */
export function hostName(value: string): string {
  const v = value.trim().toLowerCase();
  if (v.startsWith('[')) {
    const end = v.indexOf(']');
    return end === -1 ? v : v.slice(0, end + 1);
  }
  const colon = v.indexOf(':');
  return colon === -1 ? v : v.slice(0, colon);
}

/** Why a request's headers are refused (403), or `undefined` when they pass. */
export function refusedHeaders(req: IncomingMessage, lists: AllowLists): string | undefined {
  const host = req.headers.host;
  if (host === undefined || host === '') return 'Forbidden: a Host header is required';
  if (!lists.hosts.has(hostName(host))) return `Forbidden: Host ${JSON.stringify(host.slice(0, 200))} is not allowed (--allow-host)`;
  const origin = req.headers.origin;
  if (origin !== undefined && !lists.origins.has(origin.toLowerCase().replace(/\/+$/, ''))) {
    return `Forbidden: Origin ${JSON.stringify(origin.slice(0, 200))} is not allowed (--allow-origin)`;
  }
  return undefined;
}

/** Result of {@link readCappedBody}. */
export type BodyRead = { ok: true; body: Buffer } | { ok: false; tooLarge: true; seenBytes: number } | { ok: false; tooLarge: false; error: Error };

/**
 * Read a request body of at most `maxBytes`. A `Content-Length` over the cap is refused before any
 * byte is read; otherwise bytes are counted as they arrive and reading stops at the first chunk
 * that passes the cap (what was read is dropped, the rest is not read here).
 */
export function readCappedBody(req: IncomingMessage, maxBytes: number): Promise<BodyRead> {
  const declared = req.headers['content-length'];
  if (declared !== undefined && Number(declared) > maxBytes) {
    return Promise.resolve({ ok: false, tooLarge: true, seenBytes: Number(declared) });
  }
  return new Promise((resolve) => {
    const chunks: Buffer[] = [];
    let total = 0;
    const done = (r: BodyRead): void => {
      req.off('data', onData);
      req.off('end', onEnd);
      req.off('error', onError);
      req.off('aborted', onAborted);
      resolve(r);
    };
    const onData = (chunk: Buffer): void => {
      total += chunk.length;
      if (total > maxBytes) {
        chunks.length = 0;
        req.pause();
        done({ ok: false, tooLarge: true, seenBytes: total });
        return;
      }
      chunks.push(chunk);
    };
    const onEnd = (): void => done({ ok: true, body: chunks.length === 1 ? chunks[0]! : Buffer.concat(chunks, total) });
    const onError = (e: Error): void => done({ ok: false, tooLarge: false, error: e });
    const onAborted = (): void => done({ ok: false, tooLarge: false, error: new Error('the client aborted the request') });
    req.on('data', onData);
    req.on('end', onEnd);
    req.on('error', onError);
    req.on('aborted', onAborted);
  });
}
