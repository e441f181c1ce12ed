/* shards.c - the shard listing of any dataset (see shards.h): the
 * format's list_shards (formats/<fmt>/<fmt>_format.c) opens its reader
 * (which reads only headers and indexes) and adds every shard whole, or
 * with split_rows one entry per range, through ds_shards_add. */
#include "shards.h"

#include <stdlib.h>
#include <string.h>

#include "core/common.h"

/* Add rows [a, a + rows) of shard s as one entry. */
static int add(ds_shard_listing *l, const ds_shard_info *s, uint64_t a,
               uint64_t rows, uint64_t bytes, char **err) {
  ds_shard_entry *items = ds_grow_cap(l->items, &l->cap, l->n, sizeof *items, 16);
  if (!items) return ds_err(err, "out of memory");
  l->items = items;
  ds_shard_entry *e = &l->items[l->n];
  e->path = strdup(s->path);
  e->dictionary = s->dictionary ? strdup(s->dictionary) : NULL;
  if (!e->path || (s->dictionary && !e->dictionary)) {
    ds_shard_entry_free(e);
    return ds_err(err, "out of memory");
  }
  e->shard = s->shard;
  e->first_rowid = s->first + a * s->stride;
  e->rows = rows;
  e->bytes = bytes;
  e->shard_index = a;
  l->n++;
  return 0;
}

int ds_shards_add(ds_shard_listing *l, const ds_shard_info *s, uint64_t split,
                  ds_range_bytes_fn range_bytes, void *reader, char **err) {
  if (split == 0 || s->rows == 0) return add(l, s, 0, s->rows, s->bytes, err);
  for (uint64_t a = 0; a < s->rows; a += split) {
    uint64_t b = s->rows - a < split ? s->rows : a + split, bytes;
    if (range_bytes(reader, s->shard, s->first, a, b, &bytes, err) ||
        add(l, s, a, b - a, bytes, err))
      return -1;
  }
  return 0;
}

int ds_shards_list(const char *path, const ds_detected *d,
                   const ds_shards_options *o, ds_shard_listing *out, char **err) {
  memset(out, 0, sizeof *out);
  out->format = d->format;
  int rc = d->format && d->format->list_shards
               ? d->format->list_shards(path, d, o, out, err)
               : ds_err(err, "%s: unknown format", path);
  if (rc) ds_shard_listing_free(out);
  return rc;
}

void ds_shard_entry_free(ds_shard_entry *e) {
  free(e->path);
  free(e->dictionary);
}

void ds_shard_listing_free(ds_shard_listing *l) {
  for (size_t i = 0; i < l->n; i++) ds_shard_entry_free(&l->items[i]);
  free(l->items);
  memset(l, 0, sizeof *l);
}
