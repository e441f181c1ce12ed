/* test_core.c - unit tests of the format-independent core: shard specs
 * and the shard map, options, row sets, mapped files, zstd, the
 * max_value_bytes caps of buffers and arenas, cancellation scopes, the
 * hash index. No SQLite involved. */
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#include <string.h>
#include <unistd.h>
#include <zstd.h>

#include "check.h"
#include "core/cancel.h"
#include "core/codec.h"
#include "core/common.h"
#include "core/hash_index.h"
#include "core/mapped_file.h"
#include "core/options.h"
#include "core/rowset.h"
#include "core/shard_spec.h"
#include "core/value.h"

static const char *FIX = "tests/fixtures/upstream/bagz";

static void test_shard_spec(void) {
  ds_shard_list l;
  char *err = NULL;
  CHECK(ds_shard_spec_expand("dir/train@4.bagz", &l, &err) == 0);
  CHECK(l.n == 4);
  CHECK_STR(l.paths[0], "dir/train-00000-of-00004.bagz");
  CHECK_STR(l.paths[3], "dir/train-00003-of-00004.bagz");
  ds_shard_list_free(&l);

  CHECK(ds_shard_spec_expand("posix:a@04.bag,,b.bag", &l, &err) == 0);
  CHECK(l.n == 5);
  CHECK_STR(l.paths[1], "a-00001-of-00004.bag");
  CHECK_STR(l.paths[4], "b.bag");
  ds_shard_list_free(&l);

  /* @ in a directory name is not a shard spec; @0 and @x are plain names */
  CHECK(ds_shard_spec_expand("/posix:d@2/x@0.bagz,y@x.bag,a@b/c.bag", &l, &err) == 0);
  CHECK(l.n == 3);
  CHECK_STR(l.paths[0], "d@2/x@0.bagz");
  CHECK_STR(l.paths[1], "y@x.bag");
  CHECK_STR(l.paths[2], "a@b/c.bag");
  ds_shard_list_free(&l);

  CHECK(ds_shard_spec_expand("w@4294967297.bagz", &l, &err) == 0);
  CHECK(l.n == 1 && strcmp(l.paths[0], "w@4294967297.bagz") == 0);
  ds_shard_list_free(&l);
  CHECK(ds_shard_spec_expand("x@100000.bagz", &l, &err) == 0);
  CHECK(l.n == 1 && strcmp(l.paths[0], "x@100000.bagz") == 0);
  ds_shard_list_free(&l);

  char spec[256];
  snprintf(spec, sizeof spec, "%s/concat@*.bagz", FIX);
  CHECK(ds_shard_spec_expand(spec, &l, &err) == 0);
  CHECK(l.n == 4);
  CHECK_CONTAINS(l.paths[2], "concat-00002-of-00004.bagz");
  ds_shard_list_free(&l);

  snprintf(spec, sizeof spec, "%s/concat@*.bagz,%s/inter@*.bagz", FIX, FIX);
  CHECK(ds_shard_spec_expand(spec, &l, &err) == 0); /* every @* resolves */
  CHECK(l.n == 7);
  ds_shard_list_free(&l);

  CHECK(ds_shard_spec_expand("nothing-here@*.bagz", &l, &err) == -1);
  CHECK_CONTAINS(err, "no shard files found");
  /* gs://, s3://, http(s):// have backends (remote/vfs_remote.c); a
   * scheme without one is refused */
  CHECK(ds_shard_spec_expand("hdfs://bucket/x.bagz", &l, &err) == -1);
  CHECK_CONTAINS(err, "unsupported file system prefix 'hdfs:'");
  CHECK(ds_shard_spec_expand(",,", &l, &err) == -1);
  CHECK_CONTAINS(err, "names no file");
  free(err);
}

