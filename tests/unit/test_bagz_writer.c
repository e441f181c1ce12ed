/* test_bagz_writer.c - the bagz writer without SQLite: every upstream
 * fixture is read record by record and written again; uncompressed bags
 * (and empty ones) must come out byte for byte as upstream wrote them,
 * zstd bags record for record (stored frames depend on the zstd version;
 * we count how many are identical anyway and check each frame carries its
 * content size). Then sharding, two threads, savepoints, abort, a second
 * transaction and mode=create; and the two-thread compressor alone over
 * many batches (under make tsan, its batch hand-over between threads). */
#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <zstd.h>

#include "check.h"
#include "fixture.h"
#include "core/common.h"
#include "core/mapped_file.h"
#include "formats/bagz/bagz.h"
#include "formats/bagz/bagz_compress.h"
#include "formats/bagz/bagz_writer.h"

/* The windows records are read through (pread): one per reader, since
 * a read through a window ends the bytes of the one before. */
static bagz_io t_io, t_io_b;

#define FIX "tests/fixtures/upstream/bagz/"

static char tmp[64];

/* "<tmp>/<name>" in a static buffer (one at a time per slot). */
static const char *at(int slot, const char *name) {
  static char buf[4][256];
  snprintf(buf[slot], sizeof buf[slot], "%s/%s", tmp, name);
  return buf[slot];
}

/* Open a stage + writer for spec, or report. */
static sharded_writer *writer(const char *spec, const bagz_writer_options *o,
                           ds_stage_mode mode, ds_stage **stage, char **err) {
  char *dir, *key;
  sharded_writer *w = NULL;
  *stage = NULL;
  if (bagz_writer_target(spec, &dir, &key, err)) return NULL;
  if (ds_stage_open(dir, key, mode, stage, err) == 0 &&
      bagz_writer_open(*stage, spec, o, &w, err) != 0) {
    ds_stage_close(*stage);
    *stage = NULL;
  }
  free(dir);
  free(key);
  return w;
}

/* Copy every record of src (read with ro) to dst (written with wo). */
static int copy_bag(const char *src, const bagz_options *ro, const char *dst,
                    const bagz_writer_options *wo) {
  bagz_reader *r;
  char *err = NULL;
  ds_stage *st;
  if (bagz_open(src, ro, &r, &err)) {
    check_note("    %s: %s\n", src, err);
    free(err);
    return -1;
  }
  sharded_writer *w = writer(dst, wo, DS_STAGE_REPLACE, &st, &err);
  ds_zstd_ctx z;
  ds_zstd_ctx_init(&z, r->dict);
  ds_buf scratch = {0};
  int rc = w ? 0 : -1;
  for (uint64_t i = 0; i < bagz_count(r) && rc == 0; i++) {
    const uint8_t *p;
    size_t n;
    rc = bagz_read(r, &z, &t_io, i, &scratch, &p, &n, &err);
    if (rc == 0) rc = sharded_writer_add(w, p, n, &err);
  }
  if (rc == 0) rc = sharded_writer_prepare(w, &err);
  if (rc == 0) rc = sharded_writer_publish(w, &err);
  if (rc) check_note("    copy %s -> %s: %s\n", src, dst, err);
  sharded_writer_close(w);
  ds_stage_close(st);
  ds_zstd_ctx_free(&z);
  ds_buf_free(&scratch);
  bagz_close(r);
  free(err);
  return rc;
}

/* 1 when two files hold the same bytes. */
static int same_file(const char *a, const char *b) {
  ds_file fa, fb;
  char *err = NULL;
  int ok = 0;
  if (ds_file_load(&fa, a, &err) == 0) {
    if (ds_file_load(&fb, b, &err) == 0) {
      ok = fa.size == fb.size && (fa.size == 0 || memcmp(fa.data, fb.data, fa.size) == 0);
      if (!ok) check_note("    %s (%llu bytes) differs from %s (%llu bytes)\n", a,
                      (unsigned long long)fa.size, b, (unsigned long long)fb.size);
      ds_file_close(&fb);
    }
    ds_file_close(&fa);
  }
  if (err) check_note("    %s\n", err);
  free(err);
  return ok;
}

/* 1 when two bags hold the same records. *same_frames counts stored
 * records that are byte-identical; *all_sized tells whether every frame
 * of b declares its content size. */
