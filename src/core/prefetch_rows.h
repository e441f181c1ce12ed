/* prefetch_rows.h - the walk every format's prefetch hint for a list of
 * rows shares (bagz_prefetch, datadings_prefetch, atlas_prefetch): each
 * row located in its shard, the rows sorted by shard and index, and the
 * format's one-shard step called once per shard with that shard's rows
 * and room for as many ranges (core/vfs.h ds_vfs_prefetch). */
#ifndef DS_PREFETCH_ROWS_H
#define DS_PREFETCH_ROWS_H

#include <stddef.h>
#include <stdint.h>

#include "core/vfs.h"

/* A row of the list: its shard, its index there (or what the shard step
 * wants the rows ordered by: atlas gives the row's block) and its global
 * number. */
typedef struct ds_row_at {
  size_t shard;
  uint64_t index;
  uint64_t row;
} ds_row_at;

/* A format's part (ctx is its reader). */
typedef struct ds_prefetch_steps {
  /* 1 when shard s takes hints (ds_file_prefetchable of a file of it). */
  int (*prefetchable)(const void *ctx, size_t s);
  /* Row g: its shard (nshards or more: no such row) and index there
   * (see ds_row_at). */
  void (*locate)(const void *ctx, uint64_t g, size_t *shard, uint64_t *index);
  /* The hint for rows v[0..n) of shard s (sorted by index); rg has room
   * for n ranges. */
  void (*shard)(const void *ctx, size_t s, const ds_row_at *v, size_t n, ds_vfs_range *rg);
  /* Optional, instead of shard: the hint for every shard's rows at once
   * (bagz: one round of limits and one of records for the whole set,
   * ds_vfs_prefetch_many): v[0..m) sorted, shard j's rows from first[j]
   * to first[j + 1] (ngroups groups); rg has room for m ranges. */
  void (*all)(const void *ctx, const ds_row_at *v, size_t m, const size_t *first,
              size_t ngroups, ds_vfs_range *rg);
} ds_prefetch_steps;

/* The hint for rows g[0..n) of a reader of nshards shards: nothing for
 * fewer than 2 rows, when no shard takes hints, or when out of memory (a
 * hint only). */
void ds_prefetch_rows(const ds_prefetch_steps *st, const void *ctx, size_t nshards,
                      const uint64_t *g, size_t n);

#endif
