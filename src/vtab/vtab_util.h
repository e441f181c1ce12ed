/* vtab_util.h - small helpers every virtual-table glue file uses: error
 * messages in SQLite's allocator with the module name in front, and
 * argument dequoting. */
#ifndef DS_VTAB_UTIL_H
#define DS_VTAB_UTIL_H

#include <stdint.h>

#include "core/option_spec.h"
#include "sql/sqlite_api.h"

/* Set vtab->zErrMsg to "<module>: <msg>" and free msg (malloc'd).
 * Returns SQLITE_ERROR. */
int ds_vtab_error(sqlite3_vtab *vtab, const char *module, char *msg);
/* *pzErr = "<module>: <msg>" (sqlite3_malloc'd); frees msg. SQLITE_ERROR. */
int ds_set_error(char **pzErr, const char *module, char *msg);
/* sqlite3_result_error with "<module>: <msg>"; frees msg. */
void ds_result_error(sqlite3_context *ctx, const char *module, char *msg);

/* Rate limit for noticing changed dataset files: 1 (and *last updated)
 * when more than 100 ms passed since the last check. Checking stats every
 * file, so point lookups must not pay it each time. */
int ds_recheck_due(int64_t *last_ns);

/* The error for a CREATE-form table whose files changed under it. */
char *ds_changed_error(const char *path);

/* The one message for a missing or empty path, with the usage (%s). */
#define DS_NO_PATH "no path given: use %s"

/* The arguments of a table-valued call (plan.c's argument columns 0 and
 * 1): *path and *opts point at the SQL values' text (opts may be NULL),
 * *path_arg / *options_arg are sqlite3_malloc'd copies for the HIDDEN
 * columns, *key the malloc'd "path\noptions" that names the dataset in a
 * table's cache. `usage` is the hint when no path was given, followed by
 * the `options` (NULL: none listed). */
int ds_tvf_call(const sqlite3_value *const *args, const char *usage,
                const ds_opt_group *options,
                const char **path, const char **opts, char **path_arg,
                char **options_arg, char **key, char **err);

#endif
