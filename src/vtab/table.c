/* table.c - the table/cursor skeleton of the dataset modules (see
 * table.h): connecting, the row set of an xFilter, stepping, and the
 * methods every module shares. */
#include "table.h"

#include <stdlib.h>
#include <string.h>

#include "core/common.h"
#include "vtab/interrupt.h"
#include "vtab/vtab_util.h"

int ds_table_open(sqlite3 *db, const ds_table_def *def, int argc,
                  const char *const *argv, ds_options *o, ds_table **out,
                  char **err) {
  memset(o, 0, sizeof *o);
  *out = NULL;
  ds_table *t = sqlite3_malloc64(def->table_size);
  if (!t) return ds_err(err, "out of memory");
  memset(t, 0, def->table_size);
  t->def = def;
  t->db = db;
  t->tvf = argc <= 3;
  t->col_path = t->col_options = -1;
  *out = t; /* also on failure: ds_table_done frees it and names the module */
  /* SQLite connects a table-valued call as table "main".<module>; any
   * other name with no arguments is CREATE VIRTUAL TABLE x USING m(),
   * which has no dataset to read */
  if (argc == 3 && (strcmp(argv[1], "main") != 0 || strcmp(argv[2], argv[0]) != 0)) {
    char *u = ds_dataset_usage(def->ops);
    ds_err(err, "CREATE VIRTUAL TABLE %s.%s names no dataset: " DS_NO_PATH, argv[1],
           argv[2], u ? u : def->ops->usage);
    free(u);
    return -1;
  }
  if (!t->tvf && ds_dataset_create(def->ops, argc, argv, o, &t->ds, err)) {
    ds_options_free(o);
    return -1;
  }
  /* a writer table (mode=, bound with the dataset's options) in a
   * database file: SQLite would run its CREATE again each time the file is
   * opened, and mode=create would refuse its own dataset */
  const char *file = t->ds && t->ds->mode ? sqlite3_db_filename(db, argv[1]) : NULL;
  if (file && *file) {
    ds_options_free(o);
    return ds_err(err, "%s.%s: a table with mode=create or mode=replace must be TEMP "
                       "(CREATE VIRTUAL TABLE temp.%s ...): in a database file it would try "
                       "to create its dataset again each time the file is opened",
                  argv[1], argv[2], argv[2]);
  }
  return 0;
}

void ds_table_arg_columns(ds_table *t, int path, int options) {
  t->col_path = path;
  t->col_options = options;
}

int ds_table_declare(ds_table *t, const char *sql, char **err) {
  if (!sql) return ds_err(err, "out of memory");
  if (t->capture) {
    free(t->captured);
    t->captured = strdup(sql);
    return t->captured ? (t->declared = 1, 0) : ds_err(err, "out of memory");
  }
  if (sqlite3_declare_vtab(t->db, sql) == SQLITE_OK) return t->declared = 1, 0;
  return ds_err(err, "cannot declare columns (%s): %s", sqlite3_errmsg(t->db), sql);
}

/* Free a table and what it holds. */
static void table_free(ds_table *t) {
  if (t->def->table_free) t->def->table_free(t);
  ds_dataset_unref(t->ds);
  sqlite3_free(t->spare_cursor);
  free(t->unavailable);
  free(t->captured);
  sqlite3_free(t->base.zErrMsg);
  sqlite3_free(t);
}

int ds_table_done(ds_table *t, int rc, char *err, sqlite3_vtab **out, char **pzErr) {
  if (rc == 0 && t) {
    sqlite3_vtab_config(t->db, SQLITE_VTAB_DIRECTONLY);
    *out = &t->base;
    free(err);
    return SQLITE_OK;
  }
  if (!t) { /* not even allocated */
    free(err);
    return SQLITE_NOMEM;
  }
  const char *name = t->def->name;
  table_free(t);
  return ds_set_error(pzErr, name, err);
}

