/* test_bagz_reader.c - the bagz reader without SQLite, against the
 * upstream fixtures' expected JSON (read with jansson): every record of
 * the single-file fixtures, shard layouts, separate limits, the
 * read-ahead walk (also over records larger than its batches, records
 * larger than it decompresses ahead, with and without a declared size, and
 * up to a damaged one), limits loaded for lookups, crafted damage, and a
 * prefetch hint whose limits cannot be read (it frees its error). */
#include <jansson.h>
#include <malloc.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <zstd.h>

#include "check.h"
#include "core/common.h"
#include "core/vfs.h"
#include "formats/bagz/bagz.h"
#include "formats/bagz/bagz_readahead.h"

/* The windows records are read through (one for the whole test). */
static bagz_io t_io;

#define FIX "tests/fixtures/upstream/bagz/"

/* Decode {"$bytes_hex": "..."} into buf; returns length or -1. */
static long hex_record(json_t *v, uint8_t *buf, size_t cap) {
  const char *h = json_string_value(json_object_get(v, "$bytes_hex"));
  if (!h) return -1;
  size_t n = strlen(h) / 2;
  if (n > cap) return -1;
  for (size_t i = 0; i < n; i++) {
    unsigned x;
    if (sscanf(h + 2 * i, "%2x", &x) != 1) return -1;
    buf[i] = (uint8_t)x;
  }
  return (long)n;
}

/* Every record of `spec` equals expected[key] (a list of typed bytes). */
static void compare_records(const char *label, const char *spec,
                            const bagz_options *o, json_t *records) {
  bagz_reader *r;
  char *err = NULL;
  if (!CHECK(bagz_open(spec, o, &r, &err) == 0)) {
    check_note("    %s: %s\n", label, err);
    free(err);
    return;
  }
  CHECK_MSG(bagz_count(r) == json_array_size(records), "%s count", label);
  ds_zstd_ctx z;
  ds_zstd_ctx_init(&z, NULL);
  ds_buf scratch = {0};
  static uint8_t want[1 << 16];
  int ok = 1;
  for (size_t i = 0; i < json_array_size(records) && ok; i++) {
    long wn = hex_record(json_array_get(records, i), want, sizeof want);
    const uint8_t *p;
    size_t n;
    if (bagz_read(r, &z, &t_io, i, &scratch, &p, &n, &err) || wn < 0 || (size_t)wn != n ||
        memcmp(p, want, n) != 0) {
      check_note("    %s: record %zu differs (%s)\n", label, i, err ? err : "bytes");
      ok = 0;
    }
  }
  CHECK_MSG(ok, "%s: every record", label);
  CHECK(bagz_read(r, &z, &t_io, bagz_count(r), &scratch, NULL, NULL, &err) == -1);
  CHECK_CONTAINS(err, "out of range");
  ds_zstd_ctx_free(&z);
  ds_buf_free(&scratch);
  bagz_close(r);
  free(err);
}

static json_t *load(const char *name) {
  json_error_t e;
  char path[256];
  snprintf(path, sizeof path, FIX "expected/%s", name);
  json_t *j = json_load_file(path, 0, &e);
  CHECK_MSG(j != NULL, "load %s: %s", name, e.text);
  return j;
}

static void test_single_files(void) {
  const char *names[] = {"plain", "zstd", "level19", "empty", "allempty", "keys", "crafted_nocontentsize"};
  for (size_t i = 0; i < sizeof names / sizeof *names; i++) {
    char jn[64], spec[128];
    snprintf(jn, sizeof jn, "%s.json", names[i]);
    json_t *j = load(jn);
    if (!j) continue;
    snprintf(spec, sizeof spec, FIX "%s", json_string_value(json_object_get(j, "file")));
    bagz_options o = {0};
    compare_records(names[i], spec, &o, json_object_get(j, "records"));
    json_decref(j);
  }
  json_t *j = load("separate.json");
  bagz_options o = {.limits = BAGZ_LIMITS_SEPARATE};
  compare_records("separate", FIX "separate.bagz", &o, json_object_get(j, "records"));
  json_decref(j);
  j = load("dict.json");
  o = (bagz_options){.dictionary_path = FIX "dict_raw.txt"};
  compare_records("dict", FIX "dict.bagz", &o, json_object_get(j, "records"));
  json_decref(j);
}

