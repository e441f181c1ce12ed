/* modules.h - registration functions of the virtual-table modules, called
 * by the thin entry files in ext/. Each returns an SQLite result code. */
#ifndef DS_MODULES_H
#define DS_MODULES_H

#include "core/options.h"
#include "formats/detect.h"
#include "sql/sqlite_api.h"

struct ds_info;
struct ds_dataset;

int ds_bagz_register(sqlite3 *db);
/* datadings and datadings_verify */
int ds_datadings_register(sqlite3 *db);
int ds_atlas_register(sqlite3 *db);
/* bcolz, bcolz_attrs and bcolz_stats */
int ds_bcolz_register(sqlite3 *db);

/* The main module of each format and, in *aux, the client data it was
 * registered with (dataset's forwarding uses them). */
const sqlite3_module *ds_bagz_module(void **aux);
const sqlite3_module *ds_datadings_module(void **aux);
const sqlite3_module *ds_atlas_module(void **aux);
const sqlite3_module *ds_bcolz_module(void **aux);
/* dataset_info's rows of each format after the common ones
 * (vtab/<fmt>_info.c, reached through vtab/format_table.c). */
int ds_bagz_info(struct ds_info *l, const struct ds_dataset *ds, char **err);
int ds_datadings_info(struct ds_info *l, const struct ds_dataset *ds, char **err);
int ds_atlas_info(struct ds_info *l, const struct ds_dataset *ds, char **err);
int ds_bcolz_info(struct ds_info *l, const struct ds_dataset *ds, char **err);
/* dataset_info(path [, options]) and CREATE VIRTUAL TABLE ... USING
 * dataset(path, ...): datasets.so only */
int ds_dataset_info_register(sqlite3 *db);
int ds_dataset_module_register(sqlite3 *db);
/* dataset_shards(path [, options]): datasets.so only */
int ds_dataset_shards_register(sqlite3 *db);

#endif
