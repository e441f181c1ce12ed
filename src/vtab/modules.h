/* modules.h - each format's module as the def its vtab/<fmt>_vtab.c
 * exports (vtab/table.h: hooks, sqlite3_module, other modules), which the
 * thin entry files in ext/ and the format table register with
 * ds_table_register (vtab/table_writer.h), and its dataset_info rows. */
#ifndef DS_MODULES_H
#define DS_MODULES_H

#include "core/options.h"
#include "formats/detect.h"
#include "sql/sqlite_api.h"
#include "vtab/table_writer.h"

struct ds_info;
struct ds_dataset;

/* The main module of each format (def->methods, registered with the def
 * as aux: dataset's forwarding uses both); datadings' registers
 * datadings_verify too, bcolz's bcolz_attrs, bcolz_stats, bcolz_decoded. */
extern const ds_table_def ds_bagz_def;
extern const ds_table_def ds_datadings_def;
extern const ds_table_def ds_atlas_def;
extern const ds_table_def ds_bcolz_def;
extern const ds_table_def ds_tfrecord_def;
/* dataset_info's rows of each format after the common ones
 * (vtab/<fmt>_info.c, reached through vtab/format_table.c). */
int ds_bagz_info(struct ds_info *l, const struct ds_dataset *ds, char **err);
int ds_datadings_info(struct ds_info *l, const struct ds_dataset *ds, char **err);
int ds_atlas_info(struct ds_info *l, const struct ds_dataset *ds, char **err);
int ds_bcolz_info(struct ds_info *l, const struct ds_dataset *ds, char **err);
int ds_tfrecord_info(struct ds_info *l, const struct ds_dataset *ds, char **err);
/* dataset_info(path [, options]) and CREATE VIRTUAL TABLE ... USING
 * dataset(path, ...): datasets.so only */
int ds_dataset_info_register(sqlite3 *db);
int ds_dataset_module_register(sqlite3 *db);
/* dataset_shards(path [, options]): datasets.so only */
int ds_dataset_shards_register(sqlite3 *db);

#endif
