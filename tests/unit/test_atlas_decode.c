/* test_atlas_decode.c - one-example lookups of atlas_decode_block
 * (formats/atlas/atlas_decode.c) and the reader's checked-block bits: a block
 * is marked checked only once a walk has taken it whole, a lookup in a
 * checked block (which stops at its example) gives the example the
 * general decoder gives, and a block damaged after its first example
 * fails every lookup of every one of its rows, every time, and is never
 * marked. Fixtures: tests/fixtures/upstream/atlas (none: strategy 0, and
 * shared_dict: zstd with a shared dictionary), and a damaged copy of
 * none in a temporary directory. */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "fixture.h"
#include "core/codec.h"
#include "formats/atlas/atlas.h"
#include "formats/atlas/atlas_decode.h"
#include "decoders/pickle.h"

/* The window blocks are read through (one for the whole test). */
static ds_view t_view;

#define FIX "tests/fixtures/upstream/atlas/"

static char tmp_dir[64];
static ds_zstd_ctx g_z;
static ds_pickle_list g_pl;

/* JSON text of v (malloc'd; "" when it cannot be written). */
static char *json_of(const ds_value *v) { return fx_json_of(v, ""); }

/* The general decoder's JSON of example pos of a block (NULL on error). */
static char *general(const atlas_reader *r, size_t s, uint64_t b, uint64_t pos) {
  ds_buf buf = {0};
  ds_arena a = {0};
  const uint8_t *p;
  size_t n;
  char *err = NULL, *out = NULL;
  ds_value v;
  if (atlas_block(r, &g_z, &t_view, s, b, &buf, &p, &n, &err) == 0 &&
      ds_pickle_decode(p, n, NULL, &a, &v, &err) == 0 && v.type == DS_V_LIST &&
      pos < v.u.list.n)
    out = json_of(&v.u.list.items[pos]);
  free(err);
  ds_arena_free(&a);
  ds_buf_free(&buf);
  return out;
}

/* A lookup of example pos: its JSON, or NULL with *err set. */
static char *lookup(const atlas_reader *r, atlas_dblock *blk, size_t s, uint64_t b,
                    uint64_t pos, char **err) {
  if (atlas_decode_block(r, &g_z, &t_view, &g_pl, blk, s, b, pos, err)) return NULL;
  return json_of(blk->partial ? &blk->ex : &blk->list.u.list.items[pos]);
}

/* Every example of every block, looked up one at a time (first, last,
 * then the rest): the block is marked checked by its first lookup, and
 * every lookup gives the general decoder's example. */
static void check_lookups(const char *name) {
  char path[256], *err = NULL;
  snprintf(path, sizeof path, FIX "%s", name);
  atlas_reader *r;
  if (atlas_open(path, &r, &err)) {
    CHECK_MSG(0, "%s: %s", path, err);
    free(err);
    return;
  }
  atlas_dblock *blk = atlas_dblock_new();
  size_t blocks = 0, lookups = 0, partial = 0;
  int bad = 0, unmarked = 0, premarked = 0;
  for (size_t s = 0; s < atlas_nshards(r); s++)
    for (uint64_t b = 0; b < atlas_num_blocks(r, s); b++) {
      uint64_t n = atlas_block_examples(r, s, b);
      blocks++;
      premarked += atlas_block_checked(r, s, b);
      for (uint64_t i = 0; i < n; i++) {
        uint64_t pos = i == 0 ? 0 : i == 1 ? n - 1 : i - 1;
        char *got = lookup(r, blk, s, b, pos, &err), *want = general(r, s, b, pos);
        lookups++;
        partial += blk->partial;
        if (!got || !want || strcmp(got, want) != 0) {
          if (bad++ == 0)
            check_note("    %s shard %zu block %llu example %llu: %s | %s\n", name, s,
                   (unsigned long long)b, (unsigned long long)pos, got ? got : err,
                   want ? want : "(general failed)");
        }
        unmarked += !atlas_block_checked(r, s, b);
        free(got);
        free(want);
        free(err);
        err = NULL;
      }
    }
  CHECK_MSG(blocks > 5 && bad == 0, "%s: %zu blocks, %d lookups differ", name, blocks, bad);
  CHECK_MSG(premarked == 0, "%s: %d blocks marked before any lookup", name, premarked);
  CHECK_MSG(unmarked == 0, "%s: %d lookups left their block unmarked", name, unmarked);
  CHECK_MSG(partial == lookups, "%s: %zu of %zu lookups built one example", name, partial,
            lookups);
  atlas_dblock_free(blk);
  atlas_close(r);
}

