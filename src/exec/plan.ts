/**
 * What an action's schemas say about continuing and about receipts, read once from its zod
 * shapes: the inputs that page, window or narrow a read-only action (and which of them shrink it),
 * the output members that carry its continuation, and the members a mutation's receipt keeps.
 * The inventory quotes the same plans, so what `exec` advises and what the spec lists agree.
 */
import type { z } from 'zod';
import type { Shape } from '../tools/index.js';

/** Inputs that make the next answer smaller, in the order they are advised. */
const SHRINK_INPUTS = ['limit', 'max_bytes', 'comments_limit'] as const;
/** Inputs that say where a page or window starts (kept as given when advising a retry). */
const POSITION_INPUTS = ['cursor', 'offset', 'body_offset', 'comments_cursor'] as const;
/** Inputs that narrow what is read. */
const NARROW_INPUTS = ['path', 'query', 'q', 'match', 'ref', 'channel', 'status', 'assignee', 'label', 'field'] as const;
/** Output members that continue a page or window. */
const CURSOR_OUTPUTS = ['next_cursor', 'next_offset', 'body_next_offset', 'comments_next_cursor', 'ack_cursor'] as const;

/** How a read-only action is continued or narrowed. */
export interface ContinuationPlan {
  /** Inputs that shrink the answer (`limit`, `max_bytes`, `comments_limit`). */
  shrink: string[];
  /** Inputs that position it (`cursor`, `offset`, …). */
  position: string[];
  /** Inputs that narrow it (`path`, `query`, …). */
  narrow: string[];
  /** Output members that continue it (`next_cursor`, `next_offset`, …). */
  cursors: string[];
}

export function continuationPlanOf(input: Shape, output: Shape): ContinuationPlan {
  const has = (shape: Shape) => (k: string) => Object.hasOwn(shape, k);
  return {
    shrink: SHRINK_INPUTS.filter(has(input)),
    position: POSITION_INPUTS.filter(has(input)),
    narrow: NARROW_INPUTS.filter(has(input)),
    cursors: CURSOR_OUTPUTS.filter(has(output)),
  };
}

/** One member a receipt keeps: a scalar, the scalars of an object, or a list of scalars (head + count). */
export interface ReceiptField {
  key: string;
  kind: 'scalar' | 'object' | 'list' | 'count';
}

/** The kind of a zod schema, optional and nullable unwrapped (zod 4 `def.type`). */
function kindOf(schema: z.ZodTypeAny): string {
  let s = schema as unknown as { def: { type: string; innerType?: unknown; element?: unknown } };
  while (s.def.type === 'optional' || s.def.type === 'nullable') s = s.def.innerType as typeof s;
  if (s.def.type === 'array') {
    const el = s.def.element as { def: { type: string } };
    return ['string', 'number', 'boolean', 'enum'].includes(el.def.type) ? 'list' : 'count';
  }
  return ['string', 'number', 'boolean', 'enum', 'literal', 'null'].includes(s.def.type) ? 'scalar' : s.def.type === 'object' ? 'object' : 'count';
}

/** The receipt of a mutation: every output member, by kind (identifiers whole, lists as head + count). */
export function receiptPlanOf(output: Shape): ReceiptField[] {
  return Object.entries(output).map(([key, schema]) => ({ key, kind: kindOf(schema) as ReceiptField['kind'] }));
}

/** How a receipt field reads in the inventory. */
export function describeReceiptField(f: ReceiptField): string {
  switch (f.kind) {
    case 'scalar':
      return f.key;
    case 'object':
      return `${f.key}.* (its identifiers and scalars)`;
    case 'list':
      return `${f.key} (first entries) + ${f.key}_count`;
    default:
      return `${f.key}_count`;
  }
}