static void test_layouts(void) {
  json_t *j = load("inter.json");
  json_t *lay = json_object_get(j, "layouts");
  bagz_options o = {.layout = DS_LAYOUT_INTERLEAVED};
  compare_records("inter interleaved", FIX "inter@3.bagz", &o,
                  json_object_get(json_object_get(lay, "INTERLEAVED"), "records"));
  o.layout = DS_LAYOUT_CONCATENATED;
  compare_records("inter concatenated", FIX "inter@*.bagz", &o,
                  json_object_get(json_object_get(lay, "CONCATENATED"), "records"));
  json_decref(j);
  j = load("concat.json");
  compare_records("concat", FIX "concat@4.bagz", &o,
                  json_object_get(json_object_get(json_object_get(j, "layouts"), "CONCATENATED"), "records"));
  json_decref(j);
  bagz_reader *r;
  char *err = NULL;
  o.layout = DS_LAYOUT_INTERLEAVED;
  CHECK(bagz_open(FIX "concat@4.bagz", &o, &r, &err) == -1);
  CHECK_CONTAINS(err, "interleaved layout needs");
  o.layout = DS_LAYOUT_CONCATENATED;
  CHECK(bagz_open(FIX "concat@5.bagz", &o, &r, &err) == -1);
  CHECK_CONTAINS(err, "concat-00000-of-00005.bagz: cannot open");
  free(err);
}

/* The read-ahead walk gives exactly the single-record reads, in order. */
static void test_readahead(void) {
  bagz_reader *r;
  char *err = NULL;
  bagz_options o = {0};
  if (!CHECK(bagz_open(FIX "mid.bagz", &o, &r, &err) == 0)) return;
  ds_rowset rs;
  ds_rowset_init_all(&rs, bagz_count(r));
  ds_rowset_clip(&rs, 3, 40000);
  rs.desc = 1;
  rs.offset = 10;
  bagz_readahead *ra;
  CHECK(bagz_readahead_start(r, &rs, 0, &ra, &err) == 0);
  ds_zstd_ctx z;
  ds_zstd_ctx_init(&z, NULL);
  ds_buf scratch = {0};
  uint64_t g, want = 39989, rows = 0;
  const uint8_t *p, *q;
  size_t n, m;
  int ok = 1, rc;
  while ((rc = bagz_readahead_next(ra, &g, &p, &n, &err)) == 1) {
    if (g != want || bagz_read(r, &z, &t_io, g, &scratch, &q, &m, &err) || m != n ||
        memcmp(p, q, n) != 0)
      ok = 0;
    want--;
    rows++;
  }
  CHECK(rc == 0);
  CHECK_MSG(ok && rows == 39987, "read-ahead walk: %llu rows", (unsigned long long)rows);
  bagz_readahead_free(ra);
  ds_rowset_free(&rs);
  ds_zstd_ctx_free(&z);
  ds_buf_free(&scratch);
  bagz_close(r);
  free(err);
}

/* Record i of the bags written by write_bag: `big` bytes of a pattern
 * (compresses about a thousandfold) for every third record, else a few. */
static size_t make_record(uint8_t *buf, int i, size_t big) {
  size_t n = i % 3 == 0 ? big : (size_t)(i % 7) * 5;
  for (size_t k = 0; k < n; k++) buf[k] = (uint8_t)((k / 512 + (size_t)i) % 251);
  return n;
}

/* write_bag's frames declare their content size unless this is set. */
static int g_no_content_size;

/* Write records [first, first + count) (make_record) as one zstd bag with
 * tail limits; record `bad`, when in range, is stored as bytes that are no
 * zstd frame. Returns 0 on success. */
