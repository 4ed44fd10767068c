/*
 * WebAssembly SIMD (simd128) kernel of the skip scanner: the same contract as `scanSkipJs` in
 * src/engine/skip-scan.ts, over a window of bytes copied into this module's memory.
 *
 * Per 64-byte block (simdjson-style): bit masks of quotes, backslashes, brackets; backslash runs
 * of odd length escape the next byte (carried across blocks); unescaped quotes give the in-string
 * mask by prefix xor; brackets outside strings are counted, and only when the depth can reach 0
 * inside the block are its closing brackets visited (their depth from popcounts) to find where it
 * ends, and in bulk mode the depth-0 region where commas and values count.
 * A block holding a backslash outside strings (invalid JSON, where the reference ignores it) or
 * starting with the odd state "escape pending outside a string" runs through the scalar state
 * machine instead, so results match the reference on any bytes.
 *
 * Build: scripts/build-wasm.sh (writes src/engine/wasm/skip-scan-wasm.ts).
 */
#include <stdint.h>
#include <wasm_simd128.h>

typedef uint64_t u64;

/* Scanner state, shared with JS through memory (see state_ptr). */
struct State {
  int32_t depth;
  int32_t in_string;
  int32_t escape;
  int32_t bulk;
  int32_t commas; /* commas counted by this call (a delta; JS adds it) */
  int32_t saw_value;
};
static struct State S;
static uint8_t tail[64] __attribute__((aligned(16)));
/* Byte constants, read from memory (kept opaque: V8 rebuilds a v128.const each time it is used). */
#define SPLAT16(c) {c, c, c, c, c, c, c, c, c, c, c, c, c, c, c, c}
__attribute__((used, aligned(16))) uint8_t K[6][16] = {SPLAT16('"'), SPLAT16('\\'), SPLAT16(0x20),
                                                      SPLAT16('{'),  SPLAT16('}'), SPLAT16(',')};

extern unsigned char __heap_base;

__attribute__((export_name("state_ptr"))) struct State *state_ptr(void) { return &S; }
/* First free byte of memory: JS copies the window here (aligned up). */
__attribute__((export_name("heap_base"))) uintptr_t heap_base(void) { return (uintptr_t)&__heap_base; }

/* The reference state machine, one byte at a time, over p[i..end). Returns a result or -1. */
__attribute__((noinline)) static int32_t scalar(const uint8_t *p, int32_t i, int32_t end) {
  for (; i < end; i++) {
    uint8_t c = p[i];
    if (S.in_string) {
      if (S.escape) {
        S.escape = 0;
      } else if (c == '\\') {
        S.escape = 1;
      } else if (c == '"') {
        S.in_string = 0;
        if (S.depth == 0 && !S.bulk) return i + 1;
      }
      continue;
    }
    int d0 = S.bulk && S.depth == 0;
    switch (c) {
      case '"':
        S.in_string = 1;
        if (d0) S.saw_value = 1;
        break;
      case '{':
      case '[':
        if (d0) S.saw_value = 1;
        S.depth++;
        break;
      case '}':
      case ']':
        if (S.depth == 0) return S.bulk ? i : -(i + 2);
        S.depth--;
        if (S.depth == 0 && !S.bulk) return i + 1;
        break;
      case ',':
        if (d0) {
          S.commas++;
          S.saw_value = 0;
        }
        break;
      default:
        if (d0 && c > 0x20) S.saw_value = 1;
    }
  }
  return -1;
}

static inline u64 bits16(v128_t v) { return (u64)(uint16_t)wasm_i8x16_bitmask(v); }
static inline u64 bits64(v128_t a, v128_t b, v128_t c, v128_t d) {
  return bits16(a) | bits16(b) << 16 | bits16(c) << 32 | bits16(d) << 48;
}
#define EQ64(x)                                                                                    \
  bits64(wasm_i8x16_eq(v0, x), wasm_i8x16_eq(v1, x), wasm_i8x16_eq(v2, x), wasm_i8x16_eq(v3, x))


/* Positions escaped by an odd backslash run (simdjson's find_escaped); carries *prev. */
static inline u64 find_escaped(u64 backslash, u64 *prev) {
  const u64 even = 0x5555555555555555ULL;
  backslash &= ~*prev;
  u64 follows = backslash << 1 | *prev;
  u64 odd_starts = backslash & ~even & ~follows;
  u64 seq_even = odd_starts + backslash;
  *prev = seq_even < odd_starts;
  u64 invert = seq_even << 1;
  return (even ^ invert) & follows;
}

static inline u64 prefix_xor(u64 x) {
  x ^= x << 1;
  x ^= x << 2;
  x ^= x << 4;
  x ^= x << 8;
  x ^= x << 16;
  x ^= x << 32;
  return x;
}

#define SAVE()                                                                                     \
  (S.depth = depth, S.in_string = (int32_t)(prev_in & 1), S.escape = (int32_t)esc,                 \
   S.commas = commas, S.saw_value = saw)
#define LOAD()                                                                                     \
  (depth = S.depth, prev_in = S.in_string ? ~(u64)0 : 0, esc = (u64)S.escape, commas = S.commas,   \
   saw = S.saw_value)
#define RETURN_AT(r)                                                                               \
  return S.depth = 0, S.in_string = 0, S.escape = 0, S.commas = commas, S.saw_value = saw, (r)

