/**
 * Unit tests of the byte tokenizer: the events it sends for every JSON token, strings and UTF-8
 * split anywhere, exact byte offsets in errors, and the consumer's decisions (omitted values,
 * refused keys, cut strings, bulk skipping of a closed container's tail, the raw-byte tap).
 */
import { describe, expect, it } from 'vitest';
import { BudgetError } from '../../src/engine/errors.js';
import { MAX_KEY_UNITS } from '../../src/engine/limits.js';
import type { JsonEvents } from '../../src/engine/events.js';
import { MAX_NUMBER_BYTES } from '../../src/engine/json-bytes.js';
import { newSkipState, scanSkipJs, SKIP_MORE } from '../../src/engine/skip-scan.js';
import { Tokenizer } from '../../src/engine/tokenizer.js';

// ------------------------------------------------------------------ recording consumer

interface RecorderOptions {
  /** Refuse these keys (their values must then be skipped without events). */
  refuseKeys?: readonly string[];
  /** Omit the n-th (0-based) container or string value start of this kind. */
  omitObject?: (n: number) => boolean;
  omitArray?: (n: number) => boolean;
  omitString?: (n: number) => boolean;
  /** Cut the n-th string after this many UTF-16 units were received. */
  cutStringAfter?: (n: number) => number | undefined;
  /** canSkipRest becomes true once the innermost container has this many children. */
  skipRestAfter?: number;
}

interface Recorder {
  events: string[];
  consumer: JsonEvents;
}

function recorder(opts: RecorderOptions = {}): Recorder {
  const events: string[] = [];
  let objects = 0;
  let arrays = 0;
  let strings = 0;
  let current = -1;
  let received = 0;
  // children seen per open container (for canSkipRest)
  const children: number[] = [];
  const child = (): void => {
    if (children.length > 0) children[children.length - 1]!++;
  };
  const consumer: JsonEvents = {
    openObject() {
      const n = objects++;
      events.push('{');
      if (opts.omitObject?.(n)) {
        events.pop();
        events.push('{omitted');
        return false;
      }
      child();
      children.push(0);
      return true;
    },
    openArray() {
      const n = arrays++;
      events.push('[');
      if (opts.omitArray?.(n)) {
        events.pop();
        events.push('[omitted');
        return false;
      }
      child();
      children.push(0);
      return true;
    },
    closeObject() {
      children.pop();
      events.push('}');
    },
    closeArray() {
      children.pop();
      events.push(']');
    },
    key(name) {
      events.push(`key:${name}`);
      return !(opts.refuseKeys ?? []).includes(name);
    },
    stringStart() {
      current = strings++;
      received = 0;
      if (opts.omitString?.(current)) {
        events.push('"omitted');
        return false;
      }
      child();
      events.push('"<');
      return true;
    },
    stringChunk(chunk) {
      events.push(`chunk:${chunk}`);
      received += chunk.length;
      const cut = opts.cutStringAfter?.(current);
      return cut === undefined || received < cut;
    },
    stringEnd() {
      events.push('">');
    },
    scalar(raw) {
      child();
      events.push(`scalar:${raw}`);
    },
    omitRest(n) {
      events.push(`omitRest:${n}`);
    },
  };
  if (opts.skipRestAfter !== undefined) {
    const after = opts.skipRestAfter;
    Object.defineProperty(consumer, 'canSkipRest', {
      get: () => children.length > 0 && children[children.length - 1]! >= after,
    });
  }
  return { events, consumer };
}

/** Merge adjacent string chunks, so event lists compare across chunkings. */
function merged(events: readonly string[]): string[] {
  const out: string[] = [];
  for (const e of events) {
    const last = out[out.length - 1];
    if (e.startsWith('chunk:') && last !== undefined && last.startsWith('chunk:')) out[out.length - 1] = last + e.slice(6);
    else out.push(e);
  }
  return out;
}

function bytesOf(input: string | Uint8Array): Buffer {
  return typeof input === 'string' ? Buffer.from(input, 'utf8') : Buffer.from(input);
}

/** Feed `input` cut at `cuts` (sorted byte positions); returns the events or throws. */
function tokenize(input: string | Uint8Array, cuts: readonly number[] = [], opts: RecorderOptions = {}): string[] {
  const bytes = bytesOf(input);
  const r = recorder(opts);
  const tok = new Tokenizer(r.consumer);
  let from = 0;
  for (const c of [...cuts, bytes.length]) {
    // A fresh copy per piece: the tokenizer must not rely on the caller keeping old chunks.
    tok.write(Uint8Array.from(bytes.subarray(from, c)));
    from = c;
  }
  tok.end();
  return r.events;
}

function everyByte(n: number): number[] {
  return Array.from({ length: Math.max(0, n - 1) }, (_, i) => i + 1);
}

