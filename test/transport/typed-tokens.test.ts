/**
 * A typed result under the token bound: when no valid shrink fits, the message that replaces it is
 * text the model reads too, and stays within the smallest token bound (256).
 */
import { describe, expect, it } from 'vitest';
import { boundJson, resolveLimits } from '../../src/engine/index.js';
import { estimateTokens } from '../../src/engine/token-estimate.js';
import { ToolCatalog, enforceOutputSchema } from '../../src/transport/core/typed-results.js';

describe('typed results under the token bound', () => {
  it('a withheld typed result (read-only and mutation) says so within the smallest token bound', () => {
    // The message names the part that could not fit: a key of costly characters, as long as the named pointer may be.
    for (const [readOnly, key] of [[true, 'items'], [false, 'items'], [true, '項目'.repeat(22)], [false, '\u0007'.repeat(45)]] as const) {
      const cat = new ToolCatalog();
      cat.learn({
        tools: [{
          name: 'list_items', annotations: { readOnlyHint: readOnly },
          inputSchema: { type: 'object', properties: { limit: {}, cursor: {} } },
          outputSchema: { type: 'object', required: [key], properties: { [key]: { type: 'array', minItems: 150, items: { type: 'string' } } } },
        }],
      });
      const original = { content: [{ type: 'text', text: 'ok' }], structuredContent: { [key]: Array.from({ length: 150 }, (_, i) => `item ${i} ${'x'.repeat(500)}`) } };
      const limits = resolveLimits({ maxTokens: 256 });
      const b = boundJson(original, limits, 'result');
      expect(b.report).toBeDefined();
      const out = enforceOutputSchema('list_items', cat.get('list_items')!, original, JSON.parse(b.json), b.report!, limits.maxResultBytes, limits);
      expect(out.isError).toBe(true);
      const tokens = (out.content as { text: string }[]).reduce((n, c) => n + estimateTokens(c.text), 0);
      expect(tokens).toBeLessThanOrEqual(256);
      expect((out._meta as Record<string, { blocked_by: { needs?: { path: string } } }>)['io.github.mcp-result-budget/budget']!.blocked_by.needs?.path).toBe(`/structuredContent/${key}`);
    }
  });
});
