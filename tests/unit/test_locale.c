/* test_locale.c - numbers read and written as text do not follow the host
 * process's locale. A host may call setlocale(LC_ALL, "") with a locale
 * whose decimal point is a comma (de_DE): libc's strtod then reads "2.5"
 * as 2 and printf prints "2,5". Locales are built at test time with
 * localedef into a temp dir (LOCPATH) from glibc's locale sources (Debian
 * package `locales`): the LC_NUMERIC of de_DE (decimal comma) and of ps_AF
 * (decimal point U+066B, two bytes in UTF-8). In each, the JSON writers,
 * the JSON and Python complex readers, and SQL over the datadings module
 * (an upstream fixture read, a dataset written and read back) must give
 * what they give in the C locale; so must the atlas module (a dataset
 * written with dict_size=0.5 and read back: its meta.json holds a real)
 * and bcolz_attrs over a fixture whose __attrs__ hold reals. Metadata JSON
 * used to be parsed by jansson, whose real-number parser fails an
 * assertion (aborting the host) where the decimal point is two bytes. */
#include <locale.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "check.h"
#include "core/json.h"
#include "core/value.h"
#include "core/value_json.h"
#include "decoders/msgpack_encode.h"
#include "decoders/msgpack_numpy.h"
#include "sql/sqlite_api.h"
#include "vtab/modules.h"

#define FIXTURE "tests/fixtures/upstream/datadings/basic/basic.msgpack"

static char tmp[] = "/tmp/ds_locale_XXXXXX";

/* Build locale `name` in tmp from an LC_NUMERIC body; 1 when it exists. */
static int make_locale(const char *name, const char *numeric) {
  char src[256], cmd[1024], made[512];
  snprintf(src, sizeof src, "%s/%s.src", tmp, name);
  FILE *f = fopen(src, "w");
  if (!f) return 0;
  fprintf(f, "LC_NUMERIC\n%s\nEND LC_NUMERIC\n", numeric);
  fclose(f);
  /* -c: only LC_NUMERIC is defined (localedef warns about the rest) */
  snprintf(cmd, sizeof cmd, "localedef -c -i '%s' -f UTF-8 '%s/%s' >/dev/null 2>&1", src,
           tmp, name);
  if (system(cmd) == -1) return 0;
  snprintf(made, sizeof made, "%s/%s/LC_NUMERIC", tmp, name);
  struct stat st;
  return stat(made, &st) == 0;
}

/* Everything a locale could change, as one text: JSON of doubles and
 * floats, JSON read back, Python complex text both ways. malloc'd. */
static char *core_texts(void) {
  static const double doubles[] = {2.5, 0.1, -1.5e-300, 1e21, 123456.789, 1.0, -0.0, 5e-324};
  static const float floats[] = {0.1f, 2.5f, 3.4e38f, 1.0f};
  static const char *const json = "{\"a\": [2.5, -0.125, 1e-3, 1.5E+2, 7], \"b\": 0.1}";
  static const char *const complexes[] = {"(1.5-2.25j)", "2.5j", "(1e+300+1e-300j)"};
  ds_buf out = {0};
  for (size_t i = 0; i < sizeof doubles / sizeof *doubles; i++)
    ds_json_double(&out, doubles[i]), ds_buf_puts(&out, " ");
  for (size_t i = 0; i < sizeof floats / sizeof *floats; i++)
    ds_json_float(&out, floats[i]), ds_buf_puts(&out, " ");
  ds_arena a = {0};
  ds_value v;
  char *err = NULL;
  if (ds_value_from_json(json, strlen(json), &a, &v, &err) == 0) ds_value_json(&out, &v, &err);
  ds_buf_puts(&out, err ? err : "");
  free(err);
  ds_arena_free(&a);
  for (size_t i = 0; i < sizeof complexes / sizeof *complexes; i++) {
    double re = 0, im = 0;
    ds_buf_puts(&out, " ");
    if (ds_msgpack_parse_complex(complexes[i], strlen(complexes[i]), &re, &im) == 0)
      ds_python_complex_repr(&out, re, im);
    else
      ds_buf_puts(&out, "unparsed");
  }
  ds_buf_append(&out, "", 1);
  return (char *)out.data;
}

