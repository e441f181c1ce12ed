/* format_table.c - the one table of formats (see format_table.h). A new
 * format is one row here (ARCHITECTURE.md "Adding a format"). The order
 * of the rows is the order of detection: a directory is tried as bcolz
 * before atlas, a file and a pattern as datadings before bagz. */
#include "format_table.h"

#include "formats/atlas/atlas_format.h"
#include "formats/bagz/bagz_format.h"
#include "formats/bcolz/bcolz_format.h"
#include "formats/datadings/datadings_format.h"
#include "vtab/tfexample_columns.h"
#include "vtab/modules.h"

/* The options dataset_shards accepts: split_rows and those each format's
 * module takes in its CREATE form (tests check them against the modules'
 * own "known options" lists). */
static const char *const bagz_known[] = {"split_rows", "compression", "limits",
                                         "layout", "dictionary", "threads",
                                         DS_TFEX_COLUMNS_OPTIONS, NULL};
static const char *const datadings_known[] = {"split_rows", "infer", "columns", NULL};
static const char *const atlas_known[] = {"split_rows", "infer", "columns", "unsupported",
                                          "cache_mb", "threads", "dictionary", NULL};
static const char *const bcolz_known[] = {"split_rows", "bytes", "cache_mb", NULL};

/* bagz: limits=separate when every file has limits.NAME beside it. */
static const char *bagz_detected_option(const ds_detected *d, const char **name) {
  *name = "limits";
  return d->detail & DS_BAGZ_DETECT_SEPARATE ? "limits=separate" : NULL;
}

static const ds_format_row rows[] = {
    {&ds_bcolz_format, ds_bcolz_module, ds_bcolz_register, ds_bcolz_info,
     bcolz_known, NULL},
    {&ds_atlas_format, ds_atlas_module, ds_atlas_register, ds_atlas_info,
     atlas_known, NULL},
    {&ds_datadings_format, ds_datadings_module, ds_datadings_register,
     ds_datadings_info, datadings_known, NULL},
    {&ds_bagz_format, ds_bagz_module, ds_bagz_register, ds_bagz_info, bagz_known,
     bagz_detected_option},
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

int ds_format_table_register(sqlite3 *db) {
  int rc = SQLITE_OK;
  for (size_t i = 0; i < NROWS && rc == SQLITE_OK; i++) rc = rows[i].register_fn(db);
  return rc;
}
