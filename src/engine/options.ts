/** Merge budget options over the defaults and validate them once (the floor needs the report size). */
import { BudgetError } from './errors.js';
import {
  CONTINUATION_LIMIT_NAMES,
  CONTINUATION_LIMITS,
  DEFAULT_CONTINUATION,
  DEFAULT_LIMITS,
  LIMIT_RANGES,
  NUMERIC_LIMITS,
  SCALED_LIMITS,
  STANDARD_RESULT_FIELDS,
  VERSIONED_RESULT_FIELDS,
  type BudgetLimits,
  type BudgetOptions,
  type ContinuationSettings,
  type NumericLimit,
} from './limits.js';
import { maxReserveBytes } from './report.js';
import { activeMeasures, type ActiveMeasure } from './text-measure.js';

/** Limits after merging and validation; read-only from here on. */
export type ResolvedLimits = Readonly<BudgetLimits> & {
  /** Top-level result fields kept under the negotiated protocol version. */
  readonly allowedFields: ReadonlySet<string>;
  /** Bytes set aside for the report and the notice before any content is written. */
  readonly reserveBytes: number;
  /** The text measures whose bounds can cut (text-measure.ts), in the order they are tried; empty when none can. */
  readonly textMeasures: readonly ActiveMeasure[];
};

/** Content room that must remain once the report and notice are reserved. */
const MIN_CONTENT_BYTES = 256;

const RESOLVED = new WeakSet<object>();
let defaultResolved: ResolvedLimits | undefined;

function isEmpty(options: object): boolean {
  for (const v of Object.values(options)) if (v !== undefined) return false;
  return true;
}

/** Smallest `maxResultBytes` that holds the report, the notice and a little content. */
export function minResultBytes(limits: BudgetLimits): number {
  return Math.max(LIMIT_RANGES.maxResultBytes.min, maxReserveBytes(limits) + MIN_CONTENT_BYTES);
}

/**
 * Merge options over the defaults and validate once. Throws `LIMIT_OUT_OF_RANGE` naming the
 * option and its accepted range. Passing an already resolved object returns it unchanged.
 */
export function resolveLimits(options: BudgetOptions | ResolvedLimits = {}): ResolvedLimits {
  if (RESOLVED.has(options)) return options as ResolvedLimits;
  // Perf: the defaults are resolved once (building the largest report costs ~25 µs).
  if (isEmpty(options)) return (defaultResolved ??= resolveLimits({ notice: DEFAULT_LIMITS.notice }));
  const merged = mergeOver(DEFAULT_LIMITS, options, 'budget option');
  // The result bound first: the limits that scale with it are derived from it when not set.
  const { min: rMin, max: rMax } = LIMIT_RANGES.maxResultBytes;
  checkInteger('maxResultBytes', merged.maxResultBytes, rMin, rMax);
  for (const [name, value] of Object.entries(scaledLimits(merged.maxResultBytes))) {
    if ((options as Record<string, unknown>)[name] === undefined) (merged as unknown as Record<string, number>)[name] = value;
  }
  for (const name of NUMERIC_LIMITS) {
    const { min, max } = LIMIT_RANGES[name];
    checkInteger(name, merged[name], min, max);
  }
  if (typeof merged.notice !== 'boolean') {
    throw new BudgetError('LIMIT_OUT_OF_RANGE', `Expected \`notice\` to be a boolean, got ${String(merged.notice)}`, {
      option: 'notice',
      value: merged.notice,
    });
  }
  const version = merged.protocolVersion;
  if (version !== undefined && (typeof version !== 'string' || !/^\d{4}-\d{2}-\d{2}$/.test(version))) {
    throw new BudgetError(
      'LIMIT_OUT_OF_RANGE',
      `Expected \`protocolVersion\` to be a date like 2025-06-18, got ${JSON.stringify(version)}`,
      { option: 'protocolVersion', value: version },
    );
  }
  const floor = minResultBytes(merged);
  if (merged.maxResultBytes < floor) {
    throw new BudgetError(
      'LIMIT_OUT_OF_RANGE',
      `Expected \`maxResultBytes\` to be an integer from ${floor} to ${rMax}, got ${merged.maxResultBytes}: ` +
        `the report and notice take up to ${maxReserveBytes(merged)} bytes and at least ${MIN_CONTENT_BYTES} must be left for content ` +
        `(lower \`maxOmittedPaths\`, or turn the notice off, for a smaller minimum)`,
      { option: 'maxResultBytes', min: floor, max: rMax, value: merged.maxResultBytes },
    );
  }
  const resolved: ResolvedLimits = Object.freeze({
    ...merged,
    allowedFields: allowedFieldsFor(version),
    reserveBytes: maxReserveBytes(merged),
    textMeasures: activeMeasures(merged),
  });
  RESOLVED.add(resolved);
  return resolved;
}

