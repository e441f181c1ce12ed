/* tfrecord_write.c - INSERT INTO a tfrecord CREATE-form table:
 *
 *   CREATE VIRTUAL TABLE temp.o USING tfrecord('out@*.tfrecord', mode=create,
 *                                              compression=gzip, rows_per_shard=1000);
 *   INSERT INTO o(record) SELECT record FROM bagz('in@4.bagz');
 *
 * Each row's record (a BLOB, or TEXT as its bytes) becomes one record, in
 * insertion order, staged and published at COMMIT
 * (formats/tfrecord/tfrecord_staged.h). compression=auto means none;
 * level= is ISA-L's (0..3). The rows and the transactions are
 * vtab/record_module.c's (records=tfexample too), as for bagz. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/common.h"
#include "formats/tfrecord/tfrecord_staged.h"
#include "vtab/record_module.h"
#include "vtab/tfrecord_write.h"

const ds_opt_spec tfr_write_specs[] = {
    {.name = "level", .forms = DS_FORM_WRITER, .kind = DS_OPT_INT, .min = 0, .max = 3,
     .def = 1, .help = "the gzip / zlib level (ISA-L's 0..3)",
     .at = offsetof(ds_record_write_opts, level)},
    DS_REC_ROWS_PER_SHARD_SPEC,
    {0}};

/* ds_table_writer_spec.open */
static int open_writer(ds_stage *stage, const char *path, void *wo, void **w, char **err) {
  return tfrecord_staged_open(stage, path, wo, (sharded_writer **)w, err);
}

int tfrecord_write_open(const char *path, const ds_options *o, const void *opts, int mode,
                        ds_table_writer **out, char **err) {
  const tfr_opts *v = opts;
  tfrecord_staged_options wo = {.compression = (tfrecord_compression)v->read.compression,
                                .level = (int)v->rec.write.level,
                                .rows_per_shard = (uint64_t)v->rec.write.rows_per_shard};
  ds_table_writer_spec spec = {ds_sharded_writer_fmt, ds_tfrecord_option_groups, tfrecord_staged_target,
                               open_writer, &wo};
  return ds_table_writer_open(path, o, mode, &spec, out, err) < 0 ? -1 : 0;
}
