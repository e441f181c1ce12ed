/* bagz_options.h - the options of the bagz module, bound once per table
 * (core/option_spec.h): the reader's (bagz_vtab.c), those of
 * records=tfexample (tfexample_columns.c), the writer's (bagz_write.c), mode= and
 * the options every module takes. One struct, one spec table per part. */
#ifndef DS_BAGZ_OPTIONS_H
#define DS_BAGZ_OPTIONS_H

#include <stdint.h>

#include "core/option_spec.h"
#include "vtab/record_options.h"

/* compression=, limits=, layout=, dictionary= (bagz_vtab.c) */
typedef struct bagz_read_opts {
  int64_t compression, limits, layout;
  const char *dictionary;
} bagz_read_opts;
extern const ds_opt_spec bagz_read_specs[];
/* Where limits= and layout= are in bagz_read_specs (their names in
 * bagz_limits and ds_layout order). */
enum { BAGZ_SPEC_LIMITS = 1, BAGZ_SPEC_LAYOUT = 2 };
/* threads= (bagz_vtab.c): its default is 2 for reading, 1 for writing, so
 * the writer asks whether it was given (ds_opt_given). */
extern const ds_opt_spec bagz_threads_specs[];


/* level= and rows_per_shard= (bagz_write.c): rec.write */
extern const ds_opt_spec bagz_write_specs[];

typedef struct bagz_opts {
  bagz_read_opts read;
  int64_t threads;
  ds_record_opts rec; /* records=tfexample, mode=, the writer's, every module's */
} bagz_opts;

/* Every option of the bagz module (bagz_vtab.c). */
extern const ds_opt_group ds_bagz_option_groups[];

#endif
