/* fuzz_datadings_index.c - libFuzzer harness for the datadings reader's
 * index files (src/formats/datadings/datadings.c): .offsets, .keys, .key_hashes,
 * .filter, the legacy .index and .md5, without SQLite.
 *
 * datadings_open() takes a path only, so each input is split into files
 * written to a per-process folder <base>/fuzz_datadings_index.<pid>/ (the
 * same names are overwritten on every run and removed at exit). <base> is
 * $FUZZ_DATADINGS_DIR if set, else /dev/shm when it exists (tmpfs: about
 * five times the executions of a disk-backed /tmp), else /tmp:
 *
 *   byte 0      flags: bit 0 .offsets, 1 .keys, 2 .key_hashes, 3 .filter,
 *               4 .index, 5 .md5 present; bit 6: write the file set twice
 *               (X-0.msgpack*, X-1.msgpack*) and open the glob X-*.msgpack;
 *               bit 7 unused
 *   then, for each present optional file in the order above:
 *               a 2-byte big-endian length and that many bytes (cut short
 *               when the input ends)
 *   the rest    the data file X.msgpack
 *
 * (run.sh packs the fixtures' small datasets into this form as seeds.)
 * After a successful open: every sample (at most MAX_ROWS) through
 * datadings_sample (touched, parsed and converted like a cursor would),
 * datadings_sample_range, every key through datadings_key, datadings_find
 * of up to MAX_FINDS keys read back and of absent keys, the Bloom filter
 * of every shard, datadings_verify when there is a .md5.
 * Contract checks (abort = finding): failing calls set *err and a failed
 * open returns no reader; samples lie inside the data file and agree with
 * datadings_sample_range; out-of-range indexes are refused; a found key's
 * sample has exactly that key (never a wrong row); with no .key_hashes and
 * no .filter, every key read back is found; the Bloom filter never rejects
 * a key that datadings_find finds.
 *
 * Build: make fuzz. Run: tests/fuzz/run.sh SECONDS. */
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "core/common.h"
#include "core/value.h"
#include "core/value_json.h"
#include "formats/datadings/datadings.h"
#include "decoders/msgpack_value.h"

#include "fuzz_limits.h"

/* The windows samples are read through (one for the whole test). */
static datadings_io t_io;

#define MAX_ROWS 4096
#define MAX_FINDS 32
#define NFILES 6

static const char *const k_suffix[NFILES] = {".offsets", ".keys", ".key_hashes",
                                             ".filter", ".index", ".md5"};
static char g_dir[512];
static int g_ready;
static ds_msgpack_doc g_doc;
static ds_arena g_arena;

#define FUZZ_HARNESS "fuzz_datadings_index"
#include "fuzz_common.h"
/* The contract broken at sample g; expect_err names the call. */
#define fail(what, g) fuzz_fail("%s (sample %llu)", (what), (unsigned long long)(g))
#define expect_err(err, what, g) \
  fuzz_expect_err((err), "%s (sample %llu)", (what), (unsigned long long)(g))
#define touch fuzz_touch

/* dir/<stem><suffix> into buf. */
static void file_name(char *buf, size_t cap, const char *stem, const char *suffix) {
  snprintf(buf, cap, "%s/%s.msgpack%s", g_dir, stem, suffix);
}

static const char *const k_stems[3] = {"X", "X-0", "X-1"};

static void remove_all(void) {
  char p[600];
  for (int s = 0; s < 3; s++) {
    file_name(p, sizeof p, k_stems[s], "");
    unlink(p);
    for (int i = 0; i < NFILES; i++) {
      file_name(p, sizeof p, k_stems[s], k_suffix[i]);
      unlink(p);
    }
  }
}

static void cleanup(void) {
  remove_all();
  rmdir(g_dir);
  ds_msgpack_doc_free(&g_doc);
  ds_arena_free(&g_arena);
}

static void setup(void) {
  if (g_ready) return;
  g_ready = 1;
  const char *base = getenv("FUZZ_DATADINGS_DIR");
  struct stat st;
  if (!base || !*base)
    base = stat("/dev/shm", &st) == 0 && S_ISDIR(st.st_mode) && access("/dev/shm", W_OK) == 0
               ? "/dev/shm" : "/tmp";
  snprintf(g_dir, sizeof g_dir, "%.400s/fuzz_datadings_index.%d", base, (int)getpid());
  if (mkdir(g_dir, 0700) != 0 && errno != EEXIST) {
    perror(g_dir);
    abort();
  }
  ds_msgpack_doc_init(&g_doc);
  atexit(cleanup);
}

