/* fuzz_tfexample.c - libFuzzer harness for the tf.train.Example decoder
 * (src/decoders/tfexample.c, tfexample_diag.c) and tfexample_json
 * (src/vtab/tfexample_sql.c).
 *
 * Input: one record. It goes through
 *   - ds_tfex_decode with a 1 MiB cap on decoded memory (arena.limit), then
 *     on success every feature is checked and read (names UTF-8 and found by
 *     ds_tfex_find, every value touched) and ds_tfex_json must give valid
 *     UTF-8; the same ds_tfex then decodes the input once more (reuse);
 *   - SELECT tfexample_json(?1) and tfexample_json(?1, 'on_error=null') on
 *     an in-memory database: a JSON result, or an error that starts with
 *     "tfexample_json: " (the first form) / NULL (the second).
 * Contract checks (abort = finding): a failed decode sets a message that
 * starts "not a tf.train.Example: " or names max_value_bytes; the two
 * decodes agree; the SQL function agrees with the decoder.
 * The input is copied into a heap buffer of exactly its size so that ASan
 * sees any read past it.
 *
 * Build: make fuzz. Seeds: tests/fuzz/run.sh writes the records of
 * tests/conformance/tfexample_records.py (Google's protobuf runtime). */
#include <sqlite3.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/utf8.h"
#include "core/common.h"
#include "core/value.h"
#include "decoders/tfexample.h"
#include "vtab/tfexample_sql.h"

#define FUZZ_HARNESS "fuzz_tfexample"
#include "fuzz_common.h"
#define fail(what) fuzz_fail("%s", (what))
#define touch fuzz_touch


/* Check and read every feature of a decoded record. */
static void check_features(const ds_tfex *ex) {
  for (size_t i = 0; i < ex->n; i++) {
    const ds_tfex_feature *f = &ex->features[i];
    if (!ds_utf8_valid((const uint8_t *)f->name, f->name_len)) fail("name not UTF-8");
    if (ds_tfex_find(ex, f->name, f->name_len) != f) fail("find gives another feature");
    if (f->kind == DS_TFEX_INT64) touch(f->i64, f->n * sizeof *f->i64);
    else if (f->kind == DS_TFEX_FLOAT) touch(f->f32, f->n * sizeof *f->f32);
    else if (f->kind == DS_TFEX_BYTES) {
      for (size_t k = 0; k < f->n; k++) {
        const uint8_t *p;
        size_t n;
        ds_tfex_bytes_at(f, k, &p, &n);
        touch(p, n);
      }
    } else if (f->n) fail("an empty feature with values");
  }
}

static sqlite3 *g_db;
static sqlite3_stmt *g_plain, *g_null;

static void sql_setup(void) {
  if (g_db) return;
  if (sqlite3_open(":memory:", &g_db) != SQLITE_OK ||
      ds_tfexample_register_functions(g_db) != SQLITE_OK ||
      sqlite3_prepare_v2(g_db, "SELECT tfexample_json(?1)", -1, &g_plain, NULL) ||
      sqlite3_prepare_v2(g_db, "SELECT tfexample_json(?1, 'on_error=null')", -1,
                         &g_null, NULL))
    fail("cannot set up the database");
}

/* Run one statement on the record; returns 1 for a JSON row, 0 for NULL,
 * -1 for an error (whose text is checked). */
static int sql_run(sqlite3_stmt *s, const uint8_t *p, size_t n) {
  sqlite3_bind_blob(s, 1, n ? (const void *)p : "", (int)n, SQLITE_STATIC);
  int rc = sqlite3_step(s), out;
  if (rc == SQLITE_ROW) {
    out = sqlite3_column_type(s, 0) == SQLITE_NULL ? 0 : 1;
    if (out) {
      const uint8_t *t = sqlite3_column_text(s, 0);
      if (!t || !ds_utf8_valid(t, (size_t)sqlite3_column_bytes(s, 0)))
        fail("JSON result is not UTF-8");
    }
  } else if (rc == SQLITE_ERROR) {
    if (strncmp(sqlite3_errmsg(g_db), "tfexample_json: ", 16) != 0)
      fail("SQL error not prefixed with the function name");
    out = -1;
  } else {
    fail("unexpected SQLite result code");
    out = -1;
  }
  sqlite3_reset(s);
  sqlite3_clear_bindings(s);
  return out;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  uint8_t *p = malloc(size ? size : 1);
  if (!p) return 0;
  memcpy(p, data, size);
  ds_tfex ex = {0};
  ex.arena.limit = 1 << 20;
  char *err = NULL;
  int ok = ds_tfex_decode(&ex, p, size, &err) == 0;
  if (!ok) {
    if (!err || (strncmp(err, "not a tf.train.Example: ", 24) != 0 &&
                 !strstr(err, "max_value_bytes")))
      fail("decode error without the expected message");
  } else {
    check_features(&ex);
    ds_buf json = {0};
    if (ds_tfex_json(&ex, &json, &err)) fail("JSON failed");
    if (!ds_utf8_valid(json.data, json.len)) fail("JSON not UTF-8");
    size_t n = ex.n;
    ds_buf_free(&json);
    if (ds_tfex_decode(&ex, p, size, &err) || ex.n != n) fail("second decode differs");
  }
  free(err);
  int capped = ex.arena.over;
  ds_tfex_free(&ex);

  sql_setup();
  int plain = sql_run(g_plain, p, size), nulled = sql_run(g_null, p, size);
  if (!capped && plain != (ok ? 1 : -1)) fail("tfexample_json disagrees with the decoder");
  if (!capped && nulled != (ok ? 1 : 0)) fail("on_error=null disagrees with the decoder");
  free(p);
  return 0;
}
