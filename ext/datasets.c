/* ext/datasets.c - entry point of build/datasets.so: every module and
 * function of sqlite-datasets, with dataset_info, dataset_shards and the
 * `dataset` module that only this library has. Load with `.load build/datasets`. */
#include <sqlite3ext.h>
SQLITE_EXTENSION_INIT1

#include "sql/npy_sql.h"
#include "sql/version_sql.h"
#include "vtab/modules.h"
#include "vtab/tfexample_sql.h"

#ifdef _WIN32
__declspec(dllexport)
#else
__attribute__((visibility("default")))
#endif
int sqlite3_datasets_init(sqlite3 *db, char **pzErrMsg,
                          const sqlite3_api_routines *pApi) {
  (void)pzErrMsg;
  SQLITE_EXTENSION_INIT2(pApi);
  int rc = ds_npy_register_functions(db);
  if (rc == SQLITE_OK) rc = ds_version_register(db);
  if (rc == SQLITE_OK) rc = ds_bagz_register(db);
  if (rc == SQLITE_OK) rc = ds_tfexample_register_functions(db);
  if (rc == SQLITE_OK) rc = ds_datadings_register(db);
  if (rc == SQLITE_OK) rc = ds_atlas_register(db);
  if (rc == SQLITE_OK) rc = ds_bcolz_register(db);
  if (rc == SQLITE_OK) rc = ds_tfrecord_register(db);
  if (rc == SQLITE_OK) rc = ds_dataset_info_register(db);
  if (rc == SQLITE_OK) rc = ds_dataset_module_register(db);
  if (rc == SQLITE_OK) rc = ds_dataset_shards_register(db);
  return rc;
}
