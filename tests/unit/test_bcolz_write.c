/* test_bcolz_write.c - unit tests of formats/bcolz/bcolz_writer.c and
 * bcolz_cell_write.c:
 *   1. every upstream bcolz fixture is read with our reader and written
 *      again with its own dtypes, chunklens, expectedlen and cparams; the
 *      copy reads back with the same value in every cell, and where the
 *      fixture was written by the same c-blosc (Debian's 1.21) with plain
 *      settings, the chunk files, meta/storage and meta/sizes are byte for
 *      byte upstream's;
 *   2. column types (numpy strings, SQL names, shapes) and names;
 *   3. values that do not fit: errors name the row and the column, and
 *      the row is not added; float16 rounding; ISO-8601 at every unit;
 *   4. TEXT/BLOB columns of unknown width, object columns, upstream's
 *      default chunklen; truncation back into written chunks;
 *   5. numpy and python3-blosc read a table of every kind of column
 *      (tests/unit/check_written.py), as bcolz's own layout says. */
#include <dirent.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "check.h"
#include "fixture.h"
#include "core/npy.h"
#include "formats/bcolz/bcolz.h"
#include "formats/bcolz/bcolz_cell_fast.h"
#include "formats/bcolz/bcolz_writer.h"

#define BFIX "tests/fixtures/upstream/bcolz/"

static char g_tmp[] = "/tmp/ds_bcolz_write_XXXXXX";

/* ------------------------------------------------------------ helpers */

/* The last chunk read of one column (reading row by row through
 * bcolz_row_atom would inflate a Blosc block per row). */
typedef struct chunk_cache {
  const bcolz_table *t;
  size_t col;
  uint64_t k;
  ds_buf buf;
  const uint8_t *p;
  uint64_t rows;
  int valid;
} chunk_cache;

/* Value of cell (col, row) of t into *v (in a). */
static int cell_value(bcolz_table *t, size_t col, uint64_t row,
                      chunk_cache *cc, ds_arena *a, ds_value *v, char **err) {
  const bcolz_dtype *dt = bcolz_col_dtype(t, col);
  uint64_t k = bcolz_col_chunk_of(t, col, row);
  if (!cc->valid || cc->t != t || cc->col != col || cc->k != k) {
    cc->valid = 0;
    if (bcolz_chunk(t, col, k, &cc->buf, &cc->p, &cc->rows, err)) return -1;
    cc->t = t, cc->col = col, cc->k = k, cc->valid = 1;
  }
  uint64_t i = row - bcolz_col_chunk_first(t, col, k);
  size_t n = dt->kind == 'O' ? cc->buf.len : (size_t)dt->atom;
  return bcolz_cell_value(dt, cc->p + (dt->kind == 'O' ? 0 : i * dt->atom), n,
                          BCOLZ_BYTES_BLOB, a, v, err);
}

/* JSON of cell (col, row) of t; "<error: ...>" when it does not read. */
static char *cell_json(bcolz_table *t, size_t col, uint64_t row,
                       chunk_cache *cc, ds_arena *a) {
  ds_buf j = {0};
  char *err = NULL;
  ds_value v;
  ds_arena_reset(a);
  if (cell_value(t, col, row, cc, a, &v, &err) ||
      ds_value_json(&j, &v, &err) || ds_buf_append(&j, "", 1)) {
    ds_buf_free(&j);
    char *e = ds_strf("<error: %s>", err ? err : "oom");
    free(err);
    return e;
  }
  return (char *)j.data;
}

/* The source's storage JSON value of `key` as an integer (-1 if absent). */
static long long storage_int(const char *coldir, const char *key) {
  char p[512];
  snprintf(p, sizeof p, "%s/meta/storage", coldir);
  size_t n;
  char *s = (char *)fx_slurp(p, &n), *q;
  long long v = -1;
  char pat[64];
  snprintf(pat, sizeof pat, "\"%s\": ", key);
  if (s) {
    s = realloc(s, n + 1);
    s[n] = 0;
    if ((q = strstr(s, pat))) v = atoll(q + strlen(pat));
  }
  free(s);
  return v;
}

/* ------------------------------------------------------------ part 1 */

