/**
 * The byte source: bounds a JSON document that arrives as bytes, in any chunking, with memory
 * that does not grow with the input.
 *
 * Small inputs (up to the fit window) are parsed into a value and take the in-memory path, which
 * is faster there and makes "fits means unchanged" exact. As soon as the input is known to be
 * larger than any result that could fit, the buffered bytes are replayed into a tokenizer that
 * drives the budgeter directly, and the rest streams through it.
 */
import { createHash, type Hash } from 'node:crypto';
import { boundJson, type BoundedJson } from './bound.js';
import { Budgeter, type RootKind } from './budgeter.js';
import { ValueCapture } from './capture.js';
import type { ResolvedLimits } from './options.js';
import type { ChunkSink } from './output.js';
import type { BudgetEvents, JsonEvents } from './events.js';
import { CanonicalJsonHash, TextValueHash } from './mirror-canon.js';
import type { SkipState } from './skip-scan.js';
import { Tokenizer } from './tokenizer.js';

/** Pieces fed to the fit-window tokenizer are at most this long, so a huge chunk never decodes whole. */
const FIT_SLICE_BYTES = 64 * 1024;

/** Depth of the root object in the tokenizer's stack: its members' values are written by `writeMember`. */
const MEMBER_DEPTH = 1;

/** Raw bytes held while deciding whether the input can fit: a bound on whitespace, not on content. */
export function fitWindowBytes(limits: ResolvedLimits): number {
  return Math.max(4 * limits.maxResultBytes, 1024 * 1024);
}

export class ByteBudget {
  private fit: { tok: Tokenizer; capture: ValueCapture; chunks: Buffer[]; bytes: number } | undefined;
  private bound: { tok: Tokenizer; budgeter: Budgeter; events: MirrorHashing } | undefined;
  private readonly window: number;

  constructor(
    private readonly limits: ResolvedLimits,
    private readonly root: RootKind = 'auto',
    private readonly sink?: ChunkSink,
  ) {
    this.window = fitWindowBytes(limits);
    const capture = new ValueCapture(limits.maxResultBytes, true);
    this.fit = { tok: new Tokenizer(captureEvents(capture)), capture, chunks: [], bytes: 0 };
  }

  /** Bytes consumed so far. */
  get offset(): number {
    return this.fit !== undefined ? this.fit.tok.offset : this.bound!.tok.offset;
  }

  write(chunk: Uint8Array): void {
    this.feed(chunk, -1);
  }

  /**
   * Feed bytes of the value of a member of the root object (its key and colon were written; the
   * value starts in `chunk`, or started before it). Returns how many bytes of `chunk` the value
   * took when it ended in it (the rest is not taken), or -1 when it took them all and goes on.
   * Perf: a caller that must know where the value ends (the proxy's envelope scan) learns it from
   * the tokenizer instead of skip-scanning the same bytes a second time.
   */
  writeMember(chunk: Uint8Array): number {
    return this.feed(chunk, MEMBER_DEPTH);
  }

  /**
   * The skip scanner's state inside the member value being written (see {@link writeMember}), at
   * the input taken so far: a reader can skip the rest of that value itself from here.
   */
  memberSkipState(st: SkipState): void {
    (this.fit !== undefined ? this.fit.tok : this.bound!.tok).skipStateIn(MEMBER_DEPTH, st);
  }

  private feed(chunk: Uint8Array, stopDepth: number): number {
    const f = this.fit;
    if (f === undefined) return this.bound!.tok.writeUntil(chunk, stopDepth);
    for (let at = 0; at < chunk.length; at += FIT_SLICE_BYTES) {
      const slice = chunk.subarray(at, Math.min(chunk.length, at + FIT_SLICE_BYTES));
      const took = f.tok.writeUntil(slice, stopDepth);
      // Only the bytes taken are kept for the replay.
      const piece = Buffer.from(took < 0 ? slice : slice.subarray(0, took));
      f.chunks.push(piece);
      f.bytes += piece.length;
      const over = f.capture.over || f.capture.inexact || f.bytes > this.window;
      if (over) this.switchToStream();
      if (took >= 0) return at + took;
      if (over) {
        if (at + FIT_SLICE_BYTES >= chunk.length) return -1;
        const rest = this.bound!.tok.writeUntil(chunk.subarray(at + FIT_SLICE_BYTES), stopDepth);
        return rest < 0 ? -1 : at + FIT_SLICE_BYTES + rest;
      }
    }
    return -1;
  }

  /** The input is complete: returns the bounded JSON (empty when a sink received it). */
  end(): BoundedJson {
    const f = this.fit;
    if (f !== undefined) {
      f.tok.end();
      return boundJson(f.capture.value, this.limits, this.root, this.sink);
    }
    const b = this.bound!;
    b.tok.end();
    const report = b.budgeter.finish();
    return {
      json: this.sink === undefined ? b.budgeter.toString() : '',
      unchanged: false,
      truncated: report !== undefined,
      report,
    };
  }