/* Block 0 of shard 0 of a copy of `none` with its APPENDS opcode (the
 * byte before STOP) replaced: every lookup of its rows fails, twice over,
 * and the block is never marked; block 1 reads and is marked. */
static void check_damaged(void) {
  char dir[256], cmd[768], data[300], *err = NULL;
  snprintf(dir, sizeof dir, "%s/none", tmp_dir);
  snprintf(cmd, sizeof cmd, "rm -rf '%s' && cp -r '" FIX "none' '%s'", dir, dir);
  CHECK(system(cmd) == 0);
  atlas_reader *r;
  CHECK(atlas_open(dir, &r, &err) == 0);
  if (!r) {
    free(err);
    return;
  }
  uint64_t off, len;
  CHECK(atlas_block_range(r, 0, 0, &off, &len, &err) == 0 && len > 2);
  atlas_close(r);
  snprintf(data, sizeof data, "%s/0/data.bin", dir);
  FILE *f = fopen(data, "r+b");
  int c = EOF;
  if (f && fseek(f, (long)(off + len - 2), SEEK_SET) == 0) c = fgetc(f);
  CHECK_MSG(c == 'e', "the byte before STOP is %d, expected APPENDS", c);
  if (f && fseek(f, (long)(off + len - 2), SEEK_SET) == 0) fputc(0xff, f);
  if (f) fclose(f);
  CHECK(atlas_open(dir, &r, &err) == 0);
  if (!r) {
    free(err);
    return;
  }
  atlas_dblock *blk = atlas_dblock_new();
  uint64_t n = atlas_block_examples(r, 0, 0);
  int failed = 0, named = 0;
  for (int round = 0; round < 2; round++)
    for (uint64_t pos = 0; pos < n; pos++) {
      char *got = lookup(r, blk, 0, 0, pos, &err);
      failed += got == NULL;
      named += err && strstr(err, "block 0") != NULL;
      free(got);
      free(err);
      err = NULL;
    }
  CHECK_MSG(n > 1 && failed == (int)(2 * n) && named == failed,
            "%d of %llu lookups failed (%d errors name the block)", failed,
            (unsigned long long)(2 * n), named);
  CHECK(!atlas_block_checked(r, 0, 0));
  char *ok = lookup(r, blk, 0, 1, 0, &err);
  CHECK_MSG(ok != NULL, "block 1: %s", err ? err : "?");
  CHECK(atlas_block_checked(r, 0, 1));
  free(ok);
  free(err);
  /* a full decode of the damaged block fails as well */
  err = NULL;
  CHECK(atlas_decode_block(r, &g_z, &t_view, &g_pl, blk, 0, 0, UINT64_MAX, &err) != 0 && err);
  free(err);
  CHECK(!atlas_block_checked(r, 0, 0));
  atlas_dblock_free(blk);
  atlas_close(r);
}

int main(void) {
  snprintf(tmp_dir, sizeof tmp_dir, "/tmp/test_atlas_decode.XXXXXX");
  if (!mkdtemp(tmp_dir)) {
    perror("mkdtemp");
    return 1;
  }
  ds_zstd_ctx_init(&g_z, NULL);
  check_lookups("none");
  check_lookups("shared_dict");
  check_damaged();
  ds_zstd_ctx_free(&g_z);
  ds_pickle_list_free(&g_pl);
  char cmd[128];
  snprintf(cmd, sizeof cmd, "rm -rf '%s'", tmp_dir);
  if (system(cmd) != 0) printf("    cannot remove %s\n", tmp_dir);
  return check_exit();
}
