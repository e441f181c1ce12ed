/* hash_index.c - hash -> rows index over byte strings (see hash_index.h). */
#include "hash_index.h"

#include <stdlib.h>
#include <string.h>

#include "cancel.h"
#include "common.h"

/* 64-bit multiply-mix hash over 8-byte words (wyhash-style mixing). */
static inline uint64_t mix(uint64_t a, uint64_t b) {
  __uint128_t r = (__uint128_t)a * b;
  return (uint64_t)r ^ (uint64_t)(r >> 64);
}

uint64_t ds_hash64(const void *data, size_t n) {
  const uint8_t *p = data;
  uint64_t h = 0x9e3779b97f4a7c15ull ^ (n * 0xa0761d6478bd642full);
  while (n >= 8) {
    h = mix(h ^ ds_le64(p), 0xe7037ed1a0b428dbull);
    p += 8;
    n -= 8;
  }
  uint64_t t = 0;
  for (size_t i = 0; i < n; i++) t |= (uint64_t)p[i] << (8 * i);
  h = mix(h ^ t ^ ((uint64_t)n << 56), 0x8ebc6af09c88c6e3ull);
  return mix(h, 0x589965cc75374cc3ull);
}

static int cmp_entry(const void *a, const void *b) {
  const ds_hash_entry *x = a, *y = b;
  if (x->hash != y->hash) return x->hash < y->hash ? -1 : 1;
  return x->row < y->row ? -1 : x->row > y->row;
}

int ds_hash_index_build(ds_hash_index *h, uint64_t n, ds_hash_get_fn get,
                        void *ctx, char **err) {
  memset(h, 0, sizeof *h);
  if (n > SIZE_MAX / sizeof(ds_hash_entry)) return ds_err(err, "too many rows to index");
  h->entries = malloc((n ? n : 1) * sizeof *h->entries);
  if (!h->entries) return ds_err(err, "out of memory building an index of %llu rows",
                                 (unsigned long long)n);
  for (uint64_t i = 0; i < n; i++) {
    const uint8_t *p;
    size_t len;
    if (get(ctx, i, &p, &len, err) ||
        ((i & 63) == 0 && ds_cancel_check() && ds_err(err, DS_CANCEL_MSG))) {
      ds_hash_index_free(h);
      return -1;
    }
    h->entries[i].hash = ds_hash64(p, len);
    h->entries[i].row = i;
  }
  qsort(h->entries, n, sizeof *h->entries, cmp_entry);
  h->n = n;
  return 0;
}

size_t ds_hash_index_find(const ds_hash_index *h, const void *key, size_t n,
                          const ds_hash_entry **first) {
  uint64_t k = ds_hash64(key, n);
  size_t a = 0, b = (size_t)h->n;
  while (a < b) {
    size_t m = a + (b - a) / 2;
    if (h->entries[m].hash < k) a = m + 1; else b = m;
  }
  *first = h->entries + a;
  size_t c = 0;
  while (a + c < h->n && h->entries[a + c].hash == k) c++;
  return c;
}

void ds_hash_index_free(ds_hash_index *h) {
  free(h->entries);
  h->entries = NULL;
  h->n = 0;
}
