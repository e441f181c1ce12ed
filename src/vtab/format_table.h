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

#include "core/options.h"
#include "formats/detect.h"
#include "sql/sqlite_api.h"

struct ds_info;

typedef struct ds_format_row {
  const ds_format_bytes *bytes;
  /* The format's main module and, in *aux, the client data it was
   * registered with (the `dataset` module forwards to it). */
  const sqlite3_module *(*module)(void **aux);
  /* Registers the format's modules and functions (ext/datasets.c). */
  int (*register_fn)(sqlite3 *db);
  /* dataset_info's rows after the common ones (vtab/info_rows.h). */
  int (*info)(struct ds_info *l, const char *path, const ds_detected *d,
              const ds_options *o, char **err);
  /* The options dataset_shards accepts for it (split_rows and its
   * module's CREATE options), NULL-terminated. */
  const char *const *shard_options;
  /* An option the `dataset` module adds for what detection found, unless
   * the arguments name it (bagz: limits=separate), or NULL; *name gets
   * its name. NULL: none. */
  const char *(*detected_option)(const ds_detected *d, const char **name);
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
/* Register every format's modules (ext/datasets.c). */
int ds_format_table_register(sqlite3 *db);

#endif
