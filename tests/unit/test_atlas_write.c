/* test_atlas_write.c - unit tests of formats/atlas/atlas_writer.c:
 *   1. every upstream atlas fixture is decoded with our reader and written
 *      again with the same options (block_size, shard_size, strategy,
 *      level, dict_size from its meta.json files); the copy, opened with
 *      our reader, has the same shard layout (names, sizes, strategies,
 *      dictionary files) and every example reads back with the same JSON;
 *      the meta.json files and an empty dataset's index.npy are byte for
 *      byte what upstream wrote;
 *   2. index.npy dtypes at the 255/256-byte boundary, zero padding of
 *      shard names from 11 shards on;
 *   3. truncation (savepoints): inside a block, at block and shard
 *      boundaries, back into a shard that trained the shared dictionary,
 *      to 0; then more examples; the result reads back as expected;
 *   3b. strategies 1-3 with threads=2 (dictionary frames made on a helper
 *      thread) write the same files as threads=1, a truncation included;
 *   4. a refused example adds nothing (not even an empty shard);
 *   5. Python reads the datasets of each strategy as upstream's reader
 *      does (tests/unit/check_written.py). */
#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "check.h"
#include "fixture.h"
#include "formats/atlas/atlas.h"
#include "formats/atlas/atlas_writer.h"
#include "decoders/pickle.h"

/* The window blocks are read through (pread). */
static ds_view t_view;

#define AFIX "tests/fixtures/upstream/atlas/"

static char g_tmp[] = "/tmp/ds_atlas_write_XXXXXX";

/* ------------------------------------------------------------ helpers */

/* Every example of a dataset as JSON lines (examples our decoder refuses
 * give "<refused>"). NULL when the dataset does not open. */
static char **read_all(const char *path, uint64_t *count) {
  atlas_reader *r;
  char *err = NULL;
  if (atlas_open(path, &r, &err)) {
    check_note("    open %s: %s\n", path, err);
    free(err);
    return NULL;
  }
  *count = atlas_count(r);
  char **out = calloc(*count + 1, sizeof *out);
  ds_zstd_ctx z;
  ds_zstd_ctx_init(&z, NULL);
  ds_buf buf = {0};
  ds_arena a = {0};
  uint64_t g = 0;
  for (size_t k = 0; k < atlas_nshards(r); k++)
    for (uint64_t b = 0; b < atlas_num_blocks(r, k); b++) {
      const uint8_t *p;
      size_t n;
      ds_value v;
      ds_arena_reset(&a);
      uint64_t ne = atlas_block_examples(r, k, b);
      int ok = atlas_block(r, &z, &t_view, k, b, &buf, &p, &n, &err) == 0 &&
               ds_pickle_decode(p, n, NULL, &a, &v, &err) == 0 &&
               v.type == DS_V_LIST && v.u.list.n == ne;
      free(err);
      err = NULL;
      for (uint64_t i = 0; i < ne && g < *count; i++, g++) {
        ds_buf j = {0};
        if (ok && ds_value_json(&j, &v.u.list.items[i], &err) == 0 &&
            ds_buf_append(&j, "", 1) == 0) {
          out[g] = (char *)j.data;
        } else {
          out[g] = strdup("<refused>");
          ds_buf_free(&j);
        }
        free(err);
        err = NULL;
      }
    }
  ds_arena_free(&a);
  ds_buf_free(&buf);
  ds_zstd_ctx_free(&z);
  atlas_close(r);
  return out;
}

static void free_all(char **v, uint64_t n) {
  for (uint64_t i = 0; v && i < n; i++) free(v[i]);
  free(v);
}

/* Copy every example of `src` into a new writer in `dir`; returns examples
 * refused by the encoder (upstream objects we never write); written[g] is
 * set for each example g that was written. */
