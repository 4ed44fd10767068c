import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { BUDGET_FLAGS } from '../../src/cli/args.js';
import {
  DEFAULT_LIMITS,
  LIMIT_RANGES,
  MAX_ENVELOPE_FIELD_BYTES,
  MAX_KEY_UNITS,
  MAX_POINTER_BYTES,
  MIN_CUT_BYTES,
  NOTICE_KEY,
  NUMERIC_LIMITS,
  REPORT_KEY,
  SCALED_LIMITS,
} from '../../src/engine/limits.js';
import { minResultBytes, resolveLimits } from '../../src/engine/options.js';
import { BUDGET_KINDS } from '../../src/engine/report.js';
import { KIND_LIMIT, LIMITS } from '../../src/engine/limits.js';
import { renderLimitsSpec } from '../../scripts/limits.js';

const specs = (name: string): string => readFileSync(fileURLToPath(new URL(`../../specs/${name}`, import.meta.url)), 'utf8');
const json = JSON.parse(specs('limits.json')) as {
  limits: { name: string; flag: string; env: string; default: number; min: number; max: number }[];
  constants: Record<string, unknown>;
  budgetKinds: string[];
};

describe('spec defaults', () => {
  it('spec-defaults: specs/limits.json is generated from the limits table (run `npm run limits` when it is stale)', () => {
    expect(specs('limits.json')).toBe(renderLimitsSpec());
  });

  it('spec-defaults: the limits table is consistent: every report kind names one limit, flags and variables are unique, defaults in range', () => {
    const kinds = NUMERIC_LIMITS.flatMap((n) => LIMITS[n].kinds);
    expect([...kinds].sort()).toEqual([...BUDGET_KINDS].sort());
    for (const k of BUDGET_KINDS) expect(LIMITS[KIND_LIMIT[k]].kinds).toContain(k);
    expect(new Set(NUMERIC_LIMITS.map((n) => LIMITS[n].flag)).size).toBe(NUMERIC_LIMITS.length);
    expect(new Set(NUMERIC_LIMITS.map((n) => LIMITS[n].env)).size).toBe(NUMERIC_LIMITS.length);
    for (const n of NUMERIC_LIMITS) {
      const d = LIMITS[n];
      expect(d.default, n).toBeGreaterThanOrEqual(d.min);
      expect(d.default, n).toBeLessThanOrEqual(d.max);
      if (d.serveMinimum !== undefined) expect(d.serveMinimum.min, n).toBeGreaterThanOrEqual(d.min);
    }
  });

  it('spec-defaults: limits.json lists every numeric limit with the module default and range', () => {
    expect(json.limits.map((l) => l.name)).toEqual([...NUMERIC_LIMITS]);
    for (const l of json.limits) {
      const name = l.name as (typeof NUMERIC_LIMITS)[number];
      expect(l.default, name).toBe(DEFAULT_LIMITS[name]);
      expect(l.min, name).toBe(LIMIT_RANGES[name].min);
      expect(l.max, name).toBe(LIMIT_RANGES[name].max);
      const flag = BUDGET_FLAGS.find((f) => f.limit === name)!;
      expect(l.flag, name).toBe(flag.flag);
      expect(l.env, name).toBe(flag.env);
    }
  });

  it('spec-defaults: the limits that scale with maxResultBytes are listed with their share', () => {
    const scales = Object.fromEntries(json.limits.filter((l) => 'scale' in l).map((l) => [l.name, (l as { scale?: number }).scale]));
    expect(scales).toEqual(SCALED_LIMITS);
    for (const [name, share] of Object.entries(SCALED_LIMITS)) {
      expect(DEFAULT_LIMITS[name as (typeof NUMERIC_LIMITS)[number]]).toBe(DEFAULT_LIMITS.maxResultBytes * share);
    }
  });

  it('spec-defaults: constants and budget kinds match the module', () => {
    expect(json.constants).toEqual({
      reportKey: REPORT_KEY,
      noticeKey: NOTICE_KEY,
      maxPointerBytes: MAX_POINTER_BYTES,
      minCutBytes: MIN_CUT_BYTES,
      maxEnvelopeFieldBytes: MAX_ENVELOPE_FIELD_BYTES,
      maxKeyUnits: MAX_KEY_UNITS,
    });
    expect(json.budgetKinds).toEqual([...BUDGET_KINDS]);
  });

  it('spec-defaults: the markdown defaults table matches limits.json', () => {
    const md = specs('agent-mcp-result-budget.md');
    const table = md.slice(md.indexOf('<!-- defaults-table'), md.indexOf('<!-- /defaults-table -->'));
    const rows = table
      .split('\n')
      .filter((l) => l.startsWith('| `'))
      .map((l) => l.split('|').map((c) => c.trim()));
    expect(rows.map((r) => r[1])).toEqual(json.limits.map((l) => '`' + l.name + '`'));
    for (const [i, l] of json.limits.entries()) {
      const r = rows[i]!;
      expect(r[2]).toBe('`' + l.flag + '`');
      expect(r[3]).toBe('`' + l.env + '`');
      expect(r[4]).toBe(String(l.default));
      expect(r[5]!.startsWith(`${l.min}–${l.max}`)).toBe(true);
    }
  });

  it('spec-defaults: the reserve figures quoted in the spec are the computed ones', () => {
    const md = specs('agent-mcp-result-budget.md');
    const reserve = resolveLimits({}).reserveBytes;
    const floor = minResultBytes(DEFAULT_LIMITS);
    expect(md).toContain(`reserve for the report and notice is ${reserve.toLocaleString('en-US')} bytes`);
    expect(md).toContain(`at least ${floor.toLocaleString('en-US')}`);
  });
});
