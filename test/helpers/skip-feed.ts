/**
 * Helpers for the skip-scanner tests: feed buffers in turn, compare the WebAssembly kernel with the
 * JavaScript reference, cut bytes into pieces, and build a scanner state.
 */
import { expect } from 'vitest';
import { SKIP_MORE, newSkipState, scanSkipJs, type SkipScan, type SkipState } from '../../src/engine/skip-scan.js';
import { scanSkipWasm } from '../../src/engine/skip-scan-wasm.js';

/** What a scanner returned for each buffer fed, and its final state. */
export interface Outcome {
  results: number[];
  state: SkipState;
}

/** Feed `chunks` in turn (the first from `start`) until a result other than SKIP_MORE. */
export function feed(scan: SkipScan, chunks: Uint8Array[], start: number, init: SkipState): Outcome {
  const state = { ...init };
  const results: number[] = [];
  for (let c = 0; c < chunks.length; c++) {
    const r = scan(chunks[c]!, c === 0 ? start : 0, state);
    results.push(r);
    if (r !== SKIP_MORE) break;
  }
  return { results, state };
}

/** The kernel gives the reference's results and final state; returns the reference's outcome. */
export function same(chunks: Uint8Array[], start: number, init: SkipState): Outcome {
  const want = feed(scanSkipJs, chunks, start, init);
  expect(feed(scanSkipWasm, chunks, start, init)).toEqual(want);
  return want;
}

/** `bytes` cut at `cuts` (taken mod its length + 1, deduplicated). */
export function split(bytes: Uint8Array, cuts: number[]): Uint8Array[] {
  const at = [...new Set(cuts.map((c) => c % (bytes.length + 1)))].sort((a, b) => a - b);
  const out: Uint8Array[] = [];
  let prev = 0;
  for (const c of [...at, bytes.length]) {
    out.push(bytes.subarray(prev, c));
    prev = c;
  }
  return out;
}

/** A scanner state outside any string, with `s` over it. */
export const state = (s: Partial<SkipState>): SkipState => ({ ...newSkipState(false, false), ...s });
