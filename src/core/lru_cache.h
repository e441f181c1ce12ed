/* lru_cache.h - a bounded cache of decoded things: a hash table over a
 * two-part key, a list in use order, and a byte budget. Entries embed a
 * ds_lru_node (as their first member, so a node pointer is the entry's);
 * the cache evicts the least recently used unpinned entries while it holds
 * more bytes than its limit, and hands each evicted entry to `release`.
 * Used for atlas decoded blocks (atlas_cache.c) and bcolz decompressed
 * chunks (bcolz_cache.c). One thread at a time. */
#ifndef DS_LRU_CACHE_H
#define DS_LRU_CACHE_H

#include <stddef.h>
#include <stdint.h>

typedef struct ds_lru_node ds_lru_node;
struct ds_lru_node {
  uint64_t k1, k2;          /* the key (e.g. shard and block) */
  size_t bytes;             /* memory it holds, as the cache counts it */
  int pins;                 /* readers using it: never evicted while > 0 */
  int cached;               /* 1 while in a cache */
  ds_lru_node *prev, *next; /* use order, most recent first */
  ds_lru_node *hnext;       /* hash chain */
};

typedef struct ds_lru {
  size_t limit;             /* bytes; 0: keeps nothing unpinned */
  size_t used;              /* bytes of the entries it holds */
  size_t count;             /* entries it holds */
  ds_lru_node **buckets;
  size_t nbuckets;          /* a power of two (0 before the first put) */
  ds_lru_node *head, *tail;
  /* frees an evicted entry (or keeps it for reuse: the cache is passed) */
  void (*release)(struct ds_lru *, ds_lru_node *);
} ds_lru;

/* An empty cache of `limit` bytes whose evicted entries go to release. */
void ds_lru_init(ds_lru *c, size_t limit,
                 void (*release)(ds_lru *, ds_lru_node *));
/* Release every entry, pinned or not, and the table. */
void ds_lru_free(ds_lru *c);
/* The entry with key (k1, k2), made most recent; NULL when absent. Not
 * pinned: the caller pins it when it keeps it across other calls. */
ds_lru_node *ds_lru_get(ds_lru *c, uint64_t k1, uint64_t k2);
/* Add an entry that is not cached (key and bytes set) as the most recent,
 * then evict other unpinned entries while over the limit (n itself stays
 * until it is unpinned or pushed out by later puts). 0, or -1 when out of
 * memory (n is then not cached). */
int ds_lru_put(ds_lru *c, ds_lru_node *n);
/* Drop one pin of n; when it has none left, evict while over the limit. */
void ds_lru_unpin(ds_lru *c, ds_lru_node *n);

#endif