static void write_file(const char *stem, const char *suffix, const uint8_t *p,
                       size_t n) {
  char path[600];
  file_name(path, sizeof path, stem, suffix);
  FILE *f = fopen(path, "wb");
  if (!f || (n && fwrite(p, 1, n, f) != n) || fclose(f) != 0) {
    perror(path);
    abort();
  }
}

/* Key bytes of sample g copied out (the reader's pointer dies at close). */
typedef struct key_copy {
  uint8_t *p;
  size_t n;
  uint64_t g;
} key_copy;

/* 1 when sample g's index key equals key[0..n). */
static int key_is(datadings_reader *r, uint64_t g, const uint8_t *key, size_t n) {
  const uint8_t *p;
  size_t kn;
  char *err = NULL;
  if (datadings_key(r, g, &p, &kn, &err)) {
    expect_err(&err, "datadings_key failed without a message", g);
    return 0;
  }
  return kn == n && (n == 0 || memcmp(p, key, n) == 0);
}

/* Find key; a hit must carry exactly that key. Returns the find result. */
static int find_checked(datadings_reader *r, const uint8_t *key, size_t n) {
  uint64_t g = UINT64_MAX;
  char *err = NULL;
  int rc = datadings_find(r, key, n, &g, &err);
  if (rc < 0) {
    expect_err(&err, "datadings_find failed without a message", 0);
    return rc;
  }
  free(err);
  if (rc == 1) {
    if (g >= datadings_count(r)) fail("datadings_find returned an index out of range", g);
    if (!key_is(r, g, key, n)) fail("datadings_find returned a sample with another key", g);
  } else if (rc != 0) {
    fail("datadings_find returned neither -1, 0 nor 1", 0);
  }
  return rc;
}

static void exercise(datadings_reader *r) {
  char *err = NULL;
  uint64_t count = datadings_count(r);
  size_t nsh = datadings_nshards(r);
  uint64_t sum = 0;
  for (size_t s = 0; s < nsh; s++) {
    if (!datadings_shard_path(r, s)) fail("a shard without a path", s);
    sum += datadings_shard_count(r, s);
  }
  if (sum != count) fail("shard counts do not add up to the count", sum);
  if (datadings_shard_path(r, nsh) || datadings_shard_count(r, nsh))
    fail("a shard past the last one", nsh);

  uint64_t lim = count < MAX_ROWS ? count : MAX_ROWS;
  for (uint64_t g = 0; g < lim; g++) {
    const uint8_t *p = NULL;
    size_t n = 0, shard = 0;
    uint64_t a = 0, b = 0;
    int src = datadings_sample_range(r, &t_io, g, &shard, &a, &b, &err);
    if (src) expect_err(&err, "datadings_sample_range failed without a message", g);
    else if (a > b || shard >= nsh) fail("sample range inverted or shard out of range", g);
    if (datadings_sample(r, &t_io, g, &p, &n, &err)) {
      expect_err(&err, "datadings_sample failed without a message", g);
      if (!src) fail("sample failed but its range was fine", g);
      continue;
    }
    if (src) fail("sample worked but its range failed", g);
    if (n != b - a) fail("sample length differs from its range", g);
    if (n && !p) fail("NULL sample with a length", g);
    touch(p, n);
    /* decode as a cursor would */
    ds_arena_reset(&g_arena);
    if (ds_msgpack_parse(&g_doc, p, n, &err)) {
      expect_err(&err, "ds_msgpack_parse failed without a message", g);
      continue;
    }
    ds_value v;
    if (ds_msgpack_to_value(&g_doc.root, &g_arena, &v, &err)) {
      expect_err(&err, "ds_msgpack_to_value failed without a message", g);
      continue;
    }
    ds_buf j = {0};
    if (ds_value_json_capped(&j, &v, FUZZ_JSON_CAP, NULL, &err)) expect_err(&err, "ds_value_json failed without a message", g);
    touch(j.data, j.len);
    ds_buf_free(&j);
  }

  /* keys: stop at the first failure (the position table is rebuilt on
   * every call, so a damaged .keys would make this loop quadratic) */
  key_copy found[MAX_FINDS];
  size_t nfound = 0;
  int keys_ok = 1;
  for (uint64_t g = 0; g < lim; g++) {
    const uint8_t *p = NULL;
    size_t n = 0;
    if (datadings_key(r, g, &p, &n, &err)) {
      expect_err(&err, "datadings_key failed without a message", g);
      keys_ok = 0;
      break;
    }
    if (n && !p) fail("NULL key with a length", g);
    touch(p, n);
    if (nfound < MAX_FINDS && (g < MAX_FINDS / 2 || g % 97 == 0 || g + 1 == lim)) {
      found[nfound].p = malloc(n ? n : 1);
      if (!found[nfound].p) abort();
      if (n) memcpy(found[nfound].p, p, n);
      found[nfound].n = n;
      found[nfound].g = g;
      nfound++;
    }
  }

  /* out of range */
  {
    const uint8_t *p;
    size_t n;
    if (datadings_sample(r, &t_io, count, &p, &n, &err) == 0) fail("sample past the end", count);
    expect_err(&err, "out-of-range sample without a message", count);
    if (datadings_key(r, count, &p, &n, &err) == 0) fail("key past the end", count);
    expect_err(&err, "out-of-range key without a message", count);
  }

  /* lookups of keys read back */
  const char *method = datadings_lookup_method(r);
  int no_filter = 1;
  for (size_t s = 0; s < nsh; s++)
    if (datadings_filter_maybe(r, s, (const uint8_t *)"", 0) != -1) no_filter = 0;
  int must_find = keys_ok && no_filter &&
                  (strcmp(method, "keys") == 0 || strcmp(method, "index") == 0);
  for (size_t i = 0; i < nfound; i++) {
    int rc = find_checked(r, found[i].p, found[i].n);
    if (rc == 0 && must_find) fail("a key read back is not found (no filter, no key hashes)", found[i].g);
    if (rc == 1) {
      /* the shard that holds it must not have its filter reject it */
      size_t shard;
      uint64_t a, b;
      uint64_t g = UINT64_MAX;
      if (datadings_find(r, found[i].p, found[i].n, &g, &err) != 1)
        fail("a repeated lookup gives another answer", found[i].g);
      if (datadings_sample_range(r, &t_io, g, &shard, &a, &b, &err) == 0) {
        if (datadings_filter_maybe(r, shard, found[i].p, found[i].n) == 0)
          fail("the Bloom filter rejects a key that was found", g);
      } else {
        expect_err(&err, "range failed without a message", g);
      }
    }
    free(found[i].p);
  }
  /* absent (probably) keys: a hit must still carry exactly that key */
  static const char *const probes[] = {"", "absent", "r0", "basic-0000", "\xff\xfe", "legacy/000"};
  for (size_t i = 0; i < sizeof probes / sizeof *probes; i++)
    find_checked(r, (const uint8_t *)probes[i], strlen(probes[i]));
  touch((const uint8_t *)&(size_t){datadings_key_table_bytes(r)}, sizeof(size_t));
}

