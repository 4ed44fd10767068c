/**
 * JSON-RPC error answers written by the proxy and by `serve`'s transport, and their codes.
 * -32700 and -32600 are JSON-RPC's; -32000..-32099 is its range for implementation errors.
 */
import type { EnvelopeFacts } from './envelope-scan.js';
import type { RequestId } from './request-ids.js';

export const PARSE_ERROR = -32700;
export const INVALID_REQUEST = -32600;
/** The upstream server is gone (or could not start) before answering. */
export const UPSTREAM_GONE = -32000;
/** A response too large to pass and not a tool result: withheld. */
export const RESPONSE_TOO_LARGE = -32001;

/** One error response as a line. */
export function errorLine(id: RequestId | null, code: number, message: string): string {
  return JSON.stringify({ jsonrpc: '2.0', id, error: { code, message } }) + '\n';
}

/**
 * What to do with a line refused for its size, from its top level: a request (or anything that
 * cannot be classified) is answered with an error under its id, or `null` when the id cannot be
 * read; a notification or a response is never answered (JSON-RPC forbids it), only reported.
 */
export function refusalTarget(facts: EnvelopeFacts): { answer: true; id: RequestId | null } | { answer: false; kind: 'notification' | 'response' } {
  if (facts.shape === 'object') {
    if (facts.hasMethod && facts.idState === 'absent') return { answer: false, kind: 'notification' };
    if (!facts.hasMethod && (facts.hasResult || facts.hasError) && facts.idState !== 'absent') return { answer: false, kind: 'response' };
  }
  return { answer: true, id: facts.shape === 'object' && facts.idState === 'value' ? facts.id! : null };
}
