/**
 * The text mirror in the budgeter (structure first; the pure parts are in text-mirror.ts): a cut
 * text block that starts with `{` becomes a candidate, the structure after candidates is bounded
 * on the bytes they lend it, and the source's verdict rewrites the candidate that mirrored it (or
 * empties the others to give the lent bytes back).
 */
import { BudgeterBlocks } from './budgeter-blocks.js';
import type { Str } from './budgeter-state.js';
import { emptied, MAX_MIRROR_CANDIDATES, rewriteMirror, summaryNeed, type MirrorCandidate, type MirrorRewrite, type RewriteRoom } from './text-mirror.js';

const OPEN_BRACE = 0x7b;

export abstract class BudgeterMirror extends BudgeterBlocks {
  /** Whether the current string, once ended cut, becomes a mirror candidate. */
  protected mayMirror(s: Str): boolean {
    return s.pin !== undefined && s.first === OPEN_BRACE && !this.mirrorDone && this.candidates.length < MAX_MIRROR_CANDIDATES;
  }

  /**
   * Bytes held back while the structure is bounded: what the summary will need, less the bytes of
   * the candidates (they are rewritten or emptied afterwards); negative when they are lent.
   */
  protected mirrorReserve(): number {
    let lent = 0;
    for (const c of this.candidates) lent += c.raw;
    return summaryNeed(this.candidates, this.textRoom()) - lent;
  }

  protected endMirror(): void {
    const m = this.mirror!;
    this.mirrorRange = { from: m.from, to: this.out.length };
    if (m.spent) this.exhausted = true;
    this.mirror = undefined;
  }

  /** After `structuredContent` ends: is there a mirror candidate waiting for the source's verdict? */
  get mirrorPending(): boolean {
    return this.mirrorRange !== undefined && this.candidates.length > 0;
  }

  /** Indexes in `content` of the cut text blocks that may mirror `structuredContent`. */
  get mirrorBlocks(): readonly number[] {
    return this.candidates.map((c) => c.block);
  }

  /**
   * The source's verdict: which candidate block (if any) was exactly the JSON of
   * `structuredContent`. That block's cut text is replaced by the JSON of the bounded structure,
   * or the summary when that does not fit (see text-mirror.ts); the other candidates stay as cut.
   */
  resolveMirror(block: number | undefined): void {
    const r = this.mirrorRange;
    const c = r === undefined || block === undefined ? undefined : this.candidates.find((x) => x.block === block);
    const others = this.candidates.filter((x) => x !== c);
    if (c !== undefined) {
      let spare = this.room();
      for (const o of others) spare += o.raw;
      this.rewriteCandidate(c, rewriteMirror(this.out.read(r!.from, r!.to), c, { ...this.textRoom(), room: spare }));
    }
    // Bytes lent to the structure come back from the other candidates, last first: emptied.
    for (let i = others.length - 1; i >= 0 && this.room() < 0; i--) this.rewriteCandidate(others[i]!, emptied(others[i]!));
    for (const x of this.candidates) this.out.release(x.pin);
    this.candidates = [];
    this.mirrorRange = undefined;
  }

  private rewriteCandidate(c: MirrorCandidate, rw: MirrorRewrite): void {
    this.out.replaceRange(c.from, c.to, rw.text, rw.delta);
    this.textUsed += rw.delta;
    for (let i = 0; i < rw.countDeltas.length; i++) this.textCounts[i]! += rw.countDeltas[i]!;
  }

  /** What the text bounds still allow a rewrite, bytes and every text measure. */
  private textRoom(): Omit<RewriteRoom, 'room'> {
    const l = this.limits;
    return {
      maxBlockBytes: l.maxBlockBytes,
      textLeft: l.maxTextBytes - this.textUsed,
      measures: l.textMeasures,
      countsLeft: l.textMeasures.map((m, i) => m.bound - this.textCounts[i]!),
    };
  }

  /** True while `structuredContent` is being bounded as the rebuild of a text mirror. */
  get mirroring(): boolean {
    return this.mirror !== undefined;
  }

  /** True while the current string is a content block's `text` (a possible mirror). */
  get inBlockText(): boolean {
    return this.str?.pin !== undefined;
  }
}
