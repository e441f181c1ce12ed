/* test_value.c - unit tests of the shared value model: the arena
 * (arena.c), JSON text of values (value.c) and SQLite results of values
 * (value_sql.c, through a test SQL function in an in-memory database). */
#include <math.h>
#include <sqlite3.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "core/npy.h"
#include "core/value.h"
#include "core/value_json.h"
#include "sql/value_sql.h"

static ds_arena arena; /* every test value lives here */

/* ------------------------------------------------------------ builders */

static ds_value vnull(void) { ds_value v = {0}; v.type = DS_V_NULL; return v; }
static ds_value vbool(int b) { ds_value v = {0}; v.type = DS_V_BOOL; v.u.i = b; return v; }
static ds_value vint(int64_t i) { ds_value v = {0}; v.type = DS_V_INT; v.u.i = i; return v; }
static ds_value vuint(uint64_t u) { ds_value v = {0}; v.type = DS_V_UINT; v.u.u = u; return v; }
static ds_value vfloat(double f) { ds_value v = {0}; v.type = DS_V_FLOAT; v.u.f = f; return v; }
static ds_value vcomplex(double re, double im) {
  ds_value v = {0};
  v.type = DS_V_COMPLEX;
  v.u.c.re = re;
  v.u.c.im = im;
  return v;
}
/* A TEXT/BYTES/BIGINT/NDARRAY value over n bytes (copied into the arena). */
static ds_value vstr(ds_vtype t, const void *p, size_t n) {
  ds_value v = {0};
  v.type = t;
  uint8_t *c = ds_arena_alloc(&arena, n);
  memcpy(c, p, n);
  v.u.s.p = c;
  v.u.s.n = n;
  return v;
}
static ds_value vtext(const char *s) { return vstr(DS_V_TEXT, s, strlen(s)); }
/* A container of n items (MAP: n = 2 * pairs, given as key, value, ...). */
static ds_value vlist(ds_vtype t, size_t n, const ds_value *items) {
  ds_value v = {0};
  v.type = t;
  v.u.list.items = ds_arena_alloc(&arena, n * sizeof *items);
  if (n) memcpy(v.u.list.items, items, n * sizeof *items);
  v.u.list.n = t == DS_V_MAP ? n / 2 : n;
  return v;
}

/* JSON of v as a malloc'd string, or "ERR: <message>". */
static char *json(const ds_value *v) {
  ds_buf b = {0};
  char *err = NULL;
  char *s;
  if (ds_value_json(&b, v, &err)) s = ds_strf("ERR: %s", err ? err : "?");
  else s = ds_strf("%.*s", (int)b.len, b.data ? (const char *)b.data : "");
  free(err);
  ds_buf_free(&b);
  return s;
}

#define CHECK_JSON(v, want)      \
  do {                           \
    ds_value v_ = (v);           \
    char *s_ = json(&v_);        \
    CHECK_STR(s_, want);         \
    free(s_);                    \
  } while (0)

/* ------------------------------------------------------------ arena */

