/**
 * The text mirror: a content block whose text is the JSON of `structuredContent` (as tools that
 * declare an output schema write it, for clients that only read text). When space is short the
 * structure comes first: it is bounded with all the room there is, then the mirror is rebuilt from
 * the bounded structure as complete JSON; when even that does not fit, the mirror becomes a short
 * marked summary (or, when the text bounds cannot hold that, an empty text). A mirror is never
 * left as JSON cut in the middle.
 *
 * Online, a mirror is recognized only after the structure has streamed past, so every cut text
 * block that starts with `{` (a structure is an object) before `structuredContent` is held as a
 * candidate; the source says at the end of the structure which one, if any, was its JSON.
 */
import type { Mark } from './output.js';
import { countText, type ActiveMeasure } from './text-measure.js';
import { escapeContent, utf8Length } from './wire.js';

/** The summary that replaces a mirror whose rebuilt JSON does not fit. Deterministic. */
export const MIRROR_SUMMARY =
  '[mcp-result-budget] The JSON text of this result did not fit the budget; its bounded data is in structuredContent.';

/** At most this many candidates are held (each pins a piece of output and, on the byte path, a hash). */
export const MAX_MIRROR_CANDIDATES = 16;

/** A cut text block that may be the mirror of the structure to come. */
export interface MirrorCandidate {
  /** Index of the block in `content`. */
  block: number;
  /** Output chunks `[from, to)` holding its (cut, escaped) text. */
  from: number;
  to: number;
  pin: Mark;
  /** Bytes of that text as written (escaped). */
  raw: number;
  /** Its count by each text measure that can cut (`limits.textMeasures`, same order). */
  counts: readonly number[];
}

/** What a candidate's text becomes, with the change in bytes it brings. */
export interface MirrorRewrite {
  text: string;
  delta: number;
  /** The change in the text's count by each text measure that can cut. */
  countDeltas: readonly number[];
}

/** Bounds a rewrite must respect, known to the budgeter when the structure closes. */
export interface RewriteRoom {
  maxBlockBytes: number;
  /** Text bytes still available if the candidate's own bytes were given back. */
  textLeft: number;
  /** Result bytes still available. */
  room: number;
  /** The text measures that can cut. */
  measures: readonly ActiveMeasure[];
  /** What each of them still allows, if the candidate's own count were given back. */
  countsLeft: readonly number[];
}

/** Whether `counts` fit in place of the candidate's under every measure. */
function countsFit(counts: readonly number[], c: MirrorCandidate, countsLeft: readonly number[]): boolean {
  for (let i = 0; i < counts.length; i++) if (counts[i]! > countsLeft[i]! + c.counts[i]!) return false;
  return true;
}

/**
 * The candidate's new text: the escaped JSON of the bounded structure when it fits, else the
 * summary when it fits, else the empty string (which always fits: it only gives bytes back).
 */
export function rewriteMirror(structureJson: string, c: MirrorCandidate, bounds: RewriteRoom): MirrorRewrite {
  for (const plain of [structureJson, MIRROR_SUMMARY]) {
    const text = escapeContent(plain);
    const size = utf8Length(text);
    if (size > bounds.maxBlockBytes || size > bounds.textLeft + c.raw || size - c.raw > bounds.room) continue;
    const counts = countText(bounds.measures, plain);
    if (countsFit(counts, c, bounds.countsLeft)) return { text, delta: size - c.raw, countDeltas: counts.map((n, i) => n - c.counts[i]!) };
  }
  return emptied(c);
}

/** A candidate emptied: its bytes and counts given back. */
export function emptied(c: MirrorCandidate): MirrorRewrite {
  return { text: '', delta: -c.raw, countDeltas: c.counts.map((n) => -n) };
}

/**
 * Bytes the summary will need once the structure is bounded: its size when the text bounds allow
 * it in place of some candidate, else 0 (that candidate would be emptied).
 */
export function summaryNeed(candidates: readonly MirrorCandidate[], bounds: Omit<RewriteRoom, 'room'>): number {
  const size = utf8Length(escapeContent(MIRROR_SUMMARY));
  const counts = countText(bounds.measures, MIRROR_SUMMARY);
  for (const c of candidates) if (size <= bounds.maxBlockBytes && size <= bounds.textLeft + c.raw && countsFit(counts, c, bounds.countsLeft)) return size;
  return 0;
}
