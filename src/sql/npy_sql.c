/* npy_sql.c - SQL functions over BLOBs holding whole .npy files.
 *
 *   SELECT npy_shape(b);          -- '[224,224,3]' (JSON)
 *   SELECT npy_dtype(b);          -- '<f4'
 *   SELECT npy_size(b);           -- 150528
 *   SELECT npy_json(b);           -- '[[1,2],[3,4]]' (JSON, like tolist())
 *   SELECT npy_get(b, 1, 0);      -- one element, logical C-order indices
 *   SELECT npy_sum(b), npy_min(b), npy_max(b), npy_mean(b);
 *
 * npy_get maps the element by the Values table: bool/int INTEGER (uint64
 * above INT64_MAX as decimal TEXT), float REAL (NaN -> NULL), complex JSON
 * '[re,im]', U TEXT, S BLOB (trailing NULs removed), datetime64 ISO TEXT,
 * timedelta64 INTEGER ticks, NaT NULL.
 *
 * A NULL argument gives NULL. Anything else that is not a valid .npy BLOB is
 * an error that starts with the function name ("npy_sum: truncated .npy:
 * ..."). Reductions follow numpy: integer and bool arrays give exact INTEGER
 * sum/min/max (an error when the sum overflows 64 bits), float arrays REAL;
 * a NaN anywhere makes min/max/mean (and the sum) NULL, since SQLite has no
 * NaN; an empty array sums to 0 and has NULL min/max/mean. timedelta64
 * reduces like int64 ticks and datetime64 has min/max as ISO text (NaT makes
 * the result NULL). */
#include "npy_sql.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "core/npy.h"
#include "value_sql.h"

enum reduce_op { OP_SUM, OP_MIN, OP_MAX, OP_MEAN };

/* One registered function: its name (for messages) and reduction. */
typedef struct npy_fn {
  const char *name;
  int nargs;
  void (*fn)(sqlite3_context *, int, sqlite3_value **);
  int op;
  int json; /* may return JSON text with the 'J' subtype */
} npy_fn;

/* Report "<function>: <message>" as the SQL error and free msg. */
static void fail(sqlite3_context *ctx, char *msg) {
  const npy_fn *f = sqlite3_user_data(ctx);
  char *s = ds_strf("%s: %s", f->name, msg ? msg : "out of memory");
  if (s) sqlite3_result_error(ctx, s, -1);
  else sqlite3_result_error_nomem(ctx);
  free(s);
  free(msg);
}

/* Parse argument 0 as a .npy BLOB. 1: parsed; 0: NULL argument (the result
 * is NULL); -1: the error is already set. */
static int arg_array(sqlite3_context *ctx, sqlite3_value *arg, ds_npy *a) {
  char *err = NULL;
  int t = sqlite3_value_type(arg);
  if (t == SQLITE_NULL) {
    sqlite3_result_null(ctx);
    return 0;
  }
  if (t != SQLITE_BLOB) {
    fail(ctx, ds_strf("argument is not a BLOB holding a .npy file"));
    return -1;
  }
  const uint8_t *p = sqlite3_value_blob(arg);
  int n = sqlite3_value_bytes(arg);
  if (ds_npy_parse(p, (size_t)n, a, &err)) {
    fail(ctx, err);
    return -1;
  }
  return 1;
}

/* npy_shape(b): the dimensions as a JSON array. */
static void fn_shape(sqlite3_context *ctx, int argc, sqlite3_value **argv) {
  (void)argc;
  ds_npy a;
  if (arg_array(ctx, argv[0], &a) <= 0) return;
  ds_buf b = {0};
  int rc = ds_buf_puts(&b, "[");
  for (int k = 0; k < a.ndim; k++)
    rc |= ds_buf_printf(&b, k ? ",%llu" : "%llu", (unsigned long long)a.shape[k]);
  rc |= ds_buf_puts(&b, "]");
  if (rc) sqlite3_result_error_nomem(ctx);
  else ds_result_json(ctx, &b);
  ds_buf_free(&b);
}

