/**
 * The fast path's walk (fits.ts): one pass over a value that stops at the first bound it breaks
 * (roles from roles.ts, the budgeter's own table, so the two cannot disagree on what a value is),
 * measuring sizes exactly, or from below and above as far as the bounds need.
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
import { escapedSize } from './escape-count.js';
import { integerLength, numberLength } from './fits-size.js';
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

/**
 * How `checkRoot` measures strings: `exact` (escaped UTF-8 bytes), or `bounds` (per-string and
 * text bounds only, exact only where the free bound of 6 bytes a unit is not enough; the total is
 * left to the caller, which measures the JSON it builds anyway; `bytes` is then a lower bound, and
 * `lastUpperBound()` an upper bound).
 */
export type Mode = 'exact' | 'bounds';

/**
 * Walk `root` and throw NOT_FIT at the first bound it breaks. With `exact`, `bytes` of the answer
 * is the number of bytes `JSON.stringify(root)` would write, computed without writing it; with
 * `bounds`, a lower bound of it, and `upper` an upper bound. In bounds mode the texts of content
 * blocks are pushed to `deferred`, to be measured by the caller.
 */
export function checkRoot(root: object, kind: 'result' | 'error', limits: ResolvedLimits, m: Mode, deferred: string[] = []): FitWalk {
  // One walk object a call: a getter in the value may run another check midway (JSON.stringify
  // would call it too), and that check gets its own counters.
  const w = new FitWalk(limits);
  w.root(root, kind, limits, m, deferred);
  return w;
}

/**
 * One walk: its counters and the bounds of the call, read once from the resolved limits (which
 * come from the limits table). Perf: the counters are fields of one object of one shape, so the
 * tight loops below read and write them as in-object properties.
 *
 * `bytes`: the JSON's size so far, exactly (`exact`) or from below (`bounds`); in bounds mode
 * `bytes + extra` bounds it from above, unless `unbounded`.
 */
export class FitWalk {
  bytes = 0;
  extra = 0;
  /**
   * Bounds mode: a value of another prototype was met, so there is no upper bound. Perf: a flag,
   * not `extra = Infinity`: a counter that once held a non-integer would be boxed on every update.
   */
  unbounded = false;
  readonly maxBytes: number;
  readonly maxDepth: number;
  readonly maxItems: number;
  readonly maxKeys: number;
  readonly maxString: number;
  /** A string or key this short is within the string bound whatever it holds (6 bytes a unit). */
  readonly free: number;
  /** Nothing enumerable on Object.prototype: a for-in over a plain object visits its own members. */
  readonly ownOnly: boolean;

  constructor(limits: ResolvedLimits) {
    this.maxBytes = limits.maxResultBytes;
    this.maxDepth = limits.maxDepth;
    this.maxItems = limits.maxItems;
    this.maxKeys = limits.maxKeys;
    this.maxString = limits.maxStringBytes;
    this.free = limits.maxStringBytes / 6;
    this.ownOnly = !hasEnumerable(Object.prototype);
  }

  /**
   * Bounds mode: an upper bound of the JSON size of the value walked (its strings and texts at 6
   * bytes a UTF-16 unit unless measured, numbers other than integers at `MAX_SCALAR_BYTES`).
   */
  get upper(): number {
    return this.unbounded ? Infinity : this.bytes + this.extra;
  }

