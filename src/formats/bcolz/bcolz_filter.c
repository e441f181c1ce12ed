/* bcolz_filter.c - comparisons on decompressed bcolz cells (see
 * bcolz_filter.h): SQLite's ordering of numbers (integers and floats
 * compared exactly, NaN / NaT are NULL) and of BINARY text, with tight
 * loops for the common little-endian int and float columns. */
#include "formats/bcolz/bcolz_filter.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "core/numbers.h"
#include "core/utf8.h"

#define CMP_NULL 2 /* the cell is NULL: no comparison holds */
#define CMP_KEEP 3 /* cannot judge here: keep the cell */

/* 1 when cells of dt can be compared here (*text: compared as text). */
int bcolz_filter_supported(const bcolz_dtype *dt, int bytes_blob, int *text) {
  *text = 0;
  if (dt->ndim != 0) return 0;
  switch (dt->kind) {
  case 'b': case 'i': case 'u': case 'f': case 'm':
    return 1;
  case 'S':
    *text = 1;
    return !bytes_blob;
  case 'U':
    *text = 1;
    return 1;
  default:
    return 0;
  }
}

/* Decode UTF-8 s[0..n) into code points; 0 when not valid UTF-8. */
static int utf8_decode(const uint8_t *s, size_t n, uint32_t *out, size_t *nout) {
  size_t k = 0, skip;
  for (size_t i = 0; i < n;) {
    if (!ds_utf8_seq(s + i, n - i, &skip)) return 0;
    out[k++] = ds_utf8_next(s, n, &i);
  }
  *nout = k;
  return 1;
}

/* Decode a text bound into code points for a U column; -1 out of memory. */
int bcolz_filter_prepare(bcolz_filter *f, const bcolz_dtype *dt) {
  f->cp = NULL;
  f->ncp = 0;
  f->cp_ok = 0;
  if (dt->kind != 'U' || f->vkind != BCOLZ_FV_TEXT) return 0;
  f->cp = malloc((f->n ? f->n : 1) * sizeof *f->cp);
  if (!f->cp) return -1;
  f->cp_ok = utf8_decode(f->s, f->n, f->cp, &f->ncp);
  return 0;
}

/* Free what bcolz_filter_prepare allocated. */
void bcolz_filter_free(bcolz_filter *f) {
  free(f->cp);
  f->cp = NULL;
}

/* -1, 0, 1: integer i against double d (not NaN), exactly. */
static int cmp_i_d(int64_t i, double d) {
  if (d < -9223372036854775808.0) return 1;
  if (d >= 9223372036854775808.0) return -1;
  int64_t t = (int64_t)d; /* d truncated: exact in this range */
  if (i != t) return i < t ? -1 : 1;
  double frac = d - (double)t;
  return frac > 0 ? -1 : frac < 0 ? 1 : 0;
}

/* A numeric cell against the bound: -1, 0, 1, CMP_NULL or CMP_KEEP. */
static int cmp_num(const bcolz_filter *f, const bcolz_dtype *dt, const uint8_t *p) {
  int64_t i = 0;
  double d = 0;
  int k = bcolz_cell_number(dt, p, &i, &d);
  if (k == BCOLZ_NUM_NULL) return CMP_NULL;
  if (k != BCOLZ_NUM_INT && k != BCOLZ_NUM_FLOAT) return CMP_KEEP;
  if (f->vkind == BCOLZ_FV_INT) {
    if (k == BCOLZ_NUM_INT) return i < f->i ? -1 : i > f->i;
    return -cmp_i_d(f->i, d);
  }
  if (f->vkind != BCOLZ_FV_FLOAT) return CMP_KEEP;
  if (k == BCOLZ_NUM_INT) return cmp_i_d(i, f->f);
  return d < f->f ? -1 : d > f->f;
}

/* An S or U cell against a text bound in BINARY order (U by code point):
 * -1, 0, 1, or CMP_KEEP when SQLite must judge (non-ASCII S, bad UCS-4). */
static int cmp_text(const bcolz_filter *f, const bcolz_dtype *dt, const uint8_t *p) {
  if (f->vkind != BCOLZ_FV_TEXT) return CMP_KEEP;
  if (dt->kind == 'S') {
    size_t n = bcolz_s_len(p, dt->itemsize);
    if (!ds_ascii(p, n)) return CMP_KEEP; /* maybe a BLOB: SQLite decides */
    size_t m = n < f->n ? n : f->n;
    int c = m ? memcmp(p, f->s, m) : 0;
    if (c) return c < 0 ? -1 : 1;
    return n < f->n ? -1 : n > f->n;
  }
  if (!f->cp_ok) return CMP_KEEP;
  int big = dt->byteorder == '>';
  size_t n = dt->itemsize / 4;
  while (n > 0 && ds_load_uint(p + 4 * (n - 1), 4, big) == 0) n--;
  for (size_t j = 0; j < n; j++) {
    uint32_t u = (uint32_t)ds_load_uint(p + 4 * j, 4, big);
    if (u > 0x10FFFF || (u >= 0xD800 && u <= 0xDFFF)) return CMP_KEEP;
    if (j >= f->ncp) return 1;
    if (u != f->cp[j]) return u < f->cp[j] ? -1 : 1;
  }
  return n < f->ncp ? -1 : 0;
}