static void test_arena(void) {
  ds_arena a = {0};
  int aligned = 1, intact = 1;
  uint8_t *ptrs[300];
  for (int i = 0; i < 300; i++) {
    ptrs[i] = ds_arena_alloc(&a, (size_t)i % 50 + 1);
    if (!ptrs[i] || (uintptr_t)ptrs[i] % 16) aligned = 0;
    else memset(ptrs[i], i, (size_t)i % 50 + 1);
  }
  for (int i = 0; i < 300 && aligned; i++)
    for (int k = 0; k < i % 50 + 1; k++)
      if (ptrs[i][k] != (uint8_t)i) intact = 0;
  CHECK(aligned);
  CHECK(intact);
  uint8_t *big = ds_arena_alloc(&a, 3u << 20);
  CHECK(big && (uintptr_t)big % 16 == 0);
  if (big) memset(big, 7, 3u << 20);
  uint8_t *small = ds_arena_alloc(&a, 8);
  CHECK(small && (uintptr_t)small % 16 == 0);
  CHECK(ds_arena_alloc(&a, 0) != NULL);
  ds_arena_reset(&a);
  CHECK(a.total == 0);
  CHECK(a.head != NULL);
  CHECK(ds_arena_alloc(&a, 10) != NULL);
  CHECK(a.total == 16);
  ds_arena_free(&a);
  CHECK(a.head == NULL && a.total == 0);

  ds_arena l = {0};
  l.limit = 100;
  CHECK(ds_arena_alloc(&l, 64) != NULL);
  CHECK(l.total == 64);
  CHECK(ds_arena_alloc(&l, 48) == NULL); /* 64 + 48 > 100 */
  CHECK(ds_arena_alloc(&l, 32) != NULL); /* 96 */
  CHECK(ds_arena_alloc(&l, 1) == NULL);  /* 96 + 16 > 100 */
  CHECK(ds_arena_alloc(&l, SIZE_MAX) == NULL);
  ds_arena_reset(&l);
  CHECK(ds_arena_alloc(&l, 100) == NULL); /* rounds to 112 */
  CHECK(ds_arena_alloc(&l, 96) != NULL);
  ds_arena_free(&l);
}

/* ------------------------------------------------------------ scalars */

static void test_scalars(void) {
  CHECK_JSON(vnull(), "null");
  CHECK_JSON(vbool(1), "true");
  CHECK_JSON(vbool(0), "false");
  CHECK_JSON(vint(-5), "-5");
  CHECK_JSON(vint(INT64_MIN), "-9223372036854775808");
  CHECK_JSON(vuint(UINT64_MAX), "18446744073709551615");
  CHECK_JSON(vstr(DS_V_BIGINT, "123456789012345678901234567890", 30),
             "123456789012345678901234567890");
  CHECK_JSON(vstr(DS_V_BIGINT, "-000123", 7), "-123");
  CHECK_JSON(vstr(DS_V_BIGINT, "000", 3), "0");
  CHECK_JSON(vstr(DS_V_BIGINT, "-0", 2), "0");
  CHECK_JSON(vstr(DS_V_BIGINT, "12a", 3), "ERR: invalid big integer text");
  CHECK_JSON(vstr(DS_V_BIGINT, "", 0), "ERR: invalid big integer text");
  CHECK_JSON(vstr(DS_V_BIGINT, "-", 1), "ERR: invalid big integer text");
}

static void test_floats(void) {
  CHECK_JSON(vfloat(1.0), "1.0");
  CHECK_JSON(vfloat(0.1), "0.1");
  CHECK_JSON(vfloat(-0.0), "-0.0");
  CHECK_JSON(vfloat(1.0 / 3.0), "0.3333333333333333");
  CHECK_JSON(vfloat(2.0 / 3.0), "0.6666666666666666");
  CHECK_JSON(vfloat(1e300), "1e+300");
  CHECK_JSON(vfloat(1.5e-7), "1.5e-07");
  CHECK_JSON(vfloat(9007199254740992.0), "9007199254740992.0");
  CHECK_JSON(vfloat(123456.5), "123456.5");
  CHECK_JSON(vfloat(5e-324), "4.94065645841247e-324"); /* reads back exactly */
  CHECK_JSON(vfloat((double)0.1f), "0.10000000149011612");
  CHECK_JSON(vfloat(NAN), "null");
  CHECK_JSON(vfloat(INFINITY), "null");
  CHECK_JSON(vfloat(-INFINITY), "null");
  CHECK_JSON(vcomplex(1.5, -0.0), "[1.5,-0.0]");
  CHECK_JSON(vcomplex(INFINITY, NAN), "[null,null]");
  /* every printed double reads back exactly */
  int roundtrip = 1;
  double x = 1.0;
  for (int i = 0; i < 2000; i++) {
    x = x * 1.37 + 1.0 / (i + 3);
    if (x > 1e200) x = x / 1e250;
    ds_buf b = {0};
    ds_json_double(&b, x);
    ds_buf_append(&b, "", 1);
    if (strtod((char *)b.data, NULL) != x) roundtrip = 0;
    ds_buf_free(&b);
  }
  CHECK(roundtrip);
}

