/* dataset_info.c - dataset_info(path [, options]): what a dataset is, as
 * `property, value` rows, whatever its format.
 *
 *   SELECT * FROM dataset_info('data@4.bagz');
 *   SELECT value FROM dataset_info('train.msgpack') WHERE property = 'rows';
 *
 * The format comes from formats/detect.h through the format table
 * (vtab/format_table.c). The dataset is opened once, as the format
 * module's CREATE form opens it (vtab/table.h ds_table_declared: the
 * module's own open and declare hooks, no SQLite connection): `columns`
 * are the visible columns of the CREATE TABLE text its declare hook gives,
 * so exactly what `CREATE VIRTUAL TABLE t USING dataset(path, options...)`
 * declares, and the numbers come from the format's row builder
 * (vtab/<fmt>_info.c, its row in the table), which reads the reader that
 * open made (its public API). `options` are those of the format's CREATE
 * form (e.g. infer=, bytes=) but no writer's, checked by the module's
 * option specs, so a bad one is its error.
 *
 * Rows, in this order: format, rows, shards, bytes_on_disk, compression,
 * columns (JSON object name -> declared type), then the format's own
 * (README "dataset_info"). A per-shard property whose shards all agree is
 * one value; otherwise a JSON array with one value per shard. */
#include <jansson.h>
#include <stdlib.h>
#include <string.h>

#include "core/abspath.h"
#include "core/common.h"
#include "core/json_file.h"
#include "core/options.h"
#include "sql/sqlite_api.h"
#include "sql/value_sql.h"
#include "formats/detect.h"
#include "vtab/format_table.h"
#include "vtab/info_rows.h"
#include "vtab/list.h"
#include "vtab/module_options.h"
#include "vtab/modules.h"
#include "vtab/vtab_util.h"

#define MOD "dataset_info"

enum { COL_PROPERTY, COL_VALUE };

/* ------------------------------------------------------------ columns */

/* The name of a column definition starting at *p ("quoted" with ""
 * doubled, or bare up to a space), advancing *p past it. malloc'd. */
static char *def_name(const char **p) {
  const char *s = *p;
  ds_buf b = {0};
  if (*s == '"') {
    for (s++; *s && !(s[0] == '"' && s[1] != '"'); s++) {
      if (s[0] == '"') s++; /* "" is one quote */
      ds_buf_append(&b, s, 1);
    }
    if (*s) s++;
  } else {
    while (*s && *s != ' ' && *s != ',' && *s != ')') ds_buf_append(&b, s++, 1);
  }
  *p = s;
  if (ds_buf_append(&b, "", 1)) {
    ds_buf_free(&b);
    return NULL;
  }
  return (char *)b.data;
}

/* The visible columns of a module's CREATE TABLE text (as its declare
 * hook generates it: `name TYPE [HIDDEN], ...`) as a JSON object name ->
 * declared type, what PRAGMA table_info would say. */
static json_t *columns_of(const char *sql) {
  json_t *cols = json_object();
  const char *p = strchr(sql, '(');
  while (cols && p && *p && *p != ')') {
    p++;
    while (*p == ' ') p++;
    char *name = def_name(&p);
    const char *start = p;
    for (int depth = 0; *p && (depth || (*p != ',' && *p != ')')); p++)
      depth += *p == '(' ? 1 : *p == ')' ? -1 : 0;
    char *type = name ? ds_strf("%.*s", (int)(p - start), start) : NULL;
    char *t = type, *hidden = NULL;
    while (t && *t == ' ') t++;
    for (char *h = t; h && (h = strstr(h, "HIDDEN")); h++)
      if ((h == t || h[-1] == ' ') && (!h[6] || h[6] == ' ')) hidden = h;
    if (hidden) *hidden = 0;
    size_t n = t ? strlen(t) : 0;
    while (n && t[n - 1] == ' ') t[--n] = 0;
    if (!name || !type || (!hidden && json_object_set_new(cols, name, json_string(t)))) {
      json_decref(cols);
      cols = NULL;
    }
    free(name);
    free(type);
  }
  return cols;
}

/* Open the dataset once, as the format module's CREATE form does, and the
 * columns that CREATE declares (a JSON object name -> type). */
static int open_declared(const ds_format_row *row, const char *path, const ds_options *o,
                         ds_dataset **ds, json_t **out, char **err) {
  char *sql = NULL;
  *out = NULL;
  if (ds_table_declared(ds_format_table_def(row), path, o, ds, &sql, err)) return -1;
  *out = columns_of(sql);
  free(sql);
  if (*out) return 0;
  ds_dataset_unref(*ds);
  *ds = NULL;
  return ds_err(err, "out of memory");
}

/* ------------------------------------------------------------ rows */

/* Everything about `path`, into l. Errors name the path. */
static int collect(const char *path, const char *opts, ds_info *l, char **err) {
  ds_detected d;
  const ds_format_row *row;
  if (ds_format_detect(path, &d, &row, err)) return -1;
  ds_options o = {0};
  int rc = opts ? ds_options_add_list(&o, opts, err) : 0;
  /* the format's options that dataset_info takes: those of its CREATE
   * form, but no writer's (mode= among them) */
  if (rc == 0 && ds_opt_check(ds_format_option_groups(row), DS_FORM_INFO, &o, err)) {
    char *why = NULL, *abs = ds_path_absolute(path, &why); /* as the module names it */
    ds_err_prefix(err, abs ? abs : path);
    free(abs);
    free(why);
    rc = -1;
  } else if (rc) {
    ds_err_prefix(err, path);
  }
  /* what `dataset` adds (bagz: limits=separate when detected) */
  if (rc == 0 && row->detected_options) rc = row->detected_options(&d, &o, err);
  ds_dataset *ds = NULL;
  if (rc == 0 && open_declared(row, path, &o, &ds, &l->columns, err)) {
    ds_err_prefix(err, ds_format_table_def(row)->name); /* as the module says it */
    rc = -1;
  }
  if (rc == 0) rc = ds_detect_bytes(path, &d, &l->bytes, err);
  if (rc == 0) rc = row->info(l, ds, err);
  json_decref(l->columns); /* not handed to a row */
  l->columns = NULL;
  ds_dataset_unref(ds);
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
    info_clear, NULL};

int ds_dataset_info_register(sqlite3 *db) { return ds_list_register(db, &info_def); }
