/* shards.c - the shard listing of any dataset (see shards.h): the
 * format's reader is opened (which reads only headers and indexes), and
 * every shard becomes one entry, or with split_rows one entry per range.
 * A range's bytes come from the index entries at its ends (bagz limits,
 * datadings offsets, atlas index.npy) or the sizes of bcolz chunk files. */
#include "shards.h"

#include <stdlib.h>
#include <string.h>

#include "core/common.h"
#include "core/vfs.h"
#include "formats/atlas/atlas.h"
#include "formats/bcolz/bcolz.h"
#include "formats/datadings/datadings.h"

/* Stored bytes of rows [a, b) (a < b) of one shard: format-specific. */
typedef int (*range_bytes_fn)(void *reader, size_t shard, uint64_t first,
                              uint64_t a, uint64_t b, uint64_t *bytes, char **err);

/* One shard as the format sees it, before it is cut into ranges. */
typedef struct shard_info {
  size_t shard;
  const char *path;
  uint64_t rows;
  uint64_t first;  /* global rowid of its row 0 */
  uint64_t stride; /* rowid step between its rows: 1, or nshards (interleaved) */
  uint64_t bytes;  /* bytes on disk of its files */
  const char *dictionary; /* atlas: the zstd dictionary it decodes with, or NULL */
} shard_info;

