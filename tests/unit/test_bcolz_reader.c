/* test_bcolz_reader.c - the bcolz reader without SQLite, against the
 * upstream fixtures' expected JSON (read with jansson): for every fixture,
 * kind, length, names, dtypes, chunking, attrs, every listed row's every
 * cell through both bcolz_chunk and bcolz_row_atom, and the column stats;
 * fixtures upstream cannot open must fail. Then crafted damage on copies in
 * a temporary directory (bad magic, truncated Blosc buffers, wrong chunk
 * sizes, missing chunk files, columns of different lengths, bad JSON,
 * unsupported dtypes), each a clear error naming the file. */
#include <dirent.h>
#include <jansson.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "check.h"
#include "core/cancel.h"
#include "core/common.h"
#include "core/npy.h"
#include "core/value.h"
#include "core/value_json.h"
#include "formats/bcolz/bcolz.h"

#define FIX "tests/fixtures/upstream/bcolz/"

static char tmp_dir[64];
static int g_s_column; /* comparing an S column: valid UTF-8 must be TEXT */

/* ------------------------------------------------------------ helpers */

static json_t *load_expected(const char *name) {
  json_error_t e;
  char path[512];
  snprintf(path, sizeof path, FIX "expected/%s.json", name);
  json_t *j = json_load_file(path, JSON_ALLOW_NUL, &e);
  CHECK_MSG(j != NULL, "load %s: %s", name, e.text);
  return j;
}

static int hexval(int c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  return -1;
}

/* Decode hex into b. */
static void unhex(const char *s, ds_buf *b) {
  b->len = 0;
  for (; s[0] && s[1]; s += 2) {
    uint8_t v = (uint8_t)(hexval(s[0]) << 4 | hexval(s[1]));
    ds_buf_append(b, &v, 1);
  }
}

static void unb64(const char *s, ds_buf *b) {
  b->len = 0;
  uint32_t acc = 0;
  int bits = 0;
  for (; *s; s++) {
    int v;
    char c = *s;
    if (c >= 'A' && c <= 'Z') v = c - 'A';
    else if (c >= 'a' && c <= 'z') v = c - 'a' + 26;
    else if (c >= '0' && c <= '9') v = c - '0' + 52;
    else if (c == '+') v = 62;
    else if (c == '/') v = 63;
    else continue;
    acc = acc << 6 | (uint32_t)v;
    bits += 6;
    if (bits >= 8) {
      bits -= 8;
      uint8_t o = (uint8_t)(acc >> bits);
      ds_buf_append(b, &o, 1);
    }
  }
}

static int bytes_eq(const ds_value *v, const uint8_t *p, size_t n) {
  return v->u.s.n == n && (n == 0 || memcmp(v->u.s.p, p, n) == 0);
}

static int float_eq_json(double d, json_t *e) {
  if (json_is_string(e)) {
    const char *s = json_string_value(e);
    if (!strcmp(s, "NaN")) return isnan(d);
    if (!strcmp(s, "Infinity")) return isinf(d) && d > 0;
    if (!strcmp(s, "-Infinity")) return isinf(d) && d < 0;
    return 0;
  }
  if (!json_is_number(e)) return 0;
  double x = json_number_value(e);
  return x == d && signbit(x) == signbit(d);
}

