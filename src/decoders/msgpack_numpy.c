/* msgpack_numpy.c - msgpack-numpy's conventions inside a datadings sample
 * (see msgpack_numpy.h and docs/formats/datadings.md 3.3-3.4): maps with
 * bin keys that stand for an ndarray, a numpy scalar or a Python complex.
 *   {nd: true}  -> NDARRAY: a whole .npy file in the arena (C order);
 *                  kind "O" (a pickled object array) is decoded by the safe
 *                  pickle decoder (decoders/pickle.c) into a LIST;
 *   {nd: other} -> numpy scalar: b/i/u/f2/f4/f8/c8/c16 decoded here, other
 *                  dtypes (U, S, M, m, V) through core/npy.c's element code;
 *   {complex}   -> COMPLEX from Python's repr text (section 3.3);
 *   a recognised map missing a required entry stays a plain MAP. */
#include "decoders/msgpack_numpy.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "core/decimal.h"
#include "core/npy.h"
#include "core/numbers.h"
#include "core/utf8.h"
#include "decoders/pickle.h"

#define MP_DESCR_MAX 255           /* longest dtype text core/npy.c parses */
#define MP_COMPLEX_TOKEN_MAX 400   /* longest float token of a complex repr */
#define MP_DESCR_NEST 32           /* structured dtype depth: msgpack-c's
                                      parser stack cannot hold more */

/* Bytes of a str or bin object ("" when empty). */
const uint8_t *ds_msgpack_bytes(const msgpack_object *o, size_t *n) {
  const char *p = o->type == MSGPACK_OBJECT_STR ? o->via.str.ptr : o->via.bin.ptr;
  *n = o->type == MSGPACK_OBJECT_STR ? o->via.str.size : o->via.bin.size;
  return *n ? (const uint8_t *)p : (const uint8_t *)"";
}

/* 1 for str and bin objects. */
static int obj_is_strbin(const msgpack_object *o) {
  return o->type == MSGPACK_OBJECT_STR || o->type == MSGPACK_OBJECT_BIN;
}

/* The last entry named `name` (see msgpack_numpy.h). */
const msgpack_object *ds_msgpack_bin_entry(const msgpack_object *o, const char *name) {
  const msgpack_object *found = NULL;
  size_t len = strlen(name);
  for (uint32_t i = 0; i < o->via.map.size; i++) {
    const msgpack_object *k = &o->via.map.ptr[i].key;
    if (k->type == MSGPACK_OBJECT_BIN && k->via.bin.size == len &&
        !memcmp(k->via.bin.ptr, name, len))
      found = &o->via.map.ptr[i].val;
  }
  return found;
}

/* A fixed-size text buffer for dtype descriptions. */
typedef struct fixbuf {
  char s[MP_DESCR_MAX + 1];
  size_t len;
  int overflow;
} fixbuf;

/* Append n bytes to b (sets overflow instead of growing). */
static void fb_put(fixbuf *b, const void *p, size_t n) {
  if (b->overflow || n > MP_DESCR_MAX - b->len) {
    b->overflow = 1;
    return;
  }
  memcpy(b->s + b->len, p, n);
  b->len += n;
  b->s[b->len] = 0;
}

/* Append a C string to b. */
static void fb_puts(fixbuf *b, const char *s) { fb_put(b, s, strlen(s)); }

/* ----------------------------------------------------- numpy dtypes */

/* Python's repr() of a str: quotes chosen as Python does, \\ \' \n \r \t
 * and \xNN escapes; other UTF-8 kept as is (still a valid literal). */
static void py_repr(fixbuf *b, const uint8_t *s, size_t n) {
  int has_sq = memchr(s, '\'', n) != NULL, has_dq = memchr(s, '"', n) != NULL;
  char q = has_sq && !has_dq ? '"' : '\'';
  fb_put(b, &q, 1);
  for (size_t i = 0; i < n; i++) {
    uint8_t c = s[i];
    char esc[5] = {'\\', 0, 0, 0, 0};
    if (c == (uint8_t)q || c == '\\') esc[1] = (char)c;
    else if (c == '\n') esc[1] = 'n';
    else if (c == '\r') esc[1] = 'r';
    else if (c == '\t') esc[1] = 't';
    else if (c < 0x20 || c == 0x7f) {
      static const char hex[] = "0123456789abcdef";
      esc[1] = 'x', esc[2] = hex[c >> 4], esc[3] = hex[c & 15];
    }
    if (esc[1]) fb_puts(b, esc);
    else fb_put(b, &c, 1);
  }
  fb_put(b, &q, 1);
}