static int write_bag(const char *path, int first, int count, size_t big, int bad) {
  FILE *f = fopen(path, "wb");
  if (!f) return -1;
  uint8_t *rec = malloc(big), *z = malloc(ZSTD_compressBound(big));
  uint64_t *lim = malloc(sizeof *lim * (size_t)count), end = 0;
  ZSTD_CCtx *cc = ZSTD_createCCtx();
  int rc = rec && z && lim && cc ? 0 : -1;
  if (cc) ZSTD_CCtx_setParameter(cc, ZSTD_c_contentSizeFlag, !g_no_content_size);
  for (int i = 0; i < count && rc == 0; i++) {
    size_t n = make_record(rec, first + i, big), m = 0;
    if (first + i == bad) m = (size_t)sprintf((char *)z, "not a zstd frame");
    else if (n > 0) m = ZSTD_compress2(cc, z, ZSTD_compressBound(big), rec, n);
    if (ZSTD_isError(m) || fwrite(z, 1, m, f) != m) rc = -1;
    lim[i] = end += m;
  }
  for (int i = 0; i < count && rc == 0; i++) {
    uint8_t b[8];
    for (int k = 0; k < 8; k++) b[k] = (uint8_t)(lim[i] >> (8 * k));
    if (fwrite(b, 1, 8, f) != 8) rc = -1;
  }
  if (fclose(f)) rc = -1;
  ZSTD_freeCCtx(cc);
  free(rec);
  free(z);
  free(lim);
  return rc;
}

/* A two-shard bag of 300 records in a temp dir, records of `big` bytes
 * every third; *spec is its spec. Returns 0 on success. */
static int write_shards(char *dir, char *spec, size_t cap, size_t big, int bad) {
  char path[512];
  strcpy(dir, "/tmp/test_bagz_reader_XXXXXX");
  if (!mkdtemp(dir)) return -1;
  snprintf(spec, cap, "%s/big@2.bagz", dir);
  snprintf(path, sizeof path, "%s/big-00000-of-00002.bagz", dir);
  if (write_bag(path, 0, 140, big, bad)) return -1;
  snprintf(path, sizeof path, "%s/big-00001-of-00002.bagz", dir);
  return write_bag(path, 140, 160, big, bad);
}

static void remove_shards(const char *dir) {
  char path[512];
  for (int i = 0; i < 2; i++) {
    snprintf(path, sizeof path, "%s/big-0000%d-of-00002.bagz", dir, i);
    remove(path);
  }
  rmdir(dir);
}

/* Walk every row of `spec` with the read-ahead and compare each record
 * with make_record; returns the rows that matched before the walk ended
 * (*rc: its last return, *err its error). */
static uint64_t walk_all(const char *spec, size_t big, int *rc, char **err) {
  bagz_reader *r;
  bagz_options o = {0};
  *rc = -2;
  if (!CHECK(bagz_open(spec, &o, &r, err) == 0)) return 0;
  ds_rowset rs;
  ds_rowset_init_all(&rs, bagz_count(r));
  bagz_readahead *ra;
  uint64_t g, rows = 0;
  const uint8_t *p;
  size_t n;
  uint8_t *want = malloc(big);
  if (want && CHECK(bagz_readahead_start(r, &rs, 0, &ra, err) == 0)) {
    while ((*rc = bagz_readahead_next(ra, &g, &p, &n, err)) == 1) {
      size_t m = make_record(want, (int)g, big);
      if (g != rows || m != n || memcmp(p, want, n) != 0) break;
      rows++;
    }
    bagz_readahead_free(ra);
  }
  free(want);
  ds_rowset_free(&rs);
  bagz_close(r);
  return rows;
}

/* Records far larger than a batch (300 KiB, a thousandfold compressed):
 * batches stop at their byte budget and the cursor decompresses the rest,
 * in order, across shards; a damaged record ends the walk right there
 * with an error naming it. */
static void test_readahead_big_records(void) {
  char dir[64], spec[128];
  size_t big = 300 << 10;
  if (!CHECK(write_shards(dir, spec, sizeof spec, big, -1) == 0)) return;
  char *err = NULL;
  int rc;
  uint64_t rows = walk_all(spec, big, &rc, &err);
  CHECK_MSG(rc == 0 && rows == 300, "big records: %llu rows, rc %d (%s)",
            (unsigned long long)rows, rc, err ? err : "");
  remove_shards(dir);
  if (!CHECK(write_shards(dir, spec, sizeof spec, big, 200) == 0)) return;
  rows = walk_all(spec, big, &rc, &err);
  CHECK_MSG(rc == -1 && rows == 200, "damaged record 200: %llu rows, rc %d",
            (unsigned long long)rows, rc);
  CHECK_CONTAINS(err, "big-00001-of-00002.bagz: record 60 (row 200");
  remove_shards(dir);
  free(err);
}

