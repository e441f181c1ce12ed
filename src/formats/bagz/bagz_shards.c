/* bagz_shards.c - a bag's shards for the SQL layer (see bagz_shards.h). */
#include "bagz_shards.h"

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
