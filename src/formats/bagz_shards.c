/* bagz_shards.c - a bag's shards for the SQL layer (see bagz_shards.h). */
#include "bagz_shards.h"

#include <stdlib.h>

const ds_shard_map *bagz_shard_map(const bagz_reader *r) { return &r->map; }

size_t bagz_nshards(const bagz_reader *r) { return r->nshards; }

const char *bagz_shard_path(const bagz_reader *r, size_t s) {
  return s < r->nshards ? r->shards[s].data.path : NULL;
}

uint64_t bagz_shard_count(const bagz_reader *r, size_t s) {
  return s < r->nshards ? r->shards[s].count : 0;
}

int bagz_shard_zstd(const bagz_reader *r, size_t s) {
  return s < r->nshards && r->shards[s].zstd;
}

const ds_zstd_dict *bagz_dictionary(const bagz_reader *r) { return r->dict; }

uint64_t bagz_stored_size(const bagz_reader *r, size_t shard, uint64_t index) {
  const uint8_t *p;
  size_t n;
  char *err = NULL;
  if (bagz_stored(r, shard, index, &p, &n, &err)) {
    free(err);
    return 0;
  }
  return n;
}

void bagz_release_rows(const bagz_reader *r, uint64_t from, uint64_t g) {
  size_t first = 0, shard = r->nshards;
  uint64_t index = 0, ignored;
  if (from < r->map.total) ds_shard_map_locate(&r->map, from, &first, &ignored);
  if (g < r->map.total) ds_shard_map_locate(&r->map, g, &shard, &index);
  if (r->map.layout == DS_LAYOUT_INTERLEAVED) {
    for (size_t s = 0; s < r->nshards; s++)
      bagz_release_before(r, s, shard >= r->nshards ? UINT64_MAX : s < shard ? index + 1 : index);
    return;
  }
  for (size_t s = first; s < shard && s < r->nshards; s++) bagz_release_before(r, s, UINT64_MAX);
  if (shard < r->nshards) bagz_release_before(r, shard, index);
}
