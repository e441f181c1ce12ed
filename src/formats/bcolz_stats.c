/* bcolz_stats.c - whole-column statistics of a bcolz column (count,
 * nulls, min, max, sum, mean, empty strings, longest string) computed over
 * its decompressed chunks through the reader's public functions (see
 * bcolz_stats in bcolz.h). Native-order numbers take one tight loop per
 * chunk; other dtypes go cell by cell. */
#include "formats/bcolz.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "core/cancel.h"
#include "core/codec.h"
#include "core/npy.h"
#include "core/numbers.h"
#include "core/utf8.h"

/* Prefix *err with the file of chunk k of column col. */
static void chunk_prefix(char **err, const bcolz_table *t, size_t col,
                         uint64_t k) {
  char *fp = ds_strf("%s/data/__%llu.blp", bcolz_col_path(t, col),
                     (unsigned long long)k);
  if (fp) ds_err_prefix(err, fp);
  free(fp);
}

/* Make *v a TEXT/BYTES value holding a copy of p[0..n) in store. */
static int set_bytes(ds_buf *store, ds_value *v, ds_vtype type,
                     const uint8_t *p, size_t n) {
  store->len = 0;
  if (ds_buf_append(store, p, n) || ds_buf_reserve(store, 1)) return -1;
  v->type = type;
  v->u.s.p = store->data;
  v->u.s.n = n;
  return 0;
}

/* memcmp order of two byte strings, the shorter first on a tie. */
static int bytes_cmp(const uint8_t *a, size_t na, const uint8_t *b, size_t nb) {
  size_t m = na < nb ? na : nb;
  int c = m ? memcmp(a, b, m) : 0;
  if (c) return c;
  return na < nb ? -1 : na > nb;
}

/* Decimal text of a 128-bit integer into out[0..cap). */
static void i128_text(char *out, size_t cap, __int128 v) {
  char tmp[48];
  int neg = v < 0, n = 0;
  unsigned __int128 u = neg ? (unsigned __int128)(-(v + 1)) + 1
                            : (unsigned __int128)v;
  do {
    tmp[n++] = (char)('0' + (int)(u % 10));
    u /= 10;
  } while (u);
  size_t k = 0;
  if (neg && k + 1 < cap) out[k++] = '-';
  while (n > 0 && k + 1 < cap) out[k++] = tmp[--n];
  out[k] = 0;
}