/* npy_dtype(b): the dtype string. */
static void fn_dtype(sqlite3_context *ctx, int argc, sqlite3_value **argv) {
  (void)argc;
  ds_npy a;
  if (arg_array(ctx, argv[0], &a) <= 0) return;
  sqlite3_result_text(ctx, a.descr, -1, SQLITE_TRANSIENT);
}

/* npy_size(b): the number of elements. */
static void fn_size(sqlite3_context *ctx, int argc, sqlite3_value **argv) {
  (void)argc;
  ds_npy a;
  if (arg_array(ctx, argv[0], &a) <= 0) return;
  sqlite3_result_int64(ctx, (sqlite3_int64)a.count);
}

/* npy_json(b): the array as nested JSON lists. */
static void fn_json(sqlite3_context *ctx, int argc, sqlite3_value **argv) {
  (void)argc;
  ds_npy a;
  if (arg_array(ctx, argv[0], &a) <= 0) return;
  ds_buf b = {0};
  char *err = NULL;
  ds_json_limit(ctx, &b);
  if (ds_npy_to_json(&a, &b, &err)) {
    ds_json_over(&b, &err);
    fail(ctx, err);
  } else {
    ds_result_json(ctx, &b);
  }
  ds_buf_free(&b);
}

/* Index argument k of npy_get as a non-negative integer. 1 ok, 0 NULL
 * (the result is NULL), -1 error set. */
static int arg_index(sqlite3_context *ctx, sqlite3_value *v, int k,
                     uint64_t *out) {
  int t = sqlite3_value_type(v);
  if (t == SQLITE_NULL) {
    sqlite3_result_null(ctx);
    return 0;
  }
  sqlite3_int64 i;
  double d = t == SQLITE_FLOAT ? sqlite3_value_double(v) : 0.0;
  if (t == SQLITE_INTEGER) i = sqlite3_value_int64(v);
  else if (t == SQLITE_FLOAT && d == floor(d) && fabs(d) < 9e18) i = (sqlite3_int64)d;
  else {
    fail(ctx, ds_strf("index %d is not an integer", k));
    return -1;
  }
  if (i < 0) {
    fail(ctx, ds_strf("index %d is negative (%lld); negative indices are not "
                      "allowed", k, (long long)i));
    return -1;
  }
  *out = (uint64_t)i;
  return 1;
}

/* npy_get(b, i [, j ...]): one element by its logical (C-order) indices. */
static void fn_get(sqlite3_context *ctx, int argc, sqlite3_value **argv) {
  ds_npy a;
  if (argc < 1) {
    fail(ctx, ds_strf("needs a BLOB argument"));
    return;
  }
  if (arg_array(ctx, argv[0], &a) <= 0) return;
  if (argc - 1 != a.ndim) {
    fail(ctx, ds_strf("the array has %d dimension%s but %d ind%s given",
                      a.ndim, a.ndim == 1 ? "" : "s", argc - 1,
                      argc - 1 == 1 ? "ex was" : "ices were"));
    return;
  }
  uint64_t idx[DS_NPY_MAX_DIMS], pos;
  for (int k = 0; k < a.ndim; k++) {
    int rc = arg_index(ctx, argv[k + 1], k + 1, &idx[k]);
    if (rc <= 0) return;
  }
  char *err = NULL;
  ds_buf scratch = {0};
  ds_value v;
  if (ds_npy_offset(&a, idx, &pos, &err) ||
      ds_npy_element(&a, pos, &v, &scratch, &err))
    fail(ctx, err);
  else
    ds_value_result(ctx, &v);
  ds_buf_free(&scratch);
}

/* ------------------------------------------------------------ reductions */