/* The answers of query q on db as "a|b;c|d" (or "error: ..."). malloc'd. */
static char *answer(sqlite3 *db, const char *q) {
  sqlite3_stmt *st = NULL;
  ds_buf out = {0};
  if (sqlite3_prepare_v2(db, q, -1, &st, NULL) != SQLITE_OK) {
    ds_buf_puts(&out, "error: "), ds_buf_puts(&out, sqlite3_errmsg(db));
  } else {
    int rc;
    while ((rc = sqlite3_step(st)) == SQLITE_ROW)
      for (int c = 0; c < sqlite3_column_count(st); c++) {
        const char *t = (const char *)sqlite3_column_text(st, c);
        ds_buf_puts(&out, t ? t : "NULL"), ds_buf_puts(&out, c + 1 < sqlite3_column_count(st) ? "|" : ";");
      }
    if (rc != SQLITE_DONE) ds_buf_puts(&out, "error: "), ds_buf_puts(&out, sqlite3_errmsg(db));
  }
  sqlite3_finalize(st);
  ds_buf_append(&out, "", 1);
  return (char *)out.data;
}

#define NSQL 6
#define BCOLZ_FIXTURE "tests/fixtures/upstream/bcolz/carray_int32"

/* SQL through the modules: datadings fixture floats and complex numbers,
 * a datadings and an atlas dataset written from JSON (atlas with
 * dict_size=0.5) in folder `dir` and read back, a bcolz fixture's
 * attributes, the error of a bcolz writer given 2.5 for an i8 column.
 * Returns each answer. */
/* s with its first `dir` written DIR (an error names the file it writes,
 * which is in a folder per locale), malloc'd. */
static char *without_dir(const char *s, const char *dir) {
  const char *at = strstr(s, dir);
  if (!at) return strdup(s);
  size_t n = strlen(s) - strlen(dir) + 4;
  char *out = malloc(n);
  if (out) snprintf(out, n, "%.*sDIR%s", (int)(at - s), s, at + strlen(dir));
  return out;
}

static void sql_texts(const char *dir, char *ans[NSQL]) {
  sqlite3 *db = NULL;
  char q[1024];
  sqlite3_open(":memory:", &db);
  ds_table_register(db, &ds_datadings_def);
  ds_table_register(db, &ds_atlas_def);
  ds_table_register(db, &ds_bcolz_def);
  mkdir(dir, 0700);
  ans[4] = answer(db, "SELECT name, value FROM bcolz_attrs('" BCOLZ_FIXTURE "')");
  snprintf(q, sizeof q,
           "CREATE VIRTUAL TABLE temp.c USING bcolz('%s/c', mode=create, columns='id i8');"
           "INSERT INTO c VALUES (2.5)", dir);
  char *cerr = NULL;
  sqlite3_exec(db, q, NULL, NULL, &cerr);
  ans[5] = without_dir(cerr ? cerr : "no error", dir);
  sqlite3_free(cerr);
  ans[0] = answer(db, "SELECT sample FROM datadings('" FIXTURE "') WHERE rowid < 12");
  snprintf(q, sizeof q,
           "CREATE VIRTUAL TABLE temp.d USING datadings('%s/d.msgpack', mode=create);"
           "INSERT INTO d(key, sample) VALUES ('k', '{\"x\": 2.5, \"y\": [0.1, -1e-300]}')",
           dir);
  char *err = NULL;
  sqlite3_exec(db, q, NULL, NULL, &err);
  snprintf(q, sizeof q, "SELECT sample FROM datadings('%s/d.msgpack')", dir);
  ans[1] = err ? strdup(err) : answer(db, q);
  sqlite3_free(err), err = NULL;
  snprintf(q, sizeof q,
           "CREATE VIRTUAL TABLE temp.a USING atlas('%s/a', mode=create, dict_size=0.5);"
           "INSERT INTO a(example) VALUES ('{\"x\": 2.5, \"y\": [0.1, -1e-300]}')",
           dir);
  sqlite3_exec(db, q, NULL, NULL, &err);
  snprintf(q, sizeof q, "SELECT example FROM atlas('%s/a')", dir);
  ans[2] = err ? strdup(err) : answer(db, q);
  sqlite3_free(err);
  /* the dict_size as the atlas writer put it in the shard's meta.json */
  char path[512];
  snprintf(path, sizeof path, "%s/a/0/meta.json", dir);
  FILE *f = fopen(path, "r");
  char meta[4096] = "";
  if (f) meta[fread(meta, 1, sizeof meta - 1, f)] = 0, fclose(f);
  const char *ds = strstr(meta, "dict_size");
  ans[3] = strdup(ds ? ds : "no dict_size in meta.json");
  char *nl = strpbrk(ans[3], ",}\n");
  if (nl) *nl = 0;
  sqlite3_close(db);
}

