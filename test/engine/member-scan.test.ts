import { describe, expect, it } from 'vitest';
import { scalarComplete, SCALAR_START, stepScalar } from '../../src/engine/index.js';
import { MemberScanner, type MemberPolicy, type ValueTake } from '../../src/engine/index.js';

const SIZES = [1, 2, 3, 7, 64, 1 << 20];

/** Scan `text` in pieces of `size` bytes, every value taken as `take` answers; returns what the policy saw. */
function scan(text: string, size: number, take: (first: number, level: number) => ValueTake = () => 'hold', maxHeldBytes = 1024) {
  const events: string[] = [];
  let streamed = '';
  const policy: MemberPolicy = {
    begin: (shape, rest) => void events.push(`begin ${shape} ${rest.toString().slice(0, 1)}`),
    key: (name, tooLong, level) => void events.push(`key ${level} ${String(name)}${tooLong ? ' (too long)' : ''}`),
    value: (first, level) => take(first, level),
    piece: (b) => void (streamed += b.toString()),
    valueEnd: (held, level) => {
      events.push(`end ${level} ${held === undefined ? '-' : held.toString()}${streamed === '' ? '' : ` streamed ${streamed}`}`);
      streamed = '';
    },
    close: (rest) => void events.push(`close ${rest.toString()}`),
  };
  const s = new MemberScanner(policy, { maxKeyBytes: 8, maxHeldBytes });
  const bytes = Buffer.from(text);
  for (let at = 0; at < bytes.length; at += size) s.push(bytes.subarray(at, at + size));
  s.end();
  return { events, error: s.error, shape: s.shape, done: s.done };
}

describe('MemberScanner', () => {
  it('member-scan: keys (escaped, too long), held values, the closing brace and what follows it, at every chunk size', () => {
    for (const size of SIZES) {
      const r = scan('{"a":1, "\\u0062" : "x\\"y" ,"long-key-x":[1,{"}":2}],"n":null} ', size);
      expect(r.events, `@${size}`).toEqual([
        'begin object {',
        'key 0 a',
        'end 0 1',
        'key 0 b',
        'end 0 "x\\"y"',
        'key 0 undefined (too long)',
        'end 0 [1,{"}":2}]',
        'key 0 n',
        'end 0 null',
        expect.stringMatching(/^close \}/),
      ]);
      expect(r).toMatchObject({ error: undefined, shape: 'object', done: true });
    }
  });

  it('member-scan: entered objects are read one level down; enter on anything else passes it; stream hands the bytes on', () => {
    const take = (first: number, level: number): ValueTake => (level === 0 ? 'enter' : first === 0x5b ? 'stream' : 'pass');
    for (const size of SIZES) {
      expect(scan('{"r":{"s":{"t":1},"u":[2, "]"]},"v":7}', size, take).events, `@${size}`).toEqual([
        'begin object {',
        'key 0 r',
        'key 1 s',
        'end 1 -',
        'key 1 u',
        'end 1 - streamed [2, "]"]',
        'end 0 -',
        'key 0 v',
        'end 0 -',
        'close }',
      ]);
    }
  });

  it('member-scan: a held value past the cap is handed on as undefined; a number at the very end is complete', () => {
    expect(scan('{"a":"12345","b":"123456"}', 3, () => 'hold', 7).events).toContain('end 0 "12345"');
    expect(scan('{"a":"12345","b":"123456"}', 3, () => 'hold', 7).events).toContain('end 0 -');
    const cut = scan('{"a":-12.5e3', 2);
    expect(cut.events).toContain('end 0 -12.5e3');
    expect(cut.error).toEqual({ at: 12, reason: 'the input ended inside the object' });
  });

  it('member-scan: the first fault is reported with its byte offset, and the scan reads on', () => {
    const cases: [string, number, string][] = [
      ['{,"a":1}', 1, 'expected a key'],
      ['{"a":1,}', 7, 'a comma before `}`'],
      ['{"a" 1}', 5, 'expected `:` after a key'],
      ['{"a":}', 5, 'expected a value'],
      ['{"a":tru}', 5, 'not a JSON number, true, false or null'],
      ['{"a":01}', 5, 'not a JSON number, true, false or null'],
      ['{"a":1 "b":2}', 7, 'expected `,` or `}` after a value'],
      ['{"\\x":1}', 1, 'a key that is not a JSON string'],
      ['{"a":1} x', 8, 'bytes after the object'],
      ['{"a":"é', 8, 'the input ended inside the object'],
    ];
    for (const [text, at, reason] of cases) {
      for (const size of SIZES) expect(scan(text, size).error, `${text} @${size}`).toEqual({ at, reason });
    }
    // Past a fault the scan reads on as before: the later member is still reported.
    expect(scan('{"a":1 x,"b":2}', 1)).toMatchObject({ error: { at: 7 }, events: expect.arrayContaining(['key 0 b', 'end 0 2']) });
  });

  it('member-scan: what is not an object ends the scan at its first byte', () => {
    expect(scan('  [{"a":1}]', 1)).toMatchObject({ shape: 'array', done: true, events: ['begin array ['] });
    expect(scan('"x"', 1)).toMatchObject({ shape: 'other', done: true });
    expect(scan('  ', 1)).toMatchObject({ shape: 'empty', done: false, error: undefined });
  });

  it('json-scalar: numbers and literals as RFC 8259 writes them, nothing else', () => {
    const complete = (text: string): boolean => scalarComplete([...Buffer.from(text)].reduce(stepScalar, SCALAR_START));
    for (const ok of ['0', '-0', '7', '-12', '0.5', '10.25', '1e5', '1E+5', '2e-05', '-0.0e0', 'true', 'false', 'null', '123456789012345678901234567890']) {
      expect(complete(ok), ok).toBe(true);
    }
    for (const bad of ['', '-', '01', '1.', '.5', '+1', '1e', '1e+', '1.2.3', '0x1', 'tru', 'truee', 'nul', 'NaN', 'Infinity', '--1', '1-', 'True']) {
      expect(complete(bad), bad).toBe(false);
    }
  });
});