/* Records larger than the read-ahead decompresses ahead (20 MiB, every
 * third of 8), with and without a declared content size: the cursor
 * decompresses them itself, every record arrives whole and in order. */
static void test_readahead_huge_records(void) {
  char dir[64] = "/tmp/test_bagz_reader_XXXXXX", path[128];
  if (!CHECK(mkdtemp(dir) != NULL)) return;
  snprintf(path, sizeof path, "%s/huge.bagz", dir);
  size_t big = (size_t)20 << 20;
  for (int no_size = 0; no_size < 2; no_size++) {
    g_no_content_size = no_size;
    if (!CHECK(write_bag(path, 0, 8, big, -1) == 0)) break;
    uint8_t head[32];
    FILE *f = fopen(path, "rb");
    size_t got = f ? fread(head, 1, sizeof head, f) : 0;
    if (f) fclose(f);
    unsigned long long cs = ZSTD_getFrameContentSize(head, got);
    CHECK_MSG(no_size ? cs == ZSTD_CONTENTSIZE_UNKNOWN : cs == big,
              "record 0 %s its size", no_size ? "does not declare" : "declares");
    char *err = NULL;
    int rc;
    uint64_t rows = walk_all(path, big, &rc, &err);
    CHECK_MSG(rc == 0 && rows == 8, "huge records (%s content size): %llu rows, rc %d (%s)",
              no_size ? "no" : "a", (unsigned long long)rows, rc, err ? err : "");
    free(err);
  }
  g_no_content_size = 0;
  remove(path);
  rmdir(dir);
}

/* Bytes [off, off + n) of `src` into a new file `dst`. */
static int write_part(const char *dst, const uint8_t *src, size_t off, size_t n) {
  FILE *f = fopen(dst, "wb");
  if (!f) return -1;
  int rc = fwrite(src + off, 1, n, f) == n ? 0 : -1;
  return fclose(f) || rc ? -1 : 0;
}

/* A records file that shrinks under a read-ahead walk (separate limits,
 * so they still place every record): exactly the rows before the cut
 * come, then an error naming the first record past it and the cut. */
static void test_readahead_truncated(void) {
  char dir[64] = "/tmp/test_bagz_reader_XXXXXX", whole[128], data[128], lim[128];
  if (!CHECK(mkdtemp(dir) != NULL)) return;
  snprintf(whole, sizeof whole, "%s/whole.bagz", dir);
  snprintf(data, sizeof data, "%s/cut.bagz", dir);
  snprintf(lim, sizeof lim, "%s/limits.cut.bagz", dir);
  static uint8_t bytes[1 << 20];
  FILE *f = write_bag(whole, 0, 3000, 64, -1) == 0 ? fopen(whole, "rb") : NULL;
  size_t size = f ? fread(bytes, 1, sizeof bytes, f) : 0;
  if (f) fclose(f);
  if (!CHECK(size > 8 * 3000)) return;
  size_t records = size - 8 * 3000, cut = records / 2;
  int first_gone = 0; /* the first record that ends past the cut */
  while (ds_le64(bytes + records + 8 * first_gone) <= cut) first_gone++;
  bagz_reader *r;
  bagz_options o = {.limits = BAGZ_LIMITS_SEPARATE};
  char *err = NULL;
  if (!CHECK(write_part(data, bytes, 0, records) == 0 &&
             write_part(lim, bytes, records, size - records) == 0 &&
             bagz_open(data, &o, &r, &err) == 0 && truncate(data, (off_t)cut) == 0))
    return;
  ds_rowset rs;
  ds_rowset_init_all(&rs, bagz_count(r));
  bagz_readahead *ra;
  uint64_t g, rows = 0;
  const uint8_t *p;
  size_t n;
  uint8_t want[64];
  int rc = -2;
  if (CHECK(bagz_readahead_start(r, &rs, 0, &ra, &err) == 0)) {
    while ((rc = bagz_readahead_next(ra, &g, &p, &n, &err)) == 1 && g == rows &&
           n == make_record(want, (int)g, sizeof want) && memcmp(p, want, n) == 0)
      rows++;
    bagz_readahead_free(ra);
  }
  CHECK_MSG(rc == -1 && rows == (uint64_t)first_gone, "cut at %zu: %llu rows (want %d), rc %d",
            cut, (unsigned long long)rows, first_gone, rc);
  char where[64];
  snprintf(where, sizeof where, "cut.bagz: record %d (row %d,", first_gone, first_gone);
  CHECK_CONTAINS(err, where);
  CHECK_CONTAINS(err, "truncated to");
  ds_rowset_free(&rs);
  bagz_close(r);
  free(err);
  remove(whole);
  remove(data);
  remove(lim);
  rmdir(dir);
}

