/**
 * The contract between a page's source (a directory walk, git, the team store) and what measures
 * the page: the source offers items in order and stops at the first the meter refuses, which is
 * where `has_more` and the cursor continue. How an item is weighed is the measurer's business:
 * `serve` weighs it as it will be sent (its JSON in the structure and its line in the text block,
 * src/tools/page-sizer.ts); direct calls (unit tests, benchmarks) weigh its JSON alone.
 */

/** One page's measure as it fills. */
export interface PageMeter {
  /**
   * Take `item` when the page still fits with it, and count it; `false` when it does not (it is
   * the first of the next page). The first item is always taken: a source sizes its fields so
   * that one item fits. `extraBytes`: JSON the item adds elsewhere in the page (a raw form of a
   * name in a side list), counted in the structure and in the text.
   */
  take(item: unknown, extraBytes?: number): boolean;
  /** Items taken. */
  readonly count: number;
}

/** Makes the meter of one page. */
export interface PageSizer {
  /**
   * A meter for a page whose own fields are those of `fixed` (at their largest: the longest cursor
   * it may carry, every flag and note set) and whose items go in the array member `list` (empty
   * or absent in `fixed`).
   */
  meter(fixed: object, list: string): PageMeter;
}

/** Sizing by the items' JSON alone under `maxPageBytes` (the page's JSON) and `maxItems`. */
export function jsonSizer(maxPageBytes: number, maxItems = Infinity): PageSizer {
  return {
    meter(fixed: object): PageMeter {
      let bytes = Buffer.byteLength(JSON.stringify(fixed));
      let count = 0;
      return {
        take(item: unknown, extraBytes = 0): boolean {
          const size = Buffer.byteLength(JSON.stringify(item)) + 1 + extraBytes;
          if (count > 0 && (count >= maxItems || bytes + size > maxPageBytes)) return false;
          bytes += size;
          count++;
          return true;
        },
        get count() {
          return count;
        },
      };
    },
  };
}

/** No bound beyond the caller's `limit` (direct calls that page by count only). */
export const UNBOUNDED_SIZER: PageSizer = jsonSizer(Infinity);
