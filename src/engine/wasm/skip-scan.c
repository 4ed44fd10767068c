/*
 * WebAssembly SIMD (simd128) kernel of the skip scanner: the same contract as `scanSkipJs` in
 * src/engine/skip-scan.ts, over a window of bytes copied into this module's memory.
 *
 * Per 64-byte block (simdjson-style): bit masks of quotes, brackets and (only when the block has
 * one) backslashes; backslash runs of odd length escape the next byte (carried across blocks);
 * unescaped quotes give the in-string mask by prefix xor; brackets outside strings are counted,
 * and only when the depth can reach 0 inside the block are its closing brackets visited (the depth
 * before each from one popcount) to find where the value ends, and in bulk mode the depth-0 runs
 * where commas and values count. A block holding a backslash outside strings (invalid JSON, where
 * the reference ignores it) or starting with the odd state "escape pending outside a string" runs
 * through the scalar state machine instead, so results match the reference on any bytes.
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
/* Byte constants, read from memory (kept opaque: V8 rebuilds a v128.const each time it is used). */
#define SPLAT16(c) {c, c, c, c, c, c, c, c, c, c, c, c, c, c, c, c}
__attribute__((used, aligned(16))) uint8_t K[7][16] = {
    SPLAT16('"'), SPLAT16('\\'), SPLAT16(0x20), SPLAT16('{'), SPLAT16('}'), SPLAT16(','),
    {0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15}};

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

/* block() results besides a scan result: carry on, or hand this block to the scalar machine. */
#define GO (-1)
#define ODD (-0x7fffffff)
/* The block an ODD result refers to. */
static int32_t odd_at;

/* The state while blocks run (S is written back when they stop). */
struct Run {
  int32_t depth, commas, saw;
  u64 in_string; /* at the end of the last block: all ones or 0 */
  u64 escape;    /* 1 or 0 */
};
struct Consts {
  v128_t quote, bslash, space, open, close, comma;
};

/*
 * One 64-byte block at q, `at` bytes into the window, of which `rest` are data (fewer than 64 in
 * the last block; the others are spaces, which change nothing). Returns GO, ODD (with r->escape as
 * on entry, nothing else changed) or a scan result.
 */