/* A str or bin that must be UTF-8 text, appended as a Python literal. */
static int descr_text(fixbuf *b, const msgpack_object *o, const char *what,
                      char **err) {
  size_t n;
  if (!obj_is_strbin(o))
    return ds_err(err, "structured dtype: %s is not a string", what);
  const uint8_t *s = ds_msgpack_bytes(o, &n);
  if (!ds_utf8_valid(s, n))
    return ds_err(err, "structured dtype: %s is not UTF-8", what);
  py_repr(b, s, n);
  return 0;
}

/* A field name: a string, or a [title, name] pair. */
static int descr_name(fixbuf *b, const msgpack_object *o, char **err) {
  if (o->type != MSGPACK_OBJECT_ARRAY) return descr_text(b, o, "a field name", err);
  if (o->via.array.size != 2)
    return ds_err(err, "structured dtype: a field title is not a pair");
  fb_puts(b, "(");
  if (descr_text(b, &o->via.array.ptr[0], "a field title", err)) return -1;
  fb_puts(b, ", ");
  if (descr_text(b, &o->via.array.ptr[1], "a field name", err)) return -1;
  fb_puts(b, ")");
  return 0;
}

/* A field's subarray shape ([2, 3] or 5) as a tuple; nothing for []. */
static int descr_shape(fixbuf *b, const msgpack_object *o, char **err) {
  const msgpack_object *dims = o->type == MSGPACK_OBJECT_ARRAY ? o->via.array.ptr : o;
  uint32_t nd = o->type == MSGPACK_OBJECT_ARRAY ? o->via.array.size : 1;
  if (nd == 0) return 0;
  fb_puts(b, ", (");
  for (uint32_t i = 0; i < nd; i++) {
    if (dims[i].type != MSGPACK_OBJECT_POSITIVE_INTEGER)
      return ds_err(err, "structured dtype: a field shape is not a list of "
                    "non-negative integers");
    char num[32];
    snprintf(num, sizeof num, i ? ", %llu" : "%llu",
             (unsigned long long)dims[i].via.u64);
    fb_puts(b, num);
  }
  fb_puts(b, nd == 1 ? ",)" : ")");
  return 0;
}

static int descr_list(fixbuf *b, const msgpack_object *o, int depth, char **err);

/* One field [name, type(, shape)] as "('name', '<i4', (2,))". */
static int descr_field(fixbuf *b, const msgpack_object *f, int depth,
                       char **err) {
  if (f->type != MSGPACK_OBJECT_ARRAY || f->via.array.size < 2 ||
      f->via.array.size > 3)
    return ds_err(err, "structured dtype: a field is not [name, type(, shape)]");
  const msgpack_object *e = f->via.array.ptr;
  fb_puts(b, "(");
  if (descr_name(b, &e[0], err)) return -1;
  fb_puts(b, ", ");
  if (e[1].type == MSGPACK_OBJECT_ARRAY) {
    if (descr_list(b, &e[1], depth + 1, err)) return -1;
  } else if (descr_text(b, &e[1], "a field type", err)) {
    return -1;
  }
  if (f->via.array.size == 3 && descr_shape(b, &e[2], err)) return -1;
  fb_puts(b, ")");
  return 0;
}

/* numpy's repr of a descr list: [('a', '<i4'), ('b', '<f8', (2,))]. */
static int descr_list(fixbuf *b, const msgpack_object *o, int depth,
                      char **err) {
  if (depth > MP_DESCR_NEST) return ds_err(err, "structured dtype nested too deeply");
  fb_puts(b, "[");
  for (uint32_t i = 0; i < o->via.array.size; i++) {
    if (i) fb_puts(b, ", ");
    if (descr_field(b, &o->via.array.ptr[i], depth, err)) return -1;
  }
  fb_puts(b, "]");
  return 0;
}

