/* tfexample_sql.h - the tfexample_json SQL function (docs/INTERFACE.md,
 * "Records that are protocol buffers"), in every library that has bagz. */
#ifndef DS_TFEXAMPLE_SQL_H
#define DS_TFEXAMPLE_SQL_H

#include "sql/sqlite_api.h"

/* Register tfexample_json(record [, options]) on db. Returns an SQLite
 * result code. */
int ds_tfexample_register_functions(sqlite3 *db);

#endif
