/**
 * The skip scanner: finds where a JSON value (or the rest of a container) ends without tokenizing
 * it. It tracks only strings, escapes and bracket depth, and in bulk mode counts the commas at the
 * container's own depth. Pure function over bytes plus a small resumable state, so that a faster
 * implementation can stand in for it with the same contract.
 */

/** Resumable scanner state; create with {@link newSkipState}. */
export interface SkipState {
  /** Open brackets inside the skipped region. */
  depth: number;
  inString: boolean;
  /** The next byte is escaped (a string ended a buffer on an odd backslash). */
  escape: boolean;
  /** Counting the rest of a container: stop at its closing bracket. */
  bulk: boolean;
  /** Bulk: commas seen at depth 0. */
  commas: number;
  /** Bulk: a value started at depth 0 since the last comma. */
  sawValue: boolean;
}

export function newSkipState(bulk: boolean, inString: boolean): SkipState {
  return { depth: 0, inString, escape: false, bulk, commas: 0, sawValue: false };
}

/** Returned when the buffer ended before the skipped region did (the state says where). */
export const SKIP_MORE = -1;

/**
 * Scan `buf` from `start`. Returns the index just after the skipped value (after its closing
 * bracket or its closing quote), or in bulk mode the index of the container's own closing bracket
 * (not consumed), or {@link SKIP_MORE}. A closing bracket at depth 0 outside bulk mode returns
 * `-(index + 2)` (an error the caller reports).
 */
export type SkipScan = (buf: Uint8Array, start: number, st: SkipState) => number;

const C_QUOTE = 1;
const C_OPEN = 2;
const C_CLOSE = 3;
const C_COMMA = 4;
const C_VALUE = 5;
/** Byte classes while skipping: only quotes and brackets matter. */
const CLASS_SKIP = new Uint8Array(256);
CLASS_SKIP[0x22] = C_QUOTE;
CLASS_SKIP[0x7b] = C_OPEN;
CLASS_SKIP[0x5b] = C_OPEN;
CLASS_SKIP[0x7d] = C_CLOSE;
CLASS_SKIP[0x5d] = C_CLOSE;
/** Byte classes while counting a closed container's children at its own depth. */
const CLASS_BULK = new Uint8Array(256);
for (let c = 0x21; c < 0x100; c++) CLASS_BULK[c] = C_VALUE;
for (let c = 0; c < 256; c++) if (CLASS_SKIP[c] !== 0) CLASS_BULK[c] = CLASS_SKIP[c]!;
CLASS_BULK[0x2c] = C_COMMA;

/** Reference implementation in JavaScript. */
export const scanSkipJs: SkipScan = (buf, start, st) => {
  const n = buf.length;
  const bulk = st.bulk;
  let i = start;
  let depth = st.depth;
  let inString = st.inString;
  let escape = st.escape;
  const save = (): void => {
    st.depth = depth;
    st.inString = inString;
    st.escape = escape;
  };
  while (i < n) {
    if (inString) {
      if (escape) {
        escape = false;
        i++;
        continue;
      }
      // Perf: jump to the next quote natively, then look back for escaping backslashes.
      const q = buf.indexOf(0x22, i);
      if (q === -1) {
        let bs = 0;
        for (let k = n - 1; k >= i && buf[k] === 0x5c; k--) bs++;
        escape = bs % 2 === 1;
        i = n;
        break;
      }
      let bs = 0;
      for (let k = q - 1; k >= i && buf[k] === 0x5c; k--) bs++;
      i = q + 1;
      if (bs % 2 === 1) continue; // an escaped quote
      inString = false;
      if (depth === 0 && !bulk) {
        save();
        return i;
      }
      continue;
    }
    // Perf: outside strings most bytes need nothing; the tight loop passes them.
    const table = bulk && depth === 0 ? CLASS_BULK : CLASS_SKIP;
    let c = buf[i]!;
    let k = table[c]!;
    while (k === 0) {
      if (++i === n) break;
      c = buf[i]!;
      k = table[c]!;
    }
    if (i === n) break;
    if (k === C_QUOTE) {
      inString = true;
      if (bulk && depth === 0) st.sawValue = true;
    } else if (k === C_OPEN) {
      if (bulk && depth === 0) st.sawValue = true;
      depth++;
    } else if (k === C_CLOSE) {
      if (depth === 0) {
        save();
        return bulk ? i : -(i + 2);
      }
      depth--;
      if (depth === 0 && !bulk) {
        save();
        return i + 1;
      }
    } else if (k === C_COMMA) {
      st.commas++;
      st.sawValue = false;
    } else {
      st.sawValue = true;
    }
    i++;
  }
  save();
  return SKIP_MORE;
};
