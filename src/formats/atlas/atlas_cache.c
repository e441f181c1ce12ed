/* atlas_cache.c - decoded blocks and their LRU cache (see atlas_cache.h),
 * on the generic core/lru_cache.c keyed by (shard, block). */
#include "formats/atlas/atlas_cache.h"

#include <stdlib.h>

/* A new empty block. */
atlas_dblock *atlas_dblock_new(void) { return calloc(1, sizeof(atlas_dblock)); }

/* Free a block, its buffer and its arena (NULL is fine). */
void atlas_dblock_free(atlas_dblock *b) {
  if (!b) return;
  ds_buf_free(&b->buf);
  ds_arena_free(&b->arena);
  free(b);
}

/* The memory a block holds, as the cache counts it. */
size_t atlas_dblock_size(const atlas_dblock *b) {
  return sizeof *b + b->buf.cap + b->arena.total;
}

/* The cache's release: free an evicted block. */
static void release_block(ds_lru *c, ds_lru_node *n) {
  (void)c;
  atlas_dblock_free((atlas_dblock *)n);
}

/* An empty cache of limit bytes. */
void atlas_cache_init(atlas_cache *c, size_t limit) {
  ds_lru_init(c, limit, release_block);
}

/* Free every cached block. */
void atlas_cache_free(atlas_cache *c) { ds_lru_free(c); }

/* The cached block (shard, block), pinned; NULL when absent. */
atlas_dblock *atlas_cache_get(atlas_cache *c, size_t shard, uint64_t block) {
  atlas_dblock *b = (atlas_dblock *)ds_lru_get(c, shard, block);
  if (b) b->lru.pins++;
  return b;
}

/* Cache a pinned block under its (shard, block). */
int atlas_cache_put(atlas_cache *c, atlas_dblock *b) {
  b->lru.k1 = b->shard;
  b->lru.k2 = b->block;
  return ds_lru_put(c, &b->lru);
}

/* Unpin a block got from or put into the cache. */
void atlas_cache_unpin(atlas_cache *c, atlas_dblock *b) { ds_lru_unpin(c, &b->lru); }
