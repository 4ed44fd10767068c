import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { RequestTable } from '../../src/transport/request-ids.js';

/** How the SDK client finds the request a response answers: `Number(response.id)` in a Map of numbers. */
function sdkAccepts(responseId: string | number, requestId: number): boolean {
  return new Map([[requestId, true]]).get(Number(responseId)) === true;
}

const pending = (ids: (string | number)[]): RequestTable => {
  const t = new RequestTable();
  for (const id of ids) t.remember(id, { method: 'tools/call', tool: 't' });
  return t;
};

describe('RequestTable.match', () => {
  it('request-ids: a response id matches a numeric request exactly when the SDK client would take it (generated ids)', () => {
    const forms = (n: number): string[] =>
      [String(n), ` ${n}`, `${n}\n`, `${n}.0`, `${n}e0`, `+${n}`, `0x${n.toString(16)}`, `${n}a`, `0${n}`, `[${n}]`, '', ' ', '-0', 'NaN', 'Infinity'];
    const pair = fc.integer({ min: -1000, max: 1000 }).chain((r) => fc.tuple(fc.constant(r), fc.oneof(fc.constantFrom(...forms(r)), fc.string())));
    fc.assert(
      fc.property(pair, ([r, s]) => {
        const got = pending([r]).match(s);
        expect(got !== undefined, JSON.stringify([r, s])).toBe(sdkAccepts(s, r));
        if (got !== undefined) expect(got === r || (got === 0 && r === 0)).toBe(true);
      }),
      { numRuns: 2000 },
    );
  });

  it('request-ids: the exact id wins; a number answers the string request written the same way', () => {
    const t = pending([7, '7', 'abc', 0]);
    expect(t.match(7)).toBe(7);
    expect(t.match('7')).toBe('7'); // exact before numeric
    expect(t.match(' 7')).toBe(7);
    expect(t.match('')).toBe(0);
    expect(t.match(-0)).toBe(-0);
    expect(t.match('abc')).toBe('abc');
    expect(t.match('ABC')).toBeUndefined();
    expect(pending(['12']).match(12)).toBe('12');
    expect(pending(['12']).match(12.0)).toBe('12');
    expect(pending(['012']).match(12)).toBeUndefined();
    expect(pending([1.5]).match('1.50')).toBe(1.5);
  });
});
