/* test_atlas_reader.c - the atlas reader without SQLite, against the
 * upstream fixtures' expected JSON (read with jansson): for every case,
 * length, shard directories and sizes, shard meta, index dtype and values,
 * every block's offset, length, dictionary and pickle framing, and the
 * (shard, block, pos) of every listed example; then crafted damage on
 * copies in a temporary directory (truncated data.bin, bad indexes, bad
 * meta.json, missing or wrong dictionaries, stray directories), each a
 * clear error naming the file. */
#include <dirent.h>
#include <jansson.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "core/codec.h"
#include "core/common.h"
#include "core/npy.h"
#include "formats/atlas/atlas.h"

/* The window blocks are read through (one for the whole test). */
static ds_view t_view;

#define FIX "tests/fixtures/upstream/atlas/"

static char tmp_dir[64];

/* ------------------------------------------------------------ helpers */

/* Parse expected/<name>. */
static json_t *load_expected(const char *name) {
  json_error_t e;
  char path[512];
  snprintf(path, sizeof path, FIX "expected/%s", name);
  json_t *j = json_load_file(path, JSON_ALLOW_NUL, &e);
  CHECK_MSG(j != NULL, "load %s: %s", name, e.text);
  return j;
}

/* JSON integer as uint64 (0 when not an integer). */
static uint64_t ju(json_t *o, const char *key) {
  return (uint64_t)json_integer_value(json_object_get(o, key));
}

