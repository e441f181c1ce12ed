/* bcolz_stats_chunk.c - the per-chunk loops of the bcolz column statistics
 * (see bcolz_stats_chunk.h). Integers keep four running minima and maxima
 * so that their compare-and-move chains overlap; bools are counted eight
 * bytes at a time; float64 adds with TwoSum, which yields exactly the
 * rounding error Neumaier's branch computes, without the branch; S cells
 * compare their first 8 bytes with those of the min and max before any
 * whole-cell comparison, and measure their length only while a longer one
 * is possible. */
#include "formats/bcolz/bcolz_stats_chunk.h"

#include <math.h>
#include <string.h>

#include "formats/bcolz/bcolz.h"

/* Empty runs: min above max, sums zero. */
void bcolz_int_run_init(bcolz_int_run *r) {
  memset(r, 0, sizeof *r);
  r->imin = INT64_MAX;
  r->imax = INT64_MIN;
  r->umin = UINT64_MAX;
  r->umax = 0;
}

void bcolz_float_run_init(bcolz_float_run *r) {
  memset(r, 0, sizeof *r);
  r->min = INFINITY;
  r->max = -INFINITY;
}

/* Load cell i of native type T at p. */
#define LOAD_CELL(T, p, i) \
  __extension__({ T v_; memcpy(&v_, (p) + (i) * sizeof(T), sizeof(T)); v_; })

/* NAME(run, p, rows): add rows cells of native type T at p: their sum
 * (ADD(v) adds cell v to the local `sum` of type ACC, folded into
 * run->sum by FOLD) and the running min MN / max MX of type MT, in two
 * lanes (even and odd cells) merged at the end, four cells a step. */
#define DEFINE_INT_ADD(NAME, T, ACC, ADD, FOLD, MT, MN, MX)              \
  static void NAME(bcolz_int_run *run, const uint8_t *p, uint64_t rows) { \
    ACC sum = 0;                                                          \
    int64_t carry = 0;                                                    \
    MT l0 = run->MN, l1 = l0, h0 = run->MX, h1 = h0;                      \
    uint64_t r = 0;                                                       \
    for (; r + 4 <= rows; r += 4) {                                       \
      T v0 = LOAD_CELL(T, p, r), v1 = LOAD_CELL(T, p, r + 1);             \
      T v2 = LOAD_CELL(T, p, r + 2), v3 = LOAD_CELL(T, p, r + 3);         \
      ADD(v0);                                                            \
      ADD(v1);                                                            \
      ADD(v2);                                                            \
      ADD(v3);                                                            \
      l0 = v0 < l0 ? v0 : l0;                                             \
      l1 = v1 < l1 ? v1 : l1;                                             \
      h0 = v0 > h0 ? v0 : h0;                                             \
      h1 = v1 > h1 ? v1 : h1;                                             \
      l0 = v2 < l0 ? v2 : l0;                                             \
      l1 = v3 < l1 ? v3 : l1;                                             \
      h0 = v2 > h0 ? v2 : h0;                                             \
      h1 = v3 > h1 ? v3 : h1;                                             \
    }                                                                     \
    for (; r < rows; r++) {                                               \
      T v = LOAD_CELL(T, p, r);                                           \
      ADD(v);                                                             \
      l0 = v < l0 ? v : l0;                                               \
      h0 = v > h0 ? v : h0;                                               \
    }                                                                     \
    run->MN = l1 < l0 ? l1 : l0;                                          \
    run->MX = h1 > h0 ? h1 : h0;                                          \
    FOLD;                                                                 \
    run->have |= rows > 0;                                                \
  }

/* Narrow cells: a chunk's sum fits in 64 bits (under 2^32 rows). */
#define ADD_PLAIN(v) (sum += (v))
#define FOLD_PLAIN ((void)carry, run->sum += sum)
/* int64 cells: 64-bit adds; one that overflows wraps by 2^64, which
 * `carry` counts (the branch is never taken on ordinary data). */
#define ADD_CARRY(v) \
  do {               \
    if (__builtin_expect(__builtin_add_overflow(sum, (v), &sum), 0))      \
      carry += (v) < 0 ? -1 : 1;                                          \
  } while (0)
#define FOLD_CARRY (run->sum += (__int128)carry * ((__int128)1 << 64) + sum)