static void test_shard_map(void) {
  ds_shard_map m;
  char *err = NULL;
  uint64_t sizes[] = {8, 4, 0, 5};
  CHECK(ds_shard_map_init(&m, DS_LAYOUT_CONCATENATED, sizes, 4, &err) == 0);
  CHECK(m.total == 17);
  size_t s;
  uint64_t i;
  int ok = 1;
  for (uint64_t g = 0; g < 17; g++) {
    ds_shard_map_locate(&m, g, &s, &i);
    size_t ws = g < 8 ? 0 : g < 12 ? 1 : 3;
    uint64_t wi = g < 8 ? g : g < 12 ? g - 8 : g - 12;
    if (s != ws || i != wi || ds_shard_map_global(&m, s, i) != g) ok = 0;
  }
  CHECK_MSG(ok, "concatenated mapping of sizes [8,4,0,5]");
  ds_shard_map_free(&m);
  CHECK(ds_shard_map_init(&m, DS_LAYOUT_INTERLEAVED, sizes, 4, &err) == -1);
  CHECK_CONTAINS(err, "within 1");

  uint64_t inter[] = {6, 6, 5};
  CHECK(ds_shard_map_init(&m, DS_LAYOUT_INTERLEAVED, inter, 3, &err) == 0);
  ds_shard_map_locate(&m, 16, &s, &i);
  CHECK(s == 1 && i == 5);
  CHECK(ds_shard_map_global(&m, 2, 4) == 14);
  ds_shard_map_free(&m);
  uint64_t growing[] = {5, 6};
  CHECK(ds_shard_map_init(&m, DS_LAYOUT_INTERLEAVED, growing, 2, &err) == -1);
  CHECK_CONTAINS(err, "non-increasing");
  uint64_t ones[] = {1, 1, 0};
  CHECK(ds_shard_map_init(&m, DS_LAYOUT_INTERLEAVED, ones, 3, &err) == 0);
  CHECK(m.total == 2);
  ds_shard_map_free(&m);
  free(err);
}

static void test_options(void) {
  ds_options o = {0};
  char *err = NULL;
  CHECK(ds_options_add(&o, "layout=interleaved", &err) == 0);
  CHECK(ds_options_add(&o, "'dictionary=my dict.txt'", &err) == 0);
  CHECK(ds_options_add(&o, "threads = \"1\"", &err) == 0);
  CHECK_STR(ds_options_get(&o, "dictionary"), "my dict.txt");
  CHECK_STR(ds_options_get(&o, "threads"), "1");
  CHECK(ds_options_add(&o, "layout=concatenated", &err) == -1);
  CHECK_CONTAINS(err, "given twice");
  CHECK(ds_options_add(&o, "nonsense", &err) == -1);
  CHECK_CONTAINS(err, "name=value");
  /* a bare yes/no option is switched on; a bare option of another kind
   * still needs its value */
  CHECK(ds_options_add(&o, "Anonymous", &err) == 0);
  CHECK_STR(ds_options_get(&o, "anonymous"), "true");
  CHECK(ds_options_add(&o, "anonymous=0", &err) == -1);
  CHECK_CONTAINS(err, "given twice");
  CHECK(ds_options_add(&o, "retries", &err) == -1);
  CHECK_CONTAINS(err, "'retries' is not of the form name=value");
  CHECK(ds_options_put(&o, "x", "'kept as given'", &err) == 0);
  CHECK_STR(ds_options_get(&o, "x"), "'kept as given'");
  ds_options_free(&o);

  CHECK(ds_options_add_list(&o, "a=1, b='x,y' ,c=\"q\"", &err) == 0);
  CHECK(o.n == 3);
  CHECK_STR(ds_options_get(&o, "b"), "x,y");
  CHECK_STR(ds_options_get(&o, "c"), "q");
  ds_options_free(&o);
  char *d = ds_dequote("'it''s'");
  CHECK_STR(d, "it's");
  free(d);
  free(err);
}

/* Collect a whole iteration as a string "a,b,c". */
static void walk(const ds_rowset *rs, char *out, size_t cap) {
  ds_rowiter it;
  ds_rowiter_init(&it, rs);
  uint64_t g;
  out[0] = 0;
  size_t len = 0;
  while (ds_rowiter_next(&it, &g) && len + 24 < cap)
    len += (size_t)snprintf(out + len, cap - len, "%s%llu", len ? "," : "",
                            (unsigned long long)g);
}

