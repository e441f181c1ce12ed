/* npy.c - the NumPy .npy format: header parsing, header writing, and the
 * data as JSON (what ndarray.tolist() gives, through json.dumps).
 *
 * File layout (numpy/lib/format.py):
 *   "\x93NUMPY" major minor   6 + 2 bytes
 *   header length             uint16 LE (1.0) or uint32 LE (2.0, 3.0)
 *   header                    a Python dict literal, latin-1 (1.0, 2.0) or
 *                             UTF-8 (3.0), padded with spaces and a '\n':
 *                             {'descr': '<f4', 'fortran_order': False,
 *                              'shape': (2, 3), }
 *   data                      count * itemsize bytes, C or Fortran order
 *
 * The header is parsed as strictly as numpy's literal_eval + checks: a dict
 * with exactly the keys descr, fortran_order and shape, shape a tuple of
 * non-negative ints, ("3L" accepted in 1.0/2.0 headers, as numpy does for
 * files from Python 2). Every size is checked for overflow and against the
 * blob length before anything is read.
 *
 * JSON choices (ds_npy_to_json):
 *   b -> true/false; i/u -> exact integers; f2/f4/f8 -> shortest round-trip
 *   double text (non-finite -> null); c8/c16 -> [re, im];
 *   U -> string (UTF-32 -> UTF-8, trailing NULs stripped, code points that
 *   are not Unicode scalar values -> U+FFFD);
 *   S -> bytes: trailing NULs stripped, then a base64 string (bytes are
 *   base64 everywhere inside JSON, docs/INTERFACE.md "Values");
 *   V (raw, not structured) -> base64 string;
 *   M -> ISO-8601 text at the dtype's unit, as numpy prints it; m -> integer
 *   ticks; NaT -> null; 0-d -> the bare scalar.
 *   structured -> one JSON array per record (tolist()'s tuple), fields in
 *   order, subarray fields as nested lists;
 *   Not supported (clear error): object dtypes, float128 and
 *   complex256. */
#include "npy.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "json.h"
#include "numbers.h"
#include "utf8.h"

#define NPY_MAGIC "\x93NUMPY"
#define NPY_MAGIC_LEN 6
#define NPY_ALIGN 64
#define NPY_GROWTH_AXIS_MAX_DIGITS 21 /* numpy pads so shape[0] may grow */
#define NPY_MAX_STRUCT_DEPTH 32       /* nesting of structured dtypes */
#define NPY_MAX_EMPTY_LISTS (1u << 24) /* "[[],[],...]" of empty arrays */

static const char *const unit_names[] = {"Y",  "M",  "W",  "D",  "h",
                                         "m",  "s",  "ms", "us", "ns",
                                         "ps", "fs", "as"};
#define NPY_NUNITS ((int)(sizeof unit_names / sizeof unit_names[0]))

/* a * b into *r; 0 when it overflows uint64. */
static int mul_u64(uint64_t a, uint64_t b, uint64_t *r) {
  if (a && b > UINT64_MAX / a) return 0;
  *r = a * b;
  return 1;
}

/* a * b into *r; 0 when it overflows int64. */
static int mul_i64(int64_t a, int64_t b, int64_t *r) {
  if (a == 0 || b == 0) { *r = 0; return 1; }
  if (a == -1) { if (b == INT64_MIN) return 0; *r = -b; return 1; }
  if (b == -1) { if (a == INT64_MIN) return 0; *r = -a; return 1; }
  if (a > 0 ? (b > 0 ? a > INT64_MAX / b : b < INT64_MIN / a)
            : (b > 0 ? a < INT64_MIN / b : a < INT64_MAX / b))
    return 0;
  *r = a * b;
  return 1;
}

/* Floor division (rounds toward minus infinity); b > 0. */
static int64_t floordiv(int64_t a, int64_t b) {
  int64_t q = a / b;
  return (a % b != 0 && a < 0) ? q - 1 : q;
}

/* The matching remainder, in [0, b); b > 0. Never multiplies back, so it
 * cannot overflow near INT64_MIN. */
static int64_t floormod(int64_t a, int64_t b) {
  int64_t r = a % b;
  return r < 0 ? r + b : r;
}

/* ------------------------------------------------- Python literal reader */

/* A cursor over header text. */
typedef struct cur {
  const char *p, *end;
  int old_ints; /* accept Python 2 "3L" integers (format 1.0 and 2.0) */
} cur;

/* Skip Python whitespace. */
static void skip_ws(cur *c) {
  while (c->p < c->end && (*c->p == ' ' || *c->p == '\t' || *c->p == '\n' ||
                           *c->p == '\r' || *c->p == '\f' || *c->p == '\v'))
    c->p++;
}

/* The next non-blank character, or -1 at the end (nothing consumed). */
static int peek(cur *c) {
  skip_ws(c);
  return c->p < c->end ? (unsigned char)*c->p : -1;
}

/* Consume ch if it is the next non-blank character; 1 when it was. */
static int eat(cur *c, char ch) {
  if (peek(c) != (unsigned char)ch) return 0;
  c->p++;
  return 1;
}

/* 1 for characters that may continue a Python identifier or number. */
static int ident_char(int ch) {
  return (ch >= 'a' && ch <= 'z') || (ch >= 'A' && ch <= 'Z') ||
         (ch >= '0' && ch <= '9') || ch == '_' || ch >= 0x80;
}

/* A quoted string literal ('..' or "..", optional u prefix): *s and *n get
 * its raw body, *esc whether it holds backslash escapes. */
