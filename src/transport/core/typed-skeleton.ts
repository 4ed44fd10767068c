/**
 * The complete fallback of the typed-result policy: the smallest schema-valid shrink of a
 * structure, then grown back toward the original in document order while it still fits.
 *
 * The shrinks the policy may make are: array items dropped from the end, and members the schema
 * does not require dropped whole, at any depth. Each only removes, and every bound of the budget
 * (bytes, items, keys, depth, strings, tokens) is monotone under removal, so when any such shrink
 * fits, the smallest one fits too: a result is withheld only when its skeleton does not fit. The
 * schema itself is never interpreted: the validator is the oracle of what may go (an optional
 * member is one whose removal still validates; an array keeps its shortest valid prefix), so
 * `minItems`, `required`, `$ref`, `anyOf` and the rest are honoured as the client's validator
 * honours them. The work is bounded: past {@link MAX_CHECKS} validations the skeleton stays as
 * small as it got (still valid), and growing stops after {@link MAX_GROW_STEPS} trials.
 */

/** Validations the skeleton may spend (each is of the whole structure). */
export const MAX_CHECKS = 400;
const NEVER = (): boolean => false;

/** The share of {@link MAX_CHECKS} the arrays' pass may spend. */
const ARRAY_SHARE = 0.6;
/** Trials the growing may spend (each bounds and validates a candidate result). */
export const MAX_GROW_STEPS = 64;

type Json = unknown;
type Obj = Record<string, unknown>;

const isObject = (v: unknown): v is Obj => v !== null && typeof v === 'object' && !Array.isArray(v);

/** Set an own member without the `__proto__` setter. */
function define(o: Obj, k: string, v: unknown): void {
  Object.defineProperty(o, k, { value: v, writable: true, enumerable: true, configurable: true });
}

/** Replace an object's members in place, in the order given. */
function refill(o: Obj, entries: [string, unknown][]): void {
  for (const k of Object.keys(o)) delete o[k];
  for (const [k, v] of entries) define(o, k, v);
}

/**
 * The smallest shrink of `root` that `valid` accepts, or undefined when `root` itself is not
 * valid. Two passes, breadth first: arrays first, each cut to its shortest valid prefix by
 * bisection (so a large structure is small before members are tried), then members, each dropped
 * when the structure still validates without it. Past the validations allowed (the arrays' pass
 * gets {@link ARRAY_SHARE} of them) the shrink stays as small as it got: valid, if not the smallest.
 */
export function skeletonOf(root: Json, valid: (v: Json) => boolean, late: () => boolean = NEVER): Json | undefined {
  if (!valid(root)) return undefined;
  const value = structuredClone(root);
  let checks = 1;
  const check = (): boolean => {
    // Out of time: count the checks as spent, so every loop stops where it is (still valid).
    if (late()) checks = MAX_CHECKS;
    checks++;
    return valid(value);
  };
  const walk = (visit: (node: Json) => void, limit: number): void => {
    const queue: Json[] = [value];
    for (let at = 0; at < queue.length && checks < limit; at++) {
      const node = queue[at];
      visit(node);
      if (Array.isArray(node)) queue.push(...node);
      else if (isObject(node)) queue.push(...Object.values(node));
    }
  };
  walk((node) => {
    if (!Array.isArray(node) || node.length === 0) return;
    const all = node.slice();
    let lo = 0;
    let hi = all.length; // valid at its full length
    while (lo < hi && checks < MAX_CHECKS * ARRAY_SHARE) {
      const mid = (lo + hi) >>> 1;
      node.length = mid;
      if (check() && checks <= MAX_CHECKS * ARRAY_SHARE) hi = mid;
      else lo = mid + 1;
      node.length = 0;
      node.push(...all);
    }
    node.length = hi;
  }, MAX_CHECKS * ARRAY_SHARE);
  walk((node) => {
    if (!isObject(node)) return;
    let kept = Object.entries(node);
    for (let i = 0; i < kept.length && checks < MAX_CHECKS; ) {
      const without = kept.filter((_, j) => j !== i);
      refill(node, without);
      if (check() && checks <= MAX_CHECKS) kept = without;
      else {
        refill(node, kept);
        i++;
      }
    }
  }, MAX_CHECKS);
  return value;
}

