/**
 * Typed results: a tool that declares an `outputSchema` must never get a partial typed success.
 * The SDK client validates `structuredContent` against the schema (even with `isError`) and
 * rejects a result without it unless `isError` is set. A bounded structure that still validates
 * is sent; one that does not is shrunk further, dropping the array items the schema rejects (an
 * item that lost a required member, a cut value), and sent when that validates. Only when no
 * schema-valid shrink exists is the result withheld: a read-only tool then answers with an
 * `isError` result that says how to ask for less and which bound made a valid shrink impossible,
 * and any other tool with a compact receipt of what was done (never advice to call again).
 */
import { AjvJsonSchemaValidator } from '@modelcontextprotocol/sdk/validation/ajv';
import { growToward, skeletonOf } from './typed-skeleton.js';
import { boundJson, boundResult, escapePointerSegment, KIND_LIMIT, LIMIT_RANGES, LIMITS, MAX_POINTER_BYTES, NOTICE_KEY, noticeText, NUMERIC_LIMITS, REPORT_KEY, type BlockingBound, type BudgetOptions, type BudgetReport, type NumericLimit, type WithheldReport } from '../../engine/index.js';

/** What is learned about one tool from a `tools/list` response. */
export interface ToolInfo {
  validate: ((value: unknown) => boolean) | undefined;
  /** JSON Pointers (into the value) of what the schema rejects; empty when valid. */
  errors?: ((value: unknown) => string[]) | undefined;
  readOnly: boolean;
  /** Input arguments that page or narrow the call (from the input schema). */
  narrowing: string[];
  /** The members the output schema requires at the top of the structure (the others may be dropped whole). */
  required: string[];
}

/** Argument names that page or narrow a call, in the order they are suggested. */
const NARROWING_ARGS = [
  'limit', 'cursor', 'offset', 'page', 'page_size', 'pageSize', 'per_page', 'max_results', 'maxResults',
  'head', 'tail', 'max_bytes', 'maxBytes', 'length', 'depth', 'max_depth', 'maxDepth',
  'query', 'q', 'pattern', 'path', 'filter', 'since', 'until',
];

/**
 * How long the policy may search for a valid shrink of one result, in milliseconds. Each step
 * bounds or validates the structure again, and a schema decides what a validation costs (ajv's
 * `uniqueItems` over objects is quadratic): past this, the search stops and the result is what it
 * found by then, or withheld. A property on the module so that tests can lift it.
 */
export const TYPED_SEARCH = { ms: 500 };

/** One result's search: whether its time is up. */
export interface Search {
  readonly late: () => boolean;
}

function startSearch(): Search {
  const until = performance.now() + TYPED_SEARCH.ms;
  return { late: () => performance.now() > until };
}

/** Optional top-level members dropped one by one (last first) before the complete fallback takes over. */
const MAX_MEMBER_DROPS = 16;

/** Receipt fields: scalars of the structure that identify what a mutation did (at most this many). */
export const MAX_RECEIPT_FIELDS = 12;
/** Longest string a receipt keeps, in characters. */
export const MAX_RECEIPT_STRING = 200;
/** A key longer than this (in characters) ends the receipt. */
export const MAX_RECEIPT_KEY = 64;

export class ToolCatalog {
  private readonly tools = new Map<string, ToolInfo>();
  private readonly validator = new AjvJsonSchemaValidator();

  get size(): number {
    return this.tools.size;
  }

  get(name: string): ToolInfo | undefined {
    return this.tools.get(name);
  }