static int same_records(const char *a, const bagz_options *oa, const char *b,
                        const bagz_options *ob, uint64_t *same_frames,
                        int *all_sized) {
  bagz_reader *ra, *rb;
  char *err = NULL;
  if (same_frames) *same_frames = 0;
  if (all_sized) *all_sized = 0; /* not known until b's frames are read */
  if (bagz_open(a, oa, &ra, &err)) return check_note("    %s\n", err), free(err), 0;
  if (bagz_open(b, ob, &rb, &err)) {
    check_note("    %s\n", err);
    bagz_close(ra);
    free(err);
    return 0;
  }
  ds_zstd_ctx za, zb;
  ds_zstd_ctx_init(&za, ra->dict);
  ds_zstd_ctx_init(&zb, rb->dict);
  ds_buf sa = {0}, sb = {0};
  int ok = bagz_count(ra) == bagz_count(rb);
  if (all_sized) *all_sized = ok;
  for (uint64_t i = 0; ok && i < bagz_count(ra); i++) {
    const uint8_t *p, *q;
    size_t n, m;
    ok = bagz_read(ra, &za, &t_io, i, &sa, &p, &n, &err) == 0 &&
         bagz_read(rb, &zb, &t_io_b, i, &sb, &q, &m, &err) == 0 && n == m &&
         memcmp(p, q, n) == 0;
    if (!ok) check_note("    record %llu differs %s\n", (unsigned long long)i, err ? err : "");
    size_t sh, shb;
    uint64_t ix, ixb;
    ds_shard_map_locate(&ra->map, i, &sh, &ix);
    ds_shard_map_locate(&rb->map, i, &shb, &ixb);
    if (ok && bagz_stored(ra, &t_io, sh, ix, &p, &n, &err) == 0 &&
        bagz_stored(rb, &t_io_b, shb, ixb, &q, &m, &err) == 0) {
      if (same_frames && n == m && memcmp(p, q, n) == 0) (*same_frames)++;
      if (all_sized && m > 0 &&
          ZSTD_getFrameContentSize(q, m) == ZSTD_CONTENTSIZE_UNKNOWN)
        *all_sized = 0;
    }
  }
  ds_zstd_ctx_free(&za);
  ds_zstd_ctx_free(&zb);
  ds_buf_free(&sa);
  ds_buf_free(&sb);
  bagz_close(ra);
  bagz_close(rb);
  free(err);
  return ok;
}

/* Uncompressed fixtures come back byte for byte. */
static void test_uncompressed(void) {
  bagz_options none = {.compression = BAGZ_COMPRESSION_NONE};
  bagz_writer_options wo = {0};
  CHECK(copy_bag(FIX "plain.bag", &none, at(0, "plain.bag"), &wo) == 0);
  CHECK(same_file(FIX "plain.bag", at(0, "plain.bag")));
  CHECK(copy_bag(FIX "keys.bag", &none, at(0, "keys.bag"), &wo) == 0);
  CHECK(same_file(FIX "keys.bag", at(0, "keys.bag")));
  CHECK(copy_bag(FIX "forced_none.bagz", &none, at(0, "forced_none.bagz"), &wo) == 0);
  CHECK(same_file(FIX "forced_none.bagz", at(0, "forced_none.bagz")));
  /* empty bags are the same with or without zstd */
  bagz_writer_options z = {.zstd = 1};
  CHECK(copy_bag(FIX "empty.bagz", &none, at(0, "empty.bagz"), &z) == 0);
  CHECK(same_file(FIX "empty.bagz", at(0, "empty.bagz")));
  bagz_options aut = {0};
  CHECK(copy_bag(FIX "allempty.bagz", &aut, at(0, "allempty.bagz"), &z) == 0);
  CHECK(same_file(FIX "allempty.bagz", at(0, "allempty.bagz")));
  /* separate limits: records file and limits file */
  bagz_options sep = {.limits = BAGZ_LIMITS_SEPARATE, .compression = BAGZ_COMPRESSION_NONE};
  bagz_writer_options wsep = {.limits = BAGZ_LIMITS_SEPARATE};
  CHECK(copy_bag(FIX "separate.bagz", &sep, at(0, "separate.bagz"), &wsep) == 0);
  CHECK(same_file(FIX "separate.bagz", at(0, "separate.bagz")));
  CHECK(same_file(FIX "limits.separate.bagz", at(0, "limits.separate.bagz")));
}

