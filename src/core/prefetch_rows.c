/* prefetch_rows.c - locate, sort and group the rows of a prefetch hint
 * (see prefetch_rows.h). */
#include "core/prefetch_rows.h"

#include <stdlib.h>

/* qsort order: by shard, then index. */
static int by_shard(const void *a, const void *b) {
  const ds_row_at *x = a, *y = b;
  if (x->shard != y->shard) return x->shard < y->shard ? -1 : 1;
  return x->index < y->index ? -1 : x->index > y->index;
}

/* The groups of sorted rows v[0..m) (one per shard) to st->all. */
static void all_groups(const ds_prefetch_steps *st, const void *ctx, const ds_row_at *v,
                       size_t m, ds_vfs_range *rg) {
  size_t k = 0;
  for (size_t i = 0; i < m; i++) k += i == 0 || v[i].shard != v[i - 1].shard;
  size_t *first = k ? malloc((k + 1) * sizeof *first) : NULL;
  if (!first) return;
  k = 0;
  for (size_t i = 0; i < m; i++)
    if (i == 0 || v[i].shard != v[i - 1].shard) first[k++] = i;
  first[k] = m;
  st->all(ctx, v, m, first, k, rg);
  free(first);
}

void ds_prefetch_rows(const ds_prefetch_steps *st, const void *ctx, size_t nshards,
                      const uint64_t *g, size_t n) {
  if (n < 2) return;
  int any = 0;
  for (size_t s = 0; s < nshards && !any; s++) any = st->prefetchable(ctx, s);
  if (!any) return;
  ds_row_at *v = malloc(n * sizeof *v);
  ds_vfs_range *rg = malloc(n * sizeof *rg);
  size_t m = 0;
  for (size_t i = 0; v && rg && i < n; i++) {
    st->locate(ctx, g[i], &v[m].shard, &v[m].index);
    v[m].row = g[i];
    if (v[m].shard < nshards) m++;
  }
  if (v && rg) qsort(v, m, sizeof *v, by_shard);
  if (st->all && v && rg) {
    all_groups(st, ctx, v, m, rg);
  } else {
    for (size_t i = 0, j; v && rg && i < m; i = j) {
      for (j = i; j < m && v[j].shard == v[i].shard; j++) {}
      st->shard(ctx, v[i].shard, v + i, j - i, rg);
    }
  }
  free(v);
  free(rg);
}
