/* test_datadings_reader.c - the datadings reader without SQLite, against
 * the upstream fixtures' expected JSON (read with jansson): count, every
 * key and offset, find_index, absent keys, Bloom false positives (bit-exact
 * against upstream), key hashes, md5 lines, the sharded glob; then crafted
 * damage, a small mutation fuzz, and the key table for 1,000,000 synthetic
 * keys (build time and memory printed as INFO, never asserted). */
#include <jansson.h>
#include <md5.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "check.h"
#include "fixture.h"
#include "core/cancel.h"
#include "core/common.h"
#include "formats/datadings/datadings.h"

/* The windows samples are read through (one for the whole test). */
static datadings_io t_io;

#define FIX "tests/fixtures/upstream/datadings/"

static char tmp_root[64];

/* ------------------------------------------------------------------ */
/* Helpers                                                              */

/* Load expected/<name>.json (strings may hold NUL). */
static json_t *load_expected(const char *name) {
  char path[256];
  snprintf(path, sizeof path, FIX "expected/%s.json", name);
  json_error_t e;
  json_t *j = json_load_file(path, JSON_ALLOW_NUL, &e);
  if (!j) check_note("    %s: %s (line %d)\n", path, e.text, e.line);
  return j;
}

/* Decode hex text into out; returns the byte count. */
static size_t unhex(const char *h, uint8_t *out, size_t cap) {
  size_t n = strlen(h) / 2;
  for (size_t i = 0; i < n && i < cap; i++) {
    unsigned x = 0;
    sscanf(h + 2 * i, "%2x", &x);
    out[i] = (uint8_t)x;
  }
  return n < cap ? n : cap;
}

/* Write bytes to a file (replacing it). */
static void spit(const char *path, const void *p, size_t n) {
  FILE *f = fopen(path, "wb");
  if (!f) return;
  if (n) fwrite(p, 1, n, f);
  fclose(f);
}

/* Overwrite n bytes at off of an existing file. */
static void patch(const char *path, long off, const void *p, size_t n) {
  FILE *f = fopen(path, "r+b");
  if (!f) return;
  fseek(f, off, SEEK_SET);
  fwrite(p, 1, n, f);
  fclose(f);
}

static const char *suffixes[] = {"", ".offsets", ".keys", ".key_hashes",
                                 ".filter", ".md5", ".index"};
#define NSUFFIX (sizeof suffixes / sizeof *suffixes)

/* Copy fixture <name>/<name>.msgpack* into a fresh temp dir as x.msgpack*;
 * returns the new data path in `out`. */
static void tmp_copy(const char *name, char *out, size_t cap) {
  static int counter;
  char dir[128];
  snprintf(dir, sizeof dir, "%s/d%d", tmp_root, counter++);
  mkdir(dir, 0700);
  snprintf(out, cap, "%s/x.msgpack", dir);
  for (size_t i = 0; i < NSUFFIX; i++) {
    char src[600], dst[600];
    snprintf(src, sizeof src, FIX "%s/%s.msgpack%s", name, name, suffixes[i]);
    snprintf(dst, sizeof dst, "%s%s", out, suffixes[i]);
    size_t n;
    uint8_t *b = fx_slurp(src, &n);
    if (!b) continue;
    if (strcmp(suffixes[i], ".md5") == 0) { /* rename the listed files */
      ds_buf t = {0};
      size_t nl = strlen(name);
      for (size_t k = 0; k < n; k++) {
        if (k + nl + 8 <= n && memcmp(b + k, name, nl) == 0 &&
            memcmp(b + k + nl, ".msgpack", 8) == 0 && k >= 2 && b[k - 1] == ' ') {
          ds_buf_puts(&t, "x");
          k += nl - 1;
        } else {
          ds_buf_append(&t, b + k, 1);
        }
      }
      spit(dst, t.data, t.len);
      ds_buf_free(&t);
    } else {
      spit(dst, b, n);
    }
    free(b);
  }
}

/* path + suffix into a static buffer. */
static const char *sib(const char *path, const char *suffix) {
  static char buf[4][600];
  static int k;
  k = (k + 1) % 4;
  snprintf(buf[k], sizeof buf[k], "%s%s", path, suffix);
  return buf[k];
}

/* Open and expect failure whose message contains `want`. */
static void expect_open_error(const char *path, const char *want) {
  datadings_reader *r = NULL;
  char *err = NULL;
  int rc = datadings_open(path, &r, &err);
  CHECK_MSG(rc == -1, "open of %s unexpectedly succeeded (want \"%s\")", path, want);
  CHECK_CONTAINS(err, want);
  printf("INFO error: %s\n", err ? err : "(none)");
  datadings_close(r);
  free(err);
}

/* Monotonic clock in milliseconds. */
static double now_ms(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return ts.tv_sec * 1e3 + ts.tv_nsec / 1e6;
}

/* ------------------------------------------------------------------ */
/* Fixture comparisons                                                  */

/* Every key of the reader equals expected keys[i] (byte-exact). */
static void check_keys(datadings_reader *r, json_t *keys, const char *label) {
  size_t bad = 0, first_bad = (size_t)-1;
  for (size_t i = 0; i < json_array_size(keys); i++) {
    json_t *k = json_array_get(keys, i);
    const uint8_t *p;
    size_t n;
    char *err = NULL;
    int rc = datadings_key(r, i, &p, &n, &err);
    if (rc || n != json_string_length(k) ||
        (n && memcmp(p, json_string_value(k), n) != 0)) {
      if (!bad++) first_bad = i;
      if (err) check_note("    %s\n", err);
    }
    free(err);
  }
  CHECK_MSG(bad == 0, "%s: %zu keys differ, first %zu", label, bad, first_bad);
}

/* The whole data file of shard `shard` (kept until the next call). */
static int load_data(datadings_reader *r, size_t shard, const uint8_t **out) {
  static ds_file f = {.vf = {.fd = -1}};
  char *err = NULL;
  ds_file_close(&f);
  if (ds_file_load(&f, datadings_shard_path(r, shard), &err)) {
    free(err);
    return -1;
  }
  *out = f.data ? f.data : (const uint8_t *)"";
  return 0;
}

