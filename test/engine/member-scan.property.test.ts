/**
 * The member scanner against the documents it reads, on fuzzed objects (duplicate keys, keys
 * escaped every way, numbers written every way the grammar allows, white space anywhere, nested
 * objects entered to a chosen depth) cut into chunks at every byte, at random places and whole:
 * the members it reports are the ones written, with their exact byte ranges (each range parses to
 * the member's value, the top level folds to what `JSON.parse` gives), and what it holds or streams
 * is the range's bytes. On the same documents broken by one edit where the scanner reads (a
 * structural byte deleted, a stray byte inserted, a scalar miswritten, the input cut short or
 * followed by more), the fault is reported, and every member before the edit is reported as before.
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { MemberScanner, type MemberPolicy, type ValueTake } from '../../src/engine/index.js';
import { prng } from '../helpers/prng.js';
import { timeBox } from '../helpers/time-box.js';

/** Time-boxed; `npm run test:long` scales them up (test/helpers/time-box.ts). */
const RUN = timeBox(300, 2000);

// ------------------------------------------------------------------ documents

type Node =
  | { kind: 'object'; entries: [string, Node][] }
  | { kind: 'array'; items: Node[] }
  | { kind: 'string'; s: string }
  | { kind: 'scalar'; text: string };

const keyArb = fc.oneof(
  fc.constantFrom('id', 'result', 'a', 'é', 'k"q', 'a\\b', '\u0000', '\u{1F600}', '__proto__', '0', '7', 'x/y', 'x'.repeat(40)),
  fc.string({ unit: 'binary', maxLength: 8 }),
);
const digits = (min: number, max: number): fc.Arbitrary<string> => fc.array(fc.constantFrom(...'0123456789'), { minLength: min, maxLength: max }).map((d) => d.join(''));
/** A number as any valid JSON text: sign, zero or digits, fraction, exponent in either case with or without a sign. */
const numberText = fc
  .tuple(
    fc.boolean(),
    fc.oneof(fc.constant('0'), fc.tuple(fc.constantFrom(...'123456789'), digits(0, 20)).map(([a, b]) => a + b)),
    fc.option(digits(1, 6)),
    fc.option(fc.tuple(fc.constantFrom('e', 'E'), fc.constantFrom('', '+', '-'), digits(1, 3))),
  )
  .map(([neg, int, frac, exp]) => `${neg ? '-' : ''}${int}${frac === null ? '' : `.${frac}`}${exp === null ? '' : exp.join('')}`);
const leaf: fc.Arbitrary<Node> = fc.oneof(
  fc.string({ unit: 'binary', maxLength: 12 }).map((s) => ({ kind: 'string' as const, s })),
  numberText.map((text) => ({ kind: 'scalar' as const, text })),
  fc.constantFrom('true', 'false', 'null').map((text) => ({ kind: 'scalar' as const, text })),
);
const { node } = fc.letrec<{ node: Node; object: Node; array: Node }>((tie) => ({
  node: fc.oneof({ maxDepth: 4 }, leaf, tie('object'), tie('array')),
  object: fc.array(fc.tuple(keyArb, tie('node')), { maxLength: 5 }).map((entries) => ({ kind: 'object' as const, entries })),
  array: fc.array(tie('node'), { maxLength: 4 }).map((items) => ({ kind: 'array' as const, items })),
}));
const topEntries = fc.array(fc.tuple(keyArb, node), { maxLength: 8 });

/** A member the scanner must report: where its key and value lie, in bytes. */
interface Written {
  level: number;
  name: string;
  keyStart: number;
  keyEnd: number;
  valueStart: number;
  valueEnd: number;
}

/** Where one edit breaks a document at a level the scanner reads. */
type Site = { op: 'delete'; at: number } | { op: 'insert'; at: number } | { op: 'scalar'; at: number; length: number };

/** A JSON string for `s`: some code points as `\u` escapes (either case, pairs for astral ones), `/` sometimes as `\/`. */
function jsonString(s: string, rnd: () => number): string {
  let out = '"';
  for (const cp of s) {
    const r = rnd();
    if (r < 0.25) {
      for (let k = 0; k < cp.length; k++) {
        const hex = cp.charCodeAt(k).toString(16).padStart(4, '0');
        out += `\\u${rnd() < 0.5 ? hex : hex.toUpperCase()}`;
      }
    } else if (cp === '/' && r < 0.6) out += '\\/';
    else out += JSON.stringify(cp).slice(1, -1); // escapes quotes, backslashes, controls, lone surrogates
  }
  return out + '"';
}