/* 1 when comparison result c satisfies op. */
static int holds(bcolz_op op, int c) {
  switch (op) {
  case BCOLZ_OP_EQ: return c == 0;
  case BCOLZ_OP_LT: return c < 0;
  case BCOLZ_OP_LE: return c <= 0;
  case BCOLZ_OP_GT: return c > 0;
  case BCOLZ_OP_GE: return c >= 0;
  default: return 1;
  }
}

/* 1 when the cell may satisfy the filter (0 only when it surely does not). */
int bcolz_filter_test(const bcolz_filter *f, const bcolz_dtype *dt, const uint8_t *p) {
  int text = dt->kind == 'S' || dt->kind == 'U';
  if (f->op == BCOLZ_OP_ISNULL || f->op == BCOLZ_OP_NOTNULL) {
    int64_t i;
    double d;
    int null = !text && bcolz_cell_number(dt, p, &i, &d) == BCOLZ_NUM_NULL;
    return f->op == BCOLZ_OP_ISNULL ? null : !null;
  }
  if (f->vkind == BCOLZ_FV_ANY) return 1;
  if (f->vkind == BCOLZ_FV_NONE) return 0;
  int c = text ? cmp_text(f, dt, p) : cmp_num(f, dt, p);
  if (c == CMP_KEEP) return 1;
  if (c == CMP_NULL) return 0;
  return holds(f->op, c);
}

/* A tight loop over native cells of type T against bound V for each op. */
#define SCAN_NATIVE(T, V)                                                   \
  do {                                                                      \
    const T v_ = (V);                                                       \
    const uint8_t *b_ = base;                                               \
    switch (f->op) {                                                        \
    case BCOLZ_OP_EQ: SCAN_OP(T, ==, v_, b_); break;                        \
    case BCOLZ_OP_LT: SCAN_OP(T, <, v_, b_); break;                         \
    case BCOLZ_OP_LE: SCAN_OP(T, <=, v_, b_); break;                        \
    case BCOLZ_OP_GT: SCAN_OP(T, >, v_, b_); break;                         \
    case BCOLZ_OP_GE: SCAN_OP(T, >=, v_, b_); break;                        \
    default: break;                                                         \
    }                                                                       \
  } while (0)
#define SCAN_OP(T, OP, v, b)                                                \
  for (uint64_t r_ = from; r_ < to; r_++) {                                 \
    T x_;                                                                   \
    memcpy(&x_, (b) + r_ * sizeof(T), sizeof(T));                           \
    if (x_ OP v) return r_;                                                 \
  }                                                                         \
  return to

/* 1 when cells of dt are in the host's byte order (memcpy gives the value). */
static int native_order(const bcolz_dtype *dt) {
#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
  return dt->byteorder != '>';
#else
  return dt->byteorder == '>' || dt->itemsize == 1;
#endif
}

/* The first row in [from, to) whose cell may satisfy the filter, or to. */
uint64_t bcolz_filter_scan(const bcolz_filter *f, const bcolz_dtype *dt,
                           const uint8_t *base, uint64_t from, uint64_t to) {
  int cmp_op = f->op <= BCOLZ_OP_GE;
  if (cmp_op && f->vkind == BCOLZ_FV_NONE) return to;
  if (cmp_op && f->vkind == BCOLZ_FV_ANY) return from;
  if (cmp_op && dt->ndim == 0 && native_order(dt)) {
    /* NaN cells fail every comparison, as NULL does in SQL */
    if (dt->kind == 'f' && dt->itemsize == 8 &&
        (f->vkind == BCOLZ_FV_FLOAT ||
         (f->vkind == BCOLZ_FV_INT && f->i >= -(INT64_C(1) << 53) && f->i <= INT64_C(1) << 53)))
      SCAN_NATIVE(double, f->vkind == BCOLZ_FV_FLOAT ? f->f : (double)f->i);
    if (dt->kind == 'i' && f->vkind == BCOLZ_FV_INT) {
      if (dt->itemsize == 8) SCAN_NATIVE(int64_t, f->i);
      if (dt->itemsize == 4 && f->i >= INT32_MIN && f->i <= INT32_MAX)
        SCAN_NATIVE(int32_t, (int32_t)f->i);
    }
  }
  for (uint64_t r = from; r < to; r++)
    if (bcolz_filter_test(f, dt, base + r * dt->atom)) return r;
  return to;
}