static int copy_dataset(const char *src, const char *dir,
                        const atlas_write_options *o, uint64_t *refused,
                        uint8_t *written) {
  atlas_reader *r;
  char *err = NULL;
  atlas_writer *w = NULL;
  *refused = 0;
  if (atlas_open(src, &r, &err) || atlas_writer_open(dir, o, &w, &err)) {
    check_note("    %s\n", err);
    free(err);
    return -1;
  }
  ds_zstd_ctx z;
  ds_zstd_ctx_init(&z, NULL);
  ds_buf buf = {0};
  ds_arena a = {0};
  int rc = 0;
  uint64_t g = 0;
  for (size_t k = 0; !rc && k < atlas_nshards(r); k++)
    for (uint64_t b = 0; !rc && b < atlas_num_blocks(r, k); b++) {
      const uint8_t *p;
      size_t n;
      ds_value v;
      ds_arena_reset(&a);
      if (atlas_block(r, &z, &t_view, k, b, &buf, &p, &n, &err) ||
          ds_pickle_decode(p, n, NULL, &a, &v, &err)) {
        *refused += atlas_block_examples(r, k, b);
        g += atlas_block_examples(r, k, b);
        free(err);
        err = NULL;
        continue;
      }
      for (size_t i = 0; i < v.u.list.n; i++, g++) {
        if (atlas_writer_add(w, &v.u.list.items[i], &err)) {
          (*refused)++;
          free(err);
          err = NULL;
        } else {
          written[g] = 1;
        }
      }
    }
  if (!rc && atlas_writer_finish(w, &err)) {
    check_note("    finish: %s\n", err);
    rc = -1;
  }
  free(err);
  ds_arena_free(&a);
  ds_buf_free(&buf);
  ds_zstd_ctx_free(&z);
  atlas_writer_free(w);
  atlas_close(r);
  return rc;
}

/* ------------------------------------------------------------ part 1 */

static void copy_fixture(const char *name) {
  char src[256], *err = NULL;
  snprintf(src, sizeof src, AFIX "%s", name);
  atlas_reader *r;
  if (atlas_open(src, &r, &err)) {
    CHECK_MSG(0, "%s: %s", name, err);
    free(err);
    return;
  }
  atlas_write_options o;
  atlas_write_defaults(&o);
  o.sync = 0;
  const atlas_meta *m0 = atlas_shard_meta(r, 0);
  o.block_size = m0->block_size;
  o.level = (int)m0->compression_level;
  o.dict_size = m0->compression_dict_size;
  o.shard_size = atlas_nshards(r) > 1 ? m0->stored_examples : UINT32_MAX;
  int bare = atlas_is_bare_shard(r);
  o.strategy = bare ? atlas_shard_strategy(r, 0) : atlas_root_strategy(r);
  char *dir = fx_new_dir(g_tmp);
  uint64_t refused;
  uint8_t *written = calloc(atlas_count(r) + 1, 1);
  int rc = copy_dataset(src, dir, &o, &refused, written);
  CHECK_MSG(rc == 0, "%s: copied", name);
  atlas_reader *c = NULL;
  if (rc || atlas_open(dir, &c, &err)) {
    CHECK_MSG(0, "%s: copy opens: %s", name, err ? err : "");
    free(err);
    free(dir);
    free(written);
    atlas_close(r);
    return;
  }
  /* layout: shard count, names, sizes, strategies, dictionaries */
  int layout = atlas_nshards(c) == atlas_nshards(r) || refused;
  for (size_t k = 0; layout && !refused && k < atlas_nshards(r); k++) {
    layout = atlas_shard_count(c, k) == atlas_shard_count(r, k) &&
             (bare || strcmp(atlas_shard_name(c, k), atlas_shard_name(r, k)) == 0) &&
             atlas_shard_strategy(c, k) == atlas_shard_strategy(r, k) &&
             (atlas_dict_path(c, k) == NULL) == (atlas_dict_path(r, k) == NULL);
    if (!layout)
      check_note("    shard %zu: %llu %s strategy %d vs %llu %s strategy %d\n", k,
             (unsigned long long)atlas_shard_count(c, k), atlas_shard_name(c, k),
             atlas_shard_strategy(c, k),
             (unsigned long long)atlas_shard_count(r, k), atlas_shard_name(r, k),
             atlas_shard_strategy(r, k));
  }
  CHECK_MSG(layout, "%s: same shards, names, strategies and dictionaries",
            name);
  if (!bare) {
    CHECK_MSG(atlas_root_strategy(c) == atlas_root_strategy(r),
              "%s: root strategy %d, want %d", name, atlas_root_strategy(c),
              atlas_root_strategy(r));
    char a[300], b[300];
    snprintf(a, sizeof a, "%s/meta.json", dir);
    snprintf(b, sizeof b, "%s/meta.json", src);
    CHECK_MSG(refused || fx_same_file(a, b), "%s: root meta.json as upstream",
              name);
    for (size_t k = 0; !refused && k < atlas_nshards(r); k++) {
      snprintf(a, sizeof a, "%s/%s/meta.json", dir, atlas_shard_name(c, k));
      snprintf(b, sizeof b, "%s/%s/meta.json", src, atlas_shard_name(r, k));
      if (!fx_same_file(a, b)) {
        CHECK_MSG(0, "%s: %s as upstream", name, a);
        break;
      }
    }
  }
  atlas_close(c);
  atlas_close(r);
  /* every example */
  uint64_t na = 0, nb = 0;
  char **want = read_all(src, &na), **got = read_all(dir, &nb);
  uint64_t same = 0, diff = 0, j = 0;
  for (uint64_t i = 0; want && got && i < na; i++) {
    if (!written[i]) continue; /* refused by our decoder or encoder */
    if (j < nb && strcmp(want[i], got[j]) == 0) same++;
    else if (diff++ < 3)
      check_note("    example %llu: %.200s\n    vs %.200s\n", (unsigned long long)i,
             want[i], j < nb ? got[j] : "(none)");
    j++;
  }
  CHECK_MSG(got && want && diff == 0 && j + 0 <= nb && nb + refused >= na &&
                (na == 0 || same > 0),
            "%s: %llu examples read back equal (%llu differ, %llu refused)",
            name, (unsigned long long)same, (unsigned long long)diff,
            (unsigned long long)refused);
  free_all(want, na);
  free_all(got, nb);
  free(written);
  free(dir);
}

