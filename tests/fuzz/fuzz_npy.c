/* fuzz_npy.c - libFuzzer harness for the .npy reader and writer
 * (src/core/npy.c) and the npy_* SQL functions (src/sql/npy_sql.c).
 *
 * Input: the bytes of a .npy file. They go through
 *   - ds_npy_parse; when it accepts the blob: ds_npy_to_json, ds_npy_element
 *     and ds_npy_offset for the first, last and a middle element, and
 *     ds_npy_write_header with the parsed dtype, order and shape (for dtypes
 *     without objects), whose output must parse back to the same dtype,
 *     order, shape and item size;
 *   - every npy_* SQL function (npy_shape, npy_dtype, npy_size, npy_json,
 *     npy_get with 0 to 3 indices, npy_sum, npy_min, npy_max, npy_mean) on
 *     an in-memory database, with the input bound as a BLOB. Each must give
 *     a value or an error whose text starts with the function's name.
 * Contract checks (abort = finding): a failed call sets a non-empty
 * message; data_len == count * itemsize for dtypes without objects and
 * the data lies inside the input; TEXT results are valid UTF-8; the
 * header round trip above.
 * The input is copied into a heap buffer of exactly its size so that ASan
 * sees any read past it.
 *
 * Build: make fuzz (clang -fsanitize=fuzzer,address,undefined). Seeds:
 * tests/fuzz/run.sh writes .npy files of many dtypes with numpy, plus the
 * fixtures' index.npy files. */
#include <sqlite3.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/common.h"
#include "core/npy.h"
#include "sql/npy_sql.h"
#include "core/value.h"

#define FUZZ_HARNESS "fuzz_npy"
#include "fuzz_common.h"
#define fail(what) fuzz_fail("%s", (what))
#define expect_err(err) fuzz_expect_err((err), "error without a message")
#define touch fuzz_touch


/* The SQL statements, prepared once. */
static sqlite3 *g_db;
static sqlite3_stmt *g_stmt[12];
static const char *const g_sql[12] = {
    "SELECT npy_shape(?1)", "SELECT npy_dtype(?1)", "SELECT npy_size(?1)",
    "SELECT npy_json(?1)", "SELECT npy_get(?1)", "SELECT npy_get(?1, ?2)",
    "SELECT npy_get(?1, ?2, ?3)", "SELECT npy_get(?1, ?2, ?3, ?2)",
    "SELECT npy_sum(?1)", "SELECT npy_min(?1)", "SELECT npy_max(?1)",
    "SELECT npy_mean(?1)"};

static void sql_setup(void) {
  if (g_db) return;
  if (sqlite3_open(":memory:", &g_db) != SQLITE_OK ||
      ds_npy_register_functions(g_db) != SQLITE_OK)
    fail("cannot set up the database");
  for (int k = 0; k < 12; k++)
    if (sqlite3_prepare_v2(g_db, g_sql[k], -1, &g_stmt[k], NULL) != SQLITE_OK)
      fail("cannot prepare a statement");
}

/* Run every npy_* function on the blob. */
static void sql_functions(const uint8_t *p, size_t n, uint8_t pick) {
  sql_setup();
  for (int k = 0; k < 12; k++) {
    sqlite3_stmt *s = g_stmt[k];
    sqlite3_bind_blob(s, 1, n ? (const void *)p : "", (int)n, SQLITE_STATIC);
    sqlite3_bind_int64(s, 2, pick & 3);
    sqlite3_bind_int64(s, 3, (pick >> 2) & 1 ? -1 : (pick >> 3));
    int rc = sqlite3_step(s);
    if (rc == SQLITE_ROW) {
      if (sqlite3_column_type(s, 0) == SQLITE_TEXT) {
        const uint8_t *t = sqlite3_column_text(s, 0);
        size_t tn = (size_t)sqlite3_column_bytes(s, 0);
        if (t && !ds_utf8_valid(t, tn)) fail("TEXT result is not UTF-8");
      } else if (sqlite3_column_type(s, 0) == SQLITE_BLOB) {
        touch(sqlite3_column_blob(s, 0), (size_t)sqlite3_column_bytes(s, 0));
      }
    } else if (rc == SQLITE_ERROR) {
      const char *msg = sqlite3_errmsg(g_db);
      const char *fn = g_sql[k] + 7; /* after "SELECT " */
      size_t fl = (size_t)(strchr(fn, '(') - fn);
      if (strncmp(msg, fn, fl) != 0 || msg[fl] != ':') {
        fprintf(stderr, "fuzz_npy: %s: %s\n", g_sql[k], msg);
        fail("SQL error not prefixed with the function name");
      }
    } else if (rc != SQLITE_NOMEM && rc != SQLITE_TOOBIG) {
      fprintf(stderr, "fuzz_npy: %s: rc %d: %s\n", g_sql[k], rc, sqlite3_errmsg(g_db));
      fail("unexpected SQLite result code");
    }
    sqlite3_reset(s);
    sqlite3_clear_bindings(s);
  }
}