/* zstd fixtures: same records; report how many frames are identical. */
static void zstd_case(const char *name, const bagz_options *ro,
                      const bagz_writer_options *wo) {
  char src[256];
  snprintf(src, sizeof src, FIX "%s", name);
  CHECK_MSG(copy_bag(src, ro, at(0, name), wo) == 0, "%s", name);
  uint64_t same = 0;
  int sized = 0;
  int ok = same_records(src, ro, at(0, name), ro, &same, &sized);
  CHECK_MSG(ok, "%s: every record", name);
  CHECK_MSG(ok && sized, "%s: every frame has its content size", name);
  if (ok)
    printf("    (%s: %llu stored records byte-identical to upstream's)\n", name,
           (unsigned long long)same);
}

static void test_zstd(void) {
  bagz_options aut = {0};
  bagz_writer_options wo = {.zstd = 1};
  zstd_case("zstd.bagz", &aut, &wo);
  zstd_case("mid.bagz", &aut, &wo);
  zstd_case("bigframe.bagz", &aut, &wo);
  wo.level = 19;
  zstd_case("level19.bagz", &aut, &wo);
  bagz_options zo = {.compression = BAGZ_COMPRESSION_ZSTD};
  wo.level = 0;
  zstd_case("forced_zstd.bag", &zo, &wo);
  /* a raw-content dictionary, as upstream's dict.bagz */
  ds_file d;
  char *err = NULL;
  if (CHECK(ds_file_load(&d, FIX "dict_raw.txt", &err) == 0)) {
    bagz_options dro = {.dictionary_path = FIX "dict_raw.txt"};
    bagz_writer_options dwo = {.zstd = 1, .level = 3, .dictionary = d.data,
                               .dictionary_len = d.size};
    zstd_case("dict.bagz", &dro, &dwo);
    bagz_options nodict = {0};
    bagz_reader *r;
    CHECK(bagz_open(at(0, "dict.bagz"), &nodict, &r, &err) == 0);
    ds_zstd_ctx z;
    ds_zstd_ctx_init(&z, NULL);
    ds_buf s = {0};
    const uint8_t *p;
    size_t n;
    CHECK(bagz_read(r, &z, &t_io, 0, &s, &p, &n, &err) == -1); /* needs the dictionary */
    ds_zstd_ctx_free(&z);
    ds_buf_free(&s);
    bagz_close(r);
    ds_file_close(&d);
  }
  free(err);
}

/* Sharded sets: sepset (3 + 2 records, separate limits) by rows_per_shard,
 * inter@3 (6, 6, 5) by an even split, and name@* counting shards. */
static void test_shards(void) {
  bagz_options sep = {.limits = BAGZ_LIMITS_SEPARATE};
  bagz_writer_options wo = {.zstd = 1, .limits = BAGZ_LIMITS_SEPARATE,
                            .rows_per_shard = 3};
  CHECK(copy_bag(FIX "sepset@2.bagz", &sep, at(0, "sepset@*.bagz"), &wo) == 0);
  CHECK(same_records(FIX "sepset@2.bagz", &sep, at(1, "sepset@2.bagz"), &sep, NULL, NULL));
  CHECK(ds_path_exists(at(0, "limits.sepset-00001-of-00002.bagz"), NULL));
  bagz_options aut = {0};
  bagz_writer_options even = {.zstd = 1};
  CHECK(copy_bag(FIX "inter@3.bagz", &aut, at(0, "inter@3.bagz"), &even) == 0);
  CHECK(same_records(FIX "inter@3.bagz", &aut, at(1, "inter@3.bagz"), &aut, NULL, NULL));
  bagz_reader *r;
  char *err = NULL;
  if (CHECK(bagz_open(at(0, "inter@3.bagz"), &aut, &r, &err) == 0)) {
    CHECK(r->nshards == 3 && r->shards[0].count == 6 && r->shards[1].count == 6 &&
          r->shards[2].count == 5);
    bagz_close(r);
  }
  /* the same with two threads: identical files */
  even.threads = 2;
  CHECK(copy_bag(FIX "inter@3.bagz", &aut, at(0, "t2@3.bagz"), &even) == 0);
  for (int i = 0; i < 3; i++) {
    char a[64], b[64];
    snprintf(a, sizeof a, "inter-%05d-of-00003.bagz", i);
    snprintf(b, sizeof b, "t2-%05d-of-00003.bagz", i);
    CHECK(same_file(at(0, a), at(1, b)));
  }
  bagz_writer_options many = {.zstd = 1, .rows_per_shard = 7000, .threads = 2};
  CHECK(copy_bag(FIX "mid.bagz", &aut, at(0, "mid@*.bagz"), &many) == 0);
  CHECK(same_records(FIX "mid.bagz", &aut, at(1, "mid@*.bagz"), &aut, NULL, NULL));
  CHECK(ds_path_exists(at(0, "mid-00007-of-00008.bagz"), NULL));
  bagz_writer_options one = {.zstd = 1};
  CHECK(copy_bag(FIX "mid.bagz", &aut, at(0, "mid1.bagz"), &one) == 0);
  bagz_writer_options two = {.zstd = 1, .threads = 2};
  CHECK(copy_bag(FIX "mid.bagz", &aut, at(0, "mid2.bagz"), &two) == 0);
  CHECK(same_file(at(0, "mid1.bagz"), at(1, "mid2.bagz")));
  free(err);
}

