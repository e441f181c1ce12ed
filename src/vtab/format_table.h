/* format_table.h - the one table of formats: per format, its bytes-level
 * descriptor (formats/format.h: name, detection, bytes on disk, shard
 * listing) and what the SQLite layer has of it (module, registration,
 * dataset_info rows, dataset_shards' options, an option detection adds).
 * `dataset`, dataset_info, dataset_shards, detection and ext/datasets.c
 * iterate it; nothing else names the formats one by one. Only datasets.so
 * reaches it: each per-format library keeps linking its own format only. */
#ifndef DS_FORMAT_TABLE_H
#define DS_FORMAT_TABLE_H

#include <stddef.h>

#include "core/option_spec.h"
#include "core/options.h"
#include "formats/detect.h"
#include "sql/sqlite_api.h"

struct ds_info;
struct ds_dataset;
struct ds_shards_options;

typedef struct ds_format_row {
  const ds_format_bytes *bytes;
  /* The format's main module (vtab/modules.h): ds_table_register
   * registers it and the format's other modules and functions; the
   * `dataset` module forwards to def->methods, dataset_info opens through
   * it, its option specs. */
  const struct ds_table_def *def;
  /* dataset_info's rows after the common ones (vtab/info_rows.h), from the
   * dataset its module opened (vtab/<fmt>_info.c). */
  int (*info)(struct ds_info *l, const struct ds_dataset *ds, char **err);
  /* Options detection adds to o unless given (bagz: limits=separate), or
   * NULL. 0, or -1 with *err. */
  int (*detected_options)(const ds_detected *d, ds_options *o, char **err);
  /* What the format's options change in a shard listing (formats/shards.h:
   * bagz limits= and layout=, a dictionary=), or NULL. */
  int (*listing_options)(const ds_options *o, struct ds_shards_options *so, char **err);
} ds_format_row;

/* The i-th row (detection order), NULL past the end. */
const ds_format_row *ds_format_table_row(size_t i);
/* The row of a detected format. */
const ds_format_row *ds_format_table_find(const ds_detected *d);
/* The table as ds_detect's list of formats. */
const ds_format_bytes *ds_format_table_bytes(size_t i);
/* ds_detect over the table; *row gets the format's row. */
int ds_format_detect(const char *path, ds_detected *d, const ds_format_row **row,
                     char **err);
/* The module of the table that stands in for a dataset whose files are
 * gone when SQLite reconnects a table (bagz: a placeholder table that
 * DROP TABLE can drop and queries fail on). */
const ds_format_row *ds_format_table_placeholder(void);
/* The table def of a row's module (vtab/table.h) and its option groups
 * (core/option_spec.h): what dataset_info and dataset_shards take. */
const struct ds_table_def *ds_format_table_def(const ds_format_row *row);
const ds_opt_group *ds_format_option_groups(const ds_format_row *row);
/* Register every format's modules (ext/datasets.c). */
int ds_format_table_register(sqlite3 *db);

#endif