/* Every sample is the bytes at offsets[i] with length offsets[i+1]-offsets[i]. */
static void check_offsets(datadings_reader *r, json_t *offs, const char *label) {
  size_t n = json_array_size(offs), bad = 0;
  const uint8_t *base = NULL;
  for (size_t i = 0; i + 1 < n; i++) {
    uint64_t a = (uint64_t)json_integer_value(json_array_get(offs, i));
    uint64_t b = (uint64_t)json_integer_value(json_array_get(offs, i + 1));
    size_t shard, len;
    uint64_t s0, s1;
    const uint8_t *p;
    char *err = NULL;
    if (datadings_sample_range(r, &t_io, i, &shard, &s0, &s1, &err) ||
        datadings_sample(r, &t_io, i, &p, &len, &err)) {
      check_note("    %s sample %zu: %s\n", label, i, err);
      free(err);
      bad++;
      continue;
    }
    if (!base && load_data(r, shard, &base)) bad++;
    if (s0 != a || s1 != b || len != b - a || !base || (len && memcmp(p, base + a, len)))
      bad++;
  }
  CHECK_MSG(bad == 0, "%s: %zu samples at wrong offsets", label, bad);
  const uint8_t *p;
  size_t len;
  char *err = NULL;
  CHECK(datadings_sample(r, &t_io, n ? n - 1 : 0, &p, &len, &err) == -1);
  CHECK_CONTAINS(err, "out of range");
  free(err);
}

/* Every [key, index] pair is found at that index. */
static void check_find(datadings_reader *r, json_t *pairs, const char *label) {
  size_t bad = 0;
  for (size_t i = 0; i < json_array_size(pairs); i++) {
    json_t *pair = json_array_get(pairs, i), *k = json_array_get(pair, 0);
    uint64_t want = (uint64_t)json_integer_value(json_array_get(pair, 1)), g = 0;
    char *err = NULL;
    int rc = datadings_find(r, (const uint8_t *)json_string_value(k),
                            json_string_length(k), &g, &err);
    if (rc != 1 || g != want) {
      check_note("    %s: find \"%s\": rc %d g %llu want %llu %s\n", label,
             json_string_value(k), rc, (unsigned long long)g,
             (unsigned long long)want, err ? err : "");
      bad++;
    }
    free(err);
  }
  CHECK_MSG(bad == 0, "%s: %zu find_index pairs wrong", label, bad);
}

/* Every absent key gives 0. */
static void check_absent(datadings_reader *r, json_t *absent, const char *label) {
  size_t bad = 0;
  for (size_t i = 0; i < json_array_size(absent); i++) {
    json_t *k = json_array_get(absent, i);
    uint64_t g;
    char *err = NULL;
    if (datadings_find(r, (const uint8_t *)json_string_value(k),
                       json_string_length(k), &g, &err) != 0) {
      check_note("    %s: absent \"%s\" found or error %s\n", label,
             json_string_value(k), err ? err : "");
      bad++;
    }
    free(err);
  }
  CHECK_MSG(bad == 0, "%s: %zu absent keys not reported absent", label, bad);
}

/* 1 when json array of strings `list` holds key. */
static int in_list(json_t *list, json_t *key) {
  for (size_t i = 0; i < json_array_size(list); i++) {
    json_t *x = json_array_get(list, i);
    if (json_string_length(x) == json_string_length(key) &&
        memcmp(json_string_value(x), json_string_value(key),
               json_string_length(x)) == 0)
      return 1;
  }
  return 0;
}

/* The filter alone: "maybe" exactly for upstream's false positives among
 * the absent keys, and for every present key. */
static void check_bloom(datadings_reader *r, json_t *bloom, json_t *absent,
                        json_t *keys, const char *label) {
  if (!json_is_object(bloom)) {
    CHECK_MSG(datadings_filter_maybe(r, 0, (const uint8_t *)"x", 1) == -1,
              "%s: no filter expected", label);
    return;
  }
  json_t *fps = json_object_get(bloom, "bloom_false_positives");
  size_t bad = 0;
  for (size_t i = 0; i < json_array_size(absent); i++) {
    json_t *k = json_array_get(absent, i);
    int m = datadings_filter_maybe(r, 0, (const uint8_t *)json_string_value(k),
                                   json_string_length(k));
    if (m != in_list(fps, k)) bad++;
  }
  for (size_t i = 0; i < json_array_size(keys); i++) {
    json_t *k = json_array_get(keys, i);
    if (datadings_filter_maybe(r, 0, (const uint8_t *)json_string_value(k),
                               json_string_length(k)) != 1)
      bad++;
  }
  CHECK_MSG(bad == 0, "%s: %zu filter answers differ from upstream", label, bad);
}

/* Stored salt and the first stored hashes equal our BLAKE2s. */
static void check_hashes(const char *path, json_t *kh, json_t *keys,
                         const char *label) {
  if (!json_is_object(kh)) return;
  size_t n;
  uint8_t *file = fx_slurp(sib(path, ".key_hashes"), &n);
  uint8_t salt[8];
  unhex(json_string_value(json_object_get(kh, "salt_hex")), salt, 8);
  CHECK_MSG(file && n >= 8 && memcmp(file, salt, 8) == 0, "%s: salt", label);
  CHECK_MSG(n == 8 + 8 * (size_t)json_integer_value(json_object_get(kh, "count")),
            "%s: key_hashes size", label);
  json_t *first = json_object_get(kh, "first_hashes_hex");
  size_t bad = 0;
  for (size_t i = 0; i < json_array_size(first); i++) {
    uint8_t want[8], got[8];
    unhex(json_string_value(json_array_get(first, i)), want, 8);
    json_t *k = json_array_get(keys, i);
    datadings_key_hash(salt, (const uint8_t *)json_string_value(k),
                       json_string_length(k), got);
    if (memcmp(got, want, 8) != 0 || !file || n < 16 + 8 * i ||
        memcmp(file + 8 + 8 * i, got, 8) != 0)
      bad++;
  }
  CHECK_MSG(bad == 0, "%s: %zu key hashes differ", label, bad);
  free(file);
}

static int stop_now(void *ctx) {
  (void)ctx;
  return 1;
}

/* datadings_verify lists the md5 file's lines, all ok. */
static void check_md5(const char *path, json_t *lines, const char *label) {
  datadings_md5_row *rows = NULL;
  size_t n = 0;
  char *err = NULL;
  if (!CHECK(datadings_verify(path, &rows, &n, &err) == 0)) {
    check_note("    %s: %s\n", label, err);
    free(err);
    return;
  }
  int ok = n == json_array_size(lines);
  for (size_t i = 0; ok && i < n; i++) {
    json_t *l = json_array_get(lines, i);
    ok = strcmp(rows[i].file, json_string_value(json_array_get(l, 0))) == 0 &&
         strcmp(rows[i].expected, json_string_value(json_array_get(l, 1))) == 0 &&
         strcmp(rows[i].actual, rows[i].expected) == 0 && rows[i].ok == 1;
  }
  CHECK_MSG(ok, "%s: md5 rows differ (%zu rows)", label, n);
  datadings_md5_free(rows, n);
  /* asked to stop (core/cancel.h), verify gives up */
  ds_cancel_scope s;
  ds_cancel_begin(&s, stop_now, NULL);
  s.next_ns = 1; /* due at once */
  rows = NULL;
  n = 0;
  CHECK(datadings_verify(path, &rows, &n, &err) == -1 && rows == NULL);
  CHECK_STR(err, "interrupted");
  CHECK(ds_cancel_end(&s) == 1);
  free(err);
}

