/* ext_common.c - the functions every library registers (ext_common.h). */
#include "sql/ext_common.h"

#include "sql/npy_sql.h"
#include "sql/remote_stats_sql.h"
#include "sql/version_sql.h"

int ds_ext_register_common(sqlite3 *db, const ds_help_library *lib) {
  int rc = ds_npy_register_functions(db);
  if (rc == SQLITE_OK) rc = ds_version_register(db);
  if (rc == SQLITE_OK) rc = ds_remote_stats_register(db);
  if (rc == SQLITE_OK) rc = ds_help_register(db, lib);
  return rc;
}
