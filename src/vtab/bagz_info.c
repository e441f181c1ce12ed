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
#include "vtab/dataset.h"
#include "vtab/info_rows.h"
#include "vtab/module_options.h"
#include "vtab/bagz_options.h"
#include "vtab/modules.h"

/* The format table's info: the rows of a bag (one file or a shard spec). */
int ds_bagz_info(ds_info *l, const ds_dataset *ds, char **err) {
  (void)err;
  bagz_reader *r = ds_bagz_reader_of(ds);
  /* limits and layout as the options that opened it name them */
  const ds_opt_spec *lim = &bagz_read_specs[BAGZ_SPEC_LIMITS];
  const ds_opt_spec *lay = &bagz_read_specs[BAGZ_SPEC_LAYOUT];
  size_t zstd = 0, k = bagz_nshards(r);
  json_t *files = json_array(), *sizes = json_array();
  for (size_t i = 0; i < k; i++) {
    zstd += bagz_shard_zstd(r, i) != 0;
    json_array_append_new(files, json_string(bagz_shard_path(r, i)));
    json_array_append_new(sizes, ds_info_int(bagz_shard_count(r, i)));
  }
  const char *cname = zstd == k ? "zstd" : zstd == 0 ? "none" : "mixed";
  ds_info_common(l, "bagz", bagz_count(r), k, json_string(cname));
  ds_info_put(l, "limits", json_string(lim->names[r->opts.limits]));
  ds_info_put(l, "layout", json_string(lay->names[r->opts.layout]));
  ds_info_put(l, "shard_rows", sizes);
  ds_info_put(l, "files", files);
  return 0;
}