static void test_text(void) {
  CHECK_JSON(vtext(""), "\"\"");
  CHECK_JSON(vtext("a\"b\\c\n\t\r\b\f\x01\x1f\x7f"),
             "\"a\\\"b\\\\c\\n\\t\\r\\b\\f\\u0001\\u001f\x7f\"");
  CHECK_JSON(vstr(DS_V_TEXT, "a\0b", 3), "\"a\\u0000b\"");
  CHECK_JSON(vtext("\xc3\xa9\xe2\x82\xac\xf0\x9f\x98\x80"),
             "\"\xc3\xa9\xe2\x82\xac\xf0\x9f\x98\x80\"");
  CHECK_JSON(vtext("a\xff" "b"), "\"a\xef\xbf\xbd" "b\"");
  /* a truncated sequence is one replacement, like Python's 'replace' */
  CHECK_JSON(vtext("\xe2\x82" "A"), "\"\xef\xbf\xbd" "A\"");
  CHECK_JSON(vtext("\xe2\x82"), "\"\xef\xbf\xbd\"");
  /* a surrogate encoded in UTF-8 is three invalid bytes */
  CHECK_JSON(vtext("\xed\xa0\x80"), "\"\xef\xbf\xbd\xef\xbf\xbd\xef\xbf\xbd\"");
  /* overlong '/' and code points above U+10FFFF */
  CHECK_JSON(vtext("\xc0\xaf"), "\"\xef\xbf\xbd\xef\xbf\xbd\"");
  CHECK_JSON(vtext("\xf4\x90\x80\x80"),
             "\"\xef\xbf\xbd\xef\xbf\xbd\xef\xbf\xbd\xef\xbf\xbd\"");
  CHECK(ds_utf8_valid((const uint8_t *)"\xc3\xa9z", 3) == 1);
  CHECK(ds_utf8_valid((const uint8_t *)"\xc3", 1) == 0);
  CHECK(ds_utf8_valid((const uint8_t *)"\xed\xa0\x80", 3) == 0);
  CHECK(ds_utf8_valid((const uint8_t *)"\xf0\x9f\x98\x80", 4) == 1);
  CHECK(ds_utf8_valid((const uint8_t *)"", 0) == 1);
  /* every length and position around the word-at-a-time ASCII paths: one
   * bad byte, a cut 2-byte sequence at the end, or a valid one anywhere */
  size_t wrong = 0;
  for (size_t n = 1; n <= 80; n++) {
    uint8_t buf[80];
    for (size_t at = 0; at < n; at++) {
      memset(buf, 'a', n);
      buf[at] = 0xff;
      wrong += ds_utf8_valid(buf, n) != 0;
      memset(buf, 'a', n);
      buf[at] = 0xc3; /* valid only when 0xa9 follows */
      wrong += ds_utf8_valid(buf, n) != 0;
      if (at + 1 < n) {
        buf[at + 1] = 0xa9;
        wrong += ds_utf8_valid(buf, n) != 1;
      }
    }
    memset(buf, 'a', n);
    wrong += ds_utf8_valid(buf, n) != 1;
  }
  CHECK_MSG(wrong == 0, "%zu wrong UTF-8 verdicts", wrong);
}