/* An empty dataset: files byte for byte as upstream's empty/ fixture. */
static void test_empty(void) {
  atlas_write_options o;
  atlas_write_defaults(&o);
  o.block_size = 8;
  o.sync = 0;
  char *dir = fx_new_dir(g_tmp), *err = NULL;
  atlas_writer *w;
  int ok = atlas_writer_open(dir, &o, &w, &err) == 0 &&
           atlas_writer_finish(w, &err) == 0;
  CHECK_MSG(ok, "empty: finish: %s", err ? err : "");
  atlas_writer_free(w);
  free(err);
  static const char *const files[] = {"meta.json", "0/meta.json",
                                      "0/index.npy"};
  for (int i = 0; i < 3; i++) {
    char a[300], b[300];
    snprintf(a, sizeof a, "%s/%s", dir, files[i]);
    snprintf(b, sizeof b, AFIX "empty/%s", files[i]);
    CHECK_MSG(fx_same_file(a, b), "empty: %s as upstream", files[i]);
  }
  char a[300];
  snprintf(a, sizeof a, "%s/0/data.bin", dir);
  CHECK(access(a, F_OK) != 0);
  free(dir);
}

/* ------------------------------------------------------------ part 2 */

/* A one-example strategy-0 dataset whose data.bin has `size` bytes. */
static void test_index_dtype(uint64_t size, const char *want) {
  /* PROTO FRAME EMPTY_LIST MARK SHORT_BINBYTES(n) APPENDS STOP: 17 + n */
  size_t n = (size_t)(size - 17);
  uint8_t *bytes = calloc(1, n);
  ds_value v = {DS_V_BYTES, {.s = {bytes, n}}};
  atlas_write_options o;
  atlas_write_defaults(&o);
  o.strategy = 0;
  o.sync = 0;
  char *dir = fx_new_dir(g_tmp), *err = NULL;
  atlas_writer *w;
  atlas_reader *r = NULL;
  int ok = atlas_writer_open(dir, &o, &w, &err) == 0 &&
           atlas_writer_add(w, &v, &err) == 0 &&
           atlas_writer_finish(w, &err) == 0 && atlas_open(dir, &r, &err) == 0;
  CHECK_MSG(ok && atlas_data_size(r, 0) == size &&
                strcmp(atlas_index_dtype(r, 0), want) == 0,
            "data.bin of %llu bytes: index %s (got %s, %llu bytes) %s",
            (unsigned long long)size, want, r ? atlas_index_dtype(r, 0) : "-",
            r ? (unsigned long long)atlas_data_size(r, 0) : 0ULL,
            err ? err : "");
  atlas_close(r);
  atlas_writer_free(w);
  free(err);
  free(bytes);
  free(dir);
}