/* Bytes of heap in use (the sanitizers' count under ASan/TSan, glibc's
 * otherwise). */
#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
/* sanitizer/allocator_interface.h's (the header is not always installed) */
size_t __sanitizer_get_current_allocated_bytes(void);
static size_t heap_in_use(void) { return __sanitizer_get_current_allocated_bytes(); }
#else
static size_t heap_in_use(void) { return mallinfo2().uordblks; }
#endif

/* ds_vfs_backend.prefetch of the hand-made backend below: takes the hint. */
static void take_hint(const ds_vfs_file *f, const ds_vfs_range *r, size_t n) {
  (void)f, (void)r, (void)n;
}

/* A prefetch hint whose limits reads fail (the limits lie past the end of
 * their file, on a backend that takes hints) gives up on the shard and
 * frees the read's error: a thousand hints leave the heap as it was
 * (bounded by a few of glibc's cached chunks, not a message per hint). */
static void test_prefetch_limits_unreadable(void) {
  static const ds_vfs_backend hinted = {.scheme = "hinted", .prefetch = take_hint};
  bagz_shard s;
  memset(&s, 0, sizeof s);
  s.data.path = (char *)"hinted://bag";
  s.data.size = 16;
  s.data.vf.be = &hinted;
  s.data.vf.fd = -1;
  s.limits = &s.data;
  s.limits_off = 1000; /* past the 16 bytes: every limits read fails */
  s.count = 4;
  bagz_reader r;
  memset(&r, 0, sizeof r);
  r.shards = &s;
  r.nshards = 1;
  uint64_t counts[1] = {4};
  char *err = NULL;
  CHECK(ds_shard_map_init(&r.map, DS_LAYOUT_CONCATENATED, counts, 1, &err) == 0);
  uint64_t rows[3] = {1, 2, 3};
  bagz_prefetch(&r, rows, 3); /* warm up */
  size_t before = heap_in_use();
  for (int i = 0; i < 1000; i++) bagz_prefetch(&r, rows, 3);
  size_t after = heap_in_use();
  size_t grew = after > before ? after - before : 0;
  CHECK_MSG(grew < 1000 * 16, "heap grew by %zu bytes over 1000 hints", grew);
  ds_shard_map_free(&r.map);
  free(err);
}

/* Lookups through fresh windows each (as SQLite opens a cursor per
 * statement run) load a shard's limits once 64 of them jumped; a scan
 * through one window leaves them on disk. */
