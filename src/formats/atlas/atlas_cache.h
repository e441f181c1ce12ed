/* atlas_cache.h - decoded atlas blocks and a bounded cache of them (the
 * atlas table's cache_mb option). A decoded block owns the decompressed
 * pickle bytes and the arena its example values live in (their strings
 * point into those bytes). The cache keeps blocks by (shard, block),
 * least recently used first out, within a byte limit; a block a cursor is
 * reading is pinned and never evicted, so the limit can be exceeded by
 * the pinned blocks only (the generic core/lru_cache.c does the keeping).
 * Knows nothing of SQLite or of how blocks are decoded. */
#ifndef DS_ATLAS_CACHE_H
#define DS_ATLAS_CACHE_H

#include <stddef.h>
#include <stdint.h>

#include "core/common.h"
#include "core/lru_cache.h"
#include "core/value.h"

typedef struct atlas_dblock atlas_dblock;
struct atlas_dblock {
  ds_lru_node lru;   /* first: key (shard, block), bytes, pins, cached */
  size_t shard;
  uint64_t block;
  ds_buf buf;        /* decompressed pickle (unused for raw shards) */
  ds_arena arena;    /* the decoded values */
  ds_value list;     /* the block's examples (a DS_V_LIST) ... */
  int partial;       /* ... or only example `pos` in `ex` (never cached) */
  uint64_t pos;
  ds_value ex;
};

/* The cache: limit, used and count as ds_lru has them. */
typedef ds_lru atlas_cache;

/* A new empty block (NULL when out of memory), and its release. */
atlas_dblock *atlas_dblock_new(void);
void atlas_dblock_free(atlas_dblock *b);
/* The memory a decoded block holds: buffer capacity plus arena. */
size_t atlas_dblock_size(const atlas_dblock *b);

void atlas_cache_init(atlas_cache *c, size_t limit);
/* Free every block (none may be pinned). */
void atlas_cache_free(atlas_cache *c);
/* The cached block (shard, block), pinned and made most recent; NULL when
 * the cache does not hold it. */
atlas_dblock *atlas_cache_get(atlas_cache *c, size_t shard, uint64_t block);
/* Add a decoded, pinned block that is not cached (b->lru.bytes set); 0, or -1
 * when out of memory (b is then not cached). Unpinned blocks are evicted
 * while the cache is over its limit. */
int atlas_cache_put(atlas_cache *c, atlas_dblock *b);
/* Unpin a block got from or put into the cache; evicts while over the
 * limit. */
void atlas_cache_unpin(atlas_cache *c, atlas_dblock *b);

#endif
