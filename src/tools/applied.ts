/**
 * A mutation is decided by its write alone. Once the write committed (a team store method of
 * src/team/writes.ts resolved, a commit or a batch of files landed), the call is marked applied,
 * and whatever fails after it (rendering the receipt, checking it against the output schema,
 * bounding it) can only degrade the answer: the model is told the write was made, with what
 * identifies it, and not to repeat it, never that the call failed.
 */
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import type { TeamStore } from '../team/index.js';
import { writeReceiptOf } from '../team/writes.js';
import { ERROR_META_KEY } from '../shared/meta.js';

/** What a call's committed write was, and what identifies it (a task id, a commit, paths). */
export interface Applied {
  what: string;
  known: Record<string, unknown>;
}

/** `store` whose writing methods call `mark` with their receipt as they resolve (reads pass through). */
export function markingWrites(store: TeamStore, mark: (what: string, known: Record<string, unknown>) => void): TeamStore {
  return new Proxy(store, {
    get(target, key) {
      const v: unknown = Reflect.get(target, key, target);
      if (typeof v !== 'function') return v;
      const method = v as (...args: unknown[]) => unknown;
      const receipt = typeof key === 'string' ? writeReceiptOf(key) : undefined;
      if (receipt === undefined) return method.bind(target);
      return async (...args: unknown[]) => {
        const result = await method.apply(target, args);
        // Marked first, whatever the receipt does: a receipt that cannot be built (a value of an
        // unexpected shape) leaves the call applied with less said about it, never unmarked.
        let known: Record<string, unknown> = {};
        try {
          known = receipt(result, args);
        } catch {
          // the write stands; what identifies it is unknown
        }
        mark(key as string, known);
        return result;
      };
    },
  });
}

/**
 * The answer of a call whose write committed and whose answer then failed (`reason`, as the model
 * is told failures): applied, with what is known, and no advice to call again.
 */
export function appliedAnswer(applied: Applied, reason: { code: string; message: string }): CallToolResult {
  const known = Object.entries(applied.known)
    .map(([k, v]) => `${k} ${JSON.stringify(v)}`)
    .join(', ');
  const text =
    `APPLIED: the write was made${known === '' ? '' : ` (${known})`}, but its answer could not be built ` +
    `(${reason.code}: ${reason.message}). Do not repeat the call: it has taken effect. Read the item back to see its state.`;
  return { content: [{ type: 'text', text }], isError: true, _meta: { [ERROR_META_KEY]: { code: 'APPLIED', applied: true, ...applied.known } } };
}