/**
 * Grow `skeleton` (a shrink of `original` of the forms above) back toward `original`, in document
 * order, keeping each step `fits` accepts (it is given the whole candidate structure): a member
 * put back whole when it fits whole, else its own skeleton put back and grown; more items of an
 * array, the most that fit (doubling, then bisection). Returns the grown structure.
 */
export function growToward(original: Json, skeleton: Json, valid: (v: Json) => boolean, fits: (v: Json) => boolean, late: () => boolean = NEVER): Json {
  const root = structuredClone(skeleton);
  let steps = 0;
  const tryFit = (): boolean => {
    if (late()) steps = MAX_GROW_STEPS;
    steps++;
    return steps <= MAX_GROW_STEPS && fits(root);
  };
  const grow = (orig: Json, node: Json): void => {
    if (steps >= MAX_GROW_STEPS) return;
    if (Array.isArray(orig) && Array.isArray(node)) {
      for (let i = 0; i < node.length; i++) grow(orig[i], node[i]);
      if (node.length >= orig.length) return;
      const base = node.length;
      const setCount = (n: number): void => {
        node.length = base;
        for (let i = base; i < n; i++) node.push(structuredClone(orig[i]));
      };
      let good = base;
      let bad = orig.length + 1;
      for (let n = base + 1; n <= orig.length && steps < MAX_GROW_STEPS; n = Math.min(orig.length, base + (n - base) * 2)) {
        setCount(n);
        if (!tryFit()) {
          bad = n;
          break;
        }
        good = n;
        if (n === orig.length) break;
      }
      while (bad - good > 1 && steps < MAX_GROW_STEPS) {
        const mid = Math.floor((good + bad) / 2);
        setCount(mid);
        if (tryFit()) good = mid;
        else bad = mid;
      }
      setCount(good);
      return;
    }
    if (!isObject(orig) || !isObject(node)) return;
    for (const [k, v] of Object.entries(orig)) {
      if (steps >= MAX_GROW_STEPS) return;
      if (Object.hasOwn(node, k)) {
        grow(v, node[k]);
        continue;
      }
      // Put the member back at its place: whole, else as small as the schema lets it be, grown.
      const before = Object.entries(node);
      const place = (member: unknown): void => refill(node, insertAt(before, Object.keys(orig), k, member));
      place(structuredClone(v));
      if (tryFit()) continue;
      if (v === null || typeof v !== 'object') {
        refill(node, before); // a scalar is its own smallest form
        continue;
      }
      place(v);
      steps++; // the member's own skeleton is a search of its own: it counts as a trial
      const own = steps < MAX_GROW_STEPS ? skeletonWithin(root, node, k, valid, late) : undefined;
      if (own !== undefined && JSON.stringify(own).length < JSON.stringify(v).length) {
        place(own);
        if (tryFit()) {
          grow(v, own);
          continue;
        }
      }
      refill(node, before);
    }
  };
  grow(original, root);
  return root;
}

/** The skeleton of member `k` of `node`, shrunk in place within `root` (so `valid` sees the whole). */
function skeletonWithin(root: Json, node: Obj, k: string, valid: (v: Json) => boolean, late: () => boolean): Json | undefined {
  const member = structuredClone(node[k]);
  define(node, k, member);
  if (!valid(root)) return undefined;
  // The member's own skeleton, judged by the whole structure's validity with it in place.
  const small = skeletonOf(
    member,
    (m) => {
      define(node, k, m);
      return valid(root);
    },
    late,
  );
  define(node, k, small);
  return small;
}

/** `entries` with `[key, value]` put where `key` stands in `order` among the keys present. */
function insertAt(entries: [string, unknown][], order: string[], key: string, value: unknown): [string, unknown][] {
  const rank = new Map(order.map((k, i) => [k, i]));
  const mine = rank.get(key) ?? Infinity;
  const at = entries.findIndex(([k]) => (rank.get(k) ?? Infinity) > mine);
  const out = entries.slice();
  out.splice(at < 0 ? out.length : at, 0, [key, value]);
  return out;
}
