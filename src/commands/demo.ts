/**
 * `mcp-budget demo`: the quick start's main job. Builds a result the way a tool that forgot to
 * page would (a 20,000-entry listing as text plus structured content), bounds it with the given
 * limits, and prints the bounded result and a one-line summary.
 */
import type { Writable } from 'node:stream';
import { boundJson, resolveLimits, type BudgetOptions } from '../engine/index.js';

export async function runDemo(options: BudgetOptions, out: Writable): Promise<void> {
  const limits = resolveLimits(options);
  const entries = Array.from({ length: 20_000 }, (_, i) => ({
    name: `file-${String(i).padStart(5, '0')}.txt`,
    type: 'file',
    size: (i * 7919) % 100_000,
  }));
  const structured = { entries };
  const result = {
    content: [{ type: 'text', text: JSON.stringify(structured) }],
    structuredContent: structured,
  };
  const inputBytes = Buffer.byteLength(JSON.stringify(result));
  const { json, report } = boundJson(result, limits);
  out.write(json + '\n');
  const summary = report
    ? `${report.omitted_count} values omitted or shortened, first by ${report.budget_kind}`
    : 'nothing cut';
  process.stderr.write(
    `\nmcp-budget demo: ${inputBytes} bytes in, ${Buffer.byteLength(json)} bytes out ` +
      `(max ${limits.maxResultBytes}); ${summary}.\n`,
  );
}
