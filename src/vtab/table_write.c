/* table_write.c - the write and transaction methods of a writing
 * module's sqlite3_module (table_writer.h): xUpdate calls the module's
 * update hook (ds_table_def.update), the transaction methods the table
 * writer's steps (table_writer.c), and each reports its error as
 * "<module>: ...". One implementation for every writing module. */
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include "core/common.h"
#include "vtab/table.h"
#include "vtab/table_writer.h"
#include "vtab/vtab_util.h"

/* An SQLite result for a hook's 0 / -1 and message. */
static int result(sqlite3_vtab *vtab, int rc, char *err) {
  if (rc == 0) return SQLITE_OK;
  return ds_vtab_error(vtab, ((ds_table *)vtab)->def->name, err);
}

int ds_table_update(sqlite3_vtab *vtab, int argc, sqlite3_value **argv,
                    sqlite3_int64 *rowid) {
  int (*update)(ds_table *, int, sqlite3_value **, sqlite3_int64 *, char **) =
      ((ds_table *)vtab)->def->update;
  char *err = NULL;
  if (!update) return SQLITE_READONLY;
  int rc = update((ds_table *)vtab, argc, argv, rowid, &err);
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

/* The transaction methods without an argument: the writer's step. */
#define TXN_METHOD(fn, step)                            \
  int fn(sqlite3_vtab *vtab) {                          \
    char *err = NULL;                                   \
    int rc = step((ds_table *)vtab, &err); /* before err */ \
    return result(vtab, rc, err);                       \
  }
TXN_METHOD(ds_table_begin, ds_table_writer_begin)
TXN_METHOD(ds_table_sync, ds_table_writer_sync)
TXN_METHOD(ds_table_commit, ds_table_writer_commit)
TXN_METHOD(ds_table_rollback, ds_table_writer_rollback)

/* The savepoint methods (module version 2). */
#define SAVEPOINT_METHOD(fn, step)                         \
  int fn(sqlite3_vtab *vtab, int n) {                      \
    char *err = NULL;                                      \
    int rc = step((ds_table *)vtab, n, &err); /* before err */ \
    return result(vtab, rc, err);                          \
  }
SAVEPOINT_METHOD(ds_table_savepoint, ds_table_writer_savepoint)
SAVEPOINT_METHOD(ds_table_release, ds_table_writer_release)
SAVEPOINT_METHOD(ds_table_rollback_to, ds_table_writer_rollback_to)
