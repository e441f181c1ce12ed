/* msgpack_encode.c - values into msgpack as Python msgpack + msgpack-numpy
 * write them (see msgpack_encode.h). */
#include <errno.h>
#include <math.h>
#include <msgpack.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/decimal.h"
#include "core/npy.h"
#include "decoders/msgpack_descr.h"
#include "decoders/msgpack_encode.h"

/* msgpack-c's write callback: append to a ds_buf. */
static int buf_write(void *data, const char *p, size_t n) {
  return ds_buf_append((ds_buf *)data, p, n) ? -1 : 0;
}

#define PK(out) \
  msgpack_packer pk; \
  msgpack_packer_init(&pk, out, buf_write)

static int oom(char **err) { return ds_err(err, "out of memory"); }

int ds_msgpack_pack_str(ds_buf *out, const uint8_t *p, size_t n, char **err) {
  PK(out);
  if (n > UINT32_MAX) return ds_err(err, "a str of %zu bytes is too long for msgpack", n);
  if (msgpack_pack_str(&pk, n) || msgpack_pack_str_body(&pk, p, n)) return oom(err);
  return 0;
}

int ds_msgpack_pack_map_header(ds_buf *out, size_t n, char **err) {
  PK(out);
  if (n > UINT32_MAX) return ds_err(err, "a map of %zu entries is too large for msgpack", n);
  return msgpack_pack_map(&pk, n) ? oom(err) : 0;
}

int ds_msgpack_pack_array_header(ds_buf *out, size_t n, char **err) {
  PK(out);
  if (n > UINT32_MAX) return ds_err(err, "an array of %zu items is too large for msgpack", n);
  return msgpack_pack_array(&pk, n) ? oom(err) : 0;
}

/* A bin marker key of msgpack-numpy ("nd", "type", ...). */
static int bin_key(msgpack_packer *pk, const char *k) {
  size_t n = strlen(k);
  return msgpack_pack_bin(pk, n) || msgpack_pack_bin_body(pk, k, n);
}

/* Shortest round-trip digits of finite d != 0 and the decimal exponent
 * (d = 0.DIGITS * 10^decpt), as Python's repr finds them. */
static void shortest(double d, char digits[32], int *decpt) {
  char tmp[40];
  for (int prec = 1; prec <= 17; prec++) {
    ds_format_double(tmp, sizeof tmp, 'e', prec - 1, d);
    if (ds_strtod(tmp, NULL) == d) break;
  }
  char *e = strchr(tmp, 'e');
  int exp10 = atoi(e + 1);
  size_t k = 0;
  for (const char *p = tmp; p < e; p++)
    if (*p >= '0' && *p <= '9') digits[k++] = *p;
  while (k > 1 && digits[k - 1] == '0') k--;
  digits[k] = 0;
  *decpt = exp10 + 1;
}

/* Python's float repr (format 'r') without the ".0" of integral values;
 * `sign` forces a '+' on non-negative values (as for an imaginary part). */
static int py_float(ds_buf *out, double d, int sign) {
  if (isnan(d)) return ds_buf_puts(out, sign ? "+nan" : "nan");
  if (isinf(d)) return ds_buf_puts(out, d < 0 ? "-inf" : sign ? "+inf" : "inf");
  if (signbit(d)) {
    if (ds_buf_puts(out, "-")) return -1;
    d = -d;
  } else if (sign && ds_buf_puts(out, "+")) {
    return -1;
  }
  if (d == 0) return ds_buf_puts(out, "0");
  char dg[32];
  int decpt;
  shortest(d, dg, &decpt);
  int nd = (int)strlen(dg);
  if (decpt <= -4 || decpt > 16) { /* exponent form: 1e+300, 1.5e-05 */
    int rc = ds_buf_printf(out, "%c", dg[0]);
    if (nd > 1) rc = rc || ds_buf_printf(out, ".%s", dg + 1);
    int e = decpt - 1;
    return rc || ds_buf_printf(out, "e%c%02d", e < 0 ? '-' : '+', e < 0 ? -e : e);
  }
  int rc = 0;
  if (decpt <= 0) { /* 0.000ddd */
    rc = ds_buf_puts(out, "0.");
    for (int i = 0; i < -decpt && rc == 0; i++) rc = ds_buf_puts(out, "0");
    return rc || ds_buf_puts(out, dg);
  }
  if (nd <= decpt) { /* ddd000 */
    rc = ds_buf_puts(out, dg);
    for (int i = nd; i < decpt && rc == 0; i++) rc = ds_buf_puts(out, "0");
    return rc;
  }
  return ds_buf_printf(out, "%.*s.%s", decpt, dg, dg + decpt);
}

