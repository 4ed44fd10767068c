import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { cutString, escapeContent, escapedLength, mirrorLength, utf8Length } from '../../src/engine/wire.js';
import { jsonValue, wireChar, wireString } from '../helpers/arbitraries.js';
import { endsOnCharBoundary, escapedBytes } from '../helpers/spec.js';
import { timeBox } from '../helpers/time-box.js';

const RUN = timeBox(300, 2000);

/** Bytes of a fragment once written again inside a JSON string (the spec's mirror measure). */
const mirrorBytes = (fragment: string): number => escapedBytes(fragment);

/** End index of the character starting at `i` (a surrogate pair is one character). */
function nextCharEnd(s: string, i: number): number {
  const c = s.charCodeAt(i);
  const d = s.charCodeAt(i + 1);
  return c >= 0xd800 && c <= 0xdbff && d >= 0xdc00 && d <= 0xdfff ? i + 2 : i + 1;
}

describe('wire', () => {
  it('wire: escapedLength matches the bytes JSON.stringify writes, without quotes', () => {
    const cases = ['', 'abc', '"', '\\', '\n', '\u0000', '\u001f', '\u007f', 'é', '€', '\u2028', '😀', '\ud800', '\udc00', '\udc00\ud800', '👍🏽'];
    for (const s of cases) expect(escapedLength(s), JSON.stringify(s)).toBe(escapedBytes(s));
    fc.assert(
      fc.property(wireString(64, 20), (s) => {
        expect(escapedLength(s)).toBe(escapedBytes(s));
      }),
      RUN,
    );
  });

  it('wire: escapedLength counts each escape class at its wire size', () => {
    expect(escapedLength('"')).toBe(2);
    expect(escapedLength('\\')).toBe(2);
    expect(escapedLength('\n\t\b\f\r')).toBe(10);
    expect(escapedLength('\u0001')).toBe(6);
    expect(escapedLength('\u007f')).toBe(1);
    expect(escapedLength('é')).toBe(2);
    expect(escapedLength('€')).toBe(3);
    expect(escapedLength('😀')).toBe(4);
    expect(escapedLength('\ud800')).toBe(6); // lone surrogate: \ud800
    expect(escapedLength('\ud800x')).toBe(7);
  });

  it('wire: escapeContent is JSON.stringify without the quotes', () => {
    fc.assert(
      fc.property(wireString(64, 10), (s) => {
        expect(escapeContent(s)).toBe(JSON.stringify(s).slice(1, -1));
      }),
      RUN,
    );
  });

  it('wire: utf8Length of an escaped fragment is its UTF-8 byte length', () => {
    fc.assert(
      fc.property(jsonValue, (v) => {
        const fragment = JSON.stringify(v) ?? 'null';
        expect(utf8Length(fragment)).toBe(Buffer.byteLength(fragment, 'utf8'));
      }),
      RUN,
    );
    expect(utf8Length('é')).toBe(2);
    expect(utf8Length('x'.repeat(40) + '€')).toBe(43);
  });

  it('wire: mirrorLength is the size of a fragment written again inside a JSON string', () => {
    fc.assert(
      fc.property(jsonValue, (v) => {
        const fragment = JSON.stringify(v) ?? 'null';
        expect(mirrorLength(fragment)).toBe(mirrorBytes(fragment));
      }),
      RUN,
    );
    expect(mirrorLength('{"a":"\\n"}')).toBe(escapedBytes('{"a":"\\n"}'));
  });

  it('wire: cutString keeps the longest prefix within the budget, measured as JSON.stringify bytes', () => {
    fc.assert(
      fc.property(wireString(48, 8), fc.nat(200), (s, budget) => {
        const cut = cutString(s, 0, budget, false);
        const kept = s.slice(0, cut.end);
        expect(cut.bytes).toBe(escapedBytes(kept));
        expect(cut.mirror).toBe(cut.bytes);
        expect(cut.bytes).toBeLessThanOrEqual(budget);
        if (cut.end < s.length) {
          // maximal: one more character would not fit
          expect(escapedBytes(s.slice(0, nextCharEnd(s, cut.end)))).toBeGreaterThan(budget);
        }
      }),
      RUN,
    );
  });

  it('wire: cutString never ends between the halves of a surrogate pair', () => {
    fc.assert(
      fc.property(wireString(48, 8), fc.nat(200), fc.boolean(), (s, budget, mirror) => {
        const cut = cutString(s, 0, budget, mirror);
        expect(endsOnCharBoundary(s, cut.end)).toBe(true);
      }),
      RUN,
    );
    // an emoji at the cut point is kept or dropped whole
    expect(cutString('ab😀', 0, 5, false)).toEqual({ end: 2, bytes: 2, mirror: 2 });
    expect(cutString('ab😀', 0, 6, false)).toEqual({ end: 4, bytes: 6, mirror: 6 });
    expect(cutString('😀😀', 0, 7, false).end).toBe(2);
  });

  it('wire: cutString treats lone surrogates and control characters as 6-byte escapes', () => {
    expect(cutString('a\ud800', 0, 6, false)).toMatchObject({ end: 1, bytes: 1 });
    expect(cutString('a\ud800', 0, 7, false)).toMatchObject({ end: 2, bytes: 7 });
    expect(cutString('\udc00\ud800', 0, 12, false)).toMatchObject({ end: 2, bytes: 12 }); // low then high: two lone ones
    expect(cutString('\ud800\udc00', 0, 4, false)).toMatchObject({ end: 2, bytes: 4 }); // a pair: 4 bytes
    expect(cutString('x\u0001', 0, 6, false)).toMatchObject({ end: 1, bytes: 1 });
    expect(cutString('"\\', 0, 3, false)).toMatchObject({ end: 1, bytes: 2 });
  });

  it('wire: cutString from an offset measures only the rest of the string', () => {
    fc.assert(
      fc.property(wireString(32, 4), wireString(32, 4), fc.nat(120), (head, tail, budget) => {
        const s = head + tail;
        const start = head.length;
        // start inside a pair would not be a valid call; skip that case
        fc.pre(endsOnCharBoundary(s, start));
        const cut = cutString(s, start, budget, false);
        expect(cut.bytes).toBe(escapedBytes(s.slice(start, cut.end)));
        expect(cut.bytes).toBeLessThanOrEqual(budget);
      }),
      RUN,
    );
  });

  it('wire: cutString in mirror mode bounds the cost of the kept part written twice', () => {
    fc.assert(
      fc.property(wireString(48, 8), fc.nat(250), (s, budget) => {
        const cut = cutString(s, 0, budget, true);
        const kept = s.slice(0, cut.end);
        expect(cut.bytes).toBe(escapedBytes(kept));
        expect(cut.mirror).toBe(mirrorBytes(JSON.stringify(kept).slice(1, -1)));
        expect(cut.mirror).toBeLessThanOrEqual(budget);
        if (cut.end < s.length) {
          const more = s.slice(0, nextCharEnd(s, cut.end));
          expect(mirrorBytes(JSON.stringify(more).slice(1, -1))).toBeGreaterThan(budget);
        }
      }),
      RUN,
    );
    expect(cutString('"', 0, 3, true).end).toBe(0); // \" written again is \\\" (4 bytes)
    expect(cutString('"', 0, 4, true)).toEqual({ end: 1, bytes: 2, mirror: 4 });
  });

  it('wire: cutString on a budget of zero keeps nothing', () => {
    fc.assert(
      fc.property(fc.string({ unit: wireChar, minLength: 1, maxLength: 8 }), (s) => {
        expect(cutString(s, 0, 0, false)).toEqual({ end: 0, bytes: 0, mirror: 0 });
      }),
      RUN,
    );
  });
});
