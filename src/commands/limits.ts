/**
 * `mcp-budget limits [budget flags]`: print the effective limits as JSON, after flags, environment
 * variables, scaling with `--max-bytes` and the defaults, with where each value came from. The
 * same merge and validation every other command runs first, made visible.
 */
import type { Writable } from 'node:stream';
import { CONTINUATION_LIMIT_NAMES, CONTINUATION_TOOL, continuationReserveBytes, minResultBytes, NUMERIC_LIMITS, resolveContinuation, resolveLimits, SCALED_LIMITS, type BudgetOptions, type ContinuationSettings } from '../engine/index.js';

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
  /** The continuation: its settings, their sources, the reading tool and the bytes a cut result gives up to carry it. */
  continuation?: { settings: ContinuationSettings; sources: Record<string, LimitSource>; tool: string; reserveBytes: number };
}

/** Continuation settings as given, and which flag or variable gave each. */
export interface ContinuationInput {
  settings: Partial<ContinuationSettings>;
  sources: Readonly<Record<string, string>>;
}

/**
 * Compute the effective limits. `named` maps each option that was given to the flag or variable
 * that gave it (for the `sources` field).
 */
export function effectiveLimits(options: BudgetOptions, named: Readonly<Record<string, string>>, continuation?: ContinuationInput): EffectiveLimits {
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
  const out: EffectiveLimits = { limits, reserveBytes: resolved.reserveBytes, minResultBytes: minResultBytes(resolved), sources };
  if (continuation !== undefined) {
    const settings = { ...resolveContinuation(continuation.settings) };
    const from: Record<string, LimitSource> = { enabled: continuation.sources.enabled ?? 'default' };
    for (const name of CONTINUATION_LIMIT_NAMES) from[name] = continuation.sources[name] ?? 'default';
    out.continuation = { settings, sources: from, tool: CONTINUATION_TOOL, reserveBytes: settings.enabled ? continuationReserveBytes(resolved) : 0 };
  }
  return out;
}

/** Run `limits`: write the effective limits as indented JSON. */
export function runLimits(options: BudgetOptions, named: Readonly<Record<string, string>>, stdout: Writable, continuation?: ContinuationInput): void {
  stdout.write(JSON.stringify(effectiveLimits(options, named, continuation), null, 2) + '\n');
}
