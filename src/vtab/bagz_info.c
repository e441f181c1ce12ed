/* bagz_info.c - the rows dataset_info(path) gives for a bagz dataset after
 * the common ones (README "dataset_info"), from the reader's public API;
 * reached through the format table (vtab/format_table.c). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/common.h"
#include "core/options.h"
#include "formats/bagz/bagz.h"
#include "formats/bagz/bagz_format.h"
#include "formats/bagz/bagz_shards.h"
#include "formats/detect.h"
#include "vtab/info_rows.h"
#include "vtab/modules.h"

/* The format table's info: the rows of a bag (one file or a shard spec). */
int ds_bagz_info(ds_info *l, const char *path, const ds_detected *d,
                 const ds_options *o, char **err) {
  static const char *const comp[] = {"auto", "none", "zstd", NULL};
  static const char *const lim[] = {"tail", "separate", NULL};
  static const char *const lay[] = {"concatenated", "interleaved", NULL};
  int c, li, la;
  if (ds_options_enum(o, "compression", comp, 0, &c, err) ||
      ds_options_enum(o, "limits", lim, (d->detail & DS_BAGZ_DETECT_SEPARATE) != 0, &li, err) ||
      ds_options_enum(o, "layout", lay, 0, &la, err))
    return -1;
  bagz_options bo = {(bagz_compression)c, (bagz_limits)li, (ds_layout)la,
                     ds_options_get(o, "dictionary")};
  bagz_reader *r;
  if (bagz_open(path, &bo, &r, err)) return -1;
  size_t zstd = 0, k = bagz_nshards(r);
  json_t *files = json_array(), *sizes = json_array();
  for (size_t i = 0; i < k; i++) {
    zstd += bagz_shard_zstd(r, i) != 0;
    json_array_append_new(files, json_string(bagz_shard_path(r, i)));
    json_array_append_new(sizes, ds_info_int(bagz_shard_count(r, i)));
  }
  const char *cname = zstd == k ? "zstd" : zstd == 0 ? "none" : "mixed";
  ds_info_common(l, "bagz", bagz_count(r), k, json_string(cname));
  ds_info_put(l, "limits", json_string(lim[li]));
  ds_info_put(l, "layout", json_string(lay[la]));
  ds_info_put(l, "shard_rows", sizes);
  ds_info_put(l, "files", files);
  bagz_close(r);
  return 0;
}