static int lit_string(cur *c, const char **s, size_t *n, int *esc,
                      char **err) {
  int ch = peek(c);
  if ((ch == 'u' || ch == 'U') && c->end - c->p > 1 &&
      (c->p[1] == '\'' || c->p[1] == '"'))
    ch = (unsigned char)*++c->p;
  if (ch != '\'' && ch != '"') return ds_err(err, "expected a string");
  char q = *c->p++;
  const char *start = c->p;
  *esc = 0;
  while (c->p < c->end && *c->p != q) {
    if (*c->p == '\n') break;
    if (*c->p == '\\') {
      *esc = 1;
      if (++c->p == c->end) break;
    }
    c->p++;
  }
  if (c->p >= c->end || *c->p != q) return ds_err(err, "unterminated string");
  *s = start;
  *n = (size_t)(c->p - start);
  c->p++;
  return 0;
}

/* A non-negative decimal integer literal ("0", "12", "12L" when allowed). */
static int lit_uint(cur *c, uint64_t *v, char **err) {
  int ch = peek(c);
  if (ch == '-') return ds_err(err, "negative dimension");
  if (ch < '0' || ch > '9') return ds_err(err, "expected an integer");
  const char *start = c->p;
  uint64_t x = 0;
  while (c->p < c->end && *c->p >= '0' && *c->p <= '9') {
    unsigned d = (unsigned)(*c->p - '0');
    if (x > (UINT64_MAX - d) / 10) return ds_err(err, "integer too large");
    x = x * 10 + d;
    c->p++;
  }
  if (*start == '0' && c->p - start > 1)
    return ds_err(err, "integer with leading zeros");
  if (c->old_ints && c->p < c->end && (*c->p == 'L' || *c->p == 'l')) c->p++;
  if (c->p < c->end && ident_char((unsigned char)*c->p))
    return ds_err(err, "malformed integer");
  *v = x;
  return 0;
}

/* A bare word such as True or False; 1 when it is next (and consumed). */
static int lit_word(cur *c, const char *w) {
  size_t n = strlen(w);
  if (peek(c) < 0 || (size_t)(c->end - c->p) < n || memcmp(c->p, w, n) != 0)
    return 0;
  if ((size_t)(c->end - c->p) > n && ident_char((unsigned char)c->p[n]))
    return 0;
  c->p += n;
  return 1;
}

/* A tuple of non-negative ints: "()", "(3,)", "(3, 4)", "(3, 4,)". With
 * max_dims 0 there is no limit on the count (the product still goes to
 * *prod). dims may be NULL. */
static int lit_shape(cur *c, uint64_t *dims, int max_dims, int *ndim,
                     uint64_t *prod, char **err) {
  if (!eat(c, '(')) return ds_err(err, "shape is not a tuple");
  int n = 0, trailing_comma = 0;
  uint64_t pr = 1;
  while (!eat(c, ')')) {
    uint64_t d;
    if (lit_uint(c, &d, err)) return -1;
    if (max_dims && n >= max_dims)
      return ds_err(err, "more than %d dimensions", max_dims);
    if (dims) dims[n] = d;
    n++;
    if (!mul_u64(pr, d, &pr)) pr = UINT64_MAX; /* checked by the caller */
    trailing_comma = eat(c, ',');
    if (!trailing_comma && peek(c) != ')')
      return ds_err(err, "malformed shape tuple");
  }
  if (n == 1 && !trailing_comma) return ds_err(err, "shape is not a tuple");
  *ndim = n;
  *prod = pr;
  return 0;
}

/* ------------------------------------------------------------- dtypes */

/* A simple dtype as parsed from its string. */
typedef struct dtype_info {
  char kind, byteorder;
  uint32_t itemsize;
  int unit;      /* M/m only */
  int64_t mult;  /* M/m only */
  char str[48];  /* normalised text, as numpy's dtype.str prints it */
} dtype_info;

/* Parse decimal digits at s[*i..n) into *v (at most INT32_MAX); 0 when there
 * are none, -1 when too large. */
static int parse_digits(const char *s, size_t n, size_t *i, uint64_t *v) {
  size_t start = *i;
  uint64_t x = 0;
  while (*i < n && s[*i] >= '0' && s[*i] <= '9') {
    x = x * 10 + (uint64_t)(s[*i] - '0');
    if (x > INT32_MAX) return -1;
    (*i)++;
  }
  *v = x;
  return *i > start;
}

/* The "[10s]" part of a datetime dtype at s[*i..n). */
static int parse_unit(const char *s, size_t n, size_t *i, dtype_info *d,
                      char **err) {
  d->unit = DS_NPY_UNIT_GENERIC;
  d->mult = 1;
  if (*i == n) return 0;
  if (s[*i] != '[') return ds_err(err, "malformed datetime unit");
  (*i)++;
  uint64_t m;
  int has = parse_digits(s, n, i, &m);
  if (has < 0 || (has && m == 0)) return ds_err(err, "bad unit multiplier");
  if (has) d->mult = (int64_t)m;
  size_t j = *i;
  while (j < n && s[j] != ']') j++;
  if (j == n) return ds_err(err, "malformed datetime unit");
  for (int u = 0; u < NPY_NUNITS; u++)
    if (strlen(unit_names[u]) == j - *i && memcmp(s + *i, unit_names[u], j - *i) == 0)
      d->unit = u;
  if (d->unit == DS_NPY_UNIT_GENERIC)
    return ds_err_quoted(err, "unknown datetime unit '%s'", s + *i, j - *i);
  *i = j + 1;
  return 0;
}

/* Check the size of a numeric kind against what numpy can store. */
static int check_numeric_size(char kind, uint64_t size) {
  switch (kind) {
    case 'b': return size == 1;
    case 'i':
    case 'u': return size == 1 || size == 2 || size == 4 || size == 8;
    case 'f': return size == 2 || size == 4 || size == 8 || size == 12 || size == 16;
    case 'c': return size == 8 || size == 16 || size == 24 || size == 32;
    case 'M':
    case 'm':
    case 'O': return size == 8;
    default: return 1;
  }
}

/* The decimal digits of v (without printf: headers are written for every
 * ndarray value read, and vsnprintf cost more than the rest of the header). */