DEFINE_INT_ADD(add_i64, int64_t, int64_t, ADD_CARRY, FOLD_CARRY, int64_t, imin, imax)
DEFINE_INT_ADD(add_i32, int32_t, int64_t, ADD_PLAIN, FOLD_PLAIN, int64_t, imin, imax)
DEFINE_INT_ADD(add_i16, int16_t, int64_t, ADD_PLAIN, FOLD_PLAIN, int64_t, imin, imax)
DEFINE_INT_ADD(add_i8, int8_t, int64_t, ADD_PLAIN, FOLD_PLAIN, int64_t, imin, imax)
DEFINE_INT_ADD(add_u32, uint32_t, uint64_t, ADD_PLAIN, FOLD_PLAIN, uint64_t, umin, umax)
DEFINE_INT_ADD(add_u16, uint16_t, uint64_t, ADD_PLAIN, FOLD_PLAIN, uint64_t, umin, umax)
DEFINE_INT_ADD(add_u8, uint8_t, uint64_t, ADD_PLAIN, FOLD_PLAIN, uint64_t, umin, umax)

#if defined(__GNUC__) && defined(__x86_64__)
/* With AVX2 (checked at run time; the build targets plain x86-64), four
 * cells a step in 64-bit lanes: the sum as the sums of each cell's low and
 * high 32 bits (unsigned) less 2^64 per negative cell, so no lane can
 * overflow within a chunk; min and max by compare and blend. */
#define BCOLZ_STATS_AVX2 1
typedef int64_t v4i64 __attribute__((vector_size(32)));
typedef uint64_t v4u64 __attribute__((vector_size(32)));

/* NAME(run, p, rows): add the first rows / 4 * 4 cells of type T (signed
 * when SIGNED) at p into run's sum and MN / MX; returns the cells done. */
#define DEFINE_INT_ADD_AVX2(NAME, T, SIGNED, MN, MX)                             \
  __attribute__((target("avx2"))) static uint64_t NAME(bcolz_int_run *run,      \
                                                        const uint8_t *p,       \
                                                        uint64_t rows) {        \
    typedef T t4 __attribute__((vector_size(4 * sizeof(T))));                   \
    const v4i64 low32 = {0xffffffff, 0xffffffff, 0xffffffff, 0xffffffff};        \
    v4i64 lo = {INT64_MAX, INT64_MAX, INT64_MAX, INT64_MAX};                     \
    v4i64 hi = {INT64_MIN, INT64_MIN, INT64_MIN, INT64_MIN};                     \
    v4i64 slo = {0}, shi = {0}, neg = {0};                                       \
    uint64_t n = rows / 4 * 4;                                                   \
    for (uint64_t r = 0; r < n; r += 4) {                                        \
      t4 raw;                                                                    \
      memcpy(&raw, p + r * sizeof(T), sizeof raw);                               \
      v4i64 v = __builtin_convertvector(raw, v4i64);                             \
      slo += v & low32;                                                          \
      shi += (v4i64)((v4u64)v >> 32);                                            \
      neg += v < 0; /* -1 per negative cell */                                   \
      v4i64 m = v < lo;                                                          \
      lo = (v & m) | (lo & ~m);                                                  \
      m = v > hi;                                                                \
      hi = (v & m) | (hi & ~m);                                                  \
    }                                                                            \
    if (!n) return 0;                                                            \
    __int128 sum = 0;                                                            \
    int64_t l = lo[0], h = hi[0];                                                \
    for (int i = 0; i < 4; i++) {                                                \
      sum += ((__int128)(uint64_t)shi[i] << 32) + (uint64_t)slo[i] +             \
             (__int128)neg[i] * ((__int128)1 << 64);                             \
      l = lo[i] < l ? lo[i] : l;                                                 \
      h = hi[i] > h ? hi[i] : h;                                                 \
    }                                                                            \
    run->sum += sum;                                                             \
    if (SIGNED) {                                                                \
      run->MN = l < (int64_t)run->MN ? (__typeof__(run->MN))l : run->MN;         \
      run->MX = h > (int64_t)run->MX ? (__typeof__(run->MX))h : run->MX;         \
    } else { /* the cells are below 2^32: l and h are not negative */           \
      run->MN = (uint64_t)l < (uint64_t)run->MN ? (__typeof__(run->MN))l : run->MN; \
      run->MX = (uint64_t)h > (uint64_t)run->MX ? (__typeof__(run->MX))h : run->MX; \
    }                                                                            \
    run->have = 1;                                                               \
    return n;                                                                    \
  }

DEFINE_INT_ADD_AVX2(add_i64_avx2, int64_t, 1, imin, imax)
DEFINE_INT_ADD_AVX2(add_i32_avx2, int32_t, 1, imin, imax)
DEFINE_INT_ADD_AVX2(add_i16_avx2, int16_t, 1, imin, imax)
DEFINE_INT_ADD_AVX2(add_u32_avx2, uint32_t, 0, umin, umax)
DEFINE_INT_ADD_AVX2(add_u16_avx2, uint16_t, 0, umin, umax)

