import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { EnvelopeScanner, type EnvelopeFacts } from '../../src/transport/core/envelope-scan.js';
import { repeatedMembers, type RepeatedMember } from '../../src/transport/core/repeated-members.js';
import { refusalTarget } from '../../src/transport/core/jsonrpc-errors.js';
import { isRequestId } from '../../src/transport/core/request-ids.js';

/** Scan `line` cut into pieces of `size` bytes; returns the facts and the substituted bytes. */
function scan(line: string | Buffer, size: number, maxIdBytes = 1 << 20): { facts: EnvelopeFacts; out: string } {
  const bytes = typeof line === 'string' ? Buffer.from(line) : line;
  const s = new EnvelopeScanner(maxIdBytes);
  const out: Buffer[] = [];
  for (let at = 0; at < bytes.length; at += size) s.push(bytes.subarray(at, at + size), (p) => out.push(Buffer.from(p)));
  return { facts: s.end(), out: Buffer.concat(out).toString('utf8') };
}

const SIZES = [1, 2, 3, 7, 64, 1 << 20];

/** What an emitting scan passes on: a response's standard members, nothing else. */
function responseMembers(m: Record<string, unknown>): Record<string, unknown> {
  return Object.fromEntries(Object.entries(m).filter(([k]) => k === 'jsonrpc' || k === 'id' || k === 'result' || k === 'error'));
}

/** Id values written in many ways (JSON text of the value). */
const ID_TEXTS = [
  '0', '1', '-1', '42', '1e3', '1.5', '9007199254740993', '"1"', '""', '"a b"', '"\\"id\\":9"', '"\\u0069d"',
  '"}]{["', '"\\\\"', '"é漢🙂"', `"${'x'.repeat(5000)}"`, '123456789012345678901234567890',
];

/** Envelopes that hide other `"id"`s where a naive search would find them first. */
function envelopes(idText: string): string[] {
  return [
    `{"jsonrpc":"2.0","id":${idText},"method":"tools/call","params":{"name":"t","arguments":{"id":7}}}`,
    `{"jsonrpc":"2.0","method":"tools/call","params":{"arguments":{"id":7,"x":[{"id":8}]}},"id":${idText}}`,
    `{"params":{"id":"nested"},"note":"\\"id\\":5","id" : ${idText} ,"method":"m"}`,
    `{"id":999,"method":"m","id":${idText}}`,
    `  {"\\u0069\\u0064":${idText},"method":"m","params":{"s":"{\\"id\\":1}"}}`,
    `{"method":"m","params":[{"id":1},"]}",{"a":{"id":2}}],"id":${idText}}`,
  ];
}

