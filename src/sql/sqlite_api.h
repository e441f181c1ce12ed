/* sqlite_api.h - include this (not sqlite3.h) in every file that calls
 * SQLite. Compiled into a loadable extension it routes calls through the
 * sqlite3_api table that ext/<name>.c sets up; compiled with -DSQLITE_CORE
 * (unit tests, fuzzers) it calls libsqlite3 directly. */
#ifndef DS_SQLITE_API_H
#define DS_SQLITE_API_H
#include <sqlite3ext.h>
SQLITE_EXTENSION_INIT3
#endif
