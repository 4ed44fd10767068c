/**
 * Property suite: random CallToolResults under random valid limits. Every property is time-boxed.
 *
 * Some generators are narrowed to stay clear of bugs that have their own `it.fails` reproduction
 * (in budgeter.test.ts and fits.test.ts); each narrowing names the test it defers to.
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { boundJson, boundResult } from '../../src/engine/bound.js';
import { resolveLimits, type ResolvedLimits } from '../../src/engine/options.js';
import { BUDGET_KINDS, noticeText, type BudgetReport } from '../../src/engine/report.js';
import { callToolResult, jsonValue, limitsArb } from '../helpers/arbitraries.js';
import {
  NOTICE_KEY,
  REPORT_KEY,
  boundViolations,
  documentOrder,
  escapedBytes,
  fitsSpec,
  hasDuplicateKeys,
  isMirrorRewrite,
  isNoticeBlock,
  isObject,
  pointerSegments,
  reportViolations,
  resolvePointer,
  utf8,
} from '../helpers/spec.js';
import { timeBox } from '../helpers/time-box.js';

/** Time-boxed runs; `npm run test:long` scales them up (test/helpers/time-box.ts). */
const RUN = timeBox(300, 2000);

/**
 * `maxStringBytes` below 34 (the length of the report and notice keys) breaks idempotence and
 * below 17 drops `structuredContent` itself: see "budgeter: keeps structuredContent under the
 * smallest maxStringBytes" and "budgeter: idempotent when maxStringBytes is below the report key length".
 */
const SAFE_STRING_BYTES = 34;

const anyLimits = fc.oneof(limitsArb(), limitsArb({ tight: true }));
const safeLimits = fc.oneof(limitsArb({ minStringBytes: SAFE_STRING_BYTES }), limitsArb({ minStringBytes: SAFE_STRING_BYTES, tight: true }));

function run(input: unknown, options: object): { out: ReturnType<typeof boundJson>; limits: ResolvedLimits; parsed: Record<string, unknown> } {
  const limits = resolveLimits(options);
  const out = boundJson(input, limits);
  const parsed = JSON.parse(out.json) as Record<string, unknown>;
  return { out, limits, parsed };
}

function reportIn(parsed: Record<string, unknown>): unknown {
  return isObject(parsed._meta) ? parsed._meta[REPORT_KEY] : undefined;
}

