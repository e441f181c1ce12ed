/* bcolz_cell_write.c - what the bcolz writer needs to know about one cell:
 * parsing a column type (numpy dtype strings through the reader's own
 * dtype grammar, so whatever we write our reader opens; SQL type names),
 * upstream's column-name rule, and turning a value into the cell's bytes
 * (range checks, float16 rounding, UCS-4 text, ISO-8601 datetimes at the
 * column's unit, .npy cells of the column's shape, pickled objects). */
#include <ctype.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "core/decimal.h"
#include "core/npy.h"
#include "formats/bcolz/bcolz_cell_fast.h"
#include "formats/bcolz/bcolz_cell_write.h"
#include "decoders/pickle_write.h"

/* ------------------------------------------------------------ types */

/* The SQL type names we map, and what to. */
static const struct { const char *sql; const char *np; } SQL_TYPES[] = {
    {"INTEGER", "int64"}, {"INT", "int64"},     {"BIGINT", "int64"},
    {"REAL", "float64"},  {"FLOAT", "float64"}, {"DOUBLE", "float64"},
    {"BOOLEAN", "bool"},  {"BOOL", "bool"},     {"TEXT", "U"},
    {"BLOB", "S"}};

/* Parse "(d1,d2,...)" at *s into shape; *s moves past it. */
/* "<d> <what><dtype>" as an error (d with a '.' point whatever the
 * locale). Returns -1. */
static int not_number(char **err, double d, const char *what, const char *dtype) {
  char num[40];
  ds_format_double(num, sizeof num, 'g', 17, d);
  return ds_err(err, "%s %s%s", num, what, dtype);
}

static int parse_shape(const char **s, int *ndim, uint64_t *shape) {
  const char *p = *s + 1;
  *ndim = 0;
  while (1) {
    while (*p == ' ') p++;
    if (*p == ')') break;
    if (!isdigit((unsigned char)*p) || *ndim == BCOLZ_MAX_DIMS) return -1;
    uint64_t d = 0;
    while (isdigit((unsigned char)*p)) {
      if (d > 100000000) return -1;
      d = d * 10 + (uint64_t)(*p++ - '0');
    }
    shape[(*ndim)++] = d;
    while (*p == ' ') p++;
    if (*p == ',') p++;
    else if (*p != ')') return -1;
  }
  *s = p + 1;
  return 0;
}

int bcolz_write_parse_type(const char *spec, bcolz_wtype *out, char **err) {
  memset(out, 0, sizeof *out);
  const char *s = spec;
  while (*s == ' ') s++;
  int ndim = 0;
  uint64_t shape[BCOLZ_MAX_DIMS];
  if (*s == '(' && parse_shape(&s, &ndim, shape))
    return ds_err(err, "bad cell shape in type '%s'", spec);
  char base[64];
  size_t n = strlen(s);
  while (n && s[n - 1] == ' ') n--;
  if (n == 0 || n >= sizeof base) return ds_err(err, "bad type '%s'", spec);
  memcpy(base, s, n);
  base[n] = 0;
  for (size_t i = 0; i < sizeof SQL_TYPES / sizeof SQL_TYPES[0]; i++)
    if (strcasecmp(base, SQL_TYPES[i].sql) == 0) {
      snprintf(base, sizeof base, "%s", SQL_TYPES[i].np);
      break;
    }
  /* S / U without a size: the width of the longest value */
  const char *b = base + (base[0] == '<' || base[0] == '>' || base[0] == '|' ||
                          base[0] == '=');
  if ((b[0] == 'S' || b[0] == 'U' || b[0] == 'a') && b[1] == 0) {
    out->width_unknown = 1;
    snprintf(base + (b - base) + 1, sizeof base - (size_t)(b - base) - 1, "1");
  }
  for (const char *c = base; *c; c++)
    if (*c == '"' || *c == '\\' || (unsigned char)*c < 0x20)
      return ds_err(err, "bad type '%s'", spec);
  /* the reader's grammar: a meta/storage and meta/sizes pair */
  ds_buf st = {0}, sz = {0};
  int rc = ds_buf_printf(&st, "{\"dtype\": \"%s\", \"chunklen\": 1}", base) ||
           ds_buf_puts(&sz, "{\"shape\": [0");
  for (int i = 0; !rc && i < ndim; i++)
    rc = ds_buf_printf(&sz, ", %llu", (unsigned long long)shape[i]);
  if (!rc) rc = ds_buf_puts(&sz, "]}");
  uint64_t len, chunklen;
  char *perr = NULL;
  if (rc) {
    rc = ds_err(err, "out of memory");
  } else if (bcolz_parse_meta(st.data, st.len, sz.data, sz.len, &out->dt, &len,
                              &chunklen, &perr)) {
    rc = ds_err(err, "unsupported type '%s' (numpy dtypes such as i4, f8, "
                     "S16, U8, M8[ns], bool, object, or INTEGER, REAL, TEXT, "
                     "BLOB, BOOLEAN)", spec);
  } else if (out->dt.kind == 'O' && ndim) {
    rc = ds_err(err, "type '%s': object cells cannot have a shape", spec);
  } else if (out->dt.atom == 0 && out->dt.kind != 'O') {
    rc = ds_err(err, "type '%s' has cells of 0 bytes", spec);
  } else if ((out->dt.kind == 'M' || out->dt.kind == 'm') && out->dt.unit < 0) {
    rc = ds_err(err, "type '%s' needs a unit, e.g. M8[ns]", spec);
  }
  free(perr);
  ds_buf_free(&st);
  ds_buf_free(&sz);
  return rc;
}

