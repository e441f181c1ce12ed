/* test_datadings_writer.c - the datadings writer and the msgpack encoder
 * without SQLite:
 *   1. every fixture written by upstream's current writer is rewritten
 *      sample by sample (key + raw bytes) and all six files must come out
 *      byte for byte as upstream's (.msgpack, .offsets, .keys, .key_hashes,
 *      .filter, .md5); salt1 (hashes re-salted by hand) matches except
 *      .key_hashes/.md5, which use salt_for(0) as upstream's writer does;
 *   2. every fixture sample decoded to values and encoded again reads back
 *      as the same values (JSON text compared), byte-identical where the
 *      value model keeps everything (no numpy scalars);
 *   3. Python's complex repr, JSON samples, typed fields, refusals (reserved
 *      and duplicate keys, raw checks) and transactions. */
#include <dirent.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "fixture.h"
#include "core/mapped_file.h"
#include "core/npy.h"
#include "formats/datadings/datadings.h"
#include "formats/datadings/datadings_writer.h"
#include "decoders/msgpack_encode.h"
#include "decoders/msgpack_value.h"

/* The windows samples are read through (pread). */
static datadings_io t_io;

#define FIX "tests/fixtures/upstream/datadings/"

static char tmp[64];
static const char *const SUFFIX[] = {"", ".offsets", ".keys", ".key_hashes",
                                     ".filter", ".md5"};

/* A stage + writer for path, or NULL (err set). */
static datadings_writer *writer(const char *path, ds_stage_mode mode,
                                ds_stage **st, char **err) {
  char *dir, *key;
  datadings_writer *w = NULL;
  *st = NULL;
  if (datadings_writer_target(path, &dir, &key, err) == 0 &&
      ds_stage_open(dir, key, mode, st, err) == 0 &&
      datadings_writer_open(*st, path, &w, err) != 0) {
    ds_stage_close(*st);
    *st = NULL;
  }
  free(dir);
  free(key);
  return w;
}

/* Rewrite src (one .msgpack) to dst by key + raw bytes. */
static int rewrite(const char *src, const char *dst, int check) {
  datadings_reader *r;
  char *err = NULL;
  ds_stage *st;
  if (datadings_open(src, &r, &err)) {
    check_note("    %s\n", err);
    free(err);
    return -1;
  }
  datadings_writer *w = writer(dst, DS_STAGE_REPLACE, &st, &err);
  int rc = w ? 0 : -1;
  for (uint64_t g = 0; g < datadings_count(r) && rc == 0; g++) {
    const uint8_t *k, *p;
    size_t kn, n;
    rc = datadings_key(r, g, &k, &kn, &err) || datadings_sample(r, &t_io, g, &p, &n, &err) ||
         datadings_writer_add_raw(w, k, kn, p, n, check, &err);
  }
  if (rc == 0) rc = datadings_writer_prepare(w, &err) || datadings_writer_publish(w, &err);
  if (rc) check_note("    rewrite %s: %s\n", src, err);
  datadings_writer_close(w);
  ds_stage_close(st);
  datadings_close(r);
  free(err);
  return rc ? -1 : 0;
}

/* 1 when files a and b have the same bytes. */
static int same_file(const char *a, const char *b) {
  ds_file fa, fb;
  char *err = NULL;
  int ok = 0;
  if (ds_file_load(&fa, a, &err) == 0) {
    if (ds_file_load(&fb, b, &err) == 0) {
      ok = fa.size == fb.size && (!fa.size || memcmp(fa.data, fb.data, fa.size) == 0);
      ds_file_close(&fb);
    }
    ds_file_close(&fa);
  }
  free(err);
  return ok;
}

/* Rewrite fixture dir/name.msgpack and compare the files (all six, or the
 * ones in `which`, a bit per SUFFIX). */
