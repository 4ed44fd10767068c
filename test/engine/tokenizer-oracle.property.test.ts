/**
 * Differential test of the byte tokenizer against an independent JSON tokenizer (stream-json's
 * core parser, a dev dependency used only here): on fuzzed documents, with numbers written every
 * way the grammar allows, strings escaped every way (short escapes, `\u` in either case, `\/`,
 * surrogate pairs and lone surrogates as escapes, raw multi-byte UTF-8) and whitespace anywhere,
 * both give the same tokens, value for value, whatever the byte chunking of our input. On
 * documents broken by one ASCII edit, both accept or both reject.
 */
import fc from 'fast-check';
import { jsonParser } from 'stream-json/core/parser.js';
import { describe, expect, it } from 'vitest';
import type { JsonEvents } from '../../src/engine/events.js';
import { Tokenizer } from '../../src/engine/tokenizer.js';
import { timeBox } from '../helpers/time-box.js';

/** Time-boxed; `npm run test:long` scales them up (test/helpers/time-box.ts). */
const RUN = timeBox(300, 2500);

type Tok = [string, string?];

/** stream-chain's "no output" marker (a registered symbol), also the flush signal. */
const none = Symbol.for('object-stream.none');

/** The oracle: stream-json's tokenizer, values packed (one token per key, string and number). */
function oracle(text: string): Tok[] {
  const parse = jsonParser({ packValues: true, streamValues: false });
  const out: Tok[] = [];
  const take = (r: unknown): void => {
    if (r === none) return;
    const values = (r as { values?: { name: string; value?: unknown }[] }).values ?? [r as { name: string; value?: unknown }];
    for (const t of values) {
      if (t.name === 'keyValue' || t.name === 'stringValue' || t.name === 'numberValue') out.push([t.name, t.value as string]);
      else out.push([t.name]);
    }
  };
  take(parse(text));
  take(parse(none as unknown as string)); // flush (the parser reads the marker as end of input)
  return out;
}

/** Ours: the byte tokenizer fed `bytes` cut at `cuts`, its events written as the oracle's tokens. */
function ours(bytes: Buffer, cuts: number[]): Tok[] {
  const out: Tok[] = [];
  let str = '';
  const events: JsonEvents = {
    openObject: () => (out.push(['startObject']), true),
    openArray: () => (out.push(['startArray']), true),
    closeObject: () => void out.push(['endObject']),
    closeArray: () => void out.push(['endArray']),
    key: (name) => (out.push(['keyValue', name]), true),
    stringStart: () => ((str = ''), true),
    stringChunk: (s) => ((str += s), true),
    stringEnd: () => void out.push(['stringValue', str]),
    scalar: (raw) => void out.push(raw === 'null' ? ['nullValue'] : raw === 'true' ? ['trueValue'] : raw === 'false' ? ['falseValue'] : ['numberValue', raw]),
  };
  const tok = new Tokenizer(events);
  let at = 0;
  for (const c of [...cuts.filter((x) => x > 0 && x < bytes.length).sort((a, b) => a - b), bytes.length]) {
    tok.write(bytes.subarray(at, c));
    at = c;
  }
  tok.end();
  return out;
}

// ------------------------------------------------------------------ fuzzed JSON text

const ws = fc.constantFrom('', '', '', ' ', '\n', '\t', '\r\n', '  ');
const digits = (min: number): fc.Arbitrary<string> => fc.string({ unit: fc.constantFrom(...'0123456789'), minLength: min, maxLength: 25 });
const number = fc
  .tuple(
    fc.boolean(),
    fc.oneof(fc.constant('0'), fc.tuple(fc.constantFrom(...'123456789'), digits(0)).map(([a, b]) => a + b)),
    fc.option(digits(1).map((d) => '.' + d), { nil: '' }),
    fc.option(fc.tuple(fc.constantFrom('e', 'E'), fc.constantFrom('', '+', '-'), digits(1)).map((p) => p.join('')), { nil: '' }),
  )
  .map(([neg, int, frac, exp]) => (neg ? '-' : '') + int + frac + exp);

