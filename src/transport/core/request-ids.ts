/**
 * Remembers inbound requests whose responses must be bounded. JSON-RPC ids are keyed by type as
 * well as value: `1` and `"1"` are different requests, and `0` is a valid id.
 */

/** What is remembered about one request. */
export interface PendingRequest {
  method: string;
  /** Tool name of a `tools/call`. */
  tool: string | undefined;
  /** Who asked, when the transport knows (an authenticated member): a continuation handle is bound to it. */
  caller?: string | undefined;
}

export type RequestId = string | number;

/** JSON-RPC id equality, as a `Map` compares keys (SameValueZero: `-0` is `0`, `1` is not `"1"`). */
function sameId(a: RequestId, b: RequestId): boolean {
  return a === b || (a !== a && b !== b);
}

export class RequestTable {
  /**
   * Every request but the newest, oldest first. Keyed by the id itself: a `Map` compares keys by
   * SameValueZero, so `1` and `"1"` stay apart and `-0` is `0`, as JSON-RPC ids are compared.
   * Perf: no key string is built per lookup.
   */
  private readonly map = new Map<RequestId, PendingRequest>();
  /**
   * The newest request, held apart from the map (its id is never in the map). Perf: a client that
   * waits for each answer before the next request (the common case) never touches the map.
   */
  private newestId: RequestId | undefined;
  private newest: PendingRequest | undefined;

  constructor(private readonly maxEntries = 100_000) {}

  get size(): number {
    return this.map.size + (this.newest === undefined ? 0 : 1);
  }

  remember(id: RequestId, request: PendingRequest): void {
    // A peer that never gets answers must not grow this without bound: drop the oldest.
    if (this.size >= this.maxEntries) this.dropOldest();
    // Remembered again: the request keeps its place.
    if (this.newest !== undefined && sameId(this.newestId!, id)) {
      this.newest = request;
      return;
    }
    if (this.map.size > 0 && this.map.has(id)) {
      this.map.set(id, request);
      return;
    }
    if (this.newest !== undefined) this.map.set(this.newestId!, this.newest);
    this.newestId = id === 0 ? 0 : id; // as a Map keeps it: -0 is 0
    this.newest = request;
  }

  private dropOldest(): void {
    const oldest = this.map.keys().next();
    if (oldest.done !== true) this.map.delete(oldest.value);
    else this.clear();
  }

  /** The request answered by `id`, forgotten as it is returned. */
  take(id: RequestId): PendingRequest | undefined {
    const n = this.newest;
    if (n !== undefined && sameId(this.newestId!, id)) {
      this.newest = undefined;
      this.newestId = undefined;
      return n;
    }
    if (this.map.size === 0) return undefined;
    const r = this.map.get(id);
    if (r !== undefined) this.map.delete(id);
    return r;
  }

  peek(id: RequestId): PendingRequest | undefined {
    if (this.newest !== undefined && sameId(this.newestId!, id)) return this.newest;
    return this.map.get(id);
  }

  private has(id: RequestId): boolean {
    return (this.newest !== undefined && sameId(this.newestId!, id)) || this.map.has(id);
  }

  /**
   * The remembered id a response carrying `id` answers, as a client could match it: the same id
   * (type and value) first; else, for a string, the numeric request it reads as (the SDK client
   * looks every response id up with `Number(id)`, so `"7"`, `" 7"`, `"7e0"`, `"0x7"` answer 7 and
   * `""` answers 0); else, for a number, the string request written the same way (clients that
   * key pending requests by property name). Undefined: the response answers nothing pending.
   */
  match(id: RequestId): RequestId | undefined {
    if (this.has(id)) return id;
    if (typeof id === 'string') {
      const n = Number(id);
      if (Number.isFinite(n) && this.has(n)) return n === 0 ? 0 : n;
      return undefined;
    }
    const s = String(id);
    return this.has(s) ? s : undefined;
  }

  forget(id: RequestId): void {
    this.take(id);
  }

  /** Every remembered id, oldest first (for answering them all when the peer goes away). */
  ids(): RequestId[] {
    const ids = [...this.map.keys()];
    if (this.newest !== undefined) ids.push(this.newestId!);
    return ids;
  }

  clear(): void {
    this.map.clear();
    this.newest = undefined;
    this.newestId = undefined;
  }
}

export function isRequestId(v: unknown): v is RequestId {
  return typeof v === 'string' || (typeof v === 'number' && Number.isFinite(v));
}