static void byte_identical(const char *dir, const char *name, unsigned which) {
  char src[256], dst[256], a[300], b[300];
  snprintf(src, sizeof src, FIX "%s/%s.msgpack", dir, name);
  snprintf(dst, sizeof dst, "%s/%s.msgpack", tmp, name);
  int ok = rewrite(src, dst, 0) == 0;
  CHECK_MSG(ok, "rewrite %s", name);
  if (!ok) return;
  for (int i = 0; i < 6; i++) {
    if (!(which & (1u << i))) continue;
    snprintf(a, sizeof a, "%s%s", src, SUFFIX[i]);
    snprintf(b, sizeof b, "%s%s", dst, SUFFIX[i]);
    CHECK_MSG(same_file(a, b), "%s%s byte for byte", name, SUFFIX[i]);
  }
}

static void test_byte_identical(void) {
  const char *names[] = {"basic", "hetero", "keys", "empty", "ndarrays", "raw", "mid"};
  for (size_t i = 0; i < sizeof names / sizeof *names; i++)
    byte_identical(names[i], names[i], 0x3f);
  for (int s = 0; s < 4; s++) {
    char n[32];
    snprintf(n, sizeof n, "part-%05d", s);
    byte_identical("sharded", n, 0x3f);
  }
  byte_identical("salt1", "salt1", 0x17); /* not .key_hashes, .md5 */
  char src[256];
  snprintf(src, sizeof src, "%s/salt1.msgpack.key_hashes", tmp);
  ds_file f;
  char *err = NULL;
  if (CHECK(ds_file_load(&f, src, &err) == 0)) {
    CHECK(f.size == 168 && memcmp(f.data, "\x65\x2e\x53\x0e\xde\xe5\x89\x3b", 8) == 0);
    ds_file_close(&f);
  }
  /* the legacy dataset (index only) gets a new-style index that reads */
  char dst[256];
  snprintf(dst, sizeof dst, "%s/legacy.msgpack", tmp);
  CHECK(rewrite(FIX "legacy/legacy.msgpack", dst, 1) == 0);
  CHECK(same_file(FIX "legacy/legacy.msgpack", dst));
  snprintf(src, sizeof src, "%s/converted.msgpack", tmp);
  CHECK(rewrite(FIX "converted/converted.msgpack", src, 1) == 0);
  char a[300], b[300];
  for (int i = 0; i < 5; i++) {
    snprintf(a, sizeof a, FIX "converted/converted.msgpack%s", SUFFIX[i]);
    snprintf(b, sizeof b, "%s%s", src, SUFFIX[i]);
    CHECK_MSG(same_file(a, b), "converted%s byte for byte", SUFFIX[i]);
  }
  /* the raw fixture breaks the sample rules: checked raw refuses it */
  CHECK(rewrite(FIX "raw/raw.msgpack", dst, 1) == -1);
  free(err);
}

/* Decode every sample, encode it again, compare as JSON (and bytes). */
static void reencode(const char *name, size_t *same_bytes, size_t *same_json,
                     size_t *refused, size_t *total) {
  char src[256];
  snprintf(src, sizeof src, FIX "%s/%s.msgpack", name, name);
  datadings_reader *r;
  char *err = NULL;
  if (!CHECK(datadings_open(src, &r, &err) == 0)) return;
  ds_msgpack_doc d1, d2;
  ds_msgpack_doc_init(&d1);
  ds_msgpack_doc_init(&d2);
  ds_arena a = {0};
  ds_buf enc = {0}, j1 = {0}, j2 = {0};
  for (uint64_t g = 0; g < datadings_count(r); g++) {
    const uint8_t *p;
    size_t n;
    ds_value v1, v2;
    (*total)++;
    ds_arena_reset(&a);
    enc.len = j1.len = j2.len = 0;
    if (datadings_sample(r, &t_io, g, &p, &n, &err) || ds_msgpack_parse(&d1, p, n, &err) ||
        ds_msgpack_to_value(&d1.root, &a, &v1, &err) || ds_value_json(&j1, &v1, &err)) {
      check_note("    %s %llu: %s\n", name, (unsigned long long)g, err);
      continue;
    }
    if (ds_msgpack_pack_value(&enc, &v1, &err)) {
      (*refused)++;
      continue;
    }
    if (enc.len == n && memcmp(enc.data, p, n) == 0) (*same_bytes)++;
    if (ds_msgpack_parse(&d2, enc.data, enc.len, &err) == 0 &&
        ds_msgpack_to_value(&d2.root, &a, &v2, &err) == 0 &&
        ds_value_json(&j2, &v2, &err) == 0 && j1.len == j2.len &&
        memcmp(j1.data, j2.data, j1.len) == 0)
      (*same_json)++;
    else
      check_note("    %s %llu: re-encoded sample reads differently\n", name,
             (unsigned long long)g);
  }
  ds_msgpack_doc_free(&d1);
  ds_msgpack_doc_free(&d2);
  ds_arena_free(&a);
  ds_buf_free(&enc);
  ds_buf_free(&j1);
  ds_buf_free(&j2);
  datadings_close(r);
  free(err);
}