static int add(ds_shard_listing *l, const shard_info *s, uint64_t a,
               uint64_t rows, uint64_t bytes, char **err) {
  ds_shard_entry *items = ds_grow_cap(l->items, &l->cap, l->n, sizeof *items, 16);
  if (!items) return ds_err(err, "out of memory");
  l->items = items;
  ds_shard_entry *e = &l->items[l->n];
  e->path = strdup(s->path);
  e->dictionary = s->dictionary ? strdup(s->dictionary) : NULL;
  if (!e->path || (s->dictionary && !e->dictionary)) {
    free(e->path);
    free(e->dictionary);
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

/* Add shard s whole, or cut into ranges of at most split rows. */
static int add_shard(ds_shard_listing *l, const shard_info *s, uint64_t split,
                     range_bytes_fn range_bytes, void *reader, char **err) {
  if (split == 0 || s->rows == 0) return add(l, s, 0, s->rows, s->bytes, err);
  for (uint64_t a = 0; a < s->rows; a += split) {
    uint64_t b = s->rows - a < split ? s->rows : a + split, bytes;
    if (range_bytes(reader, s->shard, s->first, a, b, &bytes, err) ||
        add(l, s, a, b - a, bytes, err))
      return -1;
  }
  return 0;
}

/* ------------------------------------------------------------ bagz */

/* A bag and the io its limits are read through (pread, see bagz_io). */
typedef struct {
  bagz_reader *r;
  bagz_io io;
} bagz_ranges;

static int bagz_range_bytes(void *reader, size_t shard, uint64_t first,
                            uint64_t a, uint64_t b, uint64_t *bytes, char **err) {
  (void)first;
  bagz_ranges *br = reader;
  uint64_t start, end, s2, e2;
  if (bagz_stored_range(br->r, &br->io, shard, a, &start, &e2, err) ||
      bagz_stored_range(br->r, &br->io, shard, b - 1, &s2, &end, err))
    return -1;
  *bytes = end >= start ? end - start : 0;
  return 0;
}

static int list_bagz(const char *path, const ds_detected *d,
                     const ds_shards_options *o, ds_shard_listing *l, char **err) {
  bagz_options bo = {BAGZ_COMPRESSION_AUTO,
                     o->limits_given ? o->limits
                                     : d->bagz_separate ? BAGZ_LIMITS_SEPARATE
                                                        : BAGZ_LIMITS_TAIL,
                     o->layout, NULL};
  bagz_reader *r;
  if (bagz_open(path, &bo, &r, err)) return -1;
  int rc = 0;
  bagz_ranges br = {.r = r};
  l->nshards = r->nshards;
  l->total_rows = bagz_count(r);
  l->layout = o->layout;
  for (size_t i = 0; i < r->nshards && rc == 0; i++) {
    const bagz_shard *s = &r->shards[i];
    int inter = o->layout == DS_LAYOUT_INTERLEAVED;
    shard_info si = {i, s->data.path, s->count, inter ? i : r->map.first[i],
                     inter ? r->nshards : 1,
                     s->data.size + (s->limits == &s->limits_file ? s->limits_file.size : 0), NULL};
    rc = add_shard(l, &si, o->split_rows, bagz_range_bytes, &br, err);
  }
  bagz_io_free(&br.io);
  bagz_close(r);
  return rc;
}

/* ------------------------------------------------------------ datadings */

static int datadings_range_bytes(void *reader, size_t shard, uint64_t first,
                                 uint64_t a, uint64_t b, uint64_t *bytes,
                                 char **err) {
  size_t s1, s2;
  uint64_t start, end, x, y;
  datadings_io io; /* offsets read with pread */
  memset(&io, 0, sizeof io);
  int rc = datadings_sample_range(reader, &io, first + a, &s1, &start, &x, err) ||
           datadings_sample_range(reader, &io, first + b - 1, &s2, &y, &end, err);
  datadings_io_free(&io);
  if (rc) return -1;
  (void)shard;
  *bytes = end >= start ? end - start : 0;
  return 0;
}

static int list_datadings(const char *path, const ds_detected *d,
                          const ds_shards_options *o, ds_shard_listing *l,
                          char **err) {
  datadings_reader *r;
  if (datadings_open(path, &r, err)) return -1;
  int rc = 0;
  uint64_t first = 0;
  l->nshards = datadings_nshards(r);
  l->total_rows = datadings_count(r);
  for (size_t i = 0; i < l->nshards && rc == 0; i++) {
    shard_info si = {i, datadings_shard_path(r, i), datadings_shard_count(r, i),
                     first, 1, 0, NULL};
    rc = ds_detect_shard_bytes(si.path, d, &si.bytes, err);
    if (rc == 0) rc = add_shard(l, &si, o->split_rows, datadings_range_bytes, r, err);
    first += si.rows;
  }
  datadings_close(r);
  return rc;
}

/* ------------------------------------------------------------ atlas */

static int atlas_range_bytes(void *reader, size_t shard, uint64_t first,
                             uint64_t a, uint64_t b, uint64_t *bytes, char **err) {
  size_t s;
  uint64_t b0, b1, pos, off0, len0, off1, len1;
  atlas_locate(reader, first + a, &s, &b0, &pos);
  atlas_locate(reader, first + b - 1, &s, &b1, &pos);
  if (atlas_block_range(reader, shard, b0, &off0, &len0, err) ||
      atlas_block_range(reader, shard, b1, &off1, &len1, err))
    return -1;
  *bytes = off1 + len1 >= off0 ? off1 + len1 - off0 : 0;
  return 0;
}

static int list_atlas(const char *path, const ds_detected *d,
                      const ds_shards_options *o, ds_shard_listing *l, char **err) {
  atlas_reader *r;
  if (atlas_open_dict(path, o->dictionary, &r, err)) return -1;
  int rc = 0;
  l->nshards = atlas_nshards(r);
  l->total_rows = atlas_count(r);
  for (size_t i = 0; i < l->nshards && rc == 0; i++) {
    shard_info si = {i, atlas_shard_path(r, i), atlas_shard_count(r, i),
                     atlas_shard_first(r, i), 1, 0, atlas_dict_path(r, i)};
    rc = ds_detect_shard_bytes(si.path, d, &si.bytes, err);
    if (rc == 0) rc = add_shard(l, &si, o->split_rows, atlas_range_bytes, r, err);
  }
  atlas_close(r);
  return rc;
}

/* ------------------------------------------------------------ bcolz */

/* Sizes of the chunk files of every column that hold rows [a, b). */
static int bcolz_range_bytes(void *reader, size_t shard, uint64_t first,
                             uint64_t a, uint64_t b, uint64_t *bytes, char **err) {
  (void)shard;
  (void)first;
  bcolz_table *t = reader;
  *bytes = 0;
  for (size_t c = 0; c < bcolz_ncols(t); c++) {
    uint64_t k0 = bcolz_col_chunk_of(t, c, a), k1 = bcolz_col_chunk_of(t, c, b - 1);
    for (uint64_t k = k0; k <= k1 && k < bcolz_col_nchunks(t, c); k++) {
      char *fp = ds_strf("%s/data/__%llu.blp", bcolz_col_path(t, c),
                         (unsigned long long)k);
      if (!fp) return ds_err(err, "out of memory");
      *bytes += ds_vfs_file_size(fp);
      free(fp);
    }
  }
  return 0;
}

static int list_bcolz(const char *path, const ds_detected *d,
                      const ds_shards_options *o, ds_shard_listing *l, char **err) {
  bcolz_table *t;
  if (bcolz_open(path, &t, err)) return -1;
  l->nshards = 1;
  l->total_rows = bcolz_nrows(t);
  shard_info si = {0, path, bcolz_nrows(t), 0, 1, 0, NULL};
  int rc = ds_detect_shard_bytes(path, d, &si.bytes, err);
  if (rc == 0) rc = add_shard(l, &si, o->split_rows, bcolz_range_bytes, t, err);
  bcolz_close(t);
  return rc;
}

/* ------------------------------------------------------------ API */

int ds_shards_list(const char *path, const ds_detected *d,
                   const ds_shards_options *o, ds_shard_listing *out, char **err) {
  memset(out, 0, sizeof *out);
  out->format = d->format;
  int rc = -1;
  switch (d->format) {
  case DS_FORMAT_BAGZ: rc = list_bagz(path, d, o, out, err); break;
  case DS_FORMAT_DATADINGS: rc = list_datadings(path, d, o, out, err); break;
  case DS_FORMAT_ATLAS: rc = list_atlas(path, d, o, out, err); break;
  case DS_FORMAT_BCOLZ: rc = list_bcolz(path, d, o, out, err); break;
  default: ds_err(err, "%s: unknown format", path);
  }
  if (rc) ds_shard_listing_free(out);
  return rc;
}

void ds_shard_listing_free(ds_shard_listing *l) {
  for (size_t i = 0; i < l->n; i++) {
    free(l->items[i].path);
    free(l->items[i].dictionary);
  }
  free(l->items);
  memset(l, 0, sizeof *l);
}