static void test_rowset(void) {
  char s[512];
  ds_rowset rs;
  ds_rowset_init_all(&rs, 10);
  ds_rowset_clip(&rs, 3, 8);
  walk(&rs, s, sizeof s);
  CHECK_STR(s, "3,4,5,6,7");
  rs.desc = 1;
  rs.offset = 1;
  rs.limit = 2;
  walk(&rs, s, sizeof s);
  CHECK_STR(s, "6,5");
  ds_rowset_free(&rs);

  uint64_t *ids = malloc(6 * sizeof *ids);
  uint64_t v[] = {7, 0, 7, 99, 13, 7};
  memcpy(ids, v, sizeof v);
  ds_rowset_init_list(&rs, ids, 6);
  walk(&rs, s, sizeof s);
  CHECK_STR(s, "0,7,13,99");
  rs.offset = 1;
  rs.desc = 1;
  walk(&rs, s, sizeof s);
  CHECK_STR(s, "13,7,0");
  CHECK(ds_rowset_contains(&rs, 13) && !ds_rowset_contains(&rs, 12));
  ds_rowset_free(&rs);

  ds_range *r = malloc(3 * sizeof *r);
  r[0] = (ds_range){12, 15};
  r[1] = (ds_range){0, 3};
  r[2] = (ds_range){2, 5};
  ds_rowset_init_ranges(&rs, r, 3);
  CHECK(rs.nranges == 2);
  rs.offset = 3;
  walk(&rs, s, sizeof s);
  CHECK_STR(s, "3,4,12,13,14");
  rs.desc = 1;
  rs.offset = 1;
  walk(&rs, s, sizeof s);
  CHECK_STR(s, "13,12,4,3,2,1,0");
  ds_rowset_free(&rs);

  /* shards 0 and 2 of an interleaved set of sizes [6, 6, 5] */
  uint64_t *st = malloc(2 * sizeof *st), *ct = malloc(2 * sizeof *ct);
  st[0] = 2; ct[0] = 5; st[1] = 0; ct[1] = 6;
  ds_rowset_init_strided(&rs, 3, st, ct, 2);
  walk(&rs, s, sizeof s);
  CHECK_STR(s, "0,2,3,5,6,8,9,11,12,14,15");
  ds_rowset_clip(&rs, 4, 13);
  walk(&rs, s, sizeof s);
  CHECK_STR(s, "5,6,8,9,11,12");
  rs.desc = 1;
  walk(&rs, s, sizeof s);
  CHECK_STR(s, "12,11,9,8,6,5");
  CHECK(ds_rowset_contains(&rs, 8) && !ds_rowset_contains(&rs, 7));
  ds_rowset_free(&rs);

  ds_rowset_init_all(&rs, 0);
  walk(&rs, s, sizeof s);
  CHECK_STR(s, "");
  ds_rowset_free(&rs);
}

/* A walk taking runs (ds_rowiter_run, at most max rows each) after each
 * row ds_rowiter_next gives, as "a,b,c"; *runs: the rows runs gave. */
static void walk_runs(const ds_rowset *rs, uint64_t max, char *out, size_t cap,
                      uint64_t *runs) {
  ds_rowiter it;
  ds_rowiter_init(&it, rs);
  uint64_t g;
  size_t len = 0;
  out[0] = 0;
  *runs = 0;
  while (ds_rowiter_next(&it, &g) && len + 24 < cap) {
    uint64_t n = ds_rowiter_run(&it, max);
    *runs += n;
    for (uint64_t k = 0; k <= n && len + 24 < cap; k++)
      len += (size_t)snprintf(out + len, cap - len, "%s%llu", len ? "," : "",
                              (unsigned long long)(g + k));
  }
}

/* ds_rowiter_run: the same rows as the plain walk for ascending ranges
 * (across ranges, with OFFSET and LIMIT), none taken for other walks. */