/** The limits that scale with `maxResultBytes`, at this `maxResultBytes` (within their ranges). */
export function scaledLimits(maxResultBytes: number): Partial<Record<NumericLimit, number>> {
  const out: Partial<Record<NumericLimit, number>> = {};
  for (const [name, share] of Object.entries(SCALED_LIMITS) as [NumericLimit, number][]) {
    const { min, max } = LIMIT_RANGES[name];
    out[name] = Math.min(max, Math.max(min, Math.floor(maxResultBytes * share)));
  }
  return out;
}

/**
 * Settings that contradict each other when both were given: a text, block or string bound larger
 * than the result bound, or a block bound larger than the text total. Each could never be
 * reached; the engine would quietly apply the smaller one, so a command line refuses them.
 * Returns the messages (empty when coherent); names are the options' names.
 */
export function contradictions(options: BudgetOptions): string[] {
  const out: string[] = [];
  const r = options.maxResultBytes;
  for (const name of Object.keys(SCALED_LIMITS) as NumericLimit[]) {
    const v = options[name];
    if (r !== undefined && v !== undefined && v > r) {
      out.push(`\`${name}\` (${v}) is larger than \`maxResultBytes\` (${r}) and could never be reached: set it to at most ${r}, or leave it out to scale with \`maxResultBytes\``);
    }
  }
  const t = options.maxTextBytes;
  const b = options.maxBlockBytes;
  if (t !== undefined && b !== undefined && b > t) {
    out.push(`\`maxBlockBytes\` (${b}) is larger than \`maxTextBytes\` (${t}) and could never be reached: set it to at most ${t}`);
  }
  return out;
}

/**
 * Merge continuation settings over their defaults and validate them once. Throws
 * `LIMIT_OUT_OF_RANGE` naming the setting and its accepted range.
 */
export function resolveContinuation(options: Partial<ContinuationSettings> = {}): Readonly<ContinuationSettings> {
  const merged = mergeOver(DEFAULT_CONTINUATION, options, 'continuation setting');
  if (typeof merged.enabled !== 'boolean') {
    throw new BudgetError('LIMIT_OUT_OF_RANGE', `Expected \`enabled\` to be a boolean, got ${String(merged.enabled)}`, { option: 'enabled', value: merged.enabled });
  }
  if (typeof merged.memory !== 'boolean') {
    throw new BudgetError('LIMIT_OUT_OF_RANGE', `Expected \`memory\` to be a boolean, got ${String(merged.memory)}`, { option: 'memory', value: merged.memory });
  }
  if (typeof merged.dir !== 'string' || merged.dir.includes('\0')) {
    throw new BudgetError('LIMIT_OUT_OF_RANGE', 'Expected `dir` to be a directory path (a string without NUL)', { option: 'dir' });
  }
  for (const name of CONTINUATION_LIMIT_NAMES) {
    const { min, max } = CONTINUATION_LIMITS[name];
    checkInteger(name, merged[name], min, max);
  }
  return Object.freeze(merged);
}

/** `options` over a copy of `defaults`, undefined values skipped; a name the defaults lack is refused naming `what` it is. */
function mergeOver<T extends object>(defaults: T, options: object, what: string): T {
  const merged = { ...defaults };
  for (const [name, value] of Object.entries(options)) {
    if (value === undefined) continue;
    if (!Object.hasOwn(defaults, name)) throw new BudgetError('LIMIT_OUT_OF_RANGE', `Unknown ${what} \`${name}\``, { option: name });
    (merged as Record<string, unknown>)[name] = value;
  }
  return merged;
}

function allowedFieldsFor(version: string | undefined): Set<string> {
  const fields = new Set(STANDARD_RESULT_FIELDS);
  for (const [field, since] of Object.entries(VERSIONED_RESULT_FIELDS)) {
    // Protocol versions are ISO dates, so string order is date order.
    if (version === undefined || version >= since) fields.add(field);
  }
  return fields;
}

function checkInteger(name: string, value: unknown, min: number, max: number): void {
  if (typeof value !== 'number' || !Number.isInteger(value) || value < min || value > max) {
    throw new BudgetError(
      'LIMIT_OUT_OF_RANGE',
      `Expected \`${name}\` to be an integer from ${min} to ${max}, got ${String(value)}`,
      { option: name, min, max, value },
    );
  }
}
