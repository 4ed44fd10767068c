/**
 * An independent model of the result-budget contract, written from the spec (not from src), used by
 * the tests to check outputs: byte arithmetic, JSON Pointers, and a walk that checks every bound.
 */
import { CallToolResultSchema } from '@modelcontextprotocol/sdk/types.js';
import { NOTICE_KEY, REPORT_KEY } from '../../src/engine/limits.js';
import { addTokens, tokenTally } from '../../src/engine/token-estimate.js';

/** A text's token estimate in hundredths, from its own start. */
function tokenCost(text: string): number {
  const t = tokenTally();
  addTokens(t, text);
  return t.cost;
}
import type { ResolvedLimits } from '../../src/engine/options.js';
import type { BudgetReport } from '../../src/engine/report.js';

export { NOTICE_KEY, REPORT_KEY };

/** UTF-8 bytes of a string's JSON-escaped content, without the quotes (the spec's measure). */
export function escapedBytes(s: string): number {
  return Buffer.byteLength(JSON.stringify(s), 'utf8') - 2;
}

export function utf8(s: string): number {
  return Buffer.byteLength(s, 'utf8');
}

/** True when `s` holds no surrogate pair split at its end or start (a lone surrogate elsewhere is allowed). */
export function endsOnCharBoundary(original: string, keptLength: number): boolean {
  if (keptLength <= 0 || keptLength >= original.length) return true;
  const before = original.charCodeAt(keptLength - 1);
  const after = original.charCodeAt(keptLength);
  const high = before >= 0xd800 && before <= 0xdbff;
  const low = after >= 0xdc00 && after <= 0xdfff;
  return !(high && low);
}

export function isObject(v: unknown): v is Record<string, unknown> {
  return v !== null && typeof v === 'object' && !Array.isArray(v);
}

/** Split an RFC 6901 pointer into unescaped segments. */
export function pointerSegments(pointer: string): string[] {
  if (pointer === '') return [];
  if (!pointer.startsWith('/')) throw new Error(`Not a JSON Pointer: ${JSON.stringify(pointer)}`);
  return pointer
    .slice(1)
    .split('/')
    .map((s) => s.replace(/~1/g, '/').replace(/~0/g, '~'));
}