static inline __attribute__((always_inline)) int32_t block(const uint8_t *q, int32_t at, int rest,
                                                            const int bulk, struct Run *r,
                                                            const struct Consts *k) {
  v128_t v0 = wasm_v128_load(q), v1 = wasm_v128_load(q + 16);
  v128_t v2 = wasm_v128_load(q + 32), v3 = wasm_v128_load(q + 48);
  v128_t e0 = wasm_i8x16_eq(v0, k->bslash), e1 = wasm_i8x16_eq(v1, k->bslash);
  v128_t e2 = wasm_i8x16_eq(v2, k->bslash), e3 = wasm_i8x16_eq(v3, k->bslash);
  u64 bs = 0, escaped = r->escape, escape_in = r->escape;
  /* Perf: most blocks have no backslash; then only a pending escape matters (its first byte). */
  if (wasm_v128_any_true(wasm_v128_or(wasm_v128_or(e0, e1), wasm_v128_or(e2, e3)))) {
    bs = bits64(e0, e1, e2, e3);
    escaped = find_escaped(bs, &r->escape);
  } else {
    r->escape = 0;
  }
  if (rest < 64) r->escape = escaped >> rest & 1; /* escapes the first padding byte */
  const v128_t quote = k->quote;
  u64 qb = EQ64(quote) & ~escaped;
  u64 in_before = r->in_string;
  if (in_before && !qb) return GO; /* the whole block inside a string */
  u64 ins = prefix_xor(qb) ^ in_before;
  if (bs & ~ins) { /* a backslash outside strings: the reference ignores it */
    r->escape = escape_in;
    return ODD;
  }
  r->in_string = (u64)((int64_t)ins >> 63);
  /* '[' | 0x20 is '{' and ']' | 0x20 is '}'. */
  const v128_t space = k->space, open_c = k->open, close_c = k->close;
  v128_t t0 = wasm_v128_or(v0, space), t1 = wasm_v128_or(v1, space);
  v128_t t2 = wasm_v128_or(v2, space), t3 = wasm_v128_or(v3, space);
  u64 open = bits64(wasm_i8x16_eq(t0, open_c), wasm_i8x16_eq(t1, open_c), wasm_i8x16_eq(t2, open_c),
                    wasm_i8x16_eq(t3, open_c)) & ~ins;
  u64 close = bits64(wasm_i8x16_eq(t0, close_c), wasm_i8x16_eq(t1, close_c),
                     wasm_i8x16_eq(t2, close_c), wasm_i8x16_eq(t3, close_c)) & ~ins;
  int depth = r->depth, nclose = __builtin_popcountll(close);
  r->depth = depth + __builtin_popcountll(open) - nclose;
  if (depth > nclose) return GO; /* the depth stays above 0 in this block */
  if (!bulk) {
    if (depth == 0) { /* a closing quote before the first bracket ends a string value */
      u64 br = open | close;
      u64 cq = qb & ~ins & (br ? (br & -br) - 1 : ~(u64)0);
      if (cq) return at + __builtin_ctzll(cq) + 1;
    }
    /* Only closing brackets can end the value. The depth before the n-th (from 0) is
     * depth - n + the opening brackets below it. */
    int base = depth;
    for (u64 c = close; c; c &= c - 1, base--) {
      u64 low = c & -c;
      int before = base + __builtin_popcountll(open & (low - 1));
      if (before <= 1) return before ? at + __builtin_ctzll(low) + 1 : -(at + __builtin_ctzll(low) + 2);
    }
    return GO;
  }
  /* Bulk: the depth-0 runs of the block, where commas and values count. One starts at the block
   * start (at depth 0) and after each bracket closing to depth 0, and runs to the next opening
   * bracket, included; a closing bracket at depth 0 ends the container (and the scan). */
  u64 starts = depth == 0, stop = ~(u64)0, c = close;
  int out = GO, base = depth;
#define BULK_CLOSE                                                                                 \
  {                                                                                                \
    u64 low = c & -c;                                                                              \
    int before = base + __builtin_popcountll(open & (low - 1));                                    \
    if (before == 0) {                                                                             \
      out = at + __builtin_ctzll(low);                                                             \
      stop = low - 1;                                                                              \
      goto runs;                                                                                   \
    }                                                                                              \
    starts |= before == 1 ? low << 1 : 0;                                                          \
    c &= c - 1, base--;                                                                            \
  }
  /* Perf: the first two outside the loop (an element of small objects closes one or two brackets
   * per block; the loop costs a stack check per turn in V8). */
  if (c) BULK_CLOSE
  if (c) BULK_CLOSE
  while (c) BULK_CLOSE
runs:;
  /* Perf: a borrow from each start runs up to the next opening bracket (runs never overlap: the
   * depth must rise again before a bracket can close to 0). */
  u64 d0 = ((open - starts) ^ open) & stop;
  if (!(starts & (starts - 1)) && d0 == (starts | starts << 1) && (starts << 1 & open) &&
      q[__builtin_ctzll(starts)] == ',') {
    /* Perf: the usual run between two elements, a comma then the next element's opening bracket
     * (the comma is outside strings: the byte after it is a bracket outside strings, and the
     * comma is no quote). */
    r->commas++;
    r->saw = 1;
  } else if (d0) {
    /* Values: opening quotes and brackets, and the other bytes above space except commas. */
    u64 val = d0 & ((qb & ins) | open);
    u64 cand = d0 & ~ins & ~qb & ~open;
    u64 comma;
    if (!(cand & (cand - 1))) { /* Perf: at most one such byte: read it */
      uint8_t ch = cand ? q[__builtin_ctzll(cand)] : 0;
      comma = ch == ',' ? cand : 0;
      val |= ch > 0x20 && ch != ',' ? cand : 0;
    } else {
      const v128_t comma_c = k->comma;
      comma = EQ64(comma_c) & cand;
      u64 other = cand & ~comma;
      if (other) { /* whitespace is at most 0x20 */
        v128_t w0 = wasm_i8x16_eq(wasm_u8x16_min(v0, space), v0);
        v128_t w1 = wasm_i8x16_eq(wasm_u8x16_min(v1, space), v1);
        v128_t w2 = wasm_i8x16_eq(wasm_u8x16_min(v2, space), v2);
        v128_t w3 = wasm_i8x16_eq(wasm_u8x16_min(v3, space), v3);
        val |= other & ~bits64(w0, w1, w2, w3);
      }
    }
    r->commas += __builtin_popcountll(comma);
    /* The last of the commas and values decides (the masks are disjoint, so the larger one holds
     * the last). */
    if (comma | val) r->saw = val > comma;
  }
  return out;
}