/* Run a shell command built with printf; 1 when it succeeded. */
static int sh(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static int sh(const char *fmt, ...) {
  char cmd[2048];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(cmd, sizeof cmd, fmt, ap);
  va_end(ap);
  return system(cmd) == 0;
}

/* A fresh copy of fixture `name` as tmp_dir/<as>; returns its path. */
static const char *copy_case(const char *name, const char *as) {
  static char path[512];
  snprintf(path, sizeof path, "%s/%s", tmp_dir, as);
  if (!sh("rm -rf '%s' && cp -r '" FIX "%s' '%s'", path, name, path))
    check_note("    cannot copy %s\n", name);
  return path;
}

/* Write bytes to a file (replacing it). */
static int write_file(const char *path, const void *p, size_t n) {
  FILE *f = fopen(path, "wb");
  if (!f) return -1;
  size_t w = fwrite(p, 1, n, f);
  return fclose(f) == 0 && w == n ? 0 : -1;
}

/* Write text to dir/name. */
static void write_text(const char *dir, const char *name, const char *text) {
  char path[512];
  snprintf(path, sizeof path, "%s/%s", dir, name);
  if (write_file(path, text, strlen(text))) check_note("    cannot write %s\n", path);
}

/* Write dir/index.npy with `descr` (an unsigned dtype) and n values. */
static void write_index(const char *dir, const char *descr,
                        const uint64_t *v, size_t n) {
  ds_buf b = {0};
  char *err = NULL;
  uint64_t shape[1] = {n};
  if (ds_npy_write_header(&b, descr, 0, 1, shape, &err)) {
    check_note("    npy header: %s\n", err);
    free(err);
    return;
  }
  unsigned w = (unsigned)(descr[2] - '0');
  for (size_t i = 0; i < n; i++)
    for (unsigned k = 0; k < w; k++) {
      unsigned sh8 = 8 * (descr[0] == '>' ? w - 1 - k : k);
      uint8_t byte = (uint8_t)(v[i] >> sh8);
      ds_buf_append(&b, &byte, 1);
    }
  char path[512];
  snprintf(path, sizeof path, "%s/index.npy", dir);
  if (write_file(path, b.data, b.len)) check_note("    cannot write %s\n", path);
  ds_buf_free(&b);
}

/* The index values of a shard directory, read with the reader itself. */
static size_t read_index(const char *dir, uint64_t *v, size_t cap) {
  atlas_reader *r;
  char *err = NULL;
  if (atlas_open(dir, &r, &err)) {
    check_note("    read_index %s: %s\n", dir, err);
    free(err);
    return 0;
  }
  size_t n = (size_t)atlas_num_blocks(r, 0) + 1;
  for (size_t i = 0; i < n && i < cap; i++) v[i] = atlas_index_entry(r, 0, i);
  atlas_close(r);
  return n;
}

/* Open must fail; returns the message (caller frees). */
static char *open_fails(const char *path) {
  atlas_reader *r = NULL;
  char *err = NULL;
  int rc = atlas_open(path, &r, &err);
  CHECK_MSG(rc == -1 && r == NULL && err, "open %s should fail", path);
  if (rc == 0) atlas_close(r);
  if (err) check_note("    (error: %s)\n", err);
  return err;
}

/* Open must succeed. */
static atlas_reader *open_ok(const char *path) {
  atlas_reader *r = NULL;
  char *err = NULL;
  int rc = atlas_open(path, &r, &err);
  CHECK_MSG(rc == 0, "open %s: %s", path, err ? err : "");
  free(err);
  return rc == 0 ? r : NULL;
}

/* Read every block of every shard; returns the first error (or NULL). */
static char *read_all(const atlas_reader *r) {
  ds_zstd_ctx z;
  ds_zstd_ctx_init(&z, NULL);
  ds_buf buf = {0};
  char *err = NULL;
  for (size_t k = 0; k < atlas_nshards(r) && !err; k++)
    for (uint64_t b = 0; b < atlas_num_blocks(r, k) && !err; b++) {
      const uint8_t *p;
      size_t n;
      if (atlas_block(r, &z, &t_view, k, b, &buf, &p, &n, &err)) break;
    }
  ds_buf_free(&buf);
  ds_zstd_ctx_free(&z);
  if (err) check_note("    (error: %s)\n", err);
  return err;
}

/* --------------------------------------------------- fixture checks */

/* One dictionary block of expected JSON against the reader's shard. */
static int dict_matches(const atlas_reader *r, size_t k, json_t *js,
                        json_t *root_dict) {
  int strategy = atlas_shard_strategy(r, k);
  json_t *own = json_object_get(js, "zstd_dict");
  int own_present = json_is_true(json_object_get(own, "present"));
  if (own_present != (strategy == 3)) return 0;
  if (strategy == 3) return atlas_dict_id(r, k) == ju(own, "dict_id");
  if (strategy == 2) return atlas_dict_id(r, k) == ju(root_dict, "dict_id");
  return atlas_dict_path(r, k) == NULL && atlas_dict_id(r, k) == 0;
}

/* index dtype and values. */
static int index_matches(const atlas_reader *r, size_t k, json_t *ix) {
  json_t *vals = json_object_get(ix, "values");
  if (strcmp(atlas_index_dtype(r, k),
             json_string_value(json_object_get(ix, "dtype"))) != 0)
    return 0;
  if (json_array_size(vals) != atlas_num_blocks(r, k) + 1) return 0;
  for (size_t i = 0; i < json_array_size(vals); i++)
    if (atlas_index_entry(r, k, i) !=
        (uint64_t)json_integer_value(json_array_get(vals, i)))
      return 0;
  return 1;
}

/* Every block: range, stored frame dictionary ID, pickle length and
 * framing (PROTO 4/5 first, STOP last). */
static int blocks_match(const atlas_reader *r, size_t k, json_t *blocks,
                        const char *label) {
  ds_zstd_ctx z;
  ds_zstd_ctx_init(&z, NULL);
  ds_buf buf = {0};
  char *err = NULL;
  int ok = json_array_size(blocks) == atlas_num_blocks(r, k);
  for (size_t b = 0; ok && b < json_array_size(blocks); b++) {
    json_t *jb = json_array_get(blocks, b);
    uint64_t off, len;
    const uint8_t *sp, *p;
    size_t sn, n;
    ok = atlas_block_range(r, k, b, &off, &len, &err) == 0 &&
         off == ju(jb, "offset") && len == ju(jb, "length") &&
         atlas_block_stored(r, &t_view, k, b, &sp, &sn, &err) == 0 && sn == len;
    json_t *fr = json_object_get(jb, "zstd_frame");
    if (ok && fr) ok = ds_zstd_frame_dict_id(sp, sn) == ju(fr, "dict_id");
    ok = ok && atlas_block(r, &z, &t_view, k, b, &buf, &p, &n, &err) == 0 &&
         n == ju(jb, "pickle_length") && n >= 3 && p[0] == 0x80 &&
         p[1] == ju(jb, "pickle_protocol") && (p[1] == 4 || p[1] == 5) &&
         p[n - 1] == '.';
    if (!ok) check_note("    %s shard %zu block %zu differs: %s\n", label, k, b,
                    err ? err : "values");
  }
  free(err);
  ds_buf_free(&buf);
  ds_zstd_ctx_free(&z);
  return ok;
}

/* Sum of per-block example counts equals the shard's, all but the last
 * block full. */
static int block_counts_consistent(const atlas_reader *r, size_t k) {
  uint64_t nb = atlas_num_blocks(r, k), sum = 0;
  for (uint64_t b = 0; b < nb; b++) {
    uint64_t e = atlas_block_examples(r, k, b);
    if (e == 0 || e > atlas_block_size(r, k)) return 0;
    if (b + 1 < nb && e != atlas_block_size(r, k)) return 0;
    sum += e;
  }
  return sum == atlas_shard_count(r, k) && atlas_block_examples(r, k, nb) == 0;
}

/* One shard of expected JSON. */
static void check_shard(const atlas_reader *r, size_t k, json_t *js,
                        json_t *root_dict, const char *label) {
  const atlas_meta *m = atlas_shard_meta(r, k);
  json_t *jm = json_object_get(js, "meta");
  CHECK_MSG(m->version == 1 && m->block_size == ju(jm, "block_size") &&
                m->stored_examples == ju(jm, "stored_examples") &&
                m->compression_strategy == (int)ju(jm, "compression_strategy") &&
                m->compression_level == (int64_t)ju(jm, "compression_level") &&
                m->compression_dict_size ==
                    json_number_value(json_object_get(jm, "compression_dict_size")),
            "%s shard %zu meta", label, k);
  CHECK_MSG(atlas_num_blocks(r, k) == ju(js, "num_blocks"), "%s shard %zu num_blocks",
            label, k);
  json_t *ds = json_object_get(js, "data_bin_size");
  CHECK_MSG(json_is_null(ds) ? !atlas_has_data(r, k) && atlas_data_size(r, k) == 0
                             : atlas_has_data(r, k) &&
                                   atlas_data_size(r, k) == ju(js, "data_bin_size"),
            "%s shard %zu data.bin size", label, k);
  CHECK_MSG(dict_matches(r, k, js, root_dict), "%s shard %zu dictionary", label, k);
  CHECK_MSG(index_matches(r, k, json_object_get(js, "index")),
            "%s shard %zu index dtype %s and values", label, k, atlas_index_dtype(r, k));
  CHECK_MSG(blocks_match(r, k, json_object_get(js, "blocks"), label),
            "%s shard %zu blocks", label, k);
  CHECK_MSG(block_counts_consistent(r, k), "%s shard %zu block example counts",
            label, k);
}

/* Every listed example's (shard, block, pos); with the full list, also
 * the example count of every block. */
static void check_examples(const atlas_reader *r, json_t *ex, int full,
                           const char *label) {
  int ok = 1;
  uint64_t *seen = calloc(atlas_nshards(r) * 4096 + 1, sizeof *seen);
  for (size_t i = 0; ok && i < json_array_size(ex); i++) {
    json_t *e = json_array_get(ex, i);
    size_t shard;
    uint64_t block, pos, g = ju(e, "i");
    atlas_locate(r, g, &shard, &block, &pos);
    ok = shard == ju(e, "shard") && block == ju(e, "block") && pos == ju(e, "pos") &&
         pos < atlas_block_examples(r, shard, block) &&
         atlas_shard_first(r, shard) + block * atlas_block_size(r, shard) + pos == g;
    if (!ok)
      check_note("    %s example %llu: got (%zu, %llu, %llu)\n", label,
             (unsigned long long)g, shard, (unsigned long long)block,
             (unsigned long long)pos);
    if (ok && full && block < 4096) seen[shard * 4096 + block]++;
  }
  CHECK_MSG(ok, "%s: (shard, block, pos) of %zu examples", label, json_array_size(ex));
  if (full) {
    int counts = 1;
    for (size_t k = 0; k < atlas_nshards(r); k++)
      for (uint64_t b = 0; b < atlas_num_blocks(r, k) && b < 4096; b++)
        counts &= seen[k * 4096 + b] == atlas_block_examples(r, k, b);
    CHECK_MSG(counts, "%s: examples per block", label);
  }
  free(seen);
}

/* Walking every global index visits shards, blocks and positions in order. */
static void check_locate_walk(const atlas_reader *r, const char *label) {
  size_t ps = 0;
  uint64_t pb = 0, pp = 0;
  int ok = 1;
  for (uint64_t g = 0; ok && g < atlas_count(r); g++) {
    size_t s;
    uint64_t b, p;
    atlas_locate(r, g, &s, &b, &p);
    int next = g == 0 ? atlas_shard_first(r, s) == 0 && b == 0 && p == 0
                      : (s == ps && b == pb && p == pp + 1) ||
                            (s == ps && b == pb + 1 && p == 0) ||
                            (s > ps && b == 0 && p == 0 && atlas_shard_first(r, s) == g);
    ok = next && s < atlas_nshards(r) && atlas_shard_count(r, s) > 0;
    ps = s, pb = b, pp = p;
  }
  size_t s;
  uint64_t b, p;
  atlas_locate(r, atlas_count(r), &s, &b, &p);
  CHECK_MSG(ok && s == atlas_nshards(r), "%s: locate walk over all %llu examples",
            label, (unsigned long long)atlas_count(r));
}

/* One fixture case against expected/<file>. */
static void check_case(const char *file) {
  json_t *j = load_expected(file);
  if (!j) return;
  const char *label = json_string_value(json_object_get(j, "name"));
  char path[512];
  snprintf(path, sizeof path, FIX "%s", json_string_value(json_object_get(j, "path")));
  atlas_reader *r = open_ok(path);
  if (!r) {
    json_decref(j);
    return;
  }
  int bare = strcmp(json_string_value(json_object_get(j, "kind")), "shard") == 0;
  CHECK_MSG(atlas_is_bare_shard(r) == bare, "%s kind", label);
  CHECK_MSG(atlas_count(r) == ju(j, "length"), "%s length %llu", label,
            (unsigned long long)atlas_count(r));
  json_t *sizes = json_object_get(j, "shard_sizes_reader");
  int ok = atlas_nshards(r) == json_array_size(sizes);
  for (size_t k = 0; ok && k < atlas_nshards(r); k++)
    ok = atlas_shard_count(r, k) == (uint64_t)json_integer_value(json_array_get(sizes, k));
  CHECK_MSG(ok, "%s shard sizes", label);
  json_t *dirs = json_object_get(j, "shard_dirs");
  ok = 1;
  for (size_t k = 0; ok && k < atlas_nshards(r); k++)
    ok = strcmp(atlas_shard_name(r, k),
                bare ? "." : json_string_value(json_array_get(dirs, k))) == 0;
  CHECK_MSG(ok && (bare || json_array_size(dirs) == atlas_nshards(r)),
            "%s shard directory names", label);
  json_t *rm = json_object_get(j, "root_meta");
  CHECK_MSG(atlas_root_strategy(r) ==
                (bare ? -1 : (int)ju(rm, "compression_strategy")),
            "%s root strategy", label);
  json_t *shards = json_object_get(j, "shards");
  for (size_t k = 0; k < atlas_nshards(r) && k < json_array_size(shards); k++)
    check_shard(r, k, json_array_get(shards, k), json_object_get(j, "root_zstd_dict"),
                label);
  json_t *ex = json_object_get(j, "examples");
  if (ex) check_examples(r, ex, 1, label);
  else check_examples(r, json_object_get(j, "examples_sampled"), 0, label);
  CHECK_MSG(ex || json_array_size(json_object_get(j, "examples_sampled")) > 0,
            "%s has examples to check", label);
  check_locate_walk(r, label);
  atlas_close(r);
  json_decref(j);
}

/* Every case listed under expected/. */
static void test_fixtures(void) {
  DIR *d = opendir(FIX "expected");
  if (!CHECK(d != NULL)) return;
  char *names[64];
  size_t n = 0;
  struct dirent *e;
  while ((e = readdir(d)) != NULL && n < 64) {
    size_t l = strlen(e->d_name);
    if (l > 5 && strcmp(e->d_name + l - 5, ".json") == 0) names[n++] = strdup(e->d_name);
  }
  closedir(d);
  CHECK_MSG(n >= 16, "%zu expected files", n);
  for (size_t i = 0; i < n; i++) {
    check_case(names[i]);
    free(names[i]);
  }
}

/* ------------------------------------------------------------ damage */

/* Open `path` (it must open) and read block `bad` of shard `shard`, which
 * must fail naming the file, and block 0, which must read. */
static void expect_cut(const char *path, size_t shard, uint64_t bad, const char *file) {
  atlas_reader *r = NULL;
  char *err = NULL;
  int rc = atlas_open(path, &r, &err);
  CHECK_MSG(rc == 0, "open %s: %s", path, err ? err : "");
  if (rc) {
    free(err);
    return;
  }
  ds_zstd_ctx z;
  ds_zstd_ctx_init(&z, NULL);
  ds_buf buf = {0};
  const uint8_t *p;
  size_t n;
  CHECK(atlas_block(r, &z, &t_view, shard, 0, &buf, &p, &n, &err) == 0);
  CHECK(atlas_block(r, &z, &t_view, shard, bad, &buf, &p, &n, &err) == -1);
  CHECK_CONTAINS(err, file);
  CHECK_CONTAINS(err, "run past the end of the file");
  free(err);
  ds_buf_free(&buf);
  ds_zstd_ctx_free(&z);
  atlas_close(r);
}

/* data.bin cut short, and index entries past the end of an intact one: the
 * shard opens, its intact blocks read, the cut one fails (issue 11 item 10). */
static void test_truncation(void) {
  const char *p = copy_case("none", "trunc");
  sh("truncate -s -10 '%s/1/data.bin'", p);
  expect_cut(p, 1, 2, "trunc/1/data.bin: block 2");

  p = copy_case("none", "pastend");
  char dir[512];
  snprintf(dir, sizeof dir, "%s/0", p);
  uint64_t v[16];
  size_t n = read_index(dir, v, 16);
  v[n - 1] += 5;
  write_index(dir, "<u2", v, n);
  expect_cut(p, 0, 2, "pastend/0/data.bin: block 2");
  expect_cut(dir, 0, 2, "pastend/0/data.bin: block 2"); /* the same shard opened bare */
  char *err;

  p = copy_case("none", "nodata");
  sh("rm '%s/2/data.bin'", p);
  err = open_fails(p);
  CHECK_CONTAINS(err, "nodata/2/data.bin: missing, but");
  CHECK_CONTAINS(err, "nodata/2/meta.json says 18 examples");
  free(err);

  p = copy_case("empty", "emptydata");
  sh("printf 'xyz' > '%s/0/data.bin'", p);
  err = open_fails(p);
  CHECK_CONTAINS(err, "emptydata/0/index.npy: last entry (entry 0) is 0");
  CHECK_CONTAINS(err, "has 3 bytes");
  free(err);
}

/* Offsets going backwards, not starting at 0, wrong counts and dtypes. */
static void test_bad_index(void) {
  const char *p = copy_case("none", "badidx");
  char dir[512], *err;
  snprintf(dir, sizeof dir, "%s/1", p);
  uint64_t v[16], w[16];
  size_t n = read_index(dir, v, 16);
  CHECK(n == 4);
  memcpy(w, v, sizeof v);
  w[1] = v[2], w[2] = v[1];
  write_index(dir, "<u2", w, n);
  err = open_fails(p);
  CHECK_CONTAINS(err, "badidx/1/index.npy: entry 2 is");
  CHECK_CONTAINS(err, "less than entry 1");
  free(err);

  memcpy(w, v, sizeof v);
  w[0] = 1;
  write_index(dir, "<u2", w, n);
  err = open_fails(p);
  CHECK_CONTAINS(err, "badidx/1/index.npy: entry 0 is 1, expected 0");
  free(err);

  write_index(dir, "<u2", v, n - 1);
  err = open_fails(p);
  CHECK_CONTAINS(err, "badidx/1/index.npy: 3 entries, but");
  CHECK_CONTAINS(err, "badidx/1/meta.json says 20 examples in blocks of 8, which "
                      "needs 3 blocks (4 entries)");
  free(err);

  write_index(dir, "<i4", v, n);
  err = open_fails(p);
  CHECK_CONTAINS(err, "badidx/1/index.npy: dtype <i4");
  CHECK_CONTAINS(err, "unsigned");
  free(err);

  write_text(dir, "index.npy", "not numpy at all");
  err = open_fails(p);
  CHECK_CONTAINS(err, "badidx/1/index.npy: not a .npy file");
  free(err);

  /* big-endian entries are fine */
  write_index(dir, ">u2", v, n);
  atlas_reader *r = open_ok(p);
  if (r) {
    CHECK_STR(atlas_index_dtype(r, 1), ">u2");
    CHECK(atlas_index_entry(r, 1, 3) == v[3]);
    err = read_all(r);
    CHECK_MSG(err == NULL, "read all with >u2 index: %s", err);
    free(err);
    atlas_close(r);
  }
  /* and '|u1' / '<u8' too */
  write_index(dir, "<u8", v, n);
  r = open_ok(p);
  if (r) {
    CHECK_STR(atlas_index_dtype(r, 1), "<u8");
    atlas_close(r);
  }

  /* a boundary moved: both neighbouring blocks fail, naming themselves */
  p = copy_case("standard", "moved");
  snprintf(dir, sizeof dir, "%s/0", p);
  n = read_index(dir, v, 16);
  v[1] -= 3;
  write_index(dir, "<u2", v, n);
  r = open_ok(p);
  if (r) {
    ds_zstd_ctx z;
    ds_zstd_ctx_init(&z, NULL);
    ds_buf buf = {0};
    const uint8_t *q;
    size_t qn;
    err = NULL;
    CHECK(atlas_block(r, &z, &t_view, 0, 0, &buf, &q, &qn, &err) == -1);
    CHECK_CONTAINS(err, "moved/0/data.bin: block 0 (");
    printf("    (error: %s)\n", err);
    CHECK(atlas_block(r, &z, &t_view, 0, 1, &buf, &q, &qn, &err) == -1);
    CHECK_CONTAINS(err, "moved/0/data.bin: block 1 (");
    printf("    (error: %s)\n", err);
    CHECK(atlas_block(r, &z, &t_view, 0, 2, &buf, &q, &qn, &err) == 0);
    CHECK(atlas_block(r, &z, &t_view, 0, 4, &buf, &q, &qn, &err) == -1);
    CHECK_CONTAINS(err, "moved/0: block 4 does not exist (4 blocks)");
    CHECK(atlas_block(r, &z, &t_view, 9, 0, &buf, &q, &qn, &err) == -1);
    CHECK_CONTAINS(err, "shard 9 does not exist (4 shards)");
    free(err);
    ds_buf_free(&buf);
    ds_zstd_ctx_free(&z);
    atlas_close(r);
  }
}

/* meta.json damage: invalid JSON, version 2, claims, missing files. */
static void test_bad_meta(void) {
  const char *p = copy_case("none", "meta");
  char dir[512], *err;
  write_text(p, "meta.json", "{\"version\": 1, \"shard_sizes\": [20, 20,");
  err = open_fails(p);
  CHECK_CONTAINS(err, "meta/meta.json: invalid JSON at character");
  free(err);

  write_text(p, "meta.json", "[1, 2]");
  err = open_fails(p);
  CHECK_CONTAINS(err, "meta/meta.json: not a JSON object");
  free(err);

  write_text(p, "meta.json",
             "{\"version\": 2, \"shard_sizes\": [20, 20, 18], \"compression_strategy\": 0}");
  err = open_fails(p);
  CHECK_CONTAINS(err, "meta/meta.json: format version 2 is not supported");
  free(err);

  write_text(p, "meta.json",
             "{\"version\": 1, \"shard_sizes\": [20, 20, 18], \"compression_strategy\": 7}");
  err = open_fails(p);
  CHECK_CONTAINS(err, "meta/meta.json: \"compression_strategy\" is 7");
  free(err);

  write_text(p, "meta.json", "{\"version\": 1, \"compression_strategy\": 0}");
  err = open_fails(p);
  CHECK_CONTAINS(err, "meta/meta.json: \"shard_sizes\" is missing");
  free(err);

  write_text(p, "meta.json",
             "{\"version\": 1, \"shard_sizes\": [20, 21, 18], \"compression_strategy\": 0}");
  err = open_fails(p);
  CHECK_CONTAINS(err, "meta/meta.json: shard_sizes[1] is 21, but");
  CHECK_CONTAINS(err, "meta/1/meta.json says stored_examples 20");
  free(err);

  write_text(p, "meta.json",
             "{\"version\": 1, \"shard_sizes\": [20, 20], \"compression_strategy\": 0}");
  err = open_fails(p);
  CHECK_CONTAINS(err, "shard_sizes lists 2 shards, but");
  CHECK_CONTAINS(err, "has 3 shard directories");
  free(err);

  p = copy_case("none", "smeta");
  snprintf(dir, sizeof dir, "%s/1", p);
  /* more examples than the blocks hold */
  write_text(dir, "meta.json",
             "{\"version\": 1, \"block_size\": 8, \"stored_examples\": 30, "
             "\"compression_strategy\": 0, \"compression_level\": 3, "
             "\"compression_dict_size\": 0.01}");
  err = open_fails(p);
  CHECK_CONTAINS(err, "smeta/1/index.npy: 4 entries, but");
  CHECK_CONTAINS(err, "smeta/1/meta.json says 30 examples");
  free(err);
  /* a few more, same block count: the root's shard_sizes disagree */
  write_text(dir, "meta.json",
             "{\"version\": 1, \"block_size\": 8, \"stored_examples\": 23, "
             "\"compression_strategy\": 0}");
  err = open_fails(p);
  CHECK_CONTAINS(err, "shard_sizes[1] is 20, but");
  CHECK_CONTAINS(err, "smeta/1/meta.json says stored_examples 23");
  free(err);

  write_text(dir, "meta.json",
             "{\"version\": 2, \"block_size\": 8, \"stored_examples\": 20, "
             "\"compression_strategy\": 0}");
  err = open_fails(p);
  CHECK_CONTAINS(err, "smeta/1/meta.json: format version 2 is not supported");
  free(err);

  write_text(dir, "meta.json",
             "{\"version\": 1, \"block_size\": 0, \"stored_examples\": 20, "
             "\"compression_strategy\": 0}");
  err = open_fails(p);
  CHECK_CONTAINS(err, "smeta/1/meta.json: \"block_size\" is 0, must be at least 1");
  free(err);

  write_text(dir, "meta.json",
             "{\"version\": 1, \"block_size\": 8, \"stored_examples\": -1, "
             "\"compression_strategy\": 0}");
  err = open_fails(p);
  CHECK_CONTAINS(err, "smeta/1/meta.json: \"stored_examples\" is -1");
  free(err);

  write_text(dir, "meta.json",
             "{\"version\": 1, \"block_size\": \"8\", \"stored_examples\": 20, "
             "\"compression_strategy\": 0}");
  err = open_fails(p);
  CHECK_CONTAINS(err, "smeta/1/meta.json: \"block_size\" is not an integer");
  free(err);

  write_text(dir, "meta.json", "{\"version\": 1, \"block_size\": 8,, }");
  err = open_fails(p);
  CHECK_CONTAINS(err, "smeta/1/meta.json: invalid JSON");
  free(err);

  sh("rm '%s/meta.json'", dir);
  err = open_fails(p);
  CHECK_CONTAINS(err, "smeta/1/meta.json: cannot open");
  free(err);
}

/* Dictionaries: missing shared or own, wrong one, bare strategy-2 shard. */
static void test_dictionaries(void) {
  const char *p = copy_case("shared_dict", "nodict");
  sh("rm '%s/zstd_dict.bin'", p);
  char *err = open_fails(p);
  CHECK_CONTAINS(err, "nodict/zstd_dict.bin: missing, but");
  CHECK_CONTAINS(err, "compression_strategy 2");
  free(err);

  p = copy_case("per_shard_dict", "noown");
  sh("rm '%s/1/zstd_dict.bin'", p);
  err = open_fails(p);
  CHECK_CONTAINS(err, "noown/1/zstd_dict.bin: missing, but");
  CHECK_CONTAINS(err, "noown/1/meta.json says compression_strategy 3");
  free(err);

  sh("printf '' > '%s/1/zstd_dict.bin'", p);
  err = open_fails(p);
  CHECK_CONTAINS(err, "noown/1/zstd_dict.bin: empty dictionary file");
  free(err);

  sh("printf '\\067\\244\\060\\354\\001\\002\\003\\004garbage' > '%s/1/zstd_dict.bin'", p);
  err = open_fails(p);
  CHECK_CONTAINS(err, "noown/1/zstd_dict.bin: not a usable zstd dictionary");
  free(err);

  /* another shard's dictionary: opens, blocks fail naming both IDs */
  p = copy_case("per_shard_dict", "wrongdict");
  sh("cp '%s/1/zstd_dict.bin' '%s/0/zstd_dict.bin'", p, p);
  atlas_reader *r = open_ok(p);
  if (r) {
    char want[256];
    snprintf(want, sizeof want, "wrongdict/0/data.bin: block 0 was compressed with "
             "dictionary 1712326466, but %s/0/zstd_dict.bin has dictionary %u",
             p, atlas_dict_id(r, 1));
    err = read_all(r);
    CHECK_CONTAINS(err, want);
    free(err);
    atlas_close(r);
  }

  /* a shard whose meta says no dictionary, with dictionary frames */
  p = copy_case("per_shard_dict", "nometa3");
  char dir[512];
  snprintf(dir, sizeof dir, "%s/0", p);
  write_text(dir, "meta.json",
             "{\"version\": 1, \"block_size\": 8, \"stored_examples\": 56, "
             "\"compression_strategy\": 1}");
  r = open_ok(p);
  if (r) {
    err = read_all(r);
    CHECK_CONTAINS(err, "nometa3/0/data.bin: block 0 was compressed with dictionary "
                        "1712326466, but");
    CHECK_CONTAINS(err, "nometa3/0/meta.json says compression_strategy 1 (no dictionary)");
    free(err);
    atlas_close(r);
  }

  /* a bare strategy-2 shard needs the dataset's dictionary */
  p = copy_case("shared_dict/1", "bare2");
  err = open_fails(p);
  CHECK_CONTAINS(err, "bare2/meta.json: compression_strategy 2 needs the dataset's "
                      "shared dictionary");
  free(err);
  err = NULL;
  r = NULL;
  CHECK(atlas_open_dict(p, FIX "shared_dict/zstd_dict.bin", &r, &err) == 0);
  if (r) {
    CHECK(atlas_is_bare_shard(r) && atlas_count(r) == 64 && atlas_num_blocks(r, 0) == 8);
    CHECK(atlas_dict_id(r, 0) != 0);
    err = read_all(r);
    CHECK_MSG(err == NULL, "bare strategy-2 shard with its dictionary: %s", err);
    free(err);
    atlas_close(r);
  }
  /* ... and the wrong one is reported */
  err = NULL;
  r = NULL;
  CHECK(atlas_open_dict(p, FIX "per_shard_dict/0/zstd_dict.bin", &r, &err) == 0);
  if (r) {
    err = read_all(r);
    CHECK_CONTAINS(err, "per_shard_dict/0/zstd_dict.bin has dictionary 1712326466");
    free(err);
    atlas_close(r);
  }
}

/* Directory layout: stray and hidden directories, numeric order, empty
 * shard in the middle, odd paths. */
static void test_layout(void) {
  const char *p = copy_case("none", "stray");
  sh("mkdir '%s/extra' && mkdir '%s/.ipynb_checkpoints' && touch '%s/notes.txt'",
     p, p, p);
  char *err = open_fails(p);
  CHECK_CONTAINS(err, "stray/extra: not a shard directory");
  free(err);
  sh("rmdir '%s/extra'", p);
  atlas_reader *r = open_ok(p); /* hidden directory and files ignored */
  if (r) {
    CHECK(atlas_nshards(r) == 3 && atlas_count(r) == 58);
    atlas_close(r);
  }
  sh("cp -r '%s/1' '%s/01'", p, p);
  err = open_fails(p);
  CHECK_CONTAINS(err, "shard directories '01' and '1' have the same number");
  free(err);

  /* numeric, not string, order: 8 < 9 < 10 */
  p = copy_case("none", "order");
  sh("cd '%s' && mv 2 10 && mv 1 9 && mv 0 8", p);
  r = open_ok(p);
  if (r) {
    CHECK_STR(atlas_shard_name(r, 0), "8");
    CHECK_STR(atlas_shard_name(r, 2), "10");
    CHECK(atlas_shard_count(r, 2) == 18);
    atlas_close(r);
  }

  /* an empty shard between two others is skipped by locate */
  p = copy_case("none", "gap");
  sh("cd '%s' && mv 2 3 && mv 1 2", p);
  sh("cp -r '" FIX "empty/0' '%s/1'", p);
  write_text(p, "meta.json",
             "{\"version\": 1, \"shard_sizes\": [20, 0, 20, 18], \"compression_strategy\": 0}");
  r = open_ok(p);
  if (r) {
    size_t s;
    uint64_t b, pos;
    CHECK(atlas_nshards(r) == 4 && atlas_count(r) == 58);
    CHECK(atlas_shard_first(r, 1) == 20 && atlas_shard_first(r, 2) == 20);
    atlas_locate(r, 19, &s, &b, &pos);
    CHECK(s == 0 && b == 2 && pos == 3);
    atlas_locate(r, 20, &s, &b, &pos);
    CHECK(s == 2 && b == 0 && pos == 0);
    atlas_locate(r, 57, &s, &b, &pos);
    CHECK(s == 3 && b == 2 && pos == 1);
    check_locate_walk(r, "gap");
    CHECK(!atlas_has_data(r, 1) && atlas_num_blocks(r, 1) == 0);
    err = read_all(r);
    CHECK_MSG(err == NULL, "gap: read all: %s", err);
    free(err);
    atlas_close(r);
  }

  /* trailing slash, missing path, a file */
  r = open_ok(FIX "none/");
  if (r) {
    CHECK_STR(atlas_shard_path(r, 1), FIX "none/1");
    atlas_close(r);
  }
  err = open_fails(FIX "no_such_case");
  CHECK_CONTAINS(err, "no_such_case: cannot open");
  free(err);
  err = open_fails(FIX "MANIFEST.md");
  CHECK_CONTAINS(err, "MANIFEST.md: not a directory");
  free(err);
  err = open_fails(FIX "expected");
  CHECK_CONTAINS(err, "expected: neither an atlas dataset root (no meta.json) nor");
  free(err);
}

int main(void) {
  snprintf(tmp_dir, sizeof tmp_dir, "/tmp/test_atlas.XXXXXX");
  if (!mkdtemp(tmp_dir)) {
    perror("mkdtemp");
    return 1;
  }
  test_fixtures();
  test_truncation();
  test_bad_index();
  test_bad_meta();
  test_dictionaries();
  test_layout();
  sh("rm -rf '%s'", tmp_dir);
  return check_exit();
}
