/* test_column_value.c - ds_value_result_decl (sql/column_value.h) against
 * SQLite itself: each value (numeric-looking and other text, integers,
 * reals, blobs, NULL) given to a column declared INTEGER, REAL, TEXT,
 * BLOB, NUMERIC or no type must come out as a native table of that
 * declared type stores it: same storage class, same value bit for bit. */
#include <math.h>
#include <stdint.h>
#include <string.h>

#include "check.h"
#include "core/schema.h"
#include "core/value.h"
#include "sql/column_value.h"
#include "sql/sqlite_api.h"

/* as_decl(x, decl): x as a ds_value (by its storage class) through
 * ds_value_result_decl with the ds_decl number decl. */
static void as_decl(sqlite3_context *ctx, int argc, sqlite3_value **argv) {
  (void)argc;
  ds_value v;
  memset(&v, 0, sizeof v);
  switch (sqlite3_value_type(argv[0])) {
    case SQLITE_INTEGER: v.type = DS_V_INT, v.u.i = sqlite3_value_int64(argv[0]); break;
    case SQLITE_FLOAT: v.type = DS_V_FLOAT, v.u.f = sqlite3_value_double(argv[0]); break;
    case SQLITE_TEXT:
      v.type = DS_V_TEXT, v.u.s.p = sqlite3_value_text(argv[0]);
      v.u.s.n = (size_t)sqlite3_value_bytes(argv[0]);
      break;
    case SQLITE_BLOB:
      v.type = DS_V_BYTES, v.u.s.p = sqlite3_value_blob(argv[0]);
      v.u.s.n = (size_t)sqlite3_value_bytes(argv[0]);
      break;
    default: v.type = DS_V_NULL;
  }
  ds_value_result_decl(ctx, &v, (ds_decl)sqlite3_value_int(argv[1]));
}

/* Do two result columns hold the same storage class and value? The one
 * difference allowed: a REAL column keeps -0.0 where a native one reads
 * back 0.0 (column_value.c). */
static int same_cell(sqlite3_stmt *a, sqlite3_stmt *b) {
  int t = sqlite3_column_type(a, 0);
  if (t != sqlite3_column_type(b, 0)) return 0;
  if (t == SQLITE_INTEGER) return sqlite3_column_int64(a, 0) == sqlite3_column_int64(b, 0);
  if (t == SQLITE_FLOAT) {
    double x = sqlite3_column_double(a, 0), y = sqlite3_column_double(b, 0);
    if (x == 0 && y == 0 && signbit(x) && !signbit(y)) return 1;
    return memcmp(&x, &y, sizeof x) == 0;
  }
  if (t == SQLITE_NULL) return 1;
  int n = sqlite3_column_bytes(a, 0);
  const void *p = t == SQLITE_TEXT ? (const void *)sqlite3_column_text(a, 0) : sqlite3_column_blob(a, 0);
  const void *q = t == SQLITE_TEXT ? (const void *)sqlite3_column_text(b, 0) : sqlite3_column_blob(b, 0);
  return n == sqlite3_column_bytes(b, 0) && (n == 0 || memcmp(p, q, (size_t)n) == 0);
}

static const struct {
  const char *sql;
  ds_decl decl;
} decls[] = {{"INTEGER", DS_DECL_INTEGER}, {"REAL", DS_DECL_REAL}, {"TEXT", DS_DECL_TEXT},
             {"BLOB", DS_DECL_BLOB},       {"NUMERIC", DS_DECL_NUMERIC}, {"", DS_DECL_NONE}};

