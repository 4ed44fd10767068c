/**
 * The fast path's walk (fits.ts): one pass over a value that stops at the first bound it breaks
 * (roles from roles.ts, the budgeter's own table, so the two cannot disagree on what a value is),
 * measuring sizes exactly, from above, or only as far as the bounds need.
 */
import {
  childRole,
  containerOf,
  countsItems,
  countsKeys,
  exemptKey,
  isNoticeKey,
  scalarRole,
  startsCapture,
  strKind,
  type Role,
} from './roles.js';
import { MAX_KEY_UNITS } from './limits.js';
import type { ResolvedLimits } from './options.js';
import { escapedLength } from './wire.js';
import { cheapUpper, numberLength, upperBound } from './fits-size.js';
import { hasEnumerable, isPlainish, isPlainTextBlock, plainProto, TEXT_BLOCK_FRAME_BYTES } from './fits-plain.js';
import { isValidBlock } from './shapes.js';

/** A container to check. */
interface Entry {
  value: object;
  kind: Role;
  depth: number;
}

class NotFit extends Error {}
/** A bound is broken. */
export const NOT_FIT = new NotFit();
/** A size estimate is over a bound: measure exactly before deciding. */
export const MAYBE = new NotFit();

/**
 * How `checkRoot` measures strings: `exact` (escaped UTF-8 bytes), `upper` (a cheap upper bound;
 * MAYBE when an estimate crosses a bound), or `bounds` (per-string and text bounds only, exact
 * only where the free bound of 6 bytes a unit is not enough; the total is left to the caller,
 * which measures the JSON it builds anyway; `bytes` is then a lower bound).
 */
export type Mode = 'exact' | 'upper' | 'bounds';

/**
 * Walk `root` and throw NOT_FIT at the first bound it breaks. With `exact`, returns the number of
 * bytes `JSON.stringify(root)` would write, computed without writing it; without, an upper bound
 * of it, and MAYBE where an estimate (not the value) crossed a bound. In bounds mode the texts of
 * content blocks are pushed to `deferred`, to be checked against the JSON.
 */
