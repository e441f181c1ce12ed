/* format_table.c - the one table of formats (see format_table.h). A new
 * format is one row here (ARCHITECTURE.md "Adding a format"). The order
 * of the rows is the order of detection: a directory is tried as bcolz
 * before atlas, a file and a pattern as tfrecord (whose rules claim only
 * TFRecord files, by name or a good first header) before datadings and
 * bagz (whose pattern rules claim any glob / shard spec and fail when its
 * files are not theirs). */
#include "format_table.h"

#include "formats/atlas/atlas_format.h"
#include "formats/bagz/bagz_format.h"
#include "formats/bcolz/bcolz_format.h"
#include "formats/datadings/datadings_format.h"
#include "formats/tfrecord/tfrecord_format.h"
#include <stdlib.h>
#include <string.h>

#include "core/common.h"
#include "formats/shards.h"
#include "vtab/atlas_options.h"
#include "vtab/bagz_options.h"
#include "vtab/dataset.h"
#include "vtab/module_options.h"
#include "vtab/modules.h"
#include "vtab/table.h"

/* bagz: the listing options (limits=, layout=, dictionary=) of a bag. */
static int bagz_listing_options(const ds_options *o, ds_shards_options *so, char **err) {
  bagz_read_opts v = {0};
  if (ds_opt_read((const ds_opt_group[]){{bagz_read_specs, 0}, {0}}, o, &v, err)) return -1;
  so->limits = (bagz_limits)v.limits;
  so->layout = (ds_layout)v.layout;
  so->limits_given = ds_opt_given(o, &bagz_read_specs[BAGZ_SPEC_LIMITS]) != NULL;
  if (v.dictionary && !(so->dictionary = strdup(v.dictionary)))
    return ds_err(err, "out of memory");
  return 0;
}

/* atlas: dictionary= (a shard folder opened alone). */
static int atlas_listing_options(const ds_options *o, ds_shards_options *so, char **err) {
  const char *dict = ds_opt_given(o, &atlas_read_specs[ATLAS_SPEC_DICTIONARY]);
  if (dict && !(so->dictionary = strdup(dict))) return ds_err(err, "out of memory");
  return 0;
}

static const ds_format_row rows[] = {
    {&ds_bcolz_format, &ds_bcolz_def, ds_bcolz_info, NULL, NULL},
    {&ds_atlas_format, &ds_atlas_def, ds_atlas_info, NULL, atlas_listing_options},
    {&ds_tfrecord_format, &ds_tfrecord_def, ds_tfrecord_info, NULL, NULL},
    {&ds_datadings_format, &ds_datadings_def, ds_datadings_info, NULL, NULL},
    {&ds_bagz_format, &ds_bagz_def, ds_bagz_info, ds_bagz_detected_options,
     bagz_listing_options},
};
#define NROWS (sizeof rows / sizeof rows[0])

const ds_format_row *ds_format_table_row(size_t i) {
  return i < NROWS ? &rows[i] : NULL;
}

const ds_format_bytes *ds_format_table_bytes(size_t i) {
  return i < NROWS ? rows[i].bytes : NULL;
}

const ds_format_row *ds_format_table_find(const ds_detected *d) {
  for (size_t i = 0; i < NROWS; i++)
    if (rows[i].bytes == d->format) return &rows[i];
  return NULL;
}

int ds_format_detect(const char *path, ds_detected *d, const ds_format_row **row,
                     char **err) {
  if (ds_detect(path, ds_format_table_bytes, d, err)) return -1;
  *row = ds_format_table_find(d);
  return 0;
}

const ds_format_row *ds_format_table_placeholder(void) {
  ds_detected bagz = {&ds_bagz_format, 0};
  return ds_format_table_find(&bagz);
}

const ds_table_def *ds_format_table_def(const ds_format_row *row) {
  return row ? row->def : NULL;
}

const ds_opt_group *ds_format_option_groups(const ds_format_row *row) {
  const ds_table_def *def = ds_format_table_def(row);
  return def ? def->ops->options : NULL;
}

int ds_format_table_register(sqlite3 *db) {
  int rc = SQLITE_OK;
  for (size_t i = 0; i < NROWS && rc == SQLITE_OK; i++) rc = ds_table_register(db, rows[i].def);
  return rc;
}