static size_t u64_digits(uint64_t v, char d[20]) {
  char tmp[20];
  size_t n = 0;
  do tmp[n++] = (char)('0' + v % 10); while ((v /= 10) != 0);
  for (size_t k = 0; k < n; k++) d[k] = tmp[n - 1 - k];
  return n;
}

/* Write the normalised dtype text into d->str. */
static void dtype_format(dtype_info *d) {
  char unit[24] = "";
  if ((d->kind == 'M' || d->kind == 'm') && d->unit != DS_NPY_UNIT_GENERIC) {
    if (d->mult > 1)
      snprintf(unit, sizeof unit, "[%lld%s]", (long long)d->mult, unit_names[d->unit]);
    else
      snprintf(unit, sizeof unit, "[%s]", unit_names[d->unit]);
  }
  if (d->kind == 'O') {
    snprintf(d->str, sizeof d->str, "|O");
    return;
  }
  if (unit[0]) {
    snprintf(d->str, sizeof d->str, "%c%c%lu%s", d->byteorder, d->kind,
             (unsigned long)(d->kind == 'U' ? d->itemsize / 4 : d->itemsize), unit);
    return;
  }
  /* the common case without snprintf (every ndarray value read parses
   * its dtype twice); itemsize / 4 for U fits the 20 digits */
  d->str[0] = d->byteorder;
  d->str[1] = d->kind;
  size_t n = u64_digits(d->kind == 'U' ? d->itemsize / 4 : d->itemsize, d->str + 2);
  d->str[2 + n] = 0;
}

/* Parse a simple dtype string such as "<f4", "|S5", "<U3", "<M8[ns]". */
static int parse_simple_descr(const char *s, size_t n, dtype_info *d,
                              char **err) {
  size_t shown = n > 40 ? 40 : n; /* how much of s an error quotes */
  memset(d, 0, sizeof *d);
  size_t i = 0;
  char order = '=';
  if (i < n && s[i] && strchr("<>|=", s[i])) order = s[i++];
  if (i == n || !s[i] || !strchr("biufcSUVMmO", s[i]))
    return ds_err_quoted(err, "unsupported dtype '%s'", s, shown);
  d->kind = s[i++];
  uint64_t size;
  int has = parse_digits(s, n, &i, &size);
  if (has < 0 || (d->kind == 'U' && size > INT32_MAX / 4))
    return ds_err_quoted(err, "dtype '%s': size too large", s, shown);
  if (!has) {
    if (d->kind != 'M' && d->kind != 'm' && d->kind != 'O')
      return ds_err_quoted(err, "dtype '%s' has no size", s, shown);
    size = 8;
  }
  if (!check_numeric_size(d->kind, size))
    return ds_err_quoted(err, "unsupported dtype '%s'", s, shown);
  if ((d->kind == 'M' || d->kind == 'm') && parse_unit(s, n, &i, d, err))
    return -1;
  if (i != n) return ds_err_quoted(err, "unsupported dtype '%s'", s, shown);
  d->itemsize = (uint32_t)(d->kind == 'U' ? size * 4 : size);
  if (d->itemsize == 1 || d->kind == 'S' || d->kind == 'V' || d->kind == 'O')
    d->byteorder = '|';
  else if (order == '<' || order == '>')
    d->byteorder = order;
  else
    d->byteorder = ds_host_little() ? '<' : '>';
  dtype_format(d);
  return 0;
}

/* Parse a string literal that names a simple dtype. */
static int lit_simple_descr(cur *c, dtype_info *d, char **err) {
  const char *s;
  size_t n;
  int esc;
  if (lit_string(c, &s, &n, &esc, err)) return -1;
  if (esc) return ds_err(err, "escape in dtype string");
  return parse_simple_descr(s, n, d, err);
}

static int lit_struct(cur *c, int depth, uint64_t *size, int *has_object,
                      char **err);

/* A field name: a string, or a (title, name) tuple of strings. */
static int lit_field_name(cur *c, char **err) {
  const char *s;
  size_t n;
  int esc;
  if (eat(c, '(')) {
    if (lit_string(c, &s, &n, &esc, err)) return -1;
    if (!eat(c, ',')) return ds_err(err, "malformed field title");
    if (lit_string(c, &s, &n, &esc, err)) return -1;
    if (!eat(c, ')')) return ds_err(err, "malformed field title");
    return 0;
  }
  return lit_string(c, &s, &n, &esc, err);
}

/* One field tuple of a structured dtype: (name, format[, shape]). Adds its
 * size to *size. */
static int lit_field(cur *c, int depth, uint64_t *size, int *has_object,
                     char **err) {
  if (!eat(c, '(')) return ds_err(err, "malformed structured dtype");
  if (lit_field_name(c, err)) return -1;
  if (!eat(c, ',')) return ds_err(err, "malformed structured dtype");
  uint64_t fsize;
  if (peek(c) == '[') {
    if (lit_struct(c, depth + 1, &fsize, has_object, err)) return -1;
  } else {
    dtype_info d;
    if (lit_simple_descr(c, &d, err)) return -1;
    fsize = d.itemsize;
    if (d.kind == 'O') *has_object = 1;
  }
  if (eat(c, ',') && peek(c) != ')') {
    uint64_t mult = 1;
    int nd;
    if (peek(c) == '(') {
      if (lit_shape(c, NULL, 0, &nd, &mult, err)) return -1;
    } else if (lit_uint(c, &mult, err)) {
      return -1;
    }
    if (!mul_u64(fsize, mult, &fsize)) return ds_err(err, "dtype too large");
    eat(c, ',');
  }
  if (!eat(c, ')')) return ds_err(err, "malformed structured dtype");
  if (fsize > (uint64_t)INT32_MAX - *size) return ds_err(err, "dtype too large");
  *size += fsize;
  return 0;
}

