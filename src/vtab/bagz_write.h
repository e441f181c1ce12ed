/* bagz_write.h - the writing side of the bagz CREATE form (mode=create or
 * replace): options to a bagz_writer, and the table's xUpdate. */
#ifndef DS_BAGZ_WRITE_H
#define DS_BAGZ_WRITE_H

#include "core/options.h"
#include "vtab/bagz_options.h"
#include "vtab/tfexample_columns.h"
#include "vtab/table.h"
#include "vtab/table_writer.h"

/* Open the writer of a CREATE-form table on `path` (mode 1 create, 2
 * replace), with level=, dictionary=, limits=, compression=,
 * rows_per_shard=, threads= as bound in v (o: the options as given). */
int bagz_write_open(const char *path, const ds_options *o, const bagz_opts *v, int mode,
                    ds_table_writer **out, char **err);

/* xUpdate of a bagz writer table: one INSERT row. Its record is the
 * record column (argv[2 + nfeat]), or with records=tfexample (x not NULL)
 * the Example its nfeat feature columns (argv[2..]) make
 * (ds_tfex_columns_encode_row). */
int bagz_write_row(ds_table *t, int argc, sqlite3_value **argv, ds_tfex_columns *x,
                   int nfeat, sqlite3_int64 *rowid, char **err);

#endif