static void copy_fixture(const char *name) {
  char src[256], *err = NULL;
  snprintf(src, sizeof src, BFIX "%s", name);
  bcolz_table *t;
  if (bcolz_open(src, &t, &err)) { /* carray_structured: upstream can't either */
    free(err);
    return;
  }
  size_t nc = bcolz_ncols(t);
  const char **names = calloc(nc, sizeof *names);
  bcolz_wtype *types = calloc(nc, sizeof *types);
  bcolz_write_options o;
  bcolz_write_defaults(&o);
  o.sync = 0;
  int plain = 1; /* cparams all upstream's defaults and alike */
  int ok = 1;
  for (size_t c = 0; c < nc; c++) {
    names[c] = bcolz_col_name(t, c);
    const bcolz_dtype *dt = bcolz_col_dtype(t, c);
    ds_buf spec = {0};
    if (dt->ndim) {
      ds_buf_puts(&spec, "(");
      for (int i = 0; i < dt->ndim; i++)
        ds_buf_printf(&spec, "%llu,", (unsigned long long)dt->shape[i]);
      ds_buf_puts(&spec, ")");
    }
    ds_buf_puts(&spec, dt->kind == 'O' ? "object" : dt->str);
    ds_buf_append(&spec, "", 1);
    if (bcolz_write_parse_type((char *)spec.data, &types[c], &err)) {
      CHECK_MSG(0, "%s: type '%s': %s", name, (char *)spec.data, err);
      free(err);
      err = NULL;
      ok = 0;
    }
    ds_buf_free(&spec);
    types[c].chunklen = bcolz_col_chunklen(t, c);
    long long el = storage_int(bcolz_col_path(t, c), "expectedlen");
    if (el >= 0) o.expectedlen = (uint64_t)el;
    bcolz_cparams cp;
    if (bcolz_col_cparams(t, c, &cp, &err) == 0) {
      if (c == 0) {
        o.clevel = cp.clevel;
        o.shuffle = cp.shuffle;
        snprintf(o.cname, sizeof o.cname, "%s", cp.cname);
      } else if (cp.clevel != o.clevel || cp.shuffle != o.shuffle ||
                 strcmp(cp.cname, o.cname)) {
        plain = 0;
      }
      if (cp.quantize) plain = 0;
    }
    free(err);
    err = NULL;
  }
  char *dir = fx_new_dir(g_tmp);
  bcolz_writer *w = NULL;
  if (ok && bcolz_writer_open(dir, !bcolz_is_ctable(t), nc, names, types, &o,
                              &w, &err)) {
    CHECK_MSG(0, "%s: open writer: %s", name, err);
    ok = 0;
  }
  ds_arena a = {0};
  ds_value *row = calloc(nc, sizeof *row);
  chunk_cache *caches = calloc(nc, sizeof *caches);
  uint64_t n = bcolz_nrows(t), refused = 0;
  for (uint64_t r = 0; ok && r < n; r++) {
    ds_arena_reset(&a);
    for (size_t c = 0; ok && c < nc; c++) {
      if (cell_value(t, c, r, &caches[c], &a, &row[c], &err)) {
        CHECK_MSG(0, "%s: read row %llu: %s", name, (unsigned long long)r, err);
        ok = 0;
      }
    }
    if (ok && bcolz_writer_add(w, row, &err)) {
      if (refused++ < 2) check_note("    %s row %llu: %s\n", name,
                                (unsigned long long)r, err);
      free(err);
      err = NULL;
    }
  }
  if (ok && bcolz_writer_finish(w, &err)) {
    CHECK_MSG(0, "%s: finish: %s", name, err);
    ok = 0;
  }
  free(err);
  err = NULL;
  bcolz_writer_free(w);
  for (size_t c = 0; c < nc; c++) ds_buf_free(&caches[c].buf);
  free(caches);
  free(row);
  CHECK_MSG(ok && refused == 0, "%s: %llu rows copied (%llu refused)", name,
            (unsigned long long)n, (unsigned long long)refused);
  bcolz_table *u = NULL;
  if (ok && bcolz_open(dir, &u, &err)) {
    CHECK_MSG(0, "%s: copy opens: %s", name, err);
    free(err);
    ok = 0;
  }
  if (ok) {
    uint64_t same = 0, diff = 0;
    CHECK_MSG(bcolz_nrows(u) == n && bcolz_ncols(u) == nc &&
                  bcolz_is_ctable(u) == bcolz_is_ctable(t),
              "%s: shape", name);
    for (size_t c = 0; c < nc && bcolz_ncols(u) == nc; c++) {
      CHECK_MSG(strcmp(bcolz_col_name(u, c), names[c]) == 0 &&
                    strcmp(bcolz_col_dtype(u, c)->str,
                           bcolz_col_dtype(t, c)->str) == 0,
                "%s: column %zu name and dtype", name, c);
      chunk_cache c1 = {0}, c2 = {0};
      for (uint64_t r = 0; r < n; r++) {
        char *x = cell_json(t, c, r, &c1, &a), *y = cell_json(u, c, r, &c2, &a);
        if (strcmp(x, y) == 0) same++;
        else if (diff++ < 3)
          check_note("    %s col %zu row %llu: %.120s vs %.120s\n", name, c,
                 (unsigned long long)r, x, y);
        free(x);
        free(y);
      }
      ds_buf_free(&c1.buf);
      ds_buf_free(&c2.buf);
    }
    CHECK_MSG(diff == 0, "%s: %llu cells read back equal (%llu differ)", name,
              (unsigned long long)same, (unsigned long long)diff);
    /* byte for byte with upstream: same c-blosc, plain settings */
    /* (not for files upstream changed after creating them: resized,
     * trimmed, appended; nor pickles: CPython's memo is not ours; nor
     * zstd: upstream's blosc_compress reuses one zstd context from chunk
     * to chunk, blosc_compress_ctx starts a new one, and zstd may then
     * choose other matches for a later chunk, which decodes the same) */
    if (plain && !strstr(name, "blosc1143") && !strstr(name, "legacy") &&
        !strstr(name, "resized") && !strstr(name, "trimmed") &&
        !strstr(name, "appended") && !strstr(name, "object") &&
        strcmp(o.cname, "zstd")) {
      uint64_t files = 0, differ = 0;
      for (size_t c = 0; c < nc; c++) {
        const char *sc = bcolz_col_path(t, c), *uc = bcolz_col_path(u, c);
        char p1[600], p2[600];
        for (uint64_t k = 0; k < bcolz_col_nchunks(u, c); k++) {
          snprintf(p1, sizeof p1, "%s/data/__%llu.blp", sc, (unsigned long long)k);
          snprintf(p2, sizeof p2, "%s/data/__%llu.blp", uc, (unsigned long long)k);
          files++;
          if (!fx_same_file(p1, p2) && differ++ < 2)
            check_note("    %s differs from upstream\n", p2);
        }
        static const char *const meta[] = {"meta/storage", "meta/sizes"};
        for (int i = 0; i < 2; i++) {
          snprintf(p1, sizeof p1, "%s/%s", sc, meta[i]);
          snprintf(p2, sizeof p2, "%s/%s", uc, meta[i]);
          files++;
          if (!fx_same_file(p1, p2) && differ++ < 2)
            check_note("    %s differs from upstream\n", p2);
        }
      }
      CHECK_MSG(differ == 0, "%s: %llu chunk and meta files as upstream's "
                "(%llu differ)", name, (unsigned long long)files,
                (unsigned long long)differ);
    }
  }
  bcolz_close(u);
  ds_arena_free(&a);
  bcolz_close(t);
  free(names);
  free(types);
  free(dir);
}

