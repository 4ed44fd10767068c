import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { RequestTable } from '../../src/transport/core/request-ids.js';

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

describe('RequestTable', () => {
  it('request-ids: ids are keyed by type as well as value, and 0 is an id', () => {
    const t = new RequestTable();
    t.remember(1, { method: 'tools/call', tool: 'a' });
    t.remember('1', { method: 'ping', tool: undefined });
    t.remember(0, { method: 'tools/list', tool: undefined });
    expect(t.size).toBe(3);
    expect(t.peek(1)?.tool).toBe('a');
    expect(t.peek('1')?.method).toBe('ping');
    expect(t.peek(0)?.method).toBe('tools/list');
    expect(t.peek(-0)?.method).toBe('tools/list'); // -0 is written `0`: the same id
    expect(t.peek('0')).toBeUndefined();
    expect(t.take(1)?.tool).toBe('a');
    expect(t.take(1)).toBeUndefined();
    expect(t.peek('1')?.method).toBe('ping');
    t.forget('1');
    expect(t.ids()).toEqual([0]);
  });

  it('request-ids: ids() gives every id back with its type, oldest first; a remembered id keeps its place', () => {
    const t = pending([3, '3', 'x', 0, 2.5]);
    t.remember('3', { method: 'ping', tool: undefined });
    expect(t.ids()).toEqual([3, '3', 'x', 0, 2.5]);
    expect(t.peek('3')?.method).toBe('ping');
    t.clear();
    expect(t.ids()).toEqual([]);
    expect(t.size).toBe(0);
  });

  it('request-ids: past the bound the oldest request is dropped', () => {
    const t = new RequestTable(3);
    for (const id of [1, '1', 2, 'b']) t.remember(id, { method: 'tools/call', tool: String(id) });
    expect(t.ids()).toEqual(['1', 2, 'b']);
    expect(t.peek(1)).toBeUndefined();
    t.remember('b', { method: 'tools/call', tool: 'again' }); // at the bound the oldest goes, even for an id already there
    expect(t.ids()).toEqual([2, 'b']);
  });

  it('request-ids: agrees with a table keyed by type-tagged strings (generated operations)', () => {
    type Op = { op: 'remember' | 'take' | 'forget' | 'match' | 'peek' | 'clear'; id: string | number };
    const id = fc.oneof(fc.integer({ min: -3, max: 3 }), fc.constantFrom(-0, 1.5, 1e21), fc.constantFrom('0', '1', '-1', ' 1', '', 'a', '1.5', '1e21'));
    const op = fc.record({ op: fc.constantFrom('remember', 'remember', 'take', 'forget', 'match', 'peek', 'clear'), id }) as fc.Arbitrary<Op>;
    const keyOf = (i: string | number): string => (typeof i === 'number' ? 'n:' : 's:') + String(i);
    const idOf = (k: string): string | number => (k.startsWith('n:') ? Number(k.slice(2)) : k.slice(2));
    fc.assert(
      fc.property(fc.array(op, { maxLength: 40 }), fc.integer({ min: 1, max: 6 }), (ops, max) => {
        const t = new RequestTable(max);
        const ref = new Map<string, string>();
        ops.forEach(({ op, id: i }, n) => {
          if (op === 'remember') {
            if (ref.size >= max) ref.delete(ref.keys().next().value!);
            ref.set(keyOf(i), `r${n}`);
            t.remember(i, { method: `r${n}`, tool: undefined });
          } else if (op === 'take') {
            const want = ref.get(keyOf(i));
            ref.delete(keyOf(i));
            expect(t.take(i)?.method).toBe(want);
          } else if (op === 'peek') {
            expect(t.peek(i)?.method).toBe(ref.get(keyOf(i)));
          } else if (op === 'clear') {
            ref.clear();
            t.clear();
          } else if (op === 'forget') {
            ref.delete(keyOf(i));
            t.forget(i);
          } else {
            let want: string | number | undefined;
            const n = Number(i);
            if (ref.has(keyOf(i))) want = i;
            else if (typeof i === 'string') want = Number.isFinite(n) && ref.has(keyOf(n)) ? n + 0 : undefined; // -0 answered as 0
            else want = ref.has(keyOf(String(i))) ? String(i) : undefined;
            const got = t.match(i);
            expect(got).toStrictEqual(want);
            if (typeof got === 'number') expect(Object.is(got, want)).toBe(true);
          }
          expect(t.ids()).toStrictEqual([...ref.keys()].map(idOf));
          expect(t.size).toBe(ref.size);
        });
      }),
      { numRuns: 500 },
    );
  });
});