/* Running state of a reduction over one array. */
typedef struct reduce {
  int op;
  int null;          /* a NaN or NaT was seen: the result is NULL */
  uint64_t n;        /* elements seen */
  int64_t imin, imax, isum;  /* signed integer kinds */
  uint64_t umin, umax, usum; /* unsigned kinds */
  double fmin, fmax;
  double fsum, fcomp; /* Neumaier-compensated sum (floats and all means) */
  double fplain;      /* plain sum, used when the total is not finite */
  int overflow;
} reduce;

/* Add x to the compensated float sum. */
static void add_float(reduce *r, double x) {
  double t = r->fsum + x;
  if (fabs(r->fsum) >= fabs(x)) r->fcomp += (r->fsum - t) + x;
  else r->fcomp += (x - t) + r->fsum;
  r->fsum = t;
  r->fplain += x;
}

/* The float total (compensated when finite). */
static double float_total(const reduce *r) {
  return isfinite(r->fplain) ? r->fsum + r->fcomp : r->fplain;
}

/* Fold one signed integer. */
static void add_int(reduce *r, int64_t x) {
  if (r->n == 0 || x < r->imin) r->imin = x;
  if (r->n == 0 || x > r->imax) r->imax = x;
  if ((x > 0 && r->isum > INT64_MAX - x) || (x < 0 && r->isum < INT64_MIN - x))
    r->overflow = 1;
  else
    r->isum += x;
  if (r->op == OP_MEAN) add_float(r, (double)x);
}

/* Fold one unsigned integer. */
static void add_uint(reduce *r, uint64_t x) {
  if (r->n == 0 || x < r->umin) r->umin = x;
  if (r->n == 0 || x > r->umax) r->umax = x;
  if (r->usum > UINT64_MAX - x) r->overflow = 1;
  else r->usum += x;
  if (r->op == OP_MEAN) add_float(r, (double)x);
}

/* Fold one float. */
static void add_double(reduce *r, double x) {
  if (isnan(x)) { r->null = 1; return; }
  if (r->n == 0 || x < r->fmin) r->fmin = x;
  if (r->n == 0 || x > r->fmax) r->fmax = x;
  add_float(r, x);
}

/* Fold one element value. */
static void add_value(reduce *r, const ds_value *v) {
  switch (v->type) {
    case DS_V_BOOL:
    case DS_V_INT: add_int(r, v->u.i); break;
    case DS_V_UINT: add_uint(r, v->u.u); break;
    case DS_V_FLOAT: add_double(r, v->u.f); break;
    default: r->null = 1; break; /* NaT */
  }
  r->n++;
}

/* Which reductions a dtype allows; NULL when fine, else the reason. */
static const char *reduce_unsupported(const ds_npy *a, int op) {
  if (a->structured || a->has_object) return "is not a numeric dtype";
  switch (a->kind) {
    case 'b': case 'i': case 'u': case 'f': case 'm': return NULL;
    case 'M': return op == OP_MIN || op == OP_MAX ? NULL : "cannot be summed";
    default: return "is not a numeric dtype";
  }
}

/* Set the result of a reduction from its final state. */
static void reduce_result(sqlite3_context *ctx, const ds_npy *a, reduce *r) {
  int is_float = a->kind == 'f', is_uint = a->kind == 'u';
  if (r->op == OP_SUM && r->n == 0) {
    if (is_float) sqlite3_result_double(ctx, 0.0);
    else sqlite3_result_int(ctx, 0);
    return;
  }
  if (r->null || r->n == 0) {
    sqlite3_result_null(ctx);
    return;
  }
  ds_value v;
  memset(&v, 0, sizeof v);
  if (r->op == OP_MEAN) {
    double m = float_total(r) / (double)r->n;
    v.type = DS_V_FLOAT;
    v.u.f = m;
  } else if (is_float) {
    v.type = DS_V_FLOAT;
    v.u.f = r->op == OP_SUM ? float_total(r) : r->op == OP_MIN ? r->fmin : r->fmax;
  } else if (r->op == OP_SUM && r->overflow) {
    fail(ctx, ds_strf("integer overflow"));
    return;
  } else if (is_uint) {
    v.type = DS_V_UINT;
    v.u.u = r->op == OP_SUM ? r->usum : r->op == OP_MIN ? r->umin : r->umax;
  } else {
    v.type = DS_V_INT;
    v.u.i = r->op == OP_SUM ? r->isum : r->op == OP_MIN ? r->imin : r->imax;
  }
  ds_value_result(ctx, &v);
}