describe('EnvelopeScanner', () => {
  it('envelope-scan: reads the top-level id JSON.parse reads, never a nested one, at every chunk size', () => {
    for (const idText of ID_TEXTS) {
      for (const line of envelopes(idText)) {
        const want = (JSON.parse(line) as { id: unknown }).id;
        for (const size of SIZES) {
          const { facts, out } = scan(line, size);
          expect(facts.shape).toBe('object');
          expect(facts.idState, `${line} @${size}`).toBe('value');
          expect(facts.id, `${line} @${size}`).toStrictEqual(want);
          expect(facts.hasMethod).toBe(true);
          // The substituted stream is the response envelope: standard members only, the id 0.
          expect(JSON.parse(out)).toStrictEqual({ ...responseMembers(JSON.parse(line) as Record<string, unknown>), id: 0 });
        }
      }
    }
  });

  it('envelope-scan: absent, null, invalid and too-long ids, and non-object lines', () => {
    const cases: [string, Partial<EnvelopeFacts>][] = [
      ['{"jsonrpc":"2.0","method":"notifications/x","params":{"id":1}}', { idState: 'absent', hasMethod: true }],
      ['{"jsonrpc":"2.0","id":null,"method":"m"}', { idState: 'null' }],
      ['{"id":{"a":1},"method":"m"}', { idState: 'invalid' }],
      ['{"id":[1],"method":"m"}', { idState: 'invalid' }],
      ['{"id":true,"method":"m"}', { idState: 'invalid' }],
      [`{"id":"${'y'.repeat(300)}","method":"m"}`, { idState: 'too-long' }],
      ['{"method":"m","id":"unterminated', { idState: 'invalid' }],
      ['{"method":"m","id":12', { idState: 'value', id: 12 }],
      ['{"id":3,"result":{"id":4}}', { idState: 'value', id: 3, hasResult: true, hasMethod: false }],
      ['[{"id":1,"method":"m"}]', { shape: 'array', idState: 'absent' }],
      ['"id"', { shape: 'other', idState: 'absent' }],
      ['', { shape: 'empty' }],
    ];
    for (const [line, want] of cases) {
      for (const size of SIZES) expect(scan(line, size, 256).facts, `${line} @${size}`).toMatchObject(want);
    }
  });

  it('envelope-scan: agrees with JSON.parse on generated envelopes (ids and params of any shape)', () => {
    const id = fc.oneof(fc.integer(), fc.string(), fc.string({ unit: 'binary' }), fc.double({ noNaN: true, noDefaultInfinity: true }));
    fc.assert(
      fc.property(id, fc.jsonValue(), fc.boolean(), fc.integer({ min: 1, max: 50 }), (idValue, params, idLast, size) => {
        const env = idLast ? { jsonrpc: '2.0', method: 'm', params, id: idValue } : { jsonrpc: '2.0', id: idValue, method: 'm', params };
        const line = JSON.stringify(env, null, size % 3 === 0 ? 1 : undefined);
        const { facts } = scan(line, size);
        expect(facts.idState).toBe('value');
        expect(facts.id).toStrictEqual((JSON.parse(line) as { id: unknown }).id);
      }),
      { numRuns: 300 },
    );
  });

  it('envelope-scan: refusalTarget answers requests and unreadable lines, never notifications or responses', () => {
    const target = (line: string) => refusalTarget(scan(line, 5, 64).facts);
    expect(target('{"id":"a","method":"m","params":{"id":1}}')).toEqual({ answer: true, id: 'a' });
    expect(target('{"method":"m","params":{"id":1}}')).toEqual({ answer: false, kind: 'notification' });
    expect(target('{"id":1,"result":{}}')).toEqual({ answer: false, kind: 'response' });
    expect(target('{"id":1,"error":{"code":1}}')).toEqual({ answer: false, kind: 'response' });
    expect(target('[{"id":1}]')).toEqual({ answer: true, id: null });
    expect(target('{"id":null,"method":"m"}')).toEqual({ answer: true, id: null });
    expect(target(`{"id":"${'z'.repeat(100)}","method":"m"}`)).toEqual({ answer: true, id: null });
    expect(target('not json')).toEqual({ answer: true, id: null });
  });

  it('envelope-scan: a repeated classifying member is noted with the first id, at every chunk size', () => {
    const cases: [string, Partial<EnvelopeFacts>][] = [
      ['{"jsonrpc":"2.0","id":5,"result":{"id":9,"result":1},"id":6}', { repeated: 'id', firstId: 5, id: 6, idState: 'value' }],
      ['{"id":"a","result":{},"r\\u0065sult":{}}', { repeated: 'result', firstId: undefined, id: 'a' }],
      ['{"jsonrpc":"2.0","jsonrpc":"1.0","id":1,"error":{}}', { repeated: 'jsonrpc' }],
      ['{"method":"a","params":{"method":"b"},"method":"c"}', { repeated: 'method', hasMethod: true }],
      ['{"error":{},"id":1,"error":{},"result":{},"result":{}}', { repeated: 'error' }],
      ['{"id":{"x":1},"result":{},"id":7}', { repeated: 'id', firstId: undefined, id: 7 }],
      ['{"id":"x","params":{},"params":{},"x":1,"x":2,"result":{"result":1}}', { repeated: undefined, firstId: undefined }],
    ];
    for (const [line, want] of cases) {
      for (const size of SIZES) expect(scan(line, size).facts, `${line} @${size}`).toMatchObject(want);
    }
  });

  it('envelope-scan: repeatedMembers reads the top level of whole lines, objects and batches', () => {
    const at = (line: string) => repeatedMembers(Buffer.from(line));
    expect(at('{"jsonrpc":"2.0","id":5,"result":{"a":1,"a":2,"id":3,"id":4},"params":1,"params":2}')).toBeUndefined();
    expect(at(' {"id":5, "result" :{"big":"}\\"{"} ,"id" : 6 } ')?.get(0)).toEqual({ member: 'id', ids: [5, 6] });
    expect(at('{"\\u0069\\u0064":"7","result":{},"id":7}')?.get(0)).toEqual({ member: 'id', ids: ['7', 7] });
    expect(at('{"id":1,"id":1,"result":{}}')?.get(0)).toEqual({ member: 'id', ids: [1] });
    expect(at('{"id":null,"error":{},"error":{}}')?.get(0)).toEqual({ member: 'error', ids: [] });
    expect(at('[{"id":1,"result":{}},"x",[{"id":2,"id":3}],{"id":4,"result":1,"result":2},7,{"method":"m","method":"n"}]')).toEqual(
      new Map<number, RepeatedMember>([
        [3, { member: 'result', ids: [4] }],
        [5, { member: 'method', ids: [] }],
      ]),
    );
    expect(at('[]')).toBeUndefined();
    expect(at('"id"')).toBeUndefined();
    expect(at(`{"id":"${'k'.repeat(5000)}","result":"${'\\"'.repeat(3000)}","result":1}`)?.get(0)?.member).toBe('result');
  });

  it('envelope-scan: repeats read alike by both scans and by a reference, on generated lines', () => {
    const NAMES = ['jsonrpc', 'id', 'result', 'error', 'method', 'params', 'x'];
    const CLASSIFYING = new Set(['jsonrpc', 'id', 'result', 'error', 'method']);
    /** A key as JSON, its first character `\u`-escaped when `escape`. */
    const spelled = (name: string, escape: boolean): string =>
      escape ? `"\\u${name.charCodeAt(0).toString(16).padStart(4, '0')}${name.slice(1)}"` : JSON.stringify(name);
    const member = fc.record({
      name: fc.constantFrom(...NAMES),
      escape: fc.boolean(),
      value: fc.oneof(
        fc.integer(),
        fc.string(),
        // Strings past the short read, full of quotes and backslashes.
        fc.string({ unit: fc.constantFrom('"', '\\', 'a', 'é', '}'), minLength: 40, maxLength: 200 }),
        fc.constant(null),
        fc.jsonValue(),
        fc.constant({ id: 1, result: { id: 2 } }),
      ),
      space: fc.constantFrom('', ' ', '\t', ' \n '),
    });
    type Member = { name: string; escape: boolean; value: unknown; space: string };
    const text = (ms: Member[]): string => `{${ms.map((m) => `${m.space}${spelled(m.name, m.escape)}${m.space}:${m.space}${JSON.stringify(m.value)}${m.space}`).join(',')}}`;
    /** The reference: the first classifying name seen twice, and the first and last ids as JSON.parse reads them. */
    const reference = (ms: Member[]): RepeatedMember | undefined => {
      const seen = new Set<string>();
      let repeated: string | undefined;
      for (const { name } of ms) {
        if (!CLASSIFYING.has(name)) continue;
        if (seen.has(name)) repeated ??= name;
        seen.add(name);
      }
      if (repeated === undefined) return undefined;
      const ids = ms.filter((m) => m.name === 'id').map((m) => JSON.parse(JSON.stringify(m.value)) as unknown);
      const named = [ids[0], ids.at(-1)].filter((id, k, all) => isRequestId(id) && all.findIndex((o) => Object.is(o, id)) === k);
      return { member: repeated, ids: named as RepeatedMember['ids'] };
    };
    fc.assert(
      fc.property(fc.array(fc.array(member, { maxLength: 8 }), { minLength: 1, maxLength: 4 }), fc.integer({ min: 1, max: 40 }), (messages, size) => {
        // As a batch: every element by its index.
        const want = new Map<number, RepeatedMember>();
        messages.forEach((ms, index) => {
          const r = reference(ms);
          if (r !== undefined) want.set(index, r);
        });
        expect(repeatedMembers(Buffer.from(`[${messages.map(text).join(' , ')}]`)) ?? new Map()).toEqual(want);
        // Each on its own line: the fast path's scan and the streamed scan at a chunk size.
        for (const ms of messages) {
          const line = text(ms);
          const r = reference(ms);
          expect(repeatedMembers(Buffer.from(line))?.get(0), line).toEqual(r);
          const { facts } = scan(line, size);
          expect(facts.repeated, line).toBe(r?.member);
          const ids = ms.filter((m) => m.name === 'id').map((m) => JSON.parse(JSON.stringify(m.value)) as unknown);
          if (ids.length > 1 && isRequestId(ids[0])) expect(facts.firstId, line).toStrictEqual(ids[0]);
        }
      }),
      { numRuns: 300 },
    );
  });
});
