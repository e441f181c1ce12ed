/* tfrecord_info.c - the rows dataset_info(path) gives for a TFRecord
 * dataset after the common ones (README "dataset_info"): the set indexed
 * (one pass, or the .idx sidecars), its records per file, the files, and
 * the first damaged or cut record's error (NULL when every file reads to
 * its end); reached through the format table (vtab/format_table.c). */
#include <stdlib.h>
#include <string.h>

#include "core/common.h"
#include "formats/tfrecord/tfrecord.h"
#include "formats/tfrecord/tfrecord_set.h"
#include "vtab/dataset.h"
#include "vtab/info_rows.h"
#include "vtab/module_options.h"
#include "vtab/modules.h"

/* The format table's info: the rows of a set of TFRecord files. */
int ds_tfrecord_info(ds_info *l, const ds_dataset *ds, char **err) {
  tfrecord_set *s = ds_tfrecord_set_of(ds);
  if (!s) return ds_err(err, "%s: no TFRecord files open", ds->path);
  if (tfrecord_set_index(s, err)) return -1;
  uint64_t rows = 0;
  const char *damaged = NULL;
  tfrecord_compression c0 = s->n ? s->files[0].compression : TFRECORD_NONE;
  int same = 1;
  json_t *files = json_array(), *sizes = json_array();
  for (size_t i = 0; i < s->n; i++) {
    const tfrecord_file *t = &s->files[i];
    rows += t->count;
    same &= t->compression == c0;
    if (!damaged && t->tail_err) damaged = t->tail_err;
    json_array_append_new(files, json_string(t->file.path));
    json_array_append_new(sizes, ds_info_int(t->count));
  }
  ds_info_common(l, "tfrecord", rows, s->n,
                 json_string(same ? tfrecord_compression_name(c0) : "mixed"));
  ds_info_put(l, "shard_rows", sizes);
  ds_info_put(l, "files", files);
  ds_info_put(l, "damaged", damaged ? json_string(damaged) : NULL);
  return 0;
}
