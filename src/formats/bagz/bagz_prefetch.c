/* bagz_prefetch.c - the prefetch hint of a list of rows (bagz.h
 * bagz_prefetch): for a bag on a backend that takes hints (remote files,
 * core/vfs.h ds_vfs_prefetch), the limits of the rows are fetched in one
 * round, then their records in another, each with many requests in
 * flight, so the cursor's reads that follow cost no request. Shard by
 * shard; local bags pay nothing. */
#include <stdlib.h>

#include "core/prefetch_rows.h"
#include "formats/bagz/bagz.h"

/* ds_prefetch_steps.prefetchable: its records or its limits. */
static int shard_prefetchable(const void *ctx, size_t s) {
  const bagz_shard *sh = &((const bagz_reader *)ctx)->shards[s];
  return ds_file_prefetchable(&sh->data) || ds_file_prefetchable(sh->limits);
}

/* ds_prefetch_steps.locate */
static void locate(const void *ctx, uint64_t g, size_t *shard, uint64_t *index) {
  const bagz_reader *r = ctx;
  *index = 0;
  *shard = r->nshards;
  if (g < r->map.total) ds_shard_map_locate(&r->map, g, shard, index);
}

/* ds_prefetch_steps.shard: the limits, then the records, of rows v[0..n)
 * of shard si. */
static void one_shard(const void *ctx, size_t si, const ds_row_at *v, size_t n,
                      ds_vfs_range *rg) {
  const bagz_shard *s = &((const bagz_reader *)ctx)->shards[si];
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
  char *err = NULL; /* a limits read that fails ends the hint; its reads report it */
  for (size_t i = 0; i < n; i++) {
    uint64_t off = s->limits_off + 8 * v[i].index, start = 0, end;
    if (v[i].index && ds_file_u64le(s->limits, off - 8, &start, &err)) break;
    if (ds_file_u64le(s->limits, off, &end, &err)) break;
    if (end > start && end <= s->records_size) rg[k++] = (ds_vfs_range){start, end - start};
  }
  free(err);
  ds_file_prefetch(&s->data, rg, k);
}

void bagz_prefetch(bagz_reader *r, const uint64_t *g, size_t n) {
  static const ds_prefetch_steps steps = {shard_prefetchable, locate, one_shard};
  ds_prefetch_rows(&steps, r, r->nshards, g, n);
}