/** Writes a document, noting the members the scanner reads (objects entered below `enterDepth`) and where edits may go. */
function writeDoc(entries: [string, Node][], enterDepth: number, seed: number, indent: boolean): { text: string; members: Written[]; sites: Site[] } {
  const rnd = prng(seed);
  const members: Written[] = [];
  const sites: Site[] = [];
  let text = '';
  let bytes = 0;
  const put = (s: string): void => {
    text += s;
    bytes += Buffer.byteLength(s);
  };
  const ws = (): void => {
    if (indent || rnd() < 0.3) put([' ', '\n', '\t', '\r\n', '  '][Math.floor(rnd() * 5)]!);
  };
  const object = (es: [string, Node][], level: number, read: boolean): void => {
    const gap = (): void => {
      if (read) sites.push({ op: 'insert', at: bytes });
      ws();
    };
    if (read) sites.push({ op: 'delete', at: bytes });
    put('{');
    es.forEach(([k, v], i) => {
      if (i > 0) {
        if (read) sites.push({ op: 'delete', at: bytes });
        put(',');
      }
      gap();
      const keyStart = bytes;
      put(jsonString(k, rnd));
      const keyEnd = bytes;
      if (read) sites.push({ op: 'delete', at: keyStart }, { op: 'delete', at: keyEnd - 1 });
      gap();
      if (read) sites.push({ op: 'delete', at: bytes });
      put(':');
      gap();
      const w: Written = { level, name: k, keyStart, keyEnd, valueStart: bytes, valueEnd: 0 };
      if (read) members.push(w);
      value(v, level + 1, read && v.kind === 'object' && level < enterDepth);
      w.valueEnd = bytes;
      if (read && v.kind === 'scalar') sites.push({ op: 'scalar', at: w.valueStart, length: w.valueEnd - w.valueStart });
      gap();
    });
    if (es.length === 0) gap();
    if (read) sites.push({ op: 'delete', at: bytes });
    put('}');
  };
  const value = (v: Node, level: number, read: boolean): void => {
    if (v.kind === 'object') object(v.entries, level, read);
    else if (v.kind === 'array') {
      put('[');
      v.items.forEach((x, i) => {
        if (i > 0) put(',');
        ws();
        value(x, level + 1, false);
        ws();
      });
      put(']');
    } else put(v.kind === 'string' ? jsonString(v.s, rnd) : v.text);
  };
  ws();
  object(entries, 0, true);
  ws();
  return { text, members, sites };
}

// ------------------------------------------------------------------ the scan, recorded

/** A member as the scanner reported it. */
interface Seen extends Written {
  tooLong: boolean;
  take: ValueTake;
  /** `hold`: the held bytes (null past the cap); `stream`: the streamed bytes. */
  bytes?: string | null;
}

/**
 * Scan `input` cut at `cuts`. Objects are entered below `enterDepth`; other values are held,
 * streamed or passed in turn, so every take is met.
 */
function scan(input: Buffer, cuts: number[], o: { enterDepth: number; maxKeyBytes: number; maxHeldBytes: number }) {
  const seen: Seen[] = [];
  const open: Seen[] = [];
  let streamed: Buffer[] = [];
  let turn = 0;
  const policy: MemberPolicy = {
    key: (name, tooLong, level) => {
      const m: Seen = { level, name: name as string, tooLong, keyStart: s.span.keyStart, keyEnd: s.span.keyEnd, valueStart: -1, valueEnd: -1, take: 'pass' };
      seen.push(m);
      open.push(m);
    },
    value: (first, level) => {
      const m = open.at(-1)!;
      m.valueStart = s.span.valueStart;
      if (first === 0x7b && level < o.enterDepth) m.take = 'enter';
      else m.take = (['hold', 'stream', 'pass'] as const)[turn++ % 3]!;
      streamed = [];
      return m.take;
    },
    piece: (b) => void streamed.push(Buffer.from(b)),
    valueEnd: (held) => {
      const m = open.pop()!;
      m.valueEnd = s.span.valueEnd;
      if (m.take === 'hold') m.bytes = held === undefined ? null : held.toString('latin1');
      if (m.take === 'stream') m.bytes = Buffer.concat(streamed).toString('latin1');
    },
  };
  const s = new MemberScanner(policy, o);
  let at = 0;
  for (const c of [...cuts.filter((x) => x > 0 && x < input.length).sort((a, b) => a - b), input.length]) {
    s.push(input.subarray(at, c));
    at = c;
  }
  s.end();
  return { seen, error: s.error, shape: s.shape, done: s.done, broken: s.broken };
}

const options = fc.record({ enterDepth: fc.integer({ min: 0, max: 4 }), maxKeyBytes: fc.oneof(fc.constant(1 << 16), fc.integer({ min: 0, max: 12 })), maxHeldBytes: fc.oneof(fc.constant(1 << 20), fc.integer({ min: 0, max: 24 })) });
const cutsArb = fc.array(fc.nat({ max: 4000 }), { maxLength: 12 });

