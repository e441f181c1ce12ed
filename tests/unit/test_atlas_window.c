/* test_atlas_window.c - the memory an atlas scan reads blocks with, on a
 * dataset written at test time (strategy 2: zstd with a shared
 * dictionary, one shard whose data.bin is many times ATLAS_VIEW_AHEAD):
 *   1. a window read through in block order (atlas_block) keeps its
 *      read-ahead at ATLAS_VIEW_AHEAD: its buffer stays that small while
 *      the shard is 8 times larger; every block decodes to what a window
 *      reading exactly each block gives; a cap set by the window's owner
 *      is kept;
 *   2. the read-ahead (formats/atlas/atlas_readahead.c) hands over every block
 *      of a scan in order, equal to a direct decode, while its cursor side
 *      decodes with the cursor's own context, window and scratch: they
 *      are borrowed, so they are still whole (and usable) after the
 *      read-ahead is freed. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "fixture.h"
#include "core/codec.h"
#include "core/rowset.h"
#include "formats/atlas/atlas.h"
#include "formats/atlas/atlas_decode.h"
#include "formats/atlas/atlas_readahead.h"
#include "formats/atlas/atlas_writer.h"

static char g_tmp[] = "/tmp/ds_atlas_window_XXXXXX";

/* Examples: {"i": i, "s": 1000 pseudo-random letters} (compress poorly). */
#define EXAMPLES 1200
#define TEXT 1000

/* Write the dataset into dir: 0, or -1 with a FAIL line. */
static int write_dataset(const char *dir) {
  atlas_write_options o;
  atlas_write_defaults(&o); /* strategy 2, level 3, dict_size 0.01 */
  o.block_size = 8;
  o.shard_size = EXAMPLES;
  atlas_writer *w = NULL;
  char *err = NULL, s[TEXT];
  uint64_t x = 88172645463325252ull;
  int ok = atlas_writer_open(dir, &o, &w, &err) == 0;
  for (int64_t i = 0; ok && i < EXAMPLES; i++) {
    for (size_t k = 0; k < TEXT; k++) { /* xorshift64 */
      x ^= x << 13;
      x ^= x >> 7;
      x ^= x << 17;
      s[k] = (char)('a' + x % 26);
    }
    ds_value kv[4] = {{DS_V_TEXT, {.s = {(const uint8_t *)"i", 1}}},
                      {DS_V_INT, {.i = i}},
                      {DS_V_TEXT, {.s = {(const uint8_t *)"s", 1}}},
                      {DS_V_TEXT, {.s = {(const uint8_t *)s, TEXT}}}};
    ds_value ex = {DS_V_MAP, {.list = {kv, 2}}};
    ok = atlas_writer_add(w, &ex, &err) == 0;
  }
  ok = ok && atlas_writer_finish(w, &err) == 0;
  atlas_writer_free(w);
  CHECK_MSG(ok, "write %s: %s", dir, err ? err : "");
  free(err);
  return ok ? 0 : -1;
}

/* The decoded examples of a block as JSON (malloc'd; NULL on error), with
 * a window that reads exactly the block. */
static char *block_json(const atlas_reader *r, size_t s, uint64_t b) {
  ds_zstd_ctx z;
  ds_zstd_ctx_init(&z, NULL);
  ds_view v = {.max_ahead = DS_VIEW_EXACT};
  ds_pickle_list pl = {0};
  atlas_dblock *blk = atlas_dblock_new();
  char *err = NULL, *out = NULL;
  if (blk && atlas_decode_block(r, &z, &v, &pl, blk, s, b, UINT64_MAX, &err) == 0)
    out = fx_json_of(&blk->list, "");
  free(err);
  atlas_dblock_free(blk);
  ds_pickle_list_free(&pl);
  ds_view_free(&v);
  ds_zstd_ctx_free(&z);
  return out;
}

/* Read every block in order through one window: the window's buffer stays
 * within the cap, and the bytes are the blocks' own. */