/* A structured dtype: a list of field tuples; *size gets its itemsize. */
static int lit_struct(cur *c, int depth, uint64_t *size, int *has_object,
                      char **err) {
  if (depth > NPY_MAX_STRUCT_DEPTH) return ds_err(err, "dtype nested too deeply");
  if (!eat(c, '[')) return ds_err(err, "malformed structured dtype");
  *size = 0;
  while (!eat(c, ']')) {
    if (lit_field(c, depth, size, has_object, err)) return -1;
    if (!eat(c, ',') && peek(c) != ']')
      return ds_err(err, "malformed structured dtype");
  }
  return 0;
}

/* The value of 'descr' (a string or a list) into out. */
static int header_descr(cur *c, ds_npy *out, char **err) {
  if (peek(c) == '[') {
    const char *start = c->p;
    uint64_t size;
    if (lit_struct(c, 0, &size, &out->has_object, err)) return -1;
    size_t n = (size_t)(c->p - start), k = 0;
    /* stored as UTF-8: a 1.0/2.0 header is latin-1, a 3.0 header UTF-8 */
    if (!c->old_ints && !ds_utf8_valid((const uint8_t *)start, n))
      return ds_err(err, "structured dtype description is not UTF-8");
    for (size_t i = 0; i < n && k < sizeof out->descr_buf; i++) {
      unsigned char ch = (unsigned char)start[i];
      if (ch < 0x80 || !c->old_ints) {
        out->descr_buf[k++] = (char)ch;
      } else if (k + 2 <= sizeof out->descr_buf) {
        out->descr_buf[k++] = (char)(0xC0 | ch >> 6);
        out->descr_buf[k++] = (char)(0x80 | (ch & 0x3F));
      } else {
        k = sizeof out->descr_buf;
      }
    }
    if (k >= sizeof out->descr_buf)
      return ds_err(err, "structured dtype description longer than %zu bytes",
                    sizeof out->descr_buf - 1);
    out->descr_buf[k] = 0;
    out->kind = 'V';
    out->byteorder = '|';
    out->itemsize = (uint32_t)size;
    out->structured = 1;
    return 0;
  }
  dtype_info d;
  if (lit_simple_descr(c, &d, err)) return -1;
  memcpy(out->descr_buf, d.str, sizeof d.str);
  out->kind = d.kind;
  out->byteorder = d.byteorder;
  out->itemsize = d.itemsize;
  out->dt_unit = d.unit;
  out->dt_mult = d.mult;
  out->has_object = d.kind == 'O';
  return 0;
}

/* Element count and total bytes of a shape, with numpy's overflow rule: the
 * product of the non-zero dimensions times the itemsize fits in int64. */
static int shape_count(int ndim, const uint64_t *shape, uint32_t itemsize,
                       uint64_t *count, char **err) {
  uint64_t nz = 1;
  int zero = 0;
  for (int k = 0; k < ndim; k++) {
    if (shape[k] == 0) zero = 1;
    else if (!mul_u64(nz, shape[k], &nz) || nz > INT64_MAX)
      return ds_err(err, "array too large");
  }
  uint64_t bytes;
  if (!mul_u64(nz, itemsize ? itemsize : 1, &bytes) || bytes > INT64_MAX)
    return ds_err(err, "array too large");
  *count = zero ? 0 : nz;
  return 0;
}

/* One "'key': value" entry of the header dict; seen[] flags each key. */
static int header_entry(cur *c, ds_npy *out, int seen[3], char **err) {
  const char *k;
  size_t kn;
  int esc, which;
  if (lit_string(c, &k, &kn, &esc, err)) return -1;
  if (kn == 5 && !memcmp(k, "descr", 5)) which = 0;
  else if (kn == 13 && !memcmp(k, "fortran_order", 13)) which = 1;
  else if (kn == 5 && !memcmp(k, "shape", 5)) which = 2;
  else return ds_err_quoted(err, "unexpected key '%s'", k, kn > 40 ? 40 : kn);
  if (esc) return ds_err(err, "escape in key");
  if (seen[which]++) return ds_err_quoted(err, "duplicate key '%s'", k, kn);
  if (!eat(c, ':')) return ds_err(err, "expected ':'");
  if (which == 0) return header_descr(c, out, err);
  if (which == 1) {
    if (lit_word(c, "True")) out->fortran_order = 1;
    else if (lit_word(c, "False")) out->fortran_order = 0;
    else return ds_err(err, "fortran_order is not True or False");
    return 0;
  }
  uint64_t prod;
  return lit_shape(c, out->shape, DS_NPY_MAX_DIMS, &out->ndim, &prod, err);
}

/* The header dict text h[0..n) into out (everything but data). */
static int parse_header_dict(const char *h, size_t n, int major, ds_npy *out,
                             char **err) {
  cur c = {h, h + n, major < 3};
  int seen[3] = {0, 0, 0};
  if (!eat(&c, '{')) return ds_err(err, "header is not a dict");
  while (!eat(&c, '}')) {
    if (header_entry(&c, out, seen, err)) return -1;
    if (!eat(&c, ',') && peek(&c) != '}') return ds_err(err, "malformed dict");
  }
  if (peek(&c) >= 0) return ds_err(err, "text after the header dict");
  static const char *const names[3] = {"descr", "fortran_order", "shape"};
  for (int k = 0; k < 3; k++)
    if (!seen[k]) return ds_err(err, "missing key '%s'", names[k]);
  return 0;
}

