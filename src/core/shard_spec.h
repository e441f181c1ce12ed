/* shard_spec.h - dataset paths that name several files, and the mapping
 * between a global row index and (shard, index inside the shard).
 *
 * Spec syntax (as bagz writes it): comma-separated elements, empty ones
 * skipped; each an optional `posix:` prefix and then
 *   name@N.ext  -> name-00000-of-0000N.ext ... name-0000(N-1)-of-0000N.ext
 *   name@*.ext  -> the same with N found on disk (largest set present)
 *   anything else is a plain path.
 * A spec that names an existing file as written is that one file (commas,
 * `@` and all).
 * N is 1..99999 (leading zeros allowed); `name@0.x`, `name@x.y` are plain. */
#ifndef DS_SHARD_SPEC_H
#define DS_SHARD_SPEC_H

#include <stddef.h>
#include <stdint.h>

typedef struct ds_shard_list {
  char **paths; /* owned */
  size_t n;
} ds_shard_list;

/* Expand `spec` into file paths (existence is not checked, except that an
 * @* element must match something on disk). */
int ds_shard_spec_expand(const char *spec, ds_shard_list *out, char **err);
/* The same; when an @* element finds no shard 0 but other shards of it,
 * *partial = 1 as well as the error (a set in the middle of a replace). */
int ds_shard_spec_expand_partial(const char *spec, ds_shard_list *out, int *partial,
                                 char **err);
void ds_shard_list_free(ds_shard_list *l);

typedef enum ds_layout {
  DS_LAYOUT_CONCATENATED = 0, /* shard 0's rows, then shard 1's, ... */
  DS_LAYOUT_INTERLEAVED = 1   /* row g lives in shard g % k at g / k */
} ds_layout;

typedef struct ds_shard_map {
  ds_layout layout;
  size_t nshards;
  uint64_t *counts; /* rows per shard */
  uint64_t *first;  /* concatenated: global index of each shard's row 0 */
  uint64_t total;
} ds_shard_map;

/* Build the map. Interleaved is accepted only as upstream allows it: sizes
 * non-increasing and all within 1 of the first; otherwise an error. */
int ds_shard_map_init(ds_shard_map *m, ds_layout layout,
                      const uint64_t *counts, size_t nshards, char **err);
void ds_shard_map_free(ds_shard_map *m);
/* Global index g (< total) -> shard and index inside it. */
void ds_shard_map_locate(const ds_shard_map *m, uint64_t g, size_t *shard,
                         uint64_t *index);
/* (shard, index) -> global index. */
uint64_t ds_shard_map_global(const ds_shard_map *m, size_t shard,
                             uint64_t index);

#endif
