/**
 * The proxy's long line: the budget's tokenizer finds where the response's `result` (or `error`)
 * ends, so the envelope scan does not skip it a second time. Checked against the reading it
 * replaces (the envelope scan skipping every member itself and passing the bytes on), on valid
 * lines and on lines the budget refuses part-way (the scan must still find the members and the id
 * after the failure), at several chunkings, before and after the byte budget's fit window.
 */
import { describe, expect, it } from 'vitest';
import { ByteBudget, resolveLimits, type ResolvedLimits } from '../../src/engine/index.js';
import { EnvelopeScanner } from '../../src/transport/core/envelope-scan.js';
import { classifyEnvelope } from '../../src/transport/core/jsonrpc-errors.js';
import { repeatWhy } from '../../src/transport/core/repeated-members.js';
import { LongServerLine, type LongLineOutcome } from '../../src/transport/proxy/long-response.js';

const LIMITS = resolveLimits({});

/** The line read as before: the scan skips every member and passes the response's bytes to the budget. */
function reference(line: Buffer, size: number, limits: ResolvedLimits): LongLineOutcome {
  const budget = new ByteBudget(limits, 'envelope');
  const scanner = new EnvelopeScanner(1024);
  let failed: string | undefined;
  const feed = (piece: Buffer): void => {
    if (failed !== undefined) return;
    try {
      budget.write(piece);
    } catch (e) {
      failed = (e as Error).message;
    }
  };
  for (let at = 0; at < line.length; at += size) {
    scanner.push(line.subarray(at, at + size), feed);
    if (scanner.facts.repeated !== undefined) failed ??= repeatWhy(scanner.facts.repeated);
  }
  const facts = scanner.end();
  if (facts.repeated !== undefined) return { kind: 'invalid', why: repeatWhy(facts.repeated), facts };
  const kind = classifyEnvelope(facts);
  if (kind === 'request' || kind === 'notification') return { kind: 'message-too-large', facts };
  if (kind === 'invalid') return { kind: 'invalid', why: 'see the facts', facts };
  if (failed !== undefined) return { kind: 'invalid', why: failed, facts };
  try {
    return { kind: 'response', message: JSON.parse(budget.end().json) as Record<string, unknown>, facts };
  } catch (e) {
    return { kind: 'invalid', why: (e as Error).message, facts };
  }
}

function outcome(line: Buffer, size: number, limits: ResolvedLimits): LongLineOutcome {
  const long = new LongServerLine(limits, 1024);
  for (let at = 0; at < line.length; at += size) long.chunk(line.subarray(at, at + size));
  return long.end();
}

/** What must agree (an invalid line's reason is the scan's own when the keys decide it). */
function comparable(o: LongLineOutcome): unknown {
  return o.kind === 'invalid' && classifyEnvelope(o.facts) === 'invalid' ? { kind: o.kind, facts: o.facts } : o;
}

const text = (n: number): string => 'abc \\"q\\" é😀 \\\\ [}{ '.repeat(Math.ceil(n / 24)).slice(0, n).replace(/\\+$/, '');

/** Results of every kind, valid and not; `big` makes them longer than the fit window (1 MiB). */
function results(big: boolean): string[] {
  const t = text(big ? 1_300_000 : 3000);
  return [
    `{"content":[{"type":"text","text":"${t}"}]}`,
    `{"content":[{"type":"text","text":"${t}"},{"type":"text","text":"b"}],"structuredContent":{"a":[1,2,{"b":"}"}]},"isError":false}`,
    `[1,"${t}",{"x":[]}]`,
    `{"content":[{"type":"text","text":"${t}\u0001"}]}`, // a control character: the budget refuses it
    `{"content":[{"type":"text","text":"${t}\\x"}]}`, // a bad escape
    `{"content":[{"type":"text","text":"${t}"}],"n":1.2.3}`, // a bad number
    `{"content":[{"type":"text","text":"${t}"}]]`, // brackets that do not match (the scan passes them)
    `{"content":[{"type":"text","text":"${t}"}],"s":"\u00ff"}`.replace('\u00ff', '\\u00ff'),
    `"${t}"`,
    `12`,
  ];
}

/** Envelopes around a result: the id before it, after it, repeated; a method after it. */
function lines(result: string): Buffer[] {
  const bad = Buffer.from(`{"jsonrpc":"2.0","id":"x","result":{"content":[{"type":"text","text":"${text(3000)}"}],"u":"\xff\xfe"}}`, 'latin1');
  return [
    Buffer.from(`{"jsonrpc":"2.0","id":7,"result":${result}}`),
    Buffer.from(`{"result":${result},"jsonrpc":"2.0","id":"abc"}`),
    Buffer.from(`{"result":${result} , "id":3,"extra":{"id":4},"jsonrpc":"2.0"}`),
    Buffer.from(`{"id":1,"id":2,"result":${result}}`),
    Buffer.from(`{"jsonrpc":"2.0","result":${result},"method":"m","id":9}`),
    Buffer.from(`{"jsonrpc":"2.0","error":{"code":1,"message":"m","data":${result}},"id":5}`),
    bad, // invalid UTF-8 in the result, the id before it
  ];
}

describe('long-response: the budget finds the end of the result', () => {
  it('gives what skipping every member in the scan gave, at every chunking (lines under the fit window)', () => {
    for (const result of results(false)) {
      for (const line of lines(result)) {
        for (const size of [1, 7, 64, 4096, line.length]) {
          expect(comparable(outcome(line, size, LIMITS)), `${line.subarray(0, 80).toString()} @${size}`).toEqual(comparable(reference(line, size, LIMITS)));
        }
      }
    }
  });

  it('gives what skipping every member in the scan gave, past the fit window', () => {
    for (const result of results(true)) {
      for (const line of lines(result)) {
        for (const size of [65_536, 262_144, 1_000_003]) {
          expect(comparable(outcome(line, size, LIMITS)), `${line.subarray(0, 80).toString()} @${size}`).toEqual(comparable(reference(line, size, LIMITS)));
        }
      }
    }
  });

  it('a response past the fit window is bounded, its real id read after the result', () => {
    const line = Buffer.from(`{"result":${results(true)[0]!},"jsonrpc":"2.0","id":"the-id"}`);
    const o = outcome(line, 262_144, LIMITS);
    expect(o.kind).toBe('response');
    expect(o.facts.id).toBe('the-id');
    if (o.kind === 'response') expect(Buffer.byteLength(JSON.stringify(o.message))).toBeLessThanOrEqual(LIMITS.maxResultBytes + 64);
  });
});