/* 1 when this CPU runs AVX2 code. */
static int have_avx2(void) { return __builtin_cpu_supports("avx2"); }
#endif

/* Bools: the count of non-zero bytes is the sum; min 0 unless every cell
 * is true, max 1 when one is. Eight cells at a time: a byte's top bit is
 * set in nz when the byte is not zero, and the multiply adds those bits
 * up in the top byte. */
static void add_bool(bcolz_int_run *run, const uint8_t *p, uint64_t rows) {
  const uint64_t low7 = UINT64_C(0x7f7f7f7f7f7f7f7f), top = UINT64_C(0x8080808080808080);
  const uint64_t ones_bytes = UINT64_C(0x0101010101010101);
  uint64_t ones = 0, r = 0;
  for (; r + 8 <= rows; r += 8) {
    uint64_t w;
    memcpy(&w, p + r, 8);
    uint64_t nz = (((w & low7) + low7) | w) & top;
    ones += ((nz >> 7) * ones_bytes) >> 56;
  }
  for (; r < rows; r++) ones += p[r] != 0;
  run->sum += ones;
  if (rows) {
    int64_t cmin = ones < rows ? 0 : 1, cmax = ones > 0 ? 1 : 0;
    if (cmin < run->imin) run->imin = cmin;
    if (cmax > run->imax) run->imax = cmax;
    run->have = 1;
  }
}

/* Integers and bools of one chunk without AVX2 (see the header). */
int bcolz_int_run_add_plain(bcolz_int_run *r, char code, const uint8_t *p, uint64_t rows) {
  switch (code) {
  case 'l': add_i64(r, p, rows); return 0;
  case 'i': add_i32(r, p, rows); return 0;
  case 'h': add_i16(r, p, rows); return 0;
  case 'b': add_i8(r, p, rows); return 0;
  case 'I': add_u32(r, p, rows); return 0;
  case 'H': add_u16(r, p, rows); return 0;
  case 'B': add_u8(r, p, rows); return 0;
  case '?': add_bool(r, p, rows); return 0;
  default: return -1;
  }
}

/* The sum of the chunk again, one cell at a time, for a chunk whose first
 * pass stopped being finite: infinities are added to the sum alone (+inf
 * and -inf make nan_sum), so they never enter the compensation. */
static void float_sum_careful(bcolz_float_run *run, const uint8_t *p, uint64_t rows) {
  double sum = run->sum, comp = run->comp;
  for (uint64_t r = 0; r < rows; r++) {
    double v;
    memcpy(&v, p + r * 8, 8);
    if (v != v) continue;
    if (isinf(v) || isinf(sum)) {
      if (isinf(v)) {
        if (isinf(sum) && (sum > 0) != (v > 0)) run->nan_sum = 1;
        sum += v;
      }
      continue;
    }
    double t = sum + v;
    comp += fabs(sum) >= fabs(v) ? (sum - t) + v : (v - t) + sum;
    sum = t;
  }
  run->sum = sum;
  run->comp = comp;
}

/* The first pass over a float64 chunk (see bcolz_float_run_add): min,
 * max, sum and compensation in and out through four separate pointers.
 * Not inlined: seeing them side by side in the run, gcc pairs min with
 * max and sum with comp in vector registers and the loop then shuffles
 * them on every cell. Returns the NaN cells. */
__attribute__((noinline)) static uint64_t float_pass(const uint8_t *p, uint64_t rows,
                                                     double *min, double *max,
                                                     double *sum_io, double *comp_io) {
  double mn = *min, mx = *max, sum = *sum_io, comp = *comp_io;
  uint64_t nulls = 0;
  for (uint64_t r = 0; r < rows; r++) {
    double v;
    memcpy(&v, p + r * 8, 8);
    if (v != v) { /* NaN: a null */
      nulls++;
      continue;
    }
    mn = v < mn ? v : mn;
    mx = v > mx ? v : mx;
    double t = sum + v, bp = t - sum;
    comp += (sum - (t - bp)) + (v - bp);
    sum = t;
  }
  *min = mn;
  *max = mx;
  *sum_io = sum;
  *comp_io = comp;
  return nulls;
}

/* float64 of one chunk. The first pass assumes no infinity: TwoSum's
 * error term (s - (t - bp)) + (v - bp) is the exact rounding error of
 * s + v, the same number Neumaier's |s| >= |v| branch gives, so the sums
 * are those of the branchy loop; when the sum stops being finite the
 * chunk is summed again by float_sum_careful. */
