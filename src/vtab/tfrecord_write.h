/* tfrecord_write.h - the writing side of the tfrecord CREATE form
 * (mode=create or replace): options to a tfrecord_staged writer, and the
 * table's xUpdate. */
#ifndef DS_TFRECORD_WRITE_H
#define DS_TFRECORD_WRITE_H

#include "core/options.h"
#include "vtab/table.h"
#include "vtab/table_writer.h"
#include "vtab/tfexample_columns.h"
#include "vtab/tfrecord_options.h"

/* Open the writer of a CREATE-form table on `path` (mode 1 create, 2
 * replace) with compression=, level=, rows_per_shard= as bound in v. */
int tfrecord_write_open(const char *path, const ds_options *o, const tfr_opts *v, int mode,
                        ds_table_writer **out, char **err);

/* xUpdate of a tfrecord writer table: one INSERT row, one record: the
 * record column (argv[2 + nfeat]) or, with records=tfexample (x not NULL),
 * the Example its nfeat feature columns make (ds_tfex_columns_encode_row). */
int tfrecord_write_row(ds_table *t, int argc, sqlite3_value **argv, ds_tfex_columns *x,
                       int nfeat, sqlite3_int64 *rowid, char **err);

#endif