  /** Learn from one `tools/list` result (a page; later pages add to it). */
  learn(result: unknown): void {
    const tools = (result as { tools?: unknown } | null)?.tools;
    if (!Array.isArray(tools)) return;
    for (const t of tools) {
      const name = (t as { name?: unknown })?.name;
      if (typeof name !== 'string') continue;
      const tool = t as { outputSchema?: unknown; inputSchema?: unknown; annotations?: { readOnlyHint?: unknown } };
      let validate: ToolInfo['validate'];
      let errors: ToolInfo['errors'];
      if (tool.outputSchema !== null && typeof tool.outputSchema === 'object') {
        try {
          const v = this.validator.getValidator(tool.outputSchema as never);
          validate = (value) => v(value).valid;
          errors = (value) => {
            const r = v(value);
            return r.valid ? [] : instancePaths(r.errorMessage ?? '');
          };
        } catch {
          // A schema ajv cannot compile: the client cannot validate it either; treat as untyped.
          validate = undefined;
        }
      }
      const props = (tool.inputSchema as { properties?: unknown } | undefined)?.properties;
      const names = props !== null && typeof props === 'object' ? Object.keys(props) : [];
      const required = (tool.outputSchema as { required?: unknown } | null | undefined)?.required;
      this.tools.set(name, {
        validate,
        errors,
        readOnly: tool.annotations?.readOnlyHint === true,
        narrowing: NARROWING_ARGS.filter((a) => names.includes(a)),
        required: Array.isArray(required) ? required.filter((r): r is string => typeof r === 'string') : [],
      });
    }
  }
}

/**
 * Decide what a typed tool's bounded result becomes. `bounded` is the budget's output; returns it
 * when it is still a valid typed result, or the error result that replaces it. `receiptFrom` is
 * the original structure a mutation's receipt is taken from: on the streaming path, where
 * `original` is the bounded result itself, the members captured from the line (see
 * `ReceiptCapture`), so that an id written after the cut is still in the receipt.
 */
export function enforceOutputSchema(
  toolName: string,
  tool: ToolInfo,
  original: Record<string, unknown>,
  bounded: Record<string, unknown>,
  report: BudgetReport,
  maxResultBytes: number,
  limits: BudgetOptions = { maxResultBytes },
  receiptFrom: unknown = original.structuredContent,
): Record<string, unknown> {
  if (tool.validate === undefined || bounded.isError === true) return bounded;
  if ('structuredContent' in bounded && tool.validate(bounded.structuredContent)) return bounded;
  const shrunk = 'structuredContent' in bounded ? shrinkToSchema(bounded.structuredContent, tool) : undefined;
  if (shrunk !== undefined) return withStructure(bounded, shrunk.value, shrunk.dropped);
  const search = startSearch();
  const refit = refitWithLessText(original, bounded, limits, tool, search) ?? refitWithFewerItems(original, bounded, report, limits, tool, search);
  if (refit !== undefined) return refit;
  // The complete fallback, only when those fail: the smallest valid shrink (when the original is at
  // hand), grown back; and, when even it cannot fit, what to name.
  const basis = original !== bounded && 'structuredContent' in original ? validBasis(withinCounts(original.structuredContent, limits), tool) : undefined;
  const least = basis === undefined ? undefined : skeletonOf(basis.value, tool.validate!, search.late);
  const fallback = basis === undefined || least === undefined ? undefined : refitFromSkeleton(original, basis, least, report, limits, tool, search);
  if (fallback !== undefined) return fallback;
  const blocked: BlockingBound = { ...blockingBound(original, bounded, report, limits, tool, search), ...(least === undefined ? {} : { needs: largestPart(least) }) };
  const needs = blocked.needs === undefined ? '' : `: the smallest result found that the schema accepts still holds ${blocked.needs.bytes} bytes at \`${blocked.needs.path}\``;
  // the budget's counts; an offer to read the original back is attached after this, by its store
  const { continuation: _offer, ...cut } = report;
  if (tool.readOnly) {
    const how = tool.narrowing.length > 0 ? tool.narrowing.map((a) => `\`${a}\``).join(', ') : 'its paging or filter arguments';
    return {
      content: [
        {
          type: 'text',
          text:
            `The result of \`${toolName}\` was too large for the result budget, and no shortened result within ` +
            `\`${blocked.bound}\` matches the tool's output schema${needs}, so it was withheld. Call \`${toolName}\` again ` +
            `asking for less, using ${how}.`,
        },
      ],
      isError: true,
      _meta: {
        [REPORT_KEY]: { ...cut, error: 'result_budget_exceeded', blocked_by: blocked, continuation: { narrow_with: [...tool.narrowing] } } satisfies WithheldReport,
      },
    };
  }
  const receipt = receiptOf(receiptFrom);
  const result = {
    content: [
      {
        type: 'text',
        text:
          `\`${toolName}\` ran and its changes were applied, but its result was too large for the result budget ` +
          `and a shortened result would not match the tool's output schema, so it was withheld. ` +
          `Do not call it again to see the result; the receipt in _meta identifies what was done.`,
      },
    ],
    isError: true,
    _meta: {
      [REPORT_KEY]: { ...cut, error: 'result_budget_exceeded', blocked_by: blocked, applied: true, receipt } satisfies WithheldReport,
    },
  };
  // The receipt is what may not fit the smallest budgets: drop its last fields until it does.
  const keys = Object.keys(receipt);
  while (keys.length > 0 && Buffer.byteLength(JSON.stringify(result)) > maxResultBytes) delete receipt[keys.pop()!];
  return result;
}

