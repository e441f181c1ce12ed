/* test_tfexample.c - unit tests of decoders/tfexample.c (no SQLite):
 * hand-made Example bytes through ds_tfex_decode (kinds, values, record
 * order, repeated names, empty record), ds_tfex_find, ds_tfex_bytes_at,
 * the JSON text, the max_value_bytes cap on decoded memory (arena.limit),
 * reuse of one ds_tfex for many records, the error texts, and the cells
 * of tfexample_cell.c (scalars, .npy arrays, lists, NULLs), and column
 * inference (tfexample_schema.c). Records
 * written by Google's runtime are tested in
 * tests/conformance/test_tfexample.py. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "core/npy.h"
#include "core/value_json.h"
#include "decoders/tfexample.h"
#include "decoders/tfexample_cell.h"
#include "decoders/tfexample_schema.h"

/* Append one length-delimited field to b. */
static void put_len(ds_buf *b, unsigned field, const ds_buf *payload) {
  uint8_t tag = (uint8_t)(field << 3 | 2);
  ds_buf_append(b, &tag, 1);
  size_t n = payload->len;
  do {
    uint8_t x = (uint8_t)((n & 0x7f) | (n > 0x7f ? 0x80 : 0));
    ds_buf_append(b, &x, 1);
    n >>= 7;
  } while (n);
  ds_buf_append(b, payload->data, payload->len);
}

/* Append to features one entry: name -> Feature holding list `kind`
 * (1 bytes, 2 float, 3 int64) whose payload (the list message) is raw. */
static void put_entry(ds_buf *features, const char *name, unsigned kind,
                      const void *list, size_t list_len) {
  ds_buf key = {0}, lst = {0}, feat = {0}, entry = {0};
  ds_buf_append(&key, name, strlen(name));
  ds_buf_append(&lst, list, list_len);
  put_len(&feat, kind, &lst);
  put_len(&entry, 1, &key);
  put_len(&entry, 2, &feat);
  put_len(features, 1, &entry);
  ds_buf_free(&key);
  ds_buf_free(&lst);
  ds_buf_free(&feat);
  ds_buf_free(&entry);
}

/* An Example whose Features payload is `features`. */
static void wrap_example(ds_buf *out, const ds_buf *features) {
  out->len = 0;
  put_len(out, 1, features);
}

/* The JSON text of ex (static buffer). */
static const char *json_of(const ds_tfex *ex) {
  static char text[4096];
  ds_buf b = {0};
  char *err = NULL;
  if (ds_tfex_json(ex, &b, &err)) {
    snprintf(text, sizeof text, "error: %s", err);
    free(err);
  } else {
    snprintf(text, sizeof text, "%.*s", (int)b.len, (const char *)b.data);
  }
  ds_buf_free(&b);
  return text;
}

/* 1 when feature f is called s (names are not NUL-terminated). */
static int name_is(const ds_tfex_feature *f, const char *s) {
  return f->name_len == strlen(s) && !memcmp(f->name, s, f->name_len);
}

static void test_kinds_and_order(void) {
  ds_buf fs = {0}, rec = {0};
  /* int64 packed [3, -1] */
  const uint8_t ints[] = {0x0a, 0x0b, 0x03, 0xff, 0xff, 0xff, 0xff, 0xff,
                          0xff, 0xff, 0xff, 0xff, 0x01};
  put_entry(&fs, "label", 3, ints, sizeof ints);
  /* bytes ["hi", ""] */
  const uint8_t bytes[] = {0x0a, 0x02, 'h', 'i', 0x0a, 0x00};
  put_entry(&fs, "img", 1, bytes, sizeof bytes);
  /* float unpacked 0.5, 0.25 (wire type 5 twice) */
  const uint8_t floats[] = {0x0d, 0x00, 0x00, 0x00, 0x3f,
                            0x0d, 0x00, 0x00, 0x80, 0x3e};
  put_entry(&fs, "score", 2, floats, sizeof floats);
  wrap_example(&rec, &fs);

  ds_tfex ex = {0};
  char *err = NULL;
  CHECK(ds_tfex_decode(&ex, rec.data, rec.len, &err) == 0);
  CHECK(ex.n == 3);
  CHECK(ex.n == 3 && name_is(&ex.features[0], "label") &&
        name_is(&ex.features[1], "img") && name_is(&ex.features[2], "score"));
  const ds_tfex_feature *f = ds_tfex_find(&ex, "label", 5);
  CHECK(f && f->kind == DS_TFEX_INT64 && f->n == 2 && f->i64[0] == 3 && f->i64[1] == -1);
  f = ds_tfex_find(&ex, "score", 5);
  CHECK(f && f->kind == DS_TFEX_FLOAT && f->n == 2 && f->f32[0] == 0.5f && f->f32[1] == 0.25f);
  f = ds_tfex_find(&ex, "img", 3);
  CHECK(f && f->kind == DS_TFEX_BYTES && f->n == 2);
  if (f && f->n == 2) {
    const uint8_t *p;
    size_t n;
    ds_tfex_bytes_at(f, 0, &p, &n);
    CHECK(n == 2 && !memcmp(p, "hi", 2));
    ds_tfex_bytes_at(f, 1, &p, &n);
    CHECK(n == 0);
  }
  CHECK(ds_tfex_find(&ex, "labe", 4) == NULL);
  CHECK_STR(json_of(&ex), "{\"label\":[3,-1],\"img\":[\"aGk=\",\"\"],\"score\":[0.5,0.25]}");

  /* the same ds_tfex decodes the next record; an empty one has no features */
  CHECK(ds_tfex_decode(&ex, (const uint8_t *)"", 0, &err) == 0 && ex.n == 0);
  CHECK_STR(json_of(&ex), "{}");
  ds_tfex_free(&ex);
  ds_buf_free(&fs);
  ds_buf_free(&rec);
}