static void test_bytes(void) {
  CHECK_JSON(vstr(DS_V_BYTES, "", 0), "\"\"");
  CHECK_JSON(vstr(DS_V_BYTES, "f", 1), "\"Zg==\"");
  CHECK_JSON(vstr(DS_V_BYTES, "fo", 2), "\"Zm8=\"");
  CHECK_JSON(vstr(DS_V_BYTES, "foo", 3), "\"Zm9v\"");
  CHECK_JSON(vstr(DS_V_BYTES, "foob", 4), "\"Zm9vYg==\"");
  CHECK_JSON(vstr(DS_V_BYTES, "\x00\xff\xfe", 3), "\"AP/+\"");
}

/* ------------------------------------------------------------ containers */

static void test_containers(void) {
  ds_value inner[1] = {vbool(1)};
  ds_value items[4] = {vint(1), vtext("a"), vnull(), vlist(DS_V_LIST, 1, inner)};
  CHECK_JSON(vlist(DS_V_LIST, 4, items), "[1,\"a\",null,[true]]");
  CHECK_JSON(vlist(DS_V_TUPLE, 2, items), "[1,\"a\"]");
  CHECK_JSON(vlist(DS_V_SET, 1, items), "[1]");
  CHECK_JSON(vlist(DS_V_LIST, 0, NULL), "[]");
  CHECK_JSON(vlist(DS_V_MAP, 0, NULL), "{}");

  ds_value pair[2] = {vint(1), vint(2)};
  ds_value one_text[1] = {vtext("x")};
  ds_value kv[16] = {
      vtext("a"), vint(1),
      vint(1), vint(2),
      vlist(DS_V_TUPLE, 2, pair), vint(3),
      vnull(), vint(4),
      vstr(DS_V_BYTES, "\x01", 1), vint(5),
      vfloat(1.5), vint(6),
      vbool(1), vint(7),
      vlist(DS_V_TUPLE, 1, one_text), vlist(DS_V_LIST, 2, pair),
  };
  CHECK_JSON(vlist(DS_V_MAP, 16, kv),
             "{\"a\":1,\"1\":2,\"[1,2]\":3,\"null\":4,\"AQ==\":5,\"1.5\":6,"
             "\"true\":7,\"[\\\"x\\\"]\":[1,2]}");
  ds_value bad[2] = {vstr(DS_V_BIGINT, "x", 1), vint(1)};
  CHECK_JSON(vlist(DS_V_MAP, 2, bad), "ERR: invalid big integer text");
  ds_value weird = {0};
  weird.type = (ds_vtype)99;
  CHECK_JSON(weird, "ERR: unknown value type 99");
}

/* A chain of `levels` nested one-item lists around the integer 0. */
static ds_value nested(int levels) {
  ds_value v = vint(0);
  for (int i = 0; i < levels; i++) v = vlist(DS_V_LIST, 1, &v);
  return v;
}

static void test_depth(void) {
  ds_value ok = nested(DS_VALUE_MAX_DEPTH);
  char *s = json(&ok);
  int good = s && strlen(s) == 2 * DS_VALUE_MAX_DEPTH + 1 && s[0] == '[' &&
             s[DS_VALUE_MAX_DEPTH] == '0' && s[DS_VALUE_MAX_DEPTH + 1] == ']';
  CHECK_MSG(good, "got %.40s...", s ? s : "(null)");
  free(s);
  CHECK_JSON(nested(DS_VALUE_MAX_DEPTH + 1),
             "ERR: value nested deeper than 1000 levels");
  CHECK_JSON(nested(100000), "ERR: value nested deeper than 1000 levels");
  /* on failure the buffer is left as it was */
  ds_buf b = {0};
  ds_buf_puts(&b, "xy");
  char *err = NULL;
  ds_value deep = nested(DS_VALUE_MAX_DEPTH + 5);
  CHECK(ds_value_json(&b, &deep, &err) == -1);
  CHECK(b.len == 2 && memcmp(b.data, "xy", 2) == 0);
  free(err);
  ds_buf_free(&b);
}

