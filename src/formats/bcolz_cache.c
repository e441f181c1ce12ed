/* bcolz_cache.c - the bounded LRU cache of decompressed bcolz chunks (see
 * bcolz_cache.h): a hash table of (column, chunk) entries on a recency
 * list, evicted from the cold end when the bytes held pass the budget. */
#include "formats/bcolz_cache.h"

#include <stdlib.h>
#include <string.h>

#include "core/common.h"

typedef struct entry {
  size_t col;
  uint64_t k;
  uint64_t first, rows; /* the chunk's rows [first, first + rows) */
  ds_buf buf;
  const uint8_t *p;
  struct entry *prev, *next; /* recency: head = most recent */
  struct entry *hnext;       /* hash chain */
} entry;

struct bcolz_cache {
  uint64_t budget, bytes, hits, misses, count;
  entry **table;
  size_t nslots; /* power of two */
  entry *head, *tail;
  entry *last;   /* the entry of the previous call (checked first) */
  ds_buf spare;  /* a chunk too large to keep */
  size_t max;    /* max_value_bytes of every chunk (0: none) */
};

bcolz_cache *bcolz_cache_new(uint64_t budget) {
  bcolz_cache *c = calloc(1, sizeof *c);
  if (!c) return NULL;
  c->budget = budget;
  c->nslots = 64;
  c->table = calloc(c->nslots, sizeof *c->table);
  if (!c->table) {
    free(c);
    return NULL;
  }
  return c;
}

void bcolz_cache_set_max(bcolz_cache *c, uint64_t max) {
  c->max = (size_t)max;
  c->spare.max = c->max;
}

void bcolz_cache_free(bcolz_cache *c) {
  if (!c) return;
  for (entry *e = c->head, *n; e; e = n) {
    n = e->next;
    ds_buf_free(&e->buf);
    free(e);
  }
  ds_buf_free(&c->spare);
  free(c->table);
  free(c);
}

static size_t slot_of(const bcolz_cache *c, size_t col, uint64_t k) {
  uint64_t h = (k * 0x9E3779B97F4A7C15ULL) ^ ((uint64_t)col * 0xC2B2AE3D27D4EB4FULL);
  return (size_t)(h >> 20) & (c->nslots - 1);
}

static void unlink_lru(bcolz_cache *c, entry *e) {
  if (e->prev) e->prev->next = e->next;
  else c->head = e->next;
  if (e->next) e->next->prev = e->prev;
  else c->tail = e->prev;
  e->prev = e->next = NULL;
}

static void push_front(bcolz_cache *c, entry *e) {
  e->next = c->head;
  e->prev = NULL;
  if (c->head) c->head->prev = e;
  c->head = e;
  if (!c->tail) c->tail = e;
}

static void unlink_hash(bcolz_cache *c, entry *e) {
  entry **pp = &c->table[slot_of(c, e->col, e->k)];
  while (*pp && *pp != e) pp = &(*pp)->hnext;
  if (*pp) *pp = e->hnext;
}

static void evict(bcolz_cache *c, const entry *keep) {
  while (c->bytes > c->budget && c->tail && c->tail != keep) {
    entry *e = c->tail;
    unlink_lru(c, e);
    unlink_hash(c, e);
    c->bytes -= e->buf.cap;
    c->count--;
    if (c->last == e) c->last = NULL;
    ds_buf_free(&e->buf);
    free(e);
  }
}

/* Double the hash table when it holds more entries than slots. */
static void grow(bcolz_cache *c) {
  if (c->count < c->nslots) return;
  size_t n = c->nslots * 2;
  entry **t = calloc(n, sizeof *t);
  if (!t) return; /* keep the smaller table: only slower */
  entry **old = c->table;
  size_t oldn = c->nslots;
  c->table = t;
  c->nslots = n;
  for (size_t i = 0; i < oldn; i++)
    for (entry *e = old[i], *nx; e; e = nx) {
      nx = e->hnext;
      size_t s = slot_of(c, e->col, e->k);
      e->hnext = t[s];
      t[s] = e;
    }
  free(old);
}

int bcolz_cache_row(bcolz_cache *c, bcolz_table *t, size_t col, uint64_t row,
                    const uint8_t **p, char **err) {
  if (col >= bcolz_ncols(t) || row >= bcolz_nrows(t))
    return ds_err(err, "%s: row %llu column %zu out of range", bcolz_path(t),
                  (unsigned long long)row, col);
  const bcolz_dtype *dt = bcolz_col_dtype(t, col);
  entry *e = c->last;
  if (!e || e->col != col || row < e->first || row >= e->first + e->rows) {
    uint64_t k = bcolz_col_chunk_of(t, col, row);
    for (e = c->table[slot_of(c, col, k)]; e && (e->col != col || e->k != k); e = e->hnext) {
    }
    if (e) {
      c->hits++;
      if (c->head != e) {
        unlink_lru(c, e);
        push_front(c, e);
      }
    } else {
      c->misses++;
      uint64_t rows;
      const uint8_t *cp;
      uint64_t need = bcolz_col_chunk_rows(t, col, k) * dt->atom;
      if (need > c->budget) { /* too large to keep */
        if (bcolz_chunk(t, col, k, &c->spare, &cp, &rows, err)) return -1;
        *p = cp + (row - bcolz_col_chunk_first(t, col, k)) * dt->atom;
        return 0;
      }
      e = calloc(1, sizeof *e);
      if (!e) return ds_err(err, "out of memory");
      e->buf.max = c->max;
      if (bcolz_chunk(t, col, k, &e->buf, &cp, &rows, err)) {
        ds_buf_free(&e->buf);
        free(e);
        return -1;
      }
      e->col = col;
      e->k = k;
      e->p = cp;
      e->rows = rows;
      e->first = bcolz_col_chunk_first(t, col, k);
      size_t s = slot_of(c, col, k);
      e->hnext = c->table[s];
      c->table[s] = e;
      push_front(c, e);
      c->bytes += e->buf.cap;
      c->count++;
      evict(c, e);
      grow(c);
    }
    c->last = e;
  } else {
    c->hits++;
  }
  *p = e->p + (row - e->first) * dt->atom;
  return 0;
}

void bcolz_cache_stats(const bcolz_cache *c, uint64_t *bytes, uint64_t *entries,
                       uint64_t *hits, uint64_t *misses) {
  *bytes = c->bytes;
  *entries = c->count;
  *hits = c->hits;
  *misses = c->misses;
}