/** Run `input` whole, in 1-byte chunks and split in two at every position: one merged result. */
function tokenizeAnyhow(input: string | Uint8Array, opts: RecorderOptions = {}): string[] {
  const bytes = bytesOf(input);
  const whole = merged(tokenize(bytes, [], opts));
  expect(merged(tokenize(bytes, everyByte(bytes.length), opts))).toEqual(whole);
  for (let i = 1; i < bytes.length; i++) expect(merged(tokenize(bytes, [i], opts))).toEqual(whole);
  return whole;
}

function errorOf(fn: () => unknown): BudgetError {
  try {
    fn();
  } catch (e) {
    expect(e).toBeInstanceOf(BudgetError);
    return e as BudgetError;
  }
  throw new Error('expected an INVALID_JSON error, got none');
}

/**
 * Expect INVALID_JSON at `offset` whatever the chunking (whole, 1-byte, every 2-way split), with
 * the message naming the offset and containing `text`.
 */
function expectInvalid(input: string | Uint8Array, offset: number, text: string | RegExp, opts: RecorderOptions = {}): void {
  const bytes = bytesOf(input);
  const chunkings = [[], everyByte(bytes.length), ...everyByte(bytes.length).map((i) => [i])];
  for (const cuts of chunkings) {
    const err = errorOf(() => tokenize(bytes, cuts, opts));
    const seen = { cuts: cuts.length > 1 ? '1-byte' : cuts, code: err.code, offset: err.data?.offset, message: err.message };
    expect(seen).toEqual({
      cuts: seen.cuts,
      code: 'INVALID_JSON',
      offset,
      message: expect.stringMatching(new RegExp(`^Invalid JSON at byte offset ${offset}: `)),
    });
    expect(err.message).toMatch(text);
  }
}

// ------------------------------------------------------------------ tokens

describe('tokenizer: events for every token kind', () => {
  it('objects, arrays, strings, numbers, literals, nesting and empty containers', () => {
    const input = '{"a":[1,-2.5e+3,true,false,null,"x"],"b":{},"c":[],"d":{"e":[[{}]]},"":0}';
    expect(tokenizeAnyhow(input)).toEqual([
      '{',
      'key:a',
      '[',
      'scalar:1',
      'scalar:-2.5e+3',
      'scalar:true',
      'scalar:false',
      'scalar:null',
      '"<',
      'chunk:x',
      '">',
      ']',
      'key:b',
      '{',
      '}',
      'key:c',
      '[',
      ']',
      'key:d',
      '{',
      'key:e',
      '[',
      '[',
      '{',
      '}',
      ']',
      ']',
      '}',
      'key:',
      'scalar:0',
      '}',
    ]);
  });

  it('every number form is passed as written', () => {
    const numbers = ['0', '-0', '7', '-7', '10', '1.5', '-0.25', '1e5', '1E5', '1e+5', '1e-5', '-1.25E-10', '123456789012345678901234567890', '0.1e1'];
    for (const n of numbers) {
      expect(tokenizeAnyhow(`[${n}]`)).toEqual(['[', `scalar:${n}`, ']']);
      expect(tokenizeAnyhow(n)).toEqual([`scalar:${n}`]);
      expect(tokenizeAnyhow(` ${n} `)).toEqual([`scalar:${n}`]);
    }
  });

  it('scalars and strings at the root, whitespace of every kind between tokens', () => {
    expect(tokenizeAnyhow('true')).toEqual(['scalar:true']);
    expect(tokenizeAnyhow(' \t\r\nnull\n')).toEqual(['scalar:null']);
    expect(tokenizeAnyhow('"s"')).toEqual(['"<', 'chunk:s', '">']);
    expect(tokenizeAnyhow('""')).toEqual(['"<', '">']);
    expect(tokenizeAnyhow(' {\n\t"a" :\r\n[ 1 ,\t2 ] , "b"\n:\n"" } ')).toEqual([
      '{',
      'key:a',
      '[',
      'scalar:1',
      'scalar:2',
      ']',
      'key:b',
      '"<',
      '">',
      '}',
    ]);
  });

  /**
   * Regression (a fixed bug): between writes, `offset` ("Bytes consumed so far") counts the last chunk twice:
   * `write` adds the chunk length to `base` but leaves `pos` at the end of that chunk. It feeds
   * ByteBudget.offset and so the offset named by boundBytes' ABORTED error.
   */
  it('offset counts the bytes consumed so far (between writes)', () => {
    const tok = new Tokenizer(recorder().consumer);
    tok.write(Buffer.from('{"a": [1, 2'));
    expect(tok.offset).toBe(11); // actual: 22
    tok.write(Buffer.from(']}'));
    expect(tok.offset).toBe(13); // actual: 15
    tok.end();
  });

  it('offset inside a consumer callback is the position of the token', () => {
    const seen: number[] = [];
    let tok!: Tokenizer;
    const r = recorder();
    tok = new Tokenizer({ ...r.consumer, scalar: (raw) => void seen.push(tok.offset, raw.length) });
    tok.write(Buffer.from('[10, '));
    tok.write(Buffer.from('2000 ]'));
    tok.end();
    // A number is reported at the byte after it.
    expect(seen).toEqual([3, 2, 9, 4]);
  });
});

