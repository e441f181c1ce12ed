/* tfrecord_write.h - the writing side of the tfrecord CREATE form
 * (mode=create or replace): options to a tfrecord writer
 * (formats/tfrecord/tfrecord_staged.h); its rows go in through
 * vtab/record_module.h. */
#ifndef DS_TFRECORD_WRITE_H
#define DS_TFRECORD_WRITE_H

#include "core/options.h"
#include "vtab/table_writer.h"
#include "vtab/tfrecord_options.h"

/* ds_record_module.write_open: the writer of a CREATE-form table on
 * `path` (mode 1 create, 2 replace) with compression=, level=,
 * rows_per_shard= as bound in opts (a tfr_opts). */
int tfrecord_write_open(const char *path, const ds_options *o, const void *opts, int mode,
                        ds_table_writer **out, char **err);

#endif
