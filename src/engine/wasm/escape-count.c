/*
 * WebAssembly SIMD (simd128) kernel of the escape counter (src/engine/escape-count.ts): the bytes
 * `JSON.stringify` writes for a string's content, from its UTF-16 code units copied into this
 * module's memory.
 *
 * Per code unit: `"` and `\` take 2 bytes, \b \t \n \f \r 2, other units below 0x20 six
 * (`\u00XX`), other ASCII 1; then UTF-8: 2 bytes below 0x800, 3 above; a surrogate pair 4; a
 * lone surrogate six (`\udXXX`, as well-formed `JSON.stringify` writes it).
 *
 * Per 16 units: their escapes on the units narrowed to bytes (a saturating compare for controls,
 * a table lookup for the short ones, two compares for the quote and the backslash); their UTF-8
 * extra only when one is not ASCII, and the surrogate pairing (each unit against its neighbours)
 * only when one is a surrogate. Sums per lane, widened before they can overflow.
 *
 * Contract with the host: p[-1] and p[n] are 0 (no surrogate), and the units of one string are
 * passed in windows that never split a surrogate pair.
 *
 * Build: scripts/build-wasm.sh (writes src/engine/wasm/escape-count-wasm.ts).
 */
#include <stdint.h>
#include <wasm_simd128.h>

/* Constants read from memory (kept opaque: V8 rebuilds a v128.const each time it is used). */
#define SPLAT16(c) {c, c, c, c, c, c, c, c, c, c, c, c, c, c, c, c}
#define SPLAT8(c) {c, c, c, c, c, c, c, c}
__attribute__((used, aligned(16))) uint8_t K8[5][16] = {
    /* 1 for the control characters with a two-byte escape: \b \t \n \f \r (0x08 0x09 0x0a 0x0c 0x0d) */
    {0, 0, 0, 0, 0, 0, 0, 0, 1, 1, 1, 0, 1, 1, 0, 0},
    SPLAT16(0x20), SPLAT16('"'), SPLAT16('\\'), SPLAT16(1)};
__attribute__((used, aligned(16))) uint16_t K16[9][8] = {SPLAT8(0xff80), SPLAT8(0x80),   SPLAT8(0x800),
                                                         SPLAT8(0xf800), SPLAT8(0xd800), SPLAT8(0xfc00),
                                                         SPLAT8(0xdc00), SPLAT8(4), SPLAT8(1)};
static const v128_t *const C8 = (const v128_t *)K8;
static const v128_t *const C16 = (const v128_t *)K16;
#define K_SHORT C8[0]
#define K_20 C8[1]
#define K_QUOTE C8[2]
#define K_BACKSLASH C8[3]
#define K_1 C8[4]
#define K_FF80 C16[0]
#define K_80 C16[1]
#define K_800 C16[2]
#define K_F800 C16[3]
#define K_D800 C16[4]
#define K_FC00 C16[5]
#define K_DC00 C16[6]
#define K_4 C16[7]
#define K_1W C16[8]

extern unsigned char __heap_base;

/* First free byte of memory: the host copies units after it (aligned up, past a zero unit). */
__attribute__((export_name("heap_base"))) uintptr_t heap_base(void) { return (uintptr_t)&__heap_base; }

/*
 * UTF-8 bytes beyond one of 8 units at q (not all ASCII): 1 below 0x800, 2 above, 1 for a
 * surrogate of a pair; a lone surrogate takes `lone` more (5 in all as `JSON.stringify` escapes
 * it, 2 as a UTF-8 encoder replaces it with U+FFFD).
 */
static inline v128_t utf8_extra(v128_t v, const uint16_t *q, v128_t lone_more) {
  v128_t e = wasm_i16x8_neg(wasm_i16x8_add(wasm_u16x8_ge(v, K_80), wasm_u16x8_ge(v, K_800)));
  v128_t sur = wasm_i16x8_eq(wasm_v128_and(v, K_F800), K_D800);
  if (!wasm_v128_any_true(sur)) return e;
  v128_t hi = wasm_i16x8_eq(wasm_v128_and(v, K_FC00), K_D800);
  v128_t lo = wasm_i16x8_eq(wasm_v128_and(v, K_FC00), K_DC00);
  v128_t next_lo = wasm_i16x8_eq(wasm_v128_and(wasm_v128_load(q + 1), K_FC00), K_DC00);
  v128_t prev_hi = wasm_i16x8_eq(wasm_v128_and(wasm_v128_load(q - 1), K_FC00), K_D800);
  v128_t lone = wasm_v128_or(wasm_v128_andnot(hi, next_lo), wasm_v128_andnot(lo, prev_hi));
  /* a surrogate takes 2 bytes of its pair (one less than the 3 counted) */
  return wasm_i16x8_add(wasm_i16x8_add(e, sur), wasm_v128_and(lone, lone_more));
}

/* The scalar reference for one unit (tails shorter than 16 units), escaped or not. */
static uint32_t unit_bytes(const uint16_t *q, int escapes) {
  uint16_t c = q[0];
  if (escapes && (c == '"' || c == '\\')) return 2;
  if (escapes && c < 0x20) return (c >= 0x08 && c <= 0x0d && c != 0x0b) ? 2 : 6;
  if (c < 0x80) return 1;
  if (c < 0x800) return 2;
  if ((c & 0xfc00) == 0xd800) return (q[1] & 0xfc00) == 0xdc00 ? 2 : escapes ? 6 : 3;
  if ((c & 0xfc00) == 0xdc00) return (q[-1] & 0xfc00) == 0xd800 ? 2 : escapes ? 6 : 3;
  return 3;
}

