/* tfrecord_options.h - the options of the tfrecord module, bound once per
 * table (core/option_spec.h): the reader's (tfrecord_vtab.c), those of
 * records=tfexample (tfexample_columns.c), the writer's (tfrecord_write.c),
 * mode= and the options every module takes. One struct, one spec table per
 * part, as bagz_options.h. */
#ifndef DS_TFRECORD_OPTIONS_H
#define DS_TFRECORD_OPTIONS_H

#include <stdint.h>

#include "core/option_spec.h"
#include "vtab/record_options.h"

/* compression=auto|none|gzip|zlib (tfrecord_compression order), verify=,
 * idx=, threads= (tfrecord_vtab.c) */
typedef struct tfr_read_opts {
  int64_t compression, verify, idx, threads;
} tfr_read_opts;
extern const ds_opt_spec tfr_read_specs[];

/* level= and rows_per_shard= (tfrecord_write.c): rec.write */
extern const ds_opt_spec tfr_write_specs[];

typedef struct tfr_opts {
  tfr_read_opts read;
  ds_record_opts rec; /* records=tfexample, mode=, the writer's, every module's */
} tfr_opts;

/* Every option of the tfrecord module (tfrecord_vtab.c). */
extern const ds_opt_group ds_tfrecord_option_groups[];

#endif