int ds_python_complex_repr(ds_buf *out, double re, double im) {
  if (re == 0 && !signbit(re)) return py_float(out, im, 0) || ds_buf_puts(out, "j");
  return ds_buf_puts(out, "(") || py_float(out, re, 0) || py_float(out, im, 1) ||
         ds_buf_puts(out, "j)");
}

/* Copy a Fortran-order array's elements into C order. */
static int to_c_order(const ds_npy *a, ds_buf *out) {
  uint64_t idx[DS_NPY_MAX_DIMS] = {0}, fstride[DS_NPY_MAX_DIMS];
  uint64_t s = 1;
  for (int k = 0; k < a->ndim; k++) {
    fstride[k] = s;
    s *= a->shape[k];
  }
  if (ds_buf_reserve(out, a->data_len)) return -1;
  for (uint64_t n = 0; n < a->count; n++) {
    uint64_t pos = 0;
    for (int k = 0; k < a->ndim; k++) pos += idx[k] * fstride[k];
    memcpy(out->data + n * a->itemsize, a->data + pos * a->itemsize, a->itemsize);
    for (int k = a->ndim - 1; k >= 0; k--) { /* next C-order index */
      if (++idx[k] < a->shape[k]) break;
      idx[k] = 0;
    }
  }
  out->len = a->data_len;
  return 0;
}

/* A parsed .npy as msgpack-numpy's {nd, type, kind, shape, data} map. */
static int pack_npy(msgpack_packer *pk, const ds_npy *a, char **err) {
  if (a->has_object)
    return ds_err(err, "a %s array (object dtype) cannot be written to msgpack here "
                       "(msgpack-numpy pickles it)", a->descr);
  if (a->kind == 'M' || a->kind == 'm')
    return ds_err(err, "a %s array (datetime64/timedelta64) cannot be written: "
                       "msgpack-numpy refuses it too", a->descr);
  const uint8_t *data = a->data;
  ds_buf c = {0};
  if (a->fortran_order && a->ndim > 1 && a->count > 1) {
    if (to_c_order(a, &c)) return oom(err);
    data = c.data;
  }
  /* msgpack-numpy: a structured dtype as its descr list and kind b'V',
   * any other as its dtype string and kind b'' */
  size_t tl = strlen(a->descr);
  int rc = msgpack_pack_map(pk, 5) || bin_key(pk, "nd") || msgpack_pack_true(pk) ||
           bin_key(pk, "type");
  if (rc == 0 && a->structured) {
    if (ds_msgpack_pack_descr(pk, a->descr, err)) {
      ds_buf_free(&c);
      return -1;
    }
  } else {
    rc = rc || msgpack_pack_str(pk, tl) || msgpack_pack_str_body(pk, a->descr, tl);
  }
  rc = rc || bin_key(pk, "kind") || msgpack_pack_bin(pk, a->structured ? 1 : 0) ||
       (a->structured && msgpack_pack_bin_body(pk, "V", 1)) || bin_key(pk, "shape") ||
       msgpack_pack_array(pk, (size_t)a->ndim);
  for (int k = 0; k < a->ndim && rc == 0; k++) rc = msgpack_pack_uint64(pk, a->shape[k]);
  rc = rc || bin_key(pk, "data") || msgpack_pack_bin(pk, a->data_len) ||
       msgpack_pack_bin_body(pk, data, a->data_len);
  ds_buf_free(&c);
  return rc ? oom(err) : 0;
}

/* A BYTES value: an array when it is a whole valid .npy, else bin. */
static int pack_bytes(msgpack_packer *pk, const ds_value *v, char **err) {
  const uint8_t *p = v->u.s.p;
  size_t n = v->u.s.n;
  if (n >= 6 && memcmp(p, "\x93NUMPY", 6) == 0) {
    ds_npy a;
    char *e = NULL;
    if (ds_npy_parse(p, n, &a, &e) == 0) return pack_npy(pk, &a, err);
    free(e); /* not a valid .npy: plain bytes */
  }
  if (n > UINT32_MAX) return ds_err(err, "bytes of %zu bytes are too long for msgpack", n);
  return msgpack_pack_bin(pk, n) || msgpack_pack_bin_body(pk, p, n) ? oom(err) : 0;
}