/* 1 when value v matches the typed-JSON cell e; why says what differs. */
static int cell_eq(const ds_value *v, json_t *e, char *why, size_t cap) {
  ds_buf t = {0};
  int ok = 0;
#define WHY(...) snprintf(why, cap, __VA_ARGS__)
  if (json_is_null(e)) {
    ok = v->type == DS_V_NULL;
  } else if (json_is_boolean(e)) {
    ok = v->type == DS_V_BOOL && v->u.i == json_is_true(e);
  } else if (json_is_integer(e)) {
    ok = v->type == DS_V_INT && v->u.i == json_integer_value(e);
    if (v->type == DS_V_FLOAT) ok = float_eq_json(v->u.f, e);
  } else if (json_is_real(e)) {
    ok = v->type == DS_V_FLOAT && float_eq_json(v->u.f, e);
  } else if (json_is_string(e)) {
    if (v->type == DS_V_FLOAT)
      ok = float_eq_json(v->u.f, e);
    else
      ok = v->type == DS_V_TEXT &&
           bytes_eq(v, (const uint8_t *)json_string_value(e),
                    json_string_length(e));
  } else if (json_is_array(e)) {
    ok = v->type == DS_V_LIST && v->u.list.n == json_array_size(e);
    for (size_t i = 0; ok && i < v->u.list.n; i++)
      ok = cell_eq(&v->u.list.items[i], json_array_get(e, i), why, cap);
  } else if (json_is_object(e)) {
    json_t *x;
    if ((x = json_object_get(e, "$bigint"))) {
      char d[32];
      if (v->type == DS_V_UINT) {
        snprintf(d, sizeof d, "%llu", (unsigned long long)v->u.u);
        ok = !strcmp(d, json_string_value(x));
      } else if (v->type == DS_V_BIGINT) {
        ok = bytes_eq(v, (const uint8_t *)json_string_value(x),
                      strlen(json_string_value(x)));
      }
    } else if ((x = json_object_get(e, "$bytes_hex"))) {
      unhex(json_string_value(x), &t);
      ok = (v->type == DS_V_BYTES || v->type == DS_V_TEXT) &&
           bytes_eq(v, t.data, t.len);
      if (ok && v->type == DS_V_TEXT && !ds_utf8_valid(t.data, t.len)) ok = 0;
      if (ok && v->type == DS_V_BYTES && ds_utf8_valid(t.data, t.len) &&
          g_s_column)
        ok = 0; /* valid UTF-8 S values are TEXT */
      if (ok && v->type == DS_V_TEXT && !g_s_column) ok = 0;
    } else if ((x = json_object_get(e, "$datetime64"))) {
      const char *iso = json_string_value(json_object_get(x, "iso"));
      if (iso && !strcmp(iso, "NaT"))
        ok = v->type == DS_V_NULL;
      else
        ok = iso && v->type == DS_V_TEXT &&
             bytes_eq(v, (const uint8_t *)iso, strlen(iso));
    } else if ((x = json_object_get(e, "$timedelta64"))) {
      if (json_is_true(json_object_get(x, "nat")))
        ok = v->type == DS_V_NULL;
      else
        ok = v->type == DS_V_INT &&
             v->u.i == json_integer_value(json_object_get(x, "value"));
    } else if ((x = json_object_get(e, "$ndarray"))) {
      ds_npy a;
      char *err = NULL;
      if (v->type == DS_V_NDARRAY &&
          ds_npy_parse(v->u.s.p, v->u.s.n, &a, &err) == 0) {
        json_t *sh = json_object_get(x, "shape");
        ok = !strcmp(a.descr, json_string_value(json_object_get(x, "dtype"))) &&
             (size_t)a.ndim == json_array_size(sh);
        for (int i = 0; ok && i < a.ndim; i++)
          ok = a.shape[i] ==
               (uint64_t)json_integer_value(json_array_get(sh, (size_t)i));
        unb64(json_string_value(json_object_get(x, "data_b64")), &t);
        ok = ok && a.data_len == t.len && !memcmp(a.data, t.data, t.len);
      }
      free(err);
    } else if ((x = json_object_get(e, "$tuple"))) {
      ok = v->type == DS_V_TUPLE && v->u.list.n == json_array_size(x);
      for (size_t i = 0; ok && i < v->u.list.n; i++)
        ok = cell_eq(&v->u.list.items[i], json_array_get(x, i), why, cap);
    } else {
      ok = v->type == DS_V_MAP && v->u.list.n == json_object_size(e);
      for (size_t i = 0; ok && i < v->u.list.n; i++) {
        const ds_value *k = &v->u.list.items[2 * i];
        char key[256];
        ok = k->type == DS_V_TEXT && k->u.s.n < sizeof key;
        if (!ok) break;
        memcpy(key, k->u.s.p, k->u.s.n);
        key[k->u.s.n] = 0;
        json_t *ev = json_object_get(e, key);
        ok = ev && cell_eq(&v->u.list.items[2 * i + 1], ev, why, cap);
      }
    }
  }
  if (!ok && !why[0]) {
    ds_buf j = {0};
    char *err = NULL;
    char *es = json_dumps(e, JSON_ENCODE_ANY | JSON_COMPACT);
    if (ds_value_json(&j, v, &err) == 0) ds_buf_append(&j, "", 1);
    WHY("got type %d %s, want %s", (int)v->type,
        j.data ? (const char *)j.data : err, es ? es : "?");
    free(es);
    free(err);
    ds_buf_free(&j);
  }
#undef WHY
  ds_buf_free(&t);
  return ok;
}

/* JSON attrs text equal to the expected object. */
static int attrs_eq(const char *text, json_t *want) {
  json_error_t e;
  json_t *j = json_loads(text ? text : "", JSON_ALLOW_NUL, &e);
  int ok = j && json_equal(j, want);
  json_decref(j);
  return ok;
}

/* Relative comparison for float sums. */
static int close_to(double got, json_t *want) {
  if (json_is_string(want)) return float_eq_json(got, want);
  double w = json_number_value(want);
  if (w == got) return 1;
  return fabs(got - w) <= 1e-9 * fmax(fabs(w), fabs(got));
}

static int int_or_big_eq(const ds_value *v, json_t *e) {
  char why[8] = "";
  if (v->type == DS_V_UINT && v->u.u <= INT64_MAX && json_is_integer(e))
    return (int64_t)v->u.u == json_integer_value(e);
  return cell_eq(v, e, why, sizeof why);
}

/* ----------------------------------------------------------- fixtures */