/* The dtype text of a msgpack-numpy `type` entry: a dtype string as given,
 * or the descr list rendered as numpy's repr. */
static int type_descr(const msgpack_object *t, fixbuf *b, char **err) {
  memset(b, 0, sizeof *b);
  if (t->type == MSGPACK_OBJECT_ARRAY) {
    if (descr_list(b, t, 0, err)) return -1;
  } else if (obj_is_strbin(t)) {
    size_t n;
    const uint8_t *s = ds_msgpack_bytes(t, &n);
    if (memchr(s, 0, n)) return ds_err(err, "dtype string holds a NUL byte");
    fb_put(b, s, n);
  } else {
    return ds_err(err, "dtype is neither a string nor a list");
  }
  if (b->overflow)
    return ds_err(err, "dtype description longer than %d bytes", MP_DESCR_MAX);
  return 0;
}

/* ----------------------------------------------------- ndarray maps */

/* Hook for object arrays (kind "O"): `data` holds a pickle of the whole
 * array. A pickle decoder plugs in here (decode the pickle, map the
 * ndarray's elements); until then this is a clear error. */
static int object_array(const msgpack_object *data, ds_arena *a,
                        ds_value *out, char **err) {
  size_t n;
  const uint8_t *p = ds_msgpack_bytes(data, &n);
  char *why = NULL;
  if (ds_pickle_decode(p, n, NULL, a, out, &why)) {
    ds_err(err, "object array (kind O): %s", why ? why : "out of memory");
    free(why);
    return -1;
  }
  const ds_value *u = ds_value_find_unsupported(out);
  if (u)
    return ds_err_quoted(err, "object array (kind O) holds a pickled '%s', which "
                         "is not on the pickle decoder's allow-list",
                         u->u.s.p, u->u.s.n);
  return 0;
}

/* The `shape` entry (a list of non-negative ints, or one int) into dims. */
static int array_shape(const msgpack_object *s, uint64_t *dims, int *ndim,
                       char **err) {
  const msgpack_object *d = s->type == MSGPACK_OBJECT_ARRAY ? s->via.array.ptr : s;
  uint32_t nd = s->type == MSGPACK_OBJECT_ARRAY ? s->via.array.size : 1;
  if (nd > DS_NPY_MAX_DIMS)
    return ds_err(err, "array with %u dimensions (at most %d)", nd, DS_NPY_MAX_DIMS);
  for (uint32_t i = 0; i < nd; i++) {
    if (d[i].type != MSGPACK_OBJECT_POSITIVE_INTEGER)
      return ds_err(err, "array shape is not a list of non-negative integers");
    dims[i] = d[i].via.u64;
  }
  *ndim = (int)nd;
  return 0;
}

/* A .npy file (header + the data bytes) in the arena, checked before the
 * data is copied: its length must be exactly prod(shape) * itemsize. */
static int array_blob(const char *descr, int ndim, const uint64_t *dims,
                      const msgpack_object *data, ds_arena *a, ds_value *out,
                      char **err) {
  ds_buf hb = {0};
  if (ds_npy_write_header(&hb, descr, 0, ndim, dims, err)) return -1;
  size_t dn, hn = hb.len;
  const uint8_t *dp = ds_msgpack_bytes(data, &dn);
  uint8_t *blob = ds_arena_get(a, hn + dn, err); /* dn < 2^32: no overflow */
  if (blob) memcpy(blob, hb.data, hn);
  ds_buf_free(&hb);
  if (!blob) return -1;
  ds_npy npy;
  if (ds_npy_parse(blob, hn + dn, &npy, err)) {
    /* our own header is valid, so this can only be data that is too short */
    if (!*err || !strstr(*err, "truncated")) return -1;
    return ds_err(err, "array data has %zu bytes, fewer than dtype %s and the "
                  "shape need", dn, descr);
  }
  if (npy.has_object)
    return ds_err(err, "object dtype %s in an array whose kind is not O", descr);
  if (npy.data_len != dn)
    return ds_err(err, "array data has %zu bytes, dtype %s and the shape need %zu",
                  dn, npy.descr, npy.data_len);
  memcpy(blob + hn, dp, dn);
  out->type = DS_V_NDARRAY;
  out->u.s.p = blob;
  out->u.s.n = hn + dn;
  return 0;
}