/* The SQL literals tried (each becomes the value bound). */
static const char *const values[] = {
    "'12'", "' 12 '", "'+5'", "'-0'", "'-0.0'", "'00012'", "'1.'", "'.5'", "'.'", "'1e'",
    "'1e+'", "'e5'", "'1e5'", "'3.0e+5'", "' 1.5 '", "'1.5e-3'", "'0x10'", "'12abc'",
    "'abc'", "''", "' '", "'+'", "'-'", "'- 5'", "'1 2'", "char(9)||'7'||char(10)",
    "char(11)||'8'||char(12)||char(13)", "'Inf'", "'nan'", "'1_000'",
    "'9223372036854775807'", "'9223372036854775808'", "'-9223372036854775808'",
    "'-9223372036854775809'", "'18446744073709551615'", "'1e400'", "'-1e400'",
    "'123456789012345678901234567890'", "'0.1'", "'4.94065645841247e-324'",
    "'1.7976931348623157e308'", "'2.5'", "'12'||char(0)||'3'", "char(65313)",
    "0", "1", "-1", "9223372036854775807", "-9223372036854775808", "0.0", "-0.0", "0.1",
    "2.5", "3.0", "1e20", "1e15", "123456789012345.0", "1.0/3", "1e300*1e300",
    "-1e300*1e300", "9223372036854775807.0", "-9223372036854775808.0", "4611686018427387904.5",
    "5e-324", "x''", "x'3132'", "NULL"};

int main(void) {
  sqlite3 *db;
  CHECK(sqlite3_open(":memory:", &db) == SQLITE_OK);
  CHECK(sqlite3_create_function(db, "as_decl", 2, SQLITE_UTF8, NULL, as_decl, NULL, NULL) ==
        SQLITE_OK);
  for (size_t d = 0; d < sizeof decls / sizeof *decls; d++) {
    char sql[256];
    snprintf(sql, sizeof sql, "CREATE TABLE n%zu(c %s)", d, decls[d].sql);
    CHECK(sqlite3_exec(db, sql, NULL, NULL, NULL) == SQLITE_OK);
    int bad = 0;
    for (size_t i = 0; i < sizeof values / sizeof *values; i++) {
      char ins[512], got[512], want[512];
      snprintf(ins, sizeof ins, "DELETE FROM n%zu; INSERT INTO n%zu VALUES (%s)", d, d, values[i]);
      snprintf(got, sizeof got, "SELECT as_decl(%s, %d)", values[i], (int)decls[d].decl);
      snprintf(want, sizeof want, "SELECT c FROM n%zu", d);
      sqlite3_stmt *a = NULL, *b = NULL;
      int ok = sqlite3_exec(db, ins, NULL, NULL, NULL) == SQLITE_OK &&
               sqlite3_prepare_v2(db, got, -1, &a, NULL) == SQLITE_OK &&
               sqlite3_prepare_v2(db, want, -1, &b, NULL) == SQLITE_OK &&
               sqlite3_step(a) == SQLITE_ROW && sqlite3_step(b) == SQLITE_ROW && same_cell(a, b);
      if (!ok) {
        bad++;
        check_note("    %s as '%s': got type %d '%s', native type %d '%s'\n", values[i],
               decls[d].sql, a ? sqlite3_column_type(a, 0) : -1,
               a ? (const char *)sqlite3_column_text(a, 0) : "?",
               b ? sqlite3_column_type(b, 0) : -1,
               b ? (const char *)sqlite3_column_text(b, 0) : "?");
      }
      sqlite3_finalize(a);
      sqlite3_finalize(b);
    }
    CHECK_MSG(bad == 0, "%d values differ from a native column declared '%s'", bad,
              decls[d].sql);
  }
  /* the difference, spelled out */
  sqlite3_stmt *st = NULL;
  CHECK(sqlite3_prepare_v2(db, "SELECT as_decl(-0.0, 2), as_decl('-0.0', 2), as_decl(-0.0, 1)",
                           -1, &st, NULL) == SQLITE_OK &&
        sqlite3_step(st) == SQLITE_ROW);
  CHECK(sqlite3_column_type(st, 0) == SQLITE_FLOAT && signbit(sqlite3_column_double(st, 0)));
  CHECK(sqlite3_column_type(st, 1) == SQLITE_FLOAT && signbit(sqlite3_column_double(st, 1)));
  CHECK(sqlite3_column_type(st, 2) == SQLITE_INTEGER && sqlite3_column_int64(st, 2) == 0);
  sqlite3_finalize(st);
  sqlite3_close(db);
  return check_exit();
}
