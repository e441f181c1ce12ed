/* bagz_prefetch.c - the prefetch hint of a list of rows (bagz.h
 * bagz_prefetch): for a bag on a backend that takes hints (remote files,
 * core/vfs.h ds_vfs_prefetch_many), the limits of the rows of every shard
 * are fetched in one round, then their records in another, each with many
 * requests in flight, so the cursor's reads that follow cost no request:
 * two rounds for the list, whatever the number of shards. Local bags pay
 * nothing. The rows are located, sorted and grouped by core/prefetch_rows.c. */
#include <stdlib.h>

#include "core/prefetch_rows.h"
#include "formats/bagz/bagz.h"

/* Limits fetched whole (and then loaded in memory) for a list with at
 * least DS_VIEW_JUMPS_TO_LOAD rows in a shard, up to this many bytes. */
#define WHOLE_LIMITS_MAX ((uint64_t)64 << 20)

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

/* 1 when the limits of shard s are fetched whole for a list of n rows in
 * it: as many rows as lookups need to load them (core/mapped_file.h), and
 * not too many bytes. */
static int whole_limits(const bagz_shard *s, size_t n) {
  return n >= DS_VIEW_JUMPS_TO_LOAD && 8 * s->count <= WHOLE_LIMITS_MAX;
}

/* The limits ranges of rows v[0..n) of shard s into rg as the set *set:
 * the whole limits (whole_limits), else 16 bytes a row (the row's start
 * and end; 8 for row 0). 1, or 0 when its limits take no hint or are in
 * memory already. */
static int limits_set(const bagz_shard *s, const ds_row_at *v, size_t n, ds_vfs_range *rg,
                      ds_vfs_prefetch_set *set) {
  if (__atomic_load_n(&s->limits_mem, __ATOMIC_ACQUIRE)) return 0;
  if (whole_limits(s, n)) {
    rg[0] = (ds_vfs_range){s->limits_off, 8 * s->count};
    return ds_file_prefetch_set(s->limits, rg, 1, set);
  }
  for (size_t i = 0; i < n; i++) {
    uint64_t off = s->limits_off + 8 * v[i].index;
    rg[i] = v[i].index ? (ds_vfs_range){off - 8, 16} : (ds_vfs_range){off, 8};
  }
  return ds_file_prefetch_set(s->limits, rg, n, set);
}

/* The record ranges of rows v[0..n) of shard s into rg (their limits read
 * now: prefetched, in memory or fetched) as the set *set: 1, or 0. */
static int records_set(const bagz_shard *s, const ds_row_at *v, size_t n, ds_vfs_range *rg,
                       ds_vfs_prefetch_set *set) {
  size_t k = 0;
  char *err = NULL; /* a limits read that fails ends the hint; its reads report it */
  for (size_t i = 0; i < n; i++) {
    uint64_t off = s->limits_off + 8 * v[i].index, start = 0, end;
    if (v[i].index && ds_file_u64le(s->limits, off - 8, &start, &err)) break;
    if (ds_file_u64le(s->limits, off, &end, &err)) break;
    if (end > start && end <= s->records_size) rg[k++] = (ds_vfs_range){start, end - start};
  }
  free(err);
  return k && ds_file_prefetch_set(&s->data, rg, k, set);
}

/* ds_prefetch_steps.all: round 1, the limits of every shard's rows at
 * once; limits fetched whole go to memory; round 2, the records of every
 * shard's rows at once. */
static void all_shards(const void *ctx, const ds_row_at *v, size_t m, const size_t *first,
                       size_t ngroups, ds_vfs_range *rg) {
  (void)m;
  bagz_reader *r = (bagz_reader *)ctx; /* bagz_prefetch's own, not const */
  ds_vfs_prefetch_set *sets = ngroups ? malloc(ngroups * sizeof *sets) : NULL;
  if (!sets) return;
  size_t ns = 0;
  for (size_t j = 0; j < ngroups; j++)
    ns += limits_set(&r->shards[v[first[j]].shard], v + first[j], first[j + 1] - first[j],
                     rg + first[j], &sets[ns]);
  ds_vfs_prefetch_many(sets, ns);
  /* limits fetched whole go to memory now (from the prefetched bytes, no
   * request): round 2 would replace those bytes where the limits share
   * the records' file, and lookups would then fetch them again */
  for (size_t j = 0; j < ngroups; j++) {
    bagz_shard *s = &r->shards[v[first[j]].shard];
    if (whole_limits(s, first[j + 1] - first[j])) bagz_limits_load(s);
  }
  /* (each shard's ranges overwrite its round-1 ranges: read first) */
  ns = 0;
  for (size_t j = 0; j < ngroups; j++)
    ns += records_set(&r->shards[v[first[j]].shard], v + first[j], first[j + 1] - first[j],
                      rg + first[j], &sets[ns]);
  ds_vfs_prefetch_many(sets, ns);
  free(sets);
}

void bagz_prefetch(bagz_reader *r, const uint64_t *g, size_t n) {
  static const ds_prefetch_steps steps = {shard_prefetchable, locate, NULL, all_shards};
  ds_prefetch_rows(&steps, r, r->nshards, g, n);
}
