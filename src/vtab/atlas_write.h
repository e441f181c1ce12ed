/* atlas_write.h - the writing side of the atlas CREATE form
 * (mode=create or replace): options to an atlas writer in a staged
 * directory, and the table's INSERT rows to examples. */
#ifndef DS_ATLAS_TABLE_WRITE_H
#define DS_ATLAS_TABLE_WRITE_H

#include "core/option_spec.h"
#include "core/options.h"
#include "core/schema.h"
#include "sql/sqlite_api.h"
#include "vtab/atlas_options.h"
#include "vtab/table_writer.h"

/* Open the writer of a CREATE-form table on directory `path` (mode 1
 * create, 2 replace) with the bound writer options v and threads=. */
int atlas_table_write_open(const char *path, const ds_options *o, const atlas_write_opts *v,
                           int64_t threads, int mode, ds_table_writer **out, char **err);

/* One INSERT row: `example` (JSON text) when not NULL is the example;
 * else, with columns (dict = 1), a dict {field: value} of the non-NULL
 * columns, or (dict = 0) the single column's value. */
int atlas_table_write_row(ds_table_writer *tw, const ds_schema *s, int dict,
                          sqlite3_value **cols, sqlite3_value *example,
                          uint64_t row, char **err);

#endif