// ------------------------------------------------------------------ strings and UTF-8

describe('tokenizer: strings split anywhere', () => {
  const escapes: [string, string][] = [
    ['\\"', '"'],
    ['\\\\', '\\'],
    ['\\/', '/'],
    ['\\b', '\b'],
    ['\\f', '\f'],
    ['\\n', '\n'],
    ['\\r', '\r'],
    ['\\t', '\t'],
    ['\\u0041', 'A'],
    ['\\u00e9', 'é'],
    ['\\u00E9', 'é'],
    ['\\u20AC', '€'],
    ['\\u0000', '\u0000'],
    ['\\u001f', '\u001f'],
    ['\\ud83d\\ude00', '😀'],
    ['\\uD83D\\uDE00', '😀'],
    ['\\ud800', '\ud800'],
    ['\\udc00', '\udc00'],
    ['\\udbff\\udfff', '\u{10ffff}'],
    ['\\ud800x', '\ud800x'],
  ];

  it('every escape decodes, as a value and as a key, at every split', () => {
    for (const [raw, decoded] of escapes) {
      const value = tokenizeAnyhow(`["a${raw}b"]`);
      expect(value).toEqual(['[', '"<', `chunk:a${decoded}b`, '">', ']']);
      const key = tokenizeAnyhow(`{"k${raw}":1}`);
      expect(key).toEqual(['{', `key:k${decoded}`, 'scalar:1', '}']);
    }
  });

  it('all escapes in one string, every 2-way split and 1-byte chunks', () => {
    const raw = escapes.map(([r]) => r).join('');
    const decoded = escapes.map(([, d]) => d).join('');
    expect(tokenizeAnyhow(`"${raw}"`)).toEqual(['"<', `chunk:${decoded}`, '">']);
  });

  it('a \\u surrogate pair split inside either escape still joins to one character', () => {
    const input = '"\\ud83d\\ude00"';
    const bytes = Buffer.from(input);
    for (let i = 1; i < bytes.length; i++) {
      for (let j = i + 1; j < bytes.length; j++) {
        const events = tokenize(bytes, [i, j]);
        const text = events.filter((e) => e.startsWith('chunk:')).map((e) => e.slice(6)).join('');
        expect(text).toBe('😀');
      }
    }
  });

  it('multi-byte UTF-8 (2, 3 and 4 bytes) split at every position, in values and keys', () => {
    const s = 'aé€😀中ß\u{10ffff}\u0800\u07ff\uffffz';
    expect(tokenizeAnyhow(JSON.stringify([s]))).toEqual(['[', '"<', `chunk:${s}`, '">', ']']);
    expect(tokenizeAnyhow(JSON.stringify({ [s]: s }))).toEqual(['{', `key:${s}`, '"<', `chunk:${s}`, '">', '}']);
    // Every 3-way split of a short one (covers a sequence cut twice).
    const bytes = Buffer.from('"😀€"');
    for (let i = 1; i < bytes.length; i++) {
      for (let j = i + 1; j < bytes.length; j++) {
        expect(merged(tokenize(bytes, [i, j]))).toEqual(['"<', 'chunk:😀€', '">']);
      }
    }
  });

  it('a chunk never carries half a UTF-8 sequence or half an escape (no U+FFFD, no stray backslash)', () => {
    const s = '€😀\\n\\u00e9';
    const bytes = Buffer.from(`"${s}"`);
    for (const e of tokenize(bytes, everyByte(bytes.length))) {
      expect(e).not.toContain('\ufffd');
      if (e.startsWith('chunk:')) expect(e).not.toContain('\\');
    }
  });

  it('reusing one buffer for every chunk does not corrupt carried bytes', () => {
    const bytes = Buffer.from('{"k€😀":"v\\u00e9😀","n":12345}');
    const r = recorder();
    const tok = new Tokenizer(r.consumer);
    const scratch = Buffer.alloc(3);
    for (let at = 0; at < bytes.length; at += 3) {
      const n = bytes.copy(scratch, 0, at, Math.min(bytes.length, at + 3));
      tok.write(scratch.subarray(0, n));
      scratch.fill(0xff);
    }
    tok.end();
    expect(merged(r.events)).toEqual(['{', 'key:k€😀', '"<', 'chunk:vé😀', '">', 'key:n', 'scalar:12345', '}']);
  });

  it(`a key longer than MAX_KEY_UNITS is passed cut, as a prefix just over the limit`, () => {
    const long = 'k'.repeat(MAX_KEY_UNITS + 100);
    const events = tokenize(`{"${long}":1}`);
    const key = events[1]!.slice(4);
    expect(long.startsWith(key)).toBe(true);
    expect(key.length).toBeGreaterThan(MAX_KEY_UNITS - 1);
    expect(key.length).toBeLessThanOrEqual(MAX_KEY_UNITS + 1);
    expect(events.slice(2)).toEqual(['scalar:1', '}']);
  });
});

