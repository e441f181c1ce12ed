/* bagz_prefetch.c - the prefetch hint of a list of rows (bagz.h
 * bagz_prefetch): for a bag on a backend that takes hints (remote files,
 * core/vfs.h ds_vfs_prefetch), the limits of the rows are fetched in one
 * round, then their records in another, each with many requests in
 * flight, so the cursor's reads that follow cost no request. Shard by
 * shard; local bags pay nothing. */
#include <stdlib.h>
#include <string.h>

#include "formats/bagz/bagz.h"

/* A row of the list as (shard, index), for sorting by shard. */
typedef struct at {
  size_t shard;
  uint64_t index;
} at;

static int by_shard(const void *a, const void *b) {
  const at *x = a, *y = b;
  if (x->shard != y->shard) return x->shard < y->shard ? -1 : 1;
  return x->index < y->index ? -1 : x->index > y->index;
}

/* Prefetch the limits, then the records, of rows v[0..n) of shard s. */
static void one_shard(bagz_shard *s, const at *v, size_t n, ds_vfs_range *rg) {
  int lim = ds_file_prefetchable(s->limits) &&
            !__atomic_load_n(&s->limits_mem, __ATOMIC_ACQUIRE);
  if (!lim && !ds_file_prefetchable(&s->data)) return;
  if (lim) {
    for (size_t i = 0; i < n; i++) {
      uint64_t off = s->limits_off + 8 * v[i].index;
      rg[i] = v[i].index ? (ds_vfs_range){off - 8, 16} : (ds_vfs_range){off, 8};
    }
    ds_file_prefetch(s->limits, rg, n);
  }
  size_t k = 0;
  for (size_t i = 0; i < n; i++) {
    uint64_t off = s->limits_off + 8 * v[i].index, start = 0, end;
    char *err = NULL;
    if (v[i].index && ds_file_u64le(s->limits, off - 8, &start, &err)) break;
    if (ds_file_u64le(s->limits, off, &end, &err)) break;
    if (end > start && end <= s->records_size) rg[k++] = (ds_vfs_range){start, end - start};
  }
  ds_file_prefetch(&s->data, rg, k);
}

void bagz_prefetch(bagz_reader *r, const uint64_t *g, size_t n) {
  if (n < 2) return;
  int any = 0;
  for (size_t s = 0; s < r->nshards && !any; s++)
    any = ds_file_prefetchable(&r->shards[s].data) || ds_file_prefetchable(r->shards[s].limits);
  if (!any) return;
  at *v = malloc(n * sizeof *v);
  ds_vfs_range *rg = malloc(n * sizeof *rg);
  size_t m = 0;
  for (size_t i = 0; v && rg && i < n; i++)
    if (g[i] < r->map.total) {
      ds_shard_map_locate(&r->map, g[i], &v[m].shard, &v[m].index);
      m++;
    }
  if (v && rg) qsort(v, m, sizeof *v, by_shard);
  for (size_t i = 0, j; v && rg && i < m; i = j) {
    for (j = i; j < m && v[j].shard == v[i].shard; j++) {}
    one_shard(&r->shards[v[i].shard], v + i, j - i, rg);
  }
  free(v);
  free(rg);
}
