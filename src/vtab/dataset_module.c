/* dataset_module.c - the `dataset` module: a table over any format of the
 * format table (vtab/format_table.c), found by formats/detect.h.
 *
 *   CREATE VIRTUAL TABLE t USING dataset('train.msgpack', infer=1000);
 *
 * How it becomes the right module: xConnect (also xCreate) detects the
 * format of the path and calls that format's own xConnect (its sqlite3_module
 * from the format table) with the same arguments, the module name
 * replaced, and the option detection found appended (the table's
 * detected_option; bagz: limits=separate when every file has limits.NAME
 * beside it, unless the arguments name `limits`). The
 * format's table is wrapped in a small one; every other method forwards to
 * the format's module with the wrapped table or cursor and moves its error
 * message to the wrapper, where SQLite looks for it. So the columns,
 * options, plans and errors are exactly the format module's.
 *
 * There is no table-valued form (the columns depend on the path, which a
 * table-valued call only gives after the columns are declared): use the
 * format's own function, or dataset_info(path). */
#include <stdlib.h>
#include <string.h>

#include "core/common.h"
#include "core/options.h"
#include "sql/sqlite_api.h"
#include "formats/detect.h"
#include "vtab/format_table.h"
#include "vtab/modules.h"
#include "vtab/table.h"
#include "vtab/vtab_util.h"

#define MOD "dataset"

typedef struct fwd_vtab {
  sqlite3_vtab base;
  const sqlite3_module *m; /* the detected format's module */
  sqlite3_vtab *inner;     /* its table */
} fwd_vtab;

typedef struct fwd_cursor {
  sqlite3_vtab_cursor base;
  sqlite3_vtab_cursor *inner;
} fwd_cursor;

/* Move the format table's error message to the wrapper; returns rc. */
static int take_error(fwd_vtab *t, int rc) {
  if (t->inner->zErrMsg) {
    sqlite3_free(t->base.zErrMsg);
    t->base.zErrMsg = t->inner->zErrMsg;
    t->inner->zErrMsg = NULL;
  }
  return rc;
}

/* 1 when one of the option arguments argv[4..] is named `name`. */
static int has_option(int argc, const char *const *argv, const char *name) {
  int found = 0;
  for (int i = 4; i < argc && !found; i++) {
    ds_options o = {0};
    char *err = NULL;
    if (ds_options_add(&o, argv[i], &err) == 0) found = ds_options_get(&o, name) != NULL;
    free(err);
    ds_options_free(&o);
  }
  return found;
}

static int fwd_init(sqlite3 *db, int argc, const char *const *argv,
                    sqlite3_vtab **out, char **pzErr) {
  char *path = argc > 3 ? ds_dequote(argv[3]) : NULL;
  if (argc > 3 && !path) return SQLITE_NOMEM;
  if (!path || !*path) {
    free(path);
    return ds_set_error(
        pzErr, MOD,
        ds_strf(DS_NO_PATH, "CREATE VIRTUAL TABLE t USING dataset('path' "
                            "[, name=value ...]), or SELECT * FROM dataset_info('path') for "
                            "a look without a table"));
  }
  ds_detected d;
  const ds_format_row *row = NULL;
  char *err = NULL;
  int rc = ds_format_detect(path, &d, &row, &err);
  free(path);
  if (rc && !ds_table_creating(db)) {
    /* reconnecting without the files: the placeholder table of the
     * format table (bagz's), which DROP TABLE can drop and queries fail on */
    free(err);
    rc = 0;
    row = ds_format_table_placeholder();
    d.format = row->bytes;
    d.detail = 0;
  }
  if (rc) return ds_set_error(pzErr, MOD, err);
  /* what detection adds (bagz: limits=separate), as the format's specs
   * name it, unless the arguments give it: "name=value" texts in added */
  ds_options extra = {0};
  char *why = NULL;
  if (row->detected_options && row->detected_options(&d, &extra, &why)) {
    free(why);
    ds_options_free(&extra);
    return SQLITE_NOMEM;
  }
  const char **args = malloc((size_t)(argc + 1 + (int)extra.n) * sizeof *args);
  char **added = calloc(extra.n + 1, sizeof *added);
  int oom = !args || !added;
  int n = 0;
  if (!oom) {
    args[n++] = d.format->name;
    for (int i = 1; i < argc; i++) args[n++] = argv[i];
  }
  for (size_t i = 0; !oom && i < extra.n; i++) {
    if (has_option(argc, argv, extra.items[i].name)) continue;
    added[i] = ds_strf("%s=%s", extra.items[i].name, extra.items[i].value);
    if (!added[i]) oom = 1;
    else args[n++] = added[i];
  }
  size_t nadded = extra.n;
  ds_options_free(&extra);
  if (oom) {
    for (size_t i = 0; added && i < nadded; i++) free(added[i]);
    free(added);
    free(args);
    return SQLITE_NOMEM;
  }
  const sqlite3_module *m = row->def->methods;
  sqlite3_vtab *inner = NULL;
  rc = m->xConnect(db, (void *)row->def, n, args, &inner, pzErr);
  free(args);
  for (size_t i = 0; i < nadded; i++) free(added[i]);
  free(added);
  if (rc != SQLITE_OK) return rc;
  fwd_vtab *t = sqlite3_malloc(sizeof *t);
  if (!t) {
    m->xDisconnect(inner);
    return SQLITE_NOMEM;
  }
  memset(t, 0, sizeof *t);
  inner->pModule = m; /* what SQLite would have set */
  t->m = m;
  t->inner = inner;
  *out = &t->base;
  return SQLITE_OK;
}