  root(root: object, kind: 'result' | 'error', limits: ResolvedLimits, m: Mode, deferred: string[]): void {
    const w = this;
    let text = 0;
    const maxBytes = limits.maxResultBytes;
    const stack: Entry[] = [{ value: root, kind, depth: 1 }];
    const str = (s: string, bound: number): number => {
      if (s.length > bound || s.length > maxBytes) throw NOT_FIT;
      let n: number;
      if (m === 'bounds') {
        // Perf: 6 bytes a unit is an upper bound that costs nothing; measure only near a bound.
        if (s.length * 6 <= bound) {
          w.bytes += s.length + 2;
          w.extra += s.length * 5;
          return s.length * 6;
        }
        n = escapedSize(s);
        if (n > bound) throw NOT_FIT;
        w.bytes += n + 2;
        return n;
      }
      n = escapedSize(s);
      if (n > bound) throw NOT_FIT;
      w.bytes += n + 2;
      return n;
    };
    const scalar = (v: unknown, inArray: boolean): boolean => {
      switch (typeof v) {
        case 'number':
          w.bytes += Number.isFinite(v) ? numberLength(v) : 4;
          return true;
        case 'boolean':
          w.bytes += v ? 4 : 5;
          return true;
        case 'bigint':
          throw NOT_FIT;
        case 'object':
          if (v === null) {
            w.bytes += 4;
            return true;
          }
          return false;
        default:
          // undefined, function, symbol: `null` in an array (objects skip them before counting)
          if (inArray) w.bytes += 4;
          return true;
      }
    };
    // Bounds mode: a text is measured later (see `fitsWithinBudget`, `jsonFits`); here only its
    // length, a lower bound of its wire size.
    const maxBlock = limits.maxBlockBytes;
    const deferText = (s: string): void => {
      if (s.length > maxBlock) throw NOT_FIT;
      w.bytes += s.length + 2;
      w.extra += s.length * 5;
      deferred.push(s);
    };
    while (stack.length > 0) {
      const { value, kind: k, depth } = stack.pop()!;
      if (depth > limits.maxDepth) throw NOT_FIT;
      if (Array.isArray(value)) {
        if (countsItems(k) && value.length > limits.maxItems) throw NOT_FIT;
        // Every item takes at least one byte and a comma: a long array cannot fit (before any walk).
        if (w.bytes + 2 * value.length > maxBytes) throw NOT_FIT;
        w.bytes += value.length === 0 ? 2 : value.length + 1;
        if (k === 'content' && m === 'bounds') {
          // Perf: plain text blocks (`{type: 'text', text}`, the common case) checked inline, like
          // generic values; any other block takes the general path below.
          for (let i = value.length - 1; i >= 0; i--) {
            const v: unknown = value[i];
            if (isPlainTextBlock(v)) {
              w.bytes += TEXT_BLOCK_FRAME_BYTES;
              deferText(v.text);
              continue;
            }
            if (!isValidBlock(v, maxBytes) || !isPlainish(v)) throw NOT_FIT;
            stack.push({ value: v, kind: 'block', depth: depth + 1 });
          }
          if (w.bytes > maxBytes) throw NOT_FIT;
          continue;
        }
        for (let i = value.length - 1; i >= 0; i--) {
          const v: unknown = value[i];
          // A content item must be a block the client's schema accepts.
          if (k === 'content' && !isValidBlock(v, maxBytes)) throw NOT_FIT;
          if (typeof v === 'string') str(v, limits.maxStringBytes);
          else if (!scalar(v, true)) {
            if (!isPlainish(v)) throw NOT_FIT;
            const role = itemRole(k, v as object);
            if (role === 'generic' && m === 'bounds') w.genericContainer(v as object, depth + 1);
            else stack.push({ value: v as object, kind: role, depth: depth + 1 });
          }
        }
        if (w.bytes > maxBytes) throw NOT_FIT;
        continue;
      }
      if (m === 'bounds' && !plainProto(value)) w.unbounded = true; // as for generic objects
      const keys = Object.keys(value);
      if (countsKeys(k) && keys.length > limits.maxKeys) throw NOT_FIT;
      // Every member takes at least `"":0` and a comma; undefined members are rare enough to ignore
      // here only when the object is small.
      if (w.bytes + 5 * keys.length > maxBytes * 2) throw NOT_FIT;
      let members = 0;
      for (const key of keys) {
        const v: unknown = (value as Record<string, unknown>)[key];
        if (v === undefined || typeof v === 'function' || typeof v === 'symbol') continue;
        members++;
        if (key.length > MAX_KEY_UNITS) throw NOT_FIT;
        str(key, exemptKey(k, key) ? Infinity : limits.maxStringBytes);
        w.bytes += 1; // ':'
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
            else if ((text += str(v, maxBlock)) > limits.maxTextBytes) throw NOT_FIT;
          } else {
            // Opaque strings (identifiers) share the string bound; base64 of a block is whole or dropped.
            str(v, sk === 'atomic' ? Infinity : limits.maxStringBytes);
          }
        } else if (!scalar(v, false)) {
          if (!isPlainish(v)) throw NOT_FIT;
          const fast = fastRole(role);
          if (fast === 'generic' && m === 'bounds') w.genericContainer(v as object, depth + 1);
          else stack.push({ value: v as object, kind: fast, depth: depth + 1 });
        }
      }
      w.bytes += members === 0 ? 2 : members + 1;
      if (w.bytes > maxBytes) throw NOT_FIT;
    }
  }

  // ---- Bounds mode: generic values (structured data, the bulk of most results) --------------
  // Walked recursively (depth is bounded by `maxDepth`, at most 1000: JSON.stringify nests as
  // deep), with only the checks generic data needs, and sizes exact where that costs no more than
  // a bound: integers, booleans, null, and strings long enough to be measured for the string
  // bound anyway; other strings at 6 bytes a UTF-16 unit, other numbers at 25.
  //
  // Perf: one method per container kind, an array's scalar items handled in its loop (a call
  // costs more than the work); types told by `typeof x === '…'` comparisons, which compile to
  // type checks (a `switch` on `typeof x` calls the Typeof builtin: ≈ 12 % of the walk); an
  // object's `toJSON` checked just before its prototype is read (≈ 15 %): the property load checks
  // the object's map, which lets the compiler fold `Object.getPrototypeOf` to a constant.

  /** A generic array or object at `depth` (an object with `toJSON` breaks the walk: NOT_FIT). */
  genericContainer(v: object, depth: number): void {
    if (Array.isArray(v)) {
      if (typeof (v as { toJSON?: unknown }).toJSON === 'function') throw NOT_FIT;
      this.genericArray(v, depth);
    } else {
      this.genericObject(v, depth);
    }
  }

  private genericArray(v: readonly unknown[], depth: number): void {
    if (depth > this.maxDepth) throw NOT_FIT;
    const n = v.length;
    // Every item takes at least one byte and a comma: a long array cannot fit (before any walk).
    if (n > this.maxItems || this.bytes + 2 * n > this.maxBytes) throw NOT_FIT;
    this.bytes += n === 0 ? 2 : n + 1;
    const free = this.free;
    for (let i = 0; i < n; i++) {
      const x = v[i];
      if (typeof x === 'string') {
        const units = x.length;
        if (units > free) this.longString(x);
        else {
          this.bytes += units + 2;
          this.extra += units * 5;
        }
      } else if (typeof x === 'number') this.genericNumber(x);
      else if (typeof x === 'object') {
        if (x === null) this.bytes += 4;
        else this.genericContainer(x, depth + 1);
      } else if (typeof x === 'boolean') this.bytes += x ? 4 : 5;
      else if (typeof x === 'bigint') throw NOT_FIT;
      else this.bytes += 4; // undefined, a function or a symbol in an array: `null`
    }
    if (this.bytes > this.maxBytes) throw NOT_FIT;
  }

  private genericObject(v: object, depth: number): void {
    if (depth > this.maxDepth) throw NOT_FIT;
    if (typeof (v as { toJSON?: unknown }).toJSON === 'function') throw NOT_FIT;
    this.extra += 2; // members count a comma each: `{}` and the last member's brackets are not counted
    const proto: unknown = Object.getPrototypeOf(v);
    if (this.ownOnly && (proto === Object.prototype || proto === null)) {
      // Perf: a for-in whose body reads `v[key]` reads through the object's enum cache, not a
      // megamorphic keyed load (and builds no key array). With nothing enumerable on
      // Object.prototype, it visits exactly the members Object.keys lists.
      const maxKeys = this.maxKeys;
      let n = 0;
      for (const key in v) {
        if (++n > maxKeys) throw NOT_FIT;
        this.genericMember(key, (v as Record<string, unknown>)[key], depth);
      }
    } else {
      this.unbounded = true; // another prototype (a boxed primitive serializes as its primitive): measure
      const keys = Object.keys(v);
      if (keys.length > this.maxKeys) throw NOT_FIT;
      for (let i = 0; i < keys.length; i++) this.genericMember(keys[i]!, (v as Record<string, unknown>)[keys[i]!], depth);
    }
    if (this.bytes > this.maxBytes) throw NOT_FIT;
  }

  /**
   * A member of a generic object at `depth`: its key and value, or nothing for an undefined,
   * function or symbol value (skipped, as `JSON.stringify` skips it). Perf: the common types are
   * told first; the skipped ones are what is left (a function test reads the value's map).
   */
  private genericMember(key: string, x: unknown, depth: number): void {
    if (typeof x === 'string') {
      this.memberKey(key);
      const units = x.length;
      if (units > this.free) this.longString(x);
      else {
        this.bytes += units + 2;
        this.extra += units * 5;
      }
    } else if (typeof x === 'number') {
      this.memberKey(key);
      this.genericNumber(x);
    } else if (typeof x === 'object') {
      this.memberKey(key);
      if (x === null) this.bytes += 4;
      else this.genericContainer(x, depth + 1);
    } else if (typeof x === 'boolean') {
      this.memberKey(key);
      this.bytes += x ? 4 : 5;
    } else if (typeof x === 'bigint') throw NOT_FIT;
  }

  /** A generic member's key: quotes, colon and comma around it. */
  private memberKey(key: string): void {
    const n = key.length;
    if (n > this.free) this.longKey(key);
    else {
      this.bytes += n + 4;
      this.extra += n * 5;
    }
  }

  /** A number: integers exactly, NaN and infinities as `null`, others between 1 and 25 bytes. */
  private genericNumber(x: number): void {
    if (x >= 0 && x < 1e5 && x === (x | 0)) {
      this.bytes += x < 10 ? 1 : x < 100 ? 2 : x < 1e3 ? 3 : x < 1e4 ? 4 : 5;
      return;
    }
    const n = integerLength(x);
    if (n > 0) this.bytes += n;
    else if (x === x && x !== Infinity && x !== -Infinity) {
      this.bytes += 1; // a lower bound: the exact size comes from the JSON
      this.extra += MAX_SCALAR_BYTES - 1;
    } else this.bytes += 4;
  }

  /** A key that could break the string bound: measured (the kernel for long ones). */
  private longKey(key: string): void {
    const n = key.length;
    if (n > MAX_KEY_UNITS || n > this.maxString) throw NOT_FIT;
    const size = escapedSize(key);
    if (size > this.maxString) throw NOT_FIT;
    this.bytes += size + 4;
  }

  /** A string that could break the string bound: measured, and counted exactly. */
  private longString(s: string): void {
    if (s.length > this.maxString) throw NOT_FIT;
    const size = escapedSize(s);
    if (size > this.maxString) throw NOT_FIT;
    this.bytes += size + 2;
  }
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