/* One single-file fixture against its expected JSON. */
static void check_dataset(const char *name, const char *method) {
  char path[256];
  snprintf(path, sizeof path, FIX "%s/%s.msgpack", name, name);
  json_t *j = load_expected(name);
  if (!CHECK(j != NULL)) return;
  datadings_reader *r;
  char *err = NULL;
  if (!CHECK(datadings_open(path, &r, &err) == 0)) {
    check_note("    %s: %s\n", name, err);
    free(err);
    json_decref(j);
    return;
  }
  printf("-- %s\n", name);
  CHECK(datadings_count(r) == (uint64_t)json_integer_value(json_object_get(j, "n")));
  CHECK(datadings_nshards(r) == 1);
  CHECK_STR(datadings_shard_path(r, 0), path);
  CHECK_STR(datadings_lookup_method(r), method);
  json_t *keys = json_object_get(j, "keys");
  check_keys(r, keys, name);
  check_offsets(r, json_object_get(j, "offsets"), name);
  check_find(r, json_object_get(j, "find_index"), name);
  check_absent(r, json_object_get(j, "absent_keys"), name);
  check_bloom(r, json_object_get(j, "bloom"), json_object_get(j, "absent_keys"),
              keys, name);
  check_hashes(path, json_object_get(j, "key_hashes"), keys, name);
  check_md5(path, json_object_get(j, "md5_file"), name);
  CHECK(datadings_key_table_bytes(r) > 0 || datadings_count(r) == 0);
  datadings_close(r);
  json_decref(j);
}

/* md5 hex of a buffer. */
static void md5_hex(const uint8_t *p, size_t n, char out[33]) {
  MD5_CTX c;
  uint8_t d[16];
  MD5Init(&c);
  MD5Update(&c, p, n);
  MD5Final(d, &c);
  for (int i = 0; i < 16; i++) sprintf(out + 2 * i, "%02x", d[i]);
}

/* Fixture `mid`: 20000 scrambled keys, sampled offsets, the 200000 probes
 * of which exactly 15 are upstream filter false positives. */
static void test_mid(void) {
  const char *path = FIX "mid/mid.msgpack";
  json_t *j = load_expected("mid");
  datadings_reader *r;
  char *err = NULL;
  if (!CHECK(j && datadings_open(path, &r, &err) == 0)) {
    check_note("    %s\n", err);
    free(err);
    return;
  }
  printf("-- mid\n");
  CHECK(datadings_count(r) == 20000);
  { /* asked to stop, the first lookup's table build gives up; the next
       lookup builds it */
    ds_cancel_scope s;
    ds_cancel_begin(&s, stop_now, NULL);
    s.next_ns = 1; /* due at once */
    uint64_t g0;
    CHECK(datadings_find(r, (const uint8_t *)"m00000", 6, &g0, &err) == -1);
    CHECK_STR(err, "interrupted");
    CHECK(ds_cancel_end(&s) == 1);
    free(err);
    err = NULL;
  }
  ds_buf all = {0};
  size_t bad = 0, badfind = 0;
  for (uint64_t i = 0; i < 20000; i++) {
    char want[16];
    snprintf(want, sizeof want, "m%05llu", (unsigned long long)((i * 7919) % 20000));
    const uint8_t *p;
    size_t n;
    uint64_t g = 0;
    if (datadings_key(r, i, &p, &n, &err) || n != strlen(want) || memcmp(p, want, n))
      bad++;
    else if (i) ds_buf_puts(&all, "\n");
    if (!bad) ds_buf_append(&all, p, n);
    if (datadings_find(r, (const uint8_t *)want, strlen(want), &g, &err) != 1 || g != i)
      badfind++;
  }
  CHECK_MSG(bad == 0, "mid: %zu keys differ from the key rule", bad);
  CHECK_MSG(badfind == 0, "mid: %zu keys not found at their index", badfind);
  char h[33];
  md5_hex(all.data, all.len, h);
  CHECK_STR(h, json_string_value(json_object_get(j, "keys_md5")));
  ds_buf_free(&all);
  json_t *offs = json_object_get(j, "offsets_sampled");
  bad = 0;
  for (size_t i = 0; i < json_array_size(offs); i++) {
    json_t *o = json_array_get(offs, i);
    uint64_t idx = (uint64_t)json_integer_value(json_array_get(o, 0));
    uint64_t want = (uint64_t)json_integer_value(json_array_get(o, 1));
    size_t shard;
    uint64_t a, b;
    /* offsets[n] is the end of the last sample */
    int last = idx == datadings_count(r);
    if (datadings_sample_range(r, &t_io, last ? idx - 1 : idx, &shard, &a, &b, &err) ||
        (last ? b : a) != want)
      bad++;
  }
  CHECK_MSG(bad == 0, "mid: %zu sampled offsets differ", bad);
  size_t shard;
  uint64_t a, b;
  CHECK(datadings_sample_range(r, &t_io, 19999, &shard, &a, &b, &err) == 0 &&
        b == (uint64_t)json_integer_value(json_object_get(j, "data_file_size")));
  json_t *sampled = json_object_get(j, "sampled");
  bad = 0;
  for (size_t i = 0; i < json_array_size(sampled); i++) {
    json_t *s = json_array_get(sampled, i), *k = json_array_get(s, 1);
    const uint8_t *p;
    size_t n;
    if (datadings_key(r, (uint64_t)json_integer_value(json_array_get(s, 0)), &p, &n,
                      &err) ||
        n != json_string_length(k) || memcmp(p, json_string_value(k), n))
      bad++;
  }
  CHECK_MSG(bad == 0, "mid: %zu sampled keys differ", bad);
  check_find(r, json_object_get(j, "find_index"), "mid");
  check_absent(r, json_object_get(j, "absent_keys"), "mid");
  /* the probe rule: absent-{j}, j in 0..199999 */
  json_t *fps = json_object_get(json_object_get(j, "bloom"), "bloom_false_positives");
  size_t nfp = 0, wrongfp = 0, found = 0;
  for (int k = 0; k < 200000; k++) {
    char probe[32];
    int n = snprintf(probe, sizeof probe, "absent-%d", k);
    int m = datadings_filter_maybe(r, 0, (const uint8_t *)probe, (size_t)n);
    if (m == 1) {
      json_t *js = json_string(probe);
      if (!in_list(fps, js)) wrongfp++;
      json_decref(js);
      nfp++;
    }
    uint64_t g;
    if (datadings_find(r, (const uint8_t *)probe, (size_t)n, &g, &err) != 0) found++;
  }
  CHECK_MSG(nfp == json_array_size(fps) && wrongfp == 0,
            "mid: %zu filter positives (%zu not upstream's), want %zu", nfp,
            wrongfp, json_array_size(fps));
  CHECK_MSG(found == 0, "mid: %zu probes found", found);
  json_t *first5 = json_array();
  for (int i = 0; i < 5; i++) {
    char k[16];
    snprintf(k, sizeof k, "m%05d", (i * 7919) % 20000);
    json_array_append_new(first5, json_string(k));
  }
  check_hashes(path, json_object_get(j, "key_hashes"), first5, "mid");
  json_decref(first5);
  check_md5(path, json_object_get(j, "md5_file"), "mid");
  printf("INFO mid: key tables hold %zu bytes for 20000 samples\n",
         datadings_key_table_bytes(r));
  free(err);
  datadings_close(r);
  json_decref(j);
}

