/* record_options.h - the options the record modules (bagz, tfrecord,
 * vtab/record_module.h) bind alike after their reader's own: those of
 * records=tfexample, mode=, the writer's level= and rows_per_shard=, and
 * the options every module takes (core/option_spec.h). Each module keeps
 * its own level= spec (the codecs' ranges differ); rows_per_shard= is one
 * spec entry for both. */
#ifndef DS_RECORD_OPTIONS_H
#define DS_RECORD_OPTIONS_H

#include <stddef.h>
#include <stdint.h>

#include "core/option_spec.h"
#include "core/row_window.h"
#include "vtab/dataset.h"
#include "vtab/tfexample_columns.h"

/* level=, rows_per_shard= (bagz_write.c, tfrecord_write.c) */
typedef struct ds_record_write_opts {
  int64_t level, rows_per_shard;
} ds_record_write_opts;

/* The rows_per_shard= entry of a record module's writer specs. */
#define DS_REC_ROWS_PER_SHARD_SPEC                                                      \
  {.name = "rows_per_shard", .forms = DS_FORM_WRITER, .kind = DS_OPT_INT, .min = 1,       \
   .max = INT64_MAX, .def = 0, .def_text = "no limit",                                   \
   .help = "rows of each shard, with a name@*.ext or name@N.ext path",                   \
   .at = offsetof(ds_record_write_opts, rows_per_shard)}

typedef struct ds_record_opts {
  ds_tfex_columns_opts tfex; /* records=tfexample (vtab/tfexample_columns.h) */
  int64_t mode;              /* vtab/table_writer.h: 0 read, 1 create, 2 replace */
  ds_record_write_opts write;
  ds_common_opts common;
  ds_row_window_opts window;
} ds_record_opts;

/* The option groups of a record module's `type` from its member `rec`
 * (a ds_record_opts) on, with the module's writer specs. */
#define DS_RECORD_OPTION_GROUPS(type, write_specs)                      \
  {ds_tfex_columns_specs, offsetof(type, rec.tfex)},                    \
      {ds_mode_specs, offsetof(type, rec.mode)},                        \
      {write_specs, offsetof(type, rec.write)},                         \
      {ds_common_option_specs, offsetof(type, rec.common)},             \
      {ds_row_window_specs, offsetof(type, rec.window)}

#endif
