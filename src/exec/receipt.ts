/**
 * A mutation's receipt, built from its result by its output schema's plan (see `plan.ts`), for a
 * result of any size: scalars and the scalars of nested objects are kept whole or left out (a cut
 * identifier names something else), lists keep their first entries within a byte budget plus the
 * full count, and lists of objects only their count. The caller can drop entries, then fields,
 * until the answer fits the server's budget.
 */
import type { ResolvedLimits } from '../engine/index.js';
import type { ReceiptField } from './plan.js';

/** Sizes of a receipt, in UTF-8 bytes of JSON. */
export const RECEIPT_LIMITS = Object.freeze({
  /** One kept string at most (escaped, with quotes); longer ones are left out whole. */
  stringBytes: 1024,
  /** The first entries of one list together. */
  listBytes: 4 * 1024,
  /** Scalars kept from one nested object. */
  objectFields: 16,
});

type Scalar = string | number | boolean | null;

/** A receipt being fitted: its fields, and a way to shed the least identifying part. */
export interface Receipt {
  fields: Record<string, Scalar | Scalar[] | Record<string, Scalar>>;
  /** Drop one list entry (the last of the last list), else the last field; false when empty. */
  drop(): boolean;
}

function scalar(v: unknown, maxBytes: number): Scalar | undefined {
  if (v === null || typeof v === 'number' || typeof v === 'boolean') return v;
  if (typeof v === 'string' && Buffer.byteLength(JSON.stringify(v)) <= maxBytes) return v;
  return undefined;
}

export function receiptOf(plan: readonly ReceiptField[], result: Record<string, unknown>, limits: ResolvedLimits): Receipt {
  const maxString = Math.min(RECEIPT_LIMITS.stringBytes, limits.maxStringBytes - 16);
  const fields: Receipt['fields'] = {};
  const lists: Scalar[][] = [];
  for (const f of plan) {
    const v = result[f.key];
    if (v === undefined) continue;
    if (f.kind === 'scalar') {
      const s = scalar(v, maxString);
      if (s !== undefined) fields[f.key] = s;
    } else if (f.kind === 'object' && v !== null && typeof v === 'object' && !Array.isArray(v)) {
      const inner: Record<string, Scalar> = {};
      let n = 0;
      for (const [k, x] of Object.entries(v)) {
        const s = scalar(x, maxString);
        if (s === undefined || n >= RECEIPT_LIMITS.objectFields) continue;
        inner[k] = s;
        n++;
      }
      fields[f.key] = inner;
    } else if (Array.isArray(v)) {
      if (f.kind === 'list') {
        const head: Scalar[] = [];
        let bytes = 0;
        for (const x of v) {
          const s = scalar(x, maxString);
          if (s === undefined) break;
          bytes += Buffer.byteLength(JSON.stringify(s)) + 1;
          if (bytes > RECEIPT_LIMITS.listBytes || head.length >= limits.maxItems) break;
          head.push(s);
        }
        fields[f.key] = head;
        lists.push(head);
      }
      fields[`${f.key}_count`] = v.length;
    }
  }
  return {
    fields,
    drop(): boolean {
      for (let i = lists.length - 1; i >= 0; i--) {
        if (lists[i]!.length > 0) {
          lists[i]!.pop();
          return true;
        }
      }
      const keys = Object.keys(fields);
      if (keys.length === 0) return false;
      delete fields[keys[keys.length - 1]!];
      return true;
    },
  };
}
