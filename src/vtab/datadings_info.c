/* datadings_info.c - the rows dataset_info(path) gives for a datadings dataset after
 * the common ones (README "dataset_info"), from the reader's public API;
 * reached through the format table (vtab/format_table.c). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/common.h"
#include "core/options.h"
#include "formats/datadings/datadings.h"
#include "formats/detect.h"
#include "vtab/dataset.h"
#include "vtab/info_rows.h"
#include "vtab/module_options.h"
#include "vtab/modules.h"

/* The format table's info: the rows of a datadings file or glob. */
int ds_datadings_info(ds_info *l, const ds_dataset *ds, char **err) {
  (void)err;
  datadings_reader *r = ds_datadings_reader_of(ds);
  size_t n = datadings_nshards(r);
  json_t *style = json_array(), *salt = json_array(), *bits = json_array(),
         *hashes = json_array(), *cap = json_array(), *rate = json_array(),
         *sizes = json_array(), *files = json_array();
  for (size_t s = 0; s < n; s++) {
    datadings_shard_facts f;
    datadings_shard_facts_get(r, s, &f);
    json_array_append_new(style, json_string(f.has_offsets ? "new" : "legacy"));
    char hex[17] = "";
    for (int i = 0; i < 8; i++) snprintf(hex + 2 * i, 3, "%02x", f.salt[i]);
    json_array_append_new(salt, f.has_key_hashes ? json_string(hex) : json_null());
    json_array_append_new(bits, f.has_filter ? ds_info_int(f.filter_bits) : json_null());
    json_array_append_new(hashes, f.has_filter ? ds_info_int(f.filter_hashes) : json_null());
    json_array_append_new(cap, f.has_filter ? ds_info_int(f.filter_capacity) : json_null());
    json_array_append_new(rate, f.has_filter ? json_real(f.filter_fp_rate) : json_null());
    json_array_append_new(sizes, ds_info_int(datadings_shard_count(r, s)));
    json_array_append_new(files, json_string(datadings_shard_path(r, s)));
  }
  ds_info_common(l, "datadings", datadings_count(r), n, json_string("none"));
  ds_info_put(l, "index_style", ds_info_uniform(style));
  ds_info_put(l, "lookup", json_string(datadings_lookup_method(r)));
  ds_info_put(l, "salt", ds_info_uniform(salt));
  ds_info_put(l, "filter_bits", ds_info_uniform(bits));
  ds_info_put(l, "filter_hashes", ds_info_uniform(hashes));
  ds_info_put(l, "filter_capacity", ds_info_uniform(cap));
  ds_info_put(l, "filter_fp_rate", ds_info_uniform(rate));
  ds_info_put(l, "shard_rows", sizes);
  ds_info_put(l, "files", files);
  return 0;
}
