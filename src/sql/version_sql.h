/* version_sql.h - datasets_version(): the extension's version and the
 * SQLite it runs in, for bug reports and a first check that it loaded. */
#ifndef DS_VERSION_SQL_H
#define DS_VERSION_SQL_H

#include "sql/sqlite_api.h"

/* The extension's version. */
#define DS_VERSION "0.1.0"

/* Register datasets_version() on db. */
int ds_version_register(sqlite3 *db);

#endif
