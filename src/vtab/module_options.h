/* module_options.h - what the format table (vtab/format_table.c) and the
 * formats' dataset_info rows (vtab/<fmt>_info.c) reach of each module:
 * the reader of a dataset it opened, and the options detection adds. */
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
