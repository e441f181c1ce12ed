/* version_sql.c - the datasets_version() SQL function (see version_sql.h). */
#include "sql/version_sql.h"

#include <stddef.h>

/* datasets_version(): "sqlite-datasets 0.1.0 (SQLite 3.x.y)". */
static void version_func(sqlite3_context *ctx, int argc, sqlite3_value **argv) {
  (void)argc;
  (void)argv;
  sqlite3_result_text(ctx,
                      sqlite3_mprintf("sqlite-datasets %s (SQLite %s)", DS_VERSION,
                                      sqlite3_libversion()),
                      -1, sqlite3_free);
}

int ds_version_register(sqlite3 *db) {
  return sqlite3_create_function(db, "datasets_version", 0,
                                 SQLITE_UTF8 | SQLITE_INNOCUOUS, NULL, version_func,
                                 NULL, NULL);
}
