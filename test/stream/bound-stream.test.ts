/**
 * Node stream wiring: boundBytes over any async iterable of bytes or strings, boundStream to a
 * Writable with backpressure, and cancellation through an AbortSignal.
 */
import { Readable, Writable } from 'node:stream';
import { describe, expect, it } from 'vitest';
import { boundJson } from '../../src/engine/bound.js';
import { BudgetError } from '../../src/engine/errors.js';
import { boundBytes, boundStream } from '../../src/stream/bound-stream.js';
import { splitBytes } from '../helpers/stream-gen.js';

/**
 * `isError` first: after a result closed on its budget, a trailing `isError` is kept by the
 * streaming path but dropped in memory (see "isError after the result is closed" in
 * stream-differential.property.test.ts).
 */
const BIG_RESULT = {
  isError: false,
  content: [
    { type: 'text', text: 'héllo "w" 😀\n'.repeat(200_000) },
    { type: 'text', text: 'second' },
  ],
  structuredContent: { rows: Array.from({ length: 1000 }, (_, i) => ({ i, s: `r${i}` })) },
};

/** A readable that pushes `chunk` every `everyMs` forever (or `limit` times, then stalls); records destroy. */
class SlowSource extends Readable {
  pushed = 0;
  bytes = 0;
  destroyedWith: Error | null | undefined = undefined;
  private timer: NodeJS.Timeout | undefined;

  constructor(
    private readonly prefix: Buffer,
    private readonly chunk: Buffer,
    private readonly everyMs: number,
    private readonly limit = Infinity,
  ) {
    super({ highWaterMark: 16 * 1024 });
  }

  override _read(): void {
    if (this.timer !== undefined) return;
    if (this.pushed >= this.limit) return; // stall: no data, no end
    this.timer = setTimeout(() => {
      this.timer = undefined;
      const piece = this.pushed === 0 ? Buffer.concat([this.prefix, this.chunk]) : this.chunk;
      this.pushed++;
      this.bytes += piece.length;
      this.push(piece);
    }, this.everyMs);
  }

  override _destroy(err: Error | null, cb: (error?: Error | null) => void): void {
    this.destroyedWith = err;
    if (this.timer !== undefined) clearTimeout(this.timer);
    this.timer = undefined;
    cb(err);
  }
}

function rejectionOf(p: Promise<unknown>): Promise<BudgetError> {
  return p.then(
    () => {
      throw new Error('expected a rejection');
    },
    (e: unknown) => e as BudgetError,
  );
}

describe('boundBytes', () => {
  it('bounds a Readable of Buffers exactly as boundJson bounds the value', async () => {
    const bytes = Buffer.from(JSON.stringify(BIG_RESULT));
    const input = Readable.from(splitBytes(bytes, [1, 4096, 65_537, 3, 1_000_000]).map((b) => Buffer.from(b)));
    const out = await boundBytes(input, { maxResultBytes: 16_384 });
    expect(out.json).toBe(boundJson(BIG_RESULT, { maxResultBytes: 16_384 }, 'auto').json);
    expect(out.truncated).toBe(true);
    expect(Buffer.byteLength(out.json)).toBeLessThanOrEqual(16_384);
  });

  it('accepts an async generator of strings (no destroy method) and a JSON-RPC envelope', async () => {
    const envelope = { result: BIG_RESULT, jsonrpc: '2.0', id: 7 };
    const text = JSON.stringify(envelope);
    async function* gen(): AsyncGenerator<string> {
      // Cut anywhere, including inside surrogate pairs' UTF-8 once encoded: strings are encoded per chunk,
      // so cut on code point boundaries here.
      const cps = Array.from(text);
      for (let i = 0; i < cps.length; i += 70_001) yield cps.slice(i, i + 70_001).join('');
    }
    const out = await boundBytes(gen(), {}, { root: 'auto' });
    expect(out.json).toBe(boundJson(envelope, {}, 'auto').json);
    const parsed = JSON.parse(out.json) as { id: number; jsonrpc: string };
    expect(parsed.id).toBe(7);
  });

  it('a small result comes back unchanged', async () => {
    const small = { content: [{ type: 'text', text: 'ok' }] };
    const out = await boundBytes(Readable.from([Buffer.from(JSON.stringify(small))]), {});
    expect(out).toMatchObject({ json: JSON.stringify(small), unchanged: true, truncated: false });
  });

  it('invalid JSON rejects with INVALID_JSON naming the offset, and the input is destroyed', async () => {
    const src = Readable.from([Buffer.from('{"content":[{"type":"text","text":"abc"}'), Buffer.from(' x')]);
    const err = await rejectionOf(boundBytes(src, {}));
    expect(err).toBeInstanceOf(BudgetError);
    expect(err.code).toBe('INVALID_JSON');
    expect(err.message).toBe("Invalid JSON at byte offset 41: expected ',' or ']', got 'x'");
    expect(src.destroyed).toBe(true);
  });

  it('a failing input stream rejects with its error', async () => {
    const boom = new Error('disk on fire');
    const src = new Readable({
      read() {
        this.push(Buffer.from('{"content":['));
        this.destroy(boom);
      },
    });
    await expect(boundBytes(src, {})).rejects.toBe(boom);
  });

  it('limits out of range reject with LIMIT_OUT_OF_RANGE before reading', async () => {
    const src = Readable.from([Buffer.from('{}')]);
    const err = await rejectionOf(boundBytes(src, { maxItems: 0 }));
    expect(err.code).toBe('LIMIT_OUT_OF_RANGE');
  });
});

