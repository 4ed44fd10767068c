/**
 * The in-memory source: walks a JavaScript value in document order and feeds the budgeter, with
 * `JSON.stringify` semantics (toJSON, undefined members skipped, undefined array items as null,
 * non-finite numbers as null). It stops descending wherever the budgeter omits a value and
 * accounts for a closed container's remaining children in one step, so its cost follows the
 * budget, not the input. Iterative: nesting depth never grows the call stack.
 */
import type { BudgetEvents } from './events.js';
import { BudgetError } from './errors.js';
import { resolveToJSON, serializationEquals } from './mirror.js';

interface Entry {
  value: unknown;
  array: boolean;
  keys: string[] | undefined;
  i: number;
  n: number;
}

function isSkipped(v: unknown): boolean {
  return v === undefined || typeof v === 'function' || typeof v === 'symbol';
}

/** Feed `root` to `b` as events. Does not call `finish()`. */
export function walkValue(b: BudgetEvents, root: unknown): void {
  const stack: Entry[] = [];

  const feed = (v: unknown, key: string): void => {
    switch (typeof v) {
      case 'string':
        b.string(v);
        return;
      case 'number':
        b.scalar(Number.isFinite(v) ? String(v) : 'null');
        return;
      case 'boolean':
        b.scalar(v ? 'true' : 'false');
        return;
      case 'bigint':
        throw new BudgetError('INVALID_RESULT', 'A BigInt value cannot be serialized as JSON', { key });
      case 'object':
        if (v === null) {
          b.scalar('null');
        } else if (Array.isArray(v)) {
          if (b.openArray()) stack.push({ value: v, array: true, keys: undefined, i: 0, n: v.length });
        } else if (b.openObject()) {
          const keys = Object.keys(v);
          stack.push({ value: v, array: false, keys, i: 0, n: keys.length });
        }
        return;
      default:
        // undefined, functions and symbols: null in arrays (objects skip them before the key)
        b.scalar('null');
    }
  };

  if (isSkipped(root)) throw new BudgetError('INVALID_RESULT', 'Expected a JSON object, got undefined');
  feed(resolveToJSON(root, ''), '');
  while (stack.length > 0) {
    const e = stack[stack.length - 1]!;
    if (e.i < e.n && b.topClosed) {
      omitRemaining(b, e);
      e.i = e.n;
    }
    if (e.i >= e.n) {
      stack.pop();
      if (e.array) b.closeArray();
      else b.closeObject();
      if (b.mirrorPending) resolveMirror(b, e.value, stack[stack.length - 1]?.value);
      continue;
    }
    if (e.array) {
      const i = e.i++;
      feed(resolveToJSON((e.value as unknown[])[i], String(i)), String(i));
    } else {
      const k = e.keys![e.i++]!;
      // toJSON first: a member whose toJSON gives undefined is skipped, as JSON.stringify does.
      const v = resolveToJSON((e.value as Record<string, unknown>)[k], k);
      if (isSkipped(v)) continue;
      if (!b.key(k)) continue;
      feed(v, k);
    }
  }
}

function omitRemaining(b: BudgetEvents, e: Entry): void {
  if (e.array) {
    b.omitRest(e.n - e.i);
    return;
  }
  const obj = e.value as Record<string, unknown>;
  const keys: string[] = [];
  for (let i = e.i; i < e.n; i++) {
    const k = e.keys![i]!;
    if (!isSkipped(obj[k])) keys.push(k);
  }
  b.omitRest(keys.length, (i) => keys[i]!);
}

/** `structure` just closed; find the candidate text block of its parent result that is its JSON. */
function resolveMirror(b: BudgetEvents, structure: unknown, result: unknown): void {
  const content = (result as { content?: unknown } | undefined)?.content;
  const found = b.mirrorBlocks.find((index) => {
    const block: unknown = Array.isArray(content) ? content[index] : undefined;
    const text = (block as { text?: unknown } | undefined)?.text;
    return typeof text === 'string' && serializationEquals(structure, text);
  });
  b.resolveMirror(found);
}
