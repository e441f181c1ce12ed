/* bagz_write.c - INSERT INTO a bagz CREATE-form table:
 *
 *   CREATE VIRTUAL TABLE temp.out USING bagz('clean@*.bagz', mode=create,
 *                                            level=3, rows_per_shard=100000);
 *   INSERT INTO out(record) SELECT record FROM bagz('raw@8.bagz');
 *
 * Each row's record (a BLOB, or TEXT as its UTF-8 bytes) becomes one
 * record, in insertion order; shard and shard_index are derived (values
 * given for them are ignored). Options as upstream's writer names them:
 * level (0 = zstd's default), dictionary=<file>, limits=tail|separate,
 * rows_per_shard with a name@*.ext / name@N.ext path, compression
 * (auto: zstd for .bagz names), threads=1|2. The rows and the
 * transactions are vtab/record_module.c's (records=tfexample too). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/common.h"
#include "formats/bagz/bagz_writer.h"
#include "vtab/bagz_write.h"
#include "vtab/record_module.h"

const ds_opt_spec bagz_write_specs[] = {
    {.name = "level", .forms = DS_FORM_WRITER, .kind = DS_OPT_INT, .min = -131072, .max = 22,
     .def = 0, .def_text = "0 (zstd's default, 3)", .help = "the zstd level",
     .at = offsetof(ds_record_write_opts, level)},
    DS_REC_ROWS_PER_SHARD_SPEC,
    {0}};

/* Writer options from the table's bound options (threads: 1 unless given). */
static void writer_options(const char *path, const ds_options *o, const bagz_opts *v,
                           bagz_writer_options *wo) {
  size_t n = strlen(path);
  int64_t comp = v->read.compression;
  wo->zstd = comp == 2 || (comp == 0 && n >= 5 && strcmp(path + n - 5, ".bagz") == 0);
  wo->limits = (bagz_limits)v->read.limits;
  wo->level = (int)v->rec.write.level;
  wo->rows_per_shard = (uint64_t)v->rec.write.rows_per_shard;
  wo->threads = ds_opt_given(o, bagz_threads_specs) ? (int)v->threads : 1;
  wo->dictionary_path = v->read.dictionary;
}

/* ds_table_writer_spec.open: the bag writer with the parsed options. */
static int open_writer(ds_stage *stage, const char *path, void *wo, void **w, char **err) {
  return bagz_writer_open(stage, path, wo, (sharded_writer **)w, err);
}

int bagz_write_open(const char *path, const ds_options *o, const void *opts, int mode,
                    ds_table_writer **out, char **err) {
  bagz_writer_options wo = {0};
  writer_options(path, o, opts, &wo);
  ds_table_writer_spec spec = {ds_sharded_writer_fmt, ds_bagz_option_groups, bagz_writer_target,
                               open_writer, &wo};
  return ds_table_writer_open(path, o, mode, &spec, out, err) < 0 ? -1 : 0;
}
