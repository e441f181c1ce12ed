/* bagz_write.h - the writing side of the bagz CREATE form (mode=create or
 * replace): options to a bagz_writer, and the table's xUpdate. */
#ifndef DS_BAGZ_WRITE_H
#define DS_BAGZ_WRITE_H

#include "core/options.h"
#include "vtab/table.h"
#include "vtab/table_writer.h"

/* The options only a writer takes (a reading table refuses them). */
extern const char *const bagz_write_options[];

/* Open the writer of a CREATE-form table on `path` (mode 1 create, 2
 * replace), with level=, dictionary=, limits=, compression=,
 * rows_per_shard=, threads=. */
int bagz_write_open(const char *path, const ds_options *o, int mode,
                    ds_table_writer **out, char **err);

/* The hooks of the bagz module's def.write. */
extern const ds_table_write_ops bagz_write_ops;

#endif