/* Read every record of spec into one string "a|b|c". */
static char *records_text(const char *spec) {
  bagz_options o = {.compression = BAGZ_COMPRESSION_NONE};
  bagz_reader *r;
  char *err = NULL;
  ds_buf out = {0};
  if (bagz_open(spec, &o, &r, &err)) {
    free(err);
    return strdup("(none)");
  }
  ds_zstd_ctx z;
  ds_zstd_ctx_init(&z, NULL);
  ds_buf s = {0};
  for (uint64_t i = 0; i < bagz_count(r); i++) {
    const uint8_t *p;
    size_t n;
    if (bagz_read(r, &z, &t_io, i, &s, &p, &n, &err) == 0) {
      if (i) ds_buf_append(&out, "|", 1);
      ds_buf_append(&out, p, n);
    }
  }
  ds_buf_append(&out, "", 1);
  ds_zstd_ctx_free(&z);
  ds_buf_free(&s);
  bagz_close(r);
  free(err);
  return (char *)out.data;
}

#define ADD(w, s) sharded_writer_add(w, (const uint8_t *)(s), strlen(s), &err)

/* Savepoints, abort, a second transaction, create, the lock. */
static void test_transactions(void) {
  char *err = NULL;
  ds_stage *st, *st2;
  bagz_writer_options o = {.rows_per_shard = 2};
  sharded_writer *w = writer(at(0, "t@*.bag"), &o, DS_STAGE_CREATE, &st, &err);
  if (!CHECK(w != NULL)) return;
  CHECK(writer(at(1, "t@*.bag"), &o, DS_STAGE_REPLACE, &st2, &err) == NULL);
  CHECK_CONTAINS(err, "another writer has this dataset open");
  void *m1, *m2;
  CHECK(ADD(w, "a") == 0 && sharded_writer_mark(w, &m1, &err) == 0);
  CHECK(ADD(w, "b") == 0 && ADD(w, "c") == 0 && sharded_writer_mark(w, &m2, &err) == 0);
  CHECK(ADD(w, "d") == 0 && ADD(w, "e") == 0);
  CHECK(sharded_writer_rollback_to(w, m2, &err) == 0 && sharded_writer_count(w) == 3);
  CHECK(ADD(w, "D") == 0);
  CHECK(sharded_writer_rollback_to(w, m1, &err) == 0 && sharded_writer_count(w) == 1);
  CHECK(ADD(w, "B") == 0 && ADD(w, "C") == 0);
  free(m1);
  free(m2);
  CHECK(!ds_path_exists(at(0, "t-00000-of-00002.bag"), NULL));
  CHECK(sharded_writer_prepare(w, &err) == 0 && sharded_writer_publish(w, &err) == 0);
  char *t = records_text(at(0, "t@*.bag"));
  CHECK_STR(t, "a|B|C");
  free(t);
  CHECK_STR(sharded_writer_published_spec(w), at(1, "t@2.bag"));
  /* a second transaction continues the bag; an aborted third changes nothing */
  CHECK(sharded_writer_begin(w, &err) == 0 && ADD(w, "x") == 0 && ADD(w, "y") == 0);
  CHECK(sharded_writer_prepare(w, &err) == 0 && sharded_writer_publish(w, &err) == 0);
  t = records_text(at(0, "t@*.bag"));
  CHECK_STR(t, "a|B|C|x|y");
  free(t);
  CHECK(!ds_path_exists(at(0, "t-00000-of-00002.bag"), NULL)); /* old set gone */
  CHECK(sharded_writer_begin(w, &err) == 0 && ADD(w, "zzz") == 0);
  sharded_writer_abort(w);
  t = records_text(at(0, "t@3.bag"));
  CHECK_STR(t, "a|B|C|x|y");
  free(t);
  CHECK(sharded_writer_count(w) == 5);
  sharded_writer_close(w);
  ds_stage_close(st);
  CHECK_MSG(fx_hidden_entries(tmp) == 0, "no lock or temporary left behind");
  /* mode=create refuses an existing bag */
  CHECK(writer(at(0, "t@*.bag"), &o, DS_STAGE_CREATE, &st, &err) == NULL);
  CHECK_CONTAINS(err, "t-00000-of-00003.bag: already exists");
  bagz_writer_options plain = {0};
  FILE *f = fopen(at(0, "plain.bag"), "w");
  if (f) fclose(f);
  CHECK(writer(at(0, "plain.bag"), &plain, DS_STAGE_CREATE, &st, &err) == NULL);
  CHECK_CONTAINS(err, "plain.bag: already exists");
  CHECK(writer(at(0, "x.bag"), &o, DS_STAGE_CREATE, &st, &err) == NULL);
  CHECK_CONTAINS(err, "rows_per_shard needs a sharded path");
  /* name@N with rows_per_shard: more than N*R rows is an error */
  bagz_writer_options two = {.rows_per_shard = 1};
  w = writer(at(0, "n@2.bag"), &two, DS_STAGE_CREATE, &st, &err);
  CHECK(w && ADD(w, "1") == 0 && ADD(w, "2") == 0 && ADD(w, "3") == -1);
  CHECK_CONTAINS(err, "record 2: 2 shards of rows_per_shard=1 are full");
  sharded_writer_close(w);
  ds_stage_close(st);
  CHECK(!ds_path_exists(at(0, "n-00000-of-00002.bag"), NULL));
  CHECK_MSG(fx_hidden_entries(tmp) == 0, "no lock or temporary left behind");
  /* two threads: a savepoint in the middle of queued batches */
  bagz_writer_options t2 = {.zstd = 1, .threads = 2};
  w = writer(at(0, "t2.bagz"), &t2, DS_STAGE_CREATE, &st, &err);
  char rec[32];
  int ok = w != NULL;
  for (int i = 0; i < 30000 && ok; i++) {
    snprintf(rec, sizeof rec, "record %d", i);
    ok = ADD(w, rec) == 0;
  }
  void *m = NULL;
  CHECK(ok && sharded_writer_mark(w, &m, &err) == 0);
  for (int i = 0; i < 30000 && ok; i++) ok = ADD(w, "dropped") == 0;
  CHECK(ok && sharded_writer_rollback_to(w, m, &err) == 0 && sharded_writer_count(w) == 30000);
  free(m);
  CHECK(ADD(w, "last") == 0 && sharded_writer_prepare(w, &err) == 0 &&
        sharded_writer_publish(w, &err) == 0);
  sharded_writer_close(w);
  ds_stage_close(st);
  bagz_options aut = {0};
  bagz_reader *r;
  if (CHECK(bagz_open(at(0, "t2.bagz"), &aut, &r, &err) == 0)) {
    ds_zstd_ctx z;
    ds_zstd_ctx_init(&z, NULL);
    ds_buf sb = {0};
    const uint8_t *p;
    size_t n;
    ok = bagz_count(r) == 30001;
    for (uint64_t i = 0; i < 30000 && ok; i++) {
      snprintf(rec, sizeof rec, "record %llu", (unsigned long long)i);
      ok = bagz_read(r, &z, &t_io, i, &sb, &p, &n, &err) == 0 && n == strlen(rec) && !memcmp(p, rec, n);
    }
    ok = ok && bagz_read(r, &z, &t_io, 30000, &sb, &p, &n, &err) == 0 && n == 4 && !memcmp(p, "last", 4);
    CHECK_MSG(ok, "threads=2: every record in order after ROLLBACK TO");
    ds_zstd_ctx_free(&z);
    ds_buf_free(&sb);
    bagz_close(r);
  }
  free(err);
}

