/* gen_b1.c - deterministic generator for benchmark dataset B1 (bagz).
 *
 * Usage: gen_b1 OUTDIR COUNT [NAME]
 * Writes COUNT records as 4 shards NAME-0000S-of-00004.bagz in OUTDIR
 * (NAME defaults to "b1"), concatenated layout: shard s holds a contiguous
 * run of global indices. Record i is the JSON text
 *   {"id":i,"label":i%1000,"text":"<60-200 chars of words>"}
 * compressed alone as one zstd frame (level 3, content size in the header),
 * with the u64 little-endian end offsets appended at the tail (bagz TAIL
 * limits). The text depends only on i (a splitmix64 stream seeded from i),
 * so the output is the same on every run and machine. Each shard is written
 * to a temporary name and renamed when complete. */
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <zstd.h>

#define GEN_NAME "gen_b1"
#include "gen_common.h"

#define LEVEL 3
#define SEED UINT64_C(0x5EED0B1B1DA7A5E7)
#define RECORD_MAX 512

/* Record i as JSON; returns its length (text is 60..198 chars). */
static size_t make_record(uint64_t i, char *out) {
  uint64_t rng = SEED ^ (i * UINT64_C(0xD1B54A32D192ED03));
  char text[256];
  size_t target = 60 + (size_t)(splitmix64(&rng) % 131);
  size_t tl = make_text(&rng, target, text);
  int n = snprintf(out, RECORD_MAX, "{\"id\":%llu,\"label\":%llu,\"text\":\"%.*s\"}",
                   (unsigned long long)i, (unsigned long long)(i % 1000),
                   (int)tl, text);
  return (size_t)n;
}

/* gen_record_fn: record i compressed alone as one zstd frame (ctx: the
 * ZSTD_CCtx). */
static int record(void *ctx, uint64_t i, uint8_t *out, size_t *len) {
  char rec[RECORD_MAX];
  size_t n = make_record(i, rec);
  size_t c = ZSTD_compressCCtx(ctx, out, ZSTD_compressBound(RECORD_MAX), rec, n, LEVEL);
  if (ZSTD_isError(c)) {
    fprintf(stderr, "gen_b1: zstd: %s\n", ZSTD_getErrorName(c));
    return -1;
  }
  *len = c;
  return 0;
}

int main(int argc, char **argv) {
  const char *dir, *name;
  uint64_t count;
  if (gen_bag_args(argc, argv, "b1", &dir, &count, &name)) return 2;
  ZSTD_CCtx *cctx = ZSTD_createCCtx();
  if (!cctx) return 1;
  int rc = gen_bag(dir, name, "bagz", count, ZSTD_compressBound(RECORD_MAX), record, cctx);
  ZSTD_freeCCtx(cctx);
  if (rc == 0)
    printf("gen_b1: wrote %llu records to %s/%s@%d.bagz\n",
           (unsigned long long)count, dir, name, GEN_BAG_SHARDS);
  return rc == 0 ? 0 : 1;
}