/*
 * The blocks of p[at..len) for one mode (inlined once per mode, so the mode is a constant).
 * p[len..len + 64) must be readable (the host reserves it); the last block is padded with spaces.
 */
static inline __attribute__((always_inline)) int32_t blocks(const uint8_t *p, int32_t at, int32_t len,
                                                             const int bulk) {
  const struct Consts k = {wasm_v128_load(K[0]), wasm_v128_load(K[1]), wasm_v128_load(K[2]),
                           wasm_v128_load(K[3]), wasm_v128_load(K[4]), wasm_v128_load(K[5])};
  struct Run r = {S.depth, S.commas, S.saw_value, S.in_string ? ~(u64)0 : 0, (u64)S.escape};
  int32_t out = GO;
  if (r.escape && !r.in_string) goto odd; /* escape pending outside a string (odd state) */
  /* Perf: two blocks per turn (the loop's own overhead is a fair share of a block's). */
  for (; at + 128 <= len; at += 128) {
    out = block(p + at, at, 64, bulk, &r, &k);
    if (out != GO) goto stop;
    out = block(p + at + 64, at + 64, 64, bulk, &r, &k);
    if (out != GO) {
      at += 64;
      goto stop;
    }
  }
  if (at + 64 <= len) {
    out = block(p + at, at, 64, bulk, &r, &k);
    if (out != GO) goto stop;
    at += 64;
  }
  if (at < len) {
    /* The last block: bytes past the window replaced by spaces. */
    __attribute__((aligned(16))) uint8_t last[64];
    const v128_t index = wasm_v128_load(K[6]), space = k.space;
    const uint8_t *q = p + at;
    for (int j = 0; j < 64; j += 16) {
      v128_t keep = wasm_i8x16_gt(wasm_i8x16_splat((int8_t)(len - at - j)), index);
      wasm_v128_store(last + j, wasm_v128_bitselect(wasm_v128_load(q + j), space, keep));
    }
    out = block(last, at, len - at, bulk, &r, &k);
    if (out != GO) goto stop;
  }
  S.depth = r.depth, S.in_string = (int32_t)(r.in_string & 1), S.escape = (int32_t)r.escape;
  S.commas = r.commas, S.saw_value = r.saw;
  return GO;
stop:
  if (out == ODD) goto odd;
  S.depth = 0, S.in_string = 0, S.escape = 0, S.commas = r.commas, S.saw_value = r.saw;
  return out;
odd:
  S.depth = r.depth, S.in_string = (int32_t)(r.in_string & 1), S.escape = (int32_t)r.escape;
  S.commas = r.commas, S.saw_value = r.saw;
  odd_at = at;
  return ODD;
}

__attribute__((noinline)) static int32_t blocks_skip(const uint8_t *p, int32_t at, int32_t len) {
  return blocks(p, at, len, 0);
}
__attribute__((noinline)) static int32_t blocks_bulk(const uint8_t *p, int32_t at, int32_t len) {
  return blocks(p, at, len, 1);
}

/*
 * Scan p[0..len) from state S; p[len..len + 64) must be readable (its bytes are ignored). Same
 * results as scanSkipJs.
 */
__attribute__((export_name("scan"))) int32_t scan(const uint8_t *p, int32_t len) {
  for (int32_t at = 0; at < len; at += 64) {
    int32_t r = S.bulk ? blocks_bulk(p, at, len) : blocks_skip(p, at, len);
    if (r != ODD) return r;
    at = odd_at;
    r = scalar(p, at, len - at < 64 ? len : at + 64);
    if (r != -1) return r;
  }
  return -1;
}
