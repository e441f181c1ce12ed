/* dataset_info.c - dataset_info(path [, options]): what a dataset is, as
 * `property, value` rows, whatever its format.
 *
 *   SELECT * FROM dataset_info('data@4.bagz');
 *   SELECT value FROM dataset_info('train.msgpack') WHERE property = 'rows';
 *
 * The format comes from formats/detect.h through the format table
 * (vtab/format_table.c); the numbers from the format's row builder
 * (vtab/<fmt>_info.c, its row in the table), which reads its reader's
 * public API; `columns` from a private in-memory database in
 * which `CREATE VIRTUAL TABLE t USING dataset(path, options...)` is run and
 * PRAGMA table_info read back, so it is exactly what that CREATE declares.
 * `options` are those of the format's CREATE form (e.g. infer=, bytes=);
 * they go to that CREATE unchanged, so a bad one is its error.
 *
 * Rows, in this order: format, rows, shards, bytes_on_disk, compression,
 * columns (JSON object name -> declared type), then the format's own
 * (README "dataset_info"). A per-shard property whose shards all agree is
 * one value; otherwise a JSON array with one value per shard. */
#include <jansson.h>
#include <stdlib.h>
#include <string.h>

#include "core/common.h"
#include "core/json_file.h"
#include "core/options.h"
#include "sql/sqlite_api.h"
#include "sql/value_sql.h"
#include "formats/detect.h"
#include "vtab/format_table.h"
#include "vtab/info_rows.h"
#include "vtab/list.h"
#include "vtab/modules.h"
#include "vtab/vtab_util.h"

#define MOD "dataset_info"

enum { COL_PROPERTY, COL_VALUE };

/* ------------------------------------------------------------ columns */

/* Append ", 'name=value'" for every option. */
static char *create_sql(const char *path, const ds_options *o) {
  char *sql = sqlite3_mprintf("CREATE VIRTUAL TABLE temp.t USING dataset(%Q", path);
  for (size_t i = 0; sql && i < o->n; i++) {
    char *arg = sqlite3_mprintf("%s=%s", o->items[i].name, o->items[i].value);
    char *next = arg ? sqlite3_mprintf("%s, %Q", sql, arg) : NULL;
    sqlite3_free(arg);
    sqlite3_free(sql);
    sql = next;
  }
  char *done = sql ? sqlite3_mprintf("%s)", sql) : NULL;
  sqlite3_free(sql);
  return done;
}

/* The columns CREATE VIRTUAL TABLE ... USING dataset(path, options)
 * declares, as a JSON object name -> type (PRAGMA table_info). */
static int declared_columns(const char *path, const ds_options *o, json_t **out,
                            char **err) {
  *out = NULL;
  sqlite3 *db = NULL;
  sqlite3_stmt *st = NULL;
  char *sql = create_sql(path, o);
  int rc = sql ? sqlite3_open_v2(":memory:", &db,
                                 SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE, NULL)
               : SQLITE_NOMEM;
  if (rc == SQLITE_OK) rc = ds_dataset_module_register(db);
  if (rc == SQLITE_OK) rc = sqlite3_exec(db, sql, NULL, NULL, NULL);
  if (rc == SQLITE_OK)
    rc = sqlite3_prepare_v2(db, "SELECT name, type FROM pragma_table_info('t')", -1,
                            &st, NULL);
  json_t *cols = rc == SQLITE_OK ? json_object() : NULL;
  while (rc == SQLITE_OK && sqlite3_step(st) == SQLITE_ROW) {
    const char *name = (const char *)sqlite3_column_text(st, 0);
    const char *type = (const char *)sqlite3_column_text(st, 1);
    if (!cols || !name || json_object_set_new(cols, name, json_string(type ? type : "")))
      rc = SQLITE_NOMEM;
  }
  if (rc == SQLITE_OK && sqlite3_finalize(st) != SQLITE_OK) rc = SQLITE_ERROR;
  else if (rc != SQLITE_OK) sqlite3_finalize(st);
  if (rc != SQLITE_OK)
    ds_err(err, "%s", rc == SQLITE_NOMEM || !db ? "out of memory" : sqlite3_errmsg(db));
  sqlite3_close(db);
  sqlite3_free(sql);
  if (rc != SQLITE_OK) {
    json_decref(cols);
    return -1;
  }
  *out = cols;
  return 0;
}