/* Fixture `sharded` through the glob part-*.msgpack (sizes 5, 0, 7, 3). */
static void test_sharded(void) {
  const char *path = FIX "sharded/part-*.msgpack";
  json_t *j = load_expected("sharded");
  datadings_reader *r;
  char *err = NULL;
  if (!CHECK(j && datadings_open(path, &r, &err) == 0)) {
    check_note("    %s\n", err);
    free(err);
    return;
  }
  printf("-- sharded\n");
  json_t *shards = json_object_get(j, "shards"), *sizes = json_object_get(j, "shard_sizes");
  CHECK(datadings_nshards(r) == json_array_size(shards));
  CHECK(datadings_count(r) == (uint64_t)json_integer_value(json_object_get(j, "n")));
  for (size_t s = 0; s < datadings_nshards(r); s++) {
    const char *p = datadings_shard_path(r, s);
    CHECK_STR(p ? strrchr(p, '/') + 1 : NULL,
              json_string_value(json_array_get(shards, s)));
    CHECK(datadings_shard_count(r, s) ==
          (uint64_t)json_integer_value(json_array_get(sizes, s)));
  }
  check_keys(r, json_object_get(j, "keys"), "sharded");
  check_find(r, json_object_get(j, "find_index"), "sharded");
  check_absent(r, json_object_get(j, "absent_keys"), "sharded");
  size_t shard = 9;
  uint64_t a, b;
  CHECK(datadings_sample_range(r, &t_io, 5, &shard, &a, &b, &err) == 0 && shard == 2 && a == 0);
  CHECK(datadings_sample_range(r, &t_io, 12, &shard, &a, &b, &err) == 0 && shard == 3 && a == 0);
  for (uint64_t g = 0; g < datadings_count(r); g++) {
    const uint8_t *p;
    size_t n;
    if (datadings_sample(r, &t_io, g, &p, &n, &err)) {
      CHECK_MSG(0, "sharded sample %llu: %s", (unsigned long long)g, err);
      free(err);
      err = NULL;
    }
  }
  datadings_md5_row *rows;
  size_t n;
  int ok = datadings_verify(path, &rows, &n, &err) == 0 && n == 20;
  for (size_t i = 0; ok && i < n; i++) ok = rows[i].ok == 1;
  CHECK_MSG(ok, "sharded verify: %s", err ? err : "rows");
  if (err == NULL) datadings_md5_free(rows, n);
  free(err);
  err = NULL;
  datadings_close(r);
  json_decref(j);
  expect_open_error(FIX "sharded/nomatch-*.msgpack", "no files match");
}

/* ------------------------------------------------------------------ */
/* Crafted damage                                                       */

/* Open `path` and expect sample g to fail with `want` in the message. */
static void expect_sample_error(const char *path, uint64_t g, const char *want,
                                const char *want2) {
  datadings_reader *r;
  char *err = NULL;
  if (!CHECK(datadings_open(path, &r, &err) == 0)) {
    check_note("    %s\n", err);
    free(err);
    return;
  }
  const uint8_t *p;
  size_t n;
  CHECK(datadings_sample(r, &t_io, g, &p, &n, &err) == -1);
  CHECK_CONTAINS(err, want);
  CHECK_CONTAINS(err, want2);
  printf("INFO error: %s\n", err ? err : "(none)");
  free(err);
  datadings_close(r);
}

/* 8-byte big-endian store. */
static void be64(uint8_t *p, uint64_t v) {
  for (int i = 7; i >= 0; i--, v >>= 8) p[i] = (uint8_t)v;
}

/* Damaged .offsets and data files. */
static void test_damage_offsets(void) {
  char p[256];
  uint8_t b[8];
  tmp_copy("raw", p, sizeof p); /* offsets 0 11 43 97 137 174 175 */
  truncate(sib(p, ".offsets"), 48);
  expect_open_error(p, "x.msgpack.offsets: 48 bytes, expected 56");

  tmp_copy("raw", p, sizeof p);
  be64(b, 99999);
  patch(sib(p, ".offsets"), 24, b, 8);
  expect_sample_error(p, 2, "past the end", "sample 2: offset at byte 24 says 99999");
  expect_sample_error(p, 3, "not monotonic", "sample 3");

  tmp_copy("raw", p, sizeof p);
  be64(b, 97);
  patch(sib(p, ".offsets"), 16, b, 8);
  be64(b, 43);
  patch(sib(p, ".offsets"), 24, b, 8);
  expect_sample_error(p, 2, "x.msgpack.offsets: sample 2", "bytes 16 and 24");

  tmp_copy("raw", p, sizeof p);
  be64(b, 5);
  patch(sib(p, ".offsets"), 0, b, 8);
  expect_open_error(p, "first offset");

  tmp_copy("raw", p, sizeof p); /* cut inside the last sample: the rest reads */
  truncate(p, 174);
  expect_sample_error(p, 5, "x.msgpack.offsets: sample 5: offset at byte 48 says 175",
                      "x.msgpack (174 bytes): the data file is cut short, or the "
                      "offsets are damaged (the sample starts at offset 174)");
  {
    datadings_reader *r = NULL;
    char *err = NULL;
    const uint8_t *q;
    size_t n;
    CHECK(datadings_open(p, &r, &err) == 0 && datadings_count(r) == 6);
    CHECK(r && datadings_sample(r, &t_io, 4, &q, &n, &err) == 0 && n == 37);
    datadings_close(r);
    free(err);
  }
  tmp_copy("raw", p, sizeof p);
  truncate(p, 180);
  expect_open_error(p, "extra bytes");
}

