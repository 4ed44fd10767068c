/**
 * Where a cut result's missing parts start, for an original that streamed in and is read where it
 * is held: the same comparison as `planReads` (`continuation-plan.ts`), walking the original's
 * bytes beside the bounded result. It reads what was kept and the first bytes of what was not;
 * the rest of a cut container is skipped by the skip scanner, never parsed.
 */
import type { ReadStart } from '../../engine/index.js';
import type { JsonBytes, JsonNode } from './continuation-bytes.js';
import { isObject, withoutBudgetParts } from './continuation-plan.js';

type Json = Record<string, unknown>;

/** Stops the comparison once the starts wanted are found. */
class Enough extends Error {}

/**
 * The read starts of `sent` (the bounded result as sent, with its report) against the original
 * `reader` holds; the first `most` only, when given (perf: the first start is found by reading what
 * was kept; the later ones lie past the cut part, which must be walked to reach them).
 */
export async function planReadsHeld(reader: JsonBytes, sent: Json, most = Infinity): Promise<ReadStart[]> {
  const root = await reader.node('');
  if (root === undefined || root.kind !== 'object') return [{ path: '', position: 0 }];
  // An empty `_meta` left by removing the report is kept (looking the original's up would walk
  // past the cut part): at the end of the root, one the original lacks is no start.
  const bounded = withoutBudgetParts(sent, { _meta: {} });
  const starts: ReadStart[] = [];
  const push = (s: ReadStart): void => {
    starts.push(s);
    if (starts.length >= most) throw new Enough();
  };
  try {
    return (await diff(reader, root, bounded, push)) ? starts : [{ path: '', position: 0 }];
  } catch (e) {
    if (e instanceof Enough) return starts;
    throw e;
  }
}

/** Compare the original's value at `node` with `b`, adding read starts; false: `b` is not a cut form of it. */
async function diff(r: JsonBytes, node: JsonNode, b: unknown, push: (s: ReadStart) => void): Promise<boolean> {
  const path = node.path;
  if (node.kind === 'string') {
    if (typeof b !== 'string') return false;
    const want = Buffer.byteLength(b);
    const o = (await r.text(node, 0, want + 4))!;
    if (!o.startsWith(b)) return false;
    if (o.length === b.length) return true;
    // A cut between the halves of a pair starts before the pair (the reassembly drops the half sent).
    const last = b.charCodeAt(b.length - 1);
    const split = last >= 0xd800 && last <= 0xdbff && isLow(o.charCodeAt(b.length));
    push({ path, position: split ? want - 3 : want });
    return true;
  }
  if (node.kind === 'array' || node.kind === 'object') {
    const array = node.kind === 'array';
    if (array ? !Array.isArray(b) : !isObject(b)) return false;
    const kept = array ? undefined : Object.keys(b as Json);
    const count = array ? (b as unknown[]).length : kept!.length;
    let i = 0;
    for await (const child of r.walk(node)) {
      const same = i < count && (array || (child.key !== undefined && kept![i] === child.key));
      const v = array ? (b as unknown[])[i] : same ? (b as Json)[child.key!] : undefined;
      if (!same || !(await diff(r, child.node, v, push))) {
        push({ path, position: i });
        return true;
      }
      i++;
    }
    const leftByReport = path === '' && count === i + 1 && kept![i] === '_meta' && isObject((b as Json)._meta) && Object.keys((b as Json)._meta as Json).length === 0;
    if (count > i && !leftByReport) push({ path, position: i });
    return true;
  }
  const o = await r.scalar(node);
  return Object.is(o, b) || o === b;
}

function isLow(c: number): boolean {
  return c >= 0xdc00 && c <= 0xdfff;
}
