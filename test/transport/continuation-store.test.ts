import { describe, expect, it } from 'vitest';
import { isBudgetError } from '../../src/engine/index.js';
import { ContinuationStore } from '../../src/transport/core/continuation-store.js';

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
  it('continuation store: handles are 128-bit base64url, distinct, bound to their session and caller', () => {
    const store = new ContinuationStore();
    const a = store.put('s1', undefined, { x: 1 }, 10, []);
    const b = store.put('s1', undefined, { x: 2 }, 10, []);
    expect(a.handle).toMatch(/^[A-Za-z0-9_-]{22}$/);
    expect(a.handle).not.toBe(b.handle);
    expect(store.get(a.handle, 's1', undefined).value).toEqual({ x: 1 });
    expect(codeOf(() => store.get(a.handle, 's2', undefined))).toBe('CONTINUATION_FOREIGN');
    const c = store.put('s1', 'alice', 1, 10, []);
    expect(codeOf(() => store.get(c.handle, 's1', 'bob'))).toBe('CONTINUATION_FOREIGN');
    expect(codeOf(() => store.get(c.handle, 's1', undefined))).toBe('CONTINUATION_FOREIGN');
    expect(store.get(c.handle, 's1', 'alice').value).toBe(1);
  });

  it('continuation store: a forged handle is unknown', () => {
    const store = new ContinuationStore();
    store.put('s1', undefined, 1, 10, []);
    expect(codeOf(() => store.get('AAAAAAAAAAAAAAAAAAAAAA', 's1', undefined))).toBe('CONTINUATION_UNKNOWN');
    expect(codeOf(() => store.get('', 's1', undefined))).toBe('CONTINUATION_UNKNOWN');
  });

  it('continuation store: a handle expires after the TTL, and says so', () => {
    const c = clock();
    const store = new ContinuationStore({ ttlMs: 5000 }, c.now);
    const e = store.put('s1', undefined, 1, 10, []);
    expect(e.expiresAt).toBe(1_005_000);
    c.advance(4999);
    expect(store.get(e.handle, 's1', undefined).value).toBe(1);
    c.advance(1);
    expect(codeOf(() => store.get(e.handle, 's1', undefined))).toBe('CONTINUATION_EXPIRED');
    expect(codeOf(() => store.get(e.handle, 's1', undefined))).toBe('CONTINUATION_EXPIRED');
    expect(store.bytes).toBe(0);
    // Expired entries are swept when another is stored.
    const f = store.put('s1', undefined, 1, 10, []);
    c.advance(5000);
    store.put('s1', undefined, 1, 10, []);
    expect(store.size).toBe(1);
    expect(codeOf(() => store.get(f.handle, 's1', undefined))).toBe('CONTINUATION_EXPIRED');
  });

  it('continuation store: expired originals are let go on reads too, not only when another is stored', () => {
    const c = clock();
    const store = new ContinuationStore({ ttlMs: 5000 }, c.now);
    store.put('s1', undefined, 'old', 1000, []);
    c.advance(3000);
    const young = store.put('s1', undefined, 'young', 10, []);
    c.advance(2500);
    expect(store.get(young.handle, 's1', undefined).value).toBe('young');
    expect(store.bytes).toBe(10);
  });

  it('continuation store: an idle process lets expired originals go at their expiry (no call needed)', async () => {
    const store = new ContinuationStore({ ttlMs: 1000 });
    store.put('s1', undefined, 'x'.repeat(1000), 1000, []);
    expect(store.bytes).toBe(1000);
    await new Promise((r) => setTimeout(r, 1100));
    expect(store.size).toBe(0);
    expect(store.bytes).toBe(0);
  });

  it('continuation store: the session cap evicts that session\'s least recently read entries only', () => {
    const store = new ContinuationStore({ maxSessionBytes: 3000, maxProcessBytes: 100_000 });
    const other = store.put('s2', undefined, 'o', 2000, []);
    const a = store.put('s1', undefined, 'a', 1000, []);
    const b = store.put('s1', undefined, 'b', 1000, []);
    const c = store.put('s1', undefined, 'c', 1000, []);
    store.get(a.handle, 's1', undefined); // a is now the most recently read
    const d = store.put('s1', undefined, 'd', 1000, []);
    expect(codeOf(() => store.get(b.handle, 's1', undefined))).toBe('CONTINUATION_EVICTED');
    for (const e of [a, c, d]) expect(store.get(e.handle, 's1', undefined).value).toBe(e.value);
    expect(store.get(other.handle, 's2', undefined).value).toBe('o');
    expect(store.sessionUsage('s1')).toBe(3000);
  });

  it('continuation store: the process cap evicts across sessions, least recently read first', () => {
    const store = new ContinuationStore({ maxSessionBytes: 100_000, maxProcessBytes: 2500 });
    const a = store.put('s1', undefined, 'a', 1000, []);
    const b = store.put('s2', undefined, 'b', 1000, []);
    store.get(a.handle, 's1', undefined);
    const c = store.put('s3', undefined, 'c', 1000, []);
    expect(codeOf(() => store.get(b.handle, 's2', undefined))).toBe('CONTINUATION_EVICTED');
    expect(store.get(a.handle, 's1', undefined).value).toBe('a');
    expect(store.get(c.handle, 's3', undefined).value).toBe('c');
    expect(store.bytes).toBe(2000);
  });

  it('continuation store: a closed session\'s handles end with it', () => {
    const store = new ContinuationStore();
    const a = store.put('s1', undefined, 'a', 1000, []);
    store.dropSession('s1');
    expect(codeOf(() => store.get(a.handle, 's1', undefined))).toBe('CONTINUATION_EXPIRED');
    expect(store.bytes).toBe(0);
  });

  it('continuation store: settings out of range are refused naming the setting', () => {
    expect(() => new ContinuationStore({ ttlMs: 5 })).toThrow(/`ttlMs` to be an integer from 1000/);
    expect(() => new ContinuationStore({ maxProcessBytes: -1 })).toThrow(/`maxProcessBytes`/);
  });
});
