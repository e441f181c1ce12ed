/* table_writer.h - what every writing module's CREATE form shares, on the
 * skeleton's writer seam (table.h): the transaction
 * hooks (through writer_txn.h), the checks of an INSERT's rowid, UPDATE
 * and DELETE refused, reopening the table's dataset on what a commit
 * published, and sqlite3_value -> ds_value for the format encoders.
 *
 * A writing module's table struct starts with `ds_table base;` followed by
 * `ds_table_writer *writer;` (NULL when the table only reads), so the
 * hooks here find the writer of any module. The module gives its format
 * writer as a ds_table_writer_fmt and its own xUpdate. */
#ifndef DS_TABLE_WRITER_H
#define DS_TABLE_WRITER_H

#include <stdint.h>

#include "core/options.h"
#include "core/schema.h"
#include "core/stage.h"
#include "core/value.h"
#include "sql/sqlite_api.h"
#include "vtab/table.h"
#include "vtab/writer_txn.h"

typedef struct ds_table_writer_fmt {
  ds_writer_steps steps;
  void (*close)(void *w);
  /* The path a reader opens to see what was published (NULL: nothing). */
  const char *(*published)(void *w);
  /* Rows so far (the next rowid). */
  uint64_t (*count)(void *w);
} ds_table_writer_fmt;

/* `var`, the ds_table_writer_fmt of a format writer whose calls are
 * prefix_begin, _mark, _rollback_to, _prepare, _publish, _abort and
 * _count: the void * adapters, written once for every writing module. W
 * is the format writer as an expression of the table writer's `w` (`(w)`
 * when it is the format writer itself), close(w) frees it, published(W)
 * is the path a reader opens to see what was published. */