static const char *const KEYWORDS[] = {
    "False", "None", "True", "and", "as", "assert", "async", "await",
    "break", "class", "continue", "def", "del", "elif", "else", "except",
    "finally", "for", "from", "global", "if", "import", "in", "is",
    "lambda", "nonlocal", "not", "or", "pass", "raise", "return", "try",
    "while", "with", "yield"};

int bcolz_write_check_name(const char *name, char **err) {
  const unsigned char *p = (const unsigned char *)name;
  int ok = *p && !isdigit(*p) && ds_utf8_valid(p, strlen(name));
  for (; ok && *p; p++)
    ok = *p >= 0x80 || isalnum(*p) || *p == '_';
  for (size_t i = 0; ok && i < sizeof KEYWORDS / sizeof KEYWORDS[0]; i++)
    ok = strcmp(name, KEYWORDS[i]) != 0;
  return ok ? 0 : ds_err(err, "column name '%s' is not a Python identifier "
                              "(bcolz names its folders after columns)",
                         name);
}

/* ------------------------------------------------------------ numbers */

/* The one rule for text in a number column: text is a number when all of
 * it spells one in decimal, -?D+(.D+)?([eE][-+]?D+)? (no spaces, no '+',
 * no hex, no inf/nan). 1 digits only (an integer, read exactly), 2 with a
 * fraction or exponent, 0 not a number. */
static int decimal_text(const uint8_t *s, size_t n) {
  size_t i = n && s[0] == '-', d = i;
  while (i < n && s[i] >= '0' && s[i] <= '9') i++;
  if (i == d) return 0;
  if (i == n) return 1;
  if (s[i] == '.') {
    size_t f = ++i;
    while (i < n && s[i] >= '0' && s[i] <= '9') i++;
    if (i == f) return 0;
  }
  if (i < n && (s[i] == 'e' || s[i] == 'E')) {
    i++;
    if (i < n && (s[i] == '-' || s[i] == '+')) i++;
    size_t e = i;
    while (i < n && s[i] >= '0' && s[i] <= '9') i++;
    if (i == e) return 0;
  }
  return i == n ? 2 : 0;
}

/* Decimal text (decimal_text 2) as a double. */
static double text_double(const uint8_t *s, size_t n) {
  char buf[64], *p = n < sizeof buf ? buf : malloc(n + 1);
  if (!p) return NAN;
  memcpy(p, s, n);
  p[n] = 0;
  double d = ds_strtod(p, NULL);
  if (p != buf) free(p);
  return d;
}

