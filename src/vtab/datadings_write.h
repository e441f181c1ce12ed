/* datadings_write.h - the writing side of the datadings CREATE form
 * (mode=create or replace): a datadings_writer in the table's
 * transactions, and one INSERT row -> one sample. */
#ifndef DS_DATADINGS_WRITE_H
#define DS_DATADINGS_WRITE_H

#include "core/option_spec.h"
#include "core/options.h"
#include "core/schema.h"
#include "sql/sqlite_api.h"
#include "vtab/datadings_options.h"
#include "vtab/table_writer.h"

/* Open the writer of a CREATE-form table on `path` (mode 1 create, 2
 * replace); `s` are the table's field columns (refused: the reserved
 * names nd and complex). */
int datadings_write_open(const char *path, const ds_options *o, int mode,
                         const ds_schema *s, ds_table_writer **out, char **err);

/* One row: vals[0] the key, vals[1..s->n] the field columns, vals[sample]
 * and vals[raw] the HIDDEN ones. check_raw: raw bytes must be one map
 * whose "key" is the key (FileWriter's rule); 0 (writer=raw): written as
 * given, as upstream's RawWriter does. `row` names the row in errors. */
int datadings_write_row(ds_table_writer *tw, const ds_schema *s,
                        sqlite3_value **vals, int sample, int raw, int check_raw,
                        uint64_t row, char **err);

#endif