/* ------------------------------------------------------------ part 2 */

static void test_types(void) {
  static const struct { const char *spec; const char *str; int ndim; int unk; }
      ok[] = {{"i4", "<i4", 0, 0},       {"int64", "<i8", 0, 0},
              {"INTEGER", "<i8", 0, 0},  {"real", "<f8", 0, 0},
              {"TEXT", "<U1", 0, 1},     {"BLOB", "|S1", 0, 1},
              {"S16", "|S16", 0, 0},     {"U8", "<U8", 0, 0},
              {"M8[ns]", "<M8[ns]", 0, 0}, {"m8[10s]", "<m8[10s]", 0, 0},
              {">f8", ">f8", 0, 0},      {"(3,)f4", "<f4", 1, 0},
              {"(2, 2)int16", "<i2", 2, 0}, {"bool", "|b1", 0, 0},
              {"object", "|O", 0, 0},    {"f2", "<f2", 0, 0}};
  for (size_t i = 0; i < sizeof ok / sizeof ok[0]; i++) {
    bcolz_wtype t;
    char *err = NULL;
    int rc = bcolz_write_parse_type(ok[i].spec, &t, &err);
    CHECK_MSG(rc == 0 && strcmp(t.dt.str, ok[i].str) == 0 &&
                  t.dt.ndim == ok[i].ndim && t.width_unknown == ok[i].unk,
              "type %s -> %s (got %s %s)", ok[i].spec, ok[i].str,
              rc ? "-" : t.dt.str, err ? err : "");
    free(err);
  }
  static const char *const bad[] = {"c16", "V8", "M8", "[('a','<i4')]",
                                    "(3,)object", "i3", "nonsense", ""};
  for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
    bcolz_wtype t;
    char *err = NULL;
    CHECK_MSG(bcolz_write_parse_type(bad[i], &t, &err) != 0 && err,
              "type '%s' refused", bad[i]);
    free(err);
  }
  static const char *const names_ok[] = {"id", "_private", "h\xc3\xa9llo", "x1"};
  static const char *const names_bad[] = {"1x", "a b", "class", "a/b", ""};
  for (size_t i = 0; i < 4; i++) {
    char *err = NULL;
    CHECK_MSG(bcolz_write_check_name(names_ok[i], &err) == 0, "name %s", names_ok[i]);
    free(err);
  }
  for (size_t i = 0; i < 5; i++) {
    char *err = NULL;
    CHECK_MSG(bcolz_write_check_name(names_bad[i], &err) != 0, "name '%s' refused",
              names_bad[i]);
    free(err);
  }
}