/* The error for text that is not a number by decimal_text's rule. */
static int not_decimal(char **err) {
  return ds_err(err, "text that is not a decimal number (-12, 1.5, 2e3: no "
                     "spaces, '+' or hex)");
}

/* A value as a signed integer (neg, magnitude): INT, UINT, BOOL, BIGINT,
 * integral FLOAT, or TEXT holding a whole decimal number (digits are read
 * exactly: how we show uint64). */
static int as_integer(const ds_value *v, int *neg, uint64_t *mag,
                      char **err) {
  const uint8_t *s;
  size_t n;
  if (v->type == DS_V_TEXT) {
    int k = decimal_text(v->u.s.p, v->u.s.n);
    if (k == 0) return not_decimal(err);
    if (k == 2) {
      ds_value f = {.type = DS_V_FLOAT};
      f.u.f = text_double(v->u.s.p, v->u.s.n);
      return as_integer(&f, neg, mag, err);
    }
  }
  switch (v->type) {
    case DS_V_INT: case DS_V_BOOL:
      *neg = v->u.i < 0;
      *mag = *neg ? (uint64_t)0 - (uint64_t)v->u.i : (uint64_t)v->u.i;
      return 0;
    case DS_V_UINT: *neg = 0; *mag = v->u.u; return 0;
    case DS_V_FLOAT: {
      double d = v->u.f;
      if (!(d == floor(d)) || !(fabs(d) < 18446744073709551616.0))
        return not_number(err, d, "is not an integer", "");
      *neg = d < 0;
      *mag = (uint64_t)fabs(d);
      return 0;
    }
    case DS_V_BIGINT: case DS_V_TEXT:
      s = v->u.s.p, n = v->u.s.n;
      break;
    case DS_V_NULL: return ds_err(err, "NULL in an integer column");
    default: return ds_err(err, "not an integer");
  }
  size_t i = n && s[0] == '-';
  *neg = (int)i;
  *mag = 0;
  if (i == n) return ds_err(err, "not an integer");
  for (; i < n; i++) {
    if (s[i] < '0' || s[i] > '9') return ds_err(err, "not an integer");
    unsigned d = (unsigned)(s[i] - '0');
    if (*mag > (UINT64_MAX - d) / 10) return ds_err(err, "integer too large");
    *mag = *mag * 10 + d;
  }
  return 0;
}

/* Store x (size bytes) in the dtype's byte order. */
static void put_uint(uint8_t *p, uint64_t x, unsigned size, int big) {
  for (unsigned i = 0; i < size; i++)
    p[big ? size - 1 - i : i] = (uint8_t)(x >> (8 * i));
}

static int encode_int(const bcolz_dtype *dt, const ds_value *v, uint8_t *p,
                      char **err) {
  int neg = 0;
  uint64_t mag = 0;
  if (as_integer(v, &neg, &mag, err)) return -1;
  unsigned size = dt->itemsize, bits = size * 8;
  if (dt->kind == 'b') {
    if ((neg && mag) || mag > 1) return ds_err(err, "a bool must be 0 or 1");
    p[0] = (uint8_t)mag;
    return 0;
  }
  uint64_t x;
  if (dt->kind == 'u') {
    uint64_t max = bits == 64 ? UINT64_MAX : ((uint64_t)1 << bits) - 1;
    if ((neg && mag) || mag > max) goto range;
    x = mag;
  } else {
    uint64_t lim = (uint64_t)1 << (bits - 1); /* -lim .. lim-1 */
    if (neg ? mag > lim : mag >= lim) goto range;
    x = neg ? (uint64_t)0 - mag : mag;
  }
  put_uint(p, x, size, dt->byteorder == '>');
  return 0;
range:
  return ds_err(err, "%s%llu does not fit %s", neg ? "-" : "",
                (unsigned long long)mag, dt->str);
}

