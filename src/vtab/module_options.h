/* module_options.h - every option of each format's module (its groups of
 * specs, core/option_spec.h), for what takes a format's options without
 * being its module: dataset_info and dataset_shards. */
#ifndef DS_MODULE_OPTIONS_H
#define DS_MODULE_OPTIONS_H

#include "core/option_spec.h"
#include "formats/detect.h"

/* The option groups of format f's module (NULL: none). */
const ds_opt_group *ds_format_option_groups(ds_format f);

#endif
