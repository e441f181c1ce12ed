/* dir_table_write.h - the writing side shared by the atlas and bcolz CREATE
 * forms (directory datasets, core/staged_dir.h) on table_writer.h:
 * opening the stage and the staged directory, and SQL values as the
 * ds_values the format encoders take. */
#ifndef DS_DIR_TABLE_WRITE_H
#define DS_DIR_TABLE_WRITE_H

#include "core/options.h"
#include "core/schema.h"
#include "core/staged_dir.h"
#include "core/value.h"
#include "sql/sqlite_api.h"
#include "vtab/table_writer.h"

/* Open a writer of directory `path` (mode 1 create, 2 replace) for the
 * format `fmt` with its configuration `cfg` (owned by the writer from now
 * on, freed with free_cfg). options: the module's (those it takes only
 * in the writer form are left out of what its table reads with). */
int ds_dir_write_open(const char *path, const ds_options *o, int mode,
                      const ds_opt_group *options, const ds_dir_format *fmt,
                      void *cfg, void (*free_cfg)(void *), ds_table_writer **out,
                      char **err);

/* The staged directory of a writer from ds_dir_write_open. */
ds_staged_dir *ds_dir_write_target(ds_table_writer *tw);

/* An SQL value as a format value, allocated in `a`: JSON text (SQLite's
 * JSON subtype, or json_column) parsed, a BLOB holding a whole valid .npy
 * an NDARRAY, otherwise as ds_value_from_sql_decl with the column's
 * declared type (-1 with *err when the value does not fit it). */
int ds_dir_write_value(sqlite3_value *v, int json_column, ds_decl decl, ds_arena *a,
                       ds_value *out, char **err);
/* 1 when a column is declared JSON. */
int ds_dir_write_json_column(const ds_column *c);

#endif
