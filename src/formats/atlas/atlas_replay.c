/* atlas_replay.c - the examples of an atlas dataset, block by block (see
 * atlas_replay.h). */
#include "formats/atlas/atlas_replay.h"

#include "core/codec.h"
#include "core/common.h"
#include "core/mapped_file.h"
#include "formats/atlas/atlas.h"
#include "decoders/pickle.h"

int atlas_each_example(const char *dir, int (*fn)(void *ctx, const ds_value *ex, char **err),
                       void *ctx, char **err) {
  atlas_reader *r;
  if (atlas_open(dir, &r, err)) return -1;
  ds_zstd_ctx z;
  ds_zstd_ctx_init(&z, NULL);
  ds_view v = {0};
  ds_buf buf = {0};
  int rc = 0;
  for (size_t s = 0; rc == 0 && s < atlas_nshards(r); s++)
    for (uint64_t b = 0; rc == 0 && b < atlas_num_blocks(r, s); b++) {
      const uint8_t *p;
      size_t n;
      ds_arena a = {0};
      ds_value blk;
      rc = atlas_block(r, &z, &v, s, b, &buf, &p, &n, err) ||
                   ds_pickle_decode(p, n, NULL, &a, &blk, err)
               ? -1
               : 0;
      if (rc == 0 && (blk.type != DS_V_LIST ||
                      blk.u.list.n != atlas_block_examples(r, s, b)))
        rc = ds_err(err, "%s: block %llu does not hold its examples",
                    atlas_shard_path(r, s), (unsigned long long)b);
      for (size_t i = 0; rc == 0 && i < blk.u.list.n; i++)
        rc = fn(ctx, &blk.u.list.items[i], err);
      ds_arena_free(&a);
    }
  ds_buf_free(&buf);
  ds_view_free(&v);
  ds_zstd_ctx_free(&z);
  atlas_close(r);
  return rc;
}