typedef struct col_cache {
  ds_buf buf;
  uint64_t k;
  int have;
  const uint8_t *p;
  uint64_t rows;
} col_cache;

static void check_stats(bcolz_table *t, size_t c, json_t *want,
                        const char *fx) {
  bcolz_stats s;
  char *err = NULL;
  int rc = bcolz_column_stats(t, c, &s, &err);
  const bcolz_dtype *dt = bcolz_col_dtype(t, c);
  const char *cn = bcolz_col_name(t, c);
  CHECK_MSG(rc == 0, "%s.%s stats: %s", fx, cn, err);
  free(err);
  if (rc) {
    bcolz_stats_free(&s);
    return;
  }
  int ok = s.count == (uint64_t)json_integer_value(json_object_get(want, "count"));
  char k = dt->kind;
  if (s.count == 0)
    ok = ok && s.min.type == DS_V_NULL && s.sum.type == DS_V_NULL;
  else if (k == 'b' || k == 'i' || k == 'u') {
    ok = ok && int_or_big_eq(&s.sum, json_object_get(want, "sum")) &&
         int_or_big_eq(&s.min, json_object_get(want, "min")) &&
         int_or_big_eq(&s.max, json_object_get(want, "max")) && s.nulls == 0;
  } else if (k == 'f') {
    ok = ok && s.nulls == (uint64_t)json_integer_value(
                              json_object_get(want, "nan_count"));
    if (s.count > s.nulls)
      ok = ok && close_to(s.sum.u.f, json_object_get(want, "nansum")) &&
           float_eq_json(s.min.u.f, json_object_get(want, "nanmin")) &&
           float_eq_json(s.max.u.f, json_object_get(want, "nanmax"));
  } else if (k == 'M' || k == 'm') {
    ok = ok && s.nulls == (uint64_t)json_integer_value(
                              json_object_get(want, "nat_count"));
    if (s.count > s.nulls)
      ok = ok && s.tmin == json_integer_value(json_object_get(want, "min")) &&
           s.tmax == json_integer_value(json_object_get(want, "max"));
  } else if (k == 'S' || k == 'U') {
    ok = ok &&
         s.empty_count == (uint64_t)json_integer_value(
                              json_object_get(want, "empty_count")) &&
         s.max_len == (uint64_t)json_integer_value(
                          json_object_get(want, "max_len")) &&
         s.min.type != DS_V_NULL && s.max.type != DS_V_NULL;
  }
  CHECK_MSG(ok, "%s.%s stats differ: count %llu nulls %llu", fx, cn,
            (unsigned long long)s.count, (unsigned long long)s.nulls);
  bcolz_stats_free(&s);
}

