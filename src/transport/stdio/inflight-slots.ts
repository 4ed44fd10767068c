/**
 * Requests a server has been handed and not yet answered, counted so that reading can pause: a
 * slot is taken when a request is dispatched and freed when its answer is sent (or when the
 * client cancels it, since the SDK sends nothing then). Bounded in count and in request bytes;
 * ids are keyed by type as the SDK answers them (`1` ≠ `"1"`), and a reused id holds two slots.
 */
import type { RequestId } from '../core/request-ids.js';

function keyOf(id: RequestId): string {
  return (typeof id === 'number' ? 'n:' : 's:') + String(id);
}

export class InflightSlots {
  /** Sizes of the requests in flight under each id (a client may reuse an id). */
  private readonly byId = new Map<string, number[]>();
  private count = 0;
  private bytes = 0;

  /**
   * @param maxCount requests in flight before there is no room
   * @param maxBytes request bytes in flight before there is no room (one request always fits)
   */
  constructor(
    private readonly maxCount: number,
    private readonly maxBytes: number,
  ) {}

  get size(): number {
    return this.count;
  }

  hasRoom(): boolean {
    return this.count === 0 || (this.count < this.maxCount && this.bytes < this.maxBytes);
  }

  take(id: RequestId, size: number): void {
    const k = keyOf(id);
    const sizes = this.byId.get(k);
    if (sizes === undefined) this.byId.set(k, [size]);
    else sizes.push(size);
    this.count++;
    this.bytes += size;
  }

  /** Free the oldest slot under `id`; false when none was held. */
  release(id: RequestId): boolean {
    const k = keyOf(id);
    const sizes = this.byId.get(k);
    if (sizes === undefined) return false;
    const size = sizes.shift()!;
    if (sizes.length === 0) this.byId.delete(k);
    this.count--;
    this.bytes -= size;
    return true;
  }

  clear(): void {
    this.byId.clear();
    this.count = 0;
    this.bytes = 0;
  }
}
