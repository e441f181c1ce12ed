/* datadings_options.c - the spec tables of the datadings module's options
 * (see datadings_options.h): infer= and columns=, and the list of every
 * group. */
#include "vtab/datadings_options.h"

#include <stddef.h>
#include <stdint.h>

#include "vtab/dataset.h"
#include "vtab/infer_options.h"

static const ds_opt_spec dd_specs[] = {
    DS_INFER_COLUMNS_SPECS(dd_opts, "samples", "sample"),
    {0}};
DS_WRITING_MODULE_OPTIONS(ds_datadings_option_groups, dd_opts, dd_specs, datadings_write_specs);
