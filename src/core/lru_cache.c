/* lru_cache.c - the bounded LRU cache (see lru_cache.h): chained hash
 * buckets over (k1, k2) plus a doubly linked list in use order. */
#include "lru_cache.h"

#include <stdlib.h>
#include <string.h>

/* An empty cache (see lru_cache.h). */
void ds_lru_init(ds_lru *c, size_t limit,
                 void (*release)(ds_lru *, ds_lru_node *)) {
  memset(c, 0, sizeof *c);
  c->limit = limit;
  c->release = release;
}

/* Release every entry and the buckets. */
void ds_lru_free(ds_lru *c) {
  ds_lru_node *n = c->head;
  while (n) {
    ds_lru_node *next = n->next;
    n->cached = 0;
    c->release(c, n);
    n = next;
  }
  free(c->buckets);
  memset(c, 0, sizeof *c);
}

/* Bucket of a key in a table of nb (a power of two) buckets. */
static size_t bucket_of(uint64_t k1, uint64_t k2, size_t nb) {
  uint64_t h = (k2 * UINT64_C(0x9E3779B97F4A7C15)) ^
               (k1 * UINT64_C(0xC2B2AE3D27D4EB4F));
  return (size_t)(h >> 20) & (nb - 1);
}

/* Unlink n from the use list. */
static void list_unlink(ds_lru *c, ds_lru_node *n) {
  if (n->prev) n->prev->next = n->next;
  else c->head = n->next;
  if (n->next) n->next->prev = n->prev;
  else c->tail = n->prev;
  n->prev = n->next = NULL;
}

/* Put n at the front (most recent) of the use list. */
static void list_front(ds_lru *c, ds_lru_node *n) {
  n->prev = NULL;
  n->next = c->head;
  if (c->head) c->head->prev = n;
  c->head = n;
  if (!c->tail) c->tail = n;
}

/* Take n out of the cache (it stays allocated). */
static void remove_node(ds_lru *c, ds_lru_node *n) {
  ds_lru_node **pp = &c->buckets[bucket_of(n->k1, n->k2, c->nbuckets)];
  while (*pp != n) pp = &(*pp)->hnext;
  *pp = n->hnext;
  n->hnext = NULL;
  list_unlink(c, n);
  c->used -= n->bytes;
  c->count--;
  n->cached = 0;
}

/* Evict unpinned entries other than keep, least recent first, while over
 * the limit. */
static void evict(ds_lru *c, const ds_lru_node *keep) {
  ds_lru_node *n = c->tail;
  while (n && c->used > c->limit) {
    ds_lru_node *prev = n->prev;
    if (!n->pins && n != keep) {
      remove_node(c, n);
      c->release(c, n);
    }
    n = prev;
  }
}

/* Double the buckets (or make the first 64). -1 when out of memory. */
static int grow(ds_lru *c) {
  size_t nb = c->nbuckets ? c->nbuckets * 2 : 64;
  ds_lru_node **t = calloc(nb, sizeof *t);
  if (!t) return -1;
  for (size_t i = 0; i < c->nbuckets; i++) {
    ds_lru_node *n = c->buckets[i];
    while (n) {
      ds_lru_node *next = n->hnext;
      size_t s = bucket_of(n->k1, n->k2, nb);
      n->hnext = t[s];
      t[s] = n;
      n = next;
    }
  }
  free(c->buckets);
  c->buckets = t;
  c->nbuckets = nb;
  return 0;
}

/* Look (k1, k2) up; a hit becomes the most recent. */
ds_lru_node *ds_lru_get(ds_lru *c, uint64_t k1, uint64_t k2) {
  if (!c->count) return NULL;
  for (ds_lru_node *n = c->buckets[bucket_of(k1, k2, c->nbuckets)]; n;
       n = n->hnext)
    if (n->k1 == k1 && n->k2 == k2) {
      if (c->head != n) {
        list_unlink(c, n);
        list_front(c, n);
      }
      return n;
    }
  return NULL;
}

/* Insert n as the most recent, then evict others while over the limit. */
int ds_lru_put(ds_lru *c, ds_lru_node *n) {
  /* a full table grows; when that fails a table already there serves on,
   * only slower */
  if (c->count >= c->nbuckets && grow(c) && !c->nbuckets) return -1;
  size_t s = bucket_of(n->k1, n->k2, c->nbuckets);
  n->hnext = c->buckets[s];
  c->buckets[s] = n;
  list_front(c, n);
  c->used += n->bytes;
  c->count++;
  n->cached = 1;
  evict(c, n);
  return 0;
}

/* Drop a pin; an unpinned cache over its limit evicts. */
void ds_lru_unpin(ds_lru *c, ds_lru_node *n) {
  if (n->pins > 0) n->pins--;
  if (!n->pins && c->used > c->limit) evict(c, NULL);
}
