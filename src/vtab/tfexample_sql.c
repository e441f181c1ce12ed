/* tfexample_sql.c - tfexample_json(record [, options]): a record holding a
 * serialized tf.train.Example as a JSON object, one list per feature in
 * the record's order.
 *
 *   SELECT tfexample_json(record) FROM bagz('train.bagz') LIMIT 1;
 *   -- {"label":[3],"image/encoded":["<base64>"],"score":[0.25]}
 *   SELECT tfexample_json(record, 'on_error=null') FROM bagz('mixed.bag');
 *
 * Bytes are base64 strings, floats JSON numbers (non-finite: null), int64
 * exact. A NULL record gives NULL; a record that is not an Example is an
 * error "tfexample_json: not a tf.train.Example: ... at byte offset N", or
 * NULL with the option on_error=null (going past SQLite's length limit or
 * max_value_bytes, 1 GiB, of decoded memory stays an error). Decoding is src/decoders/tfexample.c;
 * this file only moves values between SQLite and it. */
#include "tfexample_sql.h"
#include "vtab/module_help.h"

#include <stdlib.h>
#include <string.h>

#include "core/codec.h"
#include "sql/value_sql.h"
#include "decoders/tfexample.h"

/* Report "tfexample_json: <message>" as the SQL error and free msg. */
static void fail(sqlite3_context *ctx, char *msg) {
  char *s = ds_strf("tfexample_json: %s", msg ? msg : "out of memory");
  if (s) sqlite3_result_error(ctx, s, -1);
  else sqlite3_result_error_nomem(ctx);
  free(s);
  free(msg);
}

/* Parse the options argument ("on_error=null" or "on_error=error"; empty
 * or NULL for the default). Sets *null_on_error. 0 ok, -1 error set. */
static int parse_options(sqlite3_context *ctx, sqlite3_value *arg,
                         int *null_on_error) {
  *null_on_error = 0;
  if (sqlite3_value_type(arg) == SQLITE_NULL) return 0;
  const char *s = (const char *)sqlite3_value_text(arg);
  if (!s) {
    sqlite3_result_error_nomem(ctx);
    return -1;
  }
  while (*s == ' ') s++;
  if (!*s) return 0;
  if (!strcmp(s, "on_error=null")) *null_on_error = 1;
  else if (strcmp(s, "on_error=error") != 0) {
    fail(ctx, ds_strf("unknown option '%s' (expected on_error=null or "
                      "on_error=error)", s));
    return -1;
  }
  return 0;
}

/* tfexample_json(record [, options]). */
static void fn_tfexample_json(sqlite3_context *ctx, int argc,
                              sqlite3_value **argv) {
  int null_on_error = 0;
  if (argc > 1 && parse_options(ctx, argv[1], &null_on_error)) return;
  int t = sqlite3_value_type(argv[0]);
  if (t == SQLITE_NULL) {
    sqlite3_result_null(ctx);
    return;
  }
  if (t != SQLITE_BLOB && t != SQLITE_TEXT) {
    if (null_on_error) sqlite3_result_null(ctx);
    else fail(ctx, ds_strf("record is not a BLOB"));
    return;
  }
  const uint8_t *p = sqlite3_value_blob(argv[0]);
  int n = sqlite3_value_bytes(argv[0]);
  ds_tfex ex = {0};
  ex.arena.limit = (size_t)DS_MAX_VALUE_BYTES;
  ds_buf json = {0};
  ds_json_limit(ctx, &json);
  char *err = NULL;
  if (ds_tfex_decode(&ex, p, (size_t)n, &err) == 0 &&
      ds_tfex_json(&ex, &json, &err) == 0) {
    ds_result_json(ctx, &json);
  } else if (null_on_error && !json.over && !ex.arena.over) {
    sqlite3_result_null(ctx);
    free(err);
  } else {
    ds_json_over(&json, &err);
    fail(ctx, err);
  }
  ds_buf_free(&json);
  ds_tfex_free(&ex);
}

int ds_tfexample_register_functions(sqlite3 *db) {
  const int flags = SQLITE_UTF8 | SQLITE_DETERMINISTIC | SQLITE_INNOCUOUS |
                    SQLITE_RESULT_SUBTYPE;
  int rc = sqlite3_create_function(db, "tfexample_json", 1, flags, NULL,
                                   fn_tfexample_json, NULL, NULL);
  if (rc == SQLITE_OK)
    rc = sqlite3_create_function(db, "tfexample_json", 2, flags, NULL,
                                 fn_tfexample_json, NULL, NULL);
  return rc;
}

const ds_help_entry ds_tfexample_help[] = {
    {"function", "tfexample_json", "tfexample_json(record [, 'on_error=null|error']): a "
     "tf.train.Example record as JSON", NULL, 0},
    {NULL, NULL, NULL, NULL, 0}};