describe('MemberScanner (property)', () => {
  it('member-scan: reports the members written, byte for byte, in any chunking; the top level folds to JSON.parse', () => {
    fc.assert(
      fc.property(topEntries, options, fc.nat(), fc.boolean(), cutsArb, (entries, o, seed, indent, cuts) => {
        const { text, members } = writeDoc(entries, o.enterDepth, seed, indent);
        const input = Buffer.from(text);
        const whole = scan(input, [], o);
        expect(whole.error, text).toBeUndefined();
        expect(whole).toMatchObject({ shape: 'object', done: true, broken: false });
        // The members written, where they were written; a key past the cap is reported as too long.
        const raw = (from: number, to: number): string => input.subarray(from, to).toString('latin1');
        expect(whole.seen.map(({ level, name, keyStart, keyEnd, valueStart, valueEnd }) => ({ level, name, keyStart, keyEnd, valueStart, valueEnd }))).toEqual(
          members.map((m) => (m.keyEnd - m.keyStart - 2 > o.maxKeyBytes ? { ...m, name: undefined } : m)),
        );
        for (const m of whole.seen) {
          expect(m.tooLong).toBe(m.keyEnd - m.keyStart - 2 > o.maxKeyBytes);
          if (m.take === 'stream') expect(m.bytes).toBe(raw(m.valueStart, m.valueEnd));
          if (m.take === 'hold') expect(m.bytes).toBe(m.valueEnd - m.valueStart > o.maxHeldBytes ? null : raw(m.valueStart, m.valueEnd));
        }
        // Each range is the member's value; the top level folds as JSON.parse folds it (last repeat wins).
        const parsed = JSON.parse(text) as Record<string, unknown>;
        const valueOf = (m: Written): unknown => JSON.parse(input.subarray(m.valueStart, m.valueEnd).toString('utf8'));
        expect(Object.fromEntries(members.filter((m) => m.level === 0).map((m) => [m.name, valueOf(m)]))).toStrictEqual(parsed);
        for (const m of members) expect(JSON.parse(input.subarray(m.keyStart, m.keyEnd).toString('utf8'))).toBe(m.name);
        // Every chunking reports the same.
        expect(scan(input, cuts, o)).toEqual(whole);
        if (input.length <= 2000) expect(scan(input, Array.from({ length: input.length }, (_, i) => i), o)).toEqual(whole);
      }),
      RUN,
    );
  });

  const STRAY = ['x', ':', ',', '}', ']', '1', '"', 'n'];
  const BAD_SCALARS = ['', 'tru', 'nul', 'fals', 'truex', 'nulll', 'True', '01', '00', '1.', '-', '--1', '+1', '.5', '1e', '1e+', '1.2.3', '0x1', 'NaN', 'Infinity', '-0.'];

  it('member-scan: one edit where the scanner reads is reported, and every member before it is reported as before', () => {
    const edit = fc.record({ which: fc.nat(), kind: fc.constantFrom('site', 'site', 'site', 'cut', 'after'), pick: fc.nat() });
    fc.assert(
      fc.property(topEntries, options, fc.nat(), cutsArb, edit, (entries, o, seed, cuts, e) => {
        const { text, sites } = writeDoc(entries, o.enterDepth, seed, false);
        const input = Buffer.from(text);
        let broken: Buffer;
        let at: number;
        if (e.kind === 'cut') {
          at = e.which % input.length;
          broken = input.subarray(0, at);
        } else if (e.kind === 'after') {
          at = input.length;
          broken = Buffer.concat([input, Buffer.from(['x', '}', '{}', '1', ' ,'][e.pick % 5]!)]);
        } else {
          const site = sites[e.which % sites.length]!;
          at = site.at;
          const end = site.op === 'delete' ? at + 1 : site.op === 'scalar' ? at + site.length : at;
          const put = site.op === 'insert' ? STRAY[e.pick % STRAY.length]! : site.op === 'scalar' ? BAD_SCALARS[e.pick % BAD_SCALARS.length]! : '';
          broken = Buffer.concat([input.subarray(0, at), Buffer.from(put), input.subarray(end)]);
        }
        let valid = true;
        try {
          JSON.parse(broken.toString('utf8'));
        } catch {
          valid = false;
        }
        fc.pre(!valid); // an edit that happens to leave valid JSON (`1` next to a digit, white space cut) proves nothing
        const got = scan(broken, cuts, o);
        expect(got.error !== undefined || got.shape !== 'object', broken.toString('utf8')).toBe(true);
        if (got.error !== undefined) expect(got.error.at).toBeLessThanOrEqual(broken.length);
        const before = (seen: Seen[]): Seen[] => seen.filter((m) => m.valueEnd >= 0 && m.valueEnd < at);
        expect(before(got.seen)).toEqual(before(scan(input, cuts, o).seen));
      }),
      RUN,
    );
  });
});
