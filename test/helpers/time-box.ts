/**
 * The time box of a property run or race loop in the suite. The suite keeps each to a few seconds;
 * `npm run test:long` runs the same tests with every box and run count scaled up
 * (MCP_BUDGET_TEST_SCALE, default 1), as the long version a change to the engine deserves.
 */
const SCALE = Math.max(1, Number(process.env.MCP_BUDGET_TEST_SCALE ?? 1) || 1);

/** fast-check parameters: at most `numRuns` runs, stopped after `ms` (both scaled). */
export function timeBox(numRuns: number, ms: number): { numRuns: number; interruptAfterTimeLimit: number } {
  return { numRuns: Math.round(numRuns * SCALE), interruptAfterTimeLimit: Math.round(ms * SCALE) };
}

/** The long run (`npm run test:long`): matrices also run their intermediate rows. */
export const LONG_RUN = SCALE > 1;

/** A race loop's duration in milliseconds (scaled). */
export function loopMs(ms: number): number {
  return Math.round(ms * SCALE);
}

/** A test's timeout that leaves room for a box of `ms`. */
export function boxTimeout(ms: number): number {
  return Math.round(ms * SCALE) + 60_000;
}