/* Record i of the compressor test: 4 KiB, compressible, different per i. */
static void comp_record(uint64_t i, uint8_t *buf, size_t n) {
  for (size_t k = 0; k < n; k++) buf[k] = (uint8_t)((i * 31 + k / 64) & 0xff);
  memcpy(buf, &i, sizeof i);
}

typedef struct {
  uint64_t next;   /* the record the next emitted frame must be */
  uint64_t bad;    /* frames out of order or not the record */
  uint8_t want[4096], got[4096];
} comp_sink;

/* Emit callback: the frame must decompress to record `next`. */
static int comp_emit(void *ctx, const uint8_t *p, size_t n, char **err) {
  (void)err;
  comp_sink *k = ctx;
  comp_record(k->next, k->want, sizeof k->want);
  size_t r = ZSTD_decompress(k->got, sizeof k->got, p, n);
  if (ZSTD_isError(r) || r != sizeof k->want || memcmp(k->got, k->want, r) != 0) k->bad++;
  k->next++;
  return 0;
}

/* The compressor with two threads over 60 batches of 4 KiB records (the
 * batch ring turns over 15 times, the helper and the caller's thread
 * taking batches from each other), a drain with a partial batch, more
 * records, a reset that drops what is queued, then more: every record
 * comes out once, in order, intact. Under make tsan this is where a batch
 * state touched outside the mutex shows (a race flagged in about one
 * run in ten of test_shards before the fix). */