/* Element and offset calls at a few positions. */
static void elements(const ds_npy *a) {
  if (a->count == 0 || a->has_object || a->structured) return;
  uint64_t picks[3] = {0, a->count / 2, a->count - 1};
  ds_buf scratch = {0};
  char *err = NULL;
  for (int k = 0; k < 3; k++) {
    ds_value v;
    if (ds_npy_element(a, picks[k], &v, &scratch, &err)) expect_err(&err);
    else if (v.type == DS_V_TEXT || v.type == DS_V_BYTES) touch(v.u.s.p, v.u.s.n);
    uint64_t idx[DS_NPY_MAX_DIMS], pos;
    for (int d = 0; d < a->ndim; d++) idx[d] = k == 0 ? 0 : a->shape[d] - 1;
    if (ds_npy_offset(a, idx, &pos, &err)) expect_err(&err);
    else if (pos >= a->count) fail("offset past the last element");
  }
  ds_buf_free(&scratch);
}

/* Write a header for the parsed array and parse it back. */
static void roundtrip(const ds_npy *a) {
  if (a->has_object) return;
  ds_buf out = {0};
  char *err = NULL;
  if (ds_npy_write_header(&out, a->descr, a->fortran_order, a->ndim, a->shape, &err)) {
    expect_err(&err);
    ds_buf_free(&out);
    return;
  }
  if (out.len % 64 != 0) fail("written header not 64-byte aligned");
  ds_npy b;
  /* the header alone: parse succeeds only for empty arrays, so append zeros */
  size_t hl = out.len;
  uint64_t need = a->data_len;
  if (need <= ((uint64_t)1 << 20)) {
    if (ds_buf_reserve(&out, hl + (size_t)need + 1)) fail("out of memory");
    memset(out.data + hl, 0, (size_t)need);
    out.len = hl + (size_t)need;
    if (ds_npy_parse(out.data, out.len, &b, &err)) {
      fprintf(stderr, "fuzz_npy: reparse of '%s': %s\n", a->descr, err);
      fail("written header does not parse");
    }
    if (strcmp(b.descr, a->descr) != 0 || b.fortran_order != a->fortran_order ||
        b.ndim != a->ndim || b.itemsize != a->itemsize || b.count != a->count ||
        memcmp(b.shape, a->shape, sizeof(uint64_t) * (size_t)a->ndim) != 0)
      fail("written header parses to a different array");
  }
  ds_buf_free(&out);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  uint8_t *p = malloc(size ? size : 1);
  if (!p) return 0;
  memcpy(p, data, size);
  char *err = NULL;
  ds_npy a;
  if (ds_npy_parse(p, size, &a, &err)) {
    expect_err(&err);
  } else {
    if (a.data < p || a.data + a.data_len > p + size) fail("data outside the input");
    if (!a.has_object && a.data_len != a.count * a.itemsize)
      fail("data_len != count * itemsize");
    touch(a.data, a.data_len);
    ds_buf json = {0};
    if (ds_npy_to_json(&a, &json, &err)) expect_err(&err);
    else if (!ds_utf8_valid(json.data, json.len)) fail("JSON is not UTF-8");
    ds_buf_free(&json);
    elements(&a);
    roundtrip(&a);
  }
  sql_functions(p, size, size ? p[size - 1] : 0);
  free(p);
  return 0;
}
