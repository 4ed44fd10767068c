import fc from 'fast-check';
import { it } from 'vitest';
import { boundJson } from '../../src/engine/bound.js';
import { resolveLimits } from '../../src/engine/options.js';
import { callToolResult, limitsArb } from '../helpers/arbitraries.js';
import { fitsSpec, isObject } from '../helpers/spec.js';
it('stats', () => {
  const kinds: Record<string, number> = {};
  let n = 0, unchanged = 0, rebuilt = 0, fits = 0;
  fc.assert(fc.property(callToolResult(), limitsArb({ minStringBytes: 34, tight: true }), (input, options) => {
    const l = resolveLimits(options);
    const out = boundJson(input, l);
    n++;
    if (out.unchanged) unchanged++;
    if (fitsSpec(input, l)) fits++;
    if (out.report) kinds[out.report.budget_kind] = (kinds[out.report.budget_kind] ?? 0) + 1;
    const p = JSON.parse(out.json);
    if (Array.isArray(p.content) && 'structuredContent' in p && p.content.some((b: any) => isObject(b) && b.text === JSON.stringify(p.structuredContent)) && Array.isArray(input.content) && !input.content.some((b: any) => isObject(b) && b.text === JSON.stringify(p.structuredContent))) rebuilt++;
  }), { numRuns: 3000 });
  console.log({ n, unchanged, fits, rebuilt, kinds });
});