static void test_repeated_names(void) {
  ds_buf fs = {0}, rec = {0};
  const uint8_t one[] = {0x0a, 0x01, 0x01}, two[] = {0x0a, 0x01, 0x02};
  put_entry(&fs, "a", 3, one, sizeof one);
  put_entry(&fs, "b", 3, one, sizeof one);
  put_entry(&fs, "a", 3, two, sizeof two);
  wrap_example(&rec, &fs);
  ds_tfex ex = {0};
  char *err = NULL;
  CHECK(ds_tfex_decode(&ex, rec.data, rec.len, &err) == 0);
  CHECK_STR(json_of(&ex), "{\"b\":[1],\"a\":[2]}");

  /* 100 entries over 30 names: the sorted path */
  fs.len = 0;
  for (int i = 0; i < 100; i++) {
    char name[8];
    uint8_t v[] = {0x0a, 0x01, (uint8_t)i};
    snprintf(name, sizeof name, "n%d", i % 30);
    put_entry(&fs, name, 3, v, sizeof v);
  }
  wrap_example(&rec, &fs);
  CHECK(ds_tfex_decode(&ex, rec.data, rec.len, &err) == 0);
  CHECK(ex.n == 30);
  const ds_tfex_feature *f = ds_tfex_find(&ex, "n7", 2);
  CHECK(f && f->n == 1 && f->i64[0] == 97);
  CHECK(ex.n == 30 && name_is(&ex.features[0], "n10")); /* 70..99 stay */
  ds_tfex_free(&ex);
  ds_buf_free(&fs);
  ds_buf_free(&rec);
}

static void test_limit_and_errors(void) {
  ds_buf fs = {0}, rec = {0};
  const uint8_t v[] = {0x0a, 0x01, 0x01};
  for (int i = 0; i < 2000; i++) put_entry(&fs, "x", 3, v, sizeof v);
  wrap_example(&rec, &fs);
  ds_tfex ex = {0};
  char *err = NULL;
  ex.arena.limit = 4096;
  CHECK(ds_tfex_decode(&ex, rec.data, rec.len, &err) == -1);
  CHECK_STR(err, "value needs more than max_value_bytes=4096 bytes");
  free(err);
  err = NULL;
  ex.arena.limit = 0;
  CHECK(ds_tfex_decode(&ex, rec.data, rec.len, &err) == 0 && ex.n == 1);

  /* cut the record short: the error names the offset of the length */
  CHECK(ds_tfex_decode(&ex, rec.data, rec.len - 1, &err) == -1);
  CHECK_CONTAINS(err, "not a tf.train.Example: length ");
  CHECK_CONTAINS(err, "runs past the end of the Example at byte offset 1");
  free(err);
  err = NULL;
  const uint8_t bad_float[] = {0x0a, 0x0b, 0x0a, 0x09, 0x12, 0x07,
                               0x12, 0x05, 0x0a, 0x03, 0x00, 0x00, 0x80};
  CHECK(ds_tfex_decode(&ex, bad_float, sizeof bad_float, &err) == -1);
  CHECK_STR(err, "not a tf.train.Example: packed floats are not whole 4-byte "
                 "values at byte offset 10");
  free(err);
  ds_tfex_free(&ex);
  ds_buf_free(&fs);
  ds_buf_free(&rec);
}

