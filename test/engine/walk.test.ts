import { describe, expect, it } from 'vitest';
import { boundJson } from '../../src/engine/bound.js';
import { Budgeter } from '../../src/engine/budgeter.js';
import { BudgetError } from '../../src/engine/errors.js';
import { resolveLimits, type ResolvedLimits } from '../../src/engine/options.js';
import { walkValue } from '../../src/engine/walk.js';
import { REPORT_KEY } from '../helpers/spec.js';

const roomy = resolveLimits({ maxResultBytes: 1 << 20 });

/** The budgeter fed by the walk, without the fast path in front. */
function walk(value: unknown, limits: ResolvedLimits = roomy): { json: string; report: ReturnType<Budgeter['finish']> } {
  const b = new Budgeter(limits, 'result');
  walkValue(b, value);
  const report = b.finish();
  return { json: b.toString(), report };
}

function code(fn: () => unknown): string {
  try {
    fn();
  } catch (e) {
    expect(e).toBeInstanceOf(BudgetError);
    return (e as BudgetError).code;
  }
  return 'no error';
}

describe('walk', () => {
  it('walk: writes what JSON.stringify writes for plain JSON values', () => {
    const v = {
      content: [{ type: 'text', text: 'a"b\\c\n\u0001😀\ud800' }],
      structuredContent: { n: [0, -1, 1.5, 1e21, 1e-7, -0], t: true, f: false, z: null, s: '', o: {}, a: [] },
      isError: false,
    };
    expect(walk(v)).toEqual({ json: JSON.stringify(v), report: undefined });
  });

  it('walk: follows JSON.stringify for undefined, functions, symbols, NaN and Infinity', () => {
    const v = {
      structuredContent: {
        u: undefined,
        f: () => 1,
        y: Symbol('s'),
        arr: [undefined, () => 1, Symbol('t'), Number.NaN, Infinity, -Infinity],
        keep: 1,
      },
    };
    expect(walk(v).json).toBe(JSON.stringify(v));
    // eslint-disable-next-line no-sparse-arrays
    const sparse = { structuredContent: { a: [1, , 3] } };
    expect(walk(sparse).json).toBe('{"structuredContent":{"a":[1,null,3]}}');
  });

  it('walk: calls toJSON with the member key, as JSON.stringify does', () => {
    const seen: string[] = [];
    const tagged = (name: string): object => ({
      toJSON(key: string) {
        seen.push(key);
        return `${name}@${key}`;
      },
    });
    const v = { structuredContent: { d: new Date(0), x: tagged('x'), list: [tagged('i')] } };
    expect(walk(v).json).toBe(JSON.stringify(v));
    expect(seen).toEqual(['x', '0', 'x', '0']); // walk, then JSON.stringify
  });

  it('walk: rejects what cannot be a result', () => {
    expect(code(() => walk(undefined))).toBe('INVALID_RESULT');
    expect(code(() => walk([]))).toBe('INVALID_RESULT');
    expect(code(() => walk('x'))).toBe('INVALID_RESULT');
    expect(code(() => walk(42))).toBe('INVALID_RESULT');
    expect(code(() => walk({ structuredContent: { n: 1n } }))).toBe('INVALID_RESULT');
    expect(code(() => boundJson({ structuredContent: { n: 10n } }))).toBe('INVALID_RESULT');
  });

  it('walk: does not read the items of an array after the first one it omits', () => {
    const arr: unknown[] = [1, 2, 3, 4];
    for (let i = 4; i < 1000; i++) {
      Object.defineProperty(arr, i, {
        get() {
          throw new Error(`item ${i} was read`);
        },
        enumerable: true,
      });
    }
    const out = boundJson({ structuredContent: { arr } }, { maxItems: 3, maxOmittedPaths: 2 });
    expect(JSON.parse(out.json).structuredContent).toEqual({ arr: [1, 2, 3] });
    expect(out.report).toMatchObject({ budget_kind: 'array_items', omitted_count: 997, omitted_paths: ['/structuredContent/arr/3', '/structuredContent/arr/4'] });
  });

  it('walk: counts the omitted members of a closed object without listing more pointers than allowed', () => {
    const obj: Record<string, unknown> = {};
    for (let i = 0; i < 1000; i++) obj[`k${i}`] = i;
    obj.skipped = undefined;
    const out = boundJson({ _meta: obj }, { maxKeys: 10, maxOmittedPaths: 3 });
    expect(out.report).toMatchObject({ budget_kind: 'object_keys', omitted_count: 990, omitted_paths: ['/_meta/k10', '/_meta/k11', '/_meta/k12'], omitted_paths_capped: true });
  });

  it('walk: pointers escape ~ and / in keys of the original input', () => {
    const out = boundJson({ structuredContent: { 'a/b': { 'm~n': 'x'.repeat(100) } } }, { maxStringBytes: 20 });
    expect(out.report?.omitted_paths).toEqual(['/structuredContent/a~1b/m~0n']);
  });

  it('walk: keeps isError after the budget is spent when nothing else follows', () => {
    const v = { structuredContent: { rows: Array.from({ length: 3000 }, (_, i) => i) }, isError: true };
    const out = boundJson(v, { maxItems: 10_000_000, maxResultBytes: 8192, maxOmittedPaths: 2 });
    expect(out.report?.budget_kind).toBe('result_bytes');
    expect(JSON.parse(out.json).isError).toBe(true);
  });

  // Regression: the walk used to count the rest of a closed result object as omitted in one step,
  // isError included (spec §1: "every later value is omitted, except isError").
  it('walk: keeps isError after the budget is spent and a later member was dropped', () => {
    const v = { structuredContent: { rows: Array.from({ length: 3000 }, (_, i) => i) }, _meta: { a: 1 }, isError: true };
    const out = boundJson(v, { maxItems: 10_000_000, maxResultBytes: 8192, maxOmittedPaths: 2 });
    expect(out.report?.budget_kind).toBe('result_bytes');
    expect(JSON.parse(out.json).isError).toBe(true);
  });

  // Regression (a fixed bug): a member whose toJSON returns undefined is written as null. The walk
  // checks for undefined before calling toJSON, so {a: {toJSON: () => undefined}} becomes "a":null,
  // where JSON.stringify (whose semantics walk.ts promises) omits the member. Input
  // {structuredContent:{a:{toJSON(){return undefined}},b:1}}: expected
  // '{"structuredContent":{"b":1}}', actual '{"structuredContent":{"a":null,"b":1}}'.
  it('walk: omits a member whose toJSON returns undefined, as JSON.stringify does', () => {
    const v = { structuredContent: { a: { toJSON: () => undefined }, b: 1 } };
    expect(boundJson(v).json).toBe(JSON.stringify(v));
  });

  // Regression (a fixed bug): boxed primitives are walked as objects. JSON.stringify writes
  // new Number(5) as 5, new String('hi') as "hi", new Boolean(false) as false; the walk writes
  // {}, {"0":"h","1":"i"} and {}. The fast path uses JSON.stringify, so the same value comes out
  // differently depending on whether something else in the result was cut. Input
  // {structuredContent:{n:new Number(5)}, _meta:{big:'x'.repeat(9000)}}: expected
  // structuredContent {"n":5}; actual {"n":{}}.
  it('walk: writes boxed primitives as JSON.stringify does', () => {
    const v = { structuredContent: { n: new Number(5), s: new String('hi'), b: new Boolean(false) }, _meta: { big: 'x'.repeat(9000) } };
    const out = JSON.parse(boundJson(v).json) as { structuredContent: unknown; _meta: Record<string, unknown> };
    expect(out.structuredContent).toEqual({ n: 5, s: 'hi', b: false });
    expect(Object.keys(out._meta)).toEqual(['big', REPORT_KEY]);
  });
});