int ds_table_declared(const ds_table_def *def, const char *path, const ds_options *o,
                      ds_dataset **ds, char **sql, char **err) {
  *ds = NULL;
  *sql = NULL;
  ds_table *t = sqlite3_malloc64(def->table_size);
  if (!t) return ds_err(err, "out of memory");
  memset(t, 0, def->table_size);
  t->def = def;
  t->col_path = t->col_options = -1;
  t->capture = 1; /* no connection: ds_table_declare keeps the text */
  int rc = ds_dataset_open_options(def->ops, path, o, &t->ds, err);
  if (rc == 0) rc = def->declare(t, o, err);
  if (rc == 0) {
    *sql = t->captured;
    t->captured = NULL;
    *ds = t->ds;
    ds_dataset_ref(t->ds);
  }
  table_free(t);
  return rc ? -1 : 0;
}

int ds_table_creating(sqlite3 *db) {
  for (sqlite3_stmt *s = sqlite3_next_stmt(db, NULL); s; s = sqlite3_next_stmt(db, s)) {
    const char *sql = sqlite3_sql(s);
    if (!sql || !sqlite3_stmt_busy(s)) continue;
    while (*sql == ' ' || *sql == '\t' || *sql == '\n' || *sql == '\r') sql++;
    if (sqlite3_strnicmp(sql, "CREATE", 6) == 0) return 1;
  }
  return 0;
}

/* A CREATE-form table reconnected (database reopened) whose dataset cannot
 * be opened: keep why, declare one placeholder column (unless the module
 * declared its columns before failing: SQLite takes one declaration), so
 * that DROP TABLE works; every query fails with the reason (ds_table_plan). */
static int declare_unavailable(ds_table *t, char **err) {
  t->unavailable = *err ? *err : strdup("cannot open the dataset");
  *err = NULL;
  ds_dataset_unref(t->ds);
  t->ds = NULL;
  if (t->declared) return 0;
  return ds_table_declare(t, "CREATE TABLE x(unavailable HIDDEN)", err);
}

int ds_table_connect(sqlite3 *db, void *aux, int argc, const char *const *argv,
                     sqlite3_vtab **out, char **pzErr) {
  const ds_table_def *def = aux;
  ds_table *t;
  ds_options o;
  char *err = NULL;
  int rc = ds_table_open(db, def, argc, argv, &o, &t, &err);
  ds_interrupt it; /* inferring and naming columns stop when asked */
  ds_interrupt_begin(&it, db);
  /* endpoint=, region=, ...: current while a writer opens (its stage
   * keeps them for the uploads) */
  const ds_vfs_remote_opts *was = ds_vfs_remote_use(rc == 0 && t->ds ? &t->ds->remote : NULL);
  if (rc == 0) rc = def->declare(t, &o, &err);
  ds_vfs_remote_use(was);
  ds_interrupt_end(&it);
  ds_options_free(&o);
  if (rc && t && !t->tvf && !ds_table_creating(db)) rc = declare_unavailable(t, &err);
  return ds_table_done(t, rc, err, out, pzErr);
}

int ds_table_disconnect(sqlite3_vtab *vtab) {
  table_free((ds_table *)vtab);
  return SQLITE_OK;
}

int ds_table_plan(ds_table *t, sqlite3_index_info *info, double nrows,
                  const ds_plan_extra *extra, int nextra) {
  if (t->unavailable) {
    sqlite3_free(t->base.zErrMsg);
    t->base.zErrMsg = sqlite3_mprintf(
        "%s: %s (the database was opened without the table's dataset: DROP TABLE "
        "works; reopen the database once the files are back)",
        t->def->name, t->unavailable);
    return SQLITE_ERROR;
  }
  int args[2] = {t->col_path, t->col_options};
  ds_plan_config cfg = {nrows, 1.0, extra, nextra, args, t->tvf ? 2 : 0, t->tvf ? 1 : 0};
  return ds_plan_best_index(info, &cfg);
}

int ds_cursor_arg_column(sqlite3_vtab_cursor *cur, sqlite3_context *ctx, int col) {
  ds_table *t = ds_table_of(cur);
  ds_cursor *c = (ds_cursor *)cur;
  if (col < 0 || (col != t->col_path && col != t->col_options)) return 0;
  const char *v = col == t->col_path ? c->path_arg : c->options_arg;
  if (v) sqlite3_result_text(ctx, v, -1, SQLITE_TRANSIENT);
  return 1;
}

int ds_cursor_error(ds_cursor *c, char *err) {
  return ds_vtab_error(c->base.pVtab, ds_table_of(&c->base)->def->name, err);
}