static void verify(const char *path) {
  datadings_md5_row *rows = NULL;
  size_t n = 0;
  char *err = NULL;
  if (datadings_verify(path, &rows, &n, &err)) {
    expect_err(&err, "datadings_verify failed without a message", 0);
    if (rows || n) fail("failed verify returned rows", 0);
    return;
  }
  for (size_t i = 0; i < n; i++) {
    if (!rows[i].file || !rows[i].expected || strlen(rows[i].expected) != 32)
      fail("verify row without file or expected md5", i);
    size_t al = strlen(rows[i].actual);
    if (al != 0 && al != 32) fail("verify row with a malformed actual md5", i);
    if (rows[i].ok && strcmp(rows[i].actual, rows[i].expected) != 0)
      fail("verify says ok for different md5s", i);
  }
  datadings_md5_free(rows, n);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  if (size < 1) return 0;
  setup();
  remove_all();
  uint8_t flags = data[0];
  size_t pos = 1;
  const uint8_t *fp[NFILES] = {0};
  size_t fn[NFILES] = {0};
  for (int i = 0; i < NFILES; i++) {
    if (!(flags >> i & 1)) continue;
    size_t len = 0;
    if (pos + 2 <= size) len = (size_t)data[pos] << 8 | data[pos + 1];
    pos = pos + 2 <= size ? pos + 2 : size;
    if (len > size - pos) len = size - pos;
    fp[i] = data + pos;
    fn[i] = len;
    pos += len;
  }
  int two = flags >> 6 & 1;
  for (int s = two ? 1 : 0; s < (two ? 3 : 1); s++) {
    write_file(k_stems[s], "", data + pos, size - pos);
    for (int i = 0; i < NFILES; i++)
      if (flags >> i & 1) write_file(k_stems[s], k_suffix[i], fp[i], fn[i]);
  }
  char path[600];
  file_name(path, sizeof path, two ? "X-*" : "X", "");

  datadings_reader *r = (datadings_reader *)1;
  char *err = NULL;
  if (datadings_open(path, &r, &err)) {
    if (r) fail("failed open returned a reader", 0);
    expect_err(&err, "failed open without a message", 0);
  } else {
    free(err);
    err = NULL;
    if (!r) fail("open returned no reader", 0);
    if (datadings_nshards(r) != (size_t)(two ? 2 : 1)) fail("wrong shard count", 0);
    exercise(r);
    datadings_close(r);
  }
  if (flags & 32) verify(path);
  return 0;
}