/* Damaged .keys and .key_hashes files. */
static void test_damage_keys(void) {
  char p[256];
  tmp_copy("raw", p, sizeof p);
  patch(sib(p, ".keys"), 0, "\x97", 1);
  expect_open_error(p, "expected 64 (8 * (n + 1) for the n = 7 samples");
  tmp_copy("raw", p, sizeof p);
  patch(sib(p, ".keys"), 0, "\x95", 1);
  expect_open_error(p, "x.msgpack.keys");
  tmp_copy("raw", p, sizeof p);
  patch(sib(p, ".keys"), 0, "\xdd\xff\xff\xff", 4);
  expect_open_error(p, "more than the");
  tmp_copy("raw", p, sizeof p);
  truncate(sib(p, ".key_hashes"), 48);
  expect_open_error(p, "x.msgpack.key_hashes: 48 bytes, expected 56");

  /* a non-str key entry: error from key() and find(), never a crash */
  tmp_copy("raw", p, sizeof p);
  patch(sib(p, ".keys"), 4, "\xc4", 1);
  datadings_reader *r;
  char *err = NULL;
  if (CHECK(datadings_open(p, &r, &err) == 0)) {
    const uint8_t *k;
    size_t n;
    uint64_t g;
    /* keys are walked on demand: key 0 is fine, key 1 is not */
    CHECK(datadings_key(r, 0, &k, &n, &err) == 0 && n == 2 && memcmp(k, "r0", 2) == 0);
    CHECK(datadings_key(r, 1, &k, &n, &err) == -1);
    CHECK_CONTAINS(err, "key 1 at byte 4: expected a msgpack str, found 0xc4");
    CHECK(datadings_find(r, (const uint8_t *)"r0", 2, &g, &err) == -1);
    datadings_close(r);
  }
  free(err);
  err = NULL;

  /* a str running past the end, and trailing bytes */
  tmp_copy("raw", p, sizeof p);
  patch(sib(p, ".keys"), 16, "\xbf", 1);
  if (CHECK(datadings_open(p, &r, &err) == 0)) {
    const uint8_t *k;
    size_t n;
    CHECK(datadings_key(r, 5, &k, &n, &err) == -1);
    CHECK_CONTAINS(err, "runs past the end");
    datadings_close(r);
  }
  free(err);
  err = NULL;
  tmp_copy("raw", p, sizeof p);
  FILE *f = fopen(sib(p, ".keys"), "ab");
  if (f) fputs("zz", f), fclose(f);
  if (CHECK(datadings_open(p, &r, &err) == 0)) {
    const uint8_t *k;
    size_t n;
    CHECK(datadings_key(r, 0, &k, &n, &err) == 0);
    CHECK(datadings_key(r, 5, &k, &n, &err) == -1); /* walking to the end finds them */
    CHECK_CONTAINS(err, "2 unexpected bytes after the last of 6 keys");
    CHECK(datadings_key(r, 5, &k, &n, &err) == -1); /* and keeps finding them */
    uint64_t g;
    CHECK(datadings_find(r, (const uint8_t *)"r0", 2, &g, &err) == -1);
    datadings_close(r);
  }
  free(err);
}

/* Damaged .filter files. */
static void test_damage_filter(void) {
  char p[256];
  uint8_t b[8];
  tmp_copy("raw", p, sizeof p);
  patch(sib(p, ".filter"), 0, "SIMPBLOX", 8);
  expect_open_error(p, "x.msgpack.filter: bad magic at byte 0");
  tmp_copy("raw", p, sizeof p);
  be64(b, 36);
  patch(sib(p, ".filter"), 8, b, 8);
  expect_open_error(p, "says the filter has 36 bytes");
  tmp_copy("raw", p, sizeof p);
  be64(b, 7);
  patch(sib(p, ".filter"), 16, b, 8); /* m = 7 with p = 1/6 -> 4 bytes */
  expect_open_error(p, "corrupt filter");
  tmp_copy("raw", p, sizeof p);
  be64(b, 0);
  patch(sib(p, ".filter"), 16, b, 8);
  expect_open_error(p, "corrupt filter");
  tmp_copy("raw", p, sizeof p);
  be64(b, 0x7ff8000000000000ull); /* p = NaN */
  patch(sib(p, ".filter"), 24, b, 8);
  expect_open_error(p, "corrupt filter");
  tmp_copy("raw", p, sizeof p);
  truncate(sib(p, ".filter"), 20);
  expect_open_error(p, "too short");
}

/* Damaged legacy .index files. */
static void test_damage_legacy(void) {
  char p[256];
  /* index: de 00 1e, then "legacy/000" (aa + 10) -> 00 at byte 14 */
  tmp_copy("legacy", p, sizeof p);
  patch(sib(p, ".index"), 14, "\xc0", 1);
  expect_open_error(p, "x.msgpack.index: entry 0 at byte 14: expected an unsigned");
  tmp_copy("legacy", p, sizeof p);
  patch(sib(p, ".index"), 1, "\x00\x1f", 2);
  expect_open_error(p, "x.msgpack.index: key 30: expected a msgpack str at byte 418");
  tmp_copy("legacy", p, sizeof p);
  patch(sib(p, ".index"), 1, "\xff\xff", 2);
  expect_open_error(p, "more than the");
  tmp_copy("legacy", p, sizeof p);
  patch(sib(p, ".index"), 39, "\x10", 1); /* entry 2: cc ac -> cc 10 */
  expect_sample_error(p, 1, "x.msgpack.index: sample 1", "bytes 26 and 38");
  tmp_copy("legacy", p, sizeof p);
  patch(sib(p, ".index"), 38, "\xcf\x00", 2); /* entry 2's offset eats bytes */
  expect_open_error(p, "x.msgpack.index");
}