static void check_fixture(const char *fx) {
  json_t *x = load_expected(fx);
  if (!x) return;
  char path[512];
  snprintf(path, sizeof path, FIX "%s", fx);
  bcolz_table *t = NULL;
  char *err = NULL;
  int rc = bcolz_open(path, &t, &err);
  if (json_object_get(x, "upstream_error")) {
    CHECK_MSG(rc != 0 && err && strstr(err, fx), "%s must fail: %s", fx,
              err ? err : "(opened)");
    printf("    %s: %s\n", fx, err ? err : "");
    free(err);
    bcolz_close(t);
    json_decref(x);
    return;
  }
  CHECK_MSG(rc == 0, "%s open: %s", fx, err);
  free(err);
  err = NULL;
  if (rc) {
    json_decref(x);
    return;
  }
  const char *kind = json_string_value(json_object_get(x, "kind"));
  CHECK_MSG(bcolz_is_ctable(t) == !strcmp(kind, "ctable"), "%s kind", fx);
  CHECK_MSG(bcolz_nrows(t) == (uint64_t)json_integer_value(json_object_get(x, "len")),
            "%s len %llu", fx, (unsigned long long)bcolz_nrows(t));
  json_t *names = json_object_get(x, "names");
  json_t *cols = json_object_get(x, "columns");
  size_t nc = bcolz_ncols(t);
  CHECK_MSG(nc == json_array_size(names), "%s ncols %zu", fx, nc);
  if (nc != json_array_size(names)) nc = 0;
  CHECK_MSG(attrs_eq(bcolz_attrs_json(t), json_object_get(x, "attrs")),
            "%s attrs %s", fx, bcolz_attrs_json(t));
  int meta_ok = 1;
  char why[1024] = "";
  for (size_t c = 0; c < nc; c++) {
    json_t *jc = json_array_get(cols, c);
    const bcolz_dtype *dt = bcolz_col_dtype(t, c);
    json_t *cs = json_object_get(jc, "cell_shape");
    uint64_t full = (uint64_t)json_integer_value(json_object_get(jc, "full_chunks"));
    uint64_t left = (uint64_t)json_integer_value(json_object_get(jc, "leftover_rows"));
    int ok = !strcmp(bcolz_col_name(t, c), json_string_value(json_array_get(names, c))) &&
             !strcmp(dt->str, json_string_value(json_object_get(jc, "dtype"))) &&
             !strcmp(bcolz_col_meta_dtype(t, c),
                     json_string_value(json_object_get(jc, "meta_dtype"))) &&
             (size_t)dt->ndim == json_array_size(cs) &&
             bcolz_col_chunklen(t, c) ==
                 (uint64_t)json_integer_value(json_object_get(jc, "chunklen")) &&
             bcolz_col_nchunks(t, c) == full + (left > 0) &&
             attrs_eq(bcolz_col_attrs_json(t, c), json_object_get(jc, "attrs"));
    for (int i = 0; ok && i < dt->ndim; i++)
      ok = dt->shape[i] == (uint64_t)json_integer_value(json_array_get(cs, (size_t)i));
    if (ok && left && dt->kind != 'O')
      ok = bcolz_col_chunk_rows(t, c, full) == left;
    if (!ok && meta_ok)
      snprintf(why, sizeof why, "column %zu (%s): dtype %s meta %s", c,
               bcolz_col_name(t, c), dt->str, bcolz_col_meta_dtype(t, c));
    meta_ok &= ok;
  }
  CHECK_MSG(meta_ok, "%s column metadata: %s", fx, why);

  /* rows through both access paths */
  col_cache *cc = calloc(nc ? nc : 1, sizeof *cc);
  ds_buf atom = {0};
  ds_arena a = {0};
  json_t *rows = json_object_get(x, "rows");
  size_t bad_chunk = 0, bad_atom = 0, cells = 0;
  char why1[1024] = "", why2[1024] = "";
  for (size_t i = 0; i < json_array_size(rows); i++) {
    json_t *r = json_array_get(rows, i);
    uint64_t row = (uint64_t)json_integer_value(json_array_get(r, 0));
    json_t *cv = json_array_get(r, 1);
    for (size_t c = 0; c < nc; c++) {
      json_t *e = json_array_get(cv, c);
      const bcolz_dtype *dt = bcolz_col_dtype(t, c);
      ds_value v;
      g_s_column = dt->kind == 'S';
      cells++;
      ds_arena_reset(&a);
      /* chunk path */
      uint64_t k = bcolz_col_chunk_of(t, c, row);
      col_cache *q = &cc[c];
      if (!q->have || q->k != k) {
        q->have = 0;
        if (bcolz_chunk(t, c, k, &q->buf, &q->p, &q->rows, &err) == 0) {
          q->have = 1;
          q->k = k;
        }
      }
      if (!q->have) {
        if (!bad_chunk++) snprintf(why1, sizeof why1, "row %llu col %zu: %s",
                                   (unsigned long long)row, c, err);
        free(err);
        err = NULL;
      } else {
        uint64_t in = row - bcolz_col_chunk_first(t, c, k);
        size_t n = dt->kind == 'O' ? q->buf.len : (size_t)dt->atom;
        const uint8_t *p = q->p + (dt->kind == 'O' ? 0 : in * dt->atom);
        char w[512] = "";
        if (bcolz_cell_value(dt, p, n, 0, &a, &v, &err) || !cell_eq(&v, e, w, sizeof w)) {
          if (!bad_chunk++)
            snprintf(why1, sizeof why1, "row %llu col %zu: %s", (unsigned long long)row,
                     c, err ? err : w);
          free(err);
          err = NULL;
        }
      }
      /* row-atom path */
      char w[512] = "";
      if (bcolz_row_atom(t, c, row, &atom, &err) ||
          bcolz_cell_value(dt, atom.data, atom.len, 0, &a, &v, &err) ||
          !cell_eq(&v, e, w, sizeof w)) {
        if (!bad_atom++)
          snprintf(why2, sizeof why2, "row %llu col %zu: %s", (unsigned long long)row, c,
                   err ? err : w);
        free(err);
        err = NULL;
      }
    }
  }
  CHECK_MSG(bad_chunk == 0, "%s: %zu of %zu cells wrong via bcolz_chunk; first %s", fx,
            bad_chunk, cells, why1);
  CHECK_MSG(bad_atom == 0, "%s: %zu of %zu cells wrong via bcolz_row_atom; first %s",
            fx, bad_atom, cells, why2);
  for (size_t c = 0; c < nc; c++) ds_buf_free(&cc[c].buf);
  free(cc);
  ds_buf_free(&atom);
  ds_arena_free(&a);

  for (size_t c = 0; c < nc; c++) {
    json_t *st = json_object_get(json_array_get(cols, c), "stats");
    if (st) check_stats(t, c, st, fx);
  }
  bcolz_close(t);
  json_decref(x);
}

static int cmp_str(const void *a, const void *b) {
  return strcmp(*(char *const *)a, *(char *const *)b);
}

