/* ext/datasets.c - entry point of build/datasets.so: every module and
 * function of sqlite-datasets (every format of vtab/format_table.c), with
 * dataset_info, dataset_shards and the
 * `dataset` module that only this library has. Load with `.load build/datasets`. */
#include <sqlite3ext.h>
SQLITE_EXTENSION_INIT1

#include "sql/ext_common.h"
#include "vtab/format_table.h"
#include "vtab/module_help.h"
#include "vtab/modules.h"
#include "vtab/tfexample_sql.h"

/* What datasets_help() lists: this library's modules, functions and the
 * codec libraries it links. */
static const ds_help_entry *const help_parts[] = {ds_help_common, ds_bagz_help, ds_tfexample_help, ds_datadings_help, ds_atlas_help, ds_bcolz_help, ds_tfrecord_help, ds_dataset_help, NULL};
static const ds_lib_version help_versions[] = {DS_LIB_ZSTD, DS_LIB_BLOSC, DS_LIB_MSGPACK, DS_LIB_PROTOBUF_C, DS_LIB_ISAL, {NULL, NULL}};
static const ds_help_library help_library = {"datasets", help_parts, help_versions};

DS_EXT_EXPORT
int sqlite3_datasets_init(sqlite3 *db, char **pzErrMsg,
                          const sqlite3_api_routines *pApi) {
  (void)pzErrMsg;
  SQLITE_EXTENSION_INIT2(pApi);
  int rc = ds_ext_register_common(db, &help_library);
  if (rc == SQLITE_OK) rc = ds_format_table_register(db);
  if (rc == SQLITE_OK) rc = ds_tfexample_register_functions(db);
  if (rc == SQLITE_OK) rc = ds_dataset_info_register(db);
  if (rc == SQLITE_OK) rc = ds_dataset_module_register(db);
  if (rc == SQLITE_OK) rc = ds_dataset_shards_register(db);
  return rc;
}