static void test_rowiter_run(void) {
  char s[512], want[512];
  uint64_t runs;
  ds_range *r = malloc(2 * sizeof *r);
  r[0] = (ds_range){0, 10};
  r[1] = (ds_range){20, 25};
  ds_rowset rs;
  ds_rowset_init_ranges(&rs, r, 2);
  walk(&rs, want, sizeof want);
  walk_runs(&rs, 3, s, sizeof s, &runs);
  CHECK_STR(s, want);
  CHECK(runs == 10); /* rows 1-3, 5-7, 9, 21-23 */
  rs.offset = 2;
  rs.limit = 11;
  walk(&rs, want, sizeof want);
  walk_runs(&rs, 100, s, sizeof s, &runs);
  CHECK_STR(s, want);
  CHECK_STR(s, "2,3,4,5,6,7,8,9,20,21,22");
  CHECK(runs == 9); /* 3-9 after 2, 21-22 after 20 (the LIMIT) */
  rs.desc = 1;
  rs.limit = UINT64_MAX;
  walk_runs(&rs, 100, s, sizeof s, &runs);
  CHECK(runs == 0);
  ds_rowset_free(&rs);
  uint64_t *ids = malloc(3 * sizeof *ids);
  ids[0] = 1, ids[1] = 2, ids[2] = 3;
  ds_rowset_init_list(&rs, ids, 3);
  walk_runs(&rs, 100, s, sizeof s, &runs);
  CHECK(runs == 0);
  CHECK_STR(s, "1,2,3");
  ds_rowset_free(&rs);
}

static void test_mapped_file(void) {
  ds_file f;
  char *err = NULL;
  char path[256];
  snprintf(path, sizeof path, "%s/plain.bag", FIX);
  CHECK(ds_file_load(&f, path, &err) == 0);
  CHECK(f.size == 11479);
  const uint8_t *p;
  CHECK(ds_file_slice(&f, 11479, 0, &p, &err) == 0);
  CHECK(ds_file_slice(&f, 11471, 8, &p, &err) == 0);
  CHECK(ds_file_slice(&f, 11471, 9, &p, &err) == -1);
  CHECK_CONTAINS(err, "9 bytes at offset 11471 run past the end of the file (11479 bytes)");
  CHECK(ds_file_slice(&f, UINT64_MAX, 2, &p, &err) == -1);
  uint64_t v;
  CHECK(ds_file_u64le(&f, 11471, &v, &err) == 0);
  CHECK(ds_file_u64le(&f, 11472, &v, &err) == -1);
  ds_file_close(&f);
  CHECK(ds_file_open(&f, "tests/no-such-file", &err) == -1);
  CHECK_CONTAINS(err, "tests/no-such-file: cannot open: No such file or directory");
  CHECK(ds_file_open(&f, "tests", &err) == -1);
  CHECK_CONTAINS(err, "a directory, not a regular file");
  free(err);
}

/* A frame that declares no size and expands past the cap is refused with
 * its buffer grown to at most the cap (+1 byte), not to twice it. */
static void test_zstd_stream_cap(void) {
  size_t n = (size_t)3 << 20, cap = ((size_t)1 << 20) + 12345;
  uint8_t *src = calloc(n, 1), *frame = malloc(ZSTD_compressBound(n));
  ZSTD_CCtx *cc = ZSTD_createCCtx();
  ZSTD_CCtx_setParameter(cc, ZSTD_c_contentSizeFlag, 0);
  size_t fn = ZSTD_compress2(cc, frame, ZSTD_compressBound(n), src, n);
  CHECK(!ZSTD_isError(fn) && ds_zstd_content_size(frame, fn) == 0);
  ds_zstd_ctx z;
  ds_zstd_ctx_init(&z, NULL);
  ds_buf out = {0};
  out.max = cap;
  char *err = NULL;
  CHECK(ds_zstd_decompress(&z, frame, fn, &out, &err) == -1);
  CHECK_CONTAINS(err, "max_value_bytes");
  CHECK_MSG(out.cap <= cap + 1, "buffer grew to %zu bytes for a cap of %zu", out.cap, cap);
  free(err);
  ds_buf_free(&out);
  ds_zstd_ctx_free(&z);
  ZSTD_freeCCtx(cc);
  free(src);
  free(frame);
}

/* ds_grow: reallocates only when the count is a power of two. */
static void test_grow(void) {
  uint64_t *a = NULL;
  size_t grows = 0, n = 0;
  for (; n < 100000; n++) {
    uint64_t *b = ds_grow(a, n, sizeof *a);
    if (!b) break;
    if (n == 0 || (n & (n - 1)) == 0) grows++; /* the only counts that may move it */
    else if (b != a) break;                    /* a move at any other count: wrong */
    a = b;
    a[n] = n;
  }
  CHECK(n == 100000);
  CHECK(grows == 18); /* at 0, 1, 2, 4, ..., 65536: log2 steps, not n */
  CHECK(a && a[99999] == 99999 && a[65536] == 65536);
  free(a);
}