const SHORT: Record<number, string> = { 0x22: '\\"', 0x5c: '\\\\', 0x08: '\\b', 0x0c: '\\f', 0x0a: '\\n', 0x0d: '\\r', 0x09: '\\t', 0x2f: '\\/' };
const hex4 = (u: number, upper: boolean): string => {
  const h = u.toString(16).padStart(4, '0');
  return '\\u' + (upper ? h.toUpperCase() : h);
};
/** One UTF-16 unit (or a pair) of string content: ASCII, controls, quotes, multi-byte, astral, lone surrogates. */
const unit = fc.oneof(
  fc.integer({ min: 0x20, max: 0x7e }).map((u) => [u]),
  fc.constantFrom(0x22, 0x5c, 0x2f, 0x00, 0x08, 0x0a, 0x0d, 0x1f, 0x7f).map((u) => [u]),
  fc.integer({ min: 0x80, max: 0xd7ff }).map((u) => [u]),
  fc.integer({ min: 0xe000, max: 0xffff }).map((u) => [u]),
  fc.integer({ min: 0x10000, max: 0x10ffff }).map((cp) => [0xd800 + ((cp - 0x10000) >> 10), 0xdc00 + ((cp - 0x10000) & 0x3ff)]),
  fc.integer({ min: 0xd800, max: 0xdfff }).map((u) => [u]),
);
/** A JSON string literal: each unit written raw where it may be, else (or by choice) escaped. */
const stringLit = fc.array(fc.tuple(unit, fc.nat(3), fc.boolean()), { maxLength: 12 }).map((parts) => {
  let s = '"';
  for (const [units, how, upper] of parts) {
    const lone = units.length === 1 && units[0]! >= 0xd800 && units[0]! <= 0xdfff;
    for (const u of units) {
      const mustEscape = u < 0x20 || u === 0x22 || u === 0x5c || lone;
      if (!mustEscape && how < 2) s += String.fromCharCode(u);
      else if (how === 2 && SHORT[u] !== undefined) s += SHORT[u];
      else s += hex4(u, upper);
    }
  }
  return s + '"';
});

const { value } = fc.letrec<{ value: string }>((tie) => ({
  value: fc.oneof(
    { depthSize: 'small', withCrossShrink: true },
    number,
    stringLit,
    fc.constantFrom('true', 'false', 'null'),
    fc.tuple(fc.array(fc.tuple(ws, tie('value'), ws), { maxLength: 5 }), ws).map(([items, w]) => (items.length === 0 ? `[${w}]` : `[${items.map((p) => p.join('')).join(',')}]`)),
    fc
      .tuple(fc.array(fc.tuple(ws, stringLit, ws, ws, tie('value'), ws), { maxLength: 5 }), ws)
      .map(([ms, w]) => (ms.length === 0 ? `{${w}}` : `{${ms.map(([a, k, b, c, v, d]) => `${a}${k}${b}:${c}${v}${d}`).join(',')}}`)),
  ),
}));
const doc = fc.tuple(ws, value, ws).map((p) => p.join(''));
const cuts = fc.array(fc.nat(300), { maxLength: 12 });

function rejects(f: () => unknown): boolean {
  try {
    f();
    return false;
  } catch {
    return true;
  }
}

describe('tokenizer against an independent tokenizer', () => {
  it('tokenizer-oracle: the same tokens on fuzzed JSON (numbers, escapes, whitespace), any chunking', () => {
    fc.assert(
      fc.property(doc, cuts, (text, at) => {
        expect(ours(Buffer.from(text, 'utf8'), at)).toEqual(oracle(text));
      }),
      RUN,
    );
  });

  it('tokenizer-oracle: one ASCII edit — both accept (with the same tokens) or both reject', () => {
    const edit = fc.tuple(doc, fc.nat(), fc.constantFrom(...'{}[],:"\\0123456789-+.eE tfnulrx'), fc.constantFrom('insert', 'replace', 'delete'));
    fc.assert(
      fc.property(edit, cuts, ([text, pos, ch, op], at) => {
        // Edits land on ASCII positions only, so the text stays valid UTF-16 and valid UTF-8.
        const ascii = [...text.matchAll(/[\x20-\x7e]/g)].map((m) => m.index);
        if (ascii.length === 0) return;
        const i = ascii[pos % ascii.length]!;
        const broken = op === 'insert' ? text.slice(0, i) + ch + text.slice(i) : text.slice(0, i) + (op === 'replace' ? ch : '') + text.slice(i + 1);
        const bytes = Buffer.from(broken, 'utf8');
        const theirs = rejects(() => oracle(broken));
        const mine = rejects(() => ours(bytes, at));
        expect({ broken, rejected: mine }).toEqual({ broken, rejected: theirs });
        if (!mine) expect(ours(bytes, at)).toEqual(oracle(broken));
      }),
      RUN,
    );
  });
});
