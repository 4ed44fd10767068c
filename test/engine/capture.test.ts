import { describe, expect, it } from 'vitest';
import { ValueCapture } from '../../src/engine/capture.js';
import type { BudgetReport } from '../../src/engine/report.js';

/** Feed a JSON value to a capture as events, the way the budgeter does. */
function capture(value: unknown, chunk = Infinity): ValueCapture {
  const c = new ValueCapture();
  const feed = (v: unknown): void => {
    if (Array.isArray(v)) {
      c.open(true);
      v.forEach(feed);
      c.close();
    } else if (v !== null && typeof v === 'object') {
      c.open(false);
      for (const [k, x] of Object.entries(v)) {
        c.key(k);
        feed(x);
      }
      c.close();
    } else if (typeof v === 'string') {
      c.stringStart();
      for (let i = 0; i < v.length; i += chunk === Infinity ? Math.max(1, v.length) : chunk) c.stringChunk(v.slice(i, i + chunk));
      c.stringEnd();
    } else {
      c.scalar(JSON.stringify(v));
    }
  };
  feed(value);
  return c;
}

const good: BudgetReport = {
  truncated: true,
  budget_kind: 'array_items',
  omitted_count: 3,
  omitted_paths: ['/a/1', '/a/2'],
  omitted_paths_capped: true,
};

describe('capture', () => {
  it('capture: rebuilds a value from events, strings in chunks included', () => {
    const v = { a: [1, true, null, 'xyz'], b: { c: -2.5e-7 }, d: '' };
    const c = capture(v, 2);
    expect(c.done).toBe(true);
    expect(c.value).toEqual(v);
  });

  it('capture: recognizes an earlier report', () => {
    expect(capture(good).asReport(16)).toEqual(good);
    expect(capture({ ...good, omitted_paths: [''] }).asReport(16)).toEqual({ ...good, omitted_paths: [''] });
    // An earlier pass's continuation, last, leaves the report valid (the transport writes it back).
    const offer = { tool: 'mcp_result_budget__read', handle: 'h', expires_at: 't', paths: [], paths_capped: false };
    expect(capture({ ...good, continuation: offer }).asReport(16)).toMatchObject(good);
  });

  it('capture: rejects anything that is not exactly a report', () => {
    const bad: unknown[] = [
      'string',
      [good],
      { ...good, extra: 1 },
      { budget_kind: good.budget_kind, truncated: true, omitted_count: 3, omitted_paths: [], omitted_paths_capped: true },
      { ...good, truncated: false },
      { ...good, budget_kind: 'nope' },
      { ...good, omitted_count: 0 },
      { ...good, omitted_count: 1.5 },
      { ...good, omitted_count: '3' },
      { ...good, omitted_paths: ['no-slash'] },
      { ...good, omitted_paths: [1] },
      { ...good, omitted_paths: ['/' + 'x'.repeat(300)] },
      { ...good, omitted_count: 1 }, // more paths than omissions
      { ...good, omitted_paths_capped: 'yes' },
      { ...good, continuation: 'h' },
      { ...good, continuation: null },
      { continuation: {}, ...good },
    ];
    for (const v of bad) expect(capture(v).asReport(16), JSON.stringify(v)).toBeUndefined();
    // more paths than this pass may list
    expect(capture(good).asReport(1)).toBeUndefined();
  });

  it('capture: gives up on a value larger than 64 KiB', () => {
    const huge = { ...good, omitted_paths: ['/a'], omitted_paths_capped: 'x'.repeat(70_000) };
    expect(capture(huge).asReport(16)).toBeUndefined();
  });
});