/* Missing optional files: the other lookup paths. */
static void test_fallbacks(void) {
  char p[256];
  const char *keys[] = {"r0", "r1", "r2", "r3", "r4", "r5"};
  for (int mode = 0; mode < 3; mode++) {
    tmp_copy("raw", p, sizeof p);
    unlink(sib(p, ".filter"));
    if (mode >= 1) unlink(sib(p, ".key_hashes"));
    if (mode == 2) unlink(sib(p, ".keys"));
    datadings_reader *r;
    char *err = NULL;
    if (!CHECK(datadings_open(p, &r, &err) == 0)) {
      check_note("    %s\n", err);
      free(err);
      continue;
    }
    CHECK(datadings_count(r) == 6);
    CHECK(datadings_filter_maybe(r, 0, (const uint8_t *)"r0", 2) == -1);
    uint64_t g;
    if (mode < 2) {
      CHECK_STR(datadings_lookup_method(r), mode == 0 ? "key_hashes" : "keys");
      int ok = 1;
      for (uint64_t i = 0; i < 6; i++)
        ok &= datadings_find(r, (const uint8_t *)keys[i], 2, &g, &err) == 1 && g == i;
      CHECK(ok);
      CHECK(datadings_find(r, (const uint8_t *)"not-r2", 6, &g, &err) == 0);
      CHECK(datadings_find(r, (const uint8_t *)"", 0, &g, &err) == 0);
    } else {
      const uint8_t *k;
      size_t n;
      CHECK(datadings_key(r, 0, &k, &n, &err) == -1);
      CHECK_CONTAINS(err, "no .keys or .index");
      free(err);
      err = NULL;
      CHECK(datadings_find(r, (const uint8_t *)"r0", 2, &g, &err) == -1);
      CHECK(datadings_sample(r, &t_io, 5, &k, &n, &err) == 0 && n == 1);
    }
    free(err);
    datadings_close(r);
  }
  /* no offsets and no index */
  tmp_copy("raw", p, sizeof p);
  unlink(sib(p, ".offsets"));
  expect_open_error(p, "neither x.msgpack.offsets nor x.msgpack.index");
  /* converted without .offsets: offsets from the legacy index, keys from .keys */
  tmp_copy("converted", p, sizeof p);
  unlink(sib(p, ".offsets"));
  json_t *j = load_expected("converted");
  datadings_reader *r;
  char *err = NULL;
  if (CHECK(j && datadings_open(p, &r, &err) == 0)) {
    check_keys(r, json_object_get(j, "keys"), "converted-no-offsets");
    check_offsets(r, json_object_get(j, "offsets"), "converted-no-offsets");
    check_find(r, json_object_get(j, "find_index"), "converted-no-offsets");
    datadings_close(r);
  }
  free(err);
  json_decref(j);
  /* hostile key_hashes: every record the same; confirmation keeps answers right */
  tmp_copy("raw", p, sizeof p);
  size_t n;
  uint8_t *kh = fx_slurp(sib(p, ".key_hashes"), &n);
  for (size_t i = 16; kh && i + 8 <= n; i += 8) memcpy(kh + i, kh + 8, 8);
  if (kh) spit(sib(p, ".key_hashes"), kh, n);
  free(kh);
  err = NULL;
  if (CHECK(datadings_open(p, &r, &err) == 0)) {
    uint64_t g = 99;
    CHECK(datadings_find(r, (const uint8_t *)"r0", 2, &g, &err) == 1 && g == 0);
    /* r3's own hash is gone from the file: whether the probe for it meets
     * a slot of the h1 cluster depends on the per-open table seed, so the
     * answer is "absent" or "record 3", never another record */
    g = 99;
    int rc3 = datadings_find(r, (const uint8_t *)"r3", 2, &g, &err);
    CHECK(rc3 == 0 || (rc3 == 1 && g == 3));
    datadings_close(r);
  }
  free(err);
}

/* Path errors and md5 problems. */
static void test_paths_md5(void) {
  expect_open_error("/nonexistent/dir/none.msgpack",
                    "/nonexistent/dir/none.msgpack: cannot open: No such file or directory");
  datadings_reader *r = NULL;
  char *err = NULL;
  CHECK(datadings_open("/nonexistent/dir/none.msgpack", &r, &err) == -1);
  CHECK_STR(err, "/nonexistent/dir/none.msgpack: cannot open: No such file or directory");
  free(err);
  err = NULL;
  char p[256];
  datadings_md5_row *rows;
  size_t n;
  tmp_copy("raw", p, sizeof p);
  spit(sib(p, ".md5"), "xyz  x.msgpack\n", 15);
  CHECK(datadings_verify(p, &rows, &n, &err) == -1);
  CHECK_CONTAINS(err, "x.msgpack.md5: line 1");
  free(err);
  err = NULL;
  tmp_copy("raw", p, sizeof p);
  const char *txt = "9d2842c8b19180e612d1e0cc23a68722  x.msgpack\n\n"
                    "9D2842C8B19180E612D1E0CC23A68722  x.msgpack.gone\r\n"
                    "00000000000000000000000000000000  x.msgpack.keys\n";
  spit(sib(p, ".md5"), txt, strlen(txt));
  if (CHECK(datadings_verify(p, &rows, &n, &err) == 0) && CHECK(n == 3)) {
    CHECK(rows[0].ok == 1);
    CHECK_STR(rows[1].file, "x.msgpack.gone");
    CHECK_STR(rows[1].expected, "9d2842c8b19180e612d1e0cc23a68722");
    CHECK_STR(rows[1].actual, "");
    CHECK(rows[1].ok == 0);
    CHECK(rows[2].ok == 0 && strlen(rows[2].actual) == 32);
    datadings_md5_free(rows, n);
  }
  free(err);
  err = NULL;
  tmp_copy("raw", p, sizeof p);
  spit(sib(p, ".md5"), "9d2842c8b19180e612d1e0cc23a68722  ../x.msgpack\n", 47);
  CHECK(datadings_verify(p, &rows, &n, &err) == -1);
  CHECK_CONTAINS(err, "line 1");
  free(err);
  err = NULL;
  tmp_copy("raw", p, sizeof p);
  unlink(sib(p, ".md5"));
  CHECK(datadings_verify(p, &rows, &n, &err) == -1);
  CHECK_CONTAINS(err, "x.msgpack.md5: cannot open");
  free(err);
}

/* Mutate bytes of every file of a few fixtures; every call must return
 * cleanly (the sanitizers catch the rest). */
