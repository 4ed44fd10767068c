/**
 * JSON-RPC error answers written by the proxy and by `serve`'s transport, their codes, and how a
 * message is classified by its top-level keys. -32700, -32600 and -32603 are JSON-RPC's;
 * -32000..-32099 is its range for implementation errors.
 */
import type { EnvelopeFacts } from './envelope-scan.js';
import type { RequestId } from './request-ids.js';

export const PARSE_ERROR = -32700;
export const INVALID_REQUEST = -32600;
/** The upstream server answered a request with something that is not a valid response. */
export const INTERNAL_ERROR = -32603;
/** The upstream server is gone (or could not start) before answering. */
export const UPSTREAM_GONE = -32000;
/** A response too large to pass and not a tool result: withheld. */
export const RESPONSE_TOO_LARGE = -32001;

/** One error response as a line. */
export function errorLine(id: RequestId | null, code: number, message: string): string {
  return JSON.stringify(errorMessage(id, code, message)) + '\n';
}

/** One error response as an object. */
export function errorMessage(id: RequestId | null, code: number, message: string): { jsonrpc: '2.0'; id: RequestId | null; error: { code: number; message: string } } {
  return { jsonrpc: '2.0', id, error: { code, message } };
}

/** What a message is, from all of its top-level keys (never from the first one alone). */
export type MessageKind = 'request' | 'notification' | 'response' | 'invalid';

/** The top-level keys that classify a message. */
export interface MessageKeys {
  hasMethod: boolean;
  hasResult: boolean;
  hasError: boolean;
  hasId: boolean;
}

/**
 * A message with `result` or `error` is a response whatever else it holds, unless it also has a
 * `method` (both a request and a response) or has both `result` and `error`: then, like a
 * message with none of these keys, it is invalid. Which keys are present decides, not their
 * values: `"method": null` next to a `result` still makes the message invalid, because a lenient
 * client may take it for a response and another for a request.
 */
export function classifyKeys(k: MessageKeys): MessageKind {
  const answers = k.hasResult || k.hasError;
  if (k.hasMethod) return answers ? 'invalid' : k.hasId ? 'request' : 'notification';
  if (k.hasResult && k.hasError) return 'invalid';
  return answers ? 'response' : 'invalid';
}

/** {@link classifyKeys} for a parsed message (anything but a plain object is invalid). */
export function classifyMessage(m: unknown): MessageKind {
  if (m === null || typeof m !== 'object' || Array.isArray(m)) return 'invalid';
  return classifyKeys({ hasMethod: 'method' in m, hasResult: 'result' in m, hasError: 'error' in m, hasId: 'id' in m });
}

/** {@link classifyKeys} for a scanned line (a line that is not one JSON object is invalid). */
export function classifyEnvelope(facts: EnvelopeFacts): MessageKind {
  if (facts.shape !== 'object' || facts.broken) return 'invalid';
  return classifyKeys({ ...facts, hasId: facts.idState !== 'absent' });
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