static void test_cells(void) {
  ds_buf fs = {0}, rec = {0};
  const uint8_t ints[] = {0x0a, 0x02, 0x03, 0x7f};            /* [3, 127] */
  const uint8_t one_int[] = {0x08, 0x2a};                     /* [42] unpacked */
  const uint8_t floats[] = {0x0a, 0x08, 0, 0, 0, 0x3f, 0, 0, 0x80, 0x3e};
  const uint8_t one_float[] = {0x0d, 0, 0, 0xc0, 0x7f};       /* [NaN] */
  const uint8_t names[] = {0x0a, 0x02, 'h', 'i', 0x0a, 0x01, 0xff};
  const uint8_t one_text[] = {0x0a, 0x03, 'c', 'a', 't'};
  const uint8_t empty[] = {0};
  put_entry(&fs, "ints", 3, ints, sizeof ints);
  put_entry(&fs, "int", 3, one_int, sizeof one_int);
  put_entry(&fs, "floats", 2, floats, sizeof floats);
  put_entry(&fs, "float", 2, one_float, sizeof one_float);
  put_entry(&fs, "names", 1, names, sizeof names);
  put_entry(&fs, "name", 1, one_text, sizeof one_text);
  put_entry(&fs, "none", 1, empty, 0);
  wrap_example(&rec, &fs);
  ds_tfex ex = {0};
  char *err = NULL;
  CHECK(ds_tfex_decode(&ex, rec.data, rec.len, &err) == 0 && ex.n == 7);
  ds_value v;
  ds_npy a;
#define FEAT(name) ds_tfex_find(&ex, name, strlen(name))
  CHECK(ds_tfex_cell_type(FEAT("ints"), 0) == DS_V_NDARRAY);
  CHECK(ds_tfex_cell(FEAT("ints"), 0, &ex.arena, &v, &err) == 0 && v.type == DS_V_NDARRAY);
  CHECK(ds_npy_parse(v.u.s.p, v.u.s.n, &a, &err) == 0 && !strcmp(a.descr, "<i8") &&
        a.ndim == 1 && a.count == 2 && ds_le64(a.data) == 3 && ds_le64(a.data + 8) == 127);
  CHECK(ds_tfex_cell_type(FEAT("int"), 0) == DS_V_INT);
  CHECK(ds_tfex_cell(FEAT("int"), 0, &ex.arena, &v, &err) == 0 && v.type == DS_V_INT &&
        v.u.i == 42);
  CHECK(ds_tfex_cell(FEAT("floats"), 0, &ex.arena, &v, &err) == 0 && v.type == DS_V_NDARRAY);
  CHECK(ds_npy_parse(v.u.s.p, v.u.s.n, &a, &err) == 0 && !strcmp(a.descr, "<f4") &&
        a.count == 2 && ds_le32(a.data) == 0x3f000000u && ds_le32(a.data + 4) == 0x3e800000u);
  CHECK(ds_tfex_cell(FEAT("float"), 0, &ex.arena, &v, &err) == 0 && v.type == DS_V_FLOAT &&
        v.u.f != v.u.f);
  CHECK(ds_tfex_cell_type(FEAT("names"), 1) == DS_V_LIST);
  CHECK(ds_tfex_cell(FEAT("names"), 1, &ex.arena, &v, &err) == 0 && v.type == DS_V_LIST &&
        v.u.list.n == 2 && v.u.list.items[0].type == DS_V_TEXT &&
        v.u.list.items[1].type == DS_V_BYTES); /* 0xff is not UTF-8 */
  ds_buf j = {0};
  CHECK(ds_value_json(&j, &v, &err) == 0 && j.len == 13 && !memcmp(j.data, "[\"hi\",\"/w==\"]", 13));
  ds_buf_free(&j);
  CHECK(ds_tfex_cell_type(FEAT("name"), 0) == DS_V_BYTES);
  CHECK(ds_tfex_cell_type(FEAT("name"), 1) == DS_V_TEXT);
  CHECK(ds_tfex_cell(FEAT("name"), 1, &ex.arena, &v, &err) == 0 && v.type == DS_V_TEXT &&
        v.u.s.n == 3 && !memcmp(v.u.s.p, "cat", 3));
  CHECK(ds_tfex_cell_type(FEAT("none"), 0) == DS_V_NULL);
  CHECK(ds_tfex_cell(FEAT("none"), 0, &ex.arena, &v, &err) == 0 && v.type == DS_V_NULL);
  CHECK(ds_tfex_cell_type(NULL, 0) == DS_V_NULL);
  CHECK(ds_tfex_cell(NULL, 0, &ex.arena, &v, &err) == 0 && v.type == DS_V_NULL);
#undef FEAT
  ds_tfex_free(&ex);
  ds_buf_free(&fs);
  ds_buf_free(&rec);
}

