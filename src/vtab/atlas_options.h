/* atlas_options.h - the options of the atlas module, bound once per table
 * (core/option_spec.h): the reader's (atlas_options.c), the writer's
 * (atlas_write.c), mode= and the options every module takes. One struct,
 * one spec table per part, as bagz_options.h. */
#ifndef DS_ATLAS_OPTIONS_H
#define DS_ATLAS_OPTIONS_H

#include <stdint.h>

#include "core/option_spec.h"
#include "core/row_window.h"

/* block_size=, strategy=, level=, dict_size=, shard_size= (writer form
 * only; atlas_write.c). */
typedef struct atlas_write_opts {
  int64_t block_size, strategy, level, shard_size;
  double dict_size;
} atlas_write_opts;
extern const ds_opt_spec atlas_write_specs[];

/* The module's options, bound once (TEXT values valid while the table
 * is created). */
typedef struct at_opts {
  int64_t infer;           /* CREATE form: examples read to infer the columns */
  const char *columns;     /* CREATE form: the columns given instead */
  int64_t unsupported;     /* 1: placeholder */
  int64_t cache_mb, threads;
  const char *dictionary;
  atlas_write_opts write;
  int64_t mode;
  ds_common_opts common;
  ds_row_window_opts window;
} at_opts;

/* The reading options of the atlas module (atlas_options.c);
 * atlas_read_specs[ATLAS_SPEC_DICTIONARY] is dictionary= (dataset_shards
 * passes it on). */
extern const ds_opt_spec atlas_read_specs[];
enum { ATLAS_SPEC_DICTIONARY = 5 };
/* Every option of the atlas module (atlas_options.c). */
extern const ds_opt_group ds_atlas_option_groups[];

#endif