/* IEEE half from double, rounding to nearest even; -1 on overflow. */
static int to_half(double d, uint16_t *h) {
  float f = (float)d;
  uint32_t x;
  memcpy(&x, &f, 4);
  uint16_t sign = (uint16_t)((x >> 16) & 0x8000);
  if (isnan(d)) { *h = sign | 0x7e00; return 0; }
  if (isinf(d)) { *h = sign | 0x7c00; return 0; }
  double a = fabs(d);
  if (a >= 65520.0) return -1; /* rounds to infinity */
  if (a < 5.960464477539063e-08 / 2) { *h = sign; return 0; }
  int e;
  double m = frexp(a, &e); /* a = m * 2^e, m in [0.5, 1) */
  uint32_t bits;
  if (e < -13) { /* subnormal: units of 2^-24 */
    bits = (uint32_t)nearbyint(a * 16777216.0);
  } else {
    uint32_t mant = (uint32_t)nearbyint((m * 2 - 1) * 1024.0);
    int ex = e - 1 + 15;
    if (mant == 1024) { mant = 0; ex++; }
    if (ex >= 31) return -1;
    bits = (uint32_t)ex << 10 | mant;
  }
  *h = (uint16_t)(sign | bits);
  return 0;
}

static int encode_float(const bcolz_dtype *dt, const ds_value *v, uint8_t *p,
                        char **err) {
  double d;
  switch (v->type) {
    case DS_V_FLOAT: d = v->u.f; break;
    case DS_V_INT: case DS_V_BOOL: d = (double)v->u.i; break;
    case DS_V_UINT: d = (double)v->u.u; break;
    case DS_V_NULL: d = NAN; break; /* reads back as NULL */
    case DS_V_TEXT:
      if (!decimal_text(v->u.s.p, v->u.s.n)) return not_decimal(err);
      d = text_double(v->u.s.p, v->u.s.n);
      break;
    default: return ds_err(err, "not a number");
  }
  int big = dt->byteorder == '>';
  if (dt->itemsize == 8) {
    uint64_t u;
    memcpy(&u, &d, 8);
    put_uint(p, u, 8, big);
  } else if (dt->itemsize == 4) {
    float f = (float)d;
    if (isfinite(d) && !isfinite(f))
      return not_number(err, d, "does not fit ", dt->str);
    uint32_t u;
    memcpy(&u, &f, 4);
    put_uint(p, u, 4, big);
  } else {
    uint16_t h;
    if (to_half(d, &h)) return not_number(err, d, "does not fit ", dt->str);
    put_uint(p, h, 2, big);
  }
  return 0;
}

/* ------------------------------------------------------------ datetimes */

/* Days since 1970-01-01 of a proleptic Gregorian date. */
static int64_t days_from_civil(int64_t y, int m, int d) {
  y -= m <= 2;
  int64_t era = (y >= 0 ? y : y - 399) / 400;
  int64_t yoe = y - era * 400;
  int64_t doy = (153 * (m + (m > 2 ? -3 : 9)) + 2) / 5 + d - 1;
  int64_t doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
  return era * 146097 + doe - 719468;
}

/* Read exactly `n` digits at *p. */
static int digits(const char **p, const char *end, int n, int64_t *v) {
  *v = 0;
  for (int i = 0; i < n; i++, (*p)++) {
    if (*p >= end || !isdigit((unsigned char)**p)) return -1;
    *v = *v * 10 + (**p - '0');
  }
  return 0;
}

/* Parse numpy's ISO text ("2021", "2021-03", "2021-03-04",
 * "2021-03-04T05:06:07.123456789", ' ' for 'T', optional 'Z') into ticks
 * of the column's unit. The value must be exact at that unit. */
