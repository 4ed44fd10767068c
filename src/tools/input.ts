/**
 * A tool's input as `serve` and `exec` accept it: the declared members and no other. An unknown
 * argument is refused with the names the tool takes and the nearest one (a `description` where the
 * tool takes `body` once created a task with an empty body and said nothing). One schema serves the
 * tool's own call, its `tools/list` entry (`additionalProperties: false`) and its `exec` action.
 */
import { z } from 'zod';
import type { Shape } from './pipeline.js';

/** Levenshtein distance (insert, delete, substitute), two rows; names are short. */
export function editDistance(a: string, b: string): number {
  let prev = Array.from({ length: b.length + 1 }, (_, j) => j);
  for (let i = 1; i <= a.length; i++) {
    const cur = [i];
    for (let j = 1; j <= b.length; j++) {
      cur[j] = Math.min(prev[j]! + 1, cur[j - 1]! + 1, prev[j - 1]! + (a[i - 1] === b[j - 1] ? 0 : 1));
    }
    prev = cur;
  }
  return prev[b.length]!;
}

/** The names closest to `name` by edit distance (case-folded; ties by name), at most `count`. */
export function nearestNames(name: string, names: Iterable<string>, count: number): string[] {
  const folded = name.toLowerCase();
  return [...names]
    .map((n) => ({ n, d: editDistance(folded, n.toLowerCase()) }))
    .sort((a, b) => a.d - b.d || (a.n < b.n ? -1 : 1))
    .slice(0, count)
    .map((x) => x.n);
}

/** Unknown argument names quoted in a refusal, at most (a client may send thousands). */
const MAX_NAMED_UNKNOWN = 5;

/**
 * The input object of `tool`: its members, and a refusal naming what it takes for any other.
 * `refused` names arguments a model is likely to try and the tool does not take (a list tool's
 * `query`), each with the refusal that says what to do instead; they are not published, so they
 * cost no tokens in `tools/list`.
 */
export function strictInput(tool: string, shape: Shape, refused: Readonly<Record<string, string>> = {}): z.ZodObject {
  const accepted = Object.keys(shape);
  return z.strictObject(shape, {
    error: (issue) => {
      if (issue.code !== 'unrecognized_keys') return undefined;
      const all = (issue as { keys: string[] }).keys;
      // A refused key says what to do instead; any other unknown key is still named (advice on one
      // alone would leave the model to find the rest one retry at a time).
      const known = all.filter((k) => Object.hasOwn(refused, k));
      const keys = all.filter((k) => !Object.hasOwn(refused, k));
      const advice = known.slice(0, MAX_NAMED_UNKNOWN).map((k) => refused[k]!);
      if (keys.length === 0) return advice.join(' ');
      const shown = keys.slice(0, MAX_NAMED_UNKNOWN).map((k) => `\`${k.slice(0, 64)}\``).join(', ');
      // the distance on the name as shown: a key of megabytes costs no more than one of 64 characters
      const nearest = nearestNames((keys[0] ?? '').slice(0, 64), accepted, 1)[0];
      const more = keys.length > MAX_NAMED_UNKNOWN ? ` (and ${keys.length - MAX_NAMED_UNKNOWN} more)` : '';
      return [
        ...advice,
        `Unknown argument${keys.length > 1 ? 's' : ''} ${shown}${more}: ${tool} takes ${accepted.length === 0 ? 'no arguments' : accepted.map((k) => `\`${k}\``).join(', ')}` +
        (nearest !== undefined && accepted.length > 0 ? ` (nearest: \`${nearest}\`)` : ''),
      ].join(' ');
    },
  });
}
