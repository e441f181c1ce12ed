/* value_sql.c - ds_value -> sqlite3_result_* (the Values table of
 * docs/INTERFACE.md). Containers and complex numbers become JSON text carrying
 * SQLite's JSON subtype, so json_each(), -> and ->> treat them as JSON. */
#include "value_sql.h"

#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/value_json.h"

/* Text or blob bytes: a NULL pointer would make SQLite return NULL, so an
 * empty value gets a real (empty) pointer. */
static const char *nonnull(const uint8_t *p) { return p ? (const char *)p : ""; }

void ds_result_json(sqlite3_context *ctx, const ds_buf *json) {
  sqlite3_result_text64(ctx, nonnull(json->data), json->len, SQLITE_TRANSIENT,
                        SQLITE_UTF8);
  sqlite3_result_subtype(ctx, DS_JSON_SUBTYPE);
}

void ds_json_limit(sqlite3_context *ctx, ds_buf *b) {
  int lim = sqlite3_limit(sqlite3_context_db_handle(ctx), SQLITE_LIMIT_LENGTH, -1);
  b->max = lim > 0 ? (size_t)lim : 0;
}

void ds_json_over(const ds_buf *b, char **err) {
  if (b->over)
    ds_err(err, "JSON text longer than %zu bytes (SQLite's length limit)", b->max);
}

void ds_value_result_json(sqlite3_context *ctx, const ds_value *v) {
  ds_buf b = {0};
  char *err = NULL;
  ds_json_limit(ctx, &b);
  if (ds_value_json(&b, v, &err)) {
    ds_json_over(&b, &err);
    if (err) sqlite3_result_error(ctx, err, -1);
    else sqlite3_result_error_nomem(ctx);
    free(err);
  } else {
    ds_result_json(ctx, &b);
  }
  ds_buf_free(&b);
}

/* BIGINT: INTEGER when it fits in int64, else its exact decimal as TEXT. */
static void result_bigint(sqlite3_context *ctx, const ds_value *v) {
  int64_t i;
  int rc = ds_bigint_to_i64(v->u.s.p, v->u.s.n, &i);
  if (rc == 1) sqlite3_result_int64(ctx, i);
  else if (rc == 0)
    sqlite3_result_text64(ctx, nonnull(v->u.s.p), v->u.s.n, SQLITE_TRANSIENT,
                          SQLITE_UTF8);
  else sqlite3_result_error(ctx, "invalid big integer text", -1);
}

/* UINT: INTEGER up to INT64_MAX, exact decimal TEXT above. */
static void result_uint(sqlite3_context *ctx, uint64_t u) {
  if (u <= (uint64_t)INT64_MAX) {
    sqlite3_result_int64(ctx, (int64_t)u);
    return;
  }
  char s[24];
  int n = snprintf(s, sizeof s, "%llu", (unsigned long long)u);
  sqlite3_result_text(ctx, s, n, SQLITE_TRANSIENT);
}

/* TEXT: text without U+0000 goes through a NUL-terminated copy (memccpy
 * checks while it copies) and length -1, so SQLite marks it terminated
 * (functions such as length() then need no second copy to add the
 * terminator). Short text is copied on the stack; longer text into a
 * buffer SQLite takes over. */
void ds_result_text(sqlite3_context *ctx, const uint8_t *p, size_t n) {
  char buf[1024];
  if (n < sizeof buf) {
    if (n == 0 || !memccpy(buf, p, 0, n)) {
      buf[n] = 0;
      sqlite3_result_text(ctx, buf, -1, SQLITE_TRANSIENT);
      return;
    }
  } else if (n < (size_t)INT_MAX) {
    char *h = malloc(n + 1);
    if (h && !memccpy(h, p, 0, n)) {
      h[n] = 0;
      sqlite3_result_text(ctx, h, -1, free);
      return;
    }
    free(h);
  }
  sqlite3_result_text64(ctx, nonnull(p), n, SQLITE_TRANSIENT, SQLITE_UTF8);
}

void ds_value_result(sqlite3_context *ctx, const ds_value *v) {
  switch (v->type) {
    case DS_V_NULL: sqlite3_result_null(ctx); return;
    case DS_V_BOOL: sqlite3_result_int(ctx, v->u.i ? 1 : 0); return;
    case DS_V_INT: sqlite3_result_int64(ctx, v->u.i); return;
    case DS_V_UINT: result_uint(ctx, v->u.u); return;
    case DS_V_BIGINT: result_bigint(ctx, v); return;
    case DS_V_FLOAT:
      if (isnan(v->u.f)) sqlite3_result_null(ctx);
      else sqlite3_result_double(ctx, v->u.f);
      return;
    case DS_V_TEXT: ds_result_text(ctx, v->u.s.p, v->u.s.n); return;
    case DS_V_BYTES:
    case DS_V_NDARRAY:
      sqlite3_result_blob64(ctx, nonnull(v->u.s.p), v->u.s.n, SQLITE_TRANSIENT);
      return;
    case DS_V_LIST:
    case DS_V_TUPLE:
    case DS_V_SET:
    case DS_V_MAP:
    case DS_V_COMPLEX:
    case DS_V_UNSUPPORTED: ds_value_result_json(ctx, v); return;
  }
  sqlite3_result_error(ctx, "unknown value type", -1);
}