static int parse_iso(const bcolz_dtype *dt, const uint8_t *s, size_t n,
                     int64_t *ticks, char **err) {
  const char *p = (const char *)s, *end = p + n;
  int64_t y = 0, mo = 1, d = 1, h = 0, mi = 0, se = 0;
  __int128 frac = 0; /* attoseconds */
  int neg = 0, parts = 1;
  if (p < end && (*p == '-' || *p == '+')) neg = *p++ == '-';
  const char *ys = p;
  while (p < end && isdigit((unsigned char)*p) && p - ys < 12) y = y * 10 + (*p++ - '0');
  if (p - ys < 4) goto bad;
  if (neg) y = -y;
  if (p < end && *p == '-') {
    p++;
    if (digits(&p, end, 2, &mo) || mo < 1 || mo > 12) goto bad;
    parts = 2;
    if (p < end && *p == '-') {
      p++;
      if (digits(&p, end, 2, &d) || d < 1 || d > 31) goto bad;
      parts = 3;
      if (p < end && (*p == 'T' || *p == ' ')) {
        p++;
        if (digits(&p, end, 2, &h) || h > 23) goto bad;
        if (p < end && *p == ':') {
          p++;
          if (digits(&p, end, 2, &mi) || mi > 59) goto bad;
          if (p < end && *p == ':') {
            p++;
            if (digits(&p, end, 2, &se) || se > 59) goto bad;
            if (p < end && *p == '.') {
              p++;
              __int128 scale = 100000000000000000; /* 1e17 */
              if (p >= end || !isdigit((unsigned char)*p)) goto bad;
              while (p < end && isdigit((unsigned char)*p)) {
                if (scale == 0 && *p != '0') goto inexact;
                frac += scale * (*p++ - '0');
                scale /= 10;
              }
            }
          }
        }
      }
    }
  }
  if (p < end && *p == 'Z') p++;
  if (p != end) goto bad;
  if (d > 28 && days_from_civil(y, (int)mo, (int)d) >=
                    days_from_civil(mo == 12 ? y + 1 : y, mo == 12 ? 1 : (int)mo + 1, 1))
    goto bad; /* no such day in that month */
  {
    (void)parts;
    int64_t days = days_from_civil(y, (int)mo, (int)d);
    __int128 t;
    int unit = dt->unit;
    static const int exp10[] = {0, 0, 0, 0, 0, 0, 0, 3, 6, 9, 12, 15, 18};
    if (unit == DS_NPY_UNIT_Y || unit == DS_NPY_UNIT_M) {
      if (d != 1 || h || mi || se || frac || (unit == DS_NPY_UNIT_Y && mo != 1))
        goto inexact;
      t = unit == DS_NPY_UNIT_Y ? y - 1970 : (y - 1970) * 12 + (mo - 1);
    } else if (unit == DS_NPY_UNIT_W || unit == DS_NPY_UNIT_D) {
      if (h || mi || se || frac) goto inexact;
      if (unit == DS_NPY_UNIT_W && days % 7) goto inexact;
      t = unit == DS_NPY_UNIT_W ? days / 7 : days;
    } else {
      __int128 secs = (__int128)days * 86400 + h * 3600 + mi * 60 + se;
      __int128 att = secs * (__int128)1000000000000000000 + frac;
      __int128 per = 1;
      int e = unit == DS_NPY_UNIT_h ? 0 : unit == DS_NPY_UNIT_m ? 0
              : 18 - exp10[unit];
      for (int i = 0; i < e; i++) per *= 10;
      if (unit == DS_NPY_UNIT_h) per = (__int128)3600 * 1000000000000000000;
      if (unit == DS_NPY_UNIT_m) per = (__int128)60 * 1000000000000000000;
      if (att % per) goto inexact;
      t = att / per;
    }
    if (t % dt->mult) goto inexact;
    t /= dt->mult;
    if (t <= INT64_MIN || t > INT64_MAX)
      return ds_err(err, "'%.*s' is out of the range of %s", (int)n, s, dt->str);
    *ticks = (int64_t)t;
    return 0;
  }
bad:
  return ds_err(err, "'%.*s' is not an ISO-8601 date or time", (int)n, s);
inexact:
  return ds_err(err, "'%.*s' is not a whole number of %s units", (int)n, s,
                dt->str);
}