/* Streamed files read through a window; one that shrinks under the window
 * gives an error naming it and the offset, not a fault. */
static void test_view_shrink(void) {
  char src[256], dst[] = "/tmp/ds-view-XXXXXX";
  snprintf(src, sizeof src, "%s/plain.bag", FIX);
  int fd = mkstemp(dst);
  CHECK(fd >= 0);
  FILE *in = fopen(src, "rb");
  char buf[4096];
  size_t k;
  while (in && (k = fread(buf, 1, sizeof buf, in)) > 0) CHECK(write(fd, buf, k) == (ssize_t)k);
  if (in) fclose(in);
  close(fd);
  ds_file f;
  char *err = NULL;
  ds_view v = {0};
  const uint8_t *p, *q;
  CHECK(ds_file_open(&f, dst, &err) == 0 && f.data == NULL && f.size == 11479);
  CHECK(ds_view_read(&v, &f, 11471, 8, &p, &err) == 0);
  CHECK(ds_view_read(&v, &f, 11471, 9, &p, &err) == -1);
  CHECK_CONTAINS(err, "9 bytes at offset 11471 run past the end of the file (11479 bytes)");
  CHECK(ds_view_read(&v, &f, 0, 16, &p, &err) == 0);
  CHECK(ds_view_read(&v, &f, 16, 16, &q, &err) == 0);             /* forward: */
  CHECK(ds_view_read(&v, &f, 11000, 8, &p, &err) == 0 && p == q + 10984); /* read ahead */
  CHECK(truncate(dst, 4096) == 0);
  CHECK(ds_view_read(&v, &f, 100, 8, &p, &err) == 0); /* still in the window */
  ds_view_reset(&v);
  CHECK(ds_view_read(&v, &f, 11000, 8, &p, &err) == -1);
  CHECK_CONTAINS(err, "cannot read 8 bytes at offset 11000: the file was truncated to 4096 "
                      "bytes while in use (it had 11479 when opened)");
  CHECK_CONTAINS(err, dst);
  uint64_t x;
  CHECK(ds_file_u64le(&f, 11471, &x, &err) == -1);
  CHECK(ds_file_stale(&f) == 1);
  ds_view_free(&v);
  ds_file_close(&f);
  unlink(dst);
  free(err);
}