/* n examples {"i": i, "s": "text i"} into a new writer. */
static int add_range(atlas_writer *w, uint64_t from, uint64_t to) {
  char *err = NULL;
  for (uint64_t i = from; i < to; i++) {
    char s[32];
    snprintf(s, sizeof s, "text %llu", (unsigned long long)i);
    ds_value kv[4] = {{DS_V_TEXT, {.s = {(const uint8_t *)"i", 1}}},
                      {DS_V_INT, {.i = (int64_t)i}},
                      {DS_V_TEXT, {.s = {(const uint8_t *)"s", 1}}},
                      {DS_V_TEXT, {.s = {(const uint8_t *)s, strlen(s)}}}};
    ds_value ex = {DS_V_MAP, {.list = {kv, 2}}};
    if (atlas_writer_add(w, &ex, &err)) {
      check_note("    add %llu: %s\n", (unsigned long long)i, err);
      free(err);
      return -1;
    }
  }
  return 0;
}

/* The examples read back are exactly 0..n-1 in order. */
static int check_range(const char *dir, uint64_t n) {
  uint64_t got = 0;
  char **v = read_all(dir, &got);
  int ok = v && got == n;
  for (uint64_t i = 0; ok && i < n; i++) {
    char want[64];
    snprintf(want, sizeof want, "{\"i\":%llu,\"s\":\"text %llu\"}",
             (unsigned long long)i, (unsigned long long)i);
    ok = strcmp(v[i], want) == 0;
    if (!ok) check_note("    example %llu: %s\n", (unsigned long long)i, v[i]);
  }
  if (v && got != n)
    check_note("    %llu examples, want %llu\n", (unsigned long long)got,
           (unsigned long long)n);
  free_all(v, got);
  return ok;
}

static void test_padding(void) {
  atlas_write_options o;
  atlas_write_defaults(&o);
  o.block_size = 2;
  o.shard_size = 3;
  o.strategy = 1;
  o.sync = 0;
  char *dir = fx_new_dir(g_tmp), *err = NULL;
  atlas_writer *w;
  int ok = atlas_writer_open(dir, &o, &w, &err) == 0 && add_range(w, 0, 31) == 0 &&
           atlas_writer_finish(w, &err) == 0;
  atlas_writer_free(w);
  char p[300];
  snprintf(p, sizeof p, "%s/00/meta.json", dir);
  CHECK_MSG(ok && access(p, F_OK) == 0, "11 shards: names 00 .. 10 %s",
            err ? err : "");
  snprintf(p, sizeof p, "%s/10/index.npy", dir);
  CHECK(access(p, F_OK) == 0);
  CHECK(check_range(dir, 31));
  free(err);
  free(dir);
}

/* ------------------------------------------------------------ part 3 */

static void test_truncate(int strategy) {
  atlas_write_options o;
  atlas_write_defaults(&o);
  o.block_size = 4;
  o.shard_size = 30;
  o.strategy = strategy;
  o.sync = 0;
  char *dir = fx_new_dir(g_tmp), *err = NULL;
  atlas_writer *w;
  int ok = atlas_writer_open(dir, &o, &w, &err) == 0 && add_range(w, 0, 50) == 0;
  /* inside a block of shard 1, then more */
  ok = ok && atlas_writer_truncate(w, 45, &err) == 0 &&
       atlas_writer_count(w) == 45 && add_range(w, 45, 70) == 0;
  /* back into shard 0 (which trained the shared dictionary): mid-block */
  ok = ok && atlas_writer_truncate(w, 29, &err) == 0 && add_range(w, 29, 61) == 0;
  /* exactly a shard boundary and a block boundary */
  ok = ok && atlas_writer_truncate(w, 60, &err) == 0 && add_range(w, 60, 64) == 0;
  ok = ok && atlas_writer_truncate(w, 32, &err) == 0 && add_range(w, 32, 77) == 0;
  ok = ok && atlas_writer_finish(w, &err) == 0;
  CHECK_MSG(ok, "strategy %d: truncate and go on: %s", strategy, err ? err : "");
  atlas_writer_free(w);
  CHECK_MSG(ok && check_range(dir, 77), "strategy %d: 77 examples in order",
            strategy);
  free(err);
  err = NULL;
  free(dir);
  /* to 0 and start again */
  dir = fx_new_dir(g_tmp);
  ok = atlas_writer_open(dir, &o, &w, &err) == 0 && add_range(w, 0, 40) == 0 &&
       atlas_writer_truncate(w, 0, &err) == 0 && add_range(w, 0, 9) == 0 &&
       atlas_writer_finish(w, &err) == 0;
  atlas_writer_free(w);
  CHECK_MSG(ok && check_range(dir, 9), "strategy %d: truncate to 0 %s",
            strategy, err ? err : "");
  char p[300];
  snprintf(p, sizeof p, "%s/1", dir);
  CHECK(access(p, F_OK) != 0);
  free(err);
  free(dir);
}