static int pack(msgpack_packer *pk, const ds_value *v, int depth, char **err);

/* A LIST/TUPLE/SET (array) or a MAP. */
static int pack_container(msgpack_packer *pk, const ds_value *v, int depth,
                          char **err) {
  size_t n = v->u.list.n;
  if (n > UINT32_MAX) return ds_err(err, "a container of %zu items is too large for msgpack", n);
  int is_map = v->type == DS_V_MAP;
  if (is_map ? msgpack_pack_map(pk, n) : msgpack_pack_array(pk, n)) return oom(err);
  for (size_t i = 0; i < (is_map ? 2 * n : n); i++)
    if (pack(pk, &v->u.list.items[i], depth + 1, err)) return -1;
  return 0;
}

/* Encode one value. */
static int pack(msgpack_packer *pk, const ds_value *v, int depth, char **err) {
  if (ds_value_check_depth(depth, err)) return -1;
  int rc = 0;
  switch (v->type) {
    case DS_V_NULL: rc = msgpack_pack_nil(pk); break;
    case DS_V_BOOL: rc = v->u.i ? msgpack_pack_true(pk) : msgpack_pack_false(pk); break;
    case DS_V_INT: rc = msgpack_pack_int64(pk, v->u.i); break;
    case DS_V_UINT: rc = msgpack_pack_uint64(pk, v->u.u); break;
    case DS_V_FLOAT: rc = msgpack_pack_double(pk, v->u.f); break;
    case DS_V_BIGINT: {
      int64_t i;
      int fit = ds_bigint_to_i64(v->u.s.p, v->u.s.n, &i);
      if (fit == 1) { rc = msgpack_pack_int64(pk, i); break; }
      char *end, buf[32];
      if (v->u.s.n < sizeof buf && v->u.s.p[0] != '-') {
        memcpy(buf, v->u.s.p, v->u.s.n);
        buf[v->u.s.n] = 0;
        errno = 0;
        unsigned long long u = strtoull(buf, &end, 10);
        if (errno == 0 && *end == 0) { rc = msgpack_pack_uint64(pk, u); break; }
      }
      return ds_err(err, "integer %.*s is outside msgpack's range [-2^63, 2^64)",
                    (int)v->u.s.n, (const char *)v->u.s.p);
    }
    case DS_V_TEXT:
      if (v->u.s.n > UINT32_MAX) return ds_err(err, "a str of %zu bytes is too long", v->u.s.n);
      rc = msgpack_pack_str(pk, v->u.s.n) || msgpack_pack_str_body(pk, v->u.s.p, v->u.s.n);
      break;
    case DS_V_BYTES: return pack_bytes(pk, v, err);
    case DS_V_NDARRAY: {
      ds_npy a;
      if (ds_npy_parse(v->u.s.p, v->u.s.n, &a, err)) return -1;
      return pack_npy(pk, &a, err);
    }
    case DS_V_LIST: case DS_V_TUPLE: case DS_V_SET: case DS_V_MAP:
      return pack_container(pk, v, depth, err);
    case DS_V_COMPLEX: {
      ds_buf r = {0};
      if (ds_python_complex_repr(&r, v->u.c.re, v->u.c.im)) return oom(err);
      rc = msgpack_pack_map(pk, 2) || bin_key(pk, "complex") || msgpack_pack_true(pk) ||
           bin_key(pk, "data") || msgpack_pack_str(pk, r.len) ||
           msgpack_pack_str_body(pk, r.data, r.len);
      ds_buf_free(&r);
      break;
    }
    case DS_V_UNSUPPORTED:
      return ds_err(err, "an object of %.*s cannot be written", (int)v->u.s.n,
                    (const char *)v->u.s.p);
  }
  return rc ? oom(err) : 0;
}

int ds_msgpack_pack_value(ds_buf *out, const ds_value *v, char **err) {
  PK(out);
  size_t len = out->len;
  if (pack(&pk, v, 0, err)) {
    out->len = len;
    return -1;
  }
  return 0;
}
