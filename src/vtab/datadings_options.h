/* datadings_options.h - the options of the datadings module, bound once
 * per table (core/option_spec.h): the CREATE form's (datadings_options.c),
 * the writer's (datadings_write.c), mode= and the options every module
 * takes. One struct, one spec table per part, as bagz_options.h. */
#ifndef DS_DATADINGS_OPTIONS_H
#define DS_DATADINGS_OPTIONS_H

#include <stdint.h>

#include "core/option_spec.h"
#include "core/row_window.h"

/* writer=file|raw (writer form only). */
typedef struct datadings_write_opts {
  int64_t writer; /* 1: raw */
} datadings_write_opts;
extern const ds_opt_spec datadings_write_specs[];

/* The module's options, bound once (TEXT values valid while the table
 * is created). */
typedef struct dd_opts {
  int64_t infer;       /* CREATE form: samples read to infer the columns */
  const char *columns; /* CREATE form: the columns given instead */
  datadings_write_opts write;
  int64_t mode;
  ds_common_opts common;
  ds_row_window_opts window;
} dd_opts;

/* Every option of the datadings module (datadings_options.c). */
extern const ds_opt_group ds_datadings_option_groups[];

#endif