/* xOpen: the table's spare cursor memory (zeroed again), or new. */
int ds_cursor_open(sqlite3_vtab *vtab, sqlite3_vtab_cursor **out) {
  ds_table *t = (ds_table *)vtab;
  const ds_table_def *def = t->def;
  ds_cursor *c = t->spare_cursor;
  t->spare_cursor = NULL;
  if (!c) c = sqlite3_malloc64(def->cursor_size);
  if (!c) return SQLITE_NOMEM;
  memset(c, 0, def->cursor_size);
  c->base.pVtab = vtab; /* hooks may look at the table */
  c->eof = 1;
  if (def->cursor_init) def->cursor_init(c);
  *out = &c->base;
  return SQLITE_OK;
}

/* Drop what one xFilter set up: the module's part, then the shared one
 * (nothing when no xFilter ran since the last reset: a fresh cursor). */
static void cursor_reset(ds_cursor *c) {
  if (!c->filtered) return;
  c->filtered = 0;
  const ds_table_def *def = ds_table_of(&c->base)->def;
  if (def->cursor_reset) def->cursor_reset(c);
  ds_rowset_free(&c->rs);
  ds_dataset_unref(c->ds);
  c->ds = NULL;
  sqlite3_free(c->path_arg);
  sqlite3_free(c->options_arg);
  c->path_arg = c->options_arg = NULL;
  c->eof = 1;
}

/* xClose: the cursor's memory is kept as the table's spare when it has
 * none (a table is used by one connection at a time). */
int ds_cursor_close(sqlite3_vtab_cursor *cur) {
  ds_cursor *c = (ds_cursor *)cur;
  ds_table *t = ds_table_of(cur);
  cursor_reset(c);
  if (t->def->cursor_free) t->def->cursor_free(c);
  if (!t->spare_cursor) t->spare_cursor = c;
  else sqlite3_free(c);
  return SQLITE_OK;
}

int ds_rows_add(ds_rows *r, uint64_t g, char **err) {
  /* doubling: a lookup may match every row */
  uint64_t *ids = ds_grow_cap(r->ids, &r->cap, r->nids, sizeof *ids, 16);
  if (!ids) return ds_err(err, "out of memory");
  r->ids = ids;
  r->ids[r->nids++] = g;
  return 0;
}

/* ds_plan_each_value's context for ds_rows_lookup. */
typedef struct lookup_ctx {
  ds_rows *r;
  ds_lookup_fn fn;
  void *ctx;
  char *err;
} lookup_ctx;

/* ds_plan_each_value callback: the module's lookup of one value. */
static int lookup_one(void *ctx, sqlite3_value *v) {
  lookup_ctx *l = ctx;
  return l->fn(l->ctx, v, l->r, &l->err) != 0;
}

int ds_rows_lookup(ds_rows *r, sqlite3_value *v, int is_in, ds_lookup_fn fn, void *ctx,
                   char **err) {
  lookup_ctx l = {r, fn, ctx, NULL};
  r->have_ids = 1;
  if (ds_plan_each_value(v, is_in, lookup_one, &l) == 0) return 0;
  if (!l.err) return ds_err(err, "cannot read the IN list of values");
  free(*err);
  *err = l.err;
  return -1;
}

/* Keep the ids that are also in the module's list `mine` (taken). */
static size_t intersect(uint64_t *ids, size_t n, uint64_t *mine, size_t nmine) {
  ds_rowset probe;
  ds_rowset_init_list(&probe, mine, nmine);
  size_t j = 0;
  for (size_t i = 0; i < n; i++)
    if (ds_rowset_contains(&probe, ids[i])) ids[j++] = ids[i];
  ds_rowset_free(&probe);
  return j;
}

/* Keep the ids below total whose shard is flagged in r->shard_on. */
static size_t keep_ids(ds_cursor *c, const ds_rows *r, uint64_t *ids, size_t n) {
  const ds_table_def *def = ds_table_of(&c->base)->def;
  size_t j = 0;
  for (size_t i = 0; i < n; i++) {
    if (ids[i] >= r->total) continue;
    if (r->shard_on) {
      size_t s = def->shard_of ? def->shard_of(c, ids[i]) : SIZE_MAX;
      if (s >= r->nshards || !r->shard_on[s]) continue;
    }
    ids[j++] = ids[i];
  }
  return j;
}