int ds_npy_parse(const uint8_t *p, size_t n, ds_npy *out, char **err) {
  memset(out, 0, sizeof *out);
  out->descr = out->descr_buf;
  out->dt_mult = 1;
  if (n < 10 || memcmp(p, NPY_MAGIC, NPY_MAGIC_LEN) != 0)
    return ds_err(err, "not a .npy file (bad magic)");
  int major = p[6], minor = p[7];
  if (major < 1 || major > 3 || minor != 0)
    return ds_err(err, "unsupported .npy format version %d.%d", major, minor);
  size_t start = major == 1 ? 10 : 12;
  if (n < start)
    return ds_err(err, "truncated .npy: %zu bytes, the header length alone needs %zu",
                  n, start);
  size_t hlen = major == 1 ? (size_t)(p[8] | p[9] << 8) : (size_t)ds_le32(p + 8);
  if (hlen > n - start)
    return ds_err(err, "truncated .npy: the header needs %zu bytes, the blob has %zu",
                  start + hlen, n);
  out->version = major;
  if (parse_header_dict((const char *)p + start, hlen, major, out, err)) {
    ds_err_prefix(err, "invalid .npy header");
    return -1;
  }
  if (shape_count(out->ndim, out->shape, out->itemsize, &out->count, err)) {
    ds_err_prefix(err, "invalid .npy header");
    return -1;
  }
  size_t off = start + hlen, avail = n - off;
  out->data = p + off;
  if (out->has_object) {
    out->data_len = avail;
    return 0;
  }
  if (out->itemsize == 0 && out->count > 0)
    return ds_err(err, "invalid .npy header: zero-size dtype");
  uint64_t bytes = out->count * out->itemsize; /* fits: shape_count */
  if (bytes > avail)
    return ds_err(err, "truncated .npy: the data needs %llu bytes at offset %zu, "
                  "the blob has %zu", (unsigned long long)bytes, off, avail);
  out->data_len = (size_t)bytes;
  return 0;
}

/* ------------------------------------------------------------- writer */

/* Check a descr given to the writer; *normal gets a simple dtype's
 * normalised text (NULL for a structured list, written as given). */
static int writer_descr(const char *descr, dtype_info *d, const char **normal,
                        uint32_t *itemsize, char **err) {
  if (descr[0] == '[') {
    cur c = {descr, descr + strlen(descr), 0};
    uint64_t size;
    int obj = 0;
    if (lit_struct(&c, 0, &size, &obj, err)) return -1;
    if (peek(&c) >= 0) return ds_err(err, "text after the dtype list");
    if (!ds_utf8_valid((const uint8_t *)descr, strlen(descr)))
      return ds_err(err, "dtype list is not UTF-8");
    *normal = NULL;
    *itemsize = (uint32_t)size;
    return 0;
  }
  if (parse_simple_descr(descr, strlen(descr), d, err)) return -1;
  *normal = d->str;
  *itemsize = d->itemsize;
  return 0;
}

/* The dict text numpy writes, with its spare room for a growing axis. */
static int writer_dict(ds_buf *h, const char *descr, int fortran_order,
                       int ndim, const uint64_t *shape) {
  static const char spaces[NPY_GROWTH_AXIS_MAX_DIGITS] = "                     ";
  char d[20];
  int rc = ds_buf_puts(h, "{'descr': ");
  if (descr[0] == '[') rc |= ds_buf_puts(h, descr);
  else rc |= ds_buf_append(h, "'", 1) || ds_buf_puts(h, descr) || ds_buf_append(h, "'", 1);
  rc |= ds_buf_puts(h, ", 'fortran_order': ") ||
        ds_buf_puts(h, fortran_order ? "True" : "False") || ds_buf_puts(h, ", 'shape': (");
  for (int k = 0; k < ndim; k++)
    rc |= (k && ds_buf_append(h, ", ", 2)) || ds_buf_append(h, d, u64_digits(shape[k], d));
  rc |= ds_buf_puts(h, ndim == 1 ? ",), }" : "), }");
  if (ndim > 0) {
    size_t nd = u64_digits(shape[fortran_order ? ndim - 1 : 0], d);
    if (nd < NPY_GROWTH_AXIS_MAX_DIGITS)
      rc |= ds_buf_append(h, spaces, NPY_GROWTH_AXIS_MAX_DIGITS - nd);
  }
  return rc ? -1 : 0;
}

int ds_npy_write_header(ds_buf *out, const char *descr, int fortran_order,
                        int ndim, const uint64_t *shape, char **err) {
  if (!descr) return ds_err(err, "npy header: no dtype");
  if (ndim < 0 || ndim > DS_NPY_MAX_DIMS)
    return ds_err(err, "npy header: %d dimensions (at most %d)", ndim, DS_NPY_MAX_DIMS);
  dtype_info d;
  const char *normal = NULL;
  uint32_t itemsize = 0;
  uint64_t count;
  if (writer_descr(descr, &d, &normal, &itemsize, err) ||
      shape_count(ndim, shape, itemsize, &count, err)) {
    ds_err_prefix(err, "npy header");
    return -1;
  }
  ds_buf h = {0};
  if (writer_dict(&h, normal ? normal : descr, fortran_order, ndim, shape)) {
    ds_buf_free(&h);
    return ds_err(err, "out of memory");
  }
  int ascii = 1;
  for (size_t k = 0; k < h.len; k++) if (h.data[k] >= 0x80) ascii = 0;
  /* numpy: padlen = 64 - (prefix + len + 1) % 64, so 1..64 spaces */
  size_t prefix = 10;
  size_t pad = NPY_ALIGN - (prefix + h.len + 1) % NPY_ALIGN;
  int major = 1;
  if (!ascii || h.len + pad + 1 > 0xFFFF) {
    major = ascii ? 2 : 3;
    prefix = 12;
    pad = NPY_ALIGN - (prefix + h.len + 1) % NPY_ALIGN;
  }
  size_t hlen = h.len + pad + 1;
  if (hlen > UINT32_MAX) {
    ds_buf_free(&h);
    return ds_err(err, "npy header: too long");
  }
  uint8_t pre[12];
  memcpy(pre, NPY_MAGIC, NPY_MAGIC_LEN);
  pre[6] = (uint8_t)major;
  pre[7] = 0;
  for (size_t k = 0; k < prefix - 8; k++) pre[8 + k] = (uint8_t)(hlen >> (8 * k));
  int rc = ds_buf_reserve(out, out->len + prefix + hlen) ||
           ds_buf_append(out, pre, prefix) || ds_buf_append(out, h.data, h.len);
  ds_buf_free(&h);
  if (rc) return ds_err(err, "out of memory");
  memset(out->data + out->len, ' ', pad);
  out->data[out->len + pad] = '\n';
  out->len += pad + 1;
  return 0;
}

