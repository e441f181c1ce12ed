/* atlas_cache.c - decoded blocks and their LRU cache (see atlas_cache.h):
 * a hash table of chains over (shard, block) plus a doubly linked list in
 * use order. */
#include "formats/atlas_cache.h"

#include <stdlib.h>
#include <string.h>

atlas_dblock *atlas_dblock_new(void) { return calloc(1, sizeof(atlas_dblock)); }

void atlas_dblock_free(atlas_dblock *b) {
  if (!b) return;
  ds_buf_free(&b->buf);
  ds_arena_free(&b->arena);
  free(b);
}

size_t atlas_dblock_size(const atlas_dblock *b) {
  return sizeof *b + b->buf.cap + b->arena.total;
}

void atlas_cache_init(atlas_cache *c, size_t limit) {
  memset(c, 0, sizeof *c);
  c->limit = limit;
}

void atlas_cache_free(atlas_cache *c) {
  atlas_dblock *b = c->head;
  while (b) {
    atlas_dblock *n = b->next;
    atlas_dblock_free(b);
    b = n;
  }
  free(c->buckets);
  memset(c, 0, sizeof *c);
}

/* Bucket of a key. */
static size_t slot(const atlas_cache *c, size_t shard, uint64_t block) {
  uint64_t h = (block ^ (uint64_t)shard << 40) * UINT64_C(0x9E3779B97F4A7C15);
  return (size_t)(h >> 32) & (c->nbuckets - 1);
}

/* Unlink from the use list. */
static void lru_unlink(atlas_cache *c, atlas_dblock *b) {
  if (b->prev) b->prev->next = b->next;
  else c->head = b->next;
  if (b->next) b->next->prev = b->prev;
  else c->tail = b->prev;
  b->prev = b->next = NULL;
}

/* Make b the most recent. */
static void lru_front(atlas_cache *c, atlas_dblock *b) {
  b->prev = NULL;
  b->next = c->head;
  if (c->head) c->head->prev = b;
  c->head = b;
  if (!c->tail) c->tail = b;
}

/* Take b out of the cache (it stays allocated). */
static void remove_block(atlas_cache *c, atlas_dblock *b) {
  atlas_dblock **pp = &c->buckets[slot(c, b->shard, b->block)];
  while (*pp != b) pp = &(*pp)->hnext;
  *pp = b->hnext;
  b->hnext = NULL;
  lru_unlink(c, b);
  c->used -= b->bytes;
  c->count--;
  b->cached = 0;
}

/* Evict unpinned blocks, least recent first, while over the limit. */
static void evict(atlas_cache *c) {
  atlas_dblock *b = c->tail;
  while (b && c->used > c->limit) {
    atlas_dblock *prev = b->prev;
    if (!b->pins) {
      remove_block(c, b);
      atlas_dblock_free(b);
    }
    b = prev;
  }
}

/* Double the buckets (or make the first ones). */
static int rehash(atlas_cache *c) {
  size_t nb = c->nbuckets ? c->nbuckets * 2 : 64;
  atlas_dblock **t = calloc(nb, sizeof *t);
  if (!t) return -1;
  for (size_t i = 0; i < c->nbuckets; i++) {
    atlas_dblock *b = c->buckets[i];
    while (b) {
      atlas_dblock *n = b->hnext;
      uint64_t h = (b->block ^ (uint64_t)b->shard << 40) * UINT64_C(0x9E3779B97F4A7C15);
      size_t s = (size_t)(h >> 32) & (nb - 1);
      b->hnext = t[s];
      t[s] = b;
      b = n;
    }
  }
  free(c->buckets);
  c->buckets = t;
  c->nbuckets = nb;
  return 0;
}

atlas_dblock *atlas_cache_get(atlas_cache *c, size_t shard, uint64_t block) {
  if (!c->count) return NULL;
  for (atlas_dblock *b = c->buckets[slot(c, shard, block)]; b; b = b->hnext)
    if (b->shard == shard && b->block == block) {
      b->pins++;
      if (c->head != b) {
        lru_unlink(c, b);
        lru_front(c, b);
      }
      return b;
    }
  return NULL;
}

int atlas_cache_put(atlas_cache *c, atlas_dblock *b) {
  if (c->count >= c->nbuckets && rehash(c)) return -1;
  size_t s = slot(c, b->shard, b->block);
  b->hnext = c->buckets[s];
  c->buckets[s] = b;
  lru_front(c, b);
  c->used += b->bytes;
  c->count++;
  b->cached = 1;
  evict(c);
  return 0;
}

void atlas_cache_unpin(atlas_cache *c, atlas_dblock *b) {
  if (b->pins > 0) b->pins--;
  if (!b->pins && c->used > c->limit) evict(c);
}