/* ------------------------------------------------------------ part 3 */

/* Encode v as spec; *out gets the first 8 bytes; returns rc. */
static int enc(const char *spec, ds_value v, uint8_t out[16], char **err) {
  bcolz_wtype t;
  memset(out, 0, 16);
  if (bcolz_write_parse_type(spec, &t, err)) return -1;
  return bcolz_cell_encode(&t.dt, &v, out, NULL, err);
}

static int64_t le64(const uint8_t *p) {
  uint64_t u = 0;
  for (int i = 7; i >= 0; i--) u = u << 8 | p[i];
  return (int64_t)u;
}

static void test_values(void) {
  uint8_t b[16];
  char *err = NULL;
  ds_value i300 = {DS_V_INT, {.i = 300}}, im1 = {DS_V_INT, {.i = -1}},
           nul = {DS_V_NULL, {0}}, f = {DS_V_FLOAT, {.f = 2.5}};
  CHECK(enc("i8", i300, b, &err) == 0 && le64(b) == 300);
  CHECK(enc("i1", i300, b, &err) != 0 && strstr(err, "does not fit"));
  free(err), err = NULL;
  CHECK(enc("u4", im1, b, &err) != 0);
  free(err), err = NULL;
  CHECK(enc(">i2", i300, b, &err) == 0 && b[0] == 1 && b[1] == 44);
  CHECK(enc("i4", f, b, &err) != 0 && strstr(err, "not an integer"));
  free(err), err = NULL;
  CHECK(enc("i4", nul, b, &err) != 0 && strstr(err, "NULL"));
  free(err), err = NULL;
  ds_value big = {DS_V_TEXT, {.s = {(const uint8_t *)"18446744073709551615", 20}}};
  CHECK(enc("u8", big, b, &err) == 0 && (uint64_t)le64(b) == UINT64_MAX);
  CHECK(enc("i8", big, b, &err) != 0);
  free(err), err = NULL;
  CHECK(enc("f8", nul, b, &err) == 0 && isnan(*(double *)b));
  ds_value huge = {DS_V_FLOAT, {.f = 1e300}};
  CHECK(enc("f4", huge, b, &err) != 0 && strstr(err, "does not fit"));
  free(err), err = NULL;
  /* float16: round to nearest even, overflow, subnormals */
  static const struct { double d; uint16_t h; } halves[] = {
      {1.0, 0x3c00}, {-2.0, 0xc000}, {65504.0, 0x7bff}, {1.0009765625, 0x3c01},
      {1.00048828125, 0x3c00}, {1.00146484375, 0x3c02}, {5.960464477539063e-08, 0x0001},
      {6.103515625e-05, 0x0400}, {0.0, 0x0000}, {1.0 / 0.0, 0x7c00}};
  for (size_t i = 0; i < sizeof halves / sizeof halves[0]; i++) {
    ds_value v = {DS_V_FLOAT, {.f = halves[i].d}};
    int rc = enc("f2", v, b, &err);
    CHECK_MSG(rc == 0 && (b[0] | b[1] << 8) == halves[i].h, "half %.17g -> %04x (got %02x%02x)",
              halves[i].d, halves[i].h, b[1], b[0]);
  }
  ds_value h70k = {DS_V_FLOAT, {.f = 70000.0}};
  CHECK(enc("f2", h70k, b, &err) != 0);
  free(err), err = NULL;
  /* text */
  ds_value t = {DS_V_TEXT, {.s = {(const uint8_t *)"h\xc3\xa9\xf0\x9f\x98\x80", 7}}};
  CHECK(enc("U3", t, b, &err) == 0 && b[0] == 'h' && b[4] == 0xe9 && b[8] == 0x00 &&
        b[9] == 0xf6 && b[10] == 0x01);
  CHECK(enc("U2", t, b, &err) != 0 && strstr(err, "longer"));
  free(err), err = NULL;
  CHECK(enc("S7", t, b, &err) == 0 && memcmp(b, t.u.s.p, 7) == 0);
  CHECK(enc("S6", t, b, &err) != 0);
  free(err), err = NULL;
  /* ISO-8601 at each unit */
  static const struct { const char *spec, *iso; int64_t ticks; int ok; } iso[] = {
      {"M8[ns]", "1970-01-01T00:00:01", 1000000000, 1},
      {"M8[ns]", "2021-03-04T05:06:07.123456789", 1614834367123456789LL, 1},
      {"M8[us]", "1969-12-31T23:59:59.999999", -1, 1},
      {"M8[D]", "2024-02-29", 19782, 1},
      {"M8[D]", "2023-02-29", 0, 0},
      {"M8[D]", "2024-02-29T01", 0, 0},
      {"M8[Y]", "2021", 51, 1},
      {"M8[M]", "2021-03", 614, 1},
      {"M8[W]", "1970-01-08", 1, 1},
      {"M8[h]", "1970-01-02T03", 27, 1},
      {"M8[m]", "1970-01-01T00:02", 2, 1},
      {"M8[10s]", "1970-01-01T00:00:20", 2, 1},
      {"M8[10s]", "1970-01-01T00:00:25", 0, 0},
      {"M8[ms]", "1970-01-01T00:00:00.5Z", 500, 1},
      {"M8[s]", "yesterday", 0, 0}};
  for (size_t i = 0; i < sizeof iso / sizeof iso[0]; i++) {
    ds_value v = {DS_V_TEXT, {.s = {(const uint8_t *)iso[i].iso, strlen(iso[i].iso)}}};
    int rc = enc(iso[i].spec, v, b, &err);
    CHECK_MSG(iso[i].ok ? rc == 0 && le64(b) == iso[i].ticks : rc != 0,
              "%s '%s' -> %lld (got %lld, %s)", iso[i].spec, iso[i].iso,
              (long long)iso[i].ticks, (long long)le64(b), err ? err : "");
    free(err), err = NULL;
  }
  CHECK(enc("M8[s]", nul, b, &err) == 0 && le64(b) == INT64_MIN);
  /* the row is refused whole, naming row and column */
  bcolz_wtype ty[2];
  bcolz_write_parse_type("i1", &ty[0], &err);
  bcolz_write_parse_type("U4", &ty[1], &err);
  const char *names[2] = {"small", "label"};
  bcolz_write_options o;
  bcolz_write_defaults(&o);
  o.sync = 0;
  char *dir = fx_new_dir(g_tmp);
  bcolz_writer *w;
  int ok = bcolz_writer_open(dir, 0, 2, names, ty, &o, &w, &err) == 0;
  ds_value r0[2] = {{DS_V_INT, {.i = 5}}, {DS_V_TEXT, {.s = {(const uint8_t *)"ok", 2}}}};
  ds_value r1[2] = {{DS_V_INT, {.i = 6}}, {DS_V_TEXT, {.s = {(const uint8_t *)"too long", 8}}}};
  ok = ok && bcolz_writer_add(w, r0, &err) == 0;
  int rc = bcolz_writer_add(w, r1, &err);
  CHECK_MSG(ok && rc != 0 && err && strstr(err, "row 1") && strstr(err, "'label'"),
            "error names row and column: %s", err ? err : "");
  free(err), err = NULL;
  CHECK(bcolz_writer_count(w) == 1);
  ok = bcolz_writer_add(w, r0, &err) == 0 && bcolz_writer_finish(w, &err) == 0;
  bcolz_writer_free(w);
  bcolz_table *tb = NULL;
  CHECK_MSG(ok && bcolz_open(dir, &tb, &err) == 0 && bcolz_nrows(tb) == 2,
            "refused row left out %s", err ? err : "");
  bcolz_close(tb);
  free(err);
  free(dir);
}

