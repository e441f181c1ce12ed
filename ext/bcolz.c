/* ext/bcolz.c - entry point of build/bcolz.so: the bcolz, bcolz_attrs and
 * bcolz_stats modules
 * and the npy_*
 * functions. Load with `.load build/bcolz`. */
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
int sqlite3_bcolz_init(sqlite3 *db, char **pzErrMsg,
                      const sqlite3_api_routines *pApi) {
  (void)pzErrMsg;
  SQLITE_EXTENSION_INIT2(pApi);
  int rc = ds_npy_register_functions(db);
  if (rc == SQLITE_OK) rc = ds_version_register(db);
  if (rc == SQLITE_OK) rc = ds_bcolz_register(db);
  return rc;
}