static int encode_time(const bcolz_dtype *dt, const ds_value *v, uint8_t *p,
                       char **err) {
  int64_t t = 0;
  if (v->type == DS_V_NULL) {
    t = INT64_MIN; /* NaT, read back as NULL */
  } else if (v->type == DS_V_INT) {
    t = v->u.i; /* ticks of the unit */
  } else if (v->type == DS_V_TEXT && dt->kind == 'M') {
    if (parse_iso(dt, v->u.s.p, v->u.s.n, &t, err)) return -1;
  } else if (dt->kind == 'm') { /* ticks as any integer column takes them */
    int neg;
    uint64_t mag;
    if (as_integer(v, &neg, &mag, err)) return -1;
    if (neg ? mag > (uint64_t)1 << 63 : mag > (uint64_t)INT64_MAX)
      return ds_err(err, "%s%llu ticks do not fit %s", neg ? "-" : "",
                    (unsigned long long)mag, dt->str);
    t = neg ? (int64_t)(0 - mag) : (int64_t)mag;
  } else {
    return ds_err(err, "not an ISO-8601 text or ticks");
  }
  if (t == INT64_MIN && v->type != DS_V_NULL) /* NaT: it would read back NULL */
    return ds_err(err, "-9223372036854775808 is NaT in %s and would read back as "
                       "NULL (give NULL for NaT)", dt->str);
  put_uint(p, (uint64_t)t, 8, dt->byteorder == '>');
  return 0;
}

/* ------------------------------------------------------------ text */

/* Next code point of valid UTF-8 at *p (validity checked by the caller). */
static uint32_t next_cp(const uint8_t **p) {
  const uint8_t *s = *p;
  uint32_t c = s[0];
  int n = c < 0x80 ? 1 : c < 0xe0 ? 2 : c < 0xf0 ? 3 : 4;
  if (n > 1) {
    c &= 0x3f >> (n - 1);
    for (int i = 1; i < n; i++) c = c << 6 | (s[i] & 0x3f);
  }
  *p = s + n;
  return c;
}

int bcolz_cell_text_check(const bcolz_dtype *dt, const ds_value *v, char **err) {
  if (v->type != DS_V_TEXT && v->type != DS_V_BYTES)
    return ds_err(err, v->type != DS_V_NULL ? "not text or bytes"
                       : dt->kind == 'S' ? "NULL in a bytes (S) column, which has no NULL"
                                         : "NULL in a text (U) column, which has no NULL");
  if (v->u.s.n && v->u.s.p[v->u.s.n - 1] == 0) /* U: a NUL code point is a 0 byte too */
    return ds_err(err, "%s ending in a NUL byte would read back without it (numpy's "
                       "%s cells drop trailing NULs; an `object` column keeps any bytes)",
                  v->type == DS_V_BYTES ? "bytes" : "text", dt->kind == 'S' ? "S" : "U");
  return 0;
}

static int encode_text(const bcolz_dtype *dt, const ds_value *v, uint8_t *p,
                       char **err) {
  if (bcolz_cell_text_check(dt, v, err)) return -1;
  const uint8_t *s = v->u.s.p, *e = s + v->u.s.n;
  if (dt->kind == 'S') {
    if (v->u.s.n > dt->itemsize)
      return ds_err(err, "%zu bytes do not fit %s", v->u.s.n, dt->str);
    memcpy(p, s, v->u.s.n);
    memset(p + v->u.s.n, 0, dt->itemsize - v->u.s.n);
    return 0;
  }
  if (v->type != DS_V_TEXT || !ds_utf8_valid(s, v->u.s.n))
    return ds_err(err, "not valid UTF-8 text");
  uint32_t width = dt->itemsize / 4, i = 0;
  for (; s < e; i++) {
    if (i == width)
      return ds_err(err, "text longer than %u characters does not fit %s",
                    width, dt->str);
    put_uint(p + 4 * i, next_cp(&s), 4, dt->byteorder == '>');
  }
  memset(p + 4 * i, 0, 4 * (width - i));
  return 0;
}

/* ------------------------------------------------------------ cells */

/* A .npy value of exactly the cell's shape and dtype (byte order may
 * differ: it is swapped). */