/* Free the min/max text a stats result holds. */
void bcolz_stats_free(bcolz_stats *s) {
  ds_buf_free(&s->min_store_);
  ds_buf_free(&s->max_store_);
  memset(s, 0, sizeof *s);
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

/* The tight stats loop a dtype takes: scalar numbers in native byte order
 * as a struct-module letter (l i h b I H B d), else 0. */
static char native_num(const bcolz_dtype *dt) {
#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
  if (dt->ndim != 0 || dt->byteorder == '>') return 0;
  switch (dt->kind) {
  case 'i':
    return dt->itemsize == 8 ? 'l' : dt->itemsize == 4 ? 'i' : dt->itemsize == 2 ? 'h' : 'b';
  case 'u':
    return dt->itemsize == 4 ? 'I' : dt->itemsize == 2 ? 'H' : dt->itemsize == 1 ? 'B' : 0;
  case 'f':
    return dt->itemsize == 8 ? 'd' : 0;
  case 'b':
    return dt->itemsize == 1 ? '?' : 0;
  default:
    return 0;
  }
#else
  (void)dt;
  return 0;
#endif
}

/* Sum, min and max of a chunk of native ints (T), accumulated in ACC
 * (wide enough for a chunk) into isum and the running min MN / max MX of
 * type MT (imin/imax for signed types, umin/umax for unsigned ones). */
#define STATS_MINMAX_LOOP(T, ACC, MT, MN, MX)                    \
  do {                                                           \
    ACC acc_ = 0;                                                \
    MT mn_ = MN, mx_ = MX;                                       \
    for (uint64_t r_ = 0; r_ < rows; r_++) {                     \
      T v_;                                                      \
      memcpy(&v_, p + r_ * sizeof(T), sizeof(T));                \
      acc_ += v_;                                                \
      mn_ = v_ < mn_ ? v_ : mn_;                                 \
      mx_ = v_ > mx_ ? v_ : mx_;                                 \
    }                                                            \
    isum += acc_;                                                \
    MN = mn_;                                                    \
    MX = mx_;                                                    \
    have |= rows > 0;                                            \
  } while (0)
#define STATS_INT_LOOP(T, ACC) STATS_MINMAX_LOOP(T, ACC, int64_t, imin, imax)
#define STATS_UINT_LOOP(T) STATS_MINMAX_LOOP(T, uint64_t, uint64_t, umin, umax)

/* float64: NaN counted as null; finite values summed with Neumaier's
 * compensation. A first pass assumes no infinity (no branches but NaN);
 * a chunk where the sum stops being finite is summed again by the careful
 * loop, which keeps infinities out of the compensation. */
#define STATS_FLOAT_LOOP()                                                   \
  do {                                                                       \
    double mn_ = fmin, mx_ = fmax, sum_ = fsum, comp_ = fcomp;               \
    uint64_t nn_ = 0;                                                        \
    for (uint64_t r_ = 0; r_ < rows; r_++) {                                 \
      double v_;                                                             \
      memcpy(&v_, p + r_ * 8, 8);                                            \
      if (v_ != v_) {                                                        \
        nn_++;                                                               \
        continue;                                                            \
      }                                                                      \
      mn_ = v_ < mn_ ? v_ : mn_;                                             \
      mx_ = v_ > mx_ ? v_ : mx_;                                             \
      double t_ = sum_ + v_;                                                 \
      comp_ += fabs(sum_) >= fabs(v_) ? (sum_ - t_) + v_ : (v_ - t_) + sum_; \
      sum_ = t_;                                                             \
    }                                                                        \
    if (!isfinite(sum_) || !isfinite(comp_)) {                               \
      sum_ = fsum, comp_ = fcomp;                                            \
      for (uint64_t r_ = 0; r_ < rows; r_++) {                               \
        double v_;                                                           \
        memcpy(&v_, p + r_ * 8, 8);                                          \
        if (v_ != v_) continue;                                              \
        if (isinf(v_) || isinf(sum_)) {                                      \
          if (isinf(v_)) {                                                   \
            if (isinf(sum_) && (sum_ > 0) != (v_ > 0)) fnan_sum = 1;         \
            sum_ += v_;                                                      \
          }                                                                  \
          continue;                                                          \
        }                                                                    \
        double t_ = sum_ + v_;                                               \
        comp_ += fabs(sum_) >= fabs(v_) ? (sum_ - t_) + v_ : (v_ - t_) + sum_; \
        sum_ = t_;                                                           \
      }                                                                      \
    }                                                                        \
    have |= nn_ < rows;                                                      \
    s->nulls += nn_;                                                         \
    fmin = mn_;                                                              \
    fmax = mx_;                                                              \
    fsum = sum_;                                                             \
    fcomp = comp_;                                                           \
  } while (0)

/* A cell value v seen: widen the running [lo, hi] and note that the column
 * has a value (the per-cell loop below). */
#define TRACK(v, lo, hi)    \
  do {                      \
    if ((v) < (lo)) lo = v; \
    if ((v) > (hi)) hi = v; \
    have = 1;               \
  } while (0)

/* Statistics of one column over all its chunks (see bcolz.h). */
int bcolz_column_stats(bcolz_table *t, size_t col, bcolz_stats *s,
                       char **err) {
  memset(s, 0, sizeof *s);
  s->mean = NAN;
  if (col >= bcolz_ncols(t))
    return ds_err(err, "%s: no column %zu", bcolz_path(t), col);
  const bcolz_dtype *dt = bcolz_col_dtype(t, col);
  uint64_t nchunks = bcolz_col_nchunks(t, col);
  s->count = bcolz_nrows(t);
  if (dt->kind == 'O' || dt->ndim > 0) return 0;
  s->has_values = 1;
  int big = dt->byteorder == '>';
  char kind = dt->kind;
  __int128 isum = 0;
  int64_t imin = INT64_MAX, imax = INT64_MIN;
  uint64_t umin = UINT64_MAX, umax = 0;
  double fsum = 0, fcomp = 0, fmin = INFINITY, fmax = -INFINITY;
  int fnan_sum = 0; /* inf + -inf */
  int have = 0;
  ds_buf buf = {0}, txt = {0}, smin = {0}, smax = {0};
  buf.max = DS_MAX_VALUE_BYTES; /* the default max_value_bytes */
  int rc = -1;
  for (uint64_t k = 0; k < nchunks; k++) {
    const uint8_t *p;
    uint64_t rows;
    if (ds_cancel_check()) {
      ds_err(err, DS_CANCEL_MSG);
      goto done;
    }
    if (bcolz_chunk(t, col, k, &buf, &p, &rows, err)) goto done;
    /* native-order numbers: one tight loop per chunk */
    int done_chunk = 1;
    switch (native_num(dt)) {
    case 'l': STATS_INT_LOOP(int64_t, __int128); break;
    case 'i': STATS_INT_LOOP(int32_t, int64_t); break;
    case 'h': STATS_INT_LOOP(int16_t, int64_t); break;
    case 'b': STATS_INT_LOOP(int8_t, int64_t); break;
    case 'I': STATS_UINT_LOOP(uint32_t); break;
    case 'H': STATS_UINT_LOOP(uint16_t); break;
    case 'B': STATS_UINT_LOOP(uint8_t); break;
    case 'd': STATS_FLOAT_LOOP(); break;
    case '?': { /* bool: the count of true cells is the sum */
      uint64_t ones = 0;
      for (uint64_t r = 0; r < rows; r++) ones += p[r] != 0;
      isum += ones;
      if (rows) {
        int64_t cmin = ones < rows ? 0 : 1, cmax = ones > 0 ? 1 : 0;
        if (cmin < imin) imin = cmin;
        if (cmax > imax) imax = cmax;
        have = 1;
      }
      break;
    }
    default: done_chunk = 0; break;
    }
    if (!done_chunk && kind == 'S' && dt->ndim == 0) {
      /* NUL-padded cells order as their stripped values do, so min and max
       * are whole-cell memcmp; stripped and typed once at the end */
      size_t w = dt->itemsize;
      if (!smin.data && (ds_buf_reserve(&smin, w + 1) || ds_buf_reserve(&smax, w + 1)))
        goto oom;
      /* the first 8 bytes (big-endian) of min and max: a cell whose first
       * 8 bytes lie strictly between them is neither */
      uint64_t lo0 = 0, hi0 = 0, empty = 0, maxlen = s->max_len;
      if (have && w >= 8) lo0 = load_be64(smin.data), hi0 = load_be64(smax.data);
      for (uint64_t r = 0; r < rows; r++) {
        const uint8_t *e = p + r * w;
        size_t n = w && e[w - 1] ? w : bcolz_s_len(e, w);
        empty += n == 0;
        maxlen = n > maxlen ? n : maxlen;
        if (have && w >= 8) {
          uint64_t x0 = load_be64(e);
          if (x0 > lo0 && x0 < hi0) continue;
        }
        if (!have || cmp_cells(e, smin.data, w) < 0) memcpy(smin.data, e, w);
        if (!have || cmp_cells(e, smax.data, w) > 0) memcpy(smax.data, e, w);
        have = 1;
        if (w >= 8) lo0 = load_be64(smin.data), hi0 = load_be64(smax.data);
      }
      s->empty_count += empty;
      s->max_len = maxlen;
      continue;
    }
    if (done_chunk) continue;
    for (uint64_t r = 0; r < rows; r++) {
      const uint8_t *e = p + r * dt->atom;
      switch (kind) {
      case 'b':
      case 'i': {
        int64_t v = kind == 'b' ? e[0] != 0 : ds_load_int(e, dt->itemsize, big);
        isum += v;
        TRACK(v, imin, imax);
        break;
      }
      case 'u': {
        uint64_t v = ds_load_uint(e, dt->itemsize, big);
        isum += (__int128)v;
        TRACK(v, umin, umax);
        break;
      }
      case 'f': {
        double v = ds_load_float(e, dt->itemsize, big);
        if (isnan(v)) {
          s->nulls++;
          break;
        }
        TRACK(v, fmin, fmax);
        if (isinf(v)) {
          if (isinf(fsum) && (fsum > 0) != (v > 0)) fnan_sum = 1;
          fsum += v;
        } else if (!isinf(fsum)) {
          /* Neumaier summation */
          double tt = fsum + v;
          if (fabs(fsum) >= fabs(v))
            fcomp += (fsum - tt) + v;
          else
            fcomp += (v - tt) + fsum;
          fsum = tt;
        }
        break;
      }
      case 'M':
      case 'm': {
        int64_t v = ds_load_int(e, 8, big);
        if (v == DS_NPY_NAT) {
          s->nulls++;
          break;
        }
        TRACK(v, imin, imax);
        break;
      }
      case 'S':
      case 'U': {
        const uint8_t *vp;
        size_t vn;
        uint64_t len;
        if (kind == 'S') {
          vp = e;
          vn = bcolz_s_len(e, dt->itemsize);
          len = vn;
        } else {
          txt.len = 0;
          if (bcolz_ucs4_to_utf8(e, dt->itemsize, big, &txt, &len, err)) {
            chunk_prefix(err, t, col, k);
            goto done;
          }
          vp = txt.data ? txt.data : (const uint8_t *)"";
          vn = txt.len;
        }
        if (vn == 0) s->empty_count++;
        if (len > s->max_len) s->max_len = len;
        int lo = !have || bytes_cmp(vp, vn, s->min.u.s.p, s->min.u.s.n) < 0;
        int hi = !have || bytes_cmp(vp, vn, s->max.u.s.p, s->max.u.s.n) > 0;
        if (lo || hi) { /* the type is needed only for a new min or max */
          ds_vtype ty = kind == 'U' || ds_utf8_valid(vp, vn) ? DS_V_TEXT : DS_V_BYTES;
          if (lo && set_bytes(&s->min_store_, &s->min, ty, vp, vn)) goto oom;
          if (hi && set_bytes(&s->max_store_, &s->max, ty, vp, vn)) goto oom;
        }
        have = 1;
        break;
      }
      }
    }
  }
  uint64_t nv = s->count - s->nulls;
  if (have && smin.data) { /* S: the min and max cells found above */
    ds_buf *cell[2] = {&smin, &smax}, *st[2] = {&s->min_store_, &s->max_store_};
    ds_value *dv[2] = {&s->min, &s->max};
    for (int i = 0; i < 2; i++) {
      size_t n = bcolz_s_len(cell[i]->data, dt->itemsize);
      ds_vtype ty = ds_utf8_valid(cell[i]->data, n) ? DS_V_TEXT : DS_V_BYTES;
      if (set_bytes(st[i], dv[i], ty, cell[i]->data, n)) goto oom;
    }
  }
  if (have) {
    switch (kind) {
    case 'b':
    case 'i':
    case 'u':
      if (kind == 'u') {
        s->min.type = umin > INT64_MAX ? DS_V_UINT : DS_V_INT;
        s->min.u.u = umin;
        s->max.type = umax > INT64_MAX ? DS_V_UINT : DS_V_INT;
        s->max.u.u = umax;
      } else {
        s->min.type = s->max.type = DS_V_INT;
        s->min.u.i = imin;
        s->max.u.i = imax;
      }
      if (isum >= INT64_MIN && isum <= INT64_MAX) {
        s->sum.type = DS_V_INT;
        s->sum.u.i = (int64_t)isum;
      } else {
        i128_text(s->sum_text_, sizeof s->sum_text_, isum);
        s->sum.type = DS_V_BIGINT;
        s->sum.u.s.p = (const uint8_t *)s->sum_text_;
        s->sum.u.s.n = strlen(s->sum_text_);
      }
      s->mean = (double)isum / (double)nv;
      s->has_mean = 1;
      break;
    case 'f': {
      double sum = fnan_sum ? NAN : isinf(fsum) ? fsum : fsum + fcomp;
      s->min.type = s->max.type = s->sum.type = DS_V_FLOAT;
      s->min.u.f = fmin;
      s->max.u.f = fmax;
      s->sum.u.f = sum;
      s->mean = sum / (double)nv;
      s->has_mean = 1;
      break;
    }
    case 'm':
    case 'M':
      s->tmin = imin;
      s->tmax = imax;
      if (kind == 'm') {
        s->min.type = s->max.type = DS_V_INT;
        s->min.u.i = imin;
        s->max.u.i = imax;
      } else {
        ds_buf *st[2] = {&s->min_store_, &s->max_store_};
        ds_value *dv[2] = {&s->min, &s->max};
        int64_t tv[2] = {imin, imax};
        for (int i = 0; i < 2; i++) {
          st[i]->len = 0;
          if (ds_npy_datetime_iso(st[i], tv[i], dt->unit, dt->mult, err)) {
            ds_err_prefix(err, bcolz_col_path(t, col));
            goto done;
          }
          dv[i]->type = DS_V_TEXT;
          dv[i]->u.s.p = st[i]->data;
          dv[i]->u.s.n = st[i]->len;
        }
      }
      break;
    default:
      break;
    }
  }
  rc = 0;
  goto done;
oom:
  ds_err(err, "out of memory");
done:
  ds_buf_free(&buf);
  ds_buf_free(&txt);
  ds_buf_free(&smin);
  ds_buf_free(&smax);
  return rc;
}
