/**
 * The fast path: does a value already satisfy every bound? If so it must come back unchanged,
 * byte-identical to `JSON.stringify`. The check walks the value once (fits-walk.ts), stops at the
 * first bound broken (so an oversized value costs little), and only then serializes a value proven
 * small. The byte source applies the same predicate to events (see the streaming path).
 */
import type { RootKind } from './roles.js';
import { ENVELOPE_KEYS, MAX_ENVELOPE_FIELD_BYTES } from './limits.js';
import type { ResolvedLimits } from './options.js';
import { utf8Length } from './wire.js';
import { fitsWithTextUpper, jsonFits, textsWithinByLength } from './fits-size.js';
import { isPlainish, plainTextResultFits } from './fits-plain.js';
import { checkRoot, lastUpperBound, MAYBE, NOT_FIT } from './fits-walk.js';

/**
 * Exact serialized size of a root that is within every bound, or NOT_FIT. Perf: a first walk
 * uses cheap upper bounds for strings; only when an estimate crosses a bound is the value walked
 * again with exact (escaping) measurement.
 */
function measure(root: object, kind: 'result' | 'error', limits: ResolvedLimits): number {
  try {
    return checkRoot(root, kind, limits, false);
  } catch (e) {
    if (e !== MAYBE) throw e;
    return checkRoot(root, kind, limits, true);
  }
}

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
      const lower = checkRoot(value, kind, limits, 'bounds', texts);
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
        const lower = checkRoot(v, k, limits, 'bounds', texts);
        piece = JSON.stringify(v);
        if (!jsonFits(piece, texts, lower, limits)) return undefined;
      } else if (k === 'id' || k === 'jsonrpc') {
        if (v !== null && typeof v !== 'string' && typeof v !== 'number') return undefined;
        piece = JSON.stringify(v);
        if (utf8Length(piece) > MAX_ENVELOPE_FIELD_BYTES) return undefined;
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
 * passed on untouched). One walk checks the bounds and bounds the size from above; when that
 * bound (or a tighter one for long texts) settles it, nothing is serialized, since the transport
 * serializes the message anyway. Otherwise the native serializer gives the size.
 *
 * Perf: serializing natively and dropping the text costs a fraction of measuring every string in
 * JavaScript, which took two walks (an estimate, then an exact pass when the estimate crossed a
 * bound: ~5x slower than this on a 60 KB result). Values whose size is not known to be small are
 * still measured in JavaScript.
 */
export function fitsWithinBudget(value: unknown, limits: ResolvedLimits, root: 'result' | 'error'): boolean {
  if (!isPlainish(value) || Array.isArray(value)) return false;
  if (root === 'result' && plainTextResultFits(value, limits)) return true;
  try {
    const texts: string[] = [];
    const lower = checkRoot(value, root, limits, 'bounds', texts);
    const upper = lastUpperBound();
    // Perf: a value whose upper bound is within every bound fits without being serialized (the
    // transport serializes it anyway); only a value near a bound is serialized to be measured.
    if (upper <= limits.maxResultBytes && textsWithinByLength(texts, limits)) return true;
    if (fitsWithTextUpper(texts, upper, limits)) return true;
    if (lower > SERIALIZE_TO_MEASURE_MAX_BYTES) return measure(value, root, limits) <= limits.maxResultBytes;
    return jsonFits(JSON.stringify(value), texts, lower, limits);
  } catch (e) {
    if (e === NOT_FIT) return false;
    throw e;
  }
}
