/**
 * The token bound: the estimate against open tokenizers on real text of every kind, its
 * arithmetic (additive over pieces, cut at the longest prefix, never above the bytes), and the
 * bound through the budget, the fast path and the command line.
 */
import fc from 'fast-check';
import { beforeAll, describe, expect, it } from 'vitest';
import { samples } from '../../bench/tokens/corpus.js';
import { TOKENIZERS } from '../../bench/tokens/tokenizers.js';
import { boundJson, fitsWithinBudget, resolveLimits } from '../../src/engine/index.js';
import { serializeIfFits } from '../../src/engine/fits.js';
import { addTokens, estimateTokens, tokensFitEnd, tokenTally } from '../../src/engine/token-estimate.js';
import { ensureBuilt, runCli } from '../helpers/cli.js';
import { timeBox } from '../helpers/time-box.js';

/** Time-boxed runs; `npm run test:long` scales them up (test/helpers/time-box.ts). */
const fcRun = <T>(p: fc.IPropertyWithHooks<T>): void =>
  fc.assert(p, timeBox(300, 2000));

const utf8 = (s: string): number => Buffer.byteLength(s, 'utf8');
const textArb = fc.oneof(
  fc.string({ unit: 'grapheme', maxLength: 300 }),
  fc.string({ unit: 'binary', maxLength: 300 }),
  fc.stringMatching(/^[A-Za-z0-9+/ \n.,{}":]{0,300}$/),
);

describe('token estimate', () => {
  it('token estimate: at or above four open tokenizers on a piece of every document of the corpus', () => {
    // One 4 KiB piece of each document (the whole corpus, three sizes, is `npm run bench:tokens`).
    const under: string[] = [];
    const pieces = samples([4096], 1).filter((s) => s.kind !== 'adversarial');
    expect(pieces.length).toBeGreaterThan(60);
    for (const s of pieces) {
      const est = estimateTokens(s.text);
      for (const [name, count] of Object.entries(TOKENIZERS)) {
        const n = count(s.text);
        if (est < n) under.push(`${s.kind} ${s.source}: ${name} ${n} > estimate ${est}`);
      }
    }
    expect(under).toEqual([]);
  }, 120_000);

  it('token estimate: additive over pieces, never above the UTF-8 bytes', () => {
    fcRun(
      fc.property(textArb, fc.array(fc.nat(), { maxLength: 6 }), (text, cuts) => {
        const whole = tokenTally();
        addTokens(whole, text);
        // Pieces at any boundary that does not split a surrogate pair.
        const points = [...new Set(cuts.map((c) => c % (text.length + 1)))].filter((p) => !(p > 0 && p < text.length && (text.charCodeAt(p) & 0xfc00) === 0xdc00 && (text.charCodeAt(p - 1) & 0xfc00) === 0xd800)).sort((a, b) => a - b);
        const pieces = tokenTally();
        let from = 0;
        for (const p of [...points, text.length]) {
          addTokens(pieces, text, from, p);
          from = p;
        }
        expect(pieces.cost).toBe(whole.cost);
        expect(estimateTokens(text)).toBeLessThanOrEqual(utf8(text));
      }),
    );
  });

  it('token estimate: the cut is the longest prefix within the limit, and never splits a pair', () => {
    fcRun(
      fc.property(textArb, fc.nat(3000), (text, limit) => {
        const t = tokenTally();
        const end = tokensFitEnd(t, text, 0, limit);
        expect(t.cost).toBe(0); // not changed
        const kept = tokenTally();
        addTokens(kept, text, 0, end);
        expect(kept.cost).toBeLessThanOrEqual(limit);
        if (end < text.length) {
          expect((text.charCodeAt(end) & 0xfc00) === 0xdc00 && end > 0 && (text.charCodeAt(end - 1) & 0xfc00) === 0xd800).toBe(false);
          const next = (text.charCodeAt(end) & 0xfc00) === 0xd800 && (text.charCodeAt(end + 1) & 0xfc00) === 0xdc00 ? end + 2 : end + 1;
          const more = tokenTally();
          addTokens(more, text, 0, next);
          expect(more.cost).toBeGreaterThan(limit);
        }
      }),
    );
  });
});

const prose = samples([32_768], 1).find((s) => s.kind === 'english')!.text;
const cjk = samples([32_768], 1).find((s) => s.kind === 'cjk')!.text;

/** Seeded letters (an LCG): text no tokenizer has words for. */
function letters(n: number, alphabet: string, seed = 3): string {
  let s = seed;
  let out = '';
  for (let i = 0; i < n; i++) {
    s = (s * 1103515245 + 12345) & 0x7fffffff;
    out += alphabet[Math.floor((s / 0x7fffffff) * alphabet.length) % alphabet.length];
  }
  return out;
}
const largest = (t: string): number => Math.max(...Object.values(TOKENIZERS).map((f) => f(t)));
const LOWER = 'abcdefghijklmnopqrstuvwxyz';

describe('token estimate outside the corpus', () => {
  it('token estimate: long runs of random letters, capitals and punctuation, control characters, padding, long random URL parts, DNA', () => {
    const cases: Record<string, string> = {
      'random lowercase': letters(1000, LOWER),
      'random capitals': letters(1000, LOWER.toUpperCase()),
      'punctuation runs': letters(1000, '!#$%&()*+,-./:;<=>?@[]^_`{|}~'),
      'control characters': '\u0001'.repeat(1000),
      'NUL-padded records': 'record\u0000\u0000\u0000\u0000\u0000\u0000\u0000\u0000'.repeat(200),
      DNA: letters(2000, 'ACGT'),
      'combining marks': Array.from({ length: 300 }, (_, i) => `a${String.fromCharCode(0x300 + (i % 0x70))}`).join(''),
    };
    const under: string[] = [];
    for (const [kind, text] of Object.entries(cases)) {
      const est = estimateTokens(text);
      const n = largest(text);
      if (est < n) under.push(`${kind}: estimate ${est} < ${n}`);
    }
    expect(under).toEqual([]);
    // The known miss: short runs of random letters (random domain names and path parts) are read as
    // words; the estimate stays above 0.6 of the largest count (0.66 on the corpus's random URLs; the spec says so).
    for (const text of [
      Array.from({ length: 60 }, (_, i) => `https://www.${letters(12, LOWER, i + 1)}shop.com/products/${letters(20, LOWER, i + 99)}`).join('\n'),
      samples([4096], 1).find((s) => s.source.startsWith('random URLs'))!.text,
    ]) {
      expect(estimateTokens(text)).toBeGreaterThan(0.6 * largest(text));
    }
  }, 60_000);

  it('token bound: 30,000 random letters under maxTokens 5000 are cut to what a tokenizer counts within it', () => {
    const text = letters(30_000, LOWER);
    const out = boundJson({ content: [{ type: 'text', text }] }, { maxTokens: 5000 }, 'result');
    expect(out.report?.budget_kind).toBe('text_tokens');
    const kept = (JSON.parse(out.json) as { content: { text: string }[] }).content[0]!.text;
    expect(TOKENIZERS.claude!(kept)).toBeLessThanOrEqual(5000);
  }, 60_000);
});

describe('token bound', () => {
  it('token bound: the tighter of tokens and bytes cuts, and the kept text is within the tokens by every tokenizer', () => {
    for (const text of [prose, cjk]) {
      const result = { content: [{ type: 'text', text }, { type: 'text', text: 'tail' }] };
      const out = boundJson(result, { maxTokens: 1000 }, 'result');
      const kept = (JSON.parse(out.json) as { content: { text: string }[] }).content.filter((b) => !('_meta' in b)).map((b) => b.text);
      expect(out.report?.budget_kind).toBe('text_tokens');
      expect(out.report?.omitted_paths).toContain('/content/0/text');
      const est = kept.reduce((n, t) => n + estimateTokens(t), 0);
      expect(est).toBeLessThanOrEqual(1000);
      expect(est).toBeGreaterThan(900);
      for (const count of Object.values(TOKENIZERS)) expect(count(kept.join(''))).toBeLessThanOrEqual(1000);
      // Bytes tighter than the tokens: the byte bound names the cut.
      expect(boundJson(result, { maxTokens: 100_000, maxTextBytes: 2000, maxBlockBytes: 2000 }, 'result').report?.budget_kind).toMatch(/^text_/);
      expect(boundJson(result, { maxTokens: 100_000, maxTextBytes: 2000, maxBlockBytes: 2000 }, 'result').report?.budget_kind).not.toBe('text_tokens');
    }
  });

  it('token bound: the fast path says no exactly when the budget would cut', () => {
    fcRun(
      fc.property(fc.array(textArb, { minLength: 1, maxLength: 4 }), fc.integer({ min: 256, max: 600 }), (texts, maxTokens) => {
        const result = { content: texts.map((text) => ({ type: 'text', text })) };
        const limits = resolveLimits({ maxTokens });
        const within = texts.reduce((n, t) => {
          const tally = tokenTally();
          addTokens(tally, t);
          return n + tally.cost;
        }, 0) <= maxTokens * 100;
        expect(fitsWithinBudget(result, limits, 'result')).toBe(within);
        expect(serializeIfFits(result, limits, 'result') !== undefined).toBe(within);
        expect(boundJson(result, limits, 'result').report === undefined).toBe(within);
      }),
    );
  });

  it('token bound: a bounded result bounded again is unchanged', () => {
    const result = { content: [{ type: 'text', text: prose }, { type: 'text', text: cjk }] };
    const once = boundJson(result, { maxTokens: 3000 }, 'result');
    const twice = boundJson(JSON.parse(once.json), { maxTokens: 3000 }, 'result');
    expect(twice.json).toBe(once.json);
  });
});

describe('token bound on the command line', () => {
  beforeAll(() => {
    ensureBuilt();
  });

  const limitsOf = (args: string[], env: Record<string, string> = {}): { limits: Record<string, unknown>; sources: Record<string, string> } => {
    const r = runCli(['limits', ...args], { env });
    expect(r.stderr).toBe('');
    return JSON.parse(r.stdout) as { limits: Record<string, unknown>; sources: Record<string, string> };
  };

  it('limits: --max-tokens, MCP_BUDGET_MAX_TOKENS, and the host variable when ours is unset', () => {
    expect(limitsOf(['--max-tokens', '25000'])).toMatchObject({ limits: { maxTokens: 25000 }, sources: { maxTokens: '--max-tokens' } });
    expect(limitsOf([], { MAX_MCP_OUTPUT_TOKENS: '20000' })).toMatchObject({ sources: { maxTokens: 'MAX_MCP_OUTPUT_TOKENS' } });
    expect(limitsOf([], { MAX_MCP_OUTPUT_TOKENS: '20000', MCP_BUDGET_MAX_TOKENS: '9000' })).toMatchObject({ limits: { maxTokens: 9000 }, sources: { maxTokens: 'MCP_BUDGET_MAX_TOKENS' } });
    expect(limitsOf(['--max-tokens', '5000'], { MAX_MCP_OUTPUT_TOKENS: '20000' })).toMatchObject({ limits: { maxTokens: 5000 }, sources: { maxTokens: '--max-tokens' } });
    // The host's variable keeps room for the notice, and a value of it we cannot use is left aside with a warning.
    expect(limitsOf([], { MAX_MCP_OUTPUT_TOKENS: '20000' }).limits.maxTokens).toBe(20000 - 300);
    for (const junk of ['lots', '12', '-5']) {
      const r = runCli(['limits'], { env: { MAX_MCP_OUTPUT_TOKENS: junk } });
      expect(r.code).toBe(0);
      expect(r.stderr).toContain('MAX_MCP_OUTPUT_TOKENS');
      expect((JSON.parse(r.stdout) as { limits: { maxTokens: number } }).limits.maxTokens).toBe(1024 ** 3);
    }
    // A flag wins without the host's variable being read at all.
    const flagged = runCli(['limits', '--max-tokens', '5000'], { env: { MAX_MCP_OUTPUT_TOKENS: 'abc' } });
    expect(flagged.stderr).toBe('');
    expect(flagged.code).toBe(0);
    const ours = runCli(['limits', '--max-tokens', 'abc']);
    expect(ours.code).toBe(2);
    const help = runCli(['apply', '--help']);
    expect(help.stdout).toMatch(/--max-tokens N\b[^\n]*estimated tokens/);
    expect(help.stdout).toContain('MAX_MCP_OUTPUT_TOKENS');
  });

  it('apply --max-tokens: the text is cut by its tokens and the report says so', () => {
    const input = JSON.stringify({ content: [{ type: 'text', text: prose }] });
    const r = runCli(['apply', '--max-tokens', '500'], { input });
    expect(r.code).toBe(0);
    const out = JSON.parse(r.stdout) as { content: { text: string }[]; _meta: Record<string, { budget_kind: string }> };
    expect(estimateTokens(out.content[0]!.text)).toBeLessThanOrEqual(500);
    expect(Object.values(out._meta)[0]!.budget_kind).toBe('text_tokens');
  });
});