static int encode_array(const bcolz_dtype *dt, const ds_value *v, uint8_t *p,
                        char **err) {
  if (v->type != DS_V_NDARRAY && v->type != DS_V_BYTES)
    return ds_err(err, "a cell of shape %s needs a .npy array",
                  dt->ndim ? "(...)" : "()");
  ds_npy a;
  if (ds_npy_parse(v->u.s.p, v->u.s.n, &a, err)) return -1;
  int same = a.ndim == dt->ndim && a.kind == dt->kind &&
             a.itemsize == dt->itemsize && !a.structured &&
             ((a.kind != 'M' && a.kind != 'm') ||
              (a.dt_unit == dt->unit && a.dt_mult == dt->mult));
  for (int i = 0; same && i < a.ndim; i++) same = a.shape[i] == dt->shape[i];
  if (!same)
    return ds_err(err, "array %s of dtype %s does not match the column's "
                       "cells (dtype %s, %d dimensions)",
                  a.ndim ? "of that shape" : "", a.descr, dt->str, dt->ndim);
  if (a.fortran_order && a.ndim > 1)
    return ds_err(err, "a Fortran-order array cannot be stored (write it in "
                       "C order)");
  memcpy(p, a.data, a.data_len);
  unsigned unit = a.kind == 'U' ? 4 : a.kind == 'S' || a.kind == 'b' ? 1
                                                                   : a.itemsize;
  int swap = unit > 1 && a.byteorder != dt->byteorder;
  for (size_t i = 0; swap && i + unit <= a.data_len; i += unit)
    for (unsigned j = 0; j < unit / 2; j++) {
      uint8_t t = p[i + j];
      p[i + j] = p[i + unit - 1 - j];
      p[i + unit - 1 - j] = t;
    }
  return 0;
}

int bcolz_cell_encode(const bcolz_dtype *dt, const ds_value *v, uint8_t *out,
                      ds_buf *obj, char **err) {
  if (dt->kind == 'O') {
    ds_pickler pk = {0};
    obj->len = 0;
    int rc = ds_pickle_encode(&pk, v, obj, err);
    ds_pickler_free(&pk);
    return rc;
  }
  if (dt->ndim) return encode_array(dt, v, out, err);
  switch (dt->kind) {
    case 'b': case 'i': case 'u': return encode_int(dt, v, out, err);
    case 'f': return encode_float(dt, v, out, err);
    case 'M': case 'm': return encode_time(dt, v, out, err);
    case 'S': case 'U': return encode_text(dt, v, out, err);
    default: return ds_err(err, "dtype %s cannot be written", dt->str);
  }
}

void bcolz_fast_for(const bcolz_dtype *dt, bcolz_fast *out) {
  memset(out, 0, sizeof *out);
  out->size = dt->itemsize;
  if (dt->ndim) return;
  if (dt->kind == 'S') {
    out->put = BCOLZ_PUT_S;
    return;
  }
#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
  int native = dt->byteorder != '>';
#else
  int native = dt->itemsize == 1;
#endif
  if (!native) return;
  if (dt->kind == 'b') {
    out->put = BCOLZ_PUT_B1;
  } else if (dt->kind == 'f' && dt->itemsize == 8) {
    out->put = BCOLZ_PUT_F8;
  } else if ((dt->kind == 'i' && dt->itemsize <= 8) || (dt->kind == 'u' && dt->itemsize <= 4)) {
    unsigned bits = dt->itemsize * 8;
    out->lo = dt->kind == 'u' ? 0 : bits == 64 ? INT64_MIN : -((int64_t)1 << (bits - 1));
    out->hi = dt->kind == 'u' ? (int64_t)(((uint64_t)1 << bits) - 1)
              : bits == 64 ? INT64_MAX : ((int64_t)1 << (bits - 1)) - 1;
    out->put = bits == 64 ? BCOLZ_PUT_I8 : bits == 32 ? BCOLZ_PUT_I4
               : bits == 16 ? BCOLZ_PUT_I2 : BCOLZ_PUT_I1;
  }
}