export function checkRoot(root: object, kind: 'result' | 'error', limits: ResolvedLimits, mode: Mode | boolean, deferred: string[] = []): number {
  const m: Mode = mode === true ? 'exact' : mode === false ? 'upper' : mode;
  let bytes = 0;
  // Bounds mode: what `bytes` may undercount (upper bound of the JSON = bytes + extra).
  let extra = 0;
  let text = 0;
  const maxBytes = limits.maxResultBytes;
  const over = m === 'upper' ? MAYBE : NOT_FIT;
  const stack: Entry[] = [{ value: root, kind, depth: 1 }];
  const str = (s: string, bound: number): number => {
    if (s.length > bound || s.length > maxBytes) throw NOT_FIT;
    let n: number;
    if (m === 'bounds') {
      // Perf: 6 bytes a unit is an upper bound that costs nothing; measure only near a bound.
      n = s.length * 6 <= bound ? s.length * 6 : cheapUpper(s);
      if (n > bound) n = escapedLength(s);
      if (n > bound) throw NOT_FIT;
      bytes += s.length + 2;
      extra += n - s.length;
      return n;
    }
    n = m === 'exact' ? escapedLength(s) : upperBound(s);
    if (n > bound) throw over;
    bytes += n + 2;
    return n;
  };
  const scalar = (v: unknown, inArray: boolean): boolean => {
    switch (typeof v) {
      case 'number':
        bytes += Number.isFinite(v) ? numberLength(v) : 4;
        return true;
      case 'boolean':
        bytes += v ? 4 : 5;
        return true;
      case 'bigint':
        throw NOT_FIT;
      case 'object':
        if (v === null) {
          bytes += 4;
          return true;
        }
        return false;
      default:
        // undefined, function, symbol: `null` in an array (objects skip them before counting)
        if (inArray) bytes += 4;
        return true;
    }
  };
  // Bounds mode, generic values (the bulk of structured content): only the checks they need.
  const maxString = limits.maxStringBytes;
  const free = maxString / 6; // a string this short is within the bound whatever it holds
  const genericValue = (v: unknown, depth: number): void => {
    const t = typeof v;
    if (t === 'string') {
      const sv = v as string;
      if (sv.length > free && (sv.length > maxString || escapedLength(sv) > maxString)) throw NOT_FIT;
      bytes += sv.length + 2;
      extra += sv.length * 5; // no UTF-16 unit takes more than 6 bytes escaped
    } else if (t === 'object' && v !== null) {
      if (!isPlainish(v)) throw NOT_FIT;
      stack.push({ value: v as object, kind: 'generic', depth: depth + 1 });
    } else if (t === 'bigint') {
      throw NOT_FIT;
    } else {
      bytes += 1; // a lower bound: the exact size comes from the JSON
      extra += MAX_SCALAR_BYTES - 1;
    }
  };
  const maxKeys = limits.maxKeys;
  const genericMember = (key: string, v: unknown, depth: number): void => {
    const t = typeof v;
    if (t === 'undefined' || t === 'function' || t === 'symbol') return;
    if (key.length > free && (key.length > MAX_KEY_UNITS || escapedLength(key) > maxString)) throw NOT_FIT;
    bytes += key.length + 4;
    extra += key.length * 5;
    genericValue(v, depth);
  };
  const ownOnly = !hasEnumerable(Object.prototype);
  // Bounds mode: a text is checked later against the JSON (see `jsonFits`); here only its length,
  // a lower bound of its wire size.
  const maxBlock = limits.maxBlockBytes;
  const deferText = (s: string): void => {
    if (s.length > maxBlock) throw NOT_FIT;
    bytes += s.length + 2;
    extra += s.length * 5;
    deferred.push(s);
  };
  while (stack.length > 0) {
    const { value, kind: k, depth } = stack.pop()!;
    if (depth > limits.maxDepth) throw NOT_FIT;
    if (Array.isArray(value)) {
      if (countsItems(k) && value.length > limits.maxItems) throw NOT_FIT;
      // Every item takes at least one byte and a comma: a long array cannot fit (before any walk).
      if (bytes + 2 * value.length > maxBytes) throw NOT_FIT;
      bytes += value.length === 0 ? 2 : value.length + 1;
      if (k === 'generic' && m === 'bounds') {
        // Perf: the common case in a tight loop (see `genericValue`).
        for (let i = value.length - 1; i >= 0; i--) genericValue(value[i], depth);
        if (bytes > maxBytes) throw NOT_FIT;
        continue;
      }
      if (k === 'content' && m === 'bounds') {
        // Perf: plain text blocks (`{type: 'text', text}`, the common case) checked inline, like
        // generic values; any other block takes the general path below.
        for (let i = value.length - 1; i >= 0; i--) {
          const v: unknown = value[i];
          if (isPlainTextBlock(v)) {
            bytes += TEXT_BLOCK_FRAME_BYTES;
            deferText(v.text);
            continue;
          }
          if (!isValidBlock(v, maxBytes) || !isPlainish(v)) throw NOT_FIT;
          stack.push({ value: v, kind: 'block', depth: depth + 1 });
        }
        if (bytes > maxBytes) throw NOT_FIT;
        continue;
      }
      for (let i = value.length - 1; i >= 0; i--) {
        const v: unknown = value[i];
        // A content item must be a block the client's schema accepts.
        if (k === 'content' && !isValidBlock(v, maxBytes)) throw NOT_FIT;
        if (typeof v === 'string') str(v, limits.maxStringBytes);
        else if (!scalar(v, true)) {
          if (!isPlainish(v)) throw NOT_FIT;
          stack.push({ value: v as object, kind: itemRole(k, v as object), depth: depth + 1 });
        }
      }
      if (bytes > maxBytes) throw over;
      continue;
    }
    if (k === 'generic' && m === 'bounds') {
      // Perf: the common case (structured data) in a tight loop: only the checks generic members need.
      extra += 2; // members count a comma each: `{}` and the last member's brackets are not counted
      const proto: unknown = Object.getPrototypeOf(value);
      if (ownOnly && (proto === Object.prototype || proto === null)) {
        // Perf: a for-in whose body reads `value[key]` reads through the object's enum cache, not
        // a megamorphic keyed load (and builds no key array). With nothing enumerable on
        // Object.prototype, it visits exactly the members Object.keys lists.
        let n = 0;
        for (const key in value) {
          if (++n > maxKeys) throw NOT_FIT;
          genericMember(key, (value as Record<string, unknown>)[key], depth);
        }
      } else {
        extra = Infinity; // another prototype (a boxed primitive serializes as its primitive): measure
        const keys = Object.keys(value);
        if (keys.length > maxKeys) throw NOT_FIT;
        for (let i = 0; i < keys.length; i++) genericMember(keys[i]!, (value as Record<string, unknown>)[keys[i]!], depth);
      }
      if (bytes > maxBytes) throw NOT_FIT;
      continue;
    }
    if (m === 'bounds' && !plainProto(value)) extra = Infinity; // as for generic objects
    const keys = Object.keys(value);
    if (countsKeys(k) && keys.length > limits.maxKeys) throw NOT_FIT;
    // Every member takes at least `"":0` and a comma; undefined members are rare enough to ignore
    // here only when the object is small.
    if (bytes + 5 * keys.length > maxBytes * 2) throw NOT_FIT;
    let members = 0;
    for (const key of keys) {
      const v: unknown = (value as Record<string, unknown>)[key];
      if (v === undefined || typeof v === 'function' || typeof v === 'symbol') continue;
      members++;
      if (key.length > MAX_KEY_UNITS) throw NOT_FIT;
      str(key, exemptKey(k, key) ? Infinity : limits.maxStringBytes);
      bytes += 1; // ':'
      if (k === 'result' && !limits.allowedFields.has(key)) throw NOT_FIT;
      // An earlier report is replaced and an earlier notice dropped: neither comes back unchanged.
      if (startsCapture(k, key) || (isNoticeKey(k, key) && v === true)) throw NOT_FIT;
      const c = containerOf(v);
      const role = c === 'other' ? scalarRole(k, key, typeof v === 'boolean') : childRole(k, key, c);
      // A member of the wrong JSON type (for the client's schema) is dropped by the budgeter.
      if (role === 'drop' || role === 'invalid') throw NOT_FIT;
      if (typeof v === 'string') {
        const sk = strKind(k, key);
        if (sk === 'text') {
          if (m === 'bounds') deferText(v);
          else if ((text += str(v, maxBlock)) > limits.maxTextBytes) throw over;
        } else {
          // Opaque strings (identifiers) share the string bound; base64 of a block is whole or dropped.
          str(v, sk === 'atomic' ? Infinity : limits.maxStringBytes);
        }
      } else if (!scalar(v, false)) {
        if (!isPlainish(v)) throw NOT_FIT;
        stack.push({ value: v as object, kind: fastRole(role), depth: depth + 1 });
      }
    }
    bytes += members === 0 ? 2 : members + 1;
    if (bytes > maxBytes) throw over;
  }
  lastUpper = bytes + extra;
  return bytes;
}

/**
 * Bounds mode: an upper bound of the JSON size of the value `checkRoot` last returned for (its
 * strings at 6 bytes a UTF-16 unit, other generic scalars at `MAX_SCALAR_BYTES`). Perf: a module
 * variable, so the walk allocates no result object.
 */
let lastUpper = 0;

/** The upper bound of the JSON size of the value `checkRoot` last returned for, in bounds mode. */
export function lastUpperBound(): number {
  return lastUpper;
}

/** No number, boolean or null takes more (`-0.0000012345678901234567`: 25 characters). */
const MAX_SCALAR_BYTES = 25;

/**
 * Perf: `structuredContent` is bounded like any structured data when nothing is cut (the budgeter
 * tells it apart only for the text mirror), so it takes the generic tight loops.
 */
function fastRole(role: Role): Role {
  return role === 'structure' ? 'generic' : role;
}

/** The role of a container item (a block in `content`, else generic data). */
function itemRole(parent: Role, v: object): Role {
  const role = childRole(parent, '', Array.isArray(v) ? 'array' : 'object');
  if (role === 'drop' || role === 'invalid') throw NOT_FIT;
  return fastRole(role);
}