/* The row set of the plan: the rowid list and the module's lookups
 * (intersected), else the shards picked, else every row; then the range,
 * DESC, OFFSET and LIMIT. Takes r's arrays. */
static int build_rowset(ds_cursor *c, ds_plan_args *a, ds_rows *r, char **err) {
  uint64_t *ids = NULL;
  size_t n = 0;
  int rc = 0;
  if (a->has_ids) {
    ids = a->ids;
    n = a->nids;
    if (r->have_ids) n = intersect(ids, n, r->ids, r->nids);
    r->ids = NULL;
    a->ids = NULL; /* taken (or &a->one) */
  } else if (r->have_ids) {
    ids = r->ids;
    n = r->nids;
    r->ids = NULL;
  }
  if (ids || a->has_ids || r->have_ids) {
    n = keep_ids(c, r, ids, n);
    if (ids == &a->one) {
      if (n == 1) ds_rowset_init_one(&c->rs, a->one);
      else ds_rowset_init_list(&c->rs, NULL, 0);
    } else {
      ds_rowset_init_list(&c->rs, ids, n);
    }
  } else if (r->shard_on) {
    rc = ds_rowset_init_shards(&c->rs, r->interleaved, r->first, r->counts, r->nshards,
                               r->shard_on);
  } else {
    rc = ds_rowset_init_all(&c->rs, r->total);
  }
  free(r->shard_on);
  r->shard_on = NULL;
  if (rc) return ds_err(err, "out of memory");
  ds_rowset_clip(&c->rs, a->lo, a->hi < r->total ? a->hi : r->total);
  if (a->empty) ds_rowset_clip(&c->rs, 0, 0);
  c->rs.desc = a->desc;
  c->rs.offset = a->offset;
  c->rs.limit = a->limit;
  return 0;
}

/* The plan's rowids (=, IN, ranges) as rows of the files under the
 * dataset's window (core/row_window.h), clipped to it. */
static void window_plan(const ds_row_window *w, ds_plan_args *a) {
  if (!w->on) return;
  if (a->has_ids) {
    size_t j = 0;
    uint64_t l;
    for (size_t i = 0; i < a->nids; i++)
      if (ds_row_window_local(w, a->ids[i], &l)) a->ids[j++] = l;
    a->nids = j;
  }
  ds_row_window_range(w, a->lo, a->hi, &a->lo, &a->hi);
}

/* xFilter inside its interrupt scope. */
/* max_value_bytes is never above what this connection can return
 * (SQLITE_LIMIT_LENGTH, 1e9 by default): a value too long for SQLite fails
 * with the max_value_bytes error before it is decompressed. */
static void cap_to_connection(ds_dataset *d, sqlite3 *db) {
  int lim = sqlite3_limit(db, SQLITE_LIMIT_LENGTH, -1);
  if (lim > 0 && d->max_value_bytes > (uint64_t)lim) d->max_value_bytes = (uint64_t)lim;
}

static int filter(ds_cursor *c, int idxNum, const char *idxStr, int argc,
                  sqlite3_value **argv) {
  ds_table *t = ds_table_of(&c->base);
  const ds_table_def *def = t->def;
  cursor_reset(c);
  c->filtered = 1; /* from here on the cursor may hold rows, a dataset, hooks' state */
  char *err = NULL;
  ds_plan_args a;
  ds_rows r;
  memset(&r, 0, sizeof r);
  int rc = ds_plan_decode(idxNum, argc, argv, t->tvf ? 2 : 0, &a, &err);
  if (rc == 0)
    rc = t->tvf ? ds_dataset_for_call(def->ops, &t->ds, a.args, &c->path_arg,
                                      &c->options_arg, &err)
                : ds_dataset_check(t->ds, &err);
  if (rc == 0) {
    c->ds = t->ds;
    ds_dataset_ref(c->ds);
    /* the call may have replaced (and freed) the dataset whose remote
     * settings ds_cursor_filter made current: from here on, this one's
     * (ds_cursor_filter restores what was current before it) */
    ds_vfs_remote_use(&c->ds->remote);
    window_plan(&c->ds->win, &a);
    cap_to_connection(c->ds, t->db);
    if (def->select) rc = def->select(c, &a, &r, &err);
    if (rc == 0 && ds_row_window_check(&c->ds->win, r.total, &err) == -1) {
      ds_err_prefix(&err, c->ds->path);
      rc = -1;
    }
  }
  if (rc == 0) rc = build_rowset(c, &a, &r, &err);
  free(r.ids);
  free(r.shard_on);
  ds_plan_args_free(&a);
  if (rc) return ds_cursor_error(c, err);
  ds_rowiter_init(&c->it, &c->rs);
  c->eof = 0;
  ds_filter_call call = {idxNum, idxStr, argc, argv};
  if (def->start && def->start(c, &call, &err)) return ds_cursor_error(c, err);
  return ds_cursor_next(&c->base);
}