/* ------------------------------------------------------- element loads */

/* Append UTF-8 for one code point; non-scalar values become U+FFFD. */
static int put_utf8(ds_buf *out, uint32_t cp) {
  uint8_t b[4];
  size_t n = ds_utf8_encode(cp, b);
  if (!n) n = ds_utf8_encode(0xFFFD, b);
  return ds_buf_append(out, b, n);
}

/* A numpy U element (UTF-32) as UTF-8 without its trailing NULs. */
static int utf32_to_utf8(const uint8_t *p, uint32_t itemsize, int big,
                         ds_buf *out) {
  uint32_t n = itemsize / 4;
  while (n > 0 && ds_load_uint(p + 4 * (n - 1), 4, big) == 0) n--;
  for (uint32_t k = 0; k < n; k++)
    if (put_utf8(out, (uint32_t)ds_load_uint(p + 4 * k, 4, big))) return -1;
  return 0;
}

/* Length of an S element without its trailing NULs. */
static size_t bytes_len(const uint8_t *p, uint32_t itemsize) {
  size_t n = itemsize;
  while (n > 0 && p[n - 1] == 0) n--;
  return n;
}

/* ------------------------------------------------------------ datetime */

/* Proleptic Gregorian date of a day count since 1970-01-01. */
static void civil_from_days(int64_t days, int64_t *y, int *m, int *d) {
  int64_t q = floordiv(days, 146097);
  int64_t r = floormod(days, 146097) + 719468; /* from 0000-03-01 in era q */
  int64_t era = q + r / 146097;
  int64_t doe = r % 146097;
  int64_t yoe = (doe - doe / 1460 + doe / 36524 - doe / 146096) / 365;
  int64_t doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
  int64_t mp = (5 * doy + 2) / 153;
  *d = (int)(doy - (153 * mp + 2) / 5 + 1);
  *m = (int)(mp < 10 ? mp + 3 : mp - 9);
  *y = yoe + era * 400 + (*m <= 2);
}

/* "YYYY-MM-DD" for a day count. */
static int put_date(ds_buf *out, int64_t days) {
  int64_t y;
  int m, d;
  civil_from_days(days, &y, &m, &d);
  return ds_buf_printf(out, "%04lld-%02d-%02d", (long long)y, m, d);
}

int ds_npy_datetime_iso(ds_buf *out, int64_t t, int unit, int64_t mult,
                        char **err) {
  int64_t v;
  if (unit < 0 || unit >= NPY_NUNITS)
    return ds_err(err, "datetime64 without a unit");
  if (!mul_i64(t, mult, &v)) return ds_err(err, "datetime64 value out of range");
  int rc;
  switch (unit) {
    case DS_NPY_UNIT_Y:
      if (v > INT64_MAX - 1970) return ds_err(err, "datetime64 value out of range");
      rc = ds_buf_printf(out, "%04lld", (long long)(v + 1970));
      break;
    case DS_NPY_UNIT_M:
      rc = ds_buf_printf(out, "%04lld-%02d", (long long)(1970 + floordiv(v, 12)),
                         (int)floormod(v, 12) + 1);
      break;
    case DS_NPY_UNIT_W:
      if (!mul_i64(v, 7, &v)) return ds_err(err, "datetime64 value out of range");
      rc = put_date(out, v);
      break;
    case DS_NPY_UNIT_D: rc = put_date(out, v); break;
    case DS_NPY_UNIT_h:
      rc = put_date(out, floordiv(v, 24)) ||
           ds_buf_printf(out, "T%02d", (int)floormod(v, 24));
      break;
    case DS_NPY_UNIT_m: {
      int64_t r = floormod(v, 1440);
      rc = put_date(out, floordiv(v, 1440)) ||
           ds_buf_printf(out, "T%02d:%02d", (int)(r / 60), (int)(r % 60));
      break;
    }
    default: {
      /* seconds and below: split into whole seconds and a fraction */
      int digits = 3 * (unit - DS_NPY_UNIT_s);
      int64_t per = 1;
      for (int k = 0; k < digits; k++) per *= 10;
      int64_t secs = floordiv(v, per), frac = floormod(v, per);
      int64_t days = floordiv(secs, 86400), sod = floormod(secs, 86400);
      rc = put_date(out, days) ||
           ds_buf_printf(out, "T%02d:%02d:%02d", (int)(sod / 3600),
                         (int)(sod / 60 % 60), (int)(sod % 60));
      if (!rc && digits)
        rc = ds_buf_printf(out, ".%0*lld", digits, (long long)frac);
    }
  }
  return rc ? ds_err(err, "out of memory") : 0;
}

/* --------------------------------------------------------------- JSON */

/* Fail for dtypes whose elements have no JSON/scalar form here. */
static int check_decodable(const ds_npy *a, char **err) {
  if (a->has_object) return ds_err(err, "object arrays are not supported");
  if ((a->kind == 'f' && a->itemsize > 8) || (a->kind == 'c' && a->itemsize > 16))
    return ds_err(err, "dtype %s is not supported", a->descr);
  return 0;
}

/* Append a complex element as [re, im]. */
static int json_complex(ds_buf *out, const uint8_t *p, unsigned half, int big) {
  return ds_buf_puts(out, "[") || ds_json_double(out, ds_load_float(p, half, big)) ||
         ds_buf_puts(out, ",") ||
         ds_json_double(out, ds_load_float(p + half, half, big)) ||
         ds_buf_puts(out, "]");
}