/* Maps whose only key is the map one level down: each level escapes the
 * JSON text of the one below as a string, doubling its backslashes. The
 * text wanted is 2^levels bytes; the key's own text must be held to the
 * output's cap, not built whole first (fuzz_datadings_sample: a timeout,
 * and unbounded memory). */
static void test_keys_in_keys(void) {
  ds_value v = vint(0);
  for (int i = 0; i < 3; i++) {
    ds_value kv[2] = {v, vint(i)};
    v = vlist(DS_V_MAP, 2, kv);
  }
  CHECK_JSON(v, "{\"{\\\"{\\\\\\\"0\\\\\\\":0}\\\":1}\":2}");
  for (int i = 3; i < 60; i++) {
    ds_value kv[2] = {v, vint(i)};
    v = vlist(DS_V_MAP, 2, kv);
  }
  ds_buf b = {0};
  char *err = NULL;
  CHECK(ds_value_json_capped(&b, &v, 1 << 20, NULL, &err) == -1);
  CHECK_CONTAINS(err, "more than max_value_bytes=1048576");
  CHECK(b.len == 0);
  free(err);
  ds_buf_free(&b);
}

/* A small .npy blob: '<i4' shape (2, 2) holding 1, 2, 3, 4. */
static ds_value npy_value(void) {
  ds_buf b = {0};
  uint64_t shape[2] = {2, 2};
  char *err = NULL;
  ds_npy_write_header(&b, "<i4", 0, 2, shape, &err);
  for (uint8_t i = 1; i <= 4; i++) ds_buf_append(&b, (uint8_t[4]){i, 0, 0, 0}, 4);
  ds_value v = vstr(DS_V_NDARRAY, b.data, b.len);
  ds_buf_free(&b);
  free(err);
  return v;
}

static void test_ndarray(void) {
  CHECK_JSON(npy_value(), "[[1,2],[3,4]]");
  ds_value items[2] = {vtext("img"), npy_value()};
  CHECK_JSON(vlist(DS_V_MAP, 2, items), "{\"img\":[[1,2],[3,4]]}");
  CHECK_JSON(vstr(DS_V_NDARRAY, "garbage!!!", 10),
             "ERR: ndarray: not a .npy file (bad magic)");
}

static void test_bigint_parse(void) {
  int64_t v = 0;
  CHECK(ds_bigint_to_i64((const uint8_t *)"9223372036854775807", 19, &v) == 1 &&
        v == INT64_MAX);
  CHECK(ds_bigint_to_i64((const uint8_t *)"-9223372036854775808", 20, &v) == 1 &&
        v == INT64_MIN);
  CHECK(ds_bigint_to_i64((const uint8_t *)"9223372036854775808", 19, &v) == 0);
  CHECK(ds_bigint_to_i64((const uint8_t *)"-9223372036854775809", 20, &v) == 0);
  CHECK(ds_bigint_to_i64((const uint8_t *)"-42", 3, &v) == 1 && v == -42);
  CHECK(ds_bigint_to_i64((const uint8_t *)"", 0, &v) == -1);
  CHECK(ds_bigint_to_i64((const uint8_t *)"1 ", 2, &v) == -1);
}

/* ------------------------------------------------------------ SQLite */

static ds_value sql_values[24];
static int sql_nvalues;

/* tv(k): the k-th test value through ds_value_result. */
static void tv_func(sqlite3_context *ctx, int argc, sqlite3_value **argv) {
  (void)argc;
  int k = sqlite3_value_int(argv[0]);
  if (k < 0 || k >= sql_nvalues) {
    sqlite3_result_error(ctx, "no such test value", -1);
    return;
  }
  ds_value_result(ctx, &sql_values[k]);
}

/* The single result of `sql` as "type:value" text (malloc'd), or
 * "error:<message>". */