/* {nd: true, type, kind, shape, data}: 1 when a required entry is missing
 * (the map then stays a map). */
static int np_ndarray(const msgpack_object *m, ds_arena *a, ds_value *out,
                      char **err) {
  const msgpack_object *kind = ds_msgpack_bin_entry(m, "kind");
  const msgpack_object *type = ds_msgpack_bin_entry(m, "type");
  const msgpack_object *shape = ds_msgpack_bin_entry(m, "shape");
  const msgpack_object *data = ds_msgpack_bin_entry(m, "data");
  if (kind && kind->type == MSGPACK_OBJECT_BIN && kind->via.bin.size == 1 &&
      kind->via.bin.ptr[0] == 'O')
    return data ? object_array(data, a, out, err) : 1;
  if (!type || !shape || !data) return 1;
  if (data->type != MSGPACK_OBJECT_BIN) return ds_err(err, "array data is not bin");
  fixbuf descr;
  uint64_t dims[DS_NPY_MAX_DIMS];
  int ndim = 0;
  if (type_descr(type, &descr, err) || array_shape(shape, dims, &ndim, err))
    return -1;
  return array_blob(descr.s, ndim, dims, data, a, out, err);
}

/* ------------------------------------------------------ numpy scalars */

/* A dtype this file decodes itself. */
typedef struct fast_dtype {
  char kind;      /* b i u f c */
  unsigned size;  /* itemsize */
  int big;        /* big-endian data */
} fast_dtype;

/* Parse "<f4"-style text for the kinds b, i, u, f (2/4/8), c (8/16); 0
 * when it is anything else (the caller then takes the general path). */
static int fast_dtype_parse(const uint8_t *s, size_t n, fast_dtype *d) {
  size_t i = 0;
  char order = '=';
  if (i < n && (s[i] == '<' || s[i] == '>' || s[i] == '|' || s[i] == '=')) order = (char)s[i++];
  if (i >= n || s[i] == 0 || !strchr("biufc", s[i])) return 0;
  d->kind = (char)s[i++];
  if (n - i < 1 || n - i > 2) return 0;
  unsigned size = 0;
  for (; i < n; i++) {
    if (s[i] < '0' || s[i] > '9') return 0;
    size = size * 10 + (unsigned)(s[i] - '0');
  }
  int ok = d->kind == 'b' ? size == 1
         : d->kind == 'f' ? size == 2 || size == 4 || size == 8
         : d->kind == 'c' ? size == 8 || size == 16
         : size == 1 || size == 2 || size == 4 || size == 8;
  if (!ok) return 0;
  d->size = size;
  d->big = order == '>' || ((order == '=' || order == '|') && !ds_host_little());
  return 1;
}

/* The first element of a fast dtype as a value. */
static void fast_scalar(const fast_dtype *d, const uint8_t *p, ds_value *out) {
  if (d->kind == 'b') {
    out->type = DS_V_BOOL;
    out->u.i = p[0] != 0;
  } else if (d->kind == 'i') {
    uint64_t u = ds_load_uint(p, d->size, d->big);
    unsigned shift = 64 - 8 * d->size;
    out->type = DS_V_INT;
    out->u.i = shift ? (int64_t)(u << shift) >> shift : (int64_t)u;
  } else if (d->kind == 'u') {
    uint64_t u = ds_load_uint(p, d->size, d->big);
    out->type = u > INT64_MAX ? DS_V_UINT : DS_V_INT;
    if (u > INT64_MAX) out->u.u = u;
    else out->u.i = (int64_t)u;
  } else if (d->kind == 'f') {
    out->type = DS_V_FLOAT;
    out->u.f = ds_load_float(p, d->size, d->big);
  } else {
    out->type = DS_V_COMPLEX;
    out->u.c.re = ds_load_float(p, d->size / 2, d->big);
    out->u.c.im = ds_load_float(p + d->size / 2, d->size / 2, d->big);
  }
}

