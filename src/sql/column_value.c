/* column_value.c - values of columns declared by columns= converted by
 * SQLite's type affinity rules (https://www.sqlite.org/datatype3.html,
 * section 3; see column_value.h). The rules are those SQLite applies when
 * it stores a value in a column of a native table, including its parser of
 * numeric text (sqlite3AtoF) and the REAL text it writes ("%!.15g"). */
#include "column_value.h"

#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/decimal.h"
#include "value_sql.h"

/* SQLite's white space (sqlite3Isspace): tab, newline, vertical tab, form
 * feed, carriage return and space. */
static int is_space(uint8_t c) { return c == ' ' || (c >= 9 && c <= 13); }

static int is_digit(uint8_t c) { return c >= '0' && c <= '9'; }

/* The digits p[0..n) (an optional sign first) as an int64: 1, or 0 when
 * the value is outside int64. */
static int digits_int64(const uint8_t *p, size_t n, int64_t *out) {
  int neg = n && p[0] == '-';
  size_t k = n && (p[0] == '-' || p[0] == '+');
  uint64_t u = 0, lim = neg ? (uint64_t)INT64_MAX + 1 : (uint64_t)INT64_MAX;
  for (; k < n; k++) {
    uint64_t d = (uint64_t)(p[k] - '0');
    if (u > (lim - d) / 10) return 0;
    u = 10 * u + d;
  }
  *out = neg ? (int64_t)(0 - u) : (int64_t)u;
  return 1;
}

/* The decimal text p[0..n) (already checked to be a number) as a double,
 * read in the C locale whatever the host's locale is. 0, or -1 when out
 * of memory. */
static int digits_double(const uint8_t *p, size_t n, double *out) {
  char small[128];
  char *s = n < sizeof small ? small : malloc(n + 1);
  if (!s) return -1;
  memcpy(s, p, n);
  s[n] = 0;
  *out = ds_strtod(s, NULL);
  if (s != small) free(s);
  return 0;
}

int ds_text_number(const uint8_t *p, size_t n, int64_t *i, double *r) {
  size_t a = 0, e = n;
  while (a < e && is_space(p[a])) a++;
  while (e > a && is_space(p[e - 1])) e--;
  size_t k = a, digits = 0;
  int pure = 1; /* no '.' nor exponent */
  if (k < e && (p[k] == '+' || p[k] == '-')) k++;
  for (; k < e && is_digit(p[k]); k++) digits++;
  if (k < e && p[k] == '.') {
    pure = 0;
    for (k++; k < e && is_digit(p[k]); k++) digits++;
  }
  if (k < e && (p[k] == 'e' || p[k] == 'E')) {
    size_t exp_digits = 0;
    pure = 0;
    k++;
    if (k < e && (p[k] == '+' || p[k] == '-')) k++;
    for (; k < e && is_digit(p[k]); k++) exp_digits++;
    if (exp_digits == 0) return 0;
  }
  if (k != e || digits == 0) return 0;
  if (pure && digits_int64(p + a, e - a, i)) return 1;
  return digits_double(p + a, e - a, r) ? -1 : 2;
}

/* A REAL that is exactly an integer strictly between INT64_MIN and
 * INT64_MAX (sqlite3VdbeIntegerAffinity): 1 and *out, else 0. */
static int real_as_int(double f, int64_t *out) {
  if (!(f > -9223372036854775808.0 && f < 9223372036854775808.0)) return 0;
  int64_t x = (int64_t)f;
  if ((double)x != f || x == INT64_MIN) return 0;
  *out = x;
  return 1;
}

/* An integer in a column of numeric affinity (REAL when `real`). */
static void result_int(sqlite3_context *ctx, int64_t i, int real) {
  if (real) sqlite3_result_double(ctx, (double)i);
  else sqlite3_result_int64(ctx, i);
}

/* A real in a column of numeric affinity: INTEGER when it is exactly one
 * (unless `real`); NaN is NULL. A REAL column keeps -0.0 (a native table
 * stores it as the integer 0 and reads back 0.0: the one difference). */
