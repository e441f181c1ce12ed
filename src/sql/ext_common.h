/* ext_common.h - what every loadable library's entry point (ext/<name>.c)
 * shares: the export mark of its sqlite3_<name>_init, and the functions
 * every library registers before its own modules (npy_*, datasets_version,
 * datasets_remote_stats, datasets_help). */
#ifndef DS_EXT_COMMON_H
#define DS_EXT_COMMON_H

#include "sql/help_sql.h"
#include "sql/sqlite_api.h"

/* Marks an entry point visible (the libraries build -fvisibility=hidden). */
#ifdef _WIN32
#define DS_EXT_EXPORT __declspec(dllexport)
#else
#define DS_EXT_EXPORT __attribute__((visibility("default")))
#endif

/* Register the functions every library has, with datasets_help() listing
 * lib; SQLITE_OK or the first error. */
int ds_ext_register_common(sqlite3 *db, const ds_help_library *lib);

#endif
