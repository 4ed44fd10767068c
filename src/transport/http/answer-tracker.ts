/**
 * Requests a Streamable HTTP server transport has received and not yet answered, so that a
 * shutdown can answer each of them with a JSON-RPC error instead of cutting the stream.
 * It wraps the transport's `send` (the server and the result budget send through it) and is told
 * of each request as the HTTP layer parses it.
 */
import type { Transport } from '@modelcontextprotocol/sdk/shared/transport.js';
import type { JSONRPCMessage } from '@modelcontextprotocol/sdk/types.js';
import { isRequestId, type RequestId } from '../core/request-ids.js';

/** Unanswered request ids of one transport (one session, or one stateless request). */
export class AnswerTracker {
  /** Keyed by type and value, as the transport's own request map is: `1` and `"1"` differ. */
  private readonly pending = new Map<string, RequestId>();
  private readonly send: Transport['send'];

  constructor(transport: Transport) {
    const send = transport.send.bind(transport);
    this.send = send;
    transport.send = (message, options) => {
      const m = message as { id?: unknown; method?: unknown };
      if (m.method === undefined && isRequestId(m.id)) this.pending.delete(key(m.id));
      return send(message, options);
    };
  }

  /** Note the requests of a parsed POST body (one message or a batch). */
  noteBody(body: unknown): void {
    for (const m of Array.isArray(body) ? body : [body]) {
      const r = m as { id?: unknown; method?: unknown } | null;
      if (r !== null && typeof r === 'object' && typeof r.method === 'string' && isRequestId(r.id)) this.pending.set(key(r.id), r.id);
    }
  }

  get size(): number {
    return this.pending.size;
  }

  /** Answer every request still pending with a JSON-RPC error; failures to write are ignored (the client is gone). */
  async failPending(code: number, message: string): Promise<void> {
    const ids = [...this.pending.values()];
    this.pending.clear();
    for (const id of ids) {
      const error = { jsonrpc: '2.0', id, error: { code, message } } as JSONRPCMessage;
      await this.send(error).catch(() => undefined);
    }
  }
}

function key(id: RequestId): string {
  return `${typeof id}:${String(id)}`;
}