/* xFilter: building an index, skipping an OFFSET or looking keys up can
 * take long; SQLite may stop it (vtab/interrupt.h). */
int ds_cursor_filter(sqlite3_vtab_cursor *cur, int idxNum, const char *idxStr,
                     int argc, sqlite3_value **argv) {
  ds_interrupt it;
  ds_interrupt_begin(&it, ds_table_of(cur)->db);
  ds_dataset *d = ds_table_of(cur)->ds; /* its remote settings (vtab/dataset.h) */
  const ds_vfs_remote_opts *was = ds_vfs_remote_use(d ? &d->remote : NULL);
  int rc = filter((ds_cursor *)cur, idxNum, idxStr, argc, argv);
  ds_vfs_remote_use(was);
  return ds_interrupt_end(&it) ? ds_vtab_interrupted(cur->pVtab) : rc;
}

int ds_cursor_step(ds_cursor *c, char **err) {
  const ds_table_def *def = ds_table_of(&c->base)->def;
  uint64_t g;
  int r = def->fetch ? def->fetch(c, &g, err) : ds_rowiter_next(&c->it, &g);
  if (r < 0) return -1;
  if (r == 0) {
    c->eof = 1;
    return 0;
  }
  if (def->arrive) def->arrive(c, g);
  c->row = g;
  return 0;
}

int ds_cursor_next(sqlite3_vtab_cursor *cur) {
  ds_cursor *c = (ds_cursor *)cur;
  const ds_table_def *def = ds_table_of(cur)->def;
  const ds_vfs_remote_opts *was = ds_vfs_remote_use(c->ds ? &c->ds->remote : NULL);
  char *err = NULL;
  int rc = def->next ? def->next(c)
           : ds_cursor_step(c, &err) ? ds_cursor_error(c, err) : SQLITE_OK;
  ds_vfs_remote_use(was);
  return rc;
}

int ds_cursor_eof(sqlite3_vtab_cursor *cur) { return ((ds_cursor *)cur)->eof; }

int ds_cursor_rowid(sqlite3_vtab_cursor *cur, sqlite3_int64 *rowid) {
  ds_cursor *c = (ds_cursor *)cur;
  uint64_t g = c->ds && c->ds->win.on ? ds_row_window_rowid(&c->ds->win, c->row) : c->row;
  *rowid = (sqlite3_int64)g;
  return SQLITE_OK;
}

uint64_t ds_cursor_shard(const ds_cursor *c, size_t s) {
  return (c->ds ? c->ds->win.shard : 0) + s;
}

int ds_rows_shard_map(ds_cursor *c, const ds_shard_map *map, sqlite3_value *shard,
                      int shard_in, ds_rows *r, char **err) {
  r->total = map->total;
  r->nshards = map->nshards;
  r->interleaved = map->layout == DS_LAYOUT_INTERLEAVED;
  r->first = map->first;
  r->counts = map->counts;
  if (shard && !(r->shard_on = ds_cursor_shard_flags(c, shard, shard_in, map->nshards)))
    return ds_err(err, "out of memory");
  return 0;
}

unsigned char *ds_cursor_shard_flags(const ds_cursor *c, sqlite3_value *v, int is_in,
                                     size_t n) {
  return ds_plan_flag_ints_from(v, is_in, c->ds ? c->ds->win.shard : 0, n);
}
