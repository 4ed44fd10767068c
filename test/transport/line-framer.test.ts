import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { LineFramer } from '../../src/transport/core/line-framer.js';

/** A framer that records what it hands over. */
function recorder(maxLineBytes: number, mode: 'overflow' | 'long' | 'neither' = 'overflow') {
  const lines: string[] = [];
  const overflows: number[] = [];
  const longs: { chunks: Buffer[]; total: number | undefined }[] = [];
  const framer = new LineFramer(maxLineBytes, {
    line: (b) => void lines.push(b.toString('latin1')),
    ...(mode === 'overflow' ? { overflow: (n: number) => void overflows.push(n) } : {}),
    ...(mode === 'long'
      ? {
          long: {
            start: () => void longs.push({ chunks: [], total: undefined }),
            chunk: (b: Buffer) => void longs.at(-1)!.chunks.push(Buffer.from(b)),
            end: (total: number) => void (longs.at(-1)!.total = total),
          },
        }
      : {}),
  });
  const push = (s: string | Buffer): void => void framer.push(typeof s === 'string' ? Buffer.from(s, 'latin1') : s);
  return { framer, push, lines, overflows, longs };
}

/** Feed `text` cut at the given offsets. */
function feed(push: (s: string) => void, text: string, cuts: number[]): void {
  let from = 0;
  for (const c of [...cuts].sort((a, b) => a - b)) {
    push(text.slice(from, c));
    from = c;
  }
  push(text.slice(from));
}

