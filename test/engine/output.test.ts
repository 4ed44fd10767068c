import { describe, expect, it } from 'vitest';
import { Output } from '../../src/engine/output.js';

function withSink(): { out: Output; got: string[] } {
  const got: string[] = [];
  return { out: new Output((c) => got.push(c)), got };
}

const BIG = 'x'.repeat(20_000); // above the 16K-unit flush threshold

describe('output', () => {
  it('output: write appends chunks and counts bytes as given', () => {
    const out = new Output();
    out.write('{"a":', 5);
    out.write('"é"', 4);
    expect(out.toString()).toBe('{"a":"é"');
    expect(out.bytes).toBe(9);
    expect(out.length).toBe(2);
  });

  it('output: rollback drops everything written since the mark and restores the byte count', () => {
    const out = new Output();
    out.write('a', 1);
    const m = out.mark();
    out.write('b', 1);
    out.write('c', 1);
    out.rollback(m);
    expect(out.toString()).toBe('a');
    expect(out.bytes).toBe(1);
    out.write('d', 1);
    expect(out.toString()).toBe('ad');
  });

  it('output: release keeps what was written since the mark', () => {
    const out = new Output();
    const m = out.mark();
    out.write('kept', 4);
    out.release(m);
    expect(out.toString()).toBe('kept');
    expect(out.bytes).toBe(4);
  });

  it('output: nested marks roll back independently', () => {
    const out = new Output();
    const outer = out.mark();
    out.write('a', 1);
    const inner = out.mark();
    out.write('b', 1);
    out.rollback(inner);
    out.write('c', 1);
    expect(out.toString()).toBe('ac');
    out.rollback(outer);
    expect(out.toString()).toBe('');
    expect(out.bytes).toBe(0);
  });

  it('output: a hole is filled in place at the end and counted then', () => {
    const out = new Output();
    out.write('[1', 2);
    const h = out.hole();
    out.write(']', 1);
    expect(out.bytes).toBe(3);
    out.fill(h, ',2', 2);
    expect(out.toString()).toBe('[1,2]');
    expect(out.bytes).toBe(5);
  });

  it('output: read and replaceRange rewrite a region before the end', () => {
    const out = new Output();
    out.write('<', 1);
    const from = out.length;
    out.write('ab', 2);
    out.write('cd', 2);
    const to = out.length;
    out.write('>', 1);
    expect(out.read(from, to)).toBe('abcd');
    out.replaceRange(from, to, 'XYZ', 3 - 4);
    expect(out.toString()).toBe('<XYZ>');
    expect(out.bytes).toBe(5);
  });

  it('output: with a sink, chunks before the first open mark are flushed once the threshold is reached', () => {
    const { out, got } = withSink();
    out.write('head', 4);
    const m = out.mark();
    out.write(BIG, BIG.length);
    expect(got).toEqual(['head']); // the marked region is held back
    out.release(m);
    out.write('tail', 4);
    out.flush(false);
    expect(got.join('')).toBe('head' + BIG + 'tail');
    expect(out.toString()).toBe(''); // flushed chunks are not kept
  });

  it('output: with a sink, an unfilled hole holds back everything after it until filled', () => {
    const { out, got } = withSink();
    out.write('a', 1);
    const h = out.hole();
    out.write(BIG, BIG.length);
    expect(got).toEqual(['a']);
    out.fill(h, 'H', 1);
    out.flush(false);
    expect(got.join('')).toBe('aH' + BIG);
  });

  it('output: flush(true) hands over everything in order, each chunk once', () => {
    const { out, got } = withSink();
    out.write('1', 1);
    out.mark();
    out.write('2', 1);
    out.hole();
    out.write('3', 1);
    out.flush(true);
    out.flush(true);
    expect(got.join('')).toBe('123');
  });

  it('output: without a sink, flush does nothing and toString has the whole output', () => {
    const out = new Output();
    out.write(BIG, BIG.length);
    out.flush(true);
    expect(out.toString()).toBe(BIG);
  });

  it('output: rolling back a mark drops the holes opened after it', () => {
    const { out, got } = withSink();
    out.write('a', 1);
    const m = out.mark();
    out.write('b', 1);
    out.hole();
    out.rollback(m);
    out.write(BIG, BIG.length);
    expect(got.join('')).toBe('a' + BIG);
  });

  // Regression (a fixed bug in rollback): a hole opened right at the mark's position (nothing written between
  // mark() and hole()) keeps a pin after rollback(mark): `unpin(m.index)` removes the hole's pin
  // (lastIndexOf) and the filter then keeps the mark's own pin because `p === m.index`. A stale pin
  // holds back every later chunk from the sink until flush(true). Expected 'a' + BIG flushed;
  // actual only 'a'. Not reachable through the Budgeter today (it opens no hole inside a mark).
  it('output: rolling back a mark drops a hole opened at the mark position', () => {
    const { out, got } = withSink();
    out.write('a', 1);
    const m = out.mark();
    out.hole();
    out.rollback(m);
    out.write(BIG, BIG.length);
    expect(got.join('')).toBe('a' + BIG);
  });
});