static void test_encoder(void) {
  const char *names[] = {"basic", "hetero", "keys", "ndarrays", "mid"};
  for (size_t i = 0; i < sizeof names / sizeof *names; i++) {
    size_t sb = 0, sj = 0, ref = 0, tot = 0;
    reencode(names[i], &sb, &sj, &ref, &tot);
    printf("    (%s: %zu samples, %zu byte-identical, %zu equal values, %zu refused)\n",
           names[i], tot, sb, sj, ref);
    CHECK_MSG(sj + ref == tot, "%s: every encodable sample reads back equal", names[i]);
    /* structured arrays are written since issue 22 (they were 3 refusals) */
    CHECK_MSG(ref == 0, "%s: nothing refused (%zu)", names[i], ref);
    if (!strcmp(names[i], "keys") || !strcmp(names[i], "mid") || !strcmp(names[i], "hetero"))
      CHECK_MSG(sb + (strcmp(names[i], "hetero") ? 0 : 5) == tot, /* 5 np scalars */
                "%s: byte-identical (%zu of %zu)", names[i], sb, tot);
  }
}

/* repr(complex(re, im)) as Python prints it. */
static void repr_is(double re, double im, const char *want) {
  ds_buf b = {0};
  ds_python_complex_repr(&b, re, im);
  ds_buf_append(&b, "", 1);
  CHECK_STR((char *)b.data, want);
  ds_buf_free(&b);
}

static void test_complex_repr(void) {
  repr_is(1.5, -2.25, "(1.5-2.25j)");
  repr_is(0.0, 2.0, "2j");
  repr_is(0.0, -0.0, "-0j");
  repr_is(-0.0, 1.0, "(-0+1j)");
  repr_is(NAN, INFINITY, "(nan+infj)");
  repr_is(1e300, 1e-300, "(1e+300+1e-300j)");
  repr_is(-3.0, 0.0, "(-3+0j)");
  repr_is(0.0, 1e16, "1e+16j");
  repr_is(0.0, 1e15, "1000000000000000j");
  repr_is(0.0, 0.0001, "0.0001j");
  repr_is(0.0, 0.00001, "1e-05j");
  repr_is(0.1, 123.456, "(0.1+123.456j)");
  repr_is(0.5, -INFINITY, "(0.5-infj)");
}

/* JSON text -> value -> JSON text. */
static void json_round(const char *in, const char *want) {
  ds_arena a = {0};
  ds_value v;
  ds_buf out = {0};
  char *err = NULL;
  if (ds_value_from_json(in, strlen(in), &a, &v, &err) == 0) ds_value_json(&out, &v, &err);
  ds_buf_append(&out, "", 1);
  CHECK_STR(err ? err : (char *)out.data, want);
  free(err);
  ds_buf_free(&out);
  ds_arena_free(&a);
}