static void check_all_fixtures(void) {
  DIR *d = opendir(FIX);
  CHECK(d != NULL);
  if (!d) return;
  char *names[256];
  size_t n = 0;
  struct dirent *de;
  while ((de = readdir(d)) && n < 256) {
    if (de->d_name[0] == '.' || !strcmp(de->d_name, "expected")) continue;
    char p[512];
    struct stat st;
    snprintf(p, sizeof p, FIX "%s", de->d_name);
    if (stat(p, &st) || !S_ISDIR(st.st_mode)) continue;
    names[n++] = strdup(de->d_name);
  }
  closedir(d);
  qsort(names, n, sizeof *names, cmp_str);
  CHECK_MSG(n >= 40, "found %zu fixtures", n);
  for (size_t i = 0; i < n; i++) {
    check_fixture(names[i]);
    free(names[i]);
  }
}

/* ------------------------------------------------------ crafted damage */

static void sh(const char *fmt, ...) {
  char cmd[2048];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(cmd, sizeof cmd, fmt, ap);
  va_end(ap);
  int rc = system(cmd);
  CHECK_MSG(rc == 0, "shell: %s", cmd);
}

/* Fresh writable copy of a fixture as tmp_dir/<as>; returns its path. */
static const char *copy_fixture(const char *fx, const char *as) {
  static char p[512];
  snprintf(p, sizeof p, "%s/%s", tmp_dir, as);
  sh("rm -rf '%s' && cp -r " FIX "%s '%s' && chmod -R u+w '%s'", p, fx, p, p);
  return p;
}

static void write_file(const char *dir, const char *rel, const char *text) {
  char p[600];
  snprintf(p, sizeof p, "%s/%s", dir, rel);
  FILE *f = fopen(p, "wb");
  CHECK_MSG(f != NULL, "write %s", p);
  if (!f) return;
  fputs(text, f);
  fclose(f);
}

static void patch_file(const char *dir, const char *rel, long off,
                       const void *bytes, size_t n) {
  char p[600];
  snprintf(p, sizeof p, "%s/%s", dir, rel);
  FILE *f = fopen(p, "r+b");
  CHECK_MSG(f != NULL, "patch %s", p);
  if (!f) return;
  fseek(f, off, SEEK_SET);
  fwrite(bytes, 1, n, f);
  fclose(f);
}

/* Open must fail with an error containing both needles. */
static void expect_open_error(const char *path, const char *n1,
                              const char *n2, const char *what) {
  bcolz_table *t = NULL;
  char *err = NULL;
  int rc = bcolz_open(path, &t, &err);
  CHECK_MSG(rc != 0 && err && strstr(err, n1) && (!n2 || strstr(err, n2)),
            "%s: open must fail naming '%s'/'%s': %s", what, n1, n2 ? n2 : "",
            err ? err : "(opened)");
  printf("    %s -> %s\n", what, err ? err : "");
  free(err);
  bcolz_close(t);
}

/* Chunk k of col 0 (and one row of it) must fail naming the file. */
static void expect_chunk_error(const char *path, uint64_t k, const char *n1,
                               const char *n2, const char *what) {
  bcolz_table *t = NULL;
  char *err = NULL;
  int rc = bcolz_open(path, &t, &err);
  CHECK_MSG(rc == 0, "%s: open: %s", what, err);
  free(err);
  err = NULL;
  if (rc) return;
  ds_buf b = {0};
  const uint8_t *p;
  uint64_t rows;
  rc = bcolz_chunk(t, 0, k, &b, &p, &rows, &err);
  CHECK_MSG(rc != 0 && err && strstr(err, n1) && (!n2 || strstr(err, n2)),
            "%s: chunk %llu must fail naming '%s'/'%s': %s", what,
            (unsigned long long)k, n1, n2 ? n2 : "", err ? err : "(ok)");
  printf("    %s -> %s\n", what, err ? err : "");
  free(err);
  err = NULL;
  uint64_t row = bcolz_col_chunk_first(t, 0, k);
  rc = bcolz_row_atom(t, 0, row, &b, &err);
  CHECK_MSG(rc != 0 && err && strstr(err, n1), "%s: row %llu must fail: %s",
            what, (unsigned long long)row, err ? err : "(ok)");
  free(err);
  err = NULL;
  bcolz_stats s;
  rc = bcolz_column_stats(t, 0, &s, &err);
  CHECK_MSG(rc != 0 && err && strstr(err, n1), "%s: stats must fail: %s",
            what, err ? err : "(ok)");
  free(err);
  bcolz_stats_free(&s);
  ds_buf_free(&b);
  bcolz_close(t);
}

