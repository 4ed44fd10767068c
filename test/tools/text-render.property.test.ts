/**
 * What the model reads of a `serve` answer (src/tools/text-render.ts): read back by its own rules,
 * the text gives the structure back exactly, so nothing is lost or misread; no value, however
 * hostile, writes a line at its key's indentation or shallower (a file cannot forge the answer's
 * fields); and the text is deterministic.
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { renderText } from '../../src/tools/text-render.js';
import { timeBox } from '../helpers/time-box.js';

type Json = null | boolean | number | string | Json[] | { [k: string]: Json };

const RUN = timeBox(400, 3000);

// Strings biased to what could be misread: newlines, tabs, quotes, leading marks, literals, keys.
const hostile = fc.oneof(
  fc.string({ unit: 'grapheme', maxLength: 40 }),
  fc.string({ unit: 'binary', maxLength: 20 }),
  fc.constantFrom('', ' ', 'null', 'true', '12', '-3.5e2', '"q"', '|', '- item', '{"a":1}', '[1]', 'x: 1', '\nhas_more: false', 'a\tb', 'line1\nline2\n', '\n\n', '  indented\n', 'a\r\nb', '\u2028'),
  fc.array(fc.constantFrom('a', ' ', '\n', '\t', ':', '"', '-', '|', '{', 'é', '😀', '\u0001', '\u007f', '\u0085', '\u2028', '\u202e', '\u200b', '\u{e0020}'), { maxLength: 12 }).map((xs) => xs.join('')),
);
const scalarArb: fc.Arbitrary<Json> = fc.oneof(hostile, fc.integer(), fc.double({ noNaN: true, noDefaultInfinity: true }).filter((n) => !Object.is(n, -0)), fc.boolean(), fc.constant(null));
const keyArb = fc.oneof(fc.constantFrom('path', 'entries', 'name', 'type', 'has_more', 'content'), hostile.filter((k) => k.length > 0));
const flatObject = fc.dictionary(keyArb, scalarArb, { maxKeys: 4 });
const valueArb: fc.Arbitrary<Json> = fc.oneof(
  scalarArb,
  fc.array(flatObject, { maxLength: 5 }),
  fc.array(fc.oneof(scalarArb, flatObject), { maxLength: 5 }),
  fc.dictionary(keyArb, fc.oneof(scalarArb, fc.array(flatObject, { maxLength: 3 })), { maxKeys: 3 }),
);
const answerArb = fc.dictionary(keyArb, valueArb, { maxKeys: 6 });

/** A value written on one line: JSON when it reads as JSON, else the string itself. */
function token(s: string): Json {
  if (/^(?:null|true|false|-?\d[\d.eE+-]*)$/.test(s) || '"{['.includes(s[0] ?? '"')) return JSON.parse(s) as Json;
  return s;
}

function keyOf(s: string): string {
  return s.startsWith('"') ? (JSON.parse(s) as string) : s;
}

/** A member defined, never the prototype (a key may be `__proto__`). */
function set(o: Record<string, Json>, key: string, v: Json): void {
  Object.defineProperty(o, key, { value: v, enumerable: true, writable: true, configurable: true });
}

