/* vtab_util.h - small helpers every virtual-table glue file uses: error
 * messages in SQLite's allocator with the module name in front, and
 * argument dequoting. */
#ifndef DS_VTAB_UTIL_H
#define DS_VTAB_UTIL_H

#include "core/sqlite_api.h"

/* Set vtab->zErrMsg to "<module>: <msg>" and free msg (malloc'd).
 * Returns SQLITE_ERROR. */
int ds_vtab_error(sqlite3_vtab *vtab, const char *module, char *msg);
/* *pzErr = "<module>: <msg>" (sqlite3_malloc'd); frees msg. SQLITE_ERROR. */
int ds_set_error(char **pzErr, const char *module, char *msg);
/* sqlite3_result_error with "<module>: <msg>"; frees msg. */
void ds_result_error(sqlite3_context *ctx, const char *module, char *msg);

#endif
