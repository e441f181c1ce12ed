/* tfrecord_options.h - the options of the tfrecord module, bound once per
 * table (core/option_spec.h): the reader's (tfrecord_vtab.c), those of
 * records=tfexample (tfexample_columns.c), the writer's (tfrecord_write.c),
 * mode= and the options every module takes. One struct, one spec table per
 * part, as bagz_options.h. */
#ifndef DS_TFRECORD_OPTIONS_H
#define DS_TFRECORD_OPTIONS_H

#include <stdint.h>

#include "core/option_spec.h"
#include "core/row_window.h"
#include "vtab/tfexample_columns.h"

/* compression=auto|none|gzip|zlib (tfrecord_compression order), verify=,
 * idx= (tfrecord_vtab.c) */
typedef struct tfr_read_opts {
  int64_t compression, verify, idx;
} tfr_read_opts;
extern const ds_opt_spec tfr_read_specs[];

/* level=, rows_per_shard= (tfrecord_write.c) */
typedef struct tfr_write_opts {
  int64_t level, rows_per_shard;
} tfr_write_opts;
extern const ds_opt_spec tfr_write_specs[];

typedef struct tfr_opts {
  tfr_read_opts read;
  ds_tfex_columns_opts tfex; /* records=tfexample (vtab/tfexample_columns.h) */
  int64_t mode;              /* vtab/table_writer.h: 0 read, 1 create, 2 replace */
  tfr_write_opts write;
  ds_common_opts common;
  ds_row_window_opts window;
} tfr_opts;

/* Every option of the tfrecord module (tfrecord_vtab.c). */
extern const ds_opt_group ds_tfrecord_option_groups[];

#endif