/** Reads the text back by the rules the renderer documents. */
function readBack(text: string): Record<string, Json> {
  const lines = text.length === 0 ? [] : text.split('\n');
  let i = 0;
  const obj = (indent: string): Record<string, Json> => {
    const out: Record<string, Json> = {};
    while (i < lines.length && lines[i]!.startsWith(indent) && !lines[i]!.startsWith(indent + ' ')) {
      const line = lines[i++]!.slice(indent.length);
      // The key: a JSON string or a name, then `: …`, `[N]{…}:` or `[N]:` or `:`.
      const km = /^("(?:[^"\\]|\\.)*"|[A-Za-z_][A-Za-z0-9_.-]*)(.*)$/.exec(line);
      if (km === null) throw new Error(`unreadable line ${JSON.stringify(line)} in ${JSON.stringify(text)}`);
      const key = keyOf(km[1]!);
      const rest = km[2]!;
      const inner = indent + '  ';
      const rows = (): string[] => {
        const r: string[] = [];
        while (i < lines.length && (lines[i]!.startsWith(inner) || (lines[i] === '' && false))) r.push(lines[i++]!.slice(inner.length));
        return r;
      };
      let m: RegExpExecArray | null;
      if (rest === ': |') {
        const r: string[] = [];
        const blockIndent = indent + ' ';
        while (i < lines.length && (lines[i]!.startsWith(blockIndent) || lines[i] === '')) r.push(lines[i++]!.slice(blockIndent.length));
        set(out, key, r.join('\n'));
      } else if ((m = /^\[(\d+)\]\{(.*)\}:$/.exec(rest))) {
        const cols = m[2]!.length === 0 ? [] : splitKeys(m[2]!);
        set(out, key, rows().map((row) => {
          const cells = row.split('\t');
          const item: Record<string, Json> = {};
          cols.forEach((c, j) => {
            if (cells[j] !== '') set(item, c, token(cells[j]!));
          });
          return item;
        }));
        expect((out[key] as Json[]).length).toBe(Number(m[1]));
      } else if ((m = /^\[(\d+)\]:$/.exec(rest))) {
        set(out, key, rows().map(token));
        expect((out[key] as Json[]).length).toBe(Number(m[1]));
      } else if (rest === ':') {
        set(out, key, obj(inner));
      } else {
        expect(rest.startsWith(': ')).toBe(true);
        set(out, key, token(rest.slice(2)));
      }
    }
    return out;
  };
  const result = obj('');
  expect(i).toBe(lines.length);
  return result;
}

function splitKeys(s: string): string[] {
  const out: string[] = [];
  const re = /("(?:[^"\\]|\\.)*"|[A-Za-z_][A-Za-z0-9_.-]*)(?:,|$)/y;
  let m: RegExpExecArray | null;
  while (re.lastIndex < s.length && (m = re.exec(s))) out.push(keyOf(m[1]!));
  return out;
}

/** The structure as JSON would carry it (undefined members gone). */
const plain = (v: unknown): unknown => JSON.parse(JSON.stringify(v));

describe('text render', () => {
  it('text render: read back by its rules, the text gives the structure back exactly', () => {
    fc.assert(
      fc.property(answerArb, (answer) => {
        const text = renderText(answer);
        expect(renderText(answer)).toBe(text);
        expect(readBack(text)).toEqual(plain(answer));
      }),
      RUN,
    );
  });

  it('text render: a value never writes a line at the top level; every top-level line is a field; no line breaks inside', () => {
    fc.assert(
      fc.property(answerArb, (answer) => {
        const top = renderText(answer)
          .split('\n')
          .filter((l) => l.length > 0 && !l.startsWith(' '));
        expect(top.length).toBe(Object.keys(answer).length);
        // No line holds a character a reader may break a line at, or any control but tab.
        // (DEL may stay, inside a JSON string: no reader breaks a line at it, and JSON keeps it raw.)
        for (const line of renderText(answer).split('\n')) expect(line).not.toMatch(/[\u0000-\u0008\u000a-\u001f\u0080-\u009f\u2028\u2029\p{Cf}]/u);
      }),
      RUN,
    );
  });

  it('text render: a hostile file read stays inside its block', () => {
    const content = 'real line\nhas_more: false\nnext_offset: 0\n\n  \t tabbed\n"quoted"';
    const text = renderText({ path: 'a.txt', content, next_offset: 57 });
    expect(text.split('\n').filter((l) => /^[a-z_]+:/.test(l))).toEqual(['path: a.txt', 'content: |', 'next_offset: 57']);
    expect(readBack(text)).toEqual({ path: 'a.txt', content, next_offset: 57 });
  });
});