/* Append one element at p as JSON; tmp is scratch space. */
static int json_element(const ds_npy *a, const uint8_t *p, ds_buf *out,
                        ds_buf *tmp, char **err) {
  int big = a->byteorder == '>', rc;
  switch (a->kind) {
    case 'b': rc = ds_buf_puts(out, p[0] ? "true" : "false"); break;
    case 'i':
      rc = ds_buf_printf(out, "%lld", (long long)ds_load_int(p, a->itemsize, big));
      break;
    case 'u':
      rc = ds_buf_printf(out, "%llu",
                         (unsigned long long)ds_load_uint(p, a->itemsize, big));
      break;
    case 'f': rc = ds_json_double(out, ds_load_float(p, a->itemsize, big)); break;
    case 'c': rc = json_complex(out, p, a->itemsize / 2, big); break;
    case 'U':
      tmp->len = 0;
      rc = utf32_to_utf8(p, a->itemsize, big, tmp) ||
           ds_json_string(out, tmp->data, tmp->len);
      break;
    case 'S': /* bytes: base64 inside JSON, as every bytes value */
      rc = ds_json_base64(out, p, bytes_len(p, a->itemsize));
      break;
    case 'V': rc = ds_json_base64(out, p, a->itemsize); break;
    case 'm': {
      int64_t t = ds_load_int(p, 8, big);
      rc = t == DS_NPY_NAT ? ds_buf_puts(out, "null")
                           : ds_buf_printf(out, "%lld", (long long)t);
      break;
    }
    case 'M': {
      int64_t t = ds_load_int(p, 8, big);
      if (t == DS_NPY_NAT) { rc = ds_buf_puts(out, "null"); break; }
      tmp->len = 0;
      if (ds_npy_datetime_iso(tmp, t, a->dt_unit, a->dt_mult, err)) return -1;
      rc = ds_json_string(out, tmp->data, tmp->len);
      break;
    }
    default: return ds_err(err, "dtype %s is not supported", a->descr);
  }
  return rc ? ds_err(err, "out of memory") : 0;
}

static int json_record(cur *c, int depth, const uint8_t *p, ds_buf *out,
                       ds_buf *tmp, char **err);

/* A field's format: a nested record (its descr at `fmt`) or a simple
 * dtype `d`; `fsize` bytes an element. */
typedef struct field_fmt {
  cur fmt;
  int nested;
  dtype_info d;
  uint64_t fsize;
} field_fmt;

/* One field value: nested lists over its subarray shape dims[k..nd). */
static int json_field(const field_fmt *f, const uint64_t *dims, int nd, int k,
                      int depth, const uint8_t *p, ds_buf *out, ds_buf *tmp,
                      char **err) {
  if (k == nd) {
    if (f->nested) {
      cur c = f->fmt;
      return json_record(&c, depth + 1, p, out, tmp, err);
    }
    ds_npy e;
    memset(&e, 0, sizeof e);
    e.kind = f->d.kind;
    e.byteorder = f->d.byteorder;
    e.itemsize = f->d.itemsize;
    e.dt_unit = f->d.unit;
    e.dt_mult = f->d.mult;
    e.descr = f->d.str;
    if (check_decodable(&e, err)) return -1;
    return json_element(&e, p, out, tmp, err);
  }
  uint64_t stride = f->fsize;
  for (int j = k + 1; j < nd; j++) stride *= dims[j];
  if (ds_buf_puts(out, "[")) return ds_err(err, "out of memory");
  for (uint64_t i = 0; i < dims[k]; i++) {
    if (i && ds_buf_puts(out, ",")) return ds_err(err, "out of memory");
    if (json_field(f, dims, nd, k + 1, depth, p + i * stride, out, tmp, err)) return -1;
  }
  return ds_buf_puts(out, "]") ? ds_err(err, "out of memory") : 0;
}

/* One record of a structured dtype (its descr list at c) as a JSON array of
 * its field values, as tolist() gives a tuple. The descr was checked when
 * the header was parsed, so the fields fit in the record. */
static int json_record(cur *c, int depth, const uint8_t *p, ds_buf *out,
                       ds_buf *tmp, char **err) {
  if (depth > NPY_MAX_STRUCT_DEPTH) return ds_err(err, "dtype nested too deeply");
  if (!eat(c, '[') || ds_buf_puts(out, "[")) return ds_err(err, "malformed structured dtype");
  uint64_t off = 0;
  for (int first = 1; !eat(c, ']'); first = 0) {
    field_fmt f;
    memset(&f, 0, sizeof f);
    if (!eat(c, '(') || lit_field_name(c, err) || !eat(c, ','))
      return ds_err(err, "malformed structured dtype");
    f.fmt = *c;
    f.nested = peek(c) == '[';
    int has_object = 0;
    if (f.nested ? lit_struct(c, depth + 1, &f.fsize, &has_object, err)
                 : lit_simple_descr(c, &f.d, err))
      return -1;
    if (!f.nested) f.fsize = f.d.itemsize;
    uint64_t dims[DS_NPY_MAX_DIMS], mult = 1;
    int nd = 0;
    if (eat(c, ',') && peek(c) != ')') {
      if (peek(c) == '(' ? lit_shape(c, dims, DS_NPY_MAX_DIMS, &nd, &mult, err)
                         : lit_uint(c, &mult, err))
        return -1;
      if (nd == 0 && peek(c) != '(') dims[nd++] = mult;
      eat(c, ',');
    }
    if (!eat(c, ')')) return ds_err(err, "malformed structured dtype");
    if (!first && ds_buf_puts(out, ",")) return ds_err(err, "out of memory");
    if (json_field(&f, dims, nd, 0, depth, p + off, out, tmp, err)) return -1;
    off += f.fsize * mult;
    if (!eat(c, ',') && peek(c) != ']') return ds_err(err, "malformed structured dtype");
  }
  return ds_buf_puts(out, "]") ? ds_err(err, "out of memory") : 0;
}

