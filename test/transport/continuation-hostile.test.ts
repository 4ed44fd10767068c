/**
 * A continuation under attack: a spill file released while a read of it waits (its descriptor's
 * number reused by the next file), a client path of thousands of segments, a server result that
 * repeats a member name (following `next` went round forever), and a read that walks a large
 * object from memory (it held the event loop for seconds).
 */
import { pbkdf2 } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { REPORT_KEY, resolveLimits } from '../../src/engine/index.js';
import { ConnectionContinuation } from '../../src/transport/core/continuation.js';
import { heldInMemory, SpillDirectory } from '../../src/transport/core/continuation-spill.js';
import { ContinuationStore } from '../../src/transport/core/continuation-store.js';

type Json = Record<string, unknown>;
const call = (handle: string, extra: Json = {}): Json & { id: number } => ({ jsonrpc: '2.0', id: 1, method: 'tools/call', params: { name: 'mcp_result_budget__read', arguments: { handle, ...extra } } });

describe('continuation under attack', () => {
  it('continuation-hostile: a read waiting on a released spill file never reads the file that reuses its descriptor', async () => {
    const base = mkdtempSync(join(tmpdir(), 'hostile-'));
    const dir = new SpillDirectory(base);
    try {
      for (let round = 0; round < 5; round++) {
        const wa = dir.writer();
        wa.write(Buffer.from('SECRET-OF-A'.repeat(10)));
        const a = await wa.finish();
        // Other work holding the thread pool delays the read past the release.
        for (let i = 0; i < 4; i++) pbkdf2('x', 'y', 100_000, 32, 'sha256', () => undefined);
        const pending = a.read(0, 40).then(
          (b) => b.toString(),
          (e: Error) => e.message,
        );
        a.release();
        await new Promise((r) => setImmediate(r));
        await new Promise((r) => setImmediate(r));
        const wb = dir.writer();
        wb.write(Buffer.from('SECRET-OF-B'.repeat(10)));
        const b = await wb.finish();
        const got = await pending;
        b.release();
        expect(got).not.toContain('SECRET-OF-B');
      }
    } finally {
      dir.remove();
      rmSync(base, { recursive: true, force: true });
    }
  });

  it('continuation-hostile: a path of thousands of segments is refused at once', async () => {
    const store = new ContinuationStore({ memory: true });
    const conn = new ConnectionContinuation(store);
    const json = JSON.stringify({ content: [{ type: 'text', text: 'hi' }], a: 1, b: { c: 2 } });
    const entry = store.put(conn.session, undefined, heldInMemory(Buffer.from(json)), [{ path: '', position: 1 }]);
    for (const path of ['/b' + '/c'.repeat(6000), '/b' + '/c'.repeat(200_000), '/b' + '/'.repeat(1500)]) {
      const t = performance.now();
      const r = (await conn.answer(call(entry.handle, { path }), resolveLimits({}), undefined)).result as Json;
      expect(performance.now() - t).toBeLessThan(200);
      expect(r.isError).toBe(true);
      expect(JSON.stringify(r.content)).toMatch(/CONTINUATION_BAD_READ/);
    }
  });

  it('continuation-hostile: a result that repeats a member name ends in a clear error, never a loop', async () => {
    const store = new ContinuationStore({ memory: true });
    const conn = new ConnectionContinuation(store);
    const big = 'A'.repeat(20_000);
    const line = `{"jsonrpc":"2.0","id":1,"result":{"content":[{"type":"text","text":"${big}"}],"content":[{"type":"text","text":"${big.toLowerCase()}"}]}}`;
    const limits = resolveLimits({ maxResultBytes: 8192 });
    const sent = { content: [{ type: 'text', text: 'a'.repeat(1000) }], _meta: { [REPORT_KEY]: { truncated: true } } } as Json;
    const offered = await conn.offerHeld(heldInMemory(Buffer.from(line)), '/result', sent, limits, undefined);
    // The plan meets the repeated name (when it is made, or when the handle is first read): no
    // handle is offered, or its first read says so.
    const offer = ((offered._meta as Json)[REPORT_KEY] as Json).continuation as Json | undefined;
    if (offer !== undefined) {
      const first = (await conn.answer(call(offer.handle as string), limits, undefined)).result as Json;
      expect(first.isError).toBe(true);
      expect(JSON.stringify(first.content)).toMatch(/repeats the member name \\"content\\"/);
    }
    // A repeat past what the plan walks is met by the reads: they end in a clear error, never a loop.
    const kept = `{"content":[{"type":"text","text":"${big}"}],"x":1,"x":2}`;
    const entry = store.put(conn.session, undefined, heldInMemory(Buffer.from(kept)), [{ path: '/content/0/text', position: 1000 }]);
    let args: Json | undefined = {};
    let n = 0;
    let last: Json = {};
    for (; args !== undefined && n < 200; n++) {
      last = (await conn.answer(call(entry.handle, args), limits, undefined)).result as Json;
      if (last.isError === true) break;
      args = (last.structuredContent as Json).next as Json | undefined;
      if (args !== undefined) delete args.handle;
    }
    expect(n).toBeLessThan(200);
    // The text is read whole; the repeat sits outside what was cut, so nothing asks for it.
    expect(last.isError).toBeUndefined();
    const store2 = store.put(conn.session, undefined, heldInMemory(Buffer.from(kept)), [{ path: '', position: 1 }]);
    const r = (await conn.answer(call(store2.handle, {}), limits, undefined)).result as Json;
    expect(JSON.stringify(r.content)).toMatch(/repeats the member name \\"x\\"/);
  });

  it('continuation-hostile: a read that walks a large object from memory lets other work run', async () => {
    const store = new ContinuationStore({ memory: true });
    const conn = new ConnectionContinuation(store);
    const parts: string[] = [];
    for (let i = 0; i < 300_000; i++) parts.push(`"k${i}":${i % 2}`);
    const json = `{"structuredContent":{${parts.join(',')}}}`;
    const entry = store.put(conn.session, undefined, heldInMemory(Buffer.from(json)), [{ path: '/structuredContent', position: 200 }]);
    let timerRan = 0;
    const timer = setInterval(() => timerRan++, 1);
    await conn.answer(call(entry.handle, { path: '/structuredContent/nope' }), resolveLimits({}), undefined);
    clearInterval(timer);
    expect(timerRan).toBeGreaterThan(0);
  });

  it('continuation-hostile: a session closed while a streamed offer is made, or an offer with no room, keeps nothing', async () => {
    const store = new ContinuationStore({ memory: true });
    const conn = new ConnectionContinuation(store);
    const line = `{"jsonrpc":"2.0","id":1,"result":{"content":[{"type":"text","text":"${'A'.repeat(40_000)}"}]}}`;
    const limits = resolveLimits({ maxResultBytes: 8192 });
    const sent = { content: [{ type: 'text', text: 'A'.repeat(1000) }], _meta: { [REPORT_KEY]: { truncated: true } } } as Json;
    const pending = conn.offerHeld(heldInMemory(Buffer.from(line)), '/result', sent, limits, undefined);
    conn.close();
    await pending;
    expect(store.size).toBe(0);
    // A result already at the bound: the offer cannot be added, and its original is let go.
    const other = new ConnectionContinuation(store);
    const full = { content: [{ type: 'text', text: 'A'.repeat(7900) }], _meta: { [REPORT_KEY]: { truncated: true } } } as Json;
    const out = await other.offerHeld(heldInMemory(Buffer.from(line)), '/result', full, limits, undefined);
    expect(((out._meta as Json)[REPORT_KEY] as Json).continuation).toBeUndefined();
    expect(store.size).toBe(0);
  });
});