static void test_zstd(void) {
  char *err = NULL;
  const char *text = "hello hello hello hello zstd";
  uint8_t frame[256];
  size_t fn = ZSTD_compress(frame, sizeof frame, text, strlen(text), 3);
  CHECK(!ZSTD_isError(fn));
  ds_zstd_ctx z;
  ds_zstd_ctx_init(&z, NULL);
  ds_buf out = {0};
  CHECK(ds_zstd_decompress(&z, frame, fn, &out, &err) == 0);
  CHECK(out.len == strlen(text) && memcmp(out.data, text, out.len) == 0);
  CHECK(ds_zstd_decompress(&z, frame, fn - 1, &out, &err) == -1);
  CHECK_CONTAINS(err, "truncated or corrupt zstd frame");
  uint8_t two[512];
  memcpy(two, frame, fn);
  memcpy(two + fn, "junk", 4);
  CHECK(ds_zstd_decompress(&z, two, fn + 4, &out, &err) == -1);
  CHECK_CONTAINS(err, "4 bytes follow the zstd frame");
  CHECK(ds_zstd_decompress(&z, (const uint8_t *)"garbage!", 8, &out, &err) == -1);
  CHECK_CONTAINS(err, "not a zstd frame");
  CHECK(ds_zstd_content_size(frame, fn) == strlen(text));

  /* frames without a content size are streamed, and concatenations joined */
  ZSTD_CCtx *cc = ZSTD_createCCtx();
  ZSTD_CCtx_setParameter(cc, ZSTD_c_contentSizeFlag, 0);
  ZSTD_inBuffer in = {text, strlen(text), 0};
  ZSTD_outBuffer ob = {two, sizeof two, 0};
  CHECK(ZSTD_compressStream2(cc, &ob, &in, ZSTD_e_end) == 0);
  size_t n1 = ob.pos;
  in.pos = 0;
  ob.size = sizeof two;
  CHECK(ZSTD_compressStream2(cc, &ob, &in, ZSTD_e_end) == 0);
  ZSTD_freeCCtx(cc);
  CHECK(ds_zstd_content_size(two, ob.pos) == 0);
  CHECK(ds_zstd_decompress(&z, two, n1, &out, &err) == 0);
  CHECK(out.len == strlen(text));
  CHECK(ds_zstd_decompress(&z, two, ob.pos, &out, &err) == 0);
  CHECK(out.len == 2 * strlen(text) && memcmp(out.data + out.len / 2, text, out.len / 2) == 0);
  CHECK(ds_zstd_decompress(&z, two, n1 - 2, &out, &err) == -1);
  CHECK_CONTAINS(err, "truncated zstd frame");

  /* a dictionary: raw content, id 0 */
  const char *dict = "the quick brown fox jumps over the lazy dog";
  ZSTD_CDict *cd = ZSTD_createCDict(dict, strlen(dict), 3);
  ZSTD_CCtx *c2 = ZSTD_createCCtx();
  fn = ZSTD_compress_usingCDict(c2, frame, sizeof frame, dict, strlen(dict), cd);
  ZSTD_freeCCtx(c2);
  ZSTD_freeCDict(cd);
  ds_zstd_dict *dd;
  CHECK(ds_zstd_dict_new(dict, strlen(dict), &dd, &err) == 0);
  CHECK(ds_zstd_decompress(&z, frame, fn, &out, &err) == -1);
  z.dict = dd;
  CHECK(ds_zstd_decompress(&z, frame, fn, &out, &err) == 0);
  CHECK(out.len == strlen(dict) && memcmp(out.data, dict, out.len) == 0);
  ds_zstd_dict_free(dd);

  /* a frame header claiming more than the cap is refused before allocating */
  z.dict = NULL;
  z.max_out = 8;
  fn = ZSTD_compress(frame, sizeof frame, text, strlen(text), 3);
  CHECK(ds_zstd_decompress(&z, frame, fn, &out, &err) == -1);
  CHECK_CONTAINS(err, "claims 28 bytes, more than max_value_bytes=8");

  /* the output buffer's max (max_value_bytes) caps too, below the
   * context's; a declared size is refused before allocating anything */
  z.max_out = DS_MAX_VALUE_BYTES;
  ds_buf small = {0};
  small.max = 20;
  CHECK(ds_zstd_decompress(&z, frame, fn, &small, &err) == -1);
  CHECK_CONTAINS(err, "claims 28 bytes, more than max_value_bytes=20");
  CHECK(small.cap == 0);
  small.max = 28;
  CHECK(ds_zstd_decompress(&z, frame, fn, &small, &err) == 0);
  CHECK(small.len == 28 && small.cap <= 28 && memcmp(small.data, text, 28) == 0);
  ds_buf_free(&small);
  /* streamed frames (no declared size) stop one byte past the cap */
  ZSTD_CCtx *c3 = ZSTD_createCCtx();
  ZSTD_CCtx_setParameter(c3, ZSTD_c_contentSizeFlag, 0);
  ZSTD_inBuffer in3 = {text, strlen(text), 0};
  ZSTD_outBuffer ob3 = {frame, sizeof frame, 0};
  CHECK(ZSTD_compressStream2(c3, &ob3, &in3, ZSTD_e_end) == 0);
  ZSTD_freeCCtx(c3);
  small.max = 20;
  CHECK(ds_zstd_decompress(&z, frame, ob3.pos, &small, &err) == -1);
  CHECK_CONTAINS(err, "decompresses to more than max_value_bytes=20 bytes");
  CHECK(small.cap <= 64); /* the smallest buffer ds_buf allocates */
  small.max = 28;
  CHECK(ds_zstd_decompress(&z, frame, ob3.pos, &small, &err) == 0);
  CHECK(small.len == 28 && memcmp(small.data, text, 28) == 0);
  ds_buf_free(&small);
  ds_zstd_ctx_free(&z);
  ds_buf_free(&out);
  free(err);
}

/* Cancellation scopes: polls ask the innermost scope's callback, at most
 * once a millisecond, the first time 1 ms after the first check (tests
 * make the next ask due at once). */