static void test_limits_loaded_for_lookups(void) {
  char dir[64], spec[128];
  if (!CHECK(write_shards(dir, spec, sizeof spec, 64, -1) == 0)) return;
  bagz_reader *r;
  bagz_options o = {0};
  char *err = NULL;
  if (!CHECK(bagz_open(spec, &o, &r, &err) == 0)) return;
  ds_zstd_ctx z;
  ds_zstd_ctx_init(&z, NULL);
  ds_buf s = {0};
  const uint8_t *p;
  size_t n;
  uint8_t want[64];
  bagz_io scan = {0};
  for (uint64_t g = 0; g < 140; g++) bagz_read(r, &z, &scan, g, &s, &p, &n, &err);
  bagz_io_free(&scan);
  CHECK(r->shards[0].limits_mem == NULL);
  int ok = 1, before = 1;
  for (int k = 0; k < DS_VIEW_JUMPS_TO_LOAD + 1; k++) {
    bagz_io io = {0};
    uint64_t g = (uint64_t)(k * 37) % 140;
    if (k == DS_VIEW_JUMPS_TO_LOAD - 1) before = r->shards[0].limits_mem == NULL;
    if (bagz_read(r, &z, &io, g, &s, &p, &n, &err) ||
        n != make_record(want, (int)g, sizeof want) || memcmp(p, want, n) != 0)
      ok = 0;
    bagz_io_free(&io);
  }
  CHECK_MSG(ok, "lookups through fresh windows read the right records");
  CHECK(before);
  CHECK(r->shards[0].limits_mem != NULL);
  CHECK(r->shards[1].limits_mem == NULL);
  ds_zstd_ctx_free(&z);
  ds_buf_free(&s);
  bagz_close(r);
  remove_shards(dir);
  free(err);
}

/* A bag in memory: records "aa", <damaged frame>, "ccc", stored as given. */
static void test_damage(void) {
  bagz_reader *r;
  char *err = NULL;
  bagz_options none = {.compression = BAGZ_COMPRESSION_NONE};
  uint8_t buf[64];
  memcpy(buf, "aabbbccc", 8);
  uint64_t lim[3] = {2, 1, 8}; /* record 1 runs backwards */
  for (int i = 0; i < 3; i++)
    for (int b = 0; b < 8; b++) buf[8 + 8 * i + b] = (uint8_t)(lim[i] >> (8 * b));
  CHECK(bagz_open_memory("bad.bag", buf, 32, &none, &r, &err) == 0);
  ds_zstd_ctx z;
  ds_zstd_ctx_init(&z, NULL);
  ds_buf s = {0};
  const uint8_t *p;
  size_t n;
  CHECK(bagz_read(r, &z, &t_io, 0, &s, &p, &n, &err) == 0 && n == 2 && memcmp(p, "aa", 2) == 0);
  CHECK(bagz_read(r, &z, &t_io, 1, &s, &p, &n, &err) == -1);
  CHECK_CONTAINS(err, "bad.bag: record 1: limits are not monotonic");
  CHECK(bagz_read(r, &z, &t_io, 2, &s, &p, &n, &err) == 0 && n == 7);
  bagz_close(r);

  /* a middle limit past the records section (the tail still says 8) */
  buf[16] = 9;
  CHECK(bagz_open_memory("past.bag", buf, 32, &none, &r, &err) == 0);
  CHECK(bagz_read(r, &z, &t_io, 1, &s, &p, &n, &err) == -1);
  CHECK_CONTAINS(err, "past.bag: record 1: limit at offset 16 says byte 9, past the end of the records section (8 bytes)");
  CHECK(bagz_read(r, &z, &t_io, 2, &s, &p, &n, &err) == -1);
  CHECK_CONTAINS(err, "limits are not monotonic");
  bagz_close(r);

  CHECK(bagz_open_memory("tiny.bag", buf, 5, &none, &r, &err) == -1);
  CHECK_CONTAINS(err, "tiny.bag: file has 5 bytes");
  memset(buf, 0, sizeof buf);
  buf[0] = 0xff;
  CHECK(bagz_open_memory("big.bag", buf, 8, &none, &r, &err) == -1);
  CHECK_CONTAINS(err, "big.bag: not a bagz file (no valid limits tail): limits end at byte 255 but the file has 8 bytes");
  buf[0] = 0;
  buf[8] = 3;
  CHECK(bagz_open_memory("odd.bag", buf, 16, &none, &r, &err) == -1);
  CHECK_CONTAINS(err, "is not a multiple of 8");
  ds_zstd_ctx_free(&z);
  ds_buf_free(&s);
  free(err);
}

int main(void) {
  test_single_files();
  test_layouts();
  test_readahead();
  test_readahead_big_records();
  test_readahead_huge_records();
  test_readahead_truncated();
  test_limits_loaded_for_lookups();
  test_damage();
  test_prefetch_limits_unreadable();
  return check_exit();
}
