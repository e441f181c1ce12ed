/* help_sql.c - the datasets_help() table-valued function (see
 * help_sql.h): rows made from the library's parts, the option specs and
 * the libraries' own version calls when a query starts. */
#include "sql/help_sql.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/common.h"
#include "sql/row_table.h"
#include "sql/version_sql.h"

const ds_help_entry ds_help_common[] = {
    {"function", "datasets_version", "datasets_version(): the extension's and SQLite's version",
     NULL, 0},
    {"function", "datasets_help", "SELECT * FROM datasets_help(): this list", NULL, 0},
    {"function", "datasets_remote_stats",
     "SELECT * FROM datasets_remote_stats(['reset']): requests, retries, bytes, time waited "
     "and disk cache hits of remote reading, per endpoint",
     NULL, 0},
    {"function", "npy_shape", "npy_shape(npy): the shape of an .npy BLOB as JSON", NULL, 0},
    {"function", "npy_dtype", "npy_dtype(npy): its numpy dtype", NULL, 0},
    {"function", "npy_size", "npy_size(npy): its number of elements", NULL, 0},
    {"function", "npy_json", "npy_json(npy): the array as JSON", NULL, 0},
    {"function", "npy_get", "npy_get(npy, i [, j ...]): one element", NULL, 0},
    {"function", "npy_sum", "npy_sum(npy): the sum of the elements", NULL, 0},
    {"function", "npy_min", "npy_min(npy): the least element", NULL, 0},
    {"function", "npy_max", "npy_max(npy): the greatest element", NULL, 0},
    {"function", "npy_mean", "npy_mean(npy): the mean of the elements", NULL, 0},
    {NULL, NULL, NULL, NULL, 0}};

enum { COL_KIND, COL_MODULE, COL_NAME, COL_VALUE, COL_TAKES, COL_FORMS, COL_HELP, NCOLS };

/* One row: its texts (malloc'd; NULL for SQL NULL). */
typedef struct help_row {
  char *c[NCOLS];
} help_row;

typedef struct help_vtab {
  ds_row_table base;
  const ds_help_library *lib;
} help_vtab;

typedef struct help_cursor {
  ds_row_cursor row; /* row.end: the rows held */
  help_row *rows;
} help_cursor;

/* Append a row (copies of the texts). -1 when out of memory. */
static int add(help_cursor *c, const char *kind, const char *module, const char *name,
               const char *value, const char *takes, const char *forms, const char *help) {
  help_row *r = ds_grow(c->rows, c->row.end, sizeof *r);
  if (!r) return -1;
  c->rows = r;
  const char *src[NCOLS] = {kind, module, name, value, takes, forms, help};
  int rc = 0;
  for (int k = 0; k < NCOLS; k++) {
    r[c->row.end].c[k] = src[k] ? strdup(src[k]) : NULL;
    if (src[k] && !r[c->row.end].c[k]) rc = -1;
  }
  c->row.end++;
  return rc;
}

/* The forms of a spec that e lists, as words: "table-valued, CREATE,
 * writer" (dataset_shards' own: "dataset_shards"). */
static void forms_text(unsigned forms, char *buf, size_t n) {
  static const struct { unsigned bit; const char *word; } words[] = {
      {DS_FORM_TVF, "table-valued"}, {DS_FORM_CREATE, "CREATE"}, {DS_FORM_WRITER, "writer"},
      {DS_FORM_SHARDS, "dataset_shards"}};
  size_t k = 0;
  buf[0] = 0;
  if (forms & (DS_FORM_TVF | DS_FORM_CREATE | DS_FORM_WRITER)) forms &= ~DS_FORM_SHARDS;
  for (size_t i = 0; i < sizeof words / sizeof words[0] && k < n; i++)
    if (forms & words[i].bit)
      k += (size_t)snprintf(buf + k, n - k, "%s%s", k ? ", " : "", words[i].word);
}

