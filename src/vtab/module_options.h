/* module_options.h - every option of each format's module (its groups of
 * specs, core/option_spec.h), for what takes a format's options without
 * being its module: dataset_info and dataset_shards. */
#ifndef DS_MODULE_OPTIONS_H
#define DS_MODULE_OPTIONS_H

#include "core/option_spec.h"
#include "formats/atlas/atlas.h"
#include "formats/bagz/bagz.h"
#include "formats/bcolz/bcolz.h"
#include "formats/datadings/datadings.h"
#include "formats/detect.h"
#include "vtab/dataset.h"
#include "vtab/table.h"

/* The table def of format f's module (dataset_module.c; NULL: none). */
const ds_table_def *ds_format_table_def(ds_format f);
/* The option groups of format f's module (NULL: none). */
const ds_opt_group *ds_format_option_groups(ds_format f);

/* The reader of a dataset each module opened (what dataset_info reads its
 * facts from: the dataset is opened once). NULL for a writer's table. */
bagz_reader *ds_bagz_reader_of(const ds_dataset *d);
datadings_reader *ds_datadings_reader_of(const ds_dataset *d);
atlas_reader *ds_atlas_reader_of(const ds_dataset *d);
bcolz_table *ds_bcolz_table_of(const ds_dataset *d);
/* bagz: the options detection adds (limits=separate for a bag whose
 * limits are in a separate file), unless given. 0, or -1 with *err. */
int ds_bagz_detected_options(const ds_detected *d, ds_options *o, char **err);

#endif
