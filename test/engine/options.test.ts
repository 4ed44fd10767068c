import { describe, expect, it } from 'vitest';
import { BudgetError } from '../../src/engine/errors.js';
import { DEFAULT_LIMITS, LIMIT_RANGES, NUMERIC_LIMITS, type BudgetOptions } from '../../src/engine/limits.js';
import { contradictions, minResultBytes, resolveLimits, scaledLimits } from '../../src/engine/options.js';
import { maxReserveBytes } from '../../src/engine/report.js';

function thrown(options: unknown): BudgetError {
  try {
    resolveLimits(options as BudgetOptions);
  } catch (e) {
    expect(e).toBeInstanceOf(BudgetError);
    return e as BudgetError;
  }
  throw new Error(`accepted ${JSON.stringify(options)}`);
}

/** Options that make a limit's own range the only constraint (maxResultBytes lifted above any floor). */
function alone(name: string, value: unknown): Record<string, unknown> {
  return name === 'maxResultBytes' ? { [name]: value, maxOmittedPaths: 0, notice: false } : { [name]: value, maxResultBytes: 1 << 20 };
}

describe('options', () => {
  it('options: the defaults are the documented numbers', () => {
    expect(DEFAULT_LIMITS).toEqual({
      maxResultBytes: 65536,
      maxTextBytes: 49152,
      maxBlockBytes: 32768,
      maxTokens: 1024 ** 3,
      maxItems: 200,
      maxKeys: 200,
      maxStringBytes: 8192,
      maxDepth: 32,
      maxOmittedPaths: 16,
      notice: true,
      protocolVersion: undefined,
    });
    const r = resolveLimits();
    for (const [k, v] of Object.entries(DEFAULT_LIMITS)) expect(r[k as keyof typeof r]).toBe(v);
    expect(Object.isFrozen(r)).toBe(true);
  });

  it('options: a resolved object is returned as is', () => {
    const r = resolveLimits({ maxItems: 5 });
    expect(resolveLimits(r)).toBe(r);
    expect(r.maxItems).toBe(5);
  });

  it('options: undefined options are ignored', () => {
    expect(resolveLimits({ maxItems: undefined }).maxItems).toBe(200);
  });

  it('options: every numeric limit accepts its range boundaries', () => {
    for (const name of NUMERIC_LIMITS) {
      const { min, max } = LIMIT_RANGES[name];
      expect(resolveLimits(alone(name, min) as BudgetOptions)[name]).toBe(min);
      expect(resolveLimits(alone(name, max) as BudgetOptions)[name]).toBe(max);
    }
  });

  it('options: every numeric limit outside its range throws LIMIT_OUT_OF_RANGE naming the option and the range', () => {
    for (const name of NUMERIC_LIMITS) {
      const { min, max } = LIMIT_RANGES[name];
      for (const bad of [min - 1, max + 1, min + 0.5, Number.NaN, Infinity, '5', null]) {
        const e = thrown(alone(name, bad));
        expect(e.code).toBe('LIMIT_OUT_OF_RANGE');
        expect(e.message).toBe(`Expected \`${name}\` to be an integer from ${min} to ${max}, got ${String(bad)}`);
        expect(e.data).toMatchObject({ option: name, min, max });
      }
    }
  });

  it('options: the documented ranges', () => {
    const GiB = 1024 ** 3;
    expect(LIMIT_RANGES).toEqual({
      maxResultBytes: { min: 1024, max: GiB },
      maxTextBytes: { min: 1, max: GiB },
      maxBlockBytes: { min: 1, max: GiB },
      maxTokens: { min: 256, max: GiB },
      maxItems: { min: 1, max: 10_000_000 },
      maxKeys: { min: 1, max: 10_000_000 },
      maxStringBytes: { min: 16, max: GiB },
      maxDepth: { min: 4, max: 1000 },
      maxOmittedPaths: { min: 0, max: 1000 },
    });
  });

  it('options: maxResultBytes has a floor that holds the report, the notice and 256 bytes of content', () => {
    const floor = minResultBytes(DEFAULT_LIMITS);
    expect(floor).toBe(maxReserveBytes(DEFAULT_LIMITS) + 256);
    expect(floor).toBeGreaterThan(4096); // 16 listed pointers of up to 256 bytes
    expect(resolveLimits({ maxResultBytes: floor }).maxResultBytes).toBe(floor);
    const e = thrown({ maxResultBytes: floor - 1 });
    expect(e.code).toBe('LIMIT_OUT_OF_RANGE');
    expect(e.message.startsWith(`Expected \`maxResultBytes\` to be an integer from ${floor} to ${1024 ** 3}, got ${floor - 1}: `)).toBe(true);
    // The message says why (the reserve) and how to get a smaller minimum.
    expect(e.message).toContain(`take up to ${maxReserveBytes(DEFAULT_LIMITS)} bytes`);
    expect(e.message).toContain('`maxOmittedPaths`');
    // 4096 is accepted once fewer pointers are listed
    const small = { maxOmittedPaths: 4, maxResultBytes: 4096 };
    expect(minResultBytes({ ...DEFAULT_LIMITS, ...small })).toBeLessThanOrEqual(4096);
    expect(resolveLimits(small).maxResultBytes).toBe(4096);
    // never below the range minimum
    expect(minResultBytes({ ...DEFAULT_LIMITS, maxOmittedPaths: 0, notice: false })).toBe(1024);
  });

  it('options: text, block and string bounds scale with maxResultBytes unless set', () => {
    // The defaults are the scaled values at 64 KiB.
    expect(resolveLimits({ maxResultBytes: 64 * 1024 })).toMatchObject({ maxTextBytes: 49152, maxBlockBytes: 32768, maxStringBytes: 8192 });
    expect(scaledLimits(DEFAULT_LIMITS.maxResultBytes)).toEqual({ maxTextBytes: 49152, maxBlockBytes: 32768, maxStringBytes: 8192 });
    // The README's own example: 32 KiB halves them, so one text block cannot take the whole budget.
    const l = resolveLimits({ maxResultBytes: 32 * 1024 });
    expect(l).toMatchObject({ maxTextBytes: 24576, maxBlockBytes: 16384, maxStringBytes: 4096, maxItems: 200, maxKeys: 200 });
    // An explicit setting wins over its scaled value.
    expect(resolveLimits({ maxResultBytes: 32 * 1024, maxBlockBytes: 20_000 })).toMatchObject({ maxBlockBytes: 20_000, maxTextBytes: 24576 });
    // Scaled values stay within their ranges (maxStringBytes is at least 16).
    expect(scaledLimits(1024).maxStringBytes).toBe(128);
    expect(resolveLimits({ maxResultBytes: 1024 ** 3 })).toMatchObject({ maxTextBytes: 805306368, maxBlockBytes: 536870912 });
  });

  it('options: contradictions lists bounds that could never be reached', () => {
    expect(contradictions({ maxResultBytes: 32768, maxBlockBytes: 1 << 20 })).toEqual([
      '`maxBlockBytes` (1048576) is larger than `maxResultBytes` (32768) and could never be reached: set it to at most 32768, or leave it out to scale with `maxResultBytes`',
    ]);
    expect(contradictions({ maxTextBytes: 100, maxBlockBytes: 200 })).toHaveLength(1);
    expect(contradictions({ maxResultBytes: 32768, maxTextBytes: 20_000, maxBlockBytes: 10_000 })).toEqual([]);
    // Only explicit settings are compared: the scaled ones are coherent by construction.
    expect(contradictions({ maxBlockBytes: 1 << 20 })).toEqual([]);
  });

  it('options: unknown options are rejected by name', () => {
    const e = thrown({ maxBytes: 10 });
    expect(e.code).toBe('LIMIT_OUT_OF_RANGE');
    expect(e.message).toBe('Unknown budget option `maxBytes`');
  });

  it('options: notice must be a boolean', () => {
    const e = thrown({ notice: 'yes' });
    expect(e.code).toBe('LIMIT_OUT_OF_RANGE');
    expect(e.message).toContain('`notice`');
  });

  it('options: protocolVersion must be a date like 2025-06-18', () => {
    for (const bad of ['2025-6-18', 'latest', '', 20250618]) {
      const e = thrown({ protocolVersion: bad });
      expect(e.code).toBe('LIMIT_OUT_OF_RANGE');
      expect(e.message).toContain('`protocolVersion`');
    }
    expect(resolveLimits({ protocolVersion: '2025-06-18' }).protocolVersion).toBe('2025-06-18');
  });

  it('options: the protocol version decides which top-level fields are kept', () => {
    const fields = (v: string | undefined): string[] => [...resolveLimits({ protocolVersion: v }).allowedFields].sort();
    const base = ['_meta', 'content', 'isError', 'structuredContent'];
    expect(fields('2025-06-18')).toEqual(base);
    expect(fields('2025-11-24')).toEqual(base);
    expect(fields('2025-11-25')).toEqual([...base, 'task'].sort());
    expect(fields('2026-07-27')).toEqual([...base, 'task'].sort());
    expect(fields('2026-07-28')).toEqual([...base, 'resultType', 'task'].sort());
    expect(fields(undefined)).toEqual([...base, 'resultType', 'task'].sort());
  });

  it('options: the reserve is the largest report and notice for these limits', () => {
    const r = resolveLimits({ maxOmittedPaths: 3, notice: false, maxResultBytes: 2048 });
    expect(r.reserveBytes).toBe(maxReserveBytes({ maxOmittedPaths: 3, notice: false }));
  });
});