/* Copy a TEXT/BYTES value's bytes into the arena. */
static int own_bytes(ds_value *v, ds_arena *a, char **err) {
  if ((v->type != DS_V_TEXT && v->type != DS_V_BYTES) || v->u.s.n == 0) return 0;
  uint8_t *p = ds_arena_get(a, v->u.s.n, err);
  if (!p) return -1;
  memcpy(p, v->u.s.p, v->u.s.n);
  v->u.s.p = p;
  return 0;
}

/* Any other dtype (U, S, M, m, V, ...): core/npy.c parses the dtype (from
 * the header of an empty array in a scratch buffer) and decodes the first
 * element straight from the data bytes. */
static int general_scalar(const char *descr, const uint8_t *dp, size_t dn,
                          ds_arena *a, ds_value *out, char **err) {
  ds_buf b = {0}, scratch = {0};
  ds_npy npy;
  const uint64_t empty = 0;
  int rc = -1;
  if (ds_npy_write_header(&b, descr, 0, 1, &empty, err) ||
      ds_npy_parse(b.data, b.len, &npy, err))
    goto done;
  if (npy.has_object) { ds_err(err, "numpy scalar of object dtype"); goto done; }
  if (npy.itemsize == 0 || dn < npy.itemsize || dn % npy.itemsize) {
    ds_err(err, "numpy scalar of dtype %s has %zu data bytes", npy.descr, dn);
    goto done;
  }
  npy.ndim = 0; /* now a 0-d array over the first element */
  npy.count = 1;
  npy.data = dp;
  npy.data_len = npy.itemsize;
  if (ds_npy_element(&npy, 0, out, &scratch, err)) goto done;
  rc = own_bytes(out, a, err);
done:
  ds_buf_free(&b);
  ds_buf_free(&scratch);
  return rc;
}

/* {nd: <not true>, type, data}: 1 when an entry is missing. */
static int np_scalar(const msgpack_object *m, ds_arena *a, ds_value *out,
                     char **err) {
  const msgpack_object *type = ds_msgpack_bin_entry(m, "type");
  const msgpack_object *data = ds_msgpack_bin_entry(m, "data");
  if (!type || !data) return 1;
  if (data->type != MSGPACK_OBJECT_BIN) return ds_err(err, "numpy scalar data is not bin");
  size_t dn, tn;
  const uint8_t *dp = ds_msgpack_bytes(data, &dn);
  fast_dtype fd;
  if (obj_is_strbin(type)) {
    const uint8_t *ts = ds_msgpack_bytes(type, &tn);
    if (fast_dtype_parse(ts, tn, &fd)) {
      if (dn < fd.size || dn % fd.size)
        return ds_err(err, "numpy scalar of dtype %.*s has %zu data bytes",
                      (int)tn, (const char *)ts, dn); /* ts: a parsed dtype, ASCII */
      fast_scalar(&fd, dp, out);
      return 0;
    }
  }
  fixbuf descr;
  if (type_descr(type, &descr, err)) return -1;
  return general_scalar(descr.s, dp, dn, a, out, err);
}

/* ---------------------------------------------------- Python complex */

/* 1 when s[0..n) is a Python float literal (digits with one optional '.',
 * optional exponent, or inf/infinity/nan), with an optional sign. */
static int float_token_ok(const char *s, size_t n) {
  size_t i = 0, digits = 0;
  if (i < n && (s[i] == '+' || s[i] == '-')) i++;
  if (n - i == 3 && (!strncasecmp(s + i, "inf", 3) || !strncasecmp(s + i, "nan", 3)))
    return 1;
  if (n - i == 8 && !strncasecmp(s + i, "infinity", 8)) return 1;
  while (i < n && s[i] >= '0' && s[i] <= '9') i++, digits++;
  if (i < n && s[i] == '.') {
    i++;
    while (i < n && s[i] >= '0' && s[i] <= '9') i++, digits++;
  }
  if (!digits) return 0;
  if (i < n && (s[i] == 'e' || s[i] == 'E')) {
    size_t exp_digits = 0;
    i++;
    if (i < n && (s[i] == '+' || s[i] == '-')) i++;
    while (i < n && s[i] >= '0' && s[i] <= '9') i++, exp_digits++;
    if (!exp_digits) return 0;
  }
  return i == n;
}

