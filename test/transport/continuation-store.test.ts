import { describe, expect, it } from 'vitest';
import { isBudgetError } from '../../src/engine/index.js';
import { ContinuationStore, type StoredResult } from '../../src/transport/core/continuation-store.js';
import { heldInMemory } from '../../src/transport/core/continuation-spill.js';

/** `v` held as JSON of exactly `bytes` bytes (a string padded to that length when `v` is one). */
function hold(v: unknown, bytes: number): ReturnType<typeof heldInMemory> {
  const json = typeof v === 'string' ? JSON.stringify(v.padEnd(bytes - 2, ' ')) : JSON.stringify(v).padEnd(bytes, ' ');
  return heldInMemory(Buffer.from(json));
}

/** The value an entry holds. */
async function valueOf(e: StoredResult): Promise<unknown> {
  const v = JSON.parse((await e.reader.held.read(0, e.bytes)).toString());
  return typeof v === 'string' ? v.trimEnd() : v;
}

function clock(start = 1_000_000): { now: () => number; advance: (ms: number) => void } {
  let t = start;
  return { now: () => t, advance: (ms) => (t += ms) };
}

function codeOf(f: () => unknown): string | undefined {
  try {
    f();
  } catch (e) {
    if (isBudgetError(e)) return e.code;
    throw e;
  }
  return undefined;
}

describe('continuation store', () => {
  it('continuation store: handles are 128-bit base64url, distinct, bound to their session and caller', async () => {
    const store = new ContinuationStore();
    const a = store.put('s1', undefined, hold({ x: 1 }, 10), []);
    const b = store.put('s1', undefined, hold({ x: 2 }, 10), []);
    expect(a.handle).toMatch(/^[A-Za-z0-9_-]{22}$/);
    expect(a.handle).not.toBe(b.handle);
    expect(await valueOf(store.get(a.handle, 's1', undefined))).toEqual({ x: 1 });
    expect(codeOf(() => store.get(a.handle, 's2', undefined))).toBe('CONTINUATION_FOREIGN');
    const c = store.put('s1', 'alice', hold(1, 10), []);
    expect(codeOf(() => store.get(c.handle, 's1', 'bob'))).toBe('CONTINUATION_FOREIGN');
    expect(codeOf(() => store.get(c.handle, 's1', undefined))).toBe('CONTINUATION_FOREIGN');
    expect(await valueOf(store.get(c.handle, 's1', 'alice'))).toBe(1);
  });

  it('continuation store: a forged handle is unknown', async () => {
    const store = new ContinuationStore();
    store.put('s1', undefined, hold(1, 10), []);
    expect(codeOf(() => store.get('AAAAAAAAAAAAAAAAAAAAAA', 's1', undefined))).toBe('CONTINUATION_UNKNOWN');
    expect(codeOf(() => store.get('', 's1', undefined))).toBe('CONTINUATION_UNKNOWN');
  });

  it('continuation store: a handle expires after the TTL, and says so', async () => {
    const c = clock();
    const store = new ContinuationStore({ ttlMs: 5000 }, c.now);
    const e = store.put('s1', undefined, hold(1, 10), []);
    expect(e.expiresAt).toBe(1_005_000);
    c.advance(4999);
    expect(await valueOf(store.get(e.handle, 's1', undefined))).toBe(1);
    c.advance(1);
    expect(codeOf(() => store.get(e.handle, 's1', undefined))).toBe('CONTINUATION_EXPIRED');
    expect(codeOf(() => store.get(e.handle, 's1', undefined))).toBe('CONTINUATION_EXPIRED');
    expect(store.bytes).toBe(0);
    // Expired entries are swept when another is stored.
    const f = store.put('s1', undefined, hold(1, 10), []);
    c.advance(5000);
    store.put('s1', undefined, hold(1, 10), []);
    expect(store.size).toBe(1);
    expect(codeOf(() => store.get(f.handle, 's1', undefined))).toBe('CONTINUATION_EXPIRED');
  });

  it('continuation store: expired originals are let go on reads too, not only when another is stored', async () => {
    const c = clock();
    const store = new ContinuationStore({ ttlMs: 5000 }, c.now);
    store.put('s1', undefined, hold('old', 1000), []);
    c.advance(3000);
    const young = store.put('s1', undefined, hold('young', 10), []);
    c.advance(2500);
    expect(await valueOf(store.get(young.handle, 's1', undefined))).toBe('young');
    expect(store.bytes).toBe(10);
  });

  it('continuation store: an idle process lets expired originals go at their expiry (no call needed)', async () => {
    const store = new ContinuationStore({ ttlMs: 1000 });
    store.put('s1', undefined, hold('x', 1000), []);
    expect(store.bytes).toBe(1000);
    await new Promise((r) => setTimeout(r, 1100));
    expect(store.size).toBe(0);
    expect(store.bytes).toBe(0);
  });

  it('continuation store: the session cap evicts that session\'s least recently read entries only', async () => {
    const store = new ContinuationStore({ maxSessionBytes: 3000, maxProcessBytes: 100_000 });
    const other = store.put('s2', undefined, hold('o', 2000), []);
    const a = store.put('s1', undefined, hold('a', 1000), []);
    const b = store.put('s1', undefined, hold('b', 1000), []);
    const c = store.put('s1', undefined, hold('c', 1000), []);
    store.get(a.handle, 's1', undefined); // a is now the most recently read
    const d = store.put('s1', undefined, hold('d', 1000), []);
    expect(codeOf(() => store.get(b.handle, 's1', undefined))).toBe('CONTINUATION_EVICTED');
    for (const e of [a, c, d]) expect(await valueOf(store.get(e.handle, 's1', undefined))).toBe(await valueOf(e));
    expect(await valueOf(store.get(other.handle, 's2', undefined))).toBe('o');
    expect(store.sessionUsage('s1')).toBe(3000);
  });

  it('continuation store: the process cap evicts across sessions, least recently read first', async () => {
    const store = new ContinuationStore({ maxSessionBytes: 100_000, maxProcessBytes: 2500 });
    const a = store.put('s1', undefined, hold('a', 1000), []);
    const b = store.put('s2', undefined, hold('b', 1000), []);
    store.get(a.handle, 's1', undefined);
    const c = store.put('s3', undefined, hold('c', 1000), []);
    expect(codeOf(() => store.get(b.handle, 's2', undefined))).toBe('CONTINUATION_EVICTED');
    expect(await valueOf(store.get(a.handle, 's1', undefined))).toBe('a');
    expect(await valueOf(store.get(c.handle, 's3', undefined))).toBe('c');
    expect(store.bytes).toBe(2000);
  });

  it('continuation store: a closed session\'s handles end with it', async () => {
    const store = new ContinuationStore();
    const a = store.put('s1', undefined, hold('a', 1000), []);
    store.dropSession('s1');
    expect(codeOf(() => store.get(a.handle, 's1', undefined))).toBe('CONTINUATION_EXPIRED');
    expect(store.bytes).toBe(0);
  });

  it('continuation store: settings out of range are refused naming the setting', async () => {
    expect(() => new ContinuationStore({ ttlMs: 5 })).toThrow(/`ttlMs` to be an integer from 1000/);
    expect(() => new ContinuationStore({ maxProcessBytes: -1 })).toThrow(/`maxProcessBytes`/);
  });
});
