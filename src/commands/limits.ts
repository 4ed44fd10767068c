/**
 * `mcp-budget limits [budget flags]`: print the effective limits as JSON, after flags, environment
 * variables, scaling with `--max-bytes` and the defaults, with where each value came from. The
 * same merge and validation every other command runs first, made visible.
 */
import type { Writable } from 'node:stream';
import { minResultBytes, NUMERIC_LIMITS, resolveLimits, SCALED_LIMITS, type BudgetOptions } from '../engine/index.js';

/** Where a limit's value came from: a flag or environment variable (by name), `scaled` or `default`. */
export type LimitSource = string;

/** The effective limits and their sources. */
export interface EffectiveLimits {
  limits: Record<string, number | boolean | string | null>;
  /** Bytes held back for the report and the notice. */
  reserveBytes: number;
  /** The smallest `--max-bytes` these other limits accept. */
  minResultBytes: number;
  sources: Record<string, LimitSource>;
}

/**
 * Compute the effective limits. `named` maps each option that was given to the flag or variable
 * that gave it (for the `sources` field).
 */
export function effectiveLimits(options: BudgetOptions, named: Readonly<Record<string, string>>): EffectiveLimits {
  const resolved = resolveLimits(options);
  const limits: EffectiveLimits['limits'] = {};
  const sources: Record<string, LimitSource> = {};
  for (const name of NUMERIC_LIMITS) {
    limits[name] = resolved[name];
    sources[name] = named[name] ?? (options[name] !== undefined ? 'option' : name in SCALED_LIMITS ? 'scaled' : 'default');
  }
  limits.notice = resolved.notice;
  sources.notice = named.notice ?? 'default';
  limits.protocolVersion = resolved.protocolVersion ?? null;
  sources.protocolVersion = named.protocolVersion ?? 'default';
  return { limits, reserveBytes: resolved.reserveBytes, minResultBytes: minResultBytes(resolved), sources };
}

/** Run `limits`: write the effective limits as indented JSON. */
export function runLimits(options: BudgetOptions, named: Readonly<Record<string, string>>, stdout: Writable): void {
  stdout.write(JSON.stringify(effectiveLimits(options, named), null, 2) + '\n');
}
