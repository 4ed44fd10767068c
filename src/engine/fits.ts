/**
 * The fast path: does a value already satisfy every bound? If so it must come back unchanged,
 * byte-identical to `JSON.stringify`. The check walks the value once (fits-walk.ts) and stops at
 * the first bound broken (so an oversized value costs little). `serializeIfFits` then settles the
 * size from the JSON it returns anyway; `fitsWithinBudget`, for a caller that serializes the value
 * itself, settles it by measuring (texts by the escape counter, never serialized). The byte source
 * applies the same predicate to events (see the streaming path).
 */
import type { RootKind } from './roles.js';
import { ENVELOPE_KEYS, MAX_ENVELOPE_FIELD_BYTES } from './limits.js';
import type { ResolvedLimits } from './options.js';
import { escapedSize, utf8Size } from './escape-count.js';
import { jsonFits, textsWithinByLength } from './fits-size.js';
import { isPlainish, isPlainTextBlock, plainProto, plainTextResultFits, TEXT_BLOCK_FRAME_BYTES } from './fits-plain.js';
import { checkRoot, NOT_FIT } from './fits-walk.js';
import { textsWithinMeasures } from './text-measure.js';

/**
 * Returns the JSON of `value` when it is within every bound and needs no change; otherwise
 * undefined (the budgeter then decides what to keep).
 */
export function serializeIfFits(value: unknown, limits: ResolvedLimits, rootKind: RootKind): string | undefined {
  if (!isPlainish(value) || Array.isArray(value)) return undefined;
  let kind: RootKind = rootKind;
  if (kind === 'auto') {
    const first = Object.keys(value)[0];
    kind = first !== undefined && ENVELOPE_KEYS.has(first) ? 'envelope' : 'result';
  }
  try {
    if (kind !== 'envelope') {
      // Bounds in one cheap walk; the size, and the text bounds, from the JSON that is built anyway.
      const texts: string[] = [];
      const lower = checkRoot(value, kind, limits, 'bounds', texts).bytes;
      const json = JSON.stringify(value);
      return jsonFits(json, texts, lower, limits) ? json : undefined;
    }
    // Envelope: the bound applies to the result (or error) object; other members must be small scalars.
    let out = '{';
    let first = true;
    for (const [k, v] of Object.entries(value)) {
      if (v === undefined || typeof v === 'function' || typeof v === 'symbol') continue;
      let piece: string;
      if (k === 'result' || k === 'error') {
        if (!isPlainish(v) || Array.isArray(v)) return undefined;
        const texts: string[] = [];
        const lower = checkRoot(v, k, limits, 'bounds', texts).bytes;
        piece = JSON.stringify(v);
        if (!jsonFits(piece, texts, lower, limits)) return undefined;
      } else if (k === 'id' || k === 'jsonrpc') {
        if (v !== null && typeof v !== 'string' && typeof v !== 'number') return undefined;
        piece = JSON.stringify(v);
        if (utf8Size(piece) > MAX_ENVELOPE_FIELD_BYTES) return undefined;
      } else {
        return undefined; // dropped or rejected by the budgeter
      }
      out += (first ? '' : ',') + JSON.stringify(k) + ':' + piece;
      first = false;
    }
    return out + '}';
  } catch (e) {
    if (e === NOT_FIT) return undefined;
    throw e;
  }
}

/**
 * Past this lower bound of its size, a value is measured in JavaScript rather than serialized to
 * be measured: its JSON text would be a large allocation (and past ~512 MiB, not a string at all).
 */
const SERIALIZE_TO_MEASURE_MAX_BYTES = 4 * 1024 * 1024;

/**
 * Whether a value is within every bound (the transport decorator's check: a fitting message is
 * passed on untouched, and the transport serializes it). Nothing is serialized unless it must be:
 *
 * 1. One walk checks every bound but the size and text bounds, and bounds the JSON's size from
 *    below and above (strings at 6 bytes a UTF-16 unit unless measured, numbers other than
 *    integers at 25 bytes, text blocks at 6 bytes a unit). An upper bound within every bound
 *    settles it.
 * 2. Else the texts are measured exactly (escape-count.ts: no escaped copy is built), which
 *    settles the text bounds, and tightens both size bounds.
 * 3. Else the exact size, member by member: plain text blocks from their measured texts, anything
 *    else natively serialized (`JSON.stringify` of a part, never of the texts).
 *
 * Perf: a fitting text of 25K UTF-16 units costs ≈ 2.5 µs to measure, ≈ 55 µs to serialize; the
 * walk costs ≈ 15–20 ns a generic node.
 */
export function fitsWithinBudget(value: unknown, limits: ResolvedLimits, root: 'result' | 'error'): boolean {
  if (!isPlainish(value) || Array.isArray(value)) return false;
  if (root === 'result') {
    const plain = plainTextResultFits(value, limits);
    if (plain !== undefined) return plain;
  }
  const maxBytes = limits.maxResultBytes;
  try {
    const texts: string[] = [];
    const walk = checkRoot(value, root, limits, 'bounds', texts);
    if (!textsWithinMeasures(texts, limits.textMeasures)) return false;
    let lower = walk.bytes;
    let upper = walk.upper;
    if (upper <= maxBytes && textsWithinByLength(texts, limits)) return true;
    // The texts exactly: each was counted as its length (below) and 6 bytes a unit (above).
    let text = 0;
    for (let i = 0; i < texts.length; i++) {
      const t = texts[i]!;
      const n = escapedSize(t);
      if (n > limits.maxBlockBytes) return false;
      text += n;
      lower += n - t.length;
      upper -= 6 * t.length - n;
    }
    if (text > limits.maxTextBytes || lower > maxBytes) return false;
    if (upper <= maxBytes) return true;
    if (lower > SERIALIZE_TO_MEASURE_MAX_BYTES) return checkRoot(value, root, limits, 'exact').bytes <= maxBytes;
    return exactSize(value, root) <= maxBytes;
  } catch (e) {
    if (e === NOT_FIT) return false;
    throw e;
  }
}

/**
 * The exact size of a value the walk found within every other bound: a result's members one by
 * one, its plain text blocks from their measured texts (never serialized), any other part
 * serialized natively; anything else serialized whole.
 */
function exactSize(value: object, root: 'result' | 'error'): number {
  if (root !== 'result' || !plainProto(value)) return utf8Size(JSON.stringify(value));
  let bytes = 1; // `{`, then each member with its comma or `}`
  let members = 0;
  const keys = Object.keys(value);
  for (let i = 0; i < keys.length; i++) {
    const key = keys[i]!;
    const v: unknown = (value as Record<string, unknown>)[key];
    if (v === undefined || typeof v === 'function' || typeof v === 'symbol') continue;
    members++;
    // Keys of a result are protocol names, and their escaped size is measured like any string.
    bytes += escapedSize(key) + 4; // quotes, colon, comma or `}`
    bytes += key === 'content' && Array.isArray(v) ? contentSize(v) : utf8Size(JSON.stringify(v));
  }
  return members === 0 ? 2 : bytes;
}

/** The exact size of a `content` array (its items are blocks: the walk checked them). */
function contentSize(content: readonly unknown[]): number {
  let bytes = content.length === 0 ? 2 : content.length + 1;
  for (let i = 0; i < content.length; i++) {
    const b: unknown = content[i];
    bytes += isPlainTextBlock(b) ? TEXT_BLOCK_FRAME_BYTES + 2 + escapedSize(b.text) : utf8Size(JSON.stringify(b));
  }
  return bytes;
}
