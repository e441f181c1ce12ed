/* record_module.h - what the modules whose rows are records (bagz,
 * tfrecord) share: the table's columns (record, shard, shard_index, and
 * the HIDDEN arguments of the table-valued form; with records=tfexample
 * the feature columns first: vtab/tfexample_columns.h), the writer of the
 * CREATE form (a sharded_writer, formats/sharded_writer.h, in SQLite's
 * transactions) and its INSERT: one row, one record. The module gives
 * its options, its writer's opening and its records (ds_record_module). */
#ifndef DS_RECORD_MODULE_H
#define DS_RECORD_MODULE_H

#include <stddef.h>

#include "core/options.h"
#include "sql/sqlite_api.h"
#include "vtab/table.h"
#include "vtab/record_options.h"
#include "vtab/table_writer.h"
#include "vtab/tfexample_columns.h"

/* Columns after the feature columns of records=tfexample (none otherwise). */
enum { DS_REC_COL_RECORD, DS_REC_COL_SHARD, DS_REC_COL_SHARD_INDEX, DS_REC_COL_PATH,
       DS_REC_COL_OPTIONS };

/* The start of a record module's table struct (ds_writable_table layout). */
typedef struct ds_record_table {
  ds_table base;
  ds_table_writer *writer; /* mode=create|replace (table_writer.h) */
  ds_tfex_columns tfex;    /* records=tfexample: the feature columns */
  int nfeat;               /* feature columns before DS_REC_COL_RECORD (0 without) */
} ds_record_table;

/* The start of a record module's cursor struct. */
typedef struct ds_record_cursor {
  ds_cursor base;
  size_t shard;             /* the current row's shard, and its index there */
  uint64_t shard_index;
  ds_tfex_columns_row tfex; /* records=tfexample: the decoded record */
} ds_record_cursor;

typedef struct ds_record_module {
  size_t opts_at; /* where the module's dataset keeps its bound options */
  size_t rec_at;  /* where those keep the shared ones (ds_record_opts) */
  /* The writer of a CREATE-form table on path (mode 1 create, 2 replace),
   * opts the dataset's bound options. */
  int (*write_open)(const char *path, const ds_options *o, const void *opts, int mode,
                    ds_table_writer **out, char **err);
  /* The dataset's records, for inferring the feature columns; closed
   * after (ctx: the module's). */
  int (*source_open)(ds_dataset *d, ds_record_source *src, void **ctx, char **err);
  void (*source_close)(ds_dataset *d, void *ctx);
  /* The cursor's current record (*p valid until the next call), and the
   * file it is in (errors name it). */
  int (*record)(ds_cursor *c, const uint8_t **p, size_t *n, char **err);
  const char *(*file)(ds_cursor *c);
} ds_record_module;

/* ds_dataset_ops.open's first part in a record module: d->ops->options
 * bound into the dataset's options, and records=tfexample's checked for
 * the form (tvf: table-valued); errors name the path. */
int ds_record_bind(ds_dataset *d, const ds_record_module *m, const char *path,
                   const ds_options *o, int tvf, char **err);
/* The shared options a record module's dataset bound. */
const ds_record_opts *ds_record_opts_of(const ds_dataset *d, const ds_record_module *m);

/* ds_table_def.declare of a record module (its def's `module` is its
 * ds_record_module): the writer (CREATE form with mode=), then the columns. */
int ds_record_declare(ds_table *t, const ds_options *o, char **err);
/* ds_table_def.table_free of a record module (or its first part): the
 * writer and the feature columns. */
void ds_record_table_free(ds_table *t);
/* ds_table_def.update of a record module: one INSERT row. Its record is
 * the record column or, with records=tfexample, the Example its feature
 * columns make (ds_tfex_columns_encode_row). */
int ds_record_update(ds_table *t, int argc, sqlite3_value **argv, sqlite3_int64 *rowid,
                     char **err);

/* The record p[0..n) as the value of c's record column (SQLITE_TRANSIENT
 * in scans; a one-row statement's a malloc'd copy). */
void ds_record_result(sqlite3_context *ctx, const ds_cursor *c, const uint8_t *p, size_t n);

/* xColumn of a record module: the argument columns, the feature columns
 * (the record decoded once a row, on the first feature a query reads),
 * the record, the shard (ds_cursor_shard) and the index in it. */
int ds_record_column(sqlite3_vtab_cursor *cur, sqlite3_context *ctx, int col);

/* The format writer's steps of a sharded_writer, for writer_txn / table_writer. */
extern const ds_table_writer_fmt *const ds_sharded_writer_fmt;

#endif