#define DS_TABLE_WRITER_FMT(var, prefix, W, close, published)                           \
  static int var##_begin(void *w, char **err) { return prefix##_begin(W, err); }        \
  static int var##_mark(void *w, void **m, char **err) { return prefix##_mark(W, m, err); } \
  static int var##_rollback_to(void *w, const void *m, char **err) {                     \
    return prefix##_rollback_to(W, m, err);                                              \
  }                                                                                      \
  static int var##_prepare(void *w, char **err) { return prefix##_prepare(W, err); }    \
  static int var##_publish(void *w, char **err) { return prefix##_publish(W, err); }    \
  static void var##_abort(void *w) { prefix##_abort(W); }                                \
  static uint64_t var##_count(void *w) { return prefix##_count(W); }                     \
  static void var##_close(void *w) { close(w); }                                         \
  static const char *var##_published(void *w) { return published(W); }                  \
  static const ds_table_writer_fmt var = {                                               \
      {var##_begin, var##_mark, var##_rollback_to, var##_prepare, var##_publish,         \
       var##_abort, var##_count},                                                        \
      var##_close, var##_published, var##_count}

typedef struct ds_table_writer {
  const ds_table_writer_fmt *fmt;
  void *w;              /* the format writer */
  ds_stage *stage;
  ds_txn txn;
  ds_options read_opts; /* the table's options less the writing ones */
  uint64_t publishes;   /* commits that published (a table reopens on news) */
  int retired;          /* its table was dropped: closed, answers no hook */
  char *failed;         /* a COMMIT failed (SQLite ignores xCommit's error):
                         * the table's next statements fail with this */
  int failed_once;      /* ... only the next one (it did publish) */
  char *target;         /* the path written, as CREATE gave it (errors name it) */
  void *row_fast;       /* the module's shortcut for the next INSERT row (its own
                         * type, set by its update hook after a row it took the
                         * long way), or NULL: every transaction step and the
                         * writer's retirement clear it, so it is set only
                         * between the rows of a statement that went well */
} ds_table_writer;

/* The layout every writing module's table struct starts with. */
typedef struct ds_writable_table {
  ds_table base;
  ds_table_writer *writer;
} ds_writable_table;

/* xCreate = xConnect of a writing module (one function, so the
 * table-valued form stays): ds_table_connect, but a writer table
 * (mode=create|replace) must be TEMP or in an in-memory database: in a
 * database file SQLite would run its CREATE again each time the file is
 * opened, and mode=create would refuse its own dataset. A writer table
 * SQLite connects again (vtab/writer_registry.h) shares the writer its
 * xCreate opened and reads what that writer published. */
int ds_table_writer_connect(sqlite3 *db, void *aux, int argc, const char *const *argv,
                            sqlite3_vtab **out, char **pzErr);
/* xDestroy of a writing module (DROP TABLE): the writer goes with the
 * table's last sqlite3_vtab. */
int ds_table_writer_destroy(sqlite3_vtab *vtab);
/* xRename of a writing module: a writer table keeps its writer (what it
 * wrote, its open transaction, its lock) under the new name. */
int ds_table_writer_rename(sqlite3_vtab *vtab, const char *name);
/* A writing module's registration calls this once per connection. */
int ds_table_writer_register(sqlite3 *db);
/* Register a format's module: def->methods under def->name (def is its
 * aux), the writer machinery (ds_table_writer_register), then
 * def->register_more. The ext/ entry files and the format table call it
 * with the def a vtab/<fmt>_vtab.c exports (vtab/modules.h). */
int ds_table_register(sqlite3 *db, const ds_table_def *def);
/* A writer shell: read_opts = o without the options the module's
 * `options` take only in the writer form, and without mode=. The module then opens its stage
 * and format writer and calls ds_table_writer_attach. Returns 1 (not an
 * error) when SQLite is reconnecting a table whose writer exists: *out is
 * that writer, ready; the module uses it as it is and opens nothing. */
int ds_table_writer_new(const ds_options *o, const ds_opt_group *options,
                        ds_table_writer **out, char **err);
void ds_table_writer_attach(ds_table_writer *tw, const ds_table_writer_fmt *fmt,
                            void *w, ds_stage *stage);
/* How a module opens its format writer: the target's directory and lock
 * key for a path, then the writer on the stage (ctx: the module's). */
typedef struct ds_table_writer_spec {
  const ds_table_writer_fmt *fmt;
  const ds_opt_group *options; /* the module's, as for ds_table_writer_new */
  int (*target)(const char *path, char **dir, char **key, char **err);
  int (*open)(ds_stage *stage, const char *path, void *ctx, void **w, char **err);
  void *ctx;
} ds_table_writer_spec;
/* The writer of a CREATE-form table on `path` (mode 1 create, 2 replace):
 * ds_table_writer_new, the stage (lock), spec->open, attached. 0, 1 when
 * it is the table's existing writer (a reconnect: spec->open was not
 * called, so the caller frees what ctx holds), or -1 with *err. */
int ds_table_writer_open(const char *path, const ds_options *o, int mode,
                         const ds_table_writer_spec *spec, ds_table_writer **out,
                         char **err);
/* A table lets go of its writer (table_free): freed, with the open
 * transaction aborted, once its table is gone and nothing holds it. */
void ds_table_writer_free(ds_table_writer *tw);

/* The path a table's writer writes (NULL: not a writer table). */
const char *ds_table_writer_target(ds_table *t);

/* xUpdate's common part: DELETE and UPDATE are refused; the new rowid must
 * be NULL or the next index. *row = that index. */
int ds_table_writer_insert(ds_table *t, int argc, sqlite3_value **argv,
                           uint64_t *row, char **err);

/* An SQL value as a ds_value (TEXT and BLOB point into the value). */
void ds_value_from_sql(sqlite3_value *v, ds_value *out);
/* The same, as a column declared `decl` (columns=) stores it: SQLite's
 * conversions apply (numeric text to INTEGER or REAL, a whole REAL to
 * INTEGER, a number to its text in a TEXT column); a value no conversion
 * fits ('abc' or 1.5 for INTEGER; a BLOB for TEXT, or for INTEGER, REAL or
 * NUMERIC unless it is a .npy array of numbers: a list) is -1 with *why
 * saying so. BLOB, JSON and undeclared columns take any value. */
int ds_value_from_sql_decl(sqlite3_value *v, ds_decl decl, ds_value *out, char **why);
/* 1 when v is TEXT marked as JSON (SQLite's JSON subtype). */
int ds_sql_is_json(sqlite3_value *v);

/* The transaction steps of a writer table (called by the skeleton's
 * methods below, vtab/table_write.c). 0, or -1 with *err. */
int ds_table_writer_begin(ds_table *t, char **err);
int ds_table_writer_sync(ds_table *t, char **err);
int ds_table_writer_commit(ds_table *t, char **err);
int ds_table_writer_rollback(ds_table *t, char **err);
int ds_table_writer_savepoint(ds_table *t, int n, char **err);
int ds_table_writer_release(ds_table *t, int n, char **err);
int ds_table_writer_rollback_to(ds_table *t, int n, char **err);
/* The write and transaction methods of a writing module's sqlite3_module
 * (vtab/table_write.c): xUpdate calls the def's update hook, the others
 * the transaction steps above; errors become "<module>: ...". */
int ds_table_update(sqlite3_vtab *vtab, int argc, sqlite3_value **argv,
                    sqlite3_int64 *rowid);
int ds_table_begin(sqlite3_vtab *vtab);
int ds_table_sync(sqlite3_vtab *vtab);
int ds_table_commit(sqlite3_vtab *vtab);
int ds_table_rollback(sqlite3_vtab *vtab);
int ds_table_savepoint(sqlite3_vtab *vtab, int n);
int ds_table_release(sqlite3_vtab *vtab, int n);
int ds_table_rollback_to(sqlite3_vtab *vtab, int n);
#define DS_TABLE_WRITE_METHODS .xUpdate = ds_table_update, DS_TABLE_TXN_METHODS
#define DS_TABLE_TXN_METHODS                                              \
  .xBegin = ds_table_begin,                                               \
  .xSync = ds_table_sync, .xCommit = ds_table_commit,                     \
  .xRollback = ds_table_rollback, .xSavepoint = ds_table_savepoint,       \
  .xRelease = ds_table_release, .xRollbackTo = ds_table_rollback_to

/* A writing module's sqlite3_module (DS_TABLE_MODULE with the write
 * methods and version 2 for the savepoint methods). */
#define DS_TABLE_WRITER_MODULE(best_index, column) \
  DS_TABLE_WRITER_MODULE_NEXT(best_index, column, ds_cursor_next)
/* The same with the module's own xNext (it calls ds_cursor_next for the
 * walks it does not take itself). */
#define DS_TABLE_WRITER_MODULE_NEXT(best_index, column, next) \
  DS_TABLE_WRITER_MODULE_UPDATE(best_index, column, next, ds_table_update)
/* The same with the module's own xUpdate: it takes the rows it can
 * (ds_table_writer.row_fast) and passes the others to ds_table_update. */
#define DS_TABLE_WRITER_MODULE_UPDATE(best_index, column, next, update)        \
  {.iVersion = 2, .xCreate = ds_table_writer_connect,                         \
   .xConnect = ds_table_writer_connect, .xDestroy = ds_table_writer_destroy,   \
   .xRename = ds_table_writer_rename,                                          \
   .xBestIndex = best_index, .xColumn = column, DS_TABLE_CURSOR_METHODS(next), \
   .xUpdate = update, DS_TABLE_TXN_METHODS}

#endif
