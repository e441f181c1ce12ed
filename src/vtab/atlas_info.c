/* atlas_info.c - the rows dataset_info(path) gives for a atlas dataset after
 * the common ones (README "dataset_info"), from the reader's public API;
 * reached through the format table (vtab/format_table.c). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/common.h"
#include "core/options.h"
#include "formats/atlas/atlas.h"
#include "formats/detect.h"
#include "vtab/dataset.h"
#include "vtab/info_rows.h"
#include "vtab/module_options.h"
#include "vtab/modules.h"

static const char *atlas_strategy_name(int s) {
  switch (s) {
  case ATLAS_NO_COMPRESSION: return "none";
  case ATLAS_STANDARD_COMPRESSION: return "zstd";
  case ATLAS_SHARED_DICTIONARY: return "zstd, shared dictionary";
  case ATLAS_SHARD_DICTIONARY: return "zstd, per-shard dictionaries";
  }
  return "unknown";
}

/* The format table's info: the rows of an atlas dataset or shard folder. */
int ds_atlas_info(ds_info *l, const ds_dataset *ds, char **err) {
  (void)err;
  atlas_reader *r = ds_atlas_reader_of(ds);
  size_t n = atlas_nshards(r);
  int strategy = atlas_root_strategy(r);
  if (strategy < 0) strategy = n ? atlas_shard_strategy(r, 0) : 0;
  json_t *strat = json_array(), *bsize = json_array(), *level = json_array(),
         *dtype = json_array(), *dirs = json_array(), *sizes = json_array(),
         *dicts = json_array();
  for (size_t s = 0; s < n; s++) {
    json_array_append_new(strat, json_integer(atlas_shard_strategy(r, s)));
    json_array_append_new(bsize, ds_info_int(atlas_block_size(r, s)));
    json_array_append_new(level, json_integer(atlas_shard_meta(r, s)->compression_level));
    json_array_append_new(dtype, json_string(atlas_index_dtype(r, s)));
    json_array_append_new(dirs, json_string(atlas_shard_name(r, s)));
    json_array_append_new(sizes, ds_info_int(atlas_shard_count(r, s)));
    const char *dp = atlas_dict_path(r, s);
    if (!dp) continue;
    json_t *entry = NULL; /* one entry per dictionary file */
    for (size_t k = 0; k < json_array_size(dicts) && !entry; k++) {
      json_t *e = json_array_get(dicts, k);
      if (strcmp(json_string_value(json_object_get(e, "file")), dp) == 0) entry = e;
    }
    if (!entry) {
      entry = json_pack("{s:s, s:I, s:[]}", "file", dp, "dict_id",
                        (json_int_t)atlas_dict_id(r, s), "shards");
      json_array_append_new(dicts, entry);
    }
    json_array_append_new(json_object_get(entry, "shards"), ds_info_int(s));
  }
  ds_info_common(l, "atlas", atlas_count(r), n, json_string(atlas_strategy_name(strategy)));
  ds_info_put(l, "kind", json_string(atlas_is_bare_shard(r) ? "shard" : "dataset"));
  ds_info_put(l, "strategy", json_integer(strategy));
  ds_info_put(l, "shard_strategy", ds_info_uniform(strat));
  ds_info_put(l, "block_size", ds_info_uniform(bsize));
  ds_info_put(l, "compression_level", ds_info_uniform(level));
  ds_info_put(l, "dictionaries", dicts);
  ds_info_put(l, "index_dtype", ds_info_uniform(dtype));
  ds_info_put(l, "shard_rows", sizes);
  ds_info_put(l, "shard_dirs", dirs);
  return 0;
}