describe('boundBytes: the event loop', () => {
  it('a huge chunk is bounded in slices, with turns of the event loop in between, to the same bytes', async () => {
    const text = 'line "q" \\ é\n'.repeat(3_000_000); // about 40 MB of JSON
    const bytes = Buffer.from(JSON.stringify({ content: [{ type: 'text', text }] }));
    let turns = 0;
    let counting = true;
    const tick = (): void => {
      if (!counting) return;
      turns++;
      setImmediate(tick);
    };
    setImmediate(tick);
    // One chunk, handed on without a turn of the event loop.
    const got = await boundBytes((async function* () { yield bytes; })());
    counting = false;
    expect(turns).toBeGreaterThan(0);
    expect(got.json).toBe((await boundBytes(Readable.from(splitBytes(bytes, 77_777)))).json);
  });
});

describe('boundBytes: AbortSignal', () => {
  it('aborting mid-stream rejects with ABORTED and destroys an endless input', async () => {
    const prefix = Buffer.from('{"content":[{"type":"text","text":"');
    const src = new SlowSource(prefix, Buffer.from('abcdefghij'.repeat(100)), 2);
    const ac = new AbortController();
    const started = Date.now();
    const pending = rejectionOf(boundBytes(src, {}, { signal: ac.signal }));
    await new Promise((r) => setTimeout(r, 60));
    expect(src.pushed).toBeGreaterThan(0);
    ac.abort();
    const err = await pending;
    expect(Date.now() - started).toBeLessThan(5000);
    expect(err).toBeInstanceOf(BudgetError);
    expect(err.code).toBe('ABORTED');
    expect(err.message).toMatch(/^Bounding was aborted after \d+ bytes$/);
    expect(typeof err.data?.offset).toBe('number');
    expect(err.data!.offset as number).toBeGreaterThan(0);
    expect(src.destroyed).toBe(true);
    // Nothing is produced after the abort.
    const pushed = src.pushed;
    await new Promise((r) => setTimeout(r, 30));
    expect(src.pushed).toBe(pushed);
  });

  it('aborting while the input is stalled (no data, no end) rejects promptly with ABORTED', async () => {
    const src = new SlowSource(Buffer.from('{"content":['), Buffer.from('1,'), 1, 3);
    const ac = new AbortController();
    const pending = rejectionOf(boundBytes(src, {}, { signal: ac.signal }));
    await new Promise((r) => setTimeout(r, 40));
    ac.abort();
    const err = await pending;
    expect(err.code).toBe('ABORTED');
    expect(src.destroyed).toBe(true);
  });

  it('aborting on the streaming path (past the fit window) rejects with ABORTED', async () => {
    const prefix = Buffer.from('{"content":[{"type":"text","text":"');
    const src = new SlowSource(prefix, Buffer.alloc(256 * 1024, 0x61), 1);
    const ac = new AbortController();
    const pending = rejectionOf(boundBytes(src, {}, { signal: ac.signal }));
    while (src.bytes < 3 * 1024 * 1024) await new Promise((r) => setTimeout(r, 5));
    ac.abort();
    const err = await pending;
    expect(err.code).toBe('ABORTED');
    expect(err.data!.offset as number).toBeGreaterThan(1024 * 1024);
    expect(src.destroyed).toBe(true);
  });

  it('an already aborted signal rejects with ABORTED without reading', async () => {
    const src = new SlowSource(Buffer.from('{'), Buffer.from(' '), 1);
    const ac = new AbortController();
    ac.abort();
    const err = await rejectionOf(boundBytes(src, {}, { signal: ac.signal }));
    expect(err.code).toBe('ABORTED');
    expect(err.data).toEqual({ offset: 0 });
    expect(src.pushed).toBe(0);
    src.destroy();
  });

  /**
   * Regression (a fixed bug): the `signal` option says "Stops the work: the input is destroyed", but with a signal that
   * is already aborted boundBytes throws before its try block and leaves the input open.
   */
  it('an already aborted signal destroys the input', async () => {
    const src = new SlowSource(Buffer.from('{'), Buffer.from(' '), 1);
    const ac = new AbortController();
    ac.abort();
    await rejectionOf(boundBytes(src, {}, { signal: ac.signal }));
    try {
      expect(src.destroyed).toBe(true);
    } finally {
      src.destroy();
    }
  });

  /**
   * Regression (a fixed bug): the ABORTED error's offset ("aborted after N bytes") counts the last chunk written twice
   * (Tokenizer.offset between writes is base + pos, and write() already added the chunk to base).
   * Minimal: 3 chunks of 1000 bytes read, then abort → offset 4000, expected 3000.
   */
  it('the ABORTED offset is the number of bytes read', async () => {
    const src = new SlowSource(Buffer.alloc(0), Buffer.from('[' + ' '.repeat(999)), 1, 3);
    const ac = new AbortController();
    const pending = rejectionOf(boundBytes(src, {}, { signal: ac.signal }));
    while (src.pushed < 3) await new Promise((r) => setTimeout(r, 2));
    await new Promise((r) => setTimeout(r, 20));
    ac.abort();
    const err = await pending;
    expect(err.code).toBe('ABORTED');
    expect(err.data).toEqual({ offset: 3000 });
  });
});