  private switchToStream(): void {
    const chunks = this.fit!.chunks;
    this.fit = undefined;
    const budgeter = new Budgeter(this.limits, this.root, this.sink);
    const events = new MirrorHashing(budgeter);
    const tok = new Tokenizer(events);
    events.tok = tok;
    this.bound = { tok, budgeter, events };
    for (const c of chunks) tok.write(c);
  }
}

function captureEvents(c: ValueCapture): JsonEvents {
  return {
    openObject: () => (c.open(false), true),
    openArray: () => (c.open(true), true),
    closeObject: () => c.close(),
    closeArray: () => c.close(),
    key: (k) => (c.key(k), true),
    stringStart: () => (c.stringStart(), true),
    stringChunk: (s) => (c.stringChunk(s), true),
    stringEnd: () => c.stringEnd(),
    scalar: (raw) => c.scalar(raw),
  };
}

const OPEN_BRACE = 0x7b;
const OPEN_BRACKET = 0x5b;

/**
 * Forwards events to the budgeter and answers its text-mirror question from bytes: a content
 * block's text that starts with `{` or `[` is hashed as its value (escapes resolved), and the
 * `structuredContent` bytes as `JSON.stringify` would write their parse (`mirror-canon.ts`).
 * Equal digests mean what the in-memory path's comparison means: the text is the structure's JSON.
 */
class MirrorHashing implements JsonEvents {
  tok!: Tokenizer;
  /** A block's text is read as a mirror candidate; `text` is its hash, made when the tap first feeds it. */
  private textOpen = false;
  private text: { h: Hash; value: TextValueHash } | undefined;
  private textFirstPending = false;
  /** Digest of each candidate block's whole text, by block index. */
  private readonly digests = new Map<number, string>();
  private structure: { h: Hash; canon: CanonicalJsonHash } | undefined;

  constructor(private readonly b: BudgetEvents) {}

  get canSkipRest(): boolean {
    return this.b.canSkipRest;
  }

  omitRest(n: number): void {
    this.b.omitRest(n);
  }

  openObject(): boolean {
    return this.opened(this.b.openObject());
  }

  openArray(): boolean {
    return this.opened(this.b.openArray());
  }

  private opened(kept: boolean): boolean {
    if (kept && this.b.mirroring && this.structure === undefined) {
      const h = createHash('sha1');
      const canon = new CanonicalJsonHash(h);
      this.structure = { h, canon };
      this.tok.setTap((bytes) => canon.push(bytes));
    }
    return kept;
  }

  closeObject(): void {
    this.b.closeObject();
    this.closed();
  }

  closeArray(): void {
    this.b.closeArray();
    this.closed();
  }

  private closed(): void {
    if (this.structure === undefined || this.b.mirroring) return;
    this.tok.setTap(undefined);
    const { h, canon } = this.structure;
    canon.end();
    const digest = canon.broken ? undefined : h.digest('hex');
    this.structure = undefined;
    const block = digest === undefined ? undefined : this.b.mirrorBlocks.find((i) => this.digests.get(i) === digest);
    this.digests.clear();
    this.b.resolveMirror(block);
  }

  key(name: string): boolean {
    return this.b.key(name);
  }

  scalar(raw: string): void {
    this.b.scalar(raw);
  }

  stringStart(): boolean {
    const kept = this.b.stringStart();
    if (kept && this.b.inBlockText) {
      // Perf: the hash is made once bytes reach it; a text refused at its first chunk makes none.
      this.textOpen = true;
      this.textFirstPending = true;
      this.tok.setTap((bytes) => this.textHash().value.push(bytes));
    }
    return kept;
  }

  private textHash(): { h: Hash; value: TextValueHash } {
    if (this.text === undefined) {
      const h = createHash('sha1');
      this.text = { h, value: new TextValueHash(h) };
    }
    return this.text;
  }

  stringChunk(chunk: string): boolean {
    if (this.textFirstPending && chunk.length > 0) {
      this.textFirstPending = false;
      const first = chunk.charCodeAt(0);
      if (first !== OPEN_BRACE && first !== OPEN_BRACKET) this.stopText(true);
    }
    return this.b.stringChunk(chunk);
  }

  stringEnd(): void {
    if (!this.textOpen) {
      this.b.stringEnd();
      return;
    }
    this.tok.setTap(undefined); // the last bytes go to the hash
    const text = this.textHash();
    this.stopText();
    text.value.end();
    const before = this.b.mirrorBlocks.length;
    this.b.stringEnd();
    const blocks = this.b.mirrorBlocks;
    // A text with a lone surrogate equals no JSON text: it gets no digest, so it matches nothing.
    if (blocks.length > before && !text.value.lone) this.digests.set(blocks[blocks.length - 1]!, text.h.digest('hex'));
  }

  /** `drop`: the text is no candidate, so what it read since the last tap call is not hashed. */
  private stopText(drop = false): void {
    if (drop) this.tok.dropTap();
    else this.tok.setTap(undefined);
    this.textOpen = false;
    this.text = undefined;
    this.textFirstPending = false;
  }
}