/* The state of one tolist() walk. */
typedef struct walk {
  const ds_npy *a;
  uint64_t stride[DS_NPY_MAX_DIMS]; /* in elements, per logical axis */
  ds_buf *out, tmp;
  char **err;
} walk;

/* Axis `dim` and below, starting at element `pos`, as nested lists. */
static int walk_dim(walk *w, int dim, uint64_t pos) {
  const ds_npy *a = w->a;
  if (dim == a->ndim && a->structured) {
    cur c = {a->descr, a->descr + strlen(a->descr), 0};
    return json_record(&c, 0, a->data + pos * a->itemsize, w->out, &w->tmp, w->err);
  }
  if (dim == a->ndim)
    return json_element(a, a->data + pos * a->itemsize, w->out, &w->tmp, w->err);
  if (ds_buf_puts(w->out, "[")) return ds_err(w->err, "out of memory");
  for (uint64_t i = 0; i < a->shape[dim]; i++) {
    if (i && ds_buf_puts(w->out, ",")) return ds_err(w->err, "out of memory");
    if (walk_dim(w, dim + 1, pos + i * w->stride[dim])) return -1;
  }
  if (ds_buf_puts(w->out, "]")) return ds_err(w->err, "out of memory");
  return 0;
}

/* Element strides of each logical axis for C or Fortran order (count > 0). */
static void strides(const ds_npy *a, uint64_t *stride) {
  uint64_t s = 1;
  if (a->fortran_order)
    for (int k = 0; k < a->ndim; k++) { stride[k] = s; s *= a->shape[k]; }
  else
    for (int k = a->ndim; k-- > 0;) { stride[k] = s; s *= a->shape[k]; }
}

/* Refuse empty arrays whose tolist() is an absurd number of empty lists. */
static int check_empty_lists(const ds_npy *a, char **err) {
  uint64_t lists = 1;
  for (int k = 0; k < a->ndim && a->shape[k] != 0; k++) {
    if (!mul_u64(lists, a->shape[k], &lists) || lists > NPY_MAX_EMPTY_LISTS)
      return ds_err(err, "empty array with too many sub-lists to print");
  }
  return 0;
}

int ds_npy_to_json(const ds_npy *a, ds_buf *out, char **err) {
  if (check_decodable(a, err)) return -1;
  if (a->count == 0 && check_empty_lists(a, err)) return -1;
  walk w;
  memset(&w, 0, sizeof w);
  w.a = a;
  w.out = out;
  w.err = err;
  if (a->count > 0) strides(a, w.stride);
  size_t start = out->len;
  int rc = walk_dim(&w, 0, 0);
  ds_buf_free(&w.tmp);
  if (rc) out->len = start;
  return rc;
}

/* ------------------------------------------------------ single elements */

int ds_npy_offset(const ds_npy *a, const uint64_t *idx, uint64_t *pos,
                  char **err) {
  for (int k = 0; k < a->ndim; k++)
    if (idx[k] >= a->shape[k])
      return ds_err(err, "index %llu is out of bounds for axis %d with size %llu",
                    (unsigned long long)idx[k], k,
                    (unsigned long long)a->shape[k]);
  uint64_t stride[DS_NPY_MAX_DIMS], p = 0;
  strides(a, stride);
  for (int k = 0; k < a->ndim; k++) p += idx[k] * stride[k];
  *pos = p;
  return 0;
}

int ds_npy_element(const ds_npy *a, uint64_t pos, ds_value *v, ds_buf *scratch,
                   char **err) {
  if (check_decodable(a, err)) return -1;
  if (a->structured) return ds_err(err, "structured dtypes are not supported");
  if (pos >= a->count) return ds_err(err, "element %llu is out of range",
                                     (unsigned long long)pos);
  const uint8_t *p = a->data + pos * a->itemsize;
  int big = a->byteorder == '>';
  memset(v, 0, sizeof *v);
  switch (a->kind) {
    case 'b': v->type = DS_V_BOOL; v->u.i = p[0] != 0; return 0;
    case 'i': v->type = DS_V_INT; v->u.i = ds_load_int(p, a->itemsize, big); return 0;
    case 'u': v->type = DS_V_UINT; v->u.u = ds_load_uint(p, a->itemsize, big); return 0;
    case 'f': v->type = DS_V_FLOAT; v->u.f = ds_load_float(p, a->itemsize, big); return 0;
    case 'c':
      v->type = DS_V_COMPLEX;
      v->u.c.re = ds_load_float(p, a->itemsize / 2, big);
      v->u.c.im = ds_load_float(p + a->itemsize / 2, a->itemsize / 2, big);
      return 0;
    case 'S': case 'V':
      v->type = DS_V_BYTES;
      v->u.s.p = p;
      v->u.s.n = a->kind == 'S' ? bytes_len(p, a->itemsize) : a->itemsize;
      return 0;
    case 'U':
      scratch->len = 0;
      if (utf32_to_utf8(p, a->itemsize, big, scratch)) return ds_err(err, "out of memory");
      v->type = DS_V_TEXT;
      v->u.s.p = scratch->data;
      v->u.s.n = scratch->len;
      return 0;
    case 'm': case 'M': {
      int64_t t = ds_load_int(p, 8, big);
      if (t == DS_NPY_NAT) return 0; /* DS_V_NULL */
      if (a->kind == 'm') { v->type = DS_V_INT; v->u.i = t; return 0; }
      scratch->len = 0;
      if (ds_npy_datetime_iso(scratch, t, a->dt_unit, a->dt_mult, err)) return -1;
      v->type = DS_V_TEXT;
      v->u.s.p = scratch->data;
      v->u.s.n = scratch->len;
      return 0;
    }
  }
  return ds_err(err, "dtype %s is not supported", a->descr);
}