describe('LineFramer', () => {
  it('line-framer: the same lines whatever the chunk boundaries (every single and double cut)', () => {
    const text = 'alpha\nbe\r\n\ngamma delta\r\n{"id":1}\nlast';
    const expected = ['alpha', 'be', 'gamma delta', '{"id":1}', 'last'];
    for (let i = 0; i <= text.length; i++) {
      for (let j = i; j <= text.length; j++) {
        const r = recorder(1024);
        feed(r.push, text, [i, j]);
        r.framer.end();
        expect(r.lines, `cuts at ${i}, ${j}`).toEqual(expected);
      }
    }
  });

  it('line-framer: one byte at a time', () => {
    const text = 'one\r\ntwo\nthree\n';
    const r = recorder(1024);
    for (const ch of text) r.push(ch);
    r.framer.end();
    expect(r.lines).toEqual(['one', 'two', 'three']);
  });

  it('line-framer: property — any lines, any chunking, LF or CRLF', () => {
    const line = fc.string({ unit: fc.constantFrom('a', 'b', '{', '"', '\r', ' ', 'é'), minLength: 1, maxLength: 40 }).filter((s) => !s.endsWith('\r'));
    fc.assert(
      fc.property(fc.array(line, { maxLength: 12 }), fc.array(fc.nat(), { maxLength: 8 }), fc.boolean(), fc.boolean(), (lines, cuts, crlf, finalNewline) => {
        const text = lines.map((l) => l + (crlf ? '\r\n' : '\n')).join('');
        const body = finalNewline || text.length === 0 ? text : text.slice(0, crlf ? -2 : -1);
        const bytes = Buffer.from(body, 'utf8');
        const out: string[] = [];
        const framer = new LineFramer(1 << 20, { line: (b) => void out.push(b.toString('utf8')) });
        let from = 0;
        for (const c of cuts.map((c) => c % (bytes.length + 1)).sort((a, b) => a - b)) {
          framer.push(bytes.subarray(from, c));
          from = c;
        }
        framer.push(bytes.subarray(from));
        framer.end();
        expect(out).toEqual(lines);
      }),
      { numRuns: 300 },
    );
  });

  it('line-framer: CRLF — one trailing CR is removed, a CR elsewhere is kept, a CR split from its LF too', () => {
    const r = recorder(1024);
    r.push('a\r');
    r.push('\nb\rc\r\n');
    r.push('d\r\r\n');
    r.push('\r\n'); // an empty CRLF line: nothing
    r.framer.end();
    expect(r.lines).toEqual(['a', 'b\rc', 'd\r']);
  });

  it('line-framer: empty lines are skipped', () => {
    const r = recorder(1024);
    r.push('\n\n\nx\n\n');
    r.framer.end();
    expect(r.lines).toEqual(['x']);
  });

  it('line-framer: the last line without a newline counts at end(), once', () => {
    const r = recorder(1024);
    r.push('first\nsec');
    r.push('ond');
    expect(r.lines).toEqual(['first']);
    r.framer.end();
    r.framer.end();
    expect(r.lines).toEqual(['first', 'second']);

    const empty = recorder(1024);
    empty.framer.end();
    expect(empty.lines).toEqual([]);
  });

  it('line-framer: a line is copied as it is held (the caller may reuse its chunk buffer)', () => {
    const r = recorder(1024);
    const chunk = Buffer.from('held');
    r.framer.push(chunk);
    chunk.fill(0x78); // 'xxxx'
    r.push('\n');
    expect(r.lines).toEqual(['held']);
  });

  it('line-framer: cap → overflow once, the rest of the line discarded, the next line fine', () => {
    const r = recorder(10);
    r.push('0123456789\n'); // exactly at the cap: a line
    r.push('0123456'); // goes over in the next chunk
    r.push('789AB');
    r.push('CDEF'.repeat(1000));
    r.push('GH\nok\n');
    r.framer.end();
    expect(r.lines).toEqual(['0123456789', 'ok']);
    expect(r.overflows).toEqual([12]); // reported when it went over, with the bytes seen so far
    expect(r.lines.join('')).not.toMatch(/[A-H]/);
  });

  it('line-framer: cap → overflow in one chunk, then more lines in the same chunk', () => {
    const r = recorder(4);
    r.push('too long\nabc\ntoo long again\nend\n');
    expect(r.lines).toEqual(['abc', 'end']);
    expect(r.overflows).toHaveLength(2);
  });

  it('line-framer: an overflowing last line without a newline is not delivered at end()', () => {
    const r = recorder(4);
    r.push('ok\n0123456789');
    r.framer.end();
    expect(r.lines).toEqual(['ok']);
    expect(r.overflows).toHaveLength(1);
    r.push('next\n');
    expect(r.lines).toEqual(['ok', 'next']);
  });

  it('line-framer: with neither overflow nor long handlers, an over-cap line is dropped silently', () => {
    const r = recorder(4, 'neither');
    r.push('0123456789\nok\n');
    expect(r.lines).toEqual(['ok']);
  });

  it('line-framer: cap → long mode streams the bytes as they arrive and never holds them', () => {
    const r = recorder(8, 'long');
    r.push('{"a":');
    r.push('"0123');
    // Over the cap: the held start is handed over now, not at the end of the line.
    expect(r.longs).toHaveLength(1);
    expect(Buffer.concat(r.longs[0]!.chunks).toString()).toBe('{"a":"0123');
    r.push('456789');
    expect(Buffer.concat(r.longs[0]!.chunks).toString()).toBe('{"a":"0123456789');
    expect(r.longs[0]!.total).toBeUndefined();
    r.push('"}\nsmall\n');
    expect(r.longs[0]!.total).toBe(18);
    expect(Buffer.concat(r.longs[0]!.chunks).toString()).toBe('{"a":"0123456789"}');
    expect(r.lines).toEqual(['small']);
    // A second long line gets its own start/end.
    r.push('0123456789abcdef');
    r.framer.end();
    expect(r.longs).toHaveLength(2);
    expect(r.longs[1]!.total).toBe(16);
    expect(Buffer.concat(r.longs[1]!.chunks).toString()).toBe('0123456789abcdef');
  });

  it('line-framer: a long line that asks for pauses gets the same bytes and lines, whatever the chunks and pauses', () => {
    const text = `short\n${'x'.repeat(70_000)}"é"${'y'.repeat(50_000)}\nmid\n${'z'.repeat(300)}\nlast`;
    const bytes = Buffer.from(text);
    const want = { lines: ['short', 'mid', 'last'], longs: [120_004, 300] };
    for (const size of [1_000, 16_384, 65_536, bytes.length]) {
      for (const every of [2, 3, 1000]) {
        const lines: string[] = [];
        const longs: Buffer[][] = [];
        let asked = 0;
        const framer = new LineFramer(256, {
          line: (b) => void lines.push(b.toString()),
          long: {
            start: () => void longs.push([]),
            chunk: (b) => void longs.at(-1)!.push(Buffer.from(b)),
            end: () => undefined,
            yield: () => ++asked % every === 0,
          },
        });
        for (let at = 0; at < bytes.length; at += size) {
          let rest = bytes.subarray(at, at + size);
          // As the proxy does: push what was not taken (or nothing) until all is taken and none is pending.
          for (let took = framer.push(rest); took < rest.length || framer.pending; took = framer.push(rest)) rest = rest.subarray(took);
        }
        framer.end();
        expect({ lines, longs: longs.map((l) => Buffer.concat(l).length) }).toEqual(want);
        expect(Buffer.concat(longs[0]!).toString()).toBe(text.split('\n')[1]);
        if (every < 1000) expect(Math.max(...longs[0]!.map((c) => c.length))).toBeLessThanOrEqual(Math.max(size, 16 * 1024));
      }
    }
  });

  it('line-framer: long-mode chunks are exactly the bytes after the held start (no copy of the whole line)', () => {
    const sizes: number[] = [];
    const framer = new LineFramer(100, {
      line: () => undefined,
      long: { start: () => undefined, chunk: (b) => void sizes.push(b.length), end: () => undefined },
    });
    const piece = Buffer.alloc(64 * 1024, 0x61);
    for (let i = 0; i < 16; i++) framer.push(piece);
    framer.push(Buffer.from('\n'));
    expect(sizes).toEqual(Array(16).fill(64 * 1024));
  });

  it('line-framer: linear cost — a 50 MB line in 64 KiB chunks is joined once (held), and 200 MB streams (long)', () => {
    const chunk = Buffer.alloc(64 * 1024, 0x62);
    const n50 = Math.ceil((50 * 1024 * 1024) / chunk.length);

    let got = 0;
    const held = new LineFramer(64 * 1024 * 1024, { line: (b) => void (got = b.length) });
    let t = performance.now();
    for (let i = 0; i < n50; i++) held.push(chunk);
    held.push(Buffer.from('\n'));
    const heldMs = performance.now() - t;
    expect(got).toBe(n50 * chunk.length);

    let streamed = 0;
    let total = 0;
    const long = new LineFramer(1024 * 1024, {
      line: () => undefined,
      long: { start: () => undefined, chunk: (b) => void (streamed += b.length), end: (n) => void (total = n) },
    });
    t = performance.now();
    for (let i = 0; i < 4 * n50; i++) long.push(chunk);
    long.push(Buffer.from('\n'));
    const longMs = performance.now() - t;
    expect(total).toBe(4 * n50 * chunk.length);
    expect(streamed).toBe(total);

    // Re-joining per chunk would copy ~20 GB for the held line (about 20 s); linear work takes ~0.2 s.
    expect(heldMs).toBeLessThan(3000);
    expect(longMs).toBeLessThan(3000);
  });

  it('line-framer: linear cost — many small lines in 1-byte and 64 KiB chunks', () => {
    const text = Buffer.from('{"jsonrpc":"2.0","id":1,"result":{}}\n'.repeat(50_000));
    let count = 0;
    const a = new LineFramer(1024, { line: () => void count++ });
    const t = performance.now();
    for (let i = 0; i < text.length; i += 65536) a.push(text.subarray(i, i + 65536));
    expect(count).toBe(50_000);
    count = 0;
    const b = new LineFramer(1024, { line: () => void count++ });
    const small = text.subarray(0, 200_000);
    for (let i = 0; i < small.length; i++) b.push(small.subarray(i, i + 1));
    expect(count).toBe(Math.floor(200_000 / 37));
    expect(performance.now() - t).toBeLessThan(5000);
  });
});