static char *sql1(sqlite3 *db, const char *sql) {
  sqlite3_stmt *st = NULL;
  char *out;
  if (sqlite3_prepare_v2(db, sql, -1, &st, NULL) != SQLITE_OK)
    return ds_strf("error:%s", sqlite3_errmsg(db));
  int rc = sqlite3_step(st);
  if (rc != SQLITE_ROW) {
    out = ds_strf("error:%s", sqlite3_errmsg(db));
  } else {
    switch (sqlite3_column_type(st, 0)) {
      case SQLITE_NULL: out = ds_strf("null"); break;
      case SQLITE_INTEGER:
        out = ds_strf("integer:%lld", (long long)sqlite3_column_int64(st, 0));
        break;
      case SQLITE_FLOAT: out = ds_strf("real:%.17g", sqlite3_column_double(st, 0)); break;
      case SQLITE_TEXT:
        out = ds_strf("text:%s", (const char *)sqlite3_column_text(st, 0));
        break;
      default: {
        const uint8_t *p = sqlite3_column_blob(st, 0);
        int n = sqlite3_column_bytes(st, 0);
        ds_buf b = {0};
        ds_buf_puts(&b, "blob:");
        for (int i = 0; i < n; i++) ds_buf_printf(&b, "%02x", p[i]);
        ds_buf_append(&b, "", 1);
        out = (char *)b.data;
      }
    }
  }
  sqlite3_finalize(st);
  return out;
}

#define CHECK_SQL(db, sql, want) \
  do {                           \
    char *s_ = sql1(db, sql);    \
    CHECK_STR(s_, want);         \
    free(s_);                    \
  } while (0)

