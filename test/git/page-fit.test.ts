/**
 * Unit tests of the page sizing helpers (src/git/page-fit.ts): fields cut by escaped bytes without
 * splitting a character, pages stopped by bytes and items, and cursor anchors that stay short and
 * resume exactly after their name (or refuse when a long name disappeared).
 */
import { describe, expect, it } from 'vitest';
import { ANCHOR_BYTES, AnchorSkip, PageFill, anchorOf, bindKey, cutField, jsonBytes } from '../../src/git/page-fit.js';

describe('cutField', () => {
  it('cuts by escaped bytes and characters, never inside a surrogate pair', () => {
    expect(cutField('abc', 10)).toEqual({ value: 'abc', cut: false });
    expect(cutField('\u0001\u0001', 7)).toEqual({ value: '\u0001', cut: true });
    expect(cutField('😀😀', 5)).toEqual({ value: '😀', cut: true });
    expect(cutField('x'.repeat(199) + '😀', Infinity)).toEqual({ value: 'x'.repeat(199), cut: true });
    expect(jsonBytes(cutField('"'.repeat(100), 50).value)).toBe(52);
  });
});

describe('PageFill', () => {
  it('stops before the room or the item count is passed, and always takes the first item', () => {
    const f = new PageFill<string>(20, 10);
    expect(f.offer('x'.repeat(30))).toBe(true);
    expect(f.offer('y')).toBe(false);
    const g = new PageFill<string>(100, 2);
    expect([g.offer('a'), g.offer('b'), g.offer('c')]).toEqual([true, true, false]);
  });
});

describe('anchors', () => {
  const sorted = (xs: string[]): string[] => [...xs].sort((a, b) => Buffer.compare(Buffer.from(a), Buffer.from(b)));
  const resume = (names: string[], after: string): string[] => {
    const s = new AnchorSkip(anchorOf(after));
    return names.filter((n) => s.after(n));
  };

  it('short names resume after themselves, in byte order (not UTF-16 order)', () => {
    const names = sorted(['a', 'b', '\uffff', '😀', 'c']);
    expect(names).toEqual(['a', 'b', 'c', '\uffff', '😀']);
    expect(resume(names, 'b')).toEqual(['c', '\uffff', '😀']);
    expect(resume(names, '\uffff')).toEqual(['😀']);
  });

  it('long names keep a bounded prefix and a hash; names sharing the prefix resume exactly', () => {
    const long = 'p'.repeat(ANCHOR_BYTES + 10);
    const names = sorted([`${long}a`, `${long}b`, `${long}c`, 'q']);
    expect(JSON.stringify(anchorOf(`${long}b`)).length).toBeLessThan(150);
    expect(resume(names, `${long}b`)).toEqual([`${long}c`, 'q']);
    // the anchor's name was deleted: resuming could skip unseen names, so the cursor is refused
    expect(() => resume(names.filter((n) => n !== `${long}b`), `${long}b`)).toThrow(/no longer exists/);
  });

  it('bindKey separates absent values from empty ones', () => {
    expect(bindKey(null)).not.toBe(bindKey(''));
    expect(bindKey('a', 'b')).not.toBe(bindKey('ab', null));
    expect(bindKey('x'.repeat(5000))).toHaveLength(22);
  });
});