static void test_window_cap(const atlas_reader *r) {
  CHECK_MSG(atlas_shard_strategy(r, 0) == ATLAS_SHARED_DICTIONARY &&
                atlas_data_size(r, 0) > 8 * ATLAS_VIEW_AHEAD,
            "data.bin holds %llu bytes, strategy %d",
            (unsigned long long)atlas_data_size(r, 0), atlas_shard_strategy(r, 0));
  ds_zstd_ctx z;
  ds_zstd_ctx_init(&z, NULL);
  ds_view v = {0}, exact = {.max_ahead = DS_VIEW_EXACT};
  ds_buf buf = {0}, ebuf = {0};
  char *err = NULL;
  uint64_t largest = 0, same = 0, nb = atlas_num_blocks(r, 0);
  for (uint64_t b = 0; b < nb; b++) {
    const uint8_t *p, *q;
    size_t n, m;
    if (atlas_block(r, &z, &v, 0, b, &buf, &p, &n, &err) ||
        atlas_block(r, &z, &exact, 0, b, &ebuf, &q, &m, &err))
      break;
    same += n == m && memcmp(p, q, n) == 0;
    uint64_t off, len;
    if (atlas_block_range(r, 0, b, &off, &len, &err) == 0 && len > largest) largest = len;
  }
  CHECK_MSG(!err && same == nb, "%llu of %llu blocks the same: %s",
            (unsigned long long)same, (unsigned long long)nb, err ? err : "");
  CHECK(v.max_ahead == ATLAS_VIEW_AHEAD);
  CHECK_MSG(largest < ATLAS_VIEW_AHEAD && v.buf.cap <= ATLAS_VIEW_AHEAD,
            "window %zu bytes, largest block %llu", v.buf.cap,
            (unsigned long long)largest);
  CHECK(exact.max_ahead == DS_VIEW_EXACT); /* the owner's cap is kept */
  CHECK_MSG(exact.buf.cap < 2 * largest, "exact window %zu bytes, largest block %llu",
            exact.buf.cap, (unsigned long long)largest);
  free(err);
  ds_buf_free(&buf);
  ds_buf_free(&ebuf);
  ds_view_free(&v);
  ds_view_free(&exact);
  ds_zstd_ctx_free(&z);
}

/* A scan as the atlas table's cursor makes it: block 0 decoded with the
 * cursor's tools, the rest from the read-ahead (or decoded by the cursor
 * when it does not hold one). */
static void test_readahead_borrows(const atlas_reader *r) {
  ds_zstd_ctx z;
  ds_zstd_ctx_init(&z, NULL);
  z.contiguous = 1;
  ds_view v = {0};
  ds_pickle_list pl = {0};
  atlas_dblock *own = atlas_dblock_new();
  char *err = NULL;
  ds_rowset rs;
  ds_rowiter it;
  if (!own || ds_rowset_init_all(&rs, atlas_count(r))) {
    CHECK(0);
    atlas_dblock_free(own);
    return;
  }
  ds_rowiter_init(&it, &rs);
  uint64_t g, nb = atlas_num_blocks(r, 0), good = 0, handed = 0;
  int ok = ds_rowiter_next(&it, &g) && g == 0 &&
           atlas_decode_block(r, &z, &v, &pl, own, 0, 0, UINT64_MAX, &err) == 0;
  atlas_readahead *ra = NULL;
  ok = ok && atlas_readahead_start(r, &it, 0, 0, DS_MAX_VALUE_BYTES, &z, &v, &pl, &ra,
                                   &err) == 0;
  for (uint64_t b = 1; ok && b < nb; b++) {
    atlas_dblock *got = NULL;
    int rc = atlas_readahead_get(ra, 0, b, &got, &err);
    if (rc == 0 && atlas_decode_block(r, &z, &v, &pl, own, 0, b, UINT64_MAX, &err) == 0)
      got = own;
    handed += rc == 1;
    char *want = block_json(r, 0, b), *have = got ? fx_json_of(&got->list, "") : NULL;
    good += want && have && strcmp(want, have) == 0 && got->shard == 0 && got->block == b;
    free(want);
    free(have);
    ok = rc >= 0 && got;
  }
  CHECK_MSG(ok && good == nb - 1, "%llu of %llu blocks right (%llu from the read-ahead): %s",
            (unsigned long long)good, (unsigned long long)(nb - 1),
            (unsigned long long)handed, err ? err : "");
  atlas_readahead_free(ra);
  /* the cursor's tools are still its own, whole */
  CHECK(z.dctx != NULL && z.contiguous == 1 && v.buf.data != NULL && v.max_ahead != 0);
  char *want = block_json(r, 0, 1), *have = NULL;
  if (atlas_decode_block(r, &z, &v, &pl, own, 0, 1, UINT64_MAX, &err) == 0)
    have = fx_json_of(&own->list, "");
  CHECK_MSG(want && have && strcmp(want, have) == 0, "decode after the read-ahead: %s",
            err ? err : "");
  free(want);
  free(have);
  free(err);
  ds_rowset_free(&rs);
  atlas_dblock_free(own);
  ds_pickle_list_free(&pl);
  ds_view_free(&v);
  ds_zstd_ctx_free(&z);
}

int main(void) {
  if (!mkdtemp(g_tmp)) {
    CHECK(0);
    return check_exit();
  }
  atlas_reader *r = NULL;
  char *err = NULL;
  if (write_dataset(g_tmp) == 0) {
    CHECK_MSG(atlas_open(g_tmp, &r, &err) == 0, "open %s: %s", g_tmp, err ? err : "");
    if (r) {
      test_window_cap(r);
      test_readahead_borrows(r);
      atlas_close(r);
    }
  }
  free(err);
  fx_remove_tree(g_tmp);
  return check_exit();
}