/* Escape counts of one block of 16 units, added to the byte lanes of the three counters. */
#define ESCAPES(a, c)                                                                                   \
  do {                                                                                                  \
    v128_t v = wasm_i8x16_narrow_i16x8(a, c);                                                           \
    ctrl = wasm_i8x16_add(ctrl, wasm_u8x16_min(wasm_u8x16_sub_sat(K_20, v), K_1));                      \
    shorts = wasm_i8x16_add(shorts, wasm_i8x16_swizzle(K_SHORT, v)); /* 0 where v >= 16 */              \
    qb = wasm_i8x16_sub(qb, wasm_v128_or(wasm_i8x16_eq(v, K_QUOTE), wasm_i8x16_eq(v, K_BACKSLASH)));    \
  } while (0)

/*
 * Bytes of units p[0..n), escaped as `JSON.stringify` writes a string's content (`escapes`) or
 * UTF-8 encoded only, in chunks of up to 255 blocks of 16 units. Escapes are counted per byte lane
 * (units narrowed with signed saturation: a unit over 0x7f becomes 0x7f or a byte of 0x80 and up,
 * none escaped): control characters (5 extra, 1 for the short ones) and quotes or backslashes (1
 * extra), at most one of each a lane and a block, so a chunk stays within a byte lane; the UTF-8
 * extra is at most 10 a lane and a block (two units of 5), so a chunk stays within a 16-bit lane.
 *
 * Perf: a chunk starts in a loop over 64 units at a time that knows only ASCII (few live vectors:
 * V8 keeps them in registers; one test a 64 units) and finishes in the general loop from the first
 * 64 units that are not all ASCII.
 */
static inline __attribute__((always_inline)) uint32_t count(const uint16_t *p, uint32_t n, const int escapes) {
  const v128_t lone_more = escapes ? K_4 : K_1W;
  v128_t total = wasm_i32x4_splat(0);
  uint32_t i = 0;
  while (n - i >= 16) {
    uint32_t blocks = (n - i) / 16;
    if (blocks > 255) blocks = 255;
    const uint32_t end = i + 16 * blocks;
    v128_t ctrl = wasm_i8x16_splat(0), shorts = wasm_i8x16_splat(0), qb = wasm_i8x16_splat(0);
    v128_t wide = wasm_i16x8_splat(0);
    for (; i + 64 <= end; i += 64) {
      v128_t a0 = wasm_v128_load(p + i), c0 = wasm_v128_load(p + i + 8);
      v128_t a1 = wasm_v128_load(p + i + 16), c1 = wasm_v128_load(p + i + 24);
      v128_t a2 = wasm_v128_load(p + i + 32), c2 = wasm_v128_load(p + i + 40);
      v128_t a3 = wasm_v128_load(p + i + 48), c3 = wasm_v128_load(p + i + 56);
      v128_t any = wasm_v128_or(wasm_v128_or(wasm_v128_or(a0, c0), wasm_v128_or(a1, c1)),
                                wasm_v128_or(wasm_v128_or(a2, c2), wasm_v128_or(a3, c3)));
      if (wasm_v128_any_true(wasm_v128_and(any, K_FF80))) break;
      if (escapes) {
        ESCAPES(a0, c0);
        ESCAPES(a1, c1);
        ESCAPES(a2, c2);
        ESCAPES(a3, c3);
      }
    }
    for (; i < end; i += 16) {
      v128_t a = wasm_v128_load(p + i), c = wasm_v128_load(p + i + 8);
      if (escapes) ESCAPES(a, c);
      if (wasm_v128_any_true(wasm_v128_and(wasm_v128_or(a, c), K_FF80)))
        wide = wasm_i16x8_add(wide, wasm_i16x8_add(utf8_extra(a, p + i, lone_more), utf8_extra(c, p + i + 8, lone_more)));
    }
    v128_t esc = wasm_i16x8_sub(wasm_i16x8_mul(wasm_u16x8_extadd_pairwise_u8x16(ctrl), wasm_i16x8_splat(5)),
                                wasm_i16x8_shl(wasm_u16x8_extadd_pairwise_u8x16(shorts), 2));
    esc = wasm_i16x8_add(esc, wasm_u16x8_extadd_pairwise_u8x16(qb));
    total = wasm_i32x4_add(total, wasm_u32x4_extadd_pairwise_u16x8(esc));
    total = wasm_i32x4_add(total, wasm_u32x4_extadd_pairwise_u16x8(wide));
  }
  /* one byte a unit so far, plus what the lanes summed */
  uint32_t bytes = i + wasm_u32x4_extract_lane(total, 0) + wasm_u32x4_extract_lane(total, 1) +
                   wasm_u32x4_extract_lane(total, 2) + wasm_u32x4_extract_lane(total, 3);
  for (; i < n; i++) bytes += unit_bytes(p + i, escapes);
  return bytes;
}

/* Bytes `JSON.stringify` writes for units p[0..n) (without the quotes). */
__attribute__((export_name("measure"))) uint32_t measure(const uint16_t *p, uint32_t n) { return count(p, n, 1); }

/* UTF-8 bytes of units p[0..n) as an encoder writes them (a lone surrogate as U+FFFD, 3 bytes). */
__attribute__((export_name("utf8_length"))) uint32_t utf8_length(const uint16_t *p, uint32_t n) { return count(p, n, 0); }