/**
 * Structure before text: the budget decides online, in document order, so a long plain text block
 * ahead of `structuredContent` can spend the bytes the structure needed. When the original result
 * is at hand (not the streaming path), bound it again with less room for text (halved each round)
 * until its structure survives and validates (after shrinking); the first such result is sent.
 */
function refitWithLessText(
  original: Record<string, unknown>,
  bounded: Record<string, unknown>,
  limits: BudgetOptions,
  tool: ToolInfo,
  search: Search,
): Record<string, unknown> | undefined {
  if (original === bounded || !('structuredContent' in original)) return undefined;
  const base = optionsOf(limits);
  let text = Math.min(base.maxTextBytes ?? Infinity, base.maxResultBytes ?? Infinity);
  if (!Number.isFinite(text)) return undefined;
  for (let round = 0; round < MAX_REFIT_ROUNDS && text > 1 && !search.late(); round++) {
    text = Math.max(1, Math.floor(text / 2));
    const block = Math.min(base.maxBlockBytes ?? text, text);
    const out = validRefit(original, { ...base, maxTextBytes: text, maxBlockBytes: block }, tool);
    if (out !== undefined) return out;
  }
  return undefined;
}

/** The original bounded under `options`, when its structure survives and validates (after shrinking). */
function validRefit(original: Record<string, unknown>, options: BudgetOptions, tool: ToolInfo): Record<string, unknown> | undefined {
  const out = boundResult(original, options, 'result').result as Record<string, unknown>;
  if (!('structuredContent' in out)) return undefined;
  if (tool.validate!(out.structuredContent)) return out;
  const shrunk = shrinkToSchema(out.structuredContent, tool);
  return shrunk === undefined ? undefined : withStructure(out, shrunk.value, shrunk.dropped);
}

/**
 * Items before the members after them: the budget fills an array in document order, so a required
 * member written after a long array (`{ entries: [...], total: 3000 }`) can be left without room,
 * and dropping items of the cut result cannot bring it back. When the original result is at hand,
 * bound it again with fewer items per array (the largest count whose result validates, after
 * shrinking), so whole items go from the end and the members after them stay; when even one item
 * an array is too many, optional members of the structure go whole, last first, until it fits.
 */
function refitWithFewerItems(
  original: Record<string, unknown>,
  bounded: Record<string, unknown>,
  report: BudgetReport,
  limits: BudgetOptions,
  tool: ToolInfo,
  search: Search,
): Record<string, unknown> | undefined {
  if (original === bounded || !('structuredContent' in original)) return undefined;
  const base = optionsOf(limits);
  const found = mostItemsRefit(original, base, tool, search);
  if (found !== undefined) return found;
  const sc = original.structuredContent;
  if (sc === null || typeof sc !== 'object' || Array.isArray(sc)) return undefined;
  const optional = Object.keys(sc).filter((k) => !tool.required.includes(k));
  const kept = { ...(sc as Record<string, unknown>) };
  // A few, last first: each is a whole refit, and the complete fallback drops any number at once.
  for (const k of optional.reverse().slice(0, MAX_MEMBER_DROPS)) {
    if (search.late()) return undefined;
    delete kept[k];
    const out = mostItemsRefit(withCandidate(original, { ...kept }), base, tool, search);
    // A result that now fits whole still gets a report: the members dropped before bounding.
    const reported = out === undefined ? undefined : reportRemoved(out, sc, kept, 0, report, limits);
    if (reported !== undefined) return reported;
  }
  return undefined;
}