// ------------------------------------------------------------------ errors

describe('tokenizer: errors name the exact byte offset', () => {
  it('empty input', () => {
    expectInvalid('', 0, /empty input/);
    expectInvalid('   ', 3, /empty input/);
    expectInvalid('\n\t\r ', 4, /empty input/);
  });

  it('truncated documents', () => {
    expectInvalid('{', 1, /unexpected end of input/);
    expectInvalid('[1,2', 4, /unexpected end of input/);
    expectInvalid('{"a":1', 6, /unexpected end of input/);
    expectInvalid('{"a":', 5, /unexpected end of input/);
    expectInvalid('{"a"', 4, /unexpected end of input/);
    expectInvalid('{"a":[{"b":[]}', 14, /unexpected end of input/);
    expectInvalid('"abc', 4, /unexpected end of input/);
    expectInvalid('["abc', 5, /unexpected end of input/);
    expectInvalid('tru', 3, /unexpected end of input/);
    expectInvalid('[nul', 4, /unexpected end of input/);
    // Cut inside an escape or a UTF-8 sequence: the offset is the end of the input.
    expectInvalid('["ab\\', 5, /unexpected end of input/);
    expectInvalid('["ab\\u00', 8, /unexpected end of input/);
    expectInvalid(Buffer.from([0x5b, 0x22, 0x61, 0xe2, 0x82]), 5, /unexpected end of input/);
  });

  it('bad tokens', () => {
    expectInvalid('{"a" 1}', 5, /expected ':'/);
    expectInvalid('{"a":1 "b":2}', 7, /expected ',' or '}'/);
    expectInvalid('[1 2]', 3, /expected ',' or '\]'/);
    expectInvalid('{"a":tx}', 6, /invalid literal/);
    expectInvalid('[truE]', 4, /invalid literal/);
    expectInvalid('[nulL]', 4, /invalid literal/);
    expectInvalid('{"a":01}', 5, /invalid number/);
    expectInvalid('[1.]', 1, /invalid number/);
    expectInvalid('[-]', 1, /invalid number/);
    expectInvalid('[1e]', 1, /invalid number/);
    expectInvalid('[--1]', 1, /invalid number/);
    expectInvalid('[1.5.2]', 1, /invalid number/);
    expectInvalid('-', 0, /invalid number/);
    expectInvalid('[+1]', 1, /unexpected '\+'/);
    expectInvalid('[.5]', 1, /unexpected '\.'/);
    expectInvalid('{,}', 1, /expected a key string/);
    expectInvalid('{"a":1,}', 7, /expected a key string/);
    expectInvalid('{a:1}', 1, /expected a key string/);
    expectInvalid('[,]', 1, /unexpected ','/);
    expectInvalid('[1,]', 3, /unexpected '\]'/);
    expectInvalid('}', 0, /unexpected '\}'/);
    expectInvalid('{"a":1]', 6, /expected ',' or '}'/);
    expectInvalid('[1}', 2, /expected ',' or '\]'/);
    expectInvalid("['a']", 1, /unexpected/);
    expectInvalid(Buffer.from([0x5b, 0xff, 0x5d]), 1, /unexpected byte 0xff/);
  });

  it('trailing garbage after the document', () => {
    expectInvalid('{} x', 3, /after the end of the document/);
    expectInvalid('{}{}', 2, /after the end of the document/);
    expectInvalid('[1]]', 3, /after the end of the document/);
    expectInvalid('1 2', 2, /after the end of the document/);
    expectInvalid('"a" "b"', 4, /after the end of the document/);
    expectInvalid('{}\n\u0000', 3, /after the end of the document/);
  });

  it('unescaped control characters in strings', () => {
    expectInvalid('["a\u0001"]', 3, /unescaped control character/);
    expectInvalid('["ab\ncd"]', 4, /unescaped control character/);
    expectInvalid('["\u0000"]', 2, /unescaped control character/);
    expectInvalid('["\u001f"]', 2, /unescaped control character/);
    expectInvalid('{"k\tey":1}', 3, /unescaped control character/);
  });

  it('bad escapes', () => {
    expectInvalid('["\\x"]', 2, /invalid escape \\x/);
    expectInvalid('["ab\\a"]', 4, /invalid escape/);
    expectInvalid('["\\U0041"]', 2, /invalid escape/);
    expectInvalid('["\\u12g4"]', 6, /invalid \\u escape/);
    expectInvalid('["\\u 041"]', 4, /invalid \\u escape/);
    expectInvalid('{"\\q":1}', 2, /invalid escape/);
  });

  it('invalid UTF-8 in kept strings', () => {
    const at = (prefix: string, bad: number[], suffix = '"]'): Buffer => Buffer.concat([Buffer.from(prefix), Buffer.from(bad), Buffer.from(suffix)]);
    expectInvalid(at('["', [0xff]), 2, /invalid UTF-8/);
    expectInvalid(at('["ab', [0x80]), 4, /invalid UTF-8/); // lone continuation byte
    expectInvalid(at('["ab', [0xc3, 0x28]), 4, /invalid UTF-8/); // bad continuation
    expectInvalid(at('["a', [0xe2, 0x82]), 3, /invalid UTF-8/); // sequence cut by the closing quote
    expectInvalid(at('["', [0xc0, 0x80]), 2, /invalid UTF-8/); // overlong NUL
    expectInvalid(at('["', [0xe0, 0x80, 0x80]), 2, /invalid UTF-8/); // overlong
    expectInvalid(at('["', [0xed, 0xa0, 0x80]), 2, /invalid UTF-8/); // encoded surrogate
    expectInvalid(at('["', [0xf4, 0x90, 0x80, 0x80]), 2, /invalid UTF-8/); // above U+10FFFF
    expectInvalid(at('["', [0xf5, 0x80, 0x80, 0x80]), 2, /invalid UTF-8/);
    expectInvalid(at('{"k', [0xff], '":1}'), 3, /invalid UTF-8/); // in a key
    expectInvalid(at('["€😀', [0xff]), 9, /invalid UTF-8/);
  });

  it('invalid UTF-8 in skipped regions (refused key, omitted value, cut string, bulk tail)', () => {
    const doc = (prefix: string, bad: number[], suffix: string): Buffer => Buffer.concat([Buffer.from(prefix), Buffer.from(bad), Buffer.from(suffix)]);
    // Value of a refused key: a string, and a string inside a container.
    expectInvalid(doc('{"a":"xy', [0xff], '","b":1}'), 8, /invalid UTF-8/, { refuseKeys: ['a'] });
    expectInvalid(doc('{"a":["x","€', [0xe2, 0x82], '"],"b":1}'), 14, /invalid UTF-8/, { refuseKeys: ['a'] });
    expectInvalid(doc('{"a":{"k":"', [0xed, 0xa0, 0x80], '"}}'), 11, /invalid UTF-8/, { refuseKeys: ['a'] });
    // Outside strings inside a skipped container.
    expectInvalid(doc('{"a":[1,', [0xff], ']}'), 8, /invalid UTF-8/, { refuseKeys: ['a'] });
    // An omitted array and an omitted string.
    expectInvalid(doc('[["😀', [0xc3], '"]]'), 7, /invalid UTF-8/, { omitArray: (n) => n === 1 });
    expectInvalid(doc('["ok","ab', [0x80], 'c"]'), 9, /invalid UTF-8/, { omitString: (n) => n === 1 });
    // The rest of a string cut by the consumer.
    expectInvalid(doc('["abcdef', [0xf8], 'gh"]'), 8, /invalid UTF-8/, { cutStringAfter: () => 2 });
    // The tail of a container counted unseen.
    expectInvalid(doc('[1,2,"x', [0xff], '",4]'), 7, /invalid UTF-8/, { skipRestAfter: 1 });
    expectInvalid(doc('{"a":1,"b":"', [0xc0, 0xaf], '"}'), 12, /invalid UTF-8/, { skipRestAfter: 1 });
  });

  it('skipped regions are still checked for balance and termination', () => {
    expectInvalid('{"a":[1,2]]', 10, /expected ',' or '}'/, { refuseKeys: ['a'] });
    expectInvalid('{"a":[[1,2]', 11, /unexpected end of input/, { refuseKeys: ['a'] });
    expectInvalid('{"a":[1,2', 9, /unexpected end of input/, { refuseKeys: ['a'] });
    expectInvalid('{"a":"abc', 9, /unexpected end of input/, { refuseKeys: ['a'] });
    expectInvalid('{"a":"ab\\"}', 11, /unexpected end of input/, { refuseKeys: ['a'] });
    expectInvalid('[[1,"]"],', 9, /unexpected end of input/, { omitArray: (n) => n === 1 });
    // Refused scalars are parsed (not reported): a bad one is still an error.
    expectInvalid('{"a":tru,"b":1}', 8, /invalid literal/, { refuseKeys: ['a'] });
    expectInvalid('{"a":01,"b":1}', 5, /invalid number/, { refuseKeys: ['a'] });
  });

  it('errors carry code INVALID_JSON and data.offset, and are BudgetErrors', () => {
    const err = errorOf(() => tokenize('[1,,2]'));
    expect(err.name).toBe('BudgetError');
    expect(err.code).toBe('INVALID_JSON');
    expect(err.data).toEqual({ offset: 3 });
    expect(err.message).toBe("Invalid JSON at byte offset 3: unexpected ',' where a value was expected");
  });

  /**
   * Lenient by design ("not full grammar"): the skip scanner counts bracket depth without matching
   * bracket kinds, so `[1,2}` inside a skipped value passes. JSON.parse (the CLI's memory mode)
   * rejects the same document: the two modes disagree on validity here.
   */
  it('skipped values: bracket kinds are not matched, only depth (documented leniency)', () => {
    expect(tokenize('{"a":[1,2},"b":1}', [], { refuseKeys: ['a'] })).toEqual(['{', 'key:a', 'key:b', 'scalar:1', '}']);
    expect(tokenize('{"a":[1 2 x],"b":1}', [], { refuseKeys: ['a'] })).toEqual(['{', 'key:a', 'key:b', 'scalar:1', '}']);
    expect(tokenize('{"a":"\u0001 raw \t ok","b":1}', [], { refuseKeys: ['a'] })).toEqual(['{', 'key:a', 'key:b', 'scalar:1', '}']);
  });

  it(`a number longer than MAX_NUMBER_BYTES is rejected`, () => {
    const digits = '1'.repeat(MAX_NUMBER_BYTES + 10);
    const err = errorOf(() => tokenize(`[${digits}]`));
    expect(err.code).toBe('INVALID_JSON');
    expect(err.message).toMatch(/number longer than/);
    // The same number at exactly the limit passes.
    expect(tokenize(`[${'1'.repeat(MAX_NUMBER_BYTES)}]`)).toEqual(['[', `scalar:${'1'.repeat(MAX_NUMBER_BYTES)}`, ']']);
  });

  /**
   * Regression (a fixed bug): the offset of "number longer than 4096 bytes" is wherever the current buffer
   * ended scanning digits, so it depends on the chunking: whole input → the end of the number,
   * 1-byte chunks → the 4097th digit. Every other error names the same offset in any chunking.
   */
  it('the offset of a too-long number does not depend on the chunking', () => {
    const input = `[${'1'.repeat(MAX_NUMBER_BYTES + 10)}]`;
    const whole = errorOf(() => tokenize(input)).data?.offset;
    const bytes = errorOf(() => tokenize(input, everyByte(input.length))).data?.offset;
    expect(bytes).toBe(whole);
  });
});