/* Python reads what we wrote as upstream's reader does (pickle.loads,
 * python3-zstandard with the dictionaries, np.load of index.npy). */
static void test_python(int strategy) {
  atlas_write_options o;
  atlas_write_defaults(&o);
  o.block_size = 16;
  o.shard_size = 300;
  o.strategy = strategy;
  o.sync = 0;
  char *dir = fx_new_dir(g_tmp), *err = NULL;
  atlas_writer *w;
  int ok = atlas_writer_open(dir, &o, &w, &err) == 0 &&
           add_range(w, 0, 1000) == 0 && atlas_writer_finish(w, &err) == 0;
  atlas_writer_free(w);
  CHECK_MSG(ok, "strategy %d: 1000 examples %s", strategy, err ? err : "");
  free(err);
  char cmd[512];
  snprintf(cmd, sizeof cmd,
           "/usr/bin/python3 tests/unit/check_written.py atlas %s 1000 2>&1", dir);
  FILE *f = popen(cmd, "r");
  char line[1024];
  int seen = 0;
  while (f && fgets(line, sizeof line, f)) {
    line[strcspn(line, "\n")] = 0;
    seen++;
    CHECK_MSG(strncmp(line, "OK ", 3) == 0, "strategy %d, Python: %s", strategy,
              line);
  }
  CHECK_MSG(f && pclose(f) == 0 && seen > 4, "strategy %d: Python checked %d",
            strategy, seen);
  free(dir);
}

/* ------------------------------------------------------------ part 3b */

/* Examples from..to-1 as {"i": i, "t": ~100 bytes of words picked by i}. */
static int add_wordy(atlas_writer *w, uint64_t from, uint64_t to, char **err) {
  static const char *const words[8] = {"sample", "label", "train", "test",
                                       "model", "vector", "token", "the"};
  for (uint64_t i = from; i < to; i++) {
    char t[160];
    size_t n = 0;
    uint64_t x = i * 6364136223846793005ull + 1442695040888963407ull;
    while (n < 100) {
      n += (size_t)snprintf(t + n, sizeof t - n, "%s ", words[x >> 61]);
      x = x * 6364136223846793005ull + 1442695040888963407ull;
    }
    ds_value kv[4] = {{DS_V_TEXT, {.s = {(const uint8_t *)"i", 1}}},
                      {DS_V_INT, {.i = (int64_t)i}},
                      {DS_V_TEXT, {.s = {(const uint8_t *)"t", 1}}},
                      {DS_V_TEXT, {.s = {(const uint8_t *)t, n}}}};
    ds_value ex = {DS_V_MAP, {.list = {kv, 2}}};
    if (atlas_writer_add(w, &ex, err)) return -1;
  }
  return 0;
}

/* A dataset of 3 shards of about 1.3 MB of pickles (more than one batch of
 * the compressor), with a truncation while blocks wait in the compressor. */
static char *write_wordy(int strategy, int threads) {
  atlas_write_options o;
  atlas_write_defaults(&o);
  o.strategy = strategy;
  o.threads = threads;
  o.block_size = 16;
  o.shard_size = 10000;
  o.sync = 0;
  char *dir = fx_new_dir(g_tmp), *err = NULL;
  atlas_writer *w = NULL;
  int ok = atlas_writer_open(dir, &o, &w, &err) == 0 &&
           add_wordy(w, 0, 19500, &err) == 0 &&
           atlas_writer_truncate(w, 18321, &err) == 0 &&
           add_wordy(w, 18321, 25000, &err) == 0 &&
           atlas_writer_finish(w, &err) == 0;
  CHECK_MSG(ok, "strategy %d threads=%d: written: %s", strategy, threads,
            err ? err : "");
  atlas_writer_free(w);
  free(err);
  return dir;
}

