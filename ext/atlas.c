/* ext/atlas.c - entry point of build/atlas.so: the atlas module
 * and the npy_*
 * functions. Load with `.load build/atlas`. */
#include <sqlite3ext.h>
SQLITE_EXTENSION_INIT1

#include "sql/npy_sql.h"
#include "sql/version_sql.h"
#include "vtab/modules.h"

#ifdef _WIN32
__declspec(dllexport)
#else
__attribute__((visibility("default")))
#endif
int sqlite3_atlas_init(sqlite3 *db, char **pzErrMsg,
                      const sqlite3_api_routines *pApi) {
  (void)pzErrMsg;
  SQLITE_EXTENSION_INIT2(pApi);
  int rc = ds_npy_register_functions(db);
  if (rc == SQLITE_OK) rc = ds_version_register(db);
  if (rc == SQLITE_OK) rc = ds_atlas_register(db);
  return rc;
}