describe('bound (property)', () => {
  it('bound: output is canonical JSON within maxResultBytes and every other bound', () => {
    fc.assert(
      fc.property(callToolResult(), safeLimits, (input, options) => {
        const { out, limits, parsed } = run(input, options);
        // A string _meta passes the fast path: see "fits: a string _meta is not a fit".
        fc.pre(!(out.unchanged && typeof input._meta === 'string'));
        expect(utf8(out.json)).toBeLessThanOrEqual(limits.maxResultBytes);
        expect(hasDuplicateKeys(out.json)).toBe(false);
        expect(boundViolations(parsed, limits)).toEqual([]);
      }),
      RUN,
    );
  });

  it('bound: within maxResultBytes and valid JSON for any valid limits', () => {
    fc.assert(
      fc.property(callToolResult(), anyLimits, (input, options) => {
        const { out, limits } = run(input, options);
        expect(utf8(out.json)).toBeLessThanOrEqual(limits.maxResultBytes);
        expect(() => JSON.parse(out.json) as unknown).not.toThrow();
      }),
      RUN,
    );
  });

  it('bound: deterministic across calls and across fresh limits objects', () => {
    fc.assert(
      fc.property(callToolResult(), anyLimits, (input, options) => {
        const a = boundJson(input, options);
        const b = boundJson(input, resolveLimits({ ...options }));
        expect(b.json).toBe(a.json);
        expect(b.report).toEqual(a.report);
        expect(b.unchanged).toBe(a.unchanged);
      }),
      RUN,
    );
  });

  it('bound: a result within every bound comes back unchanged, byte-identical to JSON.stringify', () => {
    // Large limits so that a good share of inputs fit.
    const roomy = limitsArb({ minStringBytes: SAFE_STRING_BYTES, bigResult: true }).map((l) => ({
      ...l,
      maxTextBytes: 100_000,
      maxBlockBytes: 100_000,
      maxItems: 40,
      maxKeys: 40,
      maxDepth: 12,
      maxResultBytes: 1 << 20,
    }));
    fc.assert(
      fc.property(fc.oneof(callToolResult(), callToolResult({ unknownFields: false })), roomy, (input, options) => {
        // A string _meta takes the fast path although it is no object: see "fits: a string _meta is not a fit".
        fc.pre(typeof input._meta !== 'string');
        const limits = resolveLimits(options);
        const out = boundJson(input, limits);
        if (fitsSpec(input, limits)) {
          expect(out.unchanged).toBe(true);
          expect(out.truncated).toBe(false);
          expect(out.report).toBeUndefined();
          expect(out.json).toBe(JSON.stringify(input));
        }
        if (out.unchanged) {
          expect(out.json).toBe(JSON.stringify(input));
          expect(fitsSpec(input, limits)).toBe(true);
        }
      }),
      RUN,
    );
  });

  it('bound: the report is well formed and every omitted path resolves in the input, in document order', () => {
    fc.assert(
      fc.property(callToolResult(), anyLimits, (input, options) => {
        const { out, limits, parsed } = run(input, options);
        expect(out.truncated).toBe(out.report !== undefined);
        if (out.report === undefined) {
          expect(reportIn(parsed)).toBeUndefined();
          return;
        }
        expect(reportIn(parsed)).toEqual(out.report);
        expect(reportViolations(out.report, limits)).toEqual([]);
        const order = documentOrder(input);
        let last = -1;
        for (const p of out.report.omitted_paths) {
          expect(resolvePointer(input, p).found, `path ${p} resolves in the input`).toBe(true);
          const at = order.get(p)!;
          expect(at, `path ${p} comes after the previous one`).toBeGreaterThan(last);
          last = at;
        }
      }),
      RUN,
    );
  });

  it('bound: budget_kind names the bound that cut the first listed path', () => {
    fc.assert(
      fc.property(callToolResult(), safeLimits, (input, options) => {
        const { out, limits } = run(input, options);
        const r = out.report;
        if (r === undefined || r.omitted_paths.length === 0) return;
        expect(BUDGET_KINDS).toContain(r.budget_kind);
        expect(kindExplains(r, input, limits)).toBe(true);
      }),
      RUN,
    );
  });

  it('bound: the notice block is appended exactly when something was cut, notice is on and content is an array', () => {
    fc.assert(
      fc.property(callToolResult(), anyLimits, (input, options) => {
        const { out, limits, parsed } = run(input, options);
        const content = parsed.content;
        const notices = Array.isArray(content) ? content.filter(isNoticeBlock) : [];
        if (out.report !== undefined && limits.notice && Array.isArray(content)) {
          expect(notices).toHaveLength(1);
          const last = content[content.length - 1] as Record<string, unknown>;
          expect(isNoticeBlock(last)).toBe(true);
          expect(last).toEqual({ type: 'text', _meta: { [NOTICE_KEY]: true }, text: noticeText(out.report) });
        } else {
          expect(notices).toHaveLength(0);
        }
      }),
      RUN,
    );
  });

  it('bound: idempotent, whether or not the result size bound binds', () => {
    fc.assert(
      fc.property(callToolResult(), fc.oneof(safeLimits, limitsArb({ minStringBytes: SAFE_STRING_BYTES, bigResult: true })), (input, options) => {
        const limits = resolveLimits(options);
        const once = boundJson(input, limits);
        const twice = boundJson(JSON.parse(once.json), limits);
        expect(twice.json).toBe(once.json);
        expect(twice.report).toEqual(once.report);
      }),
      RUN,
    );
  });

  it('bound: a cut text block that mirrors structuredContent is rebuilt from the bounded structure', () => {
    // Spec §1.3: the JSON of the bounded structure, or the summary, or empty; never cut JSON.
    fc.assert(
      fc.property(jsonValue.filter(isObject), safeLimits, (structure, options) => {
        const text = JSON.stringify(structure);
        const input = { content: [{ type: 'text', text }], structuredContent: structure };
        const { out, parsed, limits } = run(input, options);
        const content = parsed.content as Record<string, unknown>[] | undefined;
        expect(boundViolations(parsed, limits)).toEqual([]);
        if (!Array.isArray(content) || content.length === 0 || isNoticeBlock(content[0])) return;
        if (!('structuredContent' in parsed)) return;
        const block = content[0]!;
        if (block.text !== text) expect(isMirrorRewrite(block.text as string, parsed.structuredContent)).toBe(true);
        expect(out.json.length).toBeGreaterThan(0);
      }),
      RUN,
    );
  });

  it('bound: random results with a mirror block never keep it as cut JSON', () => {
    fc.assert(
      fc.property(callToolResult({ contentFirst: true }), safeLimits, (input, options) => {
        const sc = input.structuredContent;
        fc.pre(sc !== undefined && isObject(sc) && Array.isArray(input.content));
        const json = JSON.stringify(sc);
        const blocks = input.content as unknown[];
        // The mirror is the one text block that starts with `{` (any other cut one may be a prefix too).
        fc.pre(blocks.some((b) => isObject(b) && b.text === json) && blocks.filter((b) => isObject(b) && typeof b.text === 'string' && b.text.startsWith('{')).length === 1);
        const { parsed, limits } = run(input, options);
        expect(boundViolations(parsed, limits)).toEqual([]);
        if (!('structuredContent' in parsed) || !Array.isArray(parsed.content)) return;
        for (const b of parsed.content) {
          if (isNoticeBlock(b) || !isObject(b) || typeof b.text !== 'string' || b.text === json) continue;
          // A prefix of the mirror's JSON is only allowed when it is the rebuilt JSON itself.
          if (b.text.length > 0 && json.startsWith(b.text)) expect(b.text).toBe(JSON.stringify(parsed.structuredContent));
        }
      }),
      { ...RUN, numRuns: RUN.numRuns * 2 },
    );
  });

  it('bound: a sink receives exactly the bytes returned without one', () => {
    fc.assert(
      fc.property(callToolResult(), anyLimits, (input, options) => {
        const plain = boundJson(input, options);
        const chunks: string[] = [];
        const sunk = boundJson(input, options, 'result', (c) => chunks.push(c));
        expect(sunk.json).toBe('');
        expect(chunks.join('')).toBe(plain.json);
        expect(sunk.report).toEqual(plain.report);
      }),
      RUN,
    );
  });

  it('bound: boundResult returns the input itself when it fits and the parsed bounded JSON otherwise', () => {
    fc.assert(
      fc.property(callToolResult(), anyLimits, (input, options) => {
        const j = boundJson(input, options);
        const r = boundResult(input, options);
        if (j.unchanged) expect(r.result).toBe(input);
        else expect(JSON.stringify(r.result)).toBe(j.json);
        expect(r.report).toEqual(j.report);
      }),
      RUN,
    );
  });

  it('bound: a JSON-RPC response keeps jsonrpc and id and bounds the result inside', () => {
    fc.assert(
      fc.property(callToolResult(), anyLimits, fc.oneof(fc.integer(), fc.constant(null), fc.string({ maxLength: 12 })), (result, options, id) => {
        const limits = resolveLimits(options);
        const envelope = { jsonrpc: '2.0', id, result };
        const auto = boundJson(envelope, limits, 'auto');
        const explicit = boundJson(envelope, limits, 'envelope');
        expect(auto.json).toBe(explicit.json);
        const parsed = JSON.parse(auto.json) as Record<string, unknown>;
        expect(Object.keys(parsed)).toEqual(['jsonrpc', 'id', 'result']);
        expect(parsed.jsonrpc).toBe('2.0');
        expect(parsed.id).toBe(id);
        expect(utf8(JSON.stringify(parsed.result))).toBeLessThanOrEqual(limits.maxResultBytes);
        expect(auto.report === undefined ? undefined : (parsed.result as Record<string, Record<string, unknown>>)._meta?.[REPORT_KEY]).toEqual(auto.report);
      }),
      RUN,
    );
  });

  it('bound: the result inside a JSON-RPC response is bounded exactly as the bare result', () => {
    // maxResultBytes out of play: string envelope members are charged to the result, see
    // "budgeter: string JSON-RPC members are not charged to the result".
    fc.assert(
      fc.property(callToolResult(), limitsArb({ minStringBytes: SAFE_STRING_BYTES, bigResult: true }), fc.oneof(fc.integer(), fc.string({ maxLength: 12 })), (result, options, id) => {
        const limits = resolveLimits(options);
        const out = boundJson({ jsonrpc: '2.0', id, result }, limits, 'auto');
        const inner = boundJson(result, limits, 'result');
        expect(JSON.stringify((JSON.parse(out.json) as { result: unknown }).result)).toBe(inner.json);
        expect(out.report).toEqual(inner.report);
      }),
      RUN,
    );
  });
});

