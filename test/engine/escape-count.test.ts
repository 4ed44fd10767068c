/**
 * The escape counter (escape-count.ts) against `JSON.stringify` and `Buffer.byteLength`: the
 * WebAssembly SIMD kernel and the JavaScript reference give the bytes `JSON.stringify` writes for
 * any string (escapes, control characters, every UTF-8 length, surrogate pairs and lone
 * surrogates), and its UTF-8 length, at every position within the kernel's blocks of 16 and 64
 * units and across its windows.
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { escapeCountWasmAvailable, escapedSize, escapedSizeJs, escapedSizeWasm, utf8Size, utf8SizeWasm } from '../../src/engine/escape-count.js';
import { timeBox } from '../helpers/time-box.js';

const RUN = timeBox(600, 2500);

/** What `JSON.stringify` writes between the quotes, in UTF-8 bytes. */
const wire = (s: string): number => Buffer.byteLength(JSON.stringify(s), 'utf8') - 2;
/** UTF-8 bytes as Node counts them (a lone surrogate as U+FFFD). */
const utf8 = (s: string): number => Buffer.byteLength(s, 'utf8');

/** Every class of code unit the kernel tells apart, and its neighbours at the class edges. */
const UNITS = [
  'a', '~', '\u007f', ' ', '"', '\\', '/', '\u0000', '\u0007', '\b', '\t', '\n', '\u000b', '\f', '\r', '\u000e', '\u001f',
  '\u0080', 'é', '\u00ff', '\u0100', '\u0122', '\u015c', '\u07ff', '\u0800', '—', '\u2028', '\ud7ff', '\ue000', '\ufffd', '\uffff',
  '😀', '\ud800', '\udbff', '\udc00', '\udfff',
];
const unit = fc.constantFrom(...UNITS);
/** Mostly ASCII with rare others (the kernel's ASCII loop, and its exits), or any mix. */
const text = fc.oneof(
  fc.array(unit, { maxLength: 300 }).map((u) => u.join('')),
  fc.tuple(fc.nat({ max: 400 }), fc.array(fc.tuple(fc.nat(), unit), { maxLength: 4 })).map(([n, marks]) => {
    const a = Array.from({ length: n }, (_, i) => String.fromCharCode(0x20 + ((i * 7) % 0x5f)));
    for (const [at, u] of marks) if (n > 0) a[at % n] = u;
    return a.join('');
  }),
  fc.string({ unit: 'binary', maxLength: 200 }),
);

describe('escape-count', () => {
  it('escape-count: the JavaScript reference is the wire size', () => {
    fc.assert(
      fc.property(text, (s) => {
        expect(escapedSizeJs(s)).toBe(wire(s));
        expect(escapedSize(s)).toBe(wire(s));
        expect(utf8Size(s)).toBe(utf8(s));
        expect(utf8Size(s.repeat(8))).toBe(utf8(s.repeat(8)));
      }),
      RUN,
    );
  });

  it('escape-count: every unit alone and at every offset of a 64-unit run', () => {
    for (const u of UNITS) {
      for (let at = 0; at < 80; at++) {
        for (const fill of ['a', 'é']) {
          const s = fill.repeat(at) + u + fill.repeat(79 - at);
          expect(escapedSizeJs(s)).toBe(wire(s));
          if (escapeCountWasmAvailable()) expect(escapedSizeWasm(s)).toBe(wire(s));
          if (escapeCountWasmAvailable()) expect(utf8SizeWasm(s)).toBe(utf8(s));
        }
      }
    }
  });
});

describe.runIf(escapeCountWasmAvailable())('escape-count (WebAssembly SIMD)', () => {
  it('escape-count: the kernel agrees with the reference on any string', () => {
    fc.assert(
      fc.property(text, (s) => {
        expect(escapedSizeWasm(s)).toBe(escapedSizeJs(s));
        expect(utf8SizeWasm(s)).toBe(utf8(s));
      }),
      RUN,
    );
  });

  it('escape-count: windows never split a surrogate pair, whatever their size', () => {
    fc.assert(
      fc.property(text, fc.integer({ min: 2, max: 70 }), (s, w) => {
        expect(escapedSizeWasm(s, w)).toBe(wire(s));
        expect(utf8SizeWasm(s, w)).toBe(utf8(s));
      }),
      RUN,
    );
    // Pairs and lone surrogates on every window edge.
    for (const s of ['😀'.repeat(50), 'a😀'.repeat(40), '\ud800a\udc00'.repeat(30), '\udc00\ud800'.repeat(30), 'x\ud800'.repeat(30)]) {
      for (let w = 2; w < 40; w++) {
        expect(escapedSizeWasm(s, w)).toBe(wire(s));
        expect(utf8SizeWasm(s, w)).toBe(utf8(s));
      }
    }
  });

  it('escape-count: long strings in the full windows, counts past a byte lane', () => {
    // 255 blocks of 16 units fill a lane's counters; these strings run past many of them.
    for (const [s, name] of [
      ['\u0001'.repeat(300_000), 'controls'],
      ['"\\'.repeat(150_000), 'quotes'],
      ['😀'.repeat(150_000), 'pairs'],
      ['\ud800'.repeat(100_000), 'lone high'],
      ['東'.repeat(250_000), 'three bytes'],
      ['line of "output"\n'.repeat(20_000) + 'é', 'text'],
    ] as const) {
      expect(escapedSizeWasm(s), name).toBe(wire(s));
      expect(escapedSize(s), name).toBe(wire(s));
      expect(utf8Size(s), name).toBe(utf8(s));
    }
  });
});