static void test_fuzz(void) {
  const char *names[] = {"raw", "legacy", "keys", "empty", "converted"};
  uint64_t state = 0x243f6a8885a308d3ull;
  size_t runs = 0, opened = 0;
  for (size_t d = 0; d < sizeof names / sizeof *names; d++) {
    char p[256];
    tmp_copy(names[d], p, sizeof p);
    for (size_t sfx = 0; sfx < NSUFFIX; sfx++) {
      const char *fp = sib(p, suffixes[sfx]);
      char fpath[700];
      snprintf(fpath, sizeof fpath, "%s", fp);
      size_t n;
      uint8_t *orig = fx_slurp(fpath, &n);
      if (!orig) continue;
      uint8_t *m = malloc(n + 1);
      for (int it = 0; it < 150; it++) {
        memcpy(m, orig, n);
        size_t len = n;
        state = state * 6364136223846793005ull + 1442695040888963407ull;
        int flips = 1 + (int)(state >> 61);
        for (int f = 0; f < flips && len; f++) {
          state = state * 6364136223846793005ull + 1442695040888963407ull;
          size_t at = (size_t)(state >> 33) % len;
          m[at] = it % 3 == 0 ? (uint8_t)(state >> 20) : (uint8_t)(m[at] ^ (1u << (state >> 29 & 7)));
        }
        if (it % 10 == 9 && len) len = (size_t)(state >> 40) % len;
        spit(fpath, m, len);
        datadings_reader *r;
        char *err = NULL;
        runs++;
        if (datadings_open(p, &r, &err) == 0) {
          opened++;
          for (uint64_t g = 0; g < datadings_count(r) + 1; g++) {
            const uint8_t *s;
            size_t sn;
            uint64_t gi;
            if (datadings_sample(r, &t_io, g, &s, &sn, &err) == 0 && sn) (void)s[sn - 1];
            free(err), err = NULL;
            if (datadings_key(r, g, &s, &sn, &err) == 0) {
              if (sn) (void)s[sn - 1];
              datadings_find(r, s, sn, &gi, &err);
            }
            free(err), err = NULL;
          }
          uint64_t gi;
          datadings_find(r, (const uint8_t *)"r1", 2, &gi, &err);
          free(err), err = NULL;
          datadings_close(r);
        }
        free(err);
        datadings_md5_row *rows;
        size_t rn;
        err = NULL;
        if (datadings_verify(p, &rows, &rn, &err) == 0) datadings_md5_free(rows, rn);
        free(err);
      }
      spit(fpath, orig, n);
      free(m);
      free(orig);
    }
  }
  printf("INFO fuzz: %zu mutated datasets, %zu opened\n", runs, opened);
  CHECK(runs > 0);
}

/* ------------------------------------------------------------------ */
/* 1,000,000 synthetic keys                                             */

/* Write dir/s.msgpack(+.offsets/.keys/.key_hashes) with n keys
 * "k%07u"; same_hash: every stored hash identical (hostile). */
static void make_synth(const char *data, uint32_t n, int same_hash) {
  FILE *fd = fopen(data, "wb"), *fo = fopen(sib(data, ".offsets"), "wb");
  FILE *fk = fopen(sib(data, ".keys"), "wb"), *fh = fopen(sib(data, ".key_hashes"), "wb");
  if (!fd || !fo || !fk || !fh) return;
  uint8_t salt[8], h[8], b[8];
  datadings_salt_for(0, salt);
  fwrite(salt, 1, 8, fh);
  uint8_t hdr[5] = {0xdd, (uint8_t)(n >> 24), (uint8_t)(n >> 16), (uint8_t)(n >> 8),
                    (uint8_t)n};
  fwrite(hdr, 1, 5, fk);
  uint64_t off = 0;
  for (uint32_t i = 0; i < n; i++) {
    char key[16];
    snprintf(key, sizeof key, "k%07u", i);
    uint8_t sample[16] = {0x81, 0xa3, 'k', 'e', 'y', 0xa8};
    memcpy(sample + 6, key, 8);
    fwrite(sample, 1, 14, fd);
    be64(b, off);
    fwrite(b, 1, 8, fo);
    off += 14;
    fputc(0xa8, fk);
    fwrite(key, 1, 8, fk);
    if (!same_hash || i == 0) datadings_key_hash(salt, (const uint8_t *)key, 8, h);
    fwrite(h, 1, 8, fh);
  }
  be64(b, off);
  fwrite(b, 1, 8, fo);
  fclose(fd), fclose(fo), fclose(fk), fclose(fh);
}

/* Time the key position table and the lookup table; check lookups. */
static void measure(const char *data, uint32_t n, const char *label) {
  datadings_reader *r;
  char *err = NULL;
  if (!CHECK(datadings_open(data, &r, &err) == 0)) {
    check_note("    %s\n", err);
    free(err);
    return;
  }
  const uint8_t *k;
  size_t kn;
  uint64_t g;
  double t0 = now_ms();
  CHECK(datadings_key(r, 0, &k, &kn, &err) == 0);
  double t1 = now_ms();
  CHECK(datadings_find(r, (const uint8_t *)"k0000000", 8, &g, &err) == 1 && g == 0);
  double t2 = now_ms();
  size_t bytes = datadings_key_table_bytes(r);
  printf("INFO %s (%s): %u keys: position table %.1f ms, lookup table %.1f ms, "
         "%zu bytes = %.1f bytes/sample\n",
         label, datadings_lookup_method(r), n, t1 - t0, t2 - t1, bytes,
         (double)bytes / n);
  size_t bad = 0;
  for (uint32_t i = 0; i < n; i += n / 1000) {
    char key[16];
    snprintf(key, sizeof key, "k%07u", i);
    if (datadings_find(r, (const uint8_t *)key, 8, &g, &err) != 1 || g != i) bad++;
    snprintf(key, sizeof key, "q%07u", i);
    if (datadings_find(r, (const uint8_t *)key, 8, &g, &err) != 0) bad++;
  }
  double t3 = now_ms();
  printf("INFO %s: 2000 lookups %.1f ms\n", label, t3 - t2);
  CHECK_MSG(bad == 0, "%s: %zu lookups wrong", label, bad);
  datadings_close(r);
}

/* 1M keys with and without .key_hashes, then a hostile hash file. */
static void test_million(void) {
  char data[256];
  snprintf(data, sizeof data, "%s/million.msgpack", tmp_root);
  double t0 = now_ms();
  make_synth(data, 1000000, 0);
  printf("INFO synthetic 1M dataset written in %.0f ms\n", now_ms() - t0);
  measure(data, 1000000, "1M key_hashes");
  unlink(sib(data, ".key_hashes"));
  measure(data, 1000000, "1M keys only");
  for (size_t i = 0; i < 4; i++) unlink(sib(data, suffixes[i]));

  /* 5000 identical stored hashes: short keys are held in memory and
   * hashed by the reader, so the stored hashes do not matter (the long
   * keys of test_long_keys are placed by them: a clean error there) */
  snprintf(data, sizeof data, "%s/same.msgpack", tmp_root);
  make_synth(data, 5000, 1);
  datadings_reader *r;
  char *err = NULL;
  if (CHECK(datadings_open(data, &r, &err) == 0)) {
    uint64_t g = 99;
    CHECK(datadings_find(r, (const uint8_t *)"k0000001", 8, &g, &err) == 1 && g == 1);
    datadings_close(r);
  }
  free(err);
  for (size_t i = 0; i < 4; i++) unlink(sib(data, suffixes[i]));
}

