import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { CursorCodec, isCanonicalBase64url } from '../../src/shared/cursor.js';

const ALPHABET = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_';
/** Characters a tamperer might try besides the alphabet. */
const EXTRA = ['=', '.', '+', '/', ' ', '\n', '%', 'é', '\u0000', '\u{1F600}'];
const CHARS = [...ALPHABET, ...EXTRA];

/** Real cursors of several payload sizes (so every residue of the length mod 4 is covered). */
function cursors(codec: CursorCodec): { kind: string; cursor: string }[] {
  const out: { kind: string; cursor: string }[] = [];
  for (let n = 0; n < 8; n++) out.push({ kind: 'list', cursor: codec.encode('list', { p: 'dir/'.repeat(n), o: n, k: 'x'.repeat(n) }) });
  out.push({ kind: 'search', cursor: codec.encode('search', { q: '**/*.ts', seen: 12345, p: 'src' }) });
  return out;
}

/** Every single-character change of `s`: substitutions, deletions, insertions. */
function* mutations(s: string): Generator<string> {
  for (let i = 0; i <= s.length; i++) {
    if (i < s.length) {
      yield s.slice(0, i) + s.slice(i + 1);
      for (const c of CHARS) if (c !== s[i]) yield s.slice(0, i) + c + s.slice(i + 1);
    }
    for (const c of CHARS) yield s.slice(0, i) + c + s.slice(i);
  }
}

function refused(codec: CursorCodec, kind: string, cursor: string): boolean {
  try {
    codec.decode(kind, cursor);
    return false;
  } catch (e) {
    return (e as { code?: string }).code === 'INVALID_CURSOR';
  }
}

describe('CursorCodec', () => {
  const codec = new CursorCodec('a fixed test key');

  it('cursor: a cursor it issued decodes to its payload', () => {
    const c = codec.encode('list', { p: 'a/b', o: 3 });
    expect(codec.decode('list', c)).toEqual({ t: 'list', p: 'a/b', o: 3 });
  });

  it('cursor: every one-character change at every position of real cursors is refused', () => {
    let tried = 0;
    for (const { kind, cursor: c } of cursors(codec)) {
      expect(refused(codec, kind, c)).toBe(false);
      for (const m of mutations(c)) {
        if (m === c) continue;
        tried++;
        if (!refused(codec, kind, m)) throw new Error(`accepted a changed cursor: ${JSON.stringify(m)} (from ${c})`);
      }
    }
    expect(tried).toBeGreaterThan(10_000);
  });

  it('cursor: padding, whitespace or a second dot around either part is refused', () => {
    for (const { cursor: c } of cursors(codec)) {
      const [body, sig] = c.split('.') as [string, string];
      const variants = [`${c}=`, `${c}==`, `${body}=.${sig}`, `${body}.${sig}.`, `.${c}`, ` ${c}`, `${c} `, `${body}.${sig}.${sig}`, `${body}..${sig}`];
      for (const v of variants) expect(refused(codec, 'list', v), v).toBe(true);
    }
  });

  it('cursor: random edits (fast-check) are refused unless they give back the same string', () => {
    const all = cursors(codec);
    fc.assert(
      fc.property(fc.integer({ min: 0, max: all.length - 1 }), fc.array(fc.tuple(fc.nat(), fc.constantFrom(...CHARS), fc.constantFrom('set', 'insert', 'delete')), { minLength: 1, maxLength: 4 }), (which, edits) => {
        const { kind, cursor: original } = all[which]!;
        let s = original;
        for (const [at, ch, op] of edits) {
          const i = at % (s.length + 1);
          s = op === 'set' ? s.slice(0, i) + ch + s.slice(i + 1) : op === 'insert' ? s.slice(0, i) + ch + s.slice(i) : s.slice(0, i) + s.slice(i + 1);
        }
        if (s === original) return;
        expect(refused(codec, kind, s)).toBe(true);
      }),
      { numRuns: 2000 },
    );
  });

  it('cursor: canonical base64url is exactly what Buffer encodes', () => {
    for (let n = 0; n < 40; n++) {
      const text = Buffer.from(Array.from({ length: n }, (_, i) => (i * 37 + n) & 255)).toString('base64url');
      if (n > 0) expect(isCanonicalBase64url(text)).toBe(true);
    }
    for (const t of ['', 'A', 'QR', 'QQ==', 'QQ=', 'Q Q', 'Q+', 'Q/', 'AAAAA']) expect(isCanonicalBase64url(t), t).toBe(false);
  });
});