/* A float token into *v; a bare sign or nothing (the imaginary part of
 * "j", "+j", "1-j") means 1.0 with that sign, as Python's complex(). */
static int complex_part(const char *s, size_t n, int imag, double *v) {
  if (imag && (n == 0 || (n == 1 && (s[0] == '+' || s[0] == '-')))) {
    *v = n && s[0] == '-' ? -1.0 : 1.0;
    return 0;
  }
  if (n > MP_COMPLEX_TOKEN_MAX || !float_token_ok(s, n)) return -1;
  char tok[MP_COMPLEX_TOKEN_MAX + 1];
  memcpy(tok, s, n);
  tok[n] = 0;
  *v = ds_strtod(tok, NULL);
  return 0;
}

/* Trim ASCII whitespace around s[*i..*n). */
static void trim_ws(const char *s, size_t *i, size_t *n) {
  while (*i < *n && strchr(" \t\n\r\f\v", s[*i]) && s[*i]) (*i)++;
  while (*n > *i && strchr(" \t\n\r\f\v", s[*n - 1]) && s[*n - 1]) (*n)--;
}

/* Python's complex repr text (datadings.md 3.3): "(1.5-2.25j)", "2j",
 * "-0j", "(-0+1j)", "(nan+infj)"; also a bare real ("(3)", "3"). */
static int parse_py_complex(const char *s, size_t n, double *re, double *im) {
  size_t i = 0;
  trim_ws(s, &i, &n);
  if (n - i >= 2 && s[i] == '(' && s[n - 1] == ')') {
    i++, n--;
    trim_ws(s, &i, &n);
  }
  if (i == n) return -1;
  if (s[n - 1] != 'j' && s[n - 1] != 'J') {
    *im = 0.0;
    return complex_part(s + i, n - i, 0, re);
  }
  n--;
  size_t split = 0; /* index of the sign between real and imag, 0 = none */
  for (size_t k = i + 1; k < n; k++)
    if ((s[k] == '+' || s[k] == '-') && s[k - 1] != 'e' && s[k - 1] != 'E')
      split = k;
  if (!split) {
    *re = 0.0;
    return complex_part(s + i, n - i, 1, im);
  }
  if (complex_part(s + i, split - i, 0, re)) return -1;
  return complex_part(s + split, n - split, 1, im);
}

/* Python's complex() on repr text (no NUL inside). */
int ds_msgpack_parse_complex(const char *s, size_t n, double *re, double *im) {
  if (memchr(s, 0, n)) return -1;
  return parse_py_complex(s, n, re, im);
}

/* {complex: ..., data: "(1+2j)"}: 1 when `data` is missing. */
static int py_complex(const msgpack_object *m, ds_value *out, char **err) {
  const msgpack_object *data = ds_msgpack_bin_entry(m, "data");
  if (!data) return 1;
  if (!obj_is_strbin(data)) return ds_err(err, "complex number data is not text");
  size_t n;
  const char *s = (const char *)ds_msgpack_bytes(data, &n);
  if (ds_msgpack_parse_complex(s, n, &out->u.c.re, &out->u.c.im))
    return ds_err_quoted(err, "complex number text '%s' is malformed", s,
                         n > 60 ? 60 : n);
  out->type = DS_V_COMPLEX;
  return 0;
}

/* Recognise one of msgpack-numpy's maps (see msgpack_numpy.h). */
int ds_msgpack_numpy_value(const msgpack_object *o, ds_arena *a, ds_value *out,
                           char **err) {
  const msgpack_object *nd = ds_msgpack_bin_entry(o, "nd");
  int r = 1;
  if (nd && nd->type == MSGPACK_OBJECT_BOOLEAN && nd->via.boolean)
    r = np_ndarray(o, a, out, err);
  else if (nd)
    r = np_scalar(o, a, out, err);
  else if (ds_msgpack_bin_entry(o, "complex"))
    r = py_complex(o, out, err);
  if (r < 0) ds_err_prefix(err, "msgpack-numpy");
  return r;
}