static void test_compressor_threads(void) {
  static comp_sink k;
  memset(&k, 0, sizeof k);
  bagz_compressor *c = NULL;
  char *err = NULL;
  CHECK(bagz_compressor_new(1, NULL, 0, 2, comp_emit, &k, &c, &err) == 0);
  if (!c) {
    free(err);
    return;
  }
  uint8_t rec[4096];
  uint64_t i = 0, fails = 0;
  const uint64_t per_batch = ((uint64_t)1 << 20) / sizeof rec;
  for (; i < 60 * per_batch + 7; i++) {
    comp_record(i, rec, sizeof rec);
    if (bagz_compressor_add(c, i, rec, sizeof rec, &err)) fails++;
  }
  if (bagz_compressor_drain(c, &err)) fails++;
  CHECK(k.next == i);
  for (uint64_t j = 0; j < 3 * per_batch; j++, i++) {
    comp_record(i, rec, sizeof rec);
    if (bagz_compressor_add(c, i, rec, sizeof rec, &err)) fails++;
  }
  if (bagz_compressor_drain(c, &err)) fails++;
  CHECK(k.next == i);
  /* records queued, then dropped: none of them may come out */
  for (uint64_t j = 0; j < per_batch + 5; j++) {
    comp_record(9999999, rec, sizeof rec);
    if (bagz_compressor_add(c, 9999999, rec, sizeof rec, &err)) fails++;
  }
  bagz_compressor_reset(c);
  /* frames of the dropped records emitted before the reset (if any) went
   * to a file the rollback truncates; from here on the frames must be
   * records i, i + 1, ... again, none of the dropped ones */
  k.next = i;
  k.bad = 0;
  for (uint64_t j = 0; j < 2 * per_batch + 3; j++, i++) {
    comp_record(i, rec, sizeof rec);
    if (bagz_compressor_add(c, i, rec, sizeof rec, &err)) fails++;
  }
  if (bagz_compressor_drain(c, &err)) fails++;
  CHECK(fails == 0);
  CHECK(k.next == i);
  CHECK_MSG(k.bad == 0, "%llu frames out of order or damaged", (unsigned long long)k.bad);
  bagz_compressor_free(c);
  free(err);
}

int main(void) {
  snprintf(tmp, sizeof tmp, "/tmp/ds_bagz_writer_XXXXXX");
  if (!mkdtemp(tmp)) return 1;
  test_uncompressed();
  test_zstd();
  test_shards();
  if (fx_remove_tree(tmp) || mkdir(tmp, 0700)) return 1;
  test_transactions();
  test_compressor_threads();
  if (fx_remove_tree(tmp)) return 1;
  return check_exit();
}
