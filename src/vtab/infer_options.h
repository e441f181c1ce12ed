/* infer_options.h - infer= and columns=, the spec entries of a module
 * whose CREATE form declares its columns from its first rows, or from the
 * list columns= gives (atlas, datadings). One spec of each, worded with
 * the module's name for a row; records=tfexample (tfexample_columns.c)
 * words its own for features but shares the default. */
#ifndef DS_INFER_OPTIONS_H
#define DS_INFER_OPTIONS_H

#include <stddef.h>
#include <stdint.h>

#include "core/option_spec.h"

/* Rows read to infer the columns when infer= is not given. */
#define DS_DEFAULT_INFER 100

/* The entries infer=N|all and columns= of a spec table bound into `type`
 * (fields infer, columns); rows / row name a row in the help text
 * ("examples", "example"). */
#define DS_INFER_COLUMNS_SPECS(type, rows, row)                                              \
  {.name = "infer", .forms = DS_FORMS_CREATE, .kind = DS_OPT_COUNT, .min = 0,               \
   .max = INT64_MAX, .def = DS_DEFAULT_INFER,                                                \
   .help = rows " read to infer the columns (all: every " row ")",                          \
   .at = offsetof(type, infer)},                                                             \
      {.name = "columns", .forms = DS_FORMS_CREATE, .kind = DS_OPT_TEXT,                     \
       .help = "the columns, 'name TYPE, ...' (no inference)", .at = offsetof(type, columns)}

#endif
