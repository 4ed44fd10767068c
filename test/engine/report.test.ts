import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { MAX_POINTER_BYTES, NOTICE_KEY, REPORT_KEY } from '../../src/engine/limits.js';
import {
  BUDGET_KINDS,
  ReportBuilder,
  escapePointerSegment,
  maxReserveBytes,
  noticeText,
  serializeNotice,
  serializeReport,
  type BudgetReport,
} from '../../src/engine/report.js';
import { keyArb } from '../helpers/arbitraries.js';
import { pointerOf, pointerSegments, utf8 } from '../helpers/spec.js';
import { timeBox } from '../helpers/time-box.js';

const RUN = timeBox(300, 2000);

describe('report', () => {
  it('report: escapes pointer segments per RFC 6901 (~ first, then /)', () => {
    expect(escapePointerSegment('plain')).toBe('plain');
    expect(escapePointerSegment('')).toBe('');
    expect(escapePointerSegment('a/b')).toBe('a~1b');
    expect(escapePointerSegment('m~n')).toBe('m~0n');
    expect(escapePointerSegment('~1')).toBe('~01');
    expect(escapePointerSegment('~/')).toBe('~0~1');
    expect(escapePointerSegment('/~')).toBe('~1~0');
    fc.assert(
      fc.property(keyArb, (k) => {
        expect(pointerSegments('/' + escapePointerSegment(k))).toEqual([k]);
      }),
      RUN,
    );
  });

  it('report: the first added kind is the budget_kind and every omission is counted', () => {
    const r = new ReportBuilder({ maxOmittedPaths: 16 });
    expect(r.truncated).toBe(false);
    r.add('array_items', () => '/a/3');
    r.add('string_bytes', () => '/b');
    expect(r.truncated).toBe(true);
    expect(r.build()).toEqual({
      truncated: true,
      budget_kind: 'array_items',
      omitted_count: 2,
      omitted_paths: ['/a/3', '/b'],
      omitted_paths_capped: false,
    });
  });

  it('report: lists at most maxOmittedPaths pointers and flags the list as capped', () => {
    const r = new ReportBuilder({ maxOmittedPaths: 2 });
    for (let i = 0; i < 5; i++) r.add('object_keys', () => `/k${i}`);
    expect(r.build()).toMatchObject({ omitted_count: 5, omitted_paths: ['/k0', '/k1'], omitted_paths_capped: true });
  });

  it('report: with maxOmittedPaths 0 no pointer is built and the list is capped', () => {
    const r = new ReportBuilder({ maxOmittedPaths: 0 });
    let built = 0;
    r.add('depth', () => {
      built++;
      return '/x';
    });
    expect(built).toBe(0);
    expect(r.build()).toMatchObject({ omitted_count: 1, omitted_paths: [], omitted_paths_capped: true });
  });

  it('report: a pointer longer than 256 bytes is not listed, and the list stays a prefix in document order', () => {
    const r = new ReportBuilder({ maxOmittedPaths: 10 });
    r.add('string_bytes', () => '/ok');
    r.add('string_bytes', () => '/' + 'x'.repeat(MAX_POINTER_BYTES));
    r.add('string_bytes', () => '/later');
    expect(r.build()).toMatchObject({ omitted_count: 3, omitted_paths: ['/ok'], omitted_paths_capped: true });
    // exactly 256 bytes as a JSON string is still listed
    const fits = new ReportBuilder({ maxOmittedPaths: 10 });
    const p = '/' + 'y'.repeat(MAX_POINTER_BYTES - 3);
    expect(utf8(JSON.stringify(p))).toBe(MAX_POINTER_BYTES);
    fits.add('depth', () => p);
    expect(fits.build().omitted_paths).toEqual([p]);
  });

  it('report: an undefined pointer (too long to build) caps the list', () => {
    const r = new ReportBuilder({ maxOmittedPaths: 10 });
    r.add('depth', () => undefined);
    r.add('depth', () => '/b');
    expect(r.build()).toMatchObject({ omitted_count: 2, omitted_paths: [], omitted_paths_capped: true });
  });

  it('report: addMany counts every omission but builds only the pointers it can list', () => {
    const r = new ReportBuilder({ maxOmittedPaths: 3 });
    let asked = 0;
    r.addMany('array_items', 10_000_000, (i) => {
      asked++;
      return `/a/${i}`;
    });
    expect(asked).toBe(3);
    expect(r.build()).toMatchObject({
      budget_kind: 'array_items',
      omitted_count: 10_000_000,
      omitted_paths: ['/a/0', '/a/1', '/a/2'],
      omitted_paths_capped: true,
    });
    const none = new ReportBuilder({ maxOmittedPaths: 3 });
    none.addMany('array_items', 0, () => '/x');
    expect(none.truncated).toBe(false);
  });

  it('report: rollback undoes the entries made after a mark', () => {
    const r = new ReportBuilder({ maxOmittedPaths: 2 });
    r.add('array_items', () => '/a');
    const m = r.mark();
    r.add('binary_block', () => '/b');
    r.add('binary_block', () => '/c');
    r.rollback(m);
    expect(r.build()).toEqual({
      truncated: true,
      budget_kind: 'array_items',
      omitted_count: 1,
      omitted_paths: ['/a'],
      omitted_paths_capped: false,
    });
    const empty = new ReportBuilder({ maxOmittedPaths: 2 });
    const m0 = empty.mark();
    empty.add('depth', () => '/d');
    empty.rollback(m0);
    expect(empty.truncated).toBe(false);
    expect(empty.kind).toBeUndefined();
  });

  it('report: absorb puts an earlier report first and keeps its kind', () => {
    const r = new ReportBuilder({ maxOmittedPaths: 3 });
    r.add('depth', () => '/new');
    r.absorb({ truncated: true, budget_kind: 'text_block_bytes', omitted_count: 2, omitted_paths: ['/p1', '/p2'], omitted_paths_capped: false });
    expect(r.build()).toEqual({
      truncated: true,
      budget_kind: 'text_block_bytes',
      omitted_count: 3,
      omitted_paths: ['/p1', '/p2', '/new'],
      omitted_paths_capped: false,
    });
    const capped = new ReportBuilder({ maxOmittedPaths: 2 });
    capped.add('depth', () => '/new');
    capped.absorb({ truncated: true, budget_kind: 'depth', omitted_count: 2, omitted_paths: ['/p1', '/p2'], omitted_paths_capped: false });
    expect(capped.build()).toMatchObject({ omitted_count: 3, omitted_paths: ['/p1', '/p2'], omitted_paths_capped: true });
  });

  it('report: serializeReport writes the fixed key order and equals JSON.stringify of the report', () => {
    const r: BudgetReport = {
      truncated: true,
      budget_kind: 'object_keys',
      omitted_count: 7,
      omitted_paths: ['/a~1b', '/"q"', '/é'],
      omitted_paths_capped: true,
    };
    expect(serializeReport(r)).toBe(JSON.stringify(r));
    expect(Object.keys(JSON.parse(serializeReport(r)) as object)).toEqual([
      'truncated',
      'budget_kind',
      'omitted_count',
      'omitted_paths',
      'omitted_paths_capped',
    ]);
  });

  it('report: the notice names the count (singular and plural), the first limit and the report key', () => {
    const one: BudgetReport = { truncated: true, budget_kind: 'depth', omitted_count: 1, omitted_paths: [], omitted_paths_capped: true };
    expect(noticeText(one)).toContain('1 value was omitted');
    expect(noticeText(one)).toContain('first limit hit: depth');
    expect(noticeText(one)).toContain(REPORT_KEY);
    expect(noticeText({ ...one, omitted_count: 12 })).toContain('12 values were omitted');
    const block = JSON.parse(serializeNotice(one)) as Record<string, unknown>;
    expect(block).toEqual({ type: 'text', _meta: { [NOTICE_KEY]: true }, text: noticeText(one) });
    expect(Object.keys(block)).toEqual(['type', '_meta', 'text']);
  });

  it('report: lists every budget kind of the spec', () => {
    expect([...BUDGET_KINDS].sort()).toEqual(
      [
        'array_items',
        'binary_block',
        'depth',
        'object_keys',
        'result_bytes',
        'string_bytes',
        'text_block_bytes',
        'text_total_bytes',
        'text_tokens',
        'top_level_field',
        'invalid_block',
      ].sort(),
    );
  });

  it('report: maxReserveBytes covers the largest report, its _meta wrapper and the notice', () => {
    const kindArb = fc.constantFrom(...BUDGET_KINDS);
    const pointerArb = fc.array(keyArb, { maxLength: 12 }).map((segs) => pointerOf(segs)).filter((p) => utf8(JSON.stringify(p)) <= MAX_POINTER_BYTES);
    fc.assert(
      fc.property(fc.nat(40), fc.boolean(), kindArb, fc.array(pointerArb, { maxLength: 40 }), fc.nat(), (maxPaths, notice, kind, paths, extra) => {
        const listed = paths.slice(0, maxPaths);
        const r: BudgetReport = {
          truncated: true,
          budget_kind: kind,
          omitted_count: Math.max(1, listed.length + extra),
          omitted_paths: listed,
          omitted_paths_capped: listed.length < Math.max(1, listed.length + extra),
        };
        const written =
          utf8(`,"_meta":{${JSON.stringify(REPORT_KEY)}:${serializeReport(r)}}`) + (notice ? utf8(',' + serializeNotice(r)) : 0);
        expect(written).toBeLessThanOrEqual(maxReserveBytes({ maxOmittedPaths: maxPaths, notice }));
      }),
      RUN,
    );
    // the worst case itself: longest kind, largest count, every pointer at the 256-byte cap
    const worst: BudgetReport = {
      truncated: true,
      budget_kind: 'text_total_bytes',
      omitted_count: Number.MAX_SAFE_INTEGER,
      omitted_paths: new Array<string>(16).fill('/' + '\u0001'.repeat(42)), // 2 + 1 + 42*6 = 255 bytes
      omitted_paths_capped: false,
    };
    const bytes = utf8(`,"_meta":{${JSON.stringify(REPORT_KEY)}:${serializeReport(worst)}}`) + utf8(',' + serializeNotice(worst));
    expect(bytes).toBeLessThanOrEqual(maxReserveBytes({ maxOmittedPaths: 16, notice: true }));
  });

  it('report: the reserve grows with maxOmittedPaths and shrinks without the notice', () => {
    expect(maxReserveBytes({ maxOmittedPaths: 17, notice: true })).toBeGreaterThan(maxReserveBytes({ maxOmittedPaths: 16, notice: true }));
    expect(maxReserveBytes({ maxOmittedPaths: 16, notice: false })).toBeLessThan(maxReserveBytes({ maxOmittedPaths: 16, notice: true }));
  });
});
