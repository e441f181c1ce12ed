/* bcolz_format.c - the bcolz descriptor (bcolz_format.h): a directory
 * with __rootdirs__ (a ctable) or meta/storage (a carray). Bytes on disk:
 * every regular file under it; shards: the whole table, ranges from the
 * sizes of the chunk files that hold their rows. */
#include "bcolz_format.h"

#include <stdlib.h>

#include "core/common.h"
#include "core/vfs.h"
#include "formats/bcolz/bcolz.h"
#include "formats/detect.h"
#include "formats/format_files.h"
#include "formats/shards.h"

/* format.h detect_dir: __rootdirs__ (a ctable) or meta/storage (a carray). */
static int detect_dir(const char *path, unsigned *detail) {
  return ds_fmt_detect_dir_by(path, "__rootdirs__", DS_BCOLZ_DETECT_CTABLE, "meta/storage",
                              detail);
}

/* shards.h ds_range_bytes_fn: sizes of the chunk files of every column
 * that hold rows [a, b). */
static int range_bytes(void *reader, size_t shard, uint64_t first, uint64_t a,
                       uint64_t b, uint64_t *bytes, char **err) {
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

/* format.h list_shards: one shard, the whole table. */
static int list_shards(const char *path, const ds_detected *d,
                       const ds_shards_options *o, ds_shard_listing *l, char **err) {
  bcolz_table *t;
  if (bcolz_open(path, &t, err)) return -1;
  l->nshards = 1;
  l->total_rows = bcolz_nrows(t);
  ds_shard_info si = {0, path, bcolz_nrows(t), 0, 1, 0, NULL};
  int rc = ds_fmt_folder_bytes(path, d->detail, &si.bytes, err);
  if (rc == 0) rc = ds_shards_add(l, &si, o->split_rows, range_bytes, t, err);
  bcolz_close(t);
  return rc;
}

const ds_format_bytes ds_bcolz_format = DS_FOLDER_FORMAT(
    "bcolz", detect_dir, "__rootdirs__ or meta/storage (a bcolz ctable or carray)", list_shards);
