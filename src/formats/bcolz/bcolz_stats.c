/* bcolz_stats.c - whole-column statistics of a bcolz column (count,
 * nulls, min, max, sum, mean, empty strings, longest string) computed over
 * its decompressed chunks through the reader's public functions (see
 * bcolz_stats in bcolz.h). Native-order numbers take one tight loop per
 * chunk; other dtypes go cell by cell. */
#include "formats/bcolz/bcolz.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "core/cancel.h"
#include "core/codec.h"
#include "core/npy.h"
#include "core/numbers.h"
#include "core/utf8.h"
#include "formats/bcolz/bcolz_stats_chunk.h"

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
  bcolz_int_run ir; /* ints, uints, bools, datetimes */
  bcolz_float_run fr; /* floats */
  bcolz_int_run_init(&ir);
  bcolz_float_run_init(&fr);
  bcolz_s_run sr = {0}; /* native S */
  int have = 0; /* a value seen by the per-cell loop */
  char code = native_num(dt);
  ds_buf buf = {0}, file = {0}, txt = {0}, smin = {0}, smax = {0};
  buf.max = DS_MAX_VALUE_BYTES; /* the default max_value_bytes */
  int rc = -1;
  for (uint64_t k = 0; k < nchunks; k++) {
    const uint8_t *p;
    uint64_t rows;
    if (ds_cancel_check()) {
      ds_err(err, DS_CANCEL_MSG);
      goto done;
    }
    if (bcolz_chunk_read(t, col, k, &file, &buf, &p, &rows, err)) goto done;
    /* native-order numbers: one typed pass per chunk */
    int done_chunk = 1;
    if (code == 'd')
      bcolz_float_run_add(&fr, p, rows);
    else if (!code || bcolz_int_run_add(&ir, code, p, rows))
      done_chunk = 0;
    if (!done_chunk && kind == 'S' && dt->ndim == 0) {
      /* whole-cell min and max, stripped and typed once at the end */
      size_t w = dt->itemsize;
      if (!smin.data && (ds_buf_reserve(&smin, w + 1) || ds_buf_reserve(&smax, w + 1)))
        goto oom;
      sr.min = smin.data;
      sr.max = smax.data;
      bcolz_s_run_add(&sr, w, p, rows);
      continue;
    }
    if (done_chunk) continue;
    for (uint64_t r = 0; r < rows; r++) {
      const uint8_t *e = p + r * dt->atom;
      switch (kind) {
      case 'b':
      case 'i': {
        int64_t v = kind == 'b' ? e[0] != 0 : ds_load_int(e, dt->itemsize, big);
        ir.sum += v;
        TRACK(v, ir.imin, ir.imax);
        break;
      }
      case 'u': {
        uint64_t v = ds_load_uint(e, dt->itemsize, big);
        ir.sum += (__int128)v;
        TRACK(v, ir.umin, ir.umax);
        break;
      }
      case 'f': {
        double v = ds_load_float(e, dt->itemsize, big);
        if (isnan(v)) {
          s->nulls++;
          break;
        }
        TRACK(v, fr.min, fr.max);
        if (isinf(v)) {
          if (isinf(fr.sum) && (fr.sum > 0) != (v > 0)) fr.nan_sum = 1;
          fr.sum += v;
        } else if (!isinf(fr.sum)) {
          /* Neumaier summation */
          double tt = fr.sum + v;
          if (fabs(fr.sum) >= fabs(v))
            fr.comp += (fr.sum - tt) + v;
          else
            fr.comp += (v - tt) + fr.sum;
          fr.sum = tt;
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
        TRACK(v, ir.imin, ir.imax);
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
  have |= ir.have | fr.have | sr.have;
  s->nulls += fr.nulls;
  s->empty_count += sr.empty;
  if (sr.max_len > s->max_len) s->max_len = sr.max_len;
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
        s->min.type = ir.umin > INT64_MAX ? DS_V_UINT : DS_V_INT;
        s->min.u.u = ir.umin;
        s->max.type = ir.umax > INT64_MAX ? DS_V_UINT : DS_V_INT;
        s->max.u.u = ir.umax;
      } else {
        s->min.type = s->max.type = DS_V_INT;
        s->min.u.i = ir.imin;
        s->max.u.i = ir.imax;
      }
      if (ir.sum >= INT64_MIN && ir.sum <= INT64_MAX) {
        s->sum.type = DS_V_INT;
        s->sum.u.i = (int64_t)ir.sum;
      } else {
        i128_text(s->sum_text_, sizeof s->sum_text_, ir.sum);
        s->sum.type = DS_V_BIGINT;
        s->sum.u.s.p = (const uint8_t *)s->sum_text_;
        s->sum.u.s.n = strlen(s->sum_text_);
      }
      s->mean = (double)ir.sum / (double)nv;
      s->has_mean = 1;
      break;
    case 'f': {
      double sum = fr.nan_sum ? NAN : isinf(fr.sum) ? fr.sum : fr.sum + fr.comp;
      s->min.type = s->max.type = s->sum.type = DS_V_FLOAT;
      s->min.u.f = fr.min;
      s->max.u.f = fr.max;
      s->sum.u.f = sum;
      s->mean = sum / (double)nv;
      s->has_mean = 1;
      break;
    }
    case 'm':
    case 'M':
      s->tmin = ir.imin;
      s->tmax = ir.imax;
      if (kind == 'm') {
        s->min.type = s->max.type = DS_V_INT;
        s->min.u.i = ir.imin;
        s->max.u.i = ir.imax;
      } else {
        ds_buf *st[2] = {&s->min_store_, &s->max_store_};
        ds_value *dv[2] = {&s->min, &s->max};
        int64_t tv[2] = {ir.imin, ir.imax};
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
  ds_buf_free(&file);
  ds_buf_free(&txt);
  ds_buf_free(&smin);
  ds_buf_free(&smax);
  return rc;
}