/** Does the report's budget_kind plausibly describe the omission at its first listed path? */
function kindExplains(r: BudgetReport, input: unknown, limits: ResolvedLimits): boolean {
  const p = r.omitted_paths[0]!;
  const segs = pointerSegments(p);
  const { value } = resolvePointer(input, p);
  const parentPtr = p.slice(0, p.lastIndexOf('/'));
  const parent = resolvePointer(input, parentPtr).value;
  const last = segs[segs.length - 1] ?? '';
  switch (r.budget_kind) {
    case 'top_level_field':
      return segs.length === 1 || (segs.length === 2 && segs[0] === '_meta' && segs[1] === REPORT_KEY);
    case 'binary_block':
      return segs.length === 2 && segs[0] === 'content' && isObject(value) && ('data' in value || isObject(value.resource));
    case 'text_block_bytes':
    case 'text_total_bytes':
    case 'text_tokens':
      return segs[0] === 'content' && (segs.length === 2 || last === 'text');
    case 'array_items':
      return Array.isArray(parent) && parent.length > limits.maxItems;
    case 'object_keys':
      return isObject(parent) && Object.keys(parent).length > limits.maxKeys;
    case 'string_bytes':
      // A block whose required member (type, uri, mimeType) was over the bound goes whole.
      if (segs.length === 2 && segs[0] === 'content') return true;
      return (typeof value === 'string' && escapedBytes(value) > limits.maxStringBytes) || escapedBytes(last) > limits.maxStringBytes;
    case 'depth':
      return value !== null && typeof value === 'object' && segs.length + 1 > limits.maxDepth;
    case 'invalid_block':
      return segs.length === 2 && segs[0] === 'content';
    case 'result_bytes':
      return true;
  }
}
