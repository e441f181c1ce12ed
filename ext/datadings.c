/* ext/datadings.c - entry point of build/datadings.so: the datadings and
 * datadings_verify modules and the npy_*
 * functions. Load with `.load build/datadings`. */
#include <sqlite3ext.h>
SQLITE_EXTENSION_INIT1

#include "sql/ext_common.h"
#include "vtab/module_help.h"
#include "vtab/modules.h"

/* What datasets_help() lists: this library's modules, functions and the
 * codec libraries it links. */
static const ds_help_entry *const help_parts[] = {ds_help_common, ds_datadings_help, NULL};
static const ds_lib_version help_versions[] = {DS_LIB_MSGPACK, DS_LIB_ISAL, {NULL, NULL}};
static const ds_help_library help_library = {"datadings", help_parts, help_versions};

DS_EXT_EXPORT
int sqlite3_datadings_init(sqlite3 *db, char **pzErrMsg,
                      const sqlite3_api_routines *pApi) {
  (void)pzErrMsg;
  SQLITE_EXTENSION_INIT2(pApi);
  int rc = ds_ext_register_common(db, &help_library);
  if (rc == SQLITE_OK) rc = ds_table_register(db, &ds_datadings_def);
  return rc;
}