static int calls;
static int say_stop(void *ctx) {
  calls++;
  return *(const int *)ctx;
}
static int row_x(void *ctx, uint64_t row, const uint8_t **p, size_t *n, char **err) {
  (void)ctx;
  (void)row;
  (void)err;
  *p = (const uint8_t *)"x";
  *n = 1;
  return 0;
}

/* A contiguous context (atlas's) keeps a window with a copy of the last
 * dictionary: a dictionary freed and a new one made (the allocator may
 * hand out the same address) must not decode with the old copy. Found as
 * "zstd: Dictionary mismatch" on one atlas table-valued call after
 * another in one connection. */
static void test_zstd_window_new_dict(void) {
  char *err = NULL;
  ds_zstd_ctx z;
  ds_zstd_ctx_init(&z, NULL);
  z.contiguous = 1;
  ds_buf out = {0};
  enum { N = 40, DN = 2048 };
  static char dicts[N][DN];
  static uint8_t frames[N][4096];
  size_t fn[N];
  unsigned x = 1;
  for (int i = 0; i < N; i++) { /* first every frame, so that only the
                                 * dictionaries come and go below */
    for (int k = 0; k < DN; k++) {
      x = x * 1103515245u + 12345u;
      dicts[i][k] = (char)(x >> 16);
    }
    /* the text is the dictionary: the frame is matches into it */
    ZSTD_CDict *cd = ZSTD_createCDict(dicts[i], DN, 3);
    ZSTD_CCtx *cc = ZSTD_createCCtx();
    fn[i] = ZSTD_compress_usingCDict(cc, frames[i], sizeof frames[i], dicts[i], DN, cd);
    ZSTD_freeCCtx(cc);
    ZSTD_freeCDict(cd);
    CHECK(!ZSTD_isError(fn[i]) && fn[i] < 100);
  }
  int same = 0;
  for (int i = 0; i < N; i++) { /* (glibc hands the freed address out
                                 * again most of the time) */
    ds_zstd_dict *d;
    CHECK(ds_zstd_dict_new(dicts[i], DN, &d, &err) == 0);
    z.dict = d;
    int rc = ds_zstd_decompress(&z, frames[i], fn[i], &out, &err);
    same += rc == 0 && out.len == DN && memcmp(out.data, dicts[i], DN) == 0;
    ds_zstd_dict_free(d);
  }
  CHECK(same == 40);
  z.dict = NULL;
  ds_zstd_ctx_free(&z);
  ds_buf_free(&out);
  free(err);
}