static void test_sql(void) {
  static char long_text[1501];
  memset(long_text, 'x', sizeof long_text - 2);
  long_text[sizeof long_text - 2] = 'y';
  ds_value list_items[2] = {vint(1), vtext("x")};
  ds_value pair[2] = {vint(1), vint(2)};
  ds_value map_items[2] = {vtext("a"), vlist(DS_V_LIST, 2, pair)};
  ds_value empty_text = {0};
  empty_text.type = DS_V_TEXT; /* p == NULL, n == 0 */
  ds_value empty_bytes = {0};
  empty_bytes.type = DS_V_BYTES;
  ds_value set_items[2] = {vint(3), vint(4)};
  ds_value vals[] = {
      vnull(),                                          /* 0 */
      vbool(1),                                         /* 1 */
      vint(-7),                                         /* 2 */
      vuint(UINT64_MAX),                                /* 3 */
      vuint(5),                                         /* 4 */
      vstr(DS_V_BIGINT, "12345", 5),                    /* 5 */
      vstr(DS_V_BIGINT, "-99999999999999999999", 21),   /* 6 */
      vfloat(NAN),                                      /* 7 */
      vfloat(2.5),                                      /* 8 */
      vstr(DS_V_TEXT, "a\0b", 3),                       /* 9 */
      empty_bytes,                                      /* 10 */
      vlist(DS_V_LIST, 2, list_items),                  /* 11 */
      vlist(DS_V_MAP, 2, map_items),                    /* 12 */
      vcomplex(1.0, 2.0),                               /* 13 */
      npy_value(),                                      /* 14 */
      nested(DS_VALUE_MAX_DEPTH + 1),                   /* 15 */
      empty_text,                                       /* 16 */
      vfloat(INFINITY),                                 /* 17 */
      vlist(DS_V_SET, 2, set_items),                    /* 18 */
      vstr(DS_V_BYTES, "\x01\x02", 2),                  /* 19 */
      vstr(DS_V_TEXT, "h\xc3\xa9llo", 6),                /* 20 */
      vstr(DS_V_TEXT, long_text, sizeof long_text - 1), /* 21: past the short-text buffer */
      vstr(DS_V_TEXT, long_text + 1, 1023),            /* 22: 1023 bytes */
  };
  memcpy(sql_values, vals, sizeof vals);
  sql_nvalues = (int)(sizeof vals / sizeof vals[0]);

  sqlite3 *db = NULL;
  CHECK(sqlite3_open(":memory:", &db) == SQLITE_OK);
  CHECK(sqlite3_create_function(db, "tv", 1, SQLITE_UTF8 | SQLITE_RESULT_SUBTYPE,
                                NULL, tv_func, NULL, NULL) == SQLITE_OK);
  CHECK_SQL(db, "SELECT tv(0)", "null");
  CHECK_SQL(db, "SELECT tv(1)", "integer:1");
  CHECK_SQL(db, "SELECT tv(2)", "integer:-7");
  CHECK_SQL(db, "SELECT tv(3)", "text:18446744073709551615");
  CHECK_SQL(db, "SELECT tv(4)", "integer:5");
  CHECK_SQL(db, "SELECT tv(5)", "integer:12345");
  CHECK_SQL(db, "SELECT tv(6)", "text:-99999999999999999999");
  CHECK_SQL(db, "SELECT tv(7)", "null");
  CHECK_SQL(db, "SELECT tv(8)", "real:2.5");
  CHECK_SQL(db, "SELECT typeof(tv(9)) || ':' || hex(CAST(tv(9) AS BLOB))",
            "text:text:610062");
  CHECK_SQL(db, "SELECT typeof(tv(10)) || ':' || length(tv(10))", "text:blob:0");
  CHECK_SQL(db, "SELECT tv(11)", "text:[1,\"x\"]");
  /* the JSON subtype: json_array embeds it as JSON, not as a string */
  CHECK_SQL(db, "SELECT json_array(tv(11))", "text:[[1,\"x\"]]");
  CHECK_SQL(db, "SELECT tv(11) ->> '$[1]'", "text:x");
  CHECK_SQL(db, "SELECT count(*) FROM json_each(tv(11))", "integer:2");
  CHECK_SQL(db, "SELECT tv(12) -> '$.a'", "text:[1,2]");
  CHECK_SQL(db, "SELECT json_object('k', tv(12))", "text:{\"k\":{\"a\":[1,2]}}");
  CHECK_SQL(db, "SELECT tv(13)", "text:[1.0,2.0]");
  CHECK_SQL(db, "SELECT json_array(tv(13))", "text:[[1.0,2.0]]");
  CHECK_SQL(db, "SELECT typeof(tv(14)) || ':' || length(tv(14))", "text:blob:144");
  CHECK_SQL(db, "SELECT tv(15)", "error:value nested deeper than 1000 levels");
  CHECK_SQL(db, "SELECT typeof(tv(16)) || ':' || length(tv(16))", "text:text:0");
  CHECK_SQL(db, "SELECT tv(17) > 1e308", "integer:1");
  CHECK_SQL(db, "SELECT json_array(tv(18))", "text:[[3,4]]");
  CHECK_SQL(db, "SELECT tv(19)", "blob:0102");
  CHECK_SQL(db, "SELECT json_array(tv(19))", "error:JSON cannot hold BLOB values");
  /* text: length() counts characters; short and long text alike */
  CHECK_SQL(db, "SELECT tv(20) || ':' || length(tv(20))", "text:h\xc3\xa9llo:5");
  CHECK_SQL(db, "SELECT length(tv(21)) || substr(tv(21), -2) || typeof(tv(21))",
            "text:1500xytext");
  CHECK_SQL(db, "SELECT length(tv(22)) || substr(tv(22), -2)", "text:1023xx");
  CHECK_SQL(db, "SELECT length(tv(9)) || ':' || length(CAST(tv(9) AS BLOB))", "text:1:3");
  sqlite3_close(db);
}

int main(void) {
  test_arena();
  test_scalars();
  test_floats();
  test_text();
  test_bytes();
  test_containers();
  test_depth();
  test_keys_in_keys();
  test_ndarray();
  test_bigint_parse();
  test_sql();
  ds_arena_free(&arena);
  return check_exit();
}
