/* table_write.c - the writers' seam of the table skeleton (table.h): the
 * sqlite3_module write and transaction methods, each finding the module's
 * ds_table_write_ops hook and reporting its error as "<module>: ...".
 * No module writes yet; issues 13 and 14 fill the hooks. */
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include "core/common.h"
#include "vtab/table.h"
#include "vtab/table_writer.h"
#include "vtab/vtab_util.h"

/* The hooks of a table (NULL when the module does not write). */
static const ds_table_write_ops *ops_of(sqlite3_vtab *vtab) {
  return ((ds_table *)vtab)->def->write;
}

/* An SQLite result for a hook's 0 / -1 and message. */
static int result(sqlite3_vtab *vtab, int rc, char *err) {
  if (rc == 0) return SQLITE_OK;
  return ds_vtab_error(vtab, ((ds_table *)vtab)->def->name, err);
}

int ds_table_update(sqlite3_vtab *vtab, int argc, sqlite3_value **argv,
                    sqlite3_int64 *rowid) {
  const ds_table_write_ops *w = ops_of(vtab);
  char *err = NULL;
  if (!w || !w->update) return SQLITE_READONLY;
  int rc = w->update((ds_table *)vtab, argc, argv, rowid, &err);
  /* a row's error names the dataset written (the format writers say
   * "row 3: ..."), unless the message names it already */
  const char *target = rc ? ds_table_writer_target((ds_table *)vtab) : NULL;
  if (target && err && !strstr(err, target)) {
    char *named = ds_strf("%s: %s", target, err);
    if (named) {
      free(err);
      err = named;
    }
  }
  return result(vtab, rc, err);
}

/* The transaction hooks without an argument. */
#define TXN_METHOD(fn, hook)                                   \
  int fn(sqlite3_vtab *vtab) {                                 \
    const ds_table_write_ops *w = ops_of(vtab);                \
    char *err = NULL;                                          \
    if (!w || !w->hook) return SQLITE_OK;                      \
    int rc = w->hook((ds_table *)vtab, &err); /* before err */ \
    return result(vtab, rc, err);                              \
  }
TXN_METHOD(ds_table_begin, begin)
TXN_METHOD(ds_table_sync, sync)
TXN_METHOD(ds_table_commit, commit)
TXN_METHOD(ds_table_rollback, rollback)

/* The savepoint hooks (module version 2). */
#define SAVEPOINT_METHOD(fn, hook)                                \
  int fn(sqlite3_vtab *vtab, int n) {                             \
    const ds_table_write_ops *w = ops_of(vtab);                   \
    char *err = NULL;                                             \
    if (!w || !w->hook) return SQLITE_OK;                         \
    int rc = w->hook((ds_table *)vtab, n, &err); /* before err */ \
    return result(vtab, rc, err);                                 \
  }
SAVEPOINT_METHOD(ds_table_savepoint, savepoint)
SAVEPOINT_METHOD(ds_table_release, release)
SAVEPOINT_METHOD(ds_table_rollback_to, rollback_to)
