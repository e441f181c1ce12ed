/* bcolz_options.h - the options of the bcolz module, bound once per table
 * (core/option_spec.h): the reader's (bcolz_options.c), the writer's
 * (bcolz_write.c), mode= and the options every module takes. One struct,
 * one spec table per part, as bagz_options.h. */
#ifndef DS_BCOLZ_OPTIONS_H
#define DS_BCOLZ_OPTIONS_H

#include <stdint.h>

#include "core/option_spec.h"
#include "core/row_window.h"

/* columns=, chunklen=, expectedlen=, cname=, clevel=, shuffle= (writer
 * form only; bcolz_write.c). */
typedef struct bcolz_write_opts {
  const char *columns;
  int64_t chunklen, expectedlen, cname, clevel, shuffle;
} bcolz_write_opts;
extern const ds_opt_spec bcolz_write_specs[];

/* The module's options, bound once (TEXT values valid while the table
 * is created). */
typedef struct bz_opts {
  int64_t bytes;     /* 1: blob */
  int64_t cache_mb;
  bcolz_write_opts write;
  int64_t mode;
  ds_common_opts common;
  ds_row_window_opts window;
} bz_opts;

/* Every option of the bcolz module (bcolz_options.c). */
extern const ds_opt_group ds_bcolz_option_groups[];

#endif