/* ------------------------------------------------------------ part 4 */

/* A table of (id int32, name TEXT, obj object) rows 0..n-1. */
static int add_rows(bcolz_writer *w, uint64_t from, uint64_t to) {
  char *err = NULL;
  for (uint64_t i = from; i < to; i++) {
    char s[40];
    int len = snprintf(s, sizeof s, "name %llu%s", (unsigned long long)i,
                       i % 7 ? "" : " \xc3\xa9t\xc3\xa9");
    ds_value kv[2] = {{DS_V_TEXT, {.s = {(const uint8_t *)"k", 1}}},
                      {DS_V_INT, {.i = (int64_t)i}}};
    ds_value row[3] = {{DS_V_INT, {.i = (int64_t)i}},
                       {DS_V_TEXT, {.s = {(const uint8_t *)s, (size_t)len}}},
                       {DS_V_MAP, {.list = {kv, 1}}}};
    if (bcolz_writer_add(w, row, &err)) {
      check_note("    row %llu: %s\n", (unsigned long long)i, err);
      free(err);
      return -1;
    }
  }
  return 0;
}

static int check_rows(const char *dir, uint64_t n, uint64_t chunklen) {
  bcolz_table *t;
  char *err = NULL;
  if (bcolz_open(dir, &t, &err)) {
    check_note("    %s\n", err);
    free(err);
    return 0;
  }
  ds_arena a = {0};
  chunk_cache cc = {0};
  int ok = bcolz_nrows(t) == n && bcolz_col_chunklen(t, 0) == chunklen;
  for (uint64_t i = 0; ok && i < n; i++) {
    char want[3][64];
    snprintf(want[0], 64, "%llu", (unsigned long long)i);
    snprintf(want[1], 64, "\"name %llu%s\"", (unsigned long long)i,
             i % 7 ? "" : " \xc3\xa9t\xc3\xa9");
    snprintf(want[2], 64, "{\"k\":%llu}", (unsigned long long)i);
    for (size_t c = 0; ok && c < 3; c++) {
      char *j = cell_json(t, c, i, &cc, &a);
      ok = strcmp(j, want[c]) == 0;
      if (!ok) check_note("    row %llu col %zu: %s want %s\n", (unsigned long long)i, c, j, want[c]);
      free(j);
    }
  }
  if (bcolz_nrows(t) != n)
    check_note("    %llu rows, want %llu\n", (unsigned long long)bcolz_nrows(t),
           (unsigned long long)n);
  ds_buf_free(&cc.buf);
  ds_arena_free(&a);
  bcolz_close(t);
  return ok;
}