/* datetime64 min/max: compare ticks, answer ISO text. */
static void reduce_datetime(sqlite3_context *ctx, const ds_npy *a, reduce *r) {
  if (r->null || r->n == 0) {
    sqlite3_result_null(ctx);
    return;
  }
  ds_buf b = {0};
  char *err = NULL;
  int64_t t = r->op == OP_MIN ? r->imin : r->imax;
  if (ds_npy_datetime_iso(&b, t, a->dt_unit, a->dt_mult, &err)) fail(ctx, err);
  else sqlite3_result_text64(ctx, (const char *)b.data, b.len, SQLITE_TRANSIENT,
                             SQLITE_UTF8);
  ds_buf_free(&b);
}

/* npy_sum / npy_min / npy_max / npy_mean. */
static void fn_reduce(sqlite3_context *ctx, int argc, sqlite3_value **argv) {
  (void)argc;
  const npy_fn *f = sqlite3_user_data(ctx);
  ds_npy a;
  if (arg_array(ctx, argv[0], &a) <= 0) return;
  const char *why = reduce_unsupported(&a, f->op);
  if (why) {
    fail(ctx, ds_strf("dtype %s %s", a.descr, why));
    return;
  }
  /* datetime64 is compared as its int64 ticks (read as timedelta64) */
  ds_npy ticks = a;
  if (a.kind == 'M') ticks.kind = 'm';
  reduce r;
  memset(&r, 0, sizeof r);
  r.op = f->op;
  ds_buf scratch = {0};
  char *err = NULL;
  for (uint64_t i = 0; i < a.count; i++) {
    ds_value v;
    if (ds_npy_element(&ticks, i, &v, &scratch, &err)) {
      ds_buf_free(&scratch);
      fail(ctx, err);
      return;
    }
    add_value(&r, &v);
  }
  ds_buf_free(&scratch);
  if (a.kind == 'M') reduce_datetime(ctx, &a, &r);
  else reduce_result(ctx, &a, &r);
}

static const npy_fn npy_functions[] = {
    {"npy_shape", 1, fn_shape, 0, 1},
    {"npy_dtype", 1, fn_dtype, 0, 0},
    {"npy_size", 1, fn_size, 0, 0},
    {"npy_json", 1, fn_json, 0, 1},
    {"npy_get", -1, fn_get, 0, 1}, /* complex elements are JSON */
    {"npy_sum", 1, fn_reduce, OP_SUM, 0},
    {"npy_min", 1, fn_reduce, OP_MIN, 0},
    {"npy_max", 1, fn_reduce, OP_MAX, 0},
    {"npy_mean", 1, fn_reduce, OP_MEAN, 0},
};

int ds_npy_register_functions(sqlite3 *db) {
  const int flags = SQLITE_UTF8 | SQLITE_DETERMINISTIC | SQLITE_INNOCUOUS;
  for (size_t k = 0; k < sizeof npy_functions / sizeof npy_functions[0]; k++) {
    const npy_fn *f = &npy_functions[k];
    int rc = sqlite3_create_function(
        db, f->name, f->nargs, flags | (f->json ? SQLITE_RESULT_SUBTYPE : 0),
        (void *)f, f->fn, NULL, NULL);
    if (rc != SQLITE_OK) return rc;
  }
  return SQLITE_OK;
}
