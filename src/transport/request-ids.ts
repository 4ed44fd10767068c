/**
 * Remembers inbound requests whose responses must be bounded. JSON-RPC ids are keyed by type as
 * well as value: `1` and `"1"` are different requests, and `0` is a valid id.
 */

/** What is remembered about one request. */
export interface PendingRequest {
  method: string;
  /** Tool name of a `tools/call`. */
  tool: string | undefined;
}

export type RequestId = string | number;

export class RequestTable {
  /**
   * Keyed by the id itself: a `Map` compares keys by SameValueZero, so `1` and `"1"` stay apart
   * and `-0` is `0`, as JSON-RPC ids are compared. Perf: no key string is built per lookup.
   */
  private readonly map = new Map<RequestId, PendingRequest>();

  constructor(private readonly maxEntries = 100_000) {}

  get size(): number {
    return this.map.size;
  }

  remember(id: RequestId, request: PendingRequest): void {
    // A peer that never gets answers must not grow this without bound: drop the oldest.
    if (this.map.size >= this.maxEntries) {
      const oldest = this.map.keys().next();
      if (oldest.done !== true) this.map.delete(oldest.value);
    }
    this.map.set(id, request);
  }

  /** The request answered by `id`, forgotten as it is returned. */
  take(id: RequestId): PendingRequest | undefined {
    const r = this.map.get(id);
    if (r !== undefined) this.map.delete(id);
    return r;
  }

  peek(id: RequestId): PendingRequest | undefined {
    return this.map.get(id);
  }

  /**
   * The remembered id a response carrying `id` answers, as a client could match it: the same id
   * (type and value) first; else, for a string, the numeric request it reads as (the SDK client
   * looks every response id up with `Number(id)`, so `"7"`, `" 7"`, `"7e0"`, `"0x7"` answer 7 and
   * `""` answers 0); else, for a number, the string request written the same way (clients that
   * key pending requests by property name). Undefined: the response answers nothing pending.
   */
  match(id: RequestId): RequestId | undefined {
    if (this.map.has(id)) return id;
    if (typeof id === 'string') {
      const n = Number(id);
      if (Number.isFinite(n) && this.map.has(n)) return n === 0 ? 0 : n;
      return undefined;
    }
    const s = String(id);
    return this.map.has(s) ? s : undefined;
  }

  forget(id: RequestId): void {
    this.map.delete(id);
  }

  /** Every remembered id, oldest first (for answering them all when the peer goes away). */
  ids(): RequestId[] {
    return [...this.map.keys()];
  }

  clear(): void {
    this.map.clear();
  }
}

export function isRequestId(v: unknown): v is RequestId {
  return typeof v === 'string' || (typeof v === 'number' && Number.isFinite(v));
}