/** The refit of {@link refitWithFewerItems} for one original: the most items per array that validate. */
function mostItemsRefit(original: Record<string, unknown>, base: BudgetOptions, tool: ToolInfo, search: Search): Record<string, unknown> | undefined {
  // With the text as it is first, then with none (a text mirror of the structure doubles it).
  const attempt = (items: number): Record<string, unknown> | undefined =>
    validRefit(original, { ...base, maxItems: items }, tool) ?? validRefit(original, { ...base, maxItems: items, maxTextBytes: 1, maxBlockBytes: 1 }, tool);
  // Valid from some count (an array's `minItems`) up to another (the bytes): double up to the
  // first valid count and on to the first invalid one above it, then bisect between the two.
  const most = base.maxItems ?? LIMITS.maxItems.default;
  let best: Record<string, unknown> | undefined;
  let good = 0;
  let bad = most + 1;
  for (let k = 1; k <= most && !search.late(); k = k * 2 > most && k < most ? most : k * 2) {
    const out = attempt(k);
    if (out !== undefined) {
      best = out;
      good = k;
    } else if (best !== undefined) {
      bad = k;
      break;
    }
  }
  if (best === undefined) return undefined;
  for (let round = 0; round < MAX_REFIT_ROUNDS && bad - good > 1 && !search.late(); round++) {
    const mid = Math.floor((good + bad) / 2);
    const out = attempt(mid);
    if (out === undefined) bad = mid;
    else {
      good = mid;
      best = out;
    }
  }
  return best;
}

/**
 * The complete fallback: the smallest schema-valid shrink of the structure (every member the
 * schema lets go dropped whole, every array at its shortest valid prefix, at any depth; see
 * `typed-skeleton.ts`), grown back in document order while it fits. When any shrink of those forms
 * fits, this one does, so a result gets here withheld only when none fits.
 */
function refitFromSkeleton(
  original: Record<string, unknown>,
  basis: { value: unknown; dropped: number },
  skeleton: unknown,
  report: BudgetReport,
  limits: BudgetOptions,
  tool: ToolInfo,
  search: Search,
): Record<string, unknown> | undefined {
  const sc = basis.value;
  const base = optionsOf(limits);
  const attempt = (structure: unknown): Record<string, unknown> | undefined => {
    const candidate = withCandidate(original, structure);
    for (const options of [base, { ...base, maxTextBytes: 1, maxBlockBytes: 1 }]) {
      const out = validRefit(candidate, options, tool);
      if (out === undefined) continue;
      const reported = reportRemoved(out, sc, structure, basis.dropped, report, limits);
      if (reported !== undefined) return reported;
    }
    return undefined;
  };
  if (attempt(skeleton) === undefined) return undefined;
  const grown = growToward(sc, skeleton, tool.validate!, (s) => attempt(s) !== undefined, search.late);
  return attempt(grown) ?? attempt(skeleton);
}

/**
 * The structure with no more items per array and members per object than the budget keeps (the
 * first ones, as it keeps them): no result it sends has more, and the search then validates a
 * structure of the budget's size, not the original's (a `uniqueItems` over 20,000 objects costs
 * ajv seconds; over 200, nothing). Below the depth the budget keeps, values are left as they are.
 */
function withinCounts(value: unknown, limits: BudgetOptions, depth = 0): unknown {
  const items = limits.maxItems ?? LIMITS.maxItems.default;
  const keys = limits.maxKeys ?? LIMITS.maxKeys.default;
  if (depth > (limits.maxDepth ?? LIMITS.maxDepth.default) || value === null || typeof value !== 'object') return value;
  if (Array.isArray(value)) return value.slice(0, items).map((v) => withinCounts(v, limits, depth + 1));
  return Object.fromEntries(Object.entries(value).slice(0, keys).map(([k, v]) => [k, withinCounts(v, limits, depth + 1)]));
}

/**
 * What the skeleton is taken from: the structure itself when it validates, else its shrink (a
 * streamed result's structure may end in a cut item), with the count that shrink dropped.
 */
function validBasis(structure: unknown, tool: ToolInfo): { value: unknown; dropped: number } | undefined {
  if (tool.validate!(structure)) return { value: structure, dropped: 0 };
  return shrinkToSchema(structure, tool);
}