/* ------------------------------------------------------------ rows */

/* Everything about `path`, into l. Errors name the path. */
static int collect(const char *path, const char *opts, ds_info *l, char **err) {
  ds_detected d;
  const ds_format_row *row;
  if (ds_format_detect(path, &d, &row, err)) return -1;
  ds_options o = {0};
  int rc = opts ? ds_options_add_list(&o, opts, err) : 0;
  if (rc) ds_err_prefix(err, path);
  if (rc == 0) rc = declared_columns(path, &o, &l->columns, err);
  if (rc == 0) rc = ds_detect_bytes(path, &d, &l->bytes, err);
  if (rc == 0) rc = row->info(l, path, &d, &o, err);
  json_decref(l->columns); /* not handed to a row */
  l->columns = NULL;
  ds_options_free(&o);
  if (rc == 0 && l->oom) rc = ds_err(err, "out of memory");
  return rc;
}

/* ------------------------------------------------------------ module */

/* ds_list_def.collect: every row of the dataset at path. */
static int info_collect(ds_list_cursor *c, const char *path, const char *opts, char **err) {
  ds_info l = {0};
  int rc = collect(path, opts, &l, err);
  if (rc) {
    ds_info_free(&l);
    return rc;
  }
  c->rows = l.rows;
  c->n = l.n;
  return 0;
}

/* ds_list_def.clear */
static void info_clear(ds_list_cursor *c) {
  ds_info l = {.rows = c->rows, .n = c->n};
  ds_info_free(&l);
  c->rows = NULL;
}

/* A JSON value as an SQL value: numbers and strings as such, containers
 * as JSON text. */
static void value_result(sqlite3_context *ctx, json_t *v) {
  switch (json_typeof(v)) {
  case JSON_INTEGER: sqlite3_result_int64(ctx, (sqlite3_int64)json_integer_value(v)); break;
  case JSON_REAL: sqlite3_result_double(ctx, json_real_value(v)); break;
  case JSON_STRING:
    sqlite3_result_text(ctx, json_string_value(v), (int)json_string_length(v),
                        SQLITE_TRANSIENT);
    break;
  case JSON_TRUE: sqlite3_result_int(ctx, 1); break;
  case JSON_FALSE: sqlite3_result_int(ctx, 0); break;
  case JSON_NULL: sqlite3_result_null(ctx); break;
  default: { /* object or array: JSON text with the JSON subtype */
    char *text = ds_json_dumps(v);
    ds_buf b = {0};
    if (!text || ds_buf_puts(&b, text)) sqlite3_result_error_nomem(ctx);
    else ds_result_json(ctx, &b);
    ds_buf_free(&b);
    free(text);
  }
  }
}

/* ds_list_def.column */
static void info_column(ds_list_cursor *c, size_t i, int col, sqlite3_context *ctx) {
  const ds_info_row *r = &((const ds_info_row *)c->rows)[i];
  if (col == COL_PROPERTY) sqlite3_result_text(ctx, r->name, -1, SQLITE_STATIC);
  else value_result(ctx, r->value);
}

/* property, value, then the HIDDEN path and options; about 20 rows */
static const ds_list_def info_def = {
    MOD, "CREATE TABLE x(property TEXT, value, path HIDDEN, options HIDDEN)",
    2, 2, "dataset_info('path' [, 'name=value,...'])", 20, info_collect, info_column,
    info_clear};

int ds_dataset_info_register(sqlite3 *db) { return ds_list_register(db, &info_def); }