void bcolz_float_run_add(bcolz_float_run *run, const uint8_t *p, uint64_t rows) {
  double sum = run->sum, comp = run->comp;
  uint64_t nulls = float_pass(p, rows, &run->min, &run->max, &sum, &comp);
  if (isfinite(sum) && isfinite(comp)) {
    run->sum = sum;
    run->comp = comp;
  } else {
    float_sum_careful(run, p, rows);
  }
  run->have |= nulls < rows;
  run->nulls += nulls;
}

/* The first 8 bytes at p as a big-endian number (their memcmp order). */
static inline uint64_t load_be64(const uint8_t *p) {
  uint64_t x;
  memcpy(&x, p, 8);
#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
  x = __builtin_bswap64(x);
#endif
  return x;
}

/* memcmp order of two w-byte cells, 8 bytes at a time. */
static inline int cmp_cells(const uint8_t *a, const uint8_t *b, size_t w) {
  size_t i = 0;
  for (; i + 8 <= w; i += 8) {
    uint64_t x, y;
    memcpy(&x, a + i, 8);
    memcpy(&y, b + i, 8);
    if (x != y) {
#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
      x = __builtin_bswap64(x);
      y = __builtin_bswap64(y);
#endif
      return x < y ? -1 : 1;
    }
  }
  return i < w ? memcmp(a + i, b + i, w - i) : 0;
}

/* 1 when the w bytes at e are all zero (an empty S cell). */
static inline int all_zero(const uint8_t *e, size_t w) {
  for (size_t i = 0; i < w; i++)
    if (e[i]) return 0;
  return 1;
}

/* A cell e that may be a new min or max (the first 8 bytes did not rule
 * it out): compare it whole and keep it. */
static void s_minmax(bcolz_s_run *run, size_t w, const uint8_t *e) {
  if (!run->have || cmp_cells(e, run->min, w) < 0) memcpy(run->min, e, w);
  if (!run->have || cmp_cells(e, run->max, w) > 0) memcpy(run->max, e, w);
  run->have = 1;
}

/* S cells of one chunk. The length of a cell counts only while it can
 * beat max_len: once a cell fills all w bytes, a cell is just tested for
 * emptiness (a non-zero first byte says no at once). Cells whose first 8
 * bytes lie strictly between those of min and max are neither. */
void bcolz_s_run_add(bcolz_s_run *run, size_t w, const uint8_t *p, uint64_t rows) {
  uint64_t empty = 0, maxlen = run->max_len, r = 0;
  /* the first rows, until min and max hold a cell (and always for w < 8) */
  for (; r < rows && (!run->have || w < 8); r++) {
    const uint8_t *e = p + r * w;
    size_t n = bcolz_s_len(e, w);
    empty += n == 0;
    maxlen = n > maxlen ? n : maxlen;
    s_minmax(run, w, e);
  }
  uint64_t lo0 = 0, hi0 = 0;
  if (r < rows) lo0 = load_be64(run->min), hi0 = load_be64(run->max);
  for (; r < rows; r++) {
    const uint8_t *e = p + r * w;
    if (maxlen < w) {
      size_t n = e[w - 1] ? w : bcolz_s_len(e, w);
      empty += n == 0;
      maxlen = n > maxlen ? n : maxlen;
    } else if (!e[0]) {
      empty += all_zero(e, w);
    }
    uint64_t x0 = load_be64(e);
    if (x0 > lo0 && x0 < hi0) continue;
    s_minmax(run, w, e);
    lo0 = load_be64(run->min);
    hi0 = load_be64(run->max);
  }
  run->empty += empty;
  run->max_len = maxlen;
}

/* Integers and bools of one chunk (see the header): AVX2 for the cells it
 * can take four at a time, then bcolz_int_run_add_plain. */
int bcolz_int_run_add(bcolz_int_run *r, char code, const uint8_t *p, uint64_t rows) {
#ifdef BCOLZ_STATS_AVX2
  if (have_avx2()) { /* four cells a step, the last few below */
    uint64_t done = 0, w = 0;
    switch (code) {
    case 'l': done = add_i64_avx2(r, p, rows), w = 8; break;
    case 'i': done = add_i32_avx2(r, p, rows), w = 4; break;
    case 'h': done = add_i16_avx2(r, p, rows), w = 2; break;
    case 'I': done = add_u32_avx2(r, p, rows), w = 4; break;
    case 'H': done = add_u16_avx2(r, p, rows), w = 2; break;
    default: break;
    }
    p += done * w;
    rows -= done;
  }
#endif
  return bcolz_int_run_add_plain(r, code, p, rows);
}
