/**
 * The event contract between a source and the budgeter, written once. Two sources produce these
 * events: the in-memory walk (walk.ts) and the byte tokenizer (tokenizer.ts, driven by
 * byte-source.ts). The budgeter (budgeter.ts) implements {@link BudgetEvents}; any consumer of
 * the tokenizer (the fit-window capture, `apply`'s validator) implements {@link JsonEvents}.
 *
 * ## Events, in document order
 *
 * | JSON | events | answer | the source then |
 * | --- | --- | --- | --- |
 * | `{` … `}` | `openObject()` … `closeObject()` | `openObject` false: omitted | skips the whole object: no member events, no `closeObject` |
 * | `[` … `]` | `openArray()` … `closeArray()` | `openArray` false: omitted | skips the whole array: no item events, no `closeArray` |
 * | `"k":` (object member) | `key(name)`, then the value's events | false: member omitted | skips the value: no events for it |
 * | `"…"` (string value) | `stringStart()`, `stringChunk(s)`*, `stringEnd()` | `stringStart` false: omitted | skips the string: no chunks, no `stringEnd` |
 * | | | `stringChunk` false: cut | may skip the rest of the string unseen, but still calls `stringEnd()` |
 * | number, `true`, `false`, `null` | `scalar(raw)` | — | — |
 * | rest of a container | (nothing per child) | `canSkipRest` / `topClosed` true | may skip the container's remaining children, calls `omitRest(n)` with their count, then `close*()` |
 *
 * - **Order.** Events arrive in document order. Within an object, each member is `key` then the
 *   value's events; keys are whole strings (never chunked). A string's content may arrive in any
 *   number of `stringChunk` calls (the tokenizer splits where its input buffers end; the walk
 *   sends one), each a whole number of UTF-16 units, decoded (escapes resolved); a surrogate pair
 *   may be split across chunks. Every `open*` the consumer kept gets exactly one matching
 *   `close*`. The root is one value; no event follows its close.
 * - **"Skip" answers are binding and final.** A false answer means the consumer will never see
 *   that value: the source must not feed its events, and may skip it as cheaply as it can (the
 *   walk does not descend; the tokenizer switches to the skip scanner, which builds nothing). No
 *   consumer may rely on seeing what it refused. A false answer never throws away what was
 *   already accepted: rollback of a partly kept value (a block that turns out not to fit) is the
 *   consumer's business, not the source's.
 * - **Bulk skipping is optional.** `canSkipRest` (and, for the walk, `topClosed`) is read only
 *   between children of the innermost container, before the next child (for an object: before
 *   its next key). When it is true the source may stop feeding that container's children and
 *   call `omitRest(n)` once with how many it skipped, then close the container. A source that
 *   ignores it and feeds every child gets the same output (the consumer refuses each child).
 *   Only the walk passes `keyAt` (for pointers to skipped members); the tokenizer uses bulk
 *   skipping only when `canSkipRest` says no more pointers are wanted.
 * - **Errors.** The consumer may throw `BudgetError` from any event (an envelope that is a
 *   request, a root that is not an object); the source propagates it and stops. The source
 *   throws `INVALID_JSON` for bytes that are not JSON, naming the byte offset.
 * - **Who calls what, when.** Only the source calls events, one at a time, never re-entrantly.
 *   The consumer may call back into its source only through the source's own hooks during an
 *   event (the tokenizer's `setTap`, used by the byte source to hash a text block and the
 *   structure). After the root closes, the owner (not the source) calls `finish()`.
 * - **The text mirror verdict.** When `structuredContent` closes and {@link BudgetEvents.mirrorPending}
 *   is true, the source must answer `resolveMirror(block)` before feeding the next event: the
 *   index of the candidate block (`mirrorBlocks`) whose whole original text is exactly the JSON
 *   of the structure, or undefined. The walk compares values; the byte source compares hashes of
 *   the bytes (it records them while `inBlockText` and `mirroring` are true).
 */

/** The events a source produces, with the answers that steer it. See the table above. */
export interface JsonEvents {
  /** `{`: false when the object is omitted (skip it whole; no `closeObject`). */
  openObject(): boolean;
  /** `[`: false when the array is omitted (skip it whole; no `closeArray`). */
  openArray(): boolean;
  /** `}` of a kept object. */
  closeObject(): void;
  /** `]` of a kept array. */
  closeArray(): void;
  /** An object member's key, whole and decoded: false when the member is omitted (skip its value). */
  key(name: string): boolean;
  /** Start of a string value: false when omitted (no chunks, no `stringEnd`). */
  stringStart(): boolean;
  /** Decoded content of the current string: false once cut (the rest may be skipped; `stringEnd` still follows). */
  stringChunk(chunk: string): boolean;
  /** End of a started string. */
  stringEnd(): void;
  /** A number as written, or `true`, `false`, `null`. */
  scalar(raw: string): void;
  /** True when the innermost container takes no more children and wants no more pointers. */
  readonly canSkipRest?: boolean;
  /** Account for `n` further children of the innermost container, skipped unseen. */
  omitRest?(n: number): void;
}

/**
 * The budgeter as its sources see it: the events plus the hooks for bulk skipping and for the
 * text mirror's verdict. Both sources are written against this type, not against the class.
 */
export interface BudgetEvents extends JsonEvents {
  /** A whole string value: `stringStart`, one `stringChunk`, `stringEnd` (the in-memory source). */
  string(value: string): void;
  /** True when the innermost container takes no more children (its rest may be skipped). */
  readonly topClosed: boolean;
  readonly canSkipRest: boolean;
  /** `n` further children of the innermost closed container, skipped; `keyAt(i)` names object members. */
  omitRest(n: number, keyAt?: (i: number) => string): void;
  /** After `structuredContent` closed: a candidate block waits for the source's verdict. */
  readonly mirrorPending: boolean;
  /** Indexes in `content` of the cut text blocks that may mirror `structuredContent`. */
  readonly mirrorBlocks: readonly number[];
  /** The verdict: the candidate block whose text was exactly the structure's JSON, or undefined. */
  resolveMirror(block: number | undefined): void;
  /** True while `structuredContent` is being bounded as the rebuild of a text mirror. */
  readonly mirroring: boolean;
  /** True while the current string is a content block's `text` (a possible mirror). */
  readonly inBlockText: boolean;
}