static void result_real(sqlite3_context *ctx, double f, int real) {
  int64_t x;
  if (isnan(f)) sqlite3_result_null(ctx);
  else if (!real && real_as_int(f, &x)) sqlite3_result_int64(ctx, x);
  else sqlite3_result_double(ctx, f);
}

/* Text in a column of numeric affinity: a number when it reads as one,
 * else the text unchanged. */
static void result_numeric_text(sqlite3_context *ctx, const uint8_t *p, size_t n, int real) {
  int64_t i = 0;
  double r = 0;
  int kind = ds_text_number(p, n, &i, &r);
  if (kind == 1) result_int(ctx, i, real);
  else if (kind == 2) result_real(ctx, r, real);
  else if (kind < 0) sqlite3_result_error_nomem(ctx);
  else ds_result_text(ctx, p, n);
}

/* INTEGER / NUMERIC affinity (`real` 0) or REAL affinity (`real` 1). */
static void result_numeric(sqlite3_context *ctx, const ds_value *v, int real) {
  int64_t i;
  switch (v->type) {
    case DS_V_BOOL: result_int(ctx, v->u.i ? 1 : 0, real); return;
    case DS_V_INT: result_int(ctx, v->u.i, real); return;
    case DS_V_UINT:
      if (v->u.u <= (uint64_t)INT64_MAX) result_int(ctx, (int64_t)v->u.u, real);
      else result_real(ctx, (double)v->u.u, real); /* its decimal text is a REAL */
      return;
    case DS_V_BIGINT:
      if (ds_bigint_to_i64(v->u.s.p, v->u.s.n, &i) == 1) result_int(ctx, i, real);
      else result_numeric_text(ctx, v->u.s.p, v->u.s.n, real);
      return;
    case DS_V_FLOAT: result_real(ctx, v->u.f, real); return;
    case DS_V_TEXT: result_numeric_text(ctx, v->u.s.p, v->u.s.n, real); return;
    default: ds_value_result(ctx, v); return; /* NULL, BLOB, JSON text */
  }
}

/* TEXT affinity: numbers become their text as SQLite writes them. */
static void result_text(sqlite3_context *ctx, const ds_value *v) {
  char buf[48];
  int64_t i;
  switch (v->type) {
    case DS_V_BOOL:
    case DS_V_INT: snprintf(buf, sizeof buf, "%" PRId64, v->type == DS_V_BOOL ? !!v->u.i : v->u.i); break;
    case DS_V_UINT: snprintf(buf, sizeof buf, "%" PRIu64, v->u.u); break;
    case DS_V_BIGINT:
      if (ds_bigint_to_i64(v->u.s.p, v->u.s.n, &i) != 1) {
        ds_value_result(ctx, v); /* already its exact decimal text */
        return;
      }
      snprintf(buf, sizeof buf, "%" PRId64, i);
      break;
    case DS_V_FLOAT:
      if (isnan(v->u.f)) {
        sqlite3_result_null(ctx);
        return;
      }
      sqlite3_snprintf((int)sizeof buf, buf, "%!.15g", v->u.f);
      break;
    default: ds_value_result(ctx, v); return; /* NULL, TEXT, BLOB, JSON text */
  }
  sqlite3_result_text(ctx, buf, -1, SQLITE_TRANSIENT);
}

void ds_value_result_decl(sqlite3_context *ctx, const ds_value *v, ds_decl decl) {
  switch (decl) {
    case DS_DECL_INTEGER:
    case DS_DECL_NUMERIC: result_numeric(ctx, v, 0); return;
    case DS_DECL_REAL: result_numeric(ctx, v, 1); return;
    case DS_DECL_TEXT: result_text(ctx, v); return;
    case DS_DECL_JSON:
      if (v->type == DS_V_NULL) sqlite3_result_null(ctx);
      else ds_value_result_json(ctx, v);
      return;
    case DS_DECL_BLOB:
    case DS_DECL_NONE: break;
  }
  ds_value_result(ctx, v);
}
