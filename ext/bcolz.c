/* ext/bcolz.c - entry point of build/bcolz.so: the bcolz, bcolz_attrs and
 * bcolz_stats modules
 * and the npy_*
 * functions. Load with `.load build/bcolz`. */
#include <sqlite3ext.h>
SQLITE_EXTENSION_INIT1

#include "sql/ext_common.h"
#include "vtab/module_help.h"
#include "vtab/modules.h"

/* What datasets_help() lists: this library's modules, functions and the
 * codec libraries it links. */
static const ds_help_entry *const help_parts[] = {ds_help_common, ds_bcolz_help, NULL};
static const ds_lib_version help_versions[] = {DS_LIB_BLOSC, DS_LIB_ISAL, {NULL, NULL}};
static const ds_help_library help_library = {"bcolz", help_parts, help_versions};

DS_EXT_EXPORT
int sqlite3_bcolz_init(sqlite3 *db, char **pzErrMsg,
                      const sqlite3_api_routines *pApi) {
  (void)pzErrMsg;
  SQLITE_EXTENSION_INIT2(pApi);
  int rc = ds_ext_register_common(db, &help_library);
  if (rc == SQLITE_OK) rc = ds_table_register(db, &ds_bcolz_def);
  return rc;
}