static void check_damage(void) {
  const char *p;

  p = copy_fixture("carray_int32", "bad_magic");
  patch_file(p, "data/__0.blp", 0, "XXXX", 4);
  expect_chunk_error(p, 0, "data/__0.blp", "magic", "bad blpk magic");

  p = copy_fixture("carray_int32", "bad_nchunks");
  patch_file(p, "data/__1.blp", 8, "\x02", 1);
  expect_chunk_error(p, 1, "data/__1.blp", "nchunks", "blpk nchunks 2");

  p = copy_fixture("carray_int32", "bad_blosc_version");
  patch_file(p, "data/__0.blp", 16, "\x07", 1);
  expect_chunk_error(p, 0, "data/__0.blp", "version", "Blosc version 7");

  p = copy_fixture("carray_int32", "truncated");
  {
    char f[600];
    snprintf(f, sizeof f, "%s/data/__0.blp", p);
    struct stat st;
    stat(f, &st);
    CHECK(truncate(f, st.st_size - 10) == 0);
  }
  expect_chunk_error(p, 0, "data/__0.blp", "compressed bytes", "truncated chunk");

  p = copy_fixture("carray_int32", "tiny");
  write_file(p, "data/__0.blp", "blpk");
  expect_chunk_error(p, 0, "data/__0.blp", "too short", "4-byte chunk file");

  p = copy_fixture("carray_int32", "big_cbytes");
  patch_file(p, "data/__0.blp", 16 + 12, "\xff\xff\x00\x00", 4);
  expect_chunk_error(p, 0, "data/__0.blp", NULL, "cbytes larger than the file");

  p = copy_fixture("carray_int32", "bad_nbytes_hdr");
  patch_file(p, "data/__0.blp", 16 + 4, "\x00\x00\x00\x7f", 4);
  expect_chunk_error(p, 0, "data/__0.blp", NULL, "Blosc nbytes 2 GB");

  /* full chunk that holds the leftover's rows */
  p = copy_fixture("carray_int32", "short_full");
  sh("cp '%s/data/__1.blp' '%s/data/__0.blp'", p, p);
  expect_chunk_error(p, 0, "data/__0.blp", "must hold", "short full chunk");

  /* leftover chunk holding fewer rows than needed */
  p = copy_fixture("carray_zstd", "short_leftover");
  write_file(p, "meta/sizes", "{\"shape\": [50030]}\n");
  expect_chunk_error(p, 2, "data/__2.blp", "at least", "short leftover");

  /* leftover holding more rows than needed: fine (prefix) */
  p = copy_fixture("carray_zstd", "long_leftover");
  write_file(p, "meta/sizes", "{\"shape\": [50000]}\n");
  {
    bcolz_table *t = NULL;
    char *err = NULL;
    ds_buf b = {0};
    const uint8_t *q;
    uint64_t rows = 0;
    int rc = bcolz_open(p, &t, &err) || bcolz_chunk(t, 0, 2, &b, &q, &rows, &err);
    CHECK_MSG(rc == 0 && rows == 10000 && b.len == 40000,
              "long leftover prefix: %s", err);
    free(err);
    ds_buf_free(&b);
    bcolz_close(t);
  }

  p = copy_fixture("carray_int32", "missing_chunk");
  sh("rm '%s/data/__1.blp'", p);
  expect_chunk_error(p, 1, "data/__1.blp", "not found", "missing chunk file");

  p = copy_fixture("carray_int32", "corrupt_payload");
  {
    /* scribble over compressed data: error or garbage, never a crash */
    uint8_t junk[64];
    for (int i = 0; i < 64; i++) junk[i] = (uint8_t)(i * 37 + 11);
    patch_file(p, "data/__0.blp", 100, junk, sizeof junk);
    bcolz_table *t = NULL;
    char *err = NULL;
    ds_buf b = {0};
    const uint8_t *q;
    uint64_t rows;
    if (bcolz_open(p, &t, &err) == 0) {
      int rc = bcolz_chunk(t, 0, 0, &b, &q, &rows, &err);
      check_note("    corrupt payload -> %s\n", rc ? err : "(decoded)");
      CHECK(rc == 0 || strstr(err, "data/__0.blp"));
      free(err);
      err = NULL;
      rc = bcolz_row_atom(t, 0, 40000, &b, &err);
      CHECK(rc == 0 || strstr(err, "data/__0.blp"));
    }
    free(err);
    ds_buf_free(&b);
    bcolz_close(t);
  }

  p = copy_fixture("ctable_colorder", "diff_len");
  write_file(p, "a/meta/sizes", "{\"shape\": [299]}\n");
  expect_open_error(p, "'a' has 299 rows", "300", "columns of different lengths");

  p = copy_fixture("ctable_colorder", "missing_col");
  sh("rm -rf '%s/a'", p);
  expect_open_error(p, "'a'", "no directory", "listed column missing");

  p = copy_fixture("carray_int32", "bad_storage_json");
  write_file(p, "meta/storage", "{\"dtype\": \"int32\", ");
  expect_open_error(p, "meta/storage", "invalid JSON", "unparseable meta/storage");

  p = copy_fixture("carray_int32", "empty_storage");
  write_file(p, "meta/storage", "");
  expect_open_error(p, "meta/storage", "empty file", "0-byte meta/storage");

  p = copy_fixture("carray_int32", "bad_sizes_json");
  write_file(p, "meta/sizes", "[1, 2");
  expect_open_error(p, "meta/sizes", "invalid", "unparseable meta/sizes");

  p = copy_fixture("carray_int32", "no_sizes");
  sh("rm '%s/meta/sizes'", p);
  expect_open_error(p, "no_sizes", "meta/sizes", "missing meta/sizes");

  p = copy_fixture("carray_int32", "sizes_no_shape");
  write_file(p, "meta/sizes", "{\"nbytes\": 5}");
  expect_open_error(p, "meta/sizes", "shape", "meta/sizes without shape");

  p = copy_fixture("carray_int32", "bad_chunklen");
  write_file(p, "meta/storage", "{\"dtype\": \"int32\", \"chunklen\": 0}");
  expect_open_error(p, "meta/storage", "chunklen", "chunklen 0");

  p = copy_fixture("carray_int32", "bad_attrs");
  write_file(p, "__attrs__", "{oops");
  expect_open_error(p, "__attrs__", "invalid JSON", "unparseable __attrs__");

  p = copy_fixture("carray_int32", "no_attrs");
  sh("rm '%s/__attrs__'", p);
  {
    bcolz_table *t = NULL;
    char *err = NULL;
    int rc = bcolz_open(p, &t, &err);
    CHECK_MSG(rc == 0 && !strcmp(bcolz_attrs_json(t), "{}"), "missing attrs: %s", err);
    free(err);
    bcolz_close(t);
  }

  p = copy_fixture("ctable_colorder", "bad_rootdirs");
  write_file(p, "__rootdirs__", "{\"names\": [\"../x\"]}");
  expect_open_error(p, "__rootdirs__", "name", "path in __rootdirs__");
  write_file(p, "__rootdirs__", "nope");
  expect_open_error(p, "__rootdirs__", "invalid JSON", "unparseable __rootdirs__");

  sh("mkdir -p '%s/notbcolz'", tmp_dir);
  {
    char q[600];
    snprintf(q, sizeof q, "%s/notbcolz", tmp_dir);
    expect_open_error(q, "not a bcolz directory", NULL, "empty directory");
    snprintf(q, sizeof q, "%s/does_not_exist", tmp_dir);
    expect_open_error(q, "does_not_exist", "cannot open", "missing path");
  }

  /* dtype grammar: accepted spellings and refused dtypes */
  static const struct { const char *meta, *str; } ok_dt[] = {
      {"int32", "<i4"}, {"<i4", "<i4"}, {"i4", "<i4"}, {"=i4", "<i4"},
      {">i8", ">i8"}, {"|i1", "|i1"}, {"int8", "|i1"}, {"uint64", "<u8"},
      {">u2", ">u2"}, {"bool", "|b1"}, {"|b1", "|b1"}, {"?", "|b1"},
      {"float16", "<f2"}, {"<f2", "<f2"}, {">f4", ">f4"}, {"S8", "|S8"},
      {"|S1", "|S1"}, {"U6", "<U6"}, {">U3", ">U3"}, {"<U1", "<U1"},
      {"datetime64[ns]", "<M8[ns]"}, {"datetime64[Y]", "<M8[Y]"},
      {"datetime64[10s]", "<M8[10s]"}, {">M8[us]", ">M8[us]"},
      {"<M8[as]", "<M8[as]"}, {"timedelta64[W]", "<m8[W]"},
      {"<m8[ps]", "<m8[ps]"}, {"object", "|O"}, {"|O", "|O"}};
  p = copy_fixture("carray_empty", "dtypes");
  for (size_t i = 0; i < sizeof ok_dt / sizeof ok_dt[0]; i++) {
    char s[256];
    snprintf(s, sizeof s, "{\"dtype\": \"%s\", \"chunklen\": 10}", ok_dt[i].meta);
    write_file(p, "meta/storage", s);
    bcolz_table *t = NULL;
    char *err = NULL;
    int rc = bcolz_open(p, &t, &err);
    CHECK_MSG(rc == 0 && !strcmp(bcolz_col_dtype(t, 0)->str, ok_dt[i].str),
              "dtype %s -> %s (%s)", ok_dt[i].meta, rc ? "error" : bcolz_col_dtype(t, 0)->str,
              err ? err : "");
    free(err);
    bcolz_close(t);
  }
  static const char *const bad_dt[] = {
      "complex128", "<c16", "|V8", "V8", "datetime64", "<M8", "float128",
      "<f16", "[('a', '<i4'), ('b', '<f8')]", "S0", "U0", "i3", "int", "",
      "datetime64[xx]", "<M4[ns]", "float", "<f8 ", "str"};
  for (size_t i = 0; i < sizeof bad_dt / sizeof bad_dt[0]; i++) {
    char s[256];
    snprintf(s, sizeof s, "{\"dtype\": \"%s\", \"chunklen\": 10}", bad_dt[i]);
    write_file(p, "meta/storage", s);
    char what[128];
    snprintf(what, sizeof what, "unsupported dtype '%s'", bad_dt[i]);
    expect_open_error(p, "meta/storage", "unsupported dtype", what);
  }
}