/* The option rows of one module. */
static int add_options(help_cursor *c, const ds_help_entry *e) {
  for (const ds_opt_group *g = e->options; g && g->specs; g++)
    for (const ds_opt_spec *s = g->specs; s->name; s++) {
      if (!(s->forms & e->forms)) continue;
      char def[128], values[256], forms[64];
      ds_opt_default_text(s, def, sizeof def);
      ds_opt_values_text(s, values, sizeof values);
      forms_text(s->forms & e->forms, forms, sizeof forms);
      if (add(c, "option", e->name, s->name, def, values, forms, s->help)) return -1;
    }
  return 0;
}

static void clear(help_cursor *c) {
  for (size_t i = 0; i < c->row.end; i++)
    for (int k = 0; k < NCOLS; k++) free(c->rows[i].c[k]);
  free(c->rows);
  c->rows = NULL;
  c->row.end = c->row.i = 0;
}

/* Every row of the library. */
static int fill(help_cursor *c, const ds_help_library *lib) {
  if (add(c, "library", NULL, lib->name, DS_VERSION, NULL, NULL, "the library loaded"))
    return -1;
  for (const ds_help_entry *const *p = lib->parts; *p; p++)
    for (const ds_help_entry *e = *p; e->name; e++)
      if (add(c, e->kind, NULL, e->name, e->usage, NULL, NULL, NULL) || add_options(c, e))
        return -1;
  if (add(c, "version", NULL, "SQLite", sqlite3_libversion(), NULL, NULL, NULL)) return -1;
  for (const ds_lib_version *v = lib->versions; v && v->name; v++)
    if (add(c, "version", NULL, v->name, v->version(), NULL, NULL, NULL)) return -1;
  return 0;
}

static int help_connect(sqlite3 *db, void *aux, int argc, const char *const *argv,
                        sqlite3_vtab **out, char **err) {
  (void)argc;
  (void)argv;
  (void)err;
  int rc = ds_row_table_connect(db, "CREATE TABLE x(kind TEXT, module TEXT, name TEXT,"
                                    " value TEXT, takes TEXT, forms TEXT, help TEXT)",
                                sizeof(help_vtab), sizeof(help_cursor), out);
  if (rc == SQLITE_OK) ((help_vtab *)*out)->lib = aux;
  return rc;
}

static int help_best_index(sqlite3_vtab *v, sqlite3_index_info *info) {
  (void)v;
  info->estimatedCost = 100;
  info->estimatedRows = 100;
  return SQLITE_OK;
}

static int help_close(sqlite3_vtab_cursor *cur) {
  clear((help_cursor *)cur);
  sqlite3_free(cur);
  return SQLITE_OK;
}

static int help_filter(sqlite3_vtab_cursor *cur, int idxNum, const char *idxStr, int argc,
                       sqlite3_value **argv) {
  (void)idxNum;
  (void)idxStr;
  (void)argc;
  (void)argv;
  help_cursor *c = (help_cursor *)cur;
  clear(c);
  return fill(c, ((help_vtab *)cur->pVtab)->lib) ? SQLITE_NOMEM : SQLITE_OK;
}

static int help_column(sqlite3_vtab_cursor *cur, sqlite3_context *ctx, int col) {
  help_cursor *c = (help_cursor *)cur;
  const char *s = c->rows[c->row.i].c[col];
  if (s) sqlite3_result_text(ctx, s, -1, SQLITE_TRANSIENT);
  else sqlite3_result_null(ctx);
  return SQLITE_OK;
}

/* Eponymous only (no xCreate): SELECT * FROM datasets_help(). */
static sqlite3_module help_module = {
    .iVersion = 0, .xConnect = help_connect, .xBestIndex = help_best_index,
    .xDisconnect = ds_row_table_disconnect, .xOpen = ds_row_cursor_open, .xClose = help_close,
    .xFilter = help_filter, .xNext = ds_row_cursor_next, .xEof = ds_row_cursor_eof, .xColumn = help_column,
    .xRowid = ds_row_cursor_rowid};

int ds_help_register(sqlite3 *db, const ds_help_library *lib) {
  return sqlite3_create_module_v2(db, "datasets_help", &help_module, (void *)lib, NULL);
}
