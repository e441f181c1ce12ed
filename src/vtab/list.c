/* list.c - table-valued functions over a short list of rows (see list.h). */
#include "list.h"

#include <stdlib.h>
#include <string.h>

#include "core/common.h"
#include "sql/plan.h"
#include "vtab/interrupt.h"
#include "vtab/vtab_util.h"

typedef struct list_vtab {
  ds_row_table base;
  sqlite3 *db;
  const ds_list_def *def;
} list_vtab;

/* The def of a cursor's table. */
static const ds_list_def *def_of(sqlite3_vtab_cursor *cur) {
  return ((list_vtab *)cur->pVtab)->def;
}

/* xConnect (table-valued only: there is no xCreate). */
static int list_connect(sqlite3 *db, void *aux, int argc, const char *const *argv,
                        sqlite3_vtab **out, char **pzErr) {
  (void)argc;
  (void)argv;
  (void)pzErr;
  const ds_list_def *def = aux;
  int rc =
      ds_row_table_connect(db, def->schema, sizeof(list_vtab), sizeof(ds_list_cursor), out);
  if (rc != SQLITE_OK) return rc;
  sqlite3_vtab_config(db, SQLITE_VTAB_DIRECTONLY);
  list_vtab *t = (list_vtab *)*out;
  t->db = db;
  t->def = def;
  return SQLITE_OK;
}

/* The arguments are required (path) or optional (options). */
static int list_best_index(sqlite3_vtab *vt, sqlite3_index_info *info) {
  const ds_list_def *def = ((list_vtab *)vt)->def;
  int args[2] = {def->ncols, def->ncols + 1};
  ds_plan_config cfg = {def->rows, 1.0, NULL, 0, args, def->nargs, 1};
  return ds_plan_best_index(info, &cfg);
}

/* Drop the rows and arguments of the last xFilter. */
static void list_reset(ds_list_cursor *c) {
  const ds_list_def *def = def_of(&c->row.base);
  if (def->clear) def->clear(c);
  free(c->rows);
  c->rows = NULL;
  c->n = c->row.i = c->row.end = 0;
  ds_arena_reset(&c->arena);
  sqlite3_free(c->path_arg);
  sqlite3_free(c->options_arg);
  c->path_arg = c->options_arg = NULL;
}

static int list_close(sqlite3_vtab_cursor *cur) {
  ds_list_cursor *c = (ds_list_cursor *)cur;
  list_reset(c);
  ds_arena_free(&c->arena);
  sqlite3_free(c);
  return SQLITE_OK;
}

/* xFilter: collect every row (interruptible), then LIMIT / OFFSET. */
static int list_filter(sqlite3_vtab_cursor *cur, int idxNum, const char *idxStr,
                       int argc, sqlite3_value **argv) {
  (void)idxStr;
  ds_list_cursor *c = (ds_list_cursor *)cur;
  const ds_list_def *def = def_of(cur);
  list_reset(c);
  char *err = NULL, *key = NULL;
  const char *path = NULL, *opts = NULL;
  ds_plan_args a;
  int rc = ds_plan_decode(idxNum, argc, argv, def->nargs, &a, &err);
  if (rc == 0)
    rc = ds_tvf_call((const sqlite3_value *const *)a.args, def->usage, def->options, &path, &opts,
                     &c->path_arg, &c->options_arg, &key, &err);
  free(key);
  if (rc == 0) {
    ds_interrupt it;
    ds_interrupt_begin(&it, ((list_vtab *)cur->pVtab)->db);
    rc = def->collect(c, path, opts, &err);
    if (ds_interrupt_end(&it)) {
      free(err);
      ds_plan_args_free(&a);
      return ds_vtab_interrupted(cur->pVtab);
    }
  }
  ds_plan_args_free(&a);
  if (rc) return ds_vtab_error(cur->pVtab, def->name, err);
  c->row.i = a.offset < c->n ? (size_t)a.offset : c->n;
  c->row.end = a.limit < c->n - c->row.i ? c->row.i + (size_t)a.limit : c->n;
  return SQLITE_OK;
}

static int list_column(sqlite3_vtab_cursor *cur, sqlite3_context *ctx, int col) {
  ds_list_cursor *c = (ds_list_cursor *)cur;
  const ds_list_def *def = def_of(cur);
  if (col == def->ncols) {
    sqlite3_result_text(ctx, c->path_arg, -1, SQLITE_TRANSIENT);
  } else if (col == def->ncols + 1 && def->nargs == 2) {
    if (c->options_arg) sqlite3_result_text(ctx, c->options_arg, -1, SQLITE_TRANSIENT);
  } else if (col >= 0 && col < def->ncols) {
    def->column(c, c->row.i, col, ctx);
  } else if (col > def->ncols + def->nargs - 1) { /* HIDDEN ones after the arguments */
    def->column(c, c->row.i, col - def->nargs, ctx);
  }
  return SQLITE_OK;
}

static sqlite3_module list_module = {
    .iVersion = 0,
    .xCreate = NULL, /* table-valued only */
    .xConnect = list_connect,
    .xBestIndex = list_best_index,
    .xDisconnect = ds_row_table_disconnect,
    .xDestroy = ds_row_table_disconnect,
    .xOpen = ds_row_cursor_open,
    .xClose = list_close,
    .xFilter = list_filter,
    .xNext = ds_row_cursor_next,
    .xEof = ds_row_cursor_eof,
    .xColumn = list_column,
    .xRowid = ds_row_cursor_rowid,
};

int ds_list_register(sqlite3 *db, const ds_list_def *def) {
  return sqlite3_create_module_v2(db, def->name, &list_module, (void *)def, NULL);
}

void *ds_list_add(ds_list_cursor *c, size_t size) {
  char *rows = realloc(c->rows, (c->n + 1) * size);
  if (!rows) return NULL;
  c->rows = rows;
  memset(rows + c->n * size, 0, size);
  return rows + size * c->n++;
}

void ds_list_text(ds_list_cursor *c, const char *s, ds_value *v) {
  size_t n = strlen(s);
  char *p = ds_arena_alloc(&c->arena, n + 1);
  memset(v, 0, sizeof *v);
  if (!p) return; /* NULL value: out of memory shows as NULL */
  memcpy(p, s, n + 1);
  v->type = DS_V_TEXT;
  v->u.s.p = (const uint8_t *)p;
  v->u.s.n = n;
}