/** The original result with `structure` in place of its own, and a text mirror of it following. */
function withCandidate(original: Record<string, unknown>, structure: unknown): Record<string, unknown> {
  const mirror = JSON.stringify(original.structuredContent);
  const content = Array.isArray(original.content)
    ? original.content.map((b: unknown) => {
        const block = b as Record<string, unknown> | null;
        return block?.type === 'text' && block.text === mirror ? { ...block, text: JSON.stringify(structure) } : b;
      })
    : original.content;
  return { ...original, ...(content === undefined ? {} : { content }), structuredContent: structure };
}

/**
 * A refit of a shrunk structure, reporting what the shrink removed: counted into the budget's own
 * report when it cut more, else a report (and notice) of its own, built from the original cut's
 * kind; undefined when that report does not fit.
 */
function reportRemoved(
  out: Record<string, unknown>,
  original: unknown,
  shrunk: unknown,
  before: number,
  cut: BudgetReport,
  limits: BudgetOptions,
): Record<string, unknown> | undefined {
  const removed = removedPaths(original, shrunk);
  const meta = isRecord(out._meta) ? out._meta : undefined;
  const prior = meta?.[REPORT_KEY] as BudgetReport | undefined;
  if (prior !== undefined) return countDropped(out, before + removed.length);
  const most = limits.maxOmittedPaths ?? LIMITS.maxOmittedPaths.default;
  const paths = removed.slice(0, most).filter((p) => Buffer.byteLength(JSON.stringify(p)) <= MAX_POINTER_BYTES);
  const report: BudgetReport = {
    truncated: true,
    budget_kind: cut.budget_kind,
    omitted_count: before + removed.length,
    omitted_paths: paths,
    omitted_paths_capped: paths.length < before + removed.length,
  };
  const notice = limits.notice === false ? [] : [{ type: 'text', _meta: { [NOTICE_KEY]: true }, text: noticeText(report) }];
  const result = {
    ...out,
    content: [...(Array.isArray(out.content) ? out.content : []), ...notice],
    _meta: { ...meta, [REPORT_KEY]: report },
  };
  const max = limits.maxResultBytes ?? LIMITS.maxResultBytes.default;
  return Buffer.byteLength(JSON.stringify(result)) <= max ? result : undefined;
}

/** Longest pointer a withheld result names (its message stays short). */
const MAX_NAMED_POINTER = 64;

/**
 * Where the smallest valid structure is largest: from the top, into the member or item that holds
 * at least half of its container, as long as there is one.
 */
function largestPart(structure: unknown): { path: string; bytes: number } {
  let at = structure;
  let path = '/structuredContent';
  let bytes = Buffer.byteLength(JSON.stringify(at) ?? '');
  for (;;) {
    const children: [string, unknown][] = Array.isArray(at) ? at.map((v, i) => [String(i), v]) : isRecord(at) ? Object.entries(at) : [];
    let best: [string, unknown, number] | undefined;
    for (const [k, v] of children) {
      const n = Buffer.byteLength(JSON.stringify(v) ?? '');
      if (best === undefined || n > best[2]) best = [k, v, n];
    }
    if (best === undefined || best[2] * 2 < bytes) return { path, bytes };
    const next = `${path}/${escapePointerSegment(best[0])}`;
    if (next.length > MAX_NAMED_POINTER) return { path, bytes };
    [path, at, bytes] = [next, best[1], best[2]];
  }
}

/** Pointers (into the structure) of the members and items `shrunk` lacks, in document order. */
function removedPaths(original: unknown, shrunk: unknown, at = '/structuredContent', out: string[] = []): string[] {
  if (Array.isArray(original) && Array.isArray(shrunk)) {
    original.forEach((v, i) => (i < shrunk.length ? removedPaths(v, shrunk[i], `${at}/${i}`, out) : out.push(`${at}/${i}`)));
  } else if (isRecord(original) && isRecord(shrunk)) {
    for (const [k, v] of Object.entries(original)) {
      const p = `${at}/${escapePointerSegment(k)}`;
      if (Object.hasOwn(shrunk, k)) removedPaths(v, shrunk[k], p, out);
      else out.push(p);
    }
  }
  return out;
}

const isRecord = (v: unknown): v is Record<string, unknown> => v !== null && typeof v === 'object' && !Array.isArray(v);

