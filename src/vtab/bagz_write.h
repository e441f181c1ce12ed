/* bagz_write.h - the writing side of the bagz CREATE form (mode=create or
 * replace): options to a bagz writer (formats/bagz/bagz_writer.h); its
 * rows go in through vtab/record_module.h. */
#ifndef DS_BAGZ_WRITE_H
#define DS_BAGZ_WRITE_H

#include "core/options.h"
#include "vtab/bagz_options.h"
#include "vtab/table_writer.h"

/* ds_record_module.write_open: the writer of a CREATE-form table on
 * `path` (mode 1 create, 2 replace), with level=, dictionary=, limits=,
 * compression=, rows_per_shard=, threads= as bound in opts (a bagz_opts;
 * o: the options as given). */
int bagz_write_open(const char *path, const ds_options *o, const void *opts, int mode,
                    ds_table_writer **out, char **err);

#endif