/* Write dir/l.msgpack(+.offsets/.keys/.key_hashes) with n keys of 120
 * bytes ("k%07u" then 'x's): too long to be held in memory beside the
 * table, so lookups read each candidate's key from the file and the table
 * is placed by the stored hashes. dup >= 0: sample dup gets the key of
 * sample 0; same_hash: every stored hash identical (hostile). */
static void make_long(const char *data, uint32_t n, int64_t dup, int same_hash) {
  FILE *fd = fopen(data, "wb"), *fo = fopen(sib(data, ".offsets"), "wb");
  FILE *fk = fopen(sib(data, ".keys"), "wb"), *fh = fopen(sib(data, ".key_hashes"), "wb");
  if (!fd || !fo || !fk || !fh) return;
  uint8_t salt[8], h[8], b[8];
  datadings_salt_for(0, salt);
  fwrite(salt, 1, 8, fh);
  uint8_t hdr[3] = {0xdc, (uint8_t)(n >> 8), (uint8_t)n};
  fwrite(hdr, 1, 3, fk);
  for (uint32_t i = 0; i < n; i++) {
    char key[121];
    snprintf(key, sizeof key, "k%07u", dup == (int64_t)i ? 0u : i);
    memset(key + 8, 'x', 112);
    be64(b, i);
    fwrite(b, 1, 8, fo);
    fputc(0xc0, fd); /* each sample: msgpack nil */
    fputc(0xd9, fk);
    fputc(120, fk);
    fwrite(key, 1, 120, fk);
    if (!same_hash || i == 0) datadings_key_hash(salt, (const uint8_t *)key, 120, h);
    fwrite(h, 1, 8, fh);
  }
  be64(b, n);
  fwrite(b, 1, 8, fo);
  fclose(fd), fclose(fo), fclose(fk), fclose(fh);
}

/* Long keys stay in the file: every lookup right, the key table smaller
 * than the keys, duplicates still refused. */
static void test_long_keys(void) {
  char data[256];
  snprintf(data, sizeof data, "%s/l.msgpack", tmp_root);
  const uint32_t n = 3000;
  make_long(data, n, -1, 0);
  datadings_reader *r;
  char *err = NULL;
  if (CHECK(datadings_open(data, &r, &err) == 0)) {
    size_t bad = 0;
    uint64_t g;
    for (uint32_t i = 0; i < n; i += 7) {
      char key[121];
      snprintf(key, sizeof key, "k%07u", i);
      memset(key + 8, 'x', 112);
      if (datadings_find(r, (const uint8_t *)key, 120, &g, &err) != 1 || g != i) bad++;
      key[119] = 'y'; /* same length and prefix, not a key */
      if (datadings_find(r, (const uint8_t *)key, 120, &g, &err) != 0) bad++;
    }
    CHECK_MSG(bad == 0, "long keys: %zu lookups wrong", bad);
    const uint8_t *k;
    size_t kn;
    CHECK(datadings_key(r, 1234, &k, &kn, &err) == 0 && kn == 120 &&
          memcmp(k, "k0001234xx", 10) == 0);
    size_t bytes = datadings_key_table_bytes(r);
    CHECK_MSG(bytes < 123u * n, "long keys: %zu bytes of key tables, the keys "
                                "themselves are not held", bytes);
    datadings_close(r);
  }
  free(err);
  err = NULL;
  make_long(data, n, 2222, 0);
  if (CHECK(datadings_open(data, &r, &err) == 0)) {
    uint64_t g;
    CHECK(datadings_find(r, (const uint8_t *)"k0000001", 8, &g, &err) == -1);
    CHECK_CONTAINS(err, "duplicate key 'k0000000");
    CHECK_CONTAINS(err, "samples 0 and 2222");
    datadings_close(r);
  }
  free(err);
  err = NULL;
  /* hostile: identical stored hashes -> a clean error, no hang */
  make_long(data, n, -1, 1);
  if (CHECK(datadings_open(data, &r, &err) == 0)) {
    uint64_t g;
    double t = now_ms();
    CHECK(datadings_find(r, (const uint8_t *)"k0000001", 8, &g, &err) == -1);
    CHECK_CONTAINS(err, "l.msgpack.key_hashes: sample");
    CHECK_CONTAINS(err, "share a hash");
    printf("INFO hostile identical hashes rejected in %.1f ms\n", now_ms() - t);
    datadings_close(r);
  }
  free(err);
  for (size_t i = 0; i < 4; i++) unlink(sib(data, suffixes[i]));
}

/* Remove the temp tree (files we made only). */
static void cleanup(void) {
  char cmd[128];
  snprintf(cmd, sizeof cmd, "rm -rf '%s'", tmp_root);
  if (system(cmd) != 0) printf("INFO could not remove %s\n", tmp_root);
}

int main(void) {
  snprintf(tmp_root, sizeof tmp_root, "/tmp/dd_test_XXXXXX");
  if (!mkdtemp(tmp_root)) return 2;
  uint8_t s0[8], s1[8];
  datadings_salt_for(0, s0);
  datadings_salt_for(1, s1);
  CHECK(memcmp(s0, "\x65\x2e\x53\x0e\xde\xe5\x89\x3b", 8) == 0);
  CHECK(memcmp(s1, "\x62\x58\x51\xe3\x87\x6e\x6e\x6d", 8) == 0);

  const char *plain[] = {"basic", "hetero", "keys", "empty", "ndarrays",
                         "raw", "salt1", "converted"};
  for (size_t i = 0; i < sizeof plain / sizeof *plain; i++)
    check_dataset(plain[i], "filter+key_hashes");
  check_dataset("legacy", "index");
  test_mid();
  test_sharded();
  printf("-- damage\n");
  test_damage_offsets();
  test_damage_keys();
  test_damage_filter();
  test_damage_legacy();
  test_fallbacks();
  test_paths_md5();
  test_fuzz();
  printf("-- 1M keys\n");
  test_million();
  test_long_keys();
  cleanup();
  return check_exit();
}