/** A refit result whose report also counts `n` members dropped before it was bounded. */
function countDropped(out: Record<string, unknown>, n: number): Record<string, unknown> {
  const meta = out._meta as Record<string, unknown> | undefined;
  const report = meta?.[REPORT_KEY] as BudgetReport | undefined;
  if (meta === undefined || report === undefined || n === 0) return out;
  const counted: BudgetReport = { ...report, omitted_count: report.omitted_count + n, omitted_paths_capped: true };
  // The notice is derived from the report alone: it follows the new count.
  const content = Array.isArray(out.content)
    ? out.content.map((b: unknown) => ((b as Record<string, unknown> | null)?._meta as Record<string, unknown> | undefined)?.[NOTICE_KEY] === true ? { ...(b as object), text: noticeText(counted) } : b)
    : out.content;
  return { ...out, ...(content === undefined ? {} : { content }), _meta: { ...meta, [REPORT_KEY]: counted } };
}

/** Times the text room is halved to make room for a typed structure (16 → down to 1/65536 of it). */
const MAX_REFIT_ROUNDS = 16;

/** Budget options only (a resolved limits object carries derived fields too). */
function optionsOf(limits: BudgetOptions): BudgetOptions {
  const base: BudgetOptions = { notice: limits.notice, protocolVersion: limits.protocolVersion };
  for (const n of NUMERIC_LIMITS) base[n] = limits[n];
  return base;
}

/** The bound that made a schema-valid shrink impossible, as the report names it. */

/** Bounds that can be lifted one at a time to find the one that blocks a valid shrink (declared with each limit). */
const LIFTABLE: readonly NumericLimit[] = NUMERIC_LIMITS.filter((n) => LIMITS[n].liftable);

/**
 * Which bound made a schema-valid shrink impossible: the first bound that, lifted alone, lets the
 * budget produce a structure that validates (after shrinking); else the result size itself. When
 * only the bounded result is known (the streaming path), the report's first bound is named.
 */
function blockingBound(
  original: Record<string, unknown>,
  bounded: Record<string, unknown>,
  report: BudgetReport,
  limits: BudgetOptions,
  tool: ToolInfo,
  search: Search,
): BlockingBound {
  if (original !== bounded && 'structuredContent' in original) {
    const base = optionsOf(limits);
    for (const bound of LIFTABLE) {
      if (search.late()) break;
      const out = boundJson(original, { ...base, [bound]: LIMIT_RANGES[bound].max }, 'result');
      const sc = (JSON.parse(out.json) as Record<string, unknown>).structuredContent;
      if (sc !== undefined && (tool.validate!(sc) || shrinkToSchema(sc, tool) !== undefined)) return { bound, limit: limits[bound] };
    }
    return { bound: 'maxResultBytes', limit: limits.maxResultBytes };
  }
  const bound = KIND_LIMIT[report.budget_kind];
  return { bound, limit: limits[bound] };
}

/** Rounds of shrinking before giving up (each drops every item an error points into). */
const MAX_SHRINK_ROUNDS = 32;

/**
 * A schema-valid shrink of `structure`, round by round until it validates: the array items the
 * schema's errors point into are dropped whole, and a member an error points at outside any item
 * (a cut string an `enum` or `format` rejects, say) is dropped whole, which is valid when the
 * member is optional. Undefined when an error names the structure itself or an object (a required
 * member missing): nothing can be dropped for it.
 */
export function shrinkToSchema(structure: unknown, tool: ToolInfo): { value: unknown; dropped: number } | undefined {
  if (tool.errors === undefined) return undefined;
  let value = structuredClone(structure);
  let dropped = 0;
  for (let round = 0; round < MAX_SHRINK_ROUNDS; round++) {
    const paths = tool.errors(value);
    if (paths.length === 0) return { value, dropped };
    const targets = new Map<unknown[], Set<number>>();
    const members: { parent: Record<string, unknown>; key: string }[] = [];
    for (const p of paths) {
      const item = innermostItem(value, p);
      if (item !== undefined) {
        const set = targets.get(item.array) ?? new Set<number>();
        set.add(item.index);
        targets.set(item.array, set);
        continue;
      }
      const member = memberAt(value, p);
      if (member === undefined) return undefined;
      members.push(member);
    }
    for (const { parent, key } of members) {
      if (Object.hasOwn(parent, key)) {
        delete parent[key];
        dropped++;
      }
    }
    // Inner arrays first would shift nothing outside them; indexes are dropped from the highest.
    for (const [array, set] of targets) {
      for (const i of [...set].sort((a, b) => b - a)) array.splice(i, 1);
      dropped += set.size;
    }
    value = structuredClone(value);
  }
  return undefined;
}