/* Scan p[0..len) from state S. Same results as scanSkipJs. */
__attribute__((export_name("scan"))) int32_t scan(const uint8_t *p, int32_t len) {
  const v128_t quote = wasm_v128_load(K[0]), bslash = wasm_v128_load(K[1]);
  const v128_t lower = wasm_v128_load(K[2]), open_c = wasm_v128_load(K[3]);
  const v128_t close_c = wasm_v128_load(K[4]), comma_c = wasm_v128_load(K[5]);
  const int bulk = S.bulk;
  int32_t depth, commas, saw;
  u64 prev_in, esc; /* in string: all ones or 0; escape pending: 1 or 0 */
  LOAD();
  for (int32_t b = 0; b < len; b += 64) {
    const int32_t rest = len - b;
    if (esc && !prev_in) goto scalar_block; /* escape pending outside a string (odd state) */
    const uint8_t *q = p + b;
    if (rest < 64) { /* the last block, padded with spaces (which change nothing) */
      for (int k = 0; k < 64; k++) tail[k] = k < rest ? q[k] : ' ';
      q = tail;
    }
    v128_t v0 = wasm_v128_load(q), v1 = wasm_v128_load(q + 16);
    v128_t v2 = wasm_v128_load(q + 32), v3 = wasm_v128_load(q + 48);
    u64 bs = EQ64(bslash), qt = EQ64(quote);
    u64 esc_in = esc;
    u64 escaped = (bs | esc) ? find_escaped(bs, &esc) : 0;
    if (rest < 64) esc = escaped >> rest & 1; /* the padding is spaces */
    u64 qb = qt & ~escaped;
    if (prev_in && !qb) continue; /* the whole block inside a string */
    u64 ins = prefix_xor(qb) ^ prev_in;
    if (bs & ~ins) { /* a backslash outside strings: the reference ignores it */
      esc = esc_in;
      goto scalar_block;
    }
    prev_in = (u64)((int64_t)ins >> 63);
    v128_t t0 = wasm_v128_or(v0, lower), t1 = wasm_v128_or(v1, lower);
    v128_t t2 = wasm_v128_or(v2, lower), t3 = wasm_v128_or(v3, lower);
    u64 open = bits64(wasm_i8x16_eq(t0, open_c), wasm_i8x16_eq(t1, open_c), wasm_i8x16_eq(t2, open_c),
                      wasm_i8x16_eq(t3, open_c)) & ~ins;
    u64 close = bits64(wasm_i8x16_eq(t0, close_c), wasm_i8x16_eq(t1, close_c),
                       wasm_i8x16_eq(t2, close_c), wasm_i8x16_eq(t3, close_c)) & ~ins;
    int nclose = __builtin_popcountll(close);
    if (depth > nclose) { /* depth stays above 0 in this block */
      depth += __builtin_popcountll(open) - nclose;
      continue;
    }
    if (!bulk) {
      if (depth == 0) { /* a closing quote before the first bracket ends a string value */
        u64 br = open | close;
        u64 cq = qb & ~ins & (br ? (br & -br) - 1 : ~(u64)0);
        if (cq) RETURN_AT(b + __builtin_ctzll(cq) + 1);
      }
      /* Only closing brackets can end the value: the depth before each, by popcounts. */
      for (u64 c = close; c; c &= c - 1) {
        int i = __builtin_ctzll(c);
        u64 below = ((u64)1 << i) - 1;
        int before = depth + __builtin_popcountll(open & below) - __builtin_popcountll(close & below);
        if (before <= 1) RETURN_AT(before ? b + i + 1 : -(b + i + 2));
      }
      depth += __builtin_popcountll(open) - nclose;
      continue;
    }
    /* Bulk: the depth-0 region of the block, where commas and values count. It runs from the
     * block start (at depth 0) or a bracket closing to depth 0, to the next opening bracket
     * included; a closing bracket at depth 0 ends the container (and the scan). */
    u64 d0 = depth == 0 ? open ^ (open - 1) : 0;
    int ret = -1;
    for (u64 c = close; c; c &= c - 1) {
      int i = __builtin_ctzll(c);
      u64 below = ((u64)1 << i) - 1, upto = below << 1 | 1;
      int before = depth + __builtin_popcountll(open & below) - __builtin_popcountll(close & below);
      if (before == 0) {
        ret = i;
        d0 &= below;
        break;
      }
      u64 next = open & ~upto;
      d0 |= before == 1 ? (next ^ (next - 1)) & ~upto : 0;
    }
    depth += __builtin_popcountll(open) - nclose;
    if (d0) {
      /* Values: opening quotes and brackets, and the other bytes above space except commas; the
       * last two only looked at when the first do not decide sawValue. */
      u64 known = d0 & ((qb & ins) | open);
      u64 cand = d0 & ~ins & ~qb & ~open;
      u64 comma = cand ? EQ64(comma_c) & cand : 0, after = ~(u64)0;
      if (comma) {
        int last = 63 - __builtin_clzll(comma);
        commas += __builtin_popcountll(comma);
        after = ~(((u64)2 << last) - 1);
        saw = 0;
      }
      if (known & after) {
        saw = 1;
      } else if (cand & after & ~comma) {
        u64 nonws = bits64(wasm_u8x16_gt(v0, lower), wasm_u8x16_gt(v1, lower), wasm_u8x16_gt(v2, lower),
                           wasm_u8x16_gt(v3, lower));
        if (nonws & cand & after & ~comma) saw = 1;
      }
    }
    if (ret >= 0) RETURN_AT(b + ret);
    continue;
  scalar_block:
    SAVE();
    int32_t r = scalar(p, b, rest < 64 ? len : b + 64);
    if (r != -1) return r;
    LOAD();
  }
  SAVE();
  return -1;
}