/* xCreate and xConnect (the same function, as in the four format modules,
 * so that `SELECT * FROM dataset(...)` reaches it and gets the message
 * above instead of "no such table"). */
static int fwd_connect(sqlite3 *db, void *aux, int argc, const char *const *argv,
                       sqlite3_vtab **out, char **pzErr) {
  (void)aux;
  return fwd_init(db, argc, argv, out, pzErr);
}

/* Disconnect (destroy 0) or destroy the format's table, then the wrapper. */
static int fwd_release(sqlite3_vtab *vtab, int destroy) {
  fwd_vtab *t = (fwd_vtab *)vtab;
  int rc = (destroy ? t->m->xDestroy : t->m->xDisconnect)(t->inner);
  sqlite3_free(t->base.zErrMsg);
  sqlite3_free(t);
  return rc;
}

static int fwd_disconnect(sqlite3_vtab *vtab) { return fwd_release(vtab, 0); }
static int fwd_destroy(sqlite3_vtab *vtab) { return fwd_release(vtab, 1); }

static int fwd_best_index(sqlite3_vtab *vtab, sqlite3_index_info *info) {
  fwd_vtab *t = (fwd_vtab *)vtab;
  return take_error(t, t->m->xBestIndex(t->inner, info));
}

static int fwd_open(sqlite3_vtab *vtab, sqlite3_vtab_cursor **out) {
  fwd_vtab *t = (fwd_vtab *)vtab;
  fwd_cursor *c = sqlite3_malloc(sizeof *c);
  if (!c) return SQLITE_NOMEM;
  memset(c, 0, sizeof *c);
  int rc = take_error(t, t->m->xOpen(t->inner, &c->inner));
  if (rc != SQLITE_OK) {
    sqlite3_free(c);
    return rc;
  }
  c->inner->pVtab = t->inner; /* what SQLite would have set */
  *out = &c->base;
  return SQLITE_OK;
}

static int fwd_close(sqlite3_vtab_cursor *cur) {
  fwd_cursor *c = (fwd_cursor *)cur;
  fwd_vtab *t = (fwd_vtab *)cur->pVtab;
  int rc = take_error(t, t->m->xClose(c->inner));
  sqlite3_free(c);
  return rc;
}

static int fwd_filter(sqlite3_vtab_cursor *cur, int idxNum, const char *idxStr,
                      int argc, sqlite3_value **argv) {
  fwd_vtab *t = (fwd_vtab *)cur->pVtab;
  return take_error(t, t->m->xFilter(((fwd_cursor *)cur)->inner, idxNum, idxStr,
                                     argc, argv));
}

static int fwd_next(sqlite3_vtab_cursor *cur) {
  fwd_vtab *t = (fwd_vtab *)cur->pVtab;
  return take_error(t, t->m->xNext(((fwd_cursor *)cur)->inner));
}

static int fwd_eof(sqlite3_vtab_cursor *cur) {
  fwd_vtab *t = (fwd_vtab *)cur->pVtab;
  return t->m->xEof(((fwd_cursor *)cur)->inner);
}

static int fwd_column(sqlite3_vtab_cursor *cur, sqlite3_context *ctx, int col) {
  fwd_vtab *t = (fwd_vtab *)cur->pVtab;
  return take_error(t, t->m->xColumn(((fwd_cursor *)cur)->inner, ctx, col));
}

static int fwd_rowid(sqlite3_vtab_cursor *cur, sqlite3_int64 *rowid) {
  fwd_vtab *t = (fwd_vtab *)cur->pVtab;
  return take_error(t, t->m->xRowid(((fwd_cursor *)cur)->inner, rowid));
}

static sqlite3_module dataset_module = {
    .iVersion = 0,
    .xCreate = fwd_connect,
    .xConnect = fwd_connect,
    .xBestIndex = fwd_best_index,
    .xDisconnect = fwd_disconnect,
    .xDestroy = fwd_destroy,
    .xOpen = fwd_open,
    .xClose = fwd_close,
    .xFilter = fwd_filter,
    .xNext = fwd_next,
    .xEof = fwd_eof,
    .xColumn = fwd_column,
    .xRowid = fwd_rowid,
};

int ds_dataset_module_register(sqlite3 *db) {
  return sqlite3_create_module_v2(db, "dataset", &dataset_module, NULL, NULL);
}
