/**
 * Which client request a relayed upstream message belongs to, for the proxy's HTTP front.
 *
 * Streamable HTTP carries a server's notifications and requests on the stream of the request that
 * caused them: progress arrives with its call, and a sampling or elicitation request reaches the
 * client while the call that needs it waits. A relayed upstream (a stdio server's lines, or another
 * HTTP server's messages as its client transport hands them on) no longer says which request that
 * was, so it is recovered here, in this order:
 *
 * - a response answers its own id;
 * - a progress notification belongs to the request that carried its `progressToken`;
 * - the server's cancellation of a request of its own belongs where that request was sent;
 * - anything else belongs to the one client request in flight, when there is exactly one.
 *
 * A request is in flight until an answer to it is sent to the client, by whatever path (the
 * upstream's, the budget's refusal, the proxy's own error when the upstream cannot take it):
 * {@link RequestRelation.watch} sees every message the client-facing transport sends.
 *
 * Otherwise (no request in flight, or several and nothing to tell them apart) the message has no
 * relation and goes on the session's own stream, where it went before. What is remembered is
 * bounded per session ({@link MAX_RELATED_REQUESTS}); past it, new requests are not tracked and their
 * messages take the session's stream.
 */
import type { Transport } from '@modelcontextprotocol/sdk/shared/transport.js';
import type { JSONRPCMessage, RequestId } from '@modelcontextprotocol/sdk/types.js';
import { isRequestId } from '../core/request-ids.js';
import { MAX_RELATED_REQUESTS } from './defaults.js';

/**
 * Whether the answer stream of a request is open, read from the SDK's Streamable HTTP server
 * transport (a request's stream can close before its answer when the client drops the POST; a
 * message sent with it then goes nowhere, without an error). The SDK offers no public way to ask:
 * its two maps are read when they are there, and every stream counts as open when they are not.
 */
function openStreamCheck(transport: Transport): (id: RequestId) => boolean {
  const inner = (transport as { _webStandardTransport?: unknown })._webStandardTransport ?? transport;
  const { _requestToStreamMapping: byRequest, _streamMapping: streams } = inner as { _requestToStreamMapping?: unknown; _streamMapping?: unknown };
  if (!(byRequest instanceof Map) || !(streams instanceof Map)) return () => true;
  return (id) => {
    const stream = byRequest.get(id);
    return stream !== undefined && streams.has(stream);
  };
}


type Loose = { id?: unknown; method?: unknown; params?: { progressToken?: unknown; requestId?: unknown; _meta?: { progressToken?: unknown } }; result?: unknown; error?: unknown };

const keyOf = (id: unknown): string => (typeof id === 'string' ? `s${id}` : `n${String(id)}`);
const isToken = (t: unknown): t is string | number => typeof t === 'string' || (typeof t === 'number' && Number.isFinite(t));

export class RequestRelation {
  /** Client requests sent upstream and not answered yet, by their id's key. */
  private readonly inflight = new Map<string, { id: RequestId; token?: string }>();
  /** Progress tokens of those requests, to their id's key. */
  private readonly tokens = new Map<string, string>();
  /** The server's own requests sent on a client request's stream, to that request's key. */
  private readonly serverRequests = new Map<string, string>();
  /** Whether a request's answer stream is still open, when the watched transport can tell. */
  private streamOpen: (id: RequestId) => boolean = () => true;

  /**
   * Watch what `transport` (the client-facing one, innermost) sends: an answer to a request ends
   * it, whoever wrote the answer. Returns the transport.
   */
  watch<T extends Transport>(transport: T): T {
    this.streamOpen = openStreamCheck(transport);
    const send = transport.send.bind(transport);
    transport.send = (message, options) => {
      const m = message as Loose;
      if (m.method === undefined && isRequestId(m.id)) this.forget(keyOf(m.id));
      return send(message, options);
    };
    return transport;
  }

  /** A message from the client, on its way upstream. */
  fromClient(message: JSONRPCMessage): void {
    const m = message as Loose;
    if (typeof m.method !== 'string') return;
    if (isRequestId(m.id)) {
      if (this.inflight.size >= MAX_RELATED_REQUESTS) return;
      const key = keyOf(m.id);
      this.forget(key); // an id used again starts afresh
      const token = m.params?._meta?.progressToken;
      const entry: { id: RequestId; token?: string } = { id: m.id as RequestId };
      if (isToken(token)) {
        entry.token = keyOf(token);
        this.tokens.set(entry.token, key);
      }
      this.inflight.set(key, entry);
    } else if (m.method === 'notifications/cancelled' && isRequestId(m.params?.requestId)) {
      // a cancelled request may never be answered
      this.forget(keyOf(m.params!.requestId));
    }
  }

  /**
   * A message from upstream, on its way to the client: the client request it belongs to, if one is
   * known and its stream is still open (a client that dropped its call's stream still hears the
   * call's messages on the session's stream, where they went before).
   */
  fromUpstream(message: JSONRPCMessage): RequestId | undefined {
    const id = this.related(message);
    return id === undefined || this.streamOpen(id) ? id : undefined;
  }

  private related(message: JSONRPCMessage): RequestId | undefined {
    const m = message as Loose;
    // a response is routed by its own id (its request ends when the answer is sent: see watch)
    if (typeof m.method !== 'string') return undefined;
    if (m.method === 'notifications/progress' && isToken(m.params?.progressToken)) {
      const key = this.tokens.get(keyOf(m.params!.progressToken));
      return key === undefined ? undefined : this.inflight.get(key)?.id;
    }
    if (m.method === 'notifications/cancelled' && isRequestId(m.params?.requestId)) {
      // a server cancels its own requests (a sampling request it no longer needs)
      const key = this.serverRequests.get(keyOf(m.params!.requestId));
      return key === undefined ? undefined : this.inflight.get(key)?.id;
    }
    if (this.inflight.size !== 1) return undefined;
    const [key, entry] = this.inflight.entries().next().value!;
    if (isRequestId(m.id) && this.serverRequests.size < MAX_RELATED_REQUESTS) this.serverRequests.set(keyOf(m.id), key);
    return entry.id;
  }

  /** Requests in flight (for tests). */
  get size(): number {
    return this.inflight.size;
  }

  private forget(key: string): void {
    const entry = this.inflight.get(key);
    if (entry === undefined) return;
    this.inflight.delete(key);
    if (entry.token !== undefined && this.tokens.get(entry.token) === key) this.tokens.delete(entry.token);
    for (const [server, client] of this.serverRequests) if (client === key) this.serverRequests.delete(server);
  }
}
