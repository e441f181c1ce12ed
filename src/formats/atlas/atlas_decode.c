/* atlas_decode.c - decompress and decode one atlas block (see
 * atlas_decode.h). */
#include "formats/atlas/atlas_decode.h"

#include <stdlib.h>

#include "decoders/pickle.h"

int atlas_decode_block(const atlas_reader *r, ds_zstd_ctx *z, ds_view *v,
                       ds_pickle_list *pl,
                       atlas_dblock *b, size_t shard, uint64_t block, uint64_t pos,
                       char **err) {
  const uint8_t *p;
  size_t n;
  ds_value *list = &b->list;
  b->shard = (size_t)-1;
  b->partial = 0;
  ds_arena_reset(&b->arena);
  /* max_value_bytes: the block and the memory of its decoded values */
  b->buf.max = b->arena.limit = (size_t)z->max_out;
  if (atlas_block(r, z, v, shard, block, &b->buf, &p, &n, err)) return -1;
  uint64_t want = atlas_block_examples(r, shard, block);
  size_t count;
  int found = 0;
  if (pos < want && atlas_block_checked(r, shard, block)) {
    found = ds_pickle_list_prefix(pl, p, n, &b->arena, (size_t)pos, &b->ex) == 0;
    if (!found) ds_arena_reset(&b->arena);
  }
  if (!found && pos < want &&
      ds_pickle_list_example(pl, p, n, &b->arena, (size_t)pos, &b->ex, &count) == 0 &&
      count == want) {
    atlas_block_set_checked(r, shard, block);
    found = 1;
  }
  if (found) {
    b->partial = 1;
    b->pos = pos;
    b->shard = shard;
    b->block = block;
    b->lru.bytes = atlas_dblock_size(b);
    return 0;
  }
  ds_arena_reset(&b->arena);
  char *why = NULL;
  int rc = 0;
  if (ds_pickle_list_decode(pl, p, n, &b->arena, list) != 0) {
    ds_arena_reset(&b->arena);
    rc = ds_pickle_decode(p, n, NULL, &b->arena, list, &why);
  } else if (list->u.list.n == want) {
    atlas_block_set_checked(r, shard, block);
  }
  if (rc == 0 && list->type != DS_V_LIST)
    rc = ds_err(&why, "the block's pickle is not a list");
  else if (rc == 0 && list->u.list.n != want)
    rc = ds_err(&why, "the block holds %zu examples but meta.json says %llu", list->u.list.n,
                (unsigned long long)want);
  if (rc)
    ds_err(err, "%s: block %llu: %s", atlas_shard_path(r, shard), (unsigned long long)block,
           why ? why : "out of memory");
  free(why);
  if (rc == 0) {
    b->shard = shard;
    b->block = block;
    b->lru.bytes = atlas_dblock_size(b);
  }
  return rc;
}