/* threads=2 (frames with a dictionary made on a helper thread) writes the
 * same files as threads=1, and they read back. */
static void test_threads(int strategy) {
  char *one = write_wordy(strategy, 1), *two = write_wordy(strategy, 2);
  static const char *const files[] = {"meta.json", "zstd_dict.bin", "0/data.bin",
                                      "0/index.npy", "0/meta.json", "0/zstd_dict.bin",
                                      "1/data.bin", "1/index.npy", "1/zstd_dict.bin",
                                      "2/data.bin", "2/index.npy", "2/zstd_dict.bin"};
  int same = 1, dicts = 0;
  for (size_t i = 0; i < sizeof files / sizeof files[0]; i++) {
    char a[300], b[300];
    snprintf(a, sizeof a, "%s/%s", one, files[i]);
    snprintf(b, sizeof b, "%s/%s", two, files[i]);
    int here = access(a, F_OK) == 0;
    dicts += here && strstr(files[i], "dict") != NULL;
    if (here != (access(b, F_OK) == 0) || (here && !fx_same_file(a, b))) {
      check_note("    %s differs\n", files[i]);
      same = 0;
    }
  }
  CHECK_MSG(same, "strategy %d: threads=2 writes the files of threads=1", strategy);
  CHECK_MSG(dicts == (strategy == 2 ? 1 : strategy == 3 ? 3 : 0),
            "strategy %d: %d dictionaries", strategy, dicts);
  uint64_t got = 0;
  char **v = read_all(two, &got);
  CHECK_MSG(v && got == 25000, "strategy %d: 25000 examples read back (%llu)",
            strategy, (unsigned long long)got);
  if (v) free_all(v, got);
  free(one);
  free(two);
}

/* ------------------------------------------------------------ part 4 */

static void test_refused(void) {
  atlas_write_options o;
  atlas_write_defaults(&o);
  o.block_size = 2;
  o.shard_size = 4;
  o.strategy = 1;
  o.sync = 0;
  char *dir = fx_new_dir(g_tmp), *err = NULL;
  atlas_writer *w;
  int ok = atlas_writer_open(dir, &o, &w, &err) == 0 && add_range(w, 0, 4) == 0;
  ds_value c = {DS_V_COMPLEX, {.c = {1, 2}}};
  int rc = atlas_writer_add(w, &c, &err);
  CHECK_MSG(ok && rc != 0 && err && strstr(err, "complex"),
            "complex refused: %s", err ? err : "");
  free(err);
  err = NULL;
  ok = atlas_writer_count(w) == 4 && atlas_writer_finish(w, &err) == 0;
  atlas_writer_free(w);
  char p[300];
  snprintf(p, sizeof p, "%s/1", dir);
  CHECK_MSG(ok && access(p, F_OK) != 0 && check_range(dir, 4),
            "a refused example leaves no empty shard %s", err ? err : "");
  free(err);
  free(dir);
}

int main(void) {
  if (!mkdtemp(g_tmp)) { CHECK(0); return check_exit(); }
  DIR *d = opendir(AFIX "expected");
  struct dirent *e;
  while (d && (e = readdir(d))) {
    size_t n = strlen(e->d_name);
    if (n < 6 || strcmp(e->d_name + n - 5, ".json")) continue;
    char name[64];
    snprintf(name, sizeof name, "%.*s", (int)(n - 5), e->d_name);
    copy_fixture(name);
  }
  if (d) closedir(d);
  test_empty();
  test_index_dtype(255, "|u1");
  test_index_dtype(256, "<u2");
  test_padding();
  for (int s = 0; s <= 3; s++) test_truncate(s);
  for (int s = 0; s <= 3; s++) test_python(s);
  for (int s = 1; s <= 3; s++) test_threads(s);
  test_refused();
  fx_remove_tree(g_tmp);
  return check_exit();
}