// ------------------------------------------------------------------ the consumer's decisions

describe('tokenizer: values the consumer omits are skipped without events', () => {
  it('an omitted object or array: nothing of it is reported, the next sibling is', () => {
    const input = '[{"a":[1,"]}",{"b":"\\"}"}]},{"c":2},[3,["x"]],4]';
    expect(tokenizeAnyhow(input, { omitObject: (n) => n === 0 })).toEqual([
      '[',
      '{omitted',
      '{',
      'key:c',
      'scalar:2',
      '}',
      '[',
      'scalar:3',
      '[',
      '"<',
      'chunk:x',
      '">',
      ']',
      ']',
      'scalar:4',
      ']',
    ]);
    expect(tokenizeAnyhow(input, { omitArray: (n) => n === 2 })).toEqual([
      '[',
      '{',
      'key:a',
      '[',
      'scalar:1',
      '"<',
      'chunk:]}',
      '">',
      '{',
      'key:b',
      '"<',
      'chunk:"}',
      '">',
      '}',
      ']',
      '}',
      '{',
      'key:c',
      'scalar:2',
      '}',
      '[omitted',
      'scalar:4',
      ']',
    ]);
  });

  it('an omitted string: no chunks and no end, escapes and brackets inside it are passed over', () => {
    const input = '["a\\\\","b\\"]}{[","c\\\\\\"",  "d"]';
    expect(tokenizeAnyhow(input, { omitString: (n) => n === 1 || n === 2 })).toEqual([
      '[',
      '"<',
      'chunk:a\\',
      '">',
      '"omitted',
      '"omitted',
      '"<',
      'chunk:d',
      '">',
      ']',
    ]);
  });

  it('an omitted root container', () => {
    expect(tokenizeAnyhow('{"a":[1,2]}', { omitObject: () => true })).toEqual(['{omitted']);
    expect(tokenizeAnyhow('  [1,{"b":"]"}] ', { omitArray: () => true })).toEqual(['[omitted']);
  });

  it('a string cut by the consumer: the rest is skipped, its end is still reported once', () => {
    const input = '["abcdefgh\\"]\\\\","next"]';
    const bytes = Buffer.from(input);
    for (const cuts of [[], everyByte(bytes.length), ...everyByte(bytes.length).map((i) => [i])]) {
      const events = tokenize(bytes, cuts, { cutStringAfter: (n) => (n === 0 ? 3 : undefined) });
      const text = events.filter((e) => e.startsWith('chunk:')).map((e) => e.slice(6));
      // At least the first 3 units arrived, none after the cut point's chunk.
      expect(text.join('').startsWith('abc')).toBe(true);
      expect(events.filter((e) => e === '">')).toHaveLength(2);
      expect(merged(events).slice(-4)).toEqual(['"<', 'chunk:next', '">', ']']);
    }
  });
});