static void test_stream(void) {
  bcolz_wtype ty[3];
  char *err = NULL;
  bcolz_write_parse_type("int32", &ty[0], &err);
  bcolz_write_parse_type("TEXT", &ty[1], &err);
  bcolz_write_parse_type("object", &ty[2], &err);
  const char *names[3] = {"id", "name", "obj"};
  bcolz_write_options o;
  bcolz_write_defaults(&o);
  o.sync = 0;
  o.chunklen = 1000;
  char *dir = fx_new_dir(g_tmp);
  bcolz_writer *w;
  int ok = bcolz_writer_open(dir, 0, 3, names, ty, &o, &w, &err) == 0 &&
           add_rows(w, 0, 4500) == 0 &&
           bcolz_writer_truncate(w, 2500, &err) == 0 && add_rows(w, 2500, 3000) == 0 &&
           bcolz_writer_truncate(w, 3000, &err) == 0 &&
           bcolz_writer_truncate(w, 2000, &err) == 0 && add_rows(w, 2000, 5321) == 0 &&
           bcolz_writer_finish(w, &err) == 0;
  bcolz_writer_free(w);
  CHECK_MSG(ok && check_rows(dir, 5321, 1000), "truncate and go on %s", err ? err : "");
  free(err), err = NULL;
  char p[300];
  snprintf(p, sizeof p, "%s/id/data/__5.blp", dir);
  CHECK(access(p, F_OK) == 0);
  snprintf(p, sizeof p, "%s/id/data/__6.blp", dir);
  CHECK(access(p, F_OK) != 0);
  snprintf(p, sizeof p, "%s/name/.values.tmp", dir);
  CHECK(access(p, F_OK) != 0);
  free(dir);
  /* upstream's default chunklen for expectedlen 1,000,000: int32 65536 */
  o.chunklen = 0;
  dir = fx_new_dir(g_tmp);
  ok = bcolz_writer_open(dir, 0, 3, names, ty, &o, &w, &err) == 0 &&
       add_rows(w, 0, 300) == 0 && bcolz_writer_truncate(w, 0, &err) == 0 &&
       add_rows(w, 0, 301) == 0 && bcolz_writer_finish(w, &err) == 0;
  bcolz_writer_free(w);
  CHECK_MSG(ok && check_rows(dir, 301, 65536), "default chunklen %s", err ? err : "");
  free(err);
  free(dir);
}