/* ------------------------------------------------------- direct cells */

static void check_cells(void) {
  ds_arena a = {0};
  char *err = NULL;
  ds_value v;
  bcolz_dtype dt;
  memset(&dt, 0, sizeof dt);
  /* S bytes flag */
  dt.kind = 'S', dt.byteorder = '|', dt.itemsize = 4, dt.nelem = 1, dt.atom = 4;
  dt.unit = -1;
  CHECK(bcolz_cell_value(&dt, (const uint8_t *)"ab\0\0", 4, 0, &a, &v, &err) == 0 &&
        v.type == DS_V_TEXT && v.u.s.n == 2);
  CHECK(bcolz_cell_value(&dt, (const uint8_t *)"ab\0\0", 4, BCOLZ_BYTES_BLOB, &a, &v,
                         &err) == 0 &&
        v.type == DS_V_BYTES && v.u.s.n == 2);
  /* invalid UCS-4 */
  dt.kind = 'U', dt.byteorder = '<', dt.itemsize = 4, dt.atom = 4;
  int rc = bcolz_cell_value(&dt, (const uint8_t *)"\x00\xd8\x00\x00", 4, 0, &a, &v, &err);
  CHECK_MSG(rc != 0 && err && strstr(err, "0xD800"), "surrogate: %s", err);
  free(err);
  err = NULL;
  /* wrong atom length */
  rc = bcolz_cell_value(&dt, (const uint8_t *)"abcdefgh", 8, 0, &a, &v, &err);
  CHECK(rc != 0);
  free(err);
  ds_arena_free(&a);
}

