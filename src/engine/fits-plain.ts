/**
 * Shapes the fast path (fits.ts) decides without its general walk: what counts as a plain value
 * (serialized as its own members), and the commonest result, `{content: [plain text blocks]}`
 * with at most a boolean `isError`, decided by arithmetic (its texts measured only when 6 bytes a
 * unit does not settle it).
 */
import type { ResolvedLimits } from './options.js';
import { escapedSize } from './escape-count.js';
import { textsWithinMeasures } from './text-measure.js';

/** A value `JSON.stringify` writes as its own members (an object with no `toJSON`). */
export function isPlainish(v: unknown): v is object {
  return v !== null && typeof v === 'object' && typeof (v as { toJSON?: unknown }).toJSON !== 'function';
}

/**
 * Perf: the commonest result, `{content: [plain text blocks]}` with at most a boolean `isError`,
 * decided by arithmetic, without the general walk: the checks `checkRoot` makes on this shape
 * (members allowed, blocks plain text, at depth 3) and its exact size, each text at 6 bytes a unit
 * when that settles every bound, else measured exactly (escape-count.ts). Undefined when the value
 * is not that shape (the general check then decides).
 */
export function plainTextResultFits(value: object, limits: ResolvedLimits): boolean | undefined {
  if (!plainProto(value) || limits.maxDepth < 3 || hasEnumerable(Object.prototype)) return undefined;
  let content: unknown;
  let bytes = 1; // `{`, then each member with its comma or `}`
  for (const key in value) {
    const v: unknown = (value as Record<string, unknown>)[key];
    if (key === 'content') {
      content = v;
      bytes += CONTENT_MEMBER_BYTES + 1;
    } else if (key === 'isError' && typeof v === 'boolean') {
      bytes += (v ? ISERROR_TRUE_BYTES : ISERROR_FALSE_BYTES) + 1;
    } else {
      return undefined;
    }
    if (!limits.allowedFields.has(key)) return undefined;
  }
  // Every block takes at least `{}` and a comma: a long array is left to the walk, which stops early.
  if (!Array.isArray(content) || bytes + 2 * content.length > limits.maxResultBytes) return undefined;
  bytes += content.length === 0 ? 2 : content.length + 1;
  // The frames, and each text at 6 bytes a unit (no unit takes more).
  let units = 0;
  let over = false;
  for (let i = 0; i < content.length; i++) {
    const b: unknown = content[i];
    if (!isPlainTextBlock(b)) return undefined;
    const n = b.text.length;
    if (n * 6 > limits.maxBlockBytes) over = true;
    units += n;
    bytes += TEXT_BLOCK_FRAME_BYTES + 2;
  }
  // Exactly: a text longer than the block bound (in units) cannot fit, nor can texts longer in
  // sum than the text bound; the others are measured.
  if (units > limits.maxTextBytes || bytes + units > limits.maxResultBytes) return false;
  // The text measures after the checks by length (they read the texts), stopping at the first text past a bound.
  if (limits.textMeasures.length > 0 && !textsWithinMeasures(content.map((b: { text: string }) => b.text), limits.textMeasures)) return false;
  if (!over && units * 6 <= limits.maxTextBytes && bytes + units * 6 <= limits.maxResultBytes) return true;
  let text = 0;
  for (let i = 0; i < content.length; i++) {
    const t = (content[i] as { text: string }).text;
    if (t.length > limits.maxBlockBytes) return false;
    const n = escapedSize(t);
    if (n > limits.maxBlockBytes) return false;
    text += n;
  }
  return text <= limits.maxTextBytes && bytes + text <= limits.maxResultBytes;
}

/** `"content":`, `"isError":true`, `"isError":false`. */
const CONTENT_MEMBER_BYTES = '"content":'.length;
const ISERROR_TRUE_BYTES = '"isError":true'.length;
const ISERROR_FALSE_BYTES = '"isError":false'.length;

/** An object literal's prototype (or none): serialized as its own enumerable members, nothing else. */
export function plainProto(o: object): boolean {
  const proto: unknown = Object.getPrototypeOf(o);
  return proto === Object.prototype || proto === null;
}

/** Whether anything enumerable sits on `o` (Object.prototype normally has nothing: for-in is then own-only). */
export function hasEnumerable(o: object): boolean {
  for (const _ in o) return true;
  return false;
}

/** `{"type":"text","text":""}`: the bytes of a plain text block around its text's content and quotes. */
export const TEXT_BLOCK_FRAME_BYTES = '{"type":"text","text":}'.length;

/**
 * A content block that is exactly `{type: 'text', text: string}` (own members, any order): valid
 * whatever its text, and within every bound but the text bounds (its keys and `type` are short,
 * and blocks sit at depth 3, below the smallest `maxDepth`).
 */
export function isPlainTextBlock(v: unknown): v is { type: 'text'; text: string } {
  if (!isPlainish(v) || Array.isArray(v)) return false;
  const b = v as { type?: unknown; text?: unknown };
  if (b.type !== 'text' || typeof b.text !== 'string' || !plainProto(b)) return false;
  const keys = Object.keys(b);
  return keys.length === 2 && (keys[0] === 'type' || keys[0] === 'text') && (keys[1] === 'type' || keys[1] === 'text');
}