describe('tokenizer: a long string in one write', () => {
  // Content goes on every 16 KiB of input; a boundary may fall anywhere between two characters.
  const unit = 'ab\\"é\\u00e9😀\\ud83d\\ude00x\\n';
  const long = unit.repeat(6000); // about 150 KiB of input
  const input = `["${long}","after"]`;

  it('passes it on in pieces that join to what a byte at a time gives', () => {
    const whole = tokenize(input);
    expect(whole.filter((e) => e.startsWith('chunk:')).length).toBeGreaterThan(4);
    expect(merged(whole)).toEqual(merged(tokenize(input, [7, 16385, 16386, 40000, 100001])));
    expect(merged(whole)[2]).toBe(`chunk:${JSON.parse(`"${long}"`) as string}`);
  });

  it('a cut stops decoding at the next piece: the rest is skipped, the next value kept', () => {
    const events = tokenize(input, [], { cutStringAfter: (n) => (n === 0 ? 10 : undefined) });
    const chunks = events.filter((e) => e.startsWith('chunk:'));
    expect(chunks).toHaveLength(2); // one piece of the long string, then "after"
    expect(chunks[0]!.length).toBeLessThan(17 * 1024);
    expect(merged(events).slice(-4)).toEqual(['"<', 'chunk:after', '">', ']']);
  });
});