/** The object member `pointer` names in `root` (no array on the way), or undefined. */
function memberAt(root: unknown, pointer: string): { parent: Record<string, unknown>; key: string } | undefined {
  const segs = pointer.split('/').slice(1).map((raw) => raw.replace(/~1/g, '/').replace(/~0/g, '~'));
  if (segs.length === 0) return undefined;
  let at: unknown = root;
  for (const seg of segs.slice(0, -1)) {
    if (at === null || typeof at !== 'object' || Array.isArray(at) || !Object.hasOwn(at, seg)) return undefined;
    at = (at as Record<string, unknown>)[seg];
  }
  const key = segs.at(-1)!;
  if (at === null || typeof at !== 'object' || Array.isArray(at) || !Object.hasOwn(at, key)) return undefined;
  return { parent: at as Record<string, unknown>, key };
}

/** The innermost array item on the way to `pointer` in `root`. */
function innermostItem(root: unknown, pointer: string): { array: unknown[]; index: number } | undefined {
  let found: { array: unknown[]; index: number } | undefined;
  let at: unknown = root;
  for (const raw of pointer.split('/').slice(1)) {
    const seg = raw.replace(/~1/g, '/').replace(/~0/g, '~');
    if (Array.isArray(at)) {
      const i = Number(seg);
      if (!Number.isInteger(i) || i < 0 || i >= at.length) break;
      found = { array: at, index: i };
      at = at[i];
    } else if (at !== null && typeof at === 'object' && Object.hasOwn(at, seg)) {
      at = (at as Record<string, unknown>)[seg];
    } else {
      break;
    }
  }
  return found;
}

/** Instance paths in an ajv `errorsText` ("data/a/0 must …, data must …"). */
function instancePaths(text: string): string[] {
  const out: string[] = [];
  for (const m of text.matchAll(/(?:^|, )data((?:\/[^ ,]*)*) /g)) out.push(m[1] ?? '');
  return out.length > 0 ? out : [''];
}

/**
 * The bounded result with its structure replaced by a shrink: a text mirror of the old structure
 * follows it, and the report (and notice) count the dropped items.
 */
function withStructure(bounded: Record<string, unknown>, structure: unknown, dropped: number): Record<string, unknown> {
  const before = JSON.stringify(bounded.structuredContent);
  const meta = bounded._meta as Record<string, unknown> | undefined;
  const prior = meta?.[REPORT_KEY] as BudgetReport | undefined;
  const report = prior === undefined ? undefined : { ...prior, omitted_count: prior.omitted_count + dropped, omitted_paths_capped: true };
  const content = Array.isArray(bounded.content)
    ? bounded.content.map((b: unknown) => {
        const block = b as Record<string, unknown>;
        if (block?.text === before) return { ...block, text: JSON.stringify(structure) };
        if (report !== undefined && (block?._meta as Record<string, unknown> | undefined)?.[NOTICE_KEY] === true) return { ...block, text: noticeText(report) };
        return b;
      })
    : bounded.content;
  return {
    ...bounded,
    ...(content === undefined ? {} : { content }),
    structuredContent: structure,
    ...(meta === undefined || report === undefined ? {} : { _meta: { ...meta, [REPORT_KEY]: report } }),
  };
}

/** The small scalar top-level fields of a structure (ids, counts, paths, flags). */
export function receiptOf(structure: unknown): Record<string, string | number | boolean | null> {
  const receipt: Record<string, string | number | boolean | null> = {};
  if (structure === null || typeof structure !== 'object' || Array.isArray(structure)) return receipt;
  let n = 0;
  for (const [k, v] of Object.entries(structure)) {
    if (n >= MAX_RECEIPT_FIELDS || k.length > MAX_RECEIPT_KEY) break;
    const ok =
      v === null ||
      typeof v === 'number' ||
      typeof v === 'boolean' ||
      (typeof v === 'string' && v.length <= MAX_RECEIPT_STRING);
    if (ok) {
      receipt[k] = v as string | number | boolean | null;
      n++;
    }
  }
  return receipt;
}