/** Build a pointer from raw segments. */
export function pointerOf(segments: readonly (string | number)[]): string {
  return segments.map((s) => '/' + String(s).replace(/~/g, '~0').replace(/\//g, '~1')).join('');
}

/** Resolve a pointer in a JSON-like value (own properties only, canonical array indexes only). */
export function resolvePointer(doc: unknown, pointer: string): { found: boolean; value: unknown } {
  let cur: unknown = doc;
  for (const seg of pointerSegments(pointer)) {
    if (Array.isArray(cur)) {
      if (!/^(0|[1-9]\d*)$/.test(seg)) return { found: false, value: undefined };
      const i = Number(seg);
      if (i >= cur.length) return { found: false, value: undefined };
      cur = cur[i];
    } else if (cur !== null && typeof cur === 'object') {
      if (!Object.hasOwn(cur, seg)) return { found: false, value: undefined };
      cur = (cur as Record<string, unknown>)[seg];
    } else {
      return { found: false, value: undefined };
    }
  }
  return { found: true, value: cur };
}

/**
 * Document order of every pointer in `doc` (pre-order, keys in `Object.keys` order). Iterative, so
 * deep values are fine. Values with `undefined` members are skipped like JSON.stringify does.
 */
export function documentOrder(doc: unknown): Map<string, number> {
  const order = new Map<string, number>();
  const stack: { value: unknown; pointer: string }[] = [{ value: doc, pointer: '' }];
  let n = 0;
  while (stack.length > 0) {
    const { value, pointer } = stack.pop()!;
    order.set(pointer, n++);
    if (Array.isArray(value)) {
      for (let i = value.length - 1; i >= 0; i--) stack.push({ value: value[i], pointer: pointer + '/' + i });
    } else if (value !== null && typeof value === 'object') {
      const keys = Object.keys(value);
      for (let i = keys.length - 1; i >= 0; i--) {
        const k = keys[i]!;
        const v = (value as Record<string, unknown>)[k];
        if (v === undefined || typeof v === 'function' || typeof v === 'symbol') continue;
        stack.push({ value: v, pointer: pointer + pointerOf([k]) });
      }
    }
  }
  return order;
}

/** A JSON object key-order-preserving duplicate check: true when `json` has a duplicate key in some object. */
export function hasDuplicateKeys(json: string): boolean {
  // JSON.parse keeps the last duplicate; re-serializing then differs from a canonical input.
  // Outputs of the library are canonical (JSON.stringify escapes and number forms), so a round trip
  // must reproduce them byte for byte.
  return JSON.stringify(JSON.parse(json)) !== json;
}

/** The summary a mirror becomes when the JSON of the bounded structure does not fit (spec §1.3). */
export const MIRROR_SUMMARY =
  '[mcp-result-budget] The JSON text of this result did not fit the budget; its bounded data is in structuredContent.';

/** Spec §1.3: a rewritten mirror is the JSON of the bounded structure, the summary, or empty. */
export function isMirrorRewrite(text: string, structure: unknown): boolean {
  return text === JSON.stringify(structure) || text === MIRROR_SUMMARY || text === '';
}

export function isNoticeBlock(block: unknown): boolean {
  return isObject(block) && isObject(block._meta) && block._meta[NOTICE_KEY] === true;
}

/** Text bytes of `content[]` (block `text` and resource `text`), without the trailing notice block. */
export function textStats(output: unknown): { total: number; empty: number } {
  let total = 0;
  let empty = 0;
  if (!isObject(output) || !Array.isArray(output.content)) return { total, empty };
  for (const block of output.content) {
    if (!isObject(block) || isNoticeBlock(block)) continue;
    for (const holder of [block, block.resource]) {
      if (isObject(holder) && typeof holder.text === 'string') {
        total += escapedBytes(holder.text);
        if (holder.text === '') empty++;
      }
    }
  }
  return { total, empty };
}

type Role = 'result' | 'error' | 'content' | 'block' | 'resource' | 'meta' | 'errdata' | 'blockmeta' | 'generic';

/**
 * Check every bound of the spec on a bounded output (parsed). The report and the trailing notice
 * block are excluded from text and key counts. Returns a list of violations (empty when fine).
 */
export function boundViolations(output: unknown, limits: ResolvedLimits, root: 'result' | 'error' = 'result'): string[] {
  const bad: string[] = [];
  if (!isObject(output)) return ['output root is not an object'];
  if (root === 'result') {
    for (const k of Object.keys(output)) {
      if (!limits.allowedFields.has(k)) bad.push(`top-level field ${k} is not allowed`);
    }
    if ('_meta' in output && !isObject(output._meta)) bad.push('_meta is not an object');
  }
  let textTotal = 0;
  let textTokens = 0;
  const content = root === 'result' ? output.content : undefined;
  const noticeAt = Array.isArray(content) && content.length > 0 && isNoticeBlock(content[content.length - 1]) ? content.length - 1 : -1;
  const stack: { value: unknown; role: Role; depth: number; path: string }[] = [{ value: output, role: root, depth: 1, path: '' }];
  while (stack.length > 0) {
    const { value, role, depth, path } = stack.pop()!;
    if (depth > limits.maxDepth) bad.push(`${path || '/'}: container at depth ${depth} > maxDepth ${limits.maxDepth}`);
    if (Array.isArray(value)) {
      if (role !== 'content' && value.length > limits.maxItems) bad.push(`${path}: ${value.length} items > maxItems`);
      value.forEach((item, i) => {
        if (role === 'content' && i === noticeAt) return;
        const p = path + '/' + i;
        if (typeof item === 'string') {
          if (escapedBytes(item) > limits.maxStringBytes) bad.push(`${p}: string of ${escapedBytes(item)} bytes > maxStringBytes`);
        } else if (item !== null && typeof item === 'object') {
          stack.push({ value: item, role: role === 'content' && !Array.isArray(item) ? 'block' : 'generic', depth: depth + 1, path: p });
        }
      });
      continue;
    }
    const obj = value as Record<string, unknown>;
    let keys = Object.keys(obj);
    if ((role === 'meta' || role === 'errdata') && depth === 2) keys = keys.filter((k) => k !== REPORT_KEY);
    const counted = role === 'generic' || role === 'meta' || role === 'errdata' || role === 'blockmeta';
    if (counted && keys.length > limits.maxKeys) bad.push(`${path}: ${keys.length} keys > maxKeys`);
    for (const k of keys) {
      const v = obj[k];
      const p = path + pointerOf([k]);
      // The result's own members are named by the protocol: exempt from the string bound (spec §1.4).
      if (role !== 'result' && escapedBytes(k) > limits.maxStringBytes) bad.push(`${p}: key of ${escapedBytes(k)} bytes > maxStringBytes`);
      if (typeof v === 'string') {
        if ((role === 'block' || role === 'resource') && k === 'text') {
          const n = escapedBytes(v);
          if (n > limits.maxBlockBytes) bad.push(`${p}: text of ${n} bytes > maxBlockBytes`);
          textTotal += n;
          textTokens += tokenCost(v);
        } else if ((role === 'block' && k === 'data') || (role === 'resource' && k === 'blob')) {
          // binary: never cut, never bounded by maxStringBytes
        } else if (escapedBytes(v) > limits.maxStringBytes) {
          bad.push(`${p}: string of ${escapedBytes(v)} bytes > maxStringBytes`);
        }
      } else if (v !== null && typeof v === 'object') {
        let child: Role = 'generic';
        const arr = Array.isArray(v);
        if (role === 'result' && k === 'content' && arr) child = 'content';
        else if (role === 'result' && k === '_meta') child = 'meta';
        else if (role === 'error' && k === 'data' && !arr) child = 'errdata';
        else if (role === 'block' && k === 'resource' && !arr) child = 'resource';
        else if (role === 'block' && k === '_meta' && !arr) child = 'blockmeta';
        stack.push({ value: v, role: child, depth: depth + 1, path: p });
      }
    }
  }
  if (textTotal > limits.maxTextBytes) bad.push(`total text ${textTotal} bytes > maxTextBytes ${limits.maxTextBytes}`);
  if (textTokens > limits.maxTokens * 100) bad.push(`total text ${textTokens / 100} estimated tokens > maxTokens ${limits.maxTokens}`);
  return bad;
}

/**
 * The spec's "fits" predicate: a result with only standard fields (for this protocol version),
 * within every bound and within maxResultBytes, that carries no report or notice of an earlier pass.
 */
export function fitsSpec(input: unknown, limits: ResolvedLimits): boolean {
  if (!isObject(input)) return false;
  const json = JSON.stringify(input);
  if (utf8(json) > limits.maxResultBytes) return false;
  const parsed = JSON.parse(json) as unknown;
  if (!isObject(parsed)) return false;
  if ('_meta' in parsed && !isObject(parsed._meta)) return false;
  if (isObject(parsed._meta) && Object.hasOwn(parsed._meta, REPORT_KEY)) return false;
  if (Array.isArray(parsed.content) && parsed.content.some(isNoticeBlock)) return false;
  // A result the SDK client would reject is never passed on as it is (spec §1.2).
  if (!CallToolResultSchema.safeParse(parsed).success) return false;
  return boundViolations(parsed, limits, 'result').length === 0;
}

/** Assert the report's shape and invariants; returns violations. */
export function reportViolations(report: BudgetReport, limits: ResolvedLimits): string[] {
  const bad: string[] = [];
  const keys = Object.keys(report);
  const expected = ['truncated', 'budget_kind', 'omitted_count', 'omitted_paths', 'omitted_paths_capped'];
  if (keys.join() !== expected.join()) bad.push(`report keys ${keys.join()}`);
  if (report.truncated !== true) bad.push('truncated is not true');
  if (!Number.isSafeInteger(report.omitted_count) || report.omitted_count < 1) bad.push('omitted_count < 1');
  if (report.omitted_paths.length > limits.maxOmittedPaths) bad.push('more paths than maxOmittedPaths');
  if (report.omitted_paths.length > report.omitted_count) bad.push('more paths than omitted_count');
  if (report.omitted_paths_capped !== report.omitted_paths.length < report.omitted_count) {
    bad.push(`omitted_paths_capped=${report.omitted_paths_capped} but ${report.omitted_paths.length} of ${report.omitted_count} listed`);
  }
  for (const p of report.omitted_paths) {
    if (p !== '' && !p.startsWith('/')) bad.push(`not a pointer: ${p}`);
    if (utf8(JSON.stringify(p)) > 256) bad.push(`pointer longer than 256 bytes: ${p}`);
  }
  return bad;
}