describe('tokenizer: long strings decoded natively past their first bytes', () => {
  // Over 256 bytes, with escapes and multi-byte characters, so that what follows is read natively.
  const pad = 'a\\"b\\\\c\\u00e9d😀 '.repeat(30);
  const head = Buffer.from(`["${pad}`);

  it('errors name the offset the byte loop names, at every chunking', () => {
    expectInvalid(`["${pad}\u0001tail"]`, head.length, /unescaped control character/);
    expectInvalid(`["${pad}\\xtail"]`, head.length, /invalid escape \\x/);
    expectInvalid(`["${pad}\\u12g4"]`, head.length + 4, /invalid \\u escape/);
    expectInvalid(Buffer.concat([head, Buffer.from([0xff]), Buffer.from('x"]')]), head.length, /invalid UTF-8/);
    expectInvalid(Buffer.concat([head, Buffer.from([0xed, 0xa0, 0x80]), Buffer.from('"]')]), head.length, /invalid UTF-8/);
  });

  it('the same content at every split, escapes and sequences cut anywhere', () => {
    const input = `{"k":"${pad}\\ud83d\\ude00${pad}","n":"${'é'.repeat(400)}"}`;
    const whole = tokenizeAnyhow(input);
    expect(merged(whole)).toEqual(['{', 'key:k', '"<', `chunk:${JSON.parse(`"${pad}\\ud83d\\ude00${pad}"`) as string}`, '">', 'key:n', '"<', `chunk:${'é'.repeat(400)}`, '">', '}']);
  });
});

describe('tokenizer: refused keys', () => {
  it('the value of a refused key is skipped silently, whatever its kind', () => {
    const values = ['{"x":{"y":[1,"}"]}}', '[1,[2,[3]],"]"]', '"str\\"ing]}"', '12.5e3', '-0', 'true', 'false', 'null', '{}', '[]', '""'];
    for (const v of values) {
      const input = `{"a":1,"skip":${v},"b":2}`;
      expect(tokenizeAnyhow(input, { refuseKeys: ['skip'] })).toEqual(['{', 'key:a', 'scalar:1', 'key:skip', 'key:b', 'scalar:2', '}']);
      // Last member, whitespace around.
      expect(tokenizeAnyhow(`{ "skip" : ${v} }`, { refuseKeys: ['skip'] })).toEqual(['{', 'key:skip', '}']);
    }
  });

  it('consecutive refused keys, then a kept one', () => {
    expect(tokenizeAnyhow('{"a":"x","b":[1],"c":3,"d":4}', { refuseKeys: ['a', 'b', 'c'] })).toEqual([
      '{',
      'key:a',
      'key:b',
      'key:c',
      'key:d',
      'scalar:4',
      '}',
    ]);
  });

  it('a refused number at the very end of the input (root object) still completes', () => {
    expect(tokenize('{"a":5}', [], { refuseKeys: ['a'] })).toEqual(['{', 'key:a', '}']);
    expect(tokenize('{"a":5}', [5, 6], { refuseKeys: ['a'] })).toEqual(['{', 'key:a', '}']);
  });
});

describe('tokenizer: bulk skipping of a closed container tail', () => {
  it('arrays: the rest is counted, not reported, and the container closes', () => {
    const input = '[[1, [2, 3], "]", {"a": [4]}, null], 9]';
    expect(tokenizeAnyhow(input, { skipRestAfter: 1 })).toEqual(['[', '[', 'scalar:1', 'omitRest:4', ']', 'omitRest:1', ']']);
  });

  it('objects: the rest is counted, commas inside strings and nested values do not count', () => {
    const input = '{"a":1,"b":",,,","c":{"x":[1,2,3]},"d":"\\",",  "e" : [ ] }';
    expect(tokenizeAnyhow(input, { skipRestAfter: 1 })).toEqual(['{', 'key:a', 'scalar:1', 'omitRest:4', '}']);
  });

  it('a container that ends on its own never asks for bulk counting', () => {
    expect(tokenizeAnyhow('[1]', { skipRestAfter: 1 })).toEqual(['[', 'scalar:1', ']']);
    expect(tokenizeAnyhow('{"a":[]}', { skipRestAfter: 1 })).toEqual(['{', 'key:a', '[', ']', '}']);
  });
});

