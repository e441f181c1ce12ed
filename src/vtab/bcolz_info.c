/* bcolz_info.c - the rows dataset_info(path) gives for a bcolz dataset after
 * the common ones (README "dataset_info"), from the reader's public API;
 * reached through the format table (vtab/format_table.c). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/common.h"
#include "core/options.h"
#include "formats/bcolz/bcolz.h"
#include "formats/bcolz/bcolz_meta.h"
#include "formats/detect.h"
#include "vtab/dataset.h"
#include "vtab/info_rows.h"
#include "vtab/module_options.h"
#include "vtab/modules.h"

/* The format table's info: the rows of a bcolz ctable or carray. */
int ds_bcolz_info(ds_info *l, const ds_dataset *ds, char **err) {
  bcolz_table *t = ds_bcolz_table_of(ds);
  json_t *chunklen = json_object(), *dtypes = json_object(),
         *cparams = json_object(), *col_attrs = json_object();
  json_t *cnames = json_array();
  int rc = 0;
  for (size_t c = 0; c < bcolz_ncols(t) && rc == 0; c++) {
    const char *name = bcolz_is_ctable(t) ? bcolz_col_name(t, c) : "value";
    bcolz_cparams cp;
    if ((rc = bcolz_col_cparams(t, c, &cp, err))) break;
    json_object_set_new(chunklen, name, ds_info_int(bcolz_col_chunklen(t, c)));
    json_object_set_new(dtypes, name, json_string(bcolz_col_dtype(t, c)->str));
    json_object_set_new(col_attrs, name, ds_info_parse_json(bcolz_col_attrs_json(t, c)));
    const char *codec, *shuffle;
    int memcpyed;
    bcolz_blosc_flags(cp.flags, &codec, &shuffle, &memcpyed);
    json_t *blosc = cp.has_chunk
        ? json_pack("{s:s, s:s, s:b, s:i}", "codec", codec, "shuffle", shuffle,
                    "memcpyed", memcpyed, "typesize", (int)cp.typesize)
        : json_null();
    json_object_set_new(cparams, name,
                        json_pack("{s:s, s:i, s:i, s:i, s:o}", "cname", cp.cname,
                                  "clevel", cp.clevel, "shuffle", cp.shuffle,
                                  "quantize", cp.quantize, "blosc", blosc));
    int seen = 0; /* distinct codec names, in column order */
    for (size_t k = 0; k < json_array_size(cnames) && !seen; k++)
      seen = strcmp(json_string_value(json_array_get(cnames, k)), cp.cname) == 0;
    if (!seen) json_array_append_new(cnames, json_string(cp.cname));
  }
  if (rc == 0) {
    ds_buf comp = {0};
    ds_buf_puts(&comp, "blosc:");
    for (size_t k = 0; k < json_array_size(cnames); k++)
      ds_buf_printf(&comp, "%s%s", k ? "," : "", json_string_value(json_array_get(cnames, k)));
    ds_buf_append(&comp, "", 1);
    ds_info_common(l, "bcolz", bcolz_nrows(t), 1, comp.data ? json_string((const char *)comp.data) : NULL);
    ds_buf_free(&comp);
    ds_info_put(l, "kind", json_string(bcolz_is_ctable(t) ? "ctable" : "carray"));
    ds_info_put(l, "chunklen", chunklen);
    ds_info_put(l, "dtypes", dtypes);
    ds_info_put(l, "cparams", cparams);
    ds_info_put(l, "attrs", ds_info_parse_json(bcolz_attrs_json(t)));
    if (bcolz_is_ctable(t)) ds_info_put(l, "column_attrs", col_attrs);
    else json_decref(col_attrs);
  } else {
    json_decref(chunklen);
    json_decref(dtypes);
    json_decref(cparams);
    json_decref(col_attrs);
  }
  json_decref(cnames);
  return rc;
}
