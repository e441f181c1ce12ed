/* atlas_format.c - the atlas descriptor (atlas_format.h): a directory
 * with index.npy (a shard) or meta.json (a dataset root). Bytes on disk:
 * every regular file under it; shards: the reader's shard folders, ranges
 * from the blocks index.npy locates. */
#include "atlas_format.h"

#include "core/common.h"
#include "formats/atlas/atlas.h"
#include "formats/detect.h"
#include "formats/format_files.h"
#include "formats/shards.h"

/* format.h detect_dir: index.npy (a shard) or meta.json (a dataset). */
static int detect_dir(const char *path, unsigned *detail) {
  return ds_fmt_detect_dir_by(path, "index.npy", DS_ATLAS_DETECT_SHARD, "meta.json", detail);
}

/* shards.h ds_range_bytes_fn: the blocks that hold rows [a, b). */
static int range_bytes(void *reader, size_t shard, uint64_t first, uint64_t a,
                       uint64_t b, uint64_t *bytes, char **err) {
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

/* format.h list_shards: a bare shard's dictionary from the options. */
static int list_shards(const char *path, const ds_detected *d,
                       const ds_shards_options *o, ds_shard_listing *l, char **err) {
  atlas_reader *r;
  if (atlas_open_dict(path, o->dictionary, &r, err)) return -1;
  int rc = 0;
  l->nshards = atlas_nshards(r);
  l->total_rows = atlas_count(r);
  for (size_t i = 0; i < l->nshards && rc == 0; i++) {
    ds_shard_info si = {i, atlas_shard_path(r, i), atlas_shard_count(r, i),
                        atlas_shard_first(r, i), 1, 0, atlas_dict_path(r, i)};
    rc = ds_fmt_folder_bytes(si.path, d->detail, &si.bytes, err);
    if (rc == 0) rc = ds_shards_add(l, &si, o->split_rows, range_bytes, r, err);
  }
  atlas_close(r);
  return rc;
}

const ds_format_bytes ds_atlas_format = DS_FOLDER_FORMAT(
    "atlas", detect_dir, "index.npy or meta.json (an atlas shard or dataset)", list_shards);