/* ------------------------------------------------------------- fuzzer
 * path: chunk validation on arbitrary bytes */
static void check_chunk_bytes(void) {
  ds_buf b = {0};
  char *err = NULL;
  uint8_t buf[64] = "blpk\x01\0\0\0\x01\0\0\0\0\0\0\0";
  int rc = bcolz_decode_chunk_file(buf, sizeof buf, "mem", &b, &err);
  CHECK_MSG(rc != 0 && strstr(err, "mem"), "zero blosc header: %s", err);
  free(err);
  ds_buf_free(&b);
}

static int stop_now(void *ctx) {
  (void)ctx;
  return 1;
}

/* Column statistics give up when a core/cancel.h scope asks to stop, and
 * a chunk larger than the buffer's max (max_value_bytes) is an error. */
static void check_cancel_and_cap(void) {
  bcolz_table *t;
  char *err = NULL;
  if (!CHECK(bcolz_open(FIX "carray_int32", &t, &err) == 0)) {
    check_note("    %s\n", err);
    free(err);
    return;
  }
  bcolz_stats s;
  ds_cancel_scope sc;
  ds_cancel_begin(&sc, stop_now, NULL);
  sc.next_ns = 1; /* due at once */
  CHECK(bcolz_column_stats(t, 0, &s, &err) == -1);
  CHECK_STR(err, "interrupted");
  CHECK(ds_cancel_end(&sc) == 1);
  bcolz_stats_free(&s);
  CHECK(bcolz_column_stats(t, 0, &s, &err) == 0 && s.count == bcolz_nrows(t));
  bcolz_stats_free(&s);
  ds_buf b = {0};
  const uint8_t *p;
  uint64_t rows;
  CHECK(bcolz_chunk(t, 0, 0, &b, &p, &rows, &err) == 0);
  size_t whole = b.len;
  ds_buf_free(&b);
  b.max = whole - 1;
  CHECK(bcolz_chunk(t, 0, 0, &b, &p, &rows, &err) == -1 && b.cap == 0);
  CHECK_CONTAINS(err, "__0.blp: chunk of ");
  CHECK_CONTAINS(err, "bytes is more than max_value_bytes=");
  CHECK(bcolz_row_atom(t, 0, 1, &b, &err) == 0 && b.len == 4); /* one row fits */
  b.max = 3;
  CHECK(bcolz_row_atom(t, 0, 1, &b, &err) == -1);
  CHECK_CONTAINS(err, "row of 4 bytes is more than max_value_bytes=3");
  ds_buf_free(&b);
  free(err);
  bcolz_close(t);
}

int main(void) {
  snprintf(tmp_dir, sizeof tmp_dir, "/tmp/test_bcolz_XXXXXX");
  if (!mkdtemp(tmp_dir)) {
    perror("mkdtemp");
    return 2;
  }
  check_all_fixtures();
  check_damage();
  check_cells();
  check_chunk_bytes();
  check_cancel_and_cap();
  sh("rm -rf '%s'", tmp_dir);
  return check_exit();
}