/* Row i of the window test: id i * 3 - 7 (int64), short "s<i>" (S6). */
static void window_row(uint64_t i, int64_t *id, char *s) {
  *id = (int64_t)i * 3 - 7;
  snprintf(s, 8, "s%llu", (unsigned long long)(i % 100000));
}

/* s as cell_json shows an S cell: base64 in quotes. */
static void quoted_base64(const char *s, char *out) {
  static const char b64[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
  size_t n = strlen(s), o = 0;
  out[o++] = '"';
  for (size_t i = 0; i < n; i += 3) {
    uint32_t v = (uint32_t)(uint8_t)s[i] << 16;
    if (i + 1 < n) v |= (uint32_t)(uint8_t)s[i + 1] << 8;
    if (i + 2 < n) v |= (uint8_t)s[i + 2];
    out[o++] = b64[v >> 18 & 63];
    out[o++] = b64[v >> 12 & 63];
    out[o++] = i + 1 < n ? b64[v >> 6 & 63] : '=';
    out[o++] = i + 2 < n ? b64[v & 63] : '=';
  }
  out[o++] = '"';
  out[o] = 0;
}

/* Place row i through the shortcut window and add it (0 ok). */
static int window_put(bcolz_writer *w, uint64_t i, char **err) {
  bcolz_window *win = bcolz_writer_window(w);
  if (!win) return -1;
  int64_t id;
  char s[8];
  window_row(i, &id, s);
  if (!bcolz_fast_put_int(&win->cols[0].fast, id, bcolz_window_cell(win, 0)) ||
      !bcolz_fast_put_s(&win->cols[1].fast, (const uint8_t *)s, strlen(s),
                        bcolz_window_cell(win, 1)))
    return -1;
  return bcolz_window_add(win) ? 0 : bcolz_writer_add_placed(w, err);
}

/* The same row through bcolz_writer_add. */
static int window_add(bcolz_writer *w, uint64_t i, char **err) {
  int64_t id;
  char s[8];
  window_row(i, &id, s);
  ds_value row[2] = {{DS_V_INT, {.i = id}},
                     {DS_V_TEXT, {.s = {(const uint8_t *)s, strlen(s)}}}};
  return bcolz_writer_add(w, row, err);
}

/* Rows added through the shortcut window (bcolz_window_add inline, and
 * bcolz_writer_add_placed where a column fills up), mixed with
 * bcolz_writer_add and savepoint truncations across chunk boundaries,
 * read back as written; the count follows every row. */
static void test_window(void) {
  bcolz_wtype ty[2];
  char *err = NULL;
  bcolz_write_parse_type("int64", &ty[0], &err);
  bcolz_write_parse_type("S6", &ty[1], &err);
  ty[1].chunklen = 33; /* the columns fill up at different rows */
  const char *names[2] = {"id", "name"};
  bcolz_write_options o;
  bcolz_write_defaults(&o);
  o.sync = 0;
  o.chunklen = 50;
  char *dir = fx_new_dir(g_tmp);
  bcolz_writer *w;
  int ok = bcolz_writer_open(dir, 0, 2, names, ty, &o, &w, &err) == 0;
  uint64_t counted = 1;
  for (uint64_t i = 0; ok && i < 260; i++) {
    ok = (i % 37 == 5 ? window_add(w, i, &err) : window_put(w, i, &err)) == 0;
    counted = counted && bcolz_writer_count(w) == i + 1;
  }
  CHECK_MSG(ok && counted, "260 rows through the window %s", err ? err : "");
  ok = ok && bcolz_writer_truncate(w, 123, &err) == 0 && bcolz_writer_count(w) == 123;
  for (uint64_t i = 123; ok && i < 417; i++) ok = window_put(w, i, &err) == 0;
  ok = ok && bcolz_writer_count(w) == 417 && bcolz_writer_finish(w, &err) == 0;
  CHECK(!ok || bcolz_writer_window(w) == NULL); /* finished: no window */
  bcolz_writer_free(w);
  bcolz_table *t = NULL;
  ok = ok && bcolz_open(dir, &t, &err) == 0 && bcolz_nrows(t) == 417;
  CHECK_MSG(ok, "417 rows written %s", err ? err : "");
  ds_arena a = {0};
  chunk_cache cc = {0};
  uint64_t bad = 0;
  for (uint64_t i = 0; ok && i < 417; i++) {
    int64_t id;
    char s[8], want[2][32];
    window_row(i, &id, s);
    snprintf(want[0], 32, "%lld", (long long)id);
    quoted_base64(s, want[1]);
    for (size_t c = 0; c < 2; c++) {
      char *j = cell_json(t, c, i, &cc, &a);
      if (strcmp(j, want[c]) != 0 && bad++ < 3)
        check_note("    row %llu col %zu: %s want %s\n", (unsigned long long)i, c, j, want[c]);
      free(j);
    }
  }
  CHECK_MSG(ok && bad == 0, "window rows read back (%llu wrong)", (unsigned long long)bad);
  ds_buf_free(&cc.buf);
  ds_arena_free(&a);
  bcolz_close(t);
  free(err);
  free(dir);
}

/* The table check_written.py expects (its python_table), n rows. */
static void test_python(uint64_t n) {
  static const char *const names[] = {"id", "half", "score", "name", "code",
                                      "when", "vec", "flag", "big"};
  static const char *const specs[] = {"INTEGER", "f2", "f4", "TEXT", "S3",
                                      "M8[ms]", "(2,)i2", "bool", ">i4"};
  bcolz_wtype ty[9];
  char *err = NULL;
  for (int i = 0; i < 9; i++) bcolz_write_parse_type(specs[i], &ty[i], &err);
  bcolz_write_options o;
  bcolz_write_defaults(&o);
  o.sync = 0;
  o.chunklen = 1000;
  char *dir = fx_new_dir(g_tmp);
  bcolz_writer *w;
  int ok = bcolz_writer_open(dir, 0, 9, names, ty, &o, &w, &err) == 0;
  ds_buf npy = {0};
  uint64_t shape[1] = {2};
  ds_npy_write_header(&npy, "<i2", 0, 1, shape, &err);
  size_t head = npy.len;
  for (uint64_t i = 0; ok && i < n; i++) {
    char name[32], code[8];
    int nl = snprintf(name, sizeof name, "n%llu\xc3\xa9", (unsigned long long)i);
    int cl = snprintf(code, sizeof code, "c%llu", (unsigned long long)(i % 100));
    int16_t vec[2] = {(int16_t)i, (int16_t)-(int64_t)i};
    npy.len = head;
    ds_buf_append(&npy, vec, 4);
    ds_value row[9] = {
        {DS_V_INT, {.i = (int64_t)i}},
        {DS_V_FLOAT, {.f = (double)(i % 100) * 0.25}},
        {DS_V_FLOAT, {.f = (double)i * 0.5}},
        {DS_V_TEXT, {.s = {(const uint8_t *)name, (size_t)nl}}},
        {DS_V_BYTES, {.s = {(const uint8_t *)code, (size_t)cl}}},
        {DS_V_INT, {.i = (int64_t)i * 1000}},
        {DS_V_NDARRAY, {.s = {npy.data, npy.len}}},
        {DS_V_BOOL, {.i = (int64_t)(i % 2)}},
        {DS_V_INT, {.i = (int64_t)i}}};
    ok = bcolz_writer_add(w, row, &err) == 0;
  }
  ok = ok && bcolz_writer_finish(w, &err) == 0;
  bcolz_writer_free(w);
  ds_buf_free(&npy);
  CHECK_MSG(ok, "python table written %s", err ? err : "");
  free(err);
  char cmd[512];
  snprintf(cmd, sizeof cmd,
           "/usr/bin/python3 tests/unit/check_written.py bcolz %s %llu 2>&1", dir,
           (unsigned long long)n);
  FILE *f = popen(cmd, "r");
  char line[1024];
  int seen = 0;
  while (f && fgets(line, sizeof line, f)) {
    line[strcspn(line, "\n")] = 0;
    seen++;
    CHECK_MSG(strncmp(line, "OK ", 3) == 0, "Python: %s", line);
  }
  CHECK_MSG(f && pclose(f) == 0 && seen == 10, "Python checked %d columns", seen);
  free(dir);
}

int main(void) {
  if (!mkdtemp(g_tmp)) { CHECK(0); return check_exit(); }
  DIR *d = opendir(BFIX);
  struct dirent *e;
  while (d && (e = readdir(d))) {
    if (e->d_name[0] == '.' || strcmp(e->d_name, "expected") == 0 ||
        strchr(e->d_name, '.'))
      continue;
    copy_fixture(e->d_name);
  }
  if (d) closedir(d);
  test_types();
  test_values();
  test_stream();
  test_window();
  test_python(5000);
  test_python(0);
  fx_remove_tree(g_tmp);
  return check_exit();
}