describe('boundStream', () => {
  it('writes the bounded JSON (with a newline when asked) and honours backpressure', async () => {
    const bytes = Buffer.from(JSON.stringify(BIG_RESULT));
    const got: Buffer[] = [];
    let writes = 0;
    const out = new Writable({
      highWaterMark: 1,
      write(chunk: Buffer, _enc, cb) {
        writes++;
        got.push(Buffer.from(chunk));
        setTimeout(cb, 5); // a slow consumer
      },
    });
    const limits = { maxResultBytes: 20_000 };
    const r = await boundStream(Readable.from(splitBytes(bytes, 100_000).map((b) => Buffer.from(b))), out, limits, { newline: true });
    expect(writes).toBe(1);
    const text = Buffer.concat(got).toString('utf8');
    expect(text).toBe(boundJson(BIG_RESULT, limits, 'auto').json + '\n');
    expect(r.json + '\n').toBe(text);
  });

  it('writes nothing when the input is invalid (no half output that looks like success)', async () => {
    const got: Buffer[] = [];
    const out = new Writable({
      write(chunk: Buffer, _enc, cb) {
        got.push(chunk);
        cb();
      },
    });
    const bad = Buffer.concat([Buffer.from(JSON.stringify(BIG_RESULT).slice(0, -1)), Buffer.from(']')]);
    const err = await rejectionOf(boundStream(Readable.from([bad]), out, {}));
    expect(err.code).toBe('INVALID_JSON');
    expect(err.data?.offset).toBe(bad.length - 1);
    expect(got).toEqual([]);
  });
});
