/**
 * Is `text` exactly `JSON.stringify(value)`? Answered by serializing `value` piece by piece and
 * comparing in place, stopping at the first difference: no whole serialization is ever built, and
 * the cost is at most the length of `text`, which the caller already holds.
 */

interface Entry {
  value: unknown;
  array: boolean;
  keys: string[] | undefined;
  i: number;
  first: boolean;
}

/** What JSON.stringify serializes for `v`: the result of `toJSON`, and boxed primitives unboxed. */
export function resolveToJSON(v: unknown, key: string): unknown {
  let r = v;
  if (r !== null && typeof r === 'object' && typeof (r as { toJSON?: unknown }).toJSON === 'function') {
    r = (r as { toJSON: (k: string) => unknown }).toJSON(key);
  }
  if (r instanceof Number || r instanceof String || r instanceof Boolean) r = r.valueOf();
  return r;
}

export function serializationEquals(value: unknown, text: string): boolean {
  let pos = 0;
  const match = (piece: string): boolean => {
    if (!text.startsWith(piece, pos)) return false;
    pos += piece.length;
    return true;
  };
  const stack: Entry[] = [];
  // Returns false on mismatch; pushes containers.
  const put = (raw: unknown, key: string, inArray: boolean): boolean | 'skip' => {
    const v = resolveToJSON(raw, key);
    switch (typeof v) {
      case 'string':
        return match(JSON.stringify(v));
      case 'number':
        return match(Number.isFinite(v) ? String(v) : 'null');
      case 'boolean':
        return match(v ? 'true' : 'false');
      case 'object':
        if (v === null) return match('null');
        if (Array.isArray(v)) {
          if (!match('[')) return false;
          stack.push({ value: v, array: true, keys: undefined, i: 0, first: true });
        } else {
          if (!match('{')) return false;
          stack.push({ value: v, array: false, keys: Object.keys(v), i: 0, first: true });
        }
        return true;
      default:
        return inArray ? match('null') : 'skip';
    }
  };
  if (put(value, '', false) !== true) return false;
  while (stack.length > 0) {
    const e = stack[stack.length - 1]!;
    if (e.array) {
      const arr = e.value as unknown[];
      if (e.i >= arr.length) {
        if (!match(']')) return false;
        stack.pop();
        continue;
      }
      if (!e.first && !match(',')) return false;
      e.first = false;
      const i = e.i++;
      if (put(arr[i], String(i), true) === false) return false;
    } else {
      const keys = e.keys!;
      if (e.i >= keys.length) {
        if (!match('}')) return false;
        stack.pop();
        continue;
      }
      const k = keys[e.i++]!;
      const v = resolveToJSON((e.value as Record<string, unknown>)[k], k);
      if (v === undefined || typeof v === 'function' || typeof v === 'symbol') continue;
      if (!match((e.first ? '' : ',') + JSON.stringify(k) + ':')) return false;
      e.first = false;
      if (put(v, k, false) === false) return false;
    }
  }
  return pos === text.length;
}