static void test_json_parse(void) {
  json_round("{\"a\": [1, -2, 2.5, true, null, \"x\"], \"b\": {}}",
             "{\"a\":[1,-2,2.5,true,null,\"x\"],\"b\":{}}");
  json_round("[18446744073709551615, -9223372036854775808, 99999999999999999999999]",
             "[18446744073709551615,-9223372036854775808,99999999999999999999999]");
  json_round("\"\\u00e9\\ud83d\\ude00\\u0000\\n\"", "\"\u00e9\xf0\x9f\x98\x80\\u0000\\n\"");
  json_round("{\"a\": 1, \"a\": 2}", "invalid JSON at character 12: duplicate object key");
  json_round("[1, 2", "invalid JSON at character 5: expected ',' or ']'");
  json_round("[1] x", "invalid JSON at character 4: text after the JSON value");
  json_round("\"\\ud800\"", "invalid JSON at character 7: lone surrogate");
}

#define KEY(s) (const uint8_t *)(s), strlen(s)

/* JSON samples, typed fields, refusals, savepoints, second transaction. */
static void test_samples_and_transactions(void) {
  char path[256], *err = NULL;
  ds_stage *st;
  snprintf(path, sizeof path, "%s/t.msgpack", tmp);
  datadings_writer *w = writer(path, DS_STAGE_CREATE, &st, &err);
  if (!CHECK(w != NULL)) return;
#define JS(s) s, strlen(s)
  CHECK(datadings_writer_add_json(w, KEY("a"), JS("{\"x\": [1, 2.5, \"s\"], \"y\": null}"),
                                  &err) == 0);
  CHECK(datadings_writer_add_json(w, NULL, 0, JS("{\"x\": 1, \"key\": \"b\"}"), &err) == 0);
  CHECK(datadings_writer_add_json(w, KEY("c"), "{\"key\": \"d\"}", 12, &err) == -1);
  CHECK_CONTAINS(err, "sample 2: the sample's \"key\" differs from the key column");
  CHECK(datadings_writer_add_json(w, KEY("c"), "{\"nd\": 1}", 9, &err) == -1);
  CHECK_CONTAINS(err, "sample 2: field \"nd\" is reserved");
  CHECK(datadings_writer_add_json(w, KEY("c"), "[1]", 3, &err) == -1);
  CHECK_CONTAINS(err, "not an object");
  CHECK(datadings_writer_add_json(w, KEY("a"), "{}", 2, &err) == -1);
  CHECK_CONTAINS(err, "sample 2: key \"a\" is already sample 0");
  /* a .npy BLOB becomes an array, JSON text a list, NULL is left out */
  ds_buf npy = {0};
  uint64_t shape[1] = {2};
  CHECK(ds_npy_write_header(&npy, "<i2", 0, 1, shape, &err) == 0);
  ds_buf_append(&npy, "\x01\x00\x02\x00", 4);
  datadings_field f[4] = {
      {"label", 5, {.type = DS_V_INT, .u.i = 300}, 0},
      {"arr", 3, {.type = DS_V_BYTES, .u.s = {npy.data, npy.len}}, 0},
      {"tags", 4, {.type = DS_V_TEXT, .u.s = {(const uint8_t *)"[\"p\",1]", 7}}, 1},
      {"none", 4, {.type = DS_V_NULL}, 0}};
  CHECK(datadings_writer_add_fields(w, KEY("c"), f, 4, &err) == 0);
  ds_buf_free(&npy);
  datadings_field bad = {"complex", 7, {.type = DS_V_INT}, 0};
  CHECK(datadings_writer_add_fields(w, KEY("e"), &bad, 1, &err) == -1);
  CHECK_CONTAINS(err, "sample 3: field \"complex\" is reserved");
  void *m;
  CHECK(datadings_writer_mark(w, &m, &err) == 0);
  CHECK(datadings_writer_add_raw(w, KEY("z"), (const uint8_t *)"\x81\xa3key\xa1z", 7, 1, &err) == 0);
  CHECK(datadings_writer_add_raw(w, KEY("y"), (const uint8_t *)"\x81\xa3key\xa1z", 7, 1, &err) == -1);
  CHECK_CONTAINS(err, "sample 4: the \"key\" inside raw differs");
  CHECK(datadings_writer_rollback_to(w, m, &err) == 0 && datadings_writer_count(w) == 3);
  free(m);
  CHECK(datadings_writer_add_raw(w, KEY("z"), (const uint8_t *)"\x81\xa3key\xa1z", 7, 1, &err) == 0);
  CHECK(!ds_path_exists(path, NULL));
  CHECK(datadings_writer_prepare(w, &err) == 0 && datadings_writer_publish(w, &err) == 0);
  datadings_reader *r;
  if (CHECK(datadings_open(path, &r, &err) == 0)) {
    CHECK(datadings_count(r) == 4);
    const uint8_t *p;
    size_t n;
    uint64_t g;
    CHECK(datadings_sample(r, &t_io, 2, &p, &n, &err) == 0);
    static const char want[] =
        "\x84\xa3key\xa1" "c\xa5label\xcd\x01\x2c\xa3" "arr"
        "\x85\xc4\x02nd\xc3\xc4\x04type\xa3<i2\xc4\x04kind\xc4\x00\xc4\x05shape\x91\x02"
        "\xc4\x04" "data\xc4\x04\x01\x00\x02\x00\xa4tags\x92\xa1p\x01";
    CHECK_MSG(n == sizeof want - 1 && memcmp(p, want, n) == 0, "typed sample bytes");
    CHECK(datadings_find(r, KEY("z"), &g, &err) == 1 && g == 3);
    datadings_close(r);
  }
  datadings_md5_row *rows;
  size_t nrows;
  if (CHECK(datadings_verify(path, &rows, &nrows, &err) == 0)) {
    int ok = nrows == 5;
    for (size_t i = 0; i < nrows; i++) ok = ok && rows[i].ok;
    CHECK_MSG(ok, "md5 lines match the files");
    datadings_md5_free(rows, nrows);
  }
  /* a second transaction continues; an aborted one leaves it as it was */
  CHECK(datadings_writer_begin(w, &err) == 0);
  CHECK(datadings_writer_add_json(w, KEY("z"), "{}", 2, &err) == -1);
  CHECK(datadings_writer_add_json(w, KEY("w"), "{}", 2, &err) == 0);
  CHECK(datadings_writer_prepare(w, &err) == 0 && datadings_writer_publish(w, &err) == 0);
  CHECK(datadings_writer_begin(w, &err) == 0);
  CHECK(datadings_writer_add_json(w, KEY("v"), "{}", 2, &err) == 0);
  datadings_writer_abort(w);
  CHECK(datadings_writer_count(w) == 5);
  CHECK(datadings_writer_add_json(w, KEY("v"), "{}", 2, &err) == 0);
  datadings_writer_abort(w);
  if (CHECK(datadings_open(path, &r, &err) == 0)) {
    CHECK(datadings_count(r) == 5);
    datadings_close(r);
  }
  if (CHECK(datadings_verify(path, &rows, &nrows, &err) == 0)) {
    int ok = nrows == 5;
    for (size_t i = 0; i < nrows; i++) ok = ok && rows[i].ok;
    CHECK_MSG(ok, "md5 lines match after the second commit");
    datadings_md5_free(rows, nrows);
  }
  datadings_writer_close(w);
  ds_stage_close(st);
  CHECK(writer(path, DS_STAGE_CREATE, &st, &err) == NULL);
  CHECK_CONTAINS(err, "t.msgpack: already exists");
  free(err);
}

int main(void) {
  snprintf(tmp, sizeof tmp, "/tmp/ds_dd_writer_XXXXXX");
  if (!mkdtemp(tmp)) return 1;
  test_byte_identical();
  test_encoder();
  test_complex_repr();
  test_json_parse();
  test_samples_and_transactions();
  if (fx_remove_tree(tmp)) return 1;
  return check_exit();
}
