/* bcolz_write.h - the writing side of the bcolz CREATE form
 * (mode=create or replace): the columns= list, options to a bcolz writer
 * in a staged directory, and the table's INSERT rows. */
#ifndef DS_BCOLZ_TABLE_WRITE_H
#define DS_BCOLZ_TABLE_WRITE_H

#include "core/option_spec.h"
#include "core/options.h"
#include "formats/bcolz/bcolz_writer.h"
#include "sql/sqlite_api.h"
#include "vtab/bcolz_options.h"
#include "vtab/table_writer.h"

/* The declared columns: columns='name type, ...' (types as
 * bcolz_write_parse_type takes them), or without columns= one column
 * `value` whose type the first row decides (`inferred` = 1). */
typedef struct bcolz_wcols {
  size_t n;
  char **names;
  bcolz_wtype *types;
  int *json;          /* the type was written JSON: object column of JSON */
  int inferred;
} bcolz_wcols;

int bcolz_wcols_parse(const char *spec, bcolz_wcols *out, char **err);
void bcolz_wcols_free(bcolz_wcols *c);

/* Open the writer of a CREATE-form table on directory `path` (mode 1
 * create, 2 replace) with the bound writer options v, the columns
 * (copied) and max_value_bytes (the largest chunk: what reads back with
 * the same option). */
int bcolz_table_write_open(const char *path, const ds_options *o, const bcolz_write_opts *v,
                           uint64_t max_value_bytes, int mode, const bcolz_wcols *cols,
                           ds_table_writer **out, char **err);

/* One INSERT row the long way (the update hook, after
 * ds_table_writer_insert's checks): vals[i] for column i. When it is in,
 * the writer's row shortcut (tw->row_fast) is made current for the next. */
int bcolz_table_write_row(ds_table_writer *tw, sqlite3_value **vals, uint64_t row,
                          char **err);
/* The bcolz module's xUpdate: an INSERT row whose values the columns take
 * as they are goes straight into the open chunks through the writer's
 * row shortcut (set by the row before); any other call, and any row the
 * shortcut does not take whole, goes to ds_table_update (the long way,
 * with its checks and errors). */
int bcolz_table_xupdate(sqlite3_vtab *vtab, int argc, sqlite3_value **argv,
                        sqlite3_int64 *rowid);

#endif
