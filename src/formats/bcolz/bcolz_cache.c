/* bcolz_cache.c - the bounded LRU cache of decompressed bcolz chunks (see
 * bcolz_cache.h): entries keyed by (column, chunk) in the generic
 * core/lru_cache.c, evicted from the cold end when the bytes held pass the
 * budget. */
#include "formats/bcolz/bcolz_cache.h"

#include <stdlib.h>
#include <string.h>

#include "core/common.h"
#include "core/lru_cache.h"

/* One decompressed chunk: key (column, chunk number). */
typedef struct entry {
  ds_lru_node lru;      /* first: k1 = column, k2 = chunk, bytes = buf.cap */
  uint64_t first, rows; /* the chunk's rows [first, first + rows) */
  ds_buf buf;
  const uint8_t *p;     /* the chunk's first row inside buf */
} entry;

struct bcolz_cache {
  ds_lru lru;           /* limit = the budget */
  uint64_t hits, misses;
  entry *last;          /* the entry of the previous call (checked first) */
  entry *reuse;         /* an evicted entry whose buffer the next chunk
                           decompresses into (no allocation per miss when
                           the budget holds few chunks) */
  ds_buf spare;         /* a chunk too large to keep */
  size_t max;           /* max_value_bytes of every chunk (0: none) */
};

/* Free an entry and its buffer (NULL is fine). */
static void free_entry(entry *e) {
  if (!e) return;
  ds_buf_free(&e->buf);
  free(e);
}

/* The cache's release: keep the first evicted chunk for reuse (its memory
 * was counted in the budget until now, and the next miss takes it), free
 * the others. */
static void release_entry(ds_lru *l, ds_lru_node *n) {
  bcolz_cache *c = (bcolz_cache *)l; /* the ds_lru is its first member */
  if (!c->reuse) c->reuse = (entry *)n;
  else free_entry((entry *)n);
}

/* An empty cache of `budget` bytes (see bcolz_cache.h). */
bcolz_cache *bcolz_cache_new(uint64_t budget) {
  bcolz_cache *c = calloc(1, sizeof *c);
  if (!c) return NULL;
  ds_lru_init(&c->lru, budget > SIZE_MAX ? SIZE_MAX : (size_t)budget,
              release_entry);
  return c;
}

/* Cap every chunk it decompresses at max bytes (max_value_bytes). */
void bcolz_cache_set_max(bcolz_cache *c, uint64_t max) {
  c->max = (size_t)max;
  c->spare.max = c->max;
}

/* Free every chunk and the cache (NULL is fine). */
void bcolz_cache_free(bcolz_cache *c) {
  if (!c) return;
  ds_lru_free(&c->lru);
  free_entry(c->reuse);
  ds_buf_free(&c->spare);
  free(c);
}

/* A new entry holding chunk k of column col, decompressed and added to the
 * cache (it may evict others); NULL with *err on failure. */
static entry *load_entry(bcolz_cache *c, bcolz_table *t, size_t col,
                         uint64_t k, char **err) {
  entry *e = c->reuse;
  if (e) { /* an evicted entry: keep its buffer, nothing else */
    ds_buf buf = e->buf;
    memset(e, 0, sizeof *e);
    e->buf = buf;
    c->reuse = NULL;
  } else {
    e = calloc(1, sizeof *e);
  }
  if (!e) {
    ds_err(err, "out of memory");
    return NULL;
  }
  e->buf.max = c->max;
  if (bcolz_chunk(t, col, k, &e->buf, &e->p, &e->rows, err)) {
    free_entry(e);
    return NULL;
  }
  e->first = bcolz_col_chunk_first(t, col, k);
  e->lru.k1 = col;
  e->lru.k2 = k;
  e->lru.bytes = e->buf.cap;
  if (ds_lru_put(&c->lru, &e->lru)) {
    free_entry(e);
    ds_err(err, "out of memory");
    return NULL;
  }
  return e;
}

/* A row's bytes: the previous chunk, a cached one, or a chunk decompressed
 * now (kept when it fits the budget, else into `spare` only). */
int bcolz_cache_row(bcolz_cache *c, bcolz_table *t, size_t col, uint64_t row,
                    const uint8_t **p, char **err) {
  if (col >= bcolz_ncols(t) || row >= bcolz_nrows(t))
    return ds_err(err, "%s: row %llu column %zu out of range", bcolz_path(t),
                  (unsigned long long)row, col);
  const bcolz_dtype *dt = bcolz_col_dtype(t, col);
  entry *e = c->last;
  if (!e || e->lru.k1 != col || row < e->first || row >= e->first + e->rows) {
    uint64_t k = bcolz_col_chunk_of(t, col, row);
    e = (entry *)ds_lru_get(&c->lru, col, k);
    if (e) {
      c->hits++;
    } else {
      c->misses++;
      uint64_t need = bcolz_col_chunk_rows(t, col, k) * dt->atom;
      if (need > c->lru.limit) { /* too large to keep */
        uint64_t rows;
        const uint8_t *cp;
        if (bcolz_chunk(t, col, k, &c->spare, &cp, &rows, err)) return -1;
        *p = cp + (row - bcolz_col_chunk_first(t, col, k)) * dt->atom;
        return 0;
      }
      if (!(e = load_entry(c, t, col, k, err))) return -1;
    }
    c->last = e;
  } else {
    c->hits++;
  }
  *p = e->p + (row - e->first) * dt->atom;
  return 0;
}

/* Bytes held, entries, hits and misses so far. */
void bcolz_cache_stats(const bcolz_cache *c, uint64_t *bytes, uint64_t *entries,
                       uint64_t *hits, uint64_t *misses) {
  *bytes = c->lru.used;
  *entries = c->lru.count;
  *hits = c->hits;
  *misses = c->misses;
}