/* Records for the inference test: an array of ds_bufs. */
/* The record get_record cannot read (test_infer sets it). */
static uint64_t unreadable_record = 2;

static int get_record(void *ctx, uint64_t i, const uint8_t **p, size_t *n,
                      char **err) {
  const ds_buf *recs = ctx;
  if (i == unreadable_record) return ds_err(err, "unreadable");
  *p = recs[i].data;
  *n = recs[i].len;
  return 0;
}

static void test_infer(void) {
  ds_buf fs = {0}, recs[5] = {{0}};
  const uint8_t one[] = {0x0a, 0x01, 0x01}, two[] = {0x0a, 0x02, 0x01, 0x02};
  const uint8_t f1[] = {0x0d, 0, 0, 0, 0x3f}, txt[] = {0x0a, 0x01, 'x'};
  put_entry(&fs, "label", 3, one, sizeof one);
  put_entry(&fs, "score", 2, f1, sizeof f1);
  wrap_example(&recs[0], &fs);
  fs.len = 0;
  put_entry(&fs, "label", 3, one, sizeof one);
  put_entry(&fs, "mixed", 3, one, sizeof one);
  put_entry(&fs, "name", 1, txt, sizeof txt);
  wrap_example(&recs[1], &fs);
  fs.len = 0;
  put_entry(&fs, "never", 3, one, sizeof one);
  wrap_example(&recs[2], &fs); /* unreadable at first */
  ds_buf_append(&recs[3], "\x0a\x05", 2); /* not an Example */
  fs.len = 0;
  put_entry(&fs, "mixed", 3, two, sizeof two);
  put_entry(&fs, "late", 3, one, sizeof one);
  wrap_example(&recs[4], &fs);
  ds_schema s = {0};
  char *err = NULL;
  /* a record that cannot be read, or is not an Example, fails inference
   * naming it (issue 22: it used to be skipped, and a bag of no Examples
   * gave a table of no columns) */
  CHECK(ds_tfex_infer(&s, 5, 100, get_record, recs, 1, 0, &err) == -1);
  CHECK(err && strstr(err, "record 2: unreadable"));
  free(err);
  err = NULL;
  ds_schema_free(&s);
  s = (ds_schema){0};
  unreadable_record = UINT64_MAX;
  CHECK(ds_tfex_infer(&s, 5, 100, get_record, recs, 1, 0, &err) == -1);
  CHECK(err && strstr(err, "record 3: not a tf.train.Example"));
  free(err);
  err = NULL;
  ds_schema_free(&s);
  s = (ds_schema){0};
  recs[3].len = 0; /* the empty Example: no features */
  CHECK(ds_tfex_infer(&s, 1, 100, get_record, recs + 3, 1, 0, &err) == -1);
  CHECK(err && strstr(err, "hold no tf.train.Example feature"));
  free(err);
  err = NULL;
  ds_schema_free(&s);
  s = (ds_schema){0};
  CHECK(ds_tfex_infer(&s, 5, 100, get_record, recs, 1, 0, &err) == 0);
  CHECK(s.n == 6);
  if (s.n == 6) {
    CHECK_STR(s.cols[0].field, "label");
    CHECK_STR(ds_schema_decltype(&s.cols[0]), "INTEGER");
    CHECK_STR(s.cols[1].field, "score");
    CHECK_STR(ds_schema_decltype(&s.cols[1]), "REAL");
    CHECK_STR(s.cols[2].field, "mixed");
    CHECK_STR(ds_schema_decltype(&s.cols[2]), ""); /* INTEGER and .npy */
    CHECK_STR(s.cols[3].field, "name");
    CHECK_STR(ds_schema_decltype(&s.cols[3]), "TEXT"); /* bytes_text */
    CHECK_STR(s.cols[4].field, "never");
    CHECK_STR(s.cols[5].field, "late");
  }
  ds_schema_free(&s);
  s = (ds_schema){0};
  CHECK(ds_tfex_infer(&s, 5, 2, get_record, recs, 0, 0, &err) == 0 && s.n == 4);
  if (s.n == 4) CHECK_STR(ds_schema_decltype(&s.cols[3]), "BLOB"); /* bytes */
  ds_schema_free(&s);
  for (int i = 0; i < 5; i++) ds_buf_free(&recs[i]);
  ds_buf_free(&fs);
}

int main(void) {
  test_infer();
  test_cells();
  test_kinds_and_order();
  test_repeated_names();
  test_limit_and_errors();
  return check_exit();
}