describe('tokenizer: a member value written until it ends (writeUntil, skipStateIn)', () => {
  // Values of every kind a reader can be asked to find the end of, with the consumer keeping,
  // cutting, omitting and bulk-counting parts of them (every state the tokenizer reads in).
  const VALUES = [
    '{"content":[{"type":"text","text":"a\\"b]}\\\\"}],"x":{"y":[1,2.5e3,true,null]}}',
    '[1,[2,[3,"]"]],{"a":"\\u00e9😀é"}, "tail" ]',
    '{}',
    '[]',
    '{"s":"\\\\","t":"\\u0041\\n"}',
  ];
  const OPTIONS: RecorderOptions[] = [
    {},
    { cutStringAfter: () => 1 },
    { omitArray: (n) => n === 0 },
    { omitObject: (n) => n === 1, refuseKeys: ['x'] },
    { skipRestAfter: 1 },
  ];

  it('takes exactly the value at any chunking; the events are those of the whole document', () => {
    for (const value of VALUES) {
      for (const opts of OPTIONS) {
        const head = Buffer.from('{"a":1,"v":');
        const v = Buffer.from(value);
        const tail = Buffer.from(' ,"b":[2]}');
        const doc = Buffer.concat([head, v, tail]);
        for (const cuts of [[], everyByte(v.length + tail.length), ...everyByte(v.length + tail.length).map((i) => [i])]) {
          const rest = Buffer.concat([v, tail]);
          const r = recorder(opts);
          const tok = new Tokenizer(r.consumer);
          tok.write(head);
          let taken = 0;
          let from = 0;
          let ended = -1;
          for (const c of [...cuts, rest.length]) {
            const piece = Uint8Array.from(rest.subarray(from, c));
            from = c;
            if (ended >= 0) {
              tok.write(piece);
              continue;
            }
            const got = tok.writeUntil(piece, 1);
            if (got < 0) taken += piece.length;
            else {
              taken += got;
              ended = taken;
              tok.write(piece.subarray(got)); // what the value did not take, as a caller goes on
            }
          }
          tok.end();
          expect({ value, cuts: cuts.length, ended }).toEqual({ value, cuts: cuts.length, ended: v.length });
          // The same pieces written plainly (a cut string's chunks depend on where pieces end).
          const at = [...new Set([...cuts, v.length])].sort((x, y) => x - y).filter((c) => c < rest.length);
          expect(r.events).toEqual(tokenize(doc, [head.length, ...at.map((c) => c + head.length)], opts));
        }
      }
    }
  });

  it('skipStateIn is the skip scanner state at every point inside the value, whatever the consumer kept', () => {
    for (const value of VALUES) {
      for (const opts of OPTIONS) {
        const v = Buffer.from(value);
        for (let k = 0; k < v.length; k++) {
          for (const split of k > 1 ? [[], [1, k - 1]] : [[]]) {
            const tok = new Tokenizer(recorder(opts).consumer);
            tok.write(Buffer.from('{"v":'));
            let from = 0;
            for (const c of [...split, k]) {
              expect(tok.writeUntil(Uint8Array.from(v.subarray(from, c)), 1)).toBe(-1);
              from = c;
            }
            const got = newSkipState(true, true);
            tok.skipStateIn(1, got);
            const want = newSkipState(false, false);
            expect(scanSkipJs(v.subarray(0, k), 0, want)).toBe(SKIP_MORE);
            expect({ value, k, depth: got.depth, inString: got.inString, escape: got.escape, bulk: got.bulk }).toEqual({
              value,
              k,
              depth: want.depth,
              inString: want.inString,
              escape: want.escape,
              bulk: false,
            });
          }
        }
      }
    }
  });
});

describe('tokenizer: raw-byte tap', () => {
  it('a tap started in openObject and stopped in closeObject receives exactly the object bytes', () => {
    const inner = '{"k":"v\\"}é😀","n":[1,{"m":null}]}';
    const input = `[1, ${inner} ,2]`;
    const bytes = Buffer.from(input);
    for (const cuts of [[], everyByte(bytes.length), ...everyByte(bytes.length).map((i) => [i])]) {
      const got: Buffer[] = [];
      let depth = 0;
      let tok!: Tokenizer;
      const r = recorder();
      const consumer: JsonEvents = {
        ...r.consumer,
        openObject() {
          if (depth++ === 0) tok.setTap((b) => got.push(Buffer.from(b)));
          return true;
        },
        closeObject() {
          if (--depth === 0) tok.setTap(undefined);
        },
      };
      tok = new Tokenizer(consumer);
      let from = 0;
      for (const c of [...cuts, bytes.length]) {
        tok.write(bytes.subarray(from, c));
        from = c;
      }
      tok.end();
      expect(Buffer.concat(got).toString('utf8')).toBe(inner);
    }
  });
});