static void test_cancel(void) {
  CHECK(ds_cancel_poll() == 0 && ds_cancel_check() == 0); /* no scope */
  int yes = 1, no = 0;
  ds_cancel_scope fresh;
  ds_cancel_begin(&fresh, say_stop, &yes);
  calls = 0;
  CHECK(ds_cancel_check() == 0 && calls == 0); /* starts the clock only */
  CHECK(ds_cancel_end(&fresh) == 0);
  ds_cancel_scope outer, inner;
  ds_cancel_begin(&outer, say_stop, &no);
  outer.next_ns = 1; /* due at once */
  calls = 0;
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  int64_t before = (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
  CHECK(ds_cancel_check() == 0 && calls == 1);
  /* the next ask is due 1 ms after this one; until then a check does not
   * ask. (Tested through next_ns, not by checking again at once: a thread
   * preempted for a millisecond on a loaded machine would see it due.) */
  CHECK(outer.next_ns >= before + DS_CANCEL_EVERY_NS);
  int64_t due = outer.next_ns;
  outer.next_ns = INT64_MAX; /* not due, however long this thread waits */
  CHECK(ds_cancel_check() == 0 && calls == 1);
  outer.next_ns = due;
  ds_cancel_begin(&inner, say_stop, &yes);
  inner.next_ns = 1;
  int polls = 0;
  while (!ds_cancel_poll() && polls < 1000) polls++;
  CHECK_MSG(polls == 63 && calls == 2, "polls %d, calls %d", polls, calls); /* every 64th */
  CHECK(ds_cancel_check() == 1 && calls == 2); /* sticky, not asked again */
  /* long loops give up with "interrupted" */
  ds_hash_index h;
  char *err = NULL;
  CHECK(ds_hash_index_build(&h, 1000, row_x, NULL, &err) == -1);
  CHECK_STR(err, DS_CANCEL_MSG);
  CHECK(h.entries == NULL && h.n == 0);
  uint64_t *ids = malloc(1000 * sizeof *ids);
  for (int i = 0; i < 1000; i++) ids[i] = (uint64_t)i;
  ds_rowset rs;
  ds_rowset_init_list(&rs, ids, 1000);
  rs.offset = 500;
  ds_rowiter it;
  ds_rowiter_init(&it, &rs);
  uint64_t g;
  CHECK(ds_rowiter_next(&it, &g) == 0); /* the offset skip stopped */
  CHECK(ds_cancel_end(&inner) == 1);
  CHECK(ds_cancel_check() == 0); /* the outer scope again: not hit */
  ds_rowiter_init(&it, &rs);
  CHECK(ds_rowiter_next(&it, &g) == 1 && g == 500);
  CHECK(ds_hash_index_build(&h, 1000, row_x, NULL, &err) == 0 && h.n == 1000);
  ds_hash_index_free(&h);
  ds_rowset_free(&rs);
  CHECK(ds_cancel_end(&outer) == 0);
  CHECK(ds_cancel_poll() == 0);
  free(err);
}

/* ds_buf.max and the arena limit: growth past the cap fails and says so. */
static void test_caps(void) {
  ds_buf b = {0};
  b.max = 100;
  CHECK(ds_buf_append(&b, "0123456789", 10) == 0 && b.cap <= 100 && !b.over);
  CHECK(ds_buf_reserve(&b, 100) == 0 && b.cap == 100);
  CHECK(ds_buf_reserve(&b, 101) == -1 && b.over && b.cap == 100);
  ds_buf_free(&b);
  CHECK(b.max == 100 && !b.over);
  char *err = NULL;
  CHECK(ds_err_too_big(&err, "record", 200, 100) == -1);
  CHECK_STR(err, "record of 200 bytes is more than max_value_bytes=100");
  ds_arena a = {0};
  a.limit = 64;
  CHECK(ds_arena_alloc(&a, 48) != NULL && !a.over);
  CHECK(ds_arena_alloc(&a, 32) == NULL && a.over);
  ds_arena_fail(&a, &err);
  CHECK_STR(err, "value needs more than max_value_bytes=64 bytes");
  ds_arena_reset(&a);
  CHECK(!a.over && ds_arena_alloc(&a, 64) != NULL);
  ds_arena_free(&a);
  ds_arena_fail(&a, &err);
  CHECK_STR(err, "out of memory");
  free(err);
}

static const char *keys[] = {"apple", "banana", "apple", "", "cherry", "apple"};

static int get_key(void *ctx, uint64_t row, const uint8_t **p, size_t *n, char **err) {
  (void)ctx;
  (void)err;
  *p = (const uint8_t *)keys[row];
  *n = strlen(keys[row]);
  return 0;
}

static void test_hash_index(void) {
  ds_hash_index h;
  char *err = NULL;
  CHECK(ds_hash_index_build(&h, 6, get_key, NULL, &err) == 0);
  const ds_hash_entry *e;
  size_t m = ds_hash_index_find(&h, "apple", 5, &e);
  CHECK(m == 3 && e[0].row == 0 && e[1].row == 2 && e[2].row == 5);
  m = ds_hash_index_find(&h, "", 0, &e);
  CHECK(m == 1 && e[0].row == 3);
  CHECK(ds_hash_index_find(&h, "appl", 4, &e) == 0);
  CHECK(ds_hash64("a", 1) != ds_hash64("b", 1));
  CHECK(ds_hash64("", 0) != ds_hash64("\0", 1));
  ds_hash_index_free(&h);
  free(err);
}

int main(void) {
  test_shard_spec();
  test_shard_map();
  test_options();
  test_rowset();
  test_rowiter_run();
  test_mapped_file();
  test_view_shrink();
  test_grow();
  test_zstd_stream_cap();
  test_zstd();
  test_zstd_window_new_dict();
  test_caps();
  test_cancel();
  test_hash_index();
  return check_exit();
}