/* One locale: LC_NUMERIC set to it, every text as in the C locale. */
static void in_locale(const char *name, const char *point, const char *c_core,
                      char *const c_sql[NSQL]) {
  const char *set = setlocale(LC_NUMERIC, name);
  CHECK_MSG(set != NULL, "setlocale(LC_NUMERIC, \"%s\") with LOCPATH=%s", name, tmp);
  if (!set) return;
  char plain[32];
  snprintf(plain, sizeof plain, "%g", 2.5); /* the locale does make libc differ */
  char want[32];
  snprintf(want, sizeof want, "2%s5", point);
  CHECK_STR(plain, want);
  char *core = core_texts();
  CHECK_STR(core, c_core);
  char dir[512], *sql[NSQL];
  snprintf(dir, sizeof dir, "%s/%s.out", tmp, name);
  sql_texts(dir, sql);
  for (int i = 0; i < NSQL; i++) {
    CHECK_STR(sql[i], c_sql[i]);
    free(sql[i]);
  }
  free(core);
  setlocale(LC_NUMERIC, "C");
}

int main(void) {
  CHECK(mkdtemp(tmp) != NULL);
  /* the C locale's answers, and that they hold what the checks need */
  char *c_core = core_texts(), *c_sql[NSQL], dir[512];
  snprintf(dir, sizeof dir, "%s/C.out", tmp);
  sql_texts(dir, c_sql);
  CHECK_CONTAINS(c_core, "2.5 0.1 -1.5e-300 1e+21 123456.789 1.0 -0.0 ");
  CHECK_CONTAINS(c_core, " 0.1 2.5 3.4e+38 1.0 ");
  CHECK_CONTAINS(c_core, "{\"a\":[2.5,-0.125,0.001,150.0,7],\"b\":0.1}");
  CHECK_CONTAINS(c_core, " (1.5-2.25j) 2.5j (1e+300+1e-300j)");
  CHECK_CONTAINS(c_sql[0], "\"z\":[1.5,-2.25]");
  CHECK_CONTAINS(c_sql[0], "\"f64\":0.14285714285714285,\"f32\":0.3499999940395355,");
  CHECK_STR(c_sql[1], "{\"key\":\"k\",\"x\":2.5,\"y\":[0.1,-1e-300]};");
  CHECK_STR(c_sql[2], "{\"x\":2.5,\"y\":[0.1,-1e-300]};");
  CHECK_STR(c_sql[3], "dict_size\": 0.5");
  CHECK_CONTAINS(c_sql[4], "nested|{\"list\":[1,2.5,null,true],");
  CHECK_CONTAINS(c_sql[5], "2.5 is not an integer");

  int made = make_locale("de_DE.UTF-8", "copy \"de_DE\"");
  CHECK_MSG(made, "localedef could not build de_DE's LC_NUMERIC (glibc's locale sources, "
                  "Debian package locales) in %s", tmp);
  setenv("LOCPATH", tmp, 1);
  if (made) in_locale("de_DE.UTF-8", ",", c_core, c_sql);
  /* a decimal point of two bytes (U+066B ARABIC DECIMAL SEPARATOR) */
  made = make_locale("ps_AF.UTF-8", "copy \"ps_AF\"");
  CHECK_MSG(made, "localedef could not build ps_AF's LC_NUMERIC in %s", tmp);
  if (made) in_locale("ps_AF.UTF-8", "\xd9\xab", c_core, c_sql);

  for (int i = 0; i < NSQL; i++) free(c_sql[i]);
  free(c_core);
  char cmd[256];
  snprintf(cmd, sizeof cmd, "rm -rf '%s'", tmp);
  CHECK(system(cmd) == 0);
  return check_exit();
}
