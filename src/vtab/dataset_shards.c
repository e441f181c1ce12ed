/* dataset_shards.c - dataset_shards(path [, options]): one row per shard of
 * a dataset of any format, or per range of rows with split_rows=N; what a
 * scheduler reads to hand out work (formats/shards.h does the listing,
 * from indexes only).
 *
 *   SELECT * FROM dataset_shards('train@*.bagz');
 *   SELECT shard, first_rowid, rows FROM dataset_shards('t.bcolz', 'split_rows=100000');
 *
 * Columns: shard, path (the shard's file or folder), first_rowid, rows,
 * bytes, the HIDDEN arguments dataset and options, and HIDDEN shard_index
 * (index inside the shard of the entry's first row; after the arguments,
 * which SQLite binds to the first HIDDEN columns), and HIDDEN open_options:
 * what a task adds to the format's options to open only that entry with
 * the whole dataset's rowid, shard and shard_index (core/row_window.h:
 * shard, first_rowid, shard_index, rows, rowid_step when interleaved;
 * atlas: dictionary= for a shard folder using the root's dictionary).
 *
 * Options: split_rows=N, and any option of the format's own module, so one
 * options string serves both; of those only bagz limits= and layout=
 * change the listing (with layout=interleaved, row i of an entry has
 * rowid first_rowid + i * shards). The others are checked by name only. */
#include <stdlib.h>
#include <string.h>

#include "core/common.h"
#include "core/options.h"
#include "sql/plan.h"
#include "sql/sqlite_api.h"
#include "formats/detect.h"
#include "formats/shards.h"
#include "vtab/modules.h"
#include "vtab/vtab_util.h"

#define MOD "dataset_shards"

enum {
  COL_SHARD, COL_PATH, COL_FIRST_ROWID, COL_ROWS, COL_BYTES, COL_DATASET,
  COL_OPTIONS, COL_SHARD_INDEX, COL_OPEN_OPTIONS
};

/* The options each format's module takes in its CREATE form (tests check
 * them against the modules' own "known options" lists). */
static const char *const bagz_known[] = {"split_rows", "compression", "limits",
                                         "layout", "dictionary", "threads", NULL};
static const char *const datadings_known[] = {"split_rows", "infer", "columns", NULL};
static const char *const atlas_known[] = {"split_rows", "infer", "columns", "unsupported",
                                          "cache_mb", "threads", "dictionary", NULL};
static const char *const bcolz_known[] = {"split_rows", "bytes", "cache_mb", NULL};

typedef struct shards_cursor {
  sqlite3_vtab_cursor base;
  ds_shard_listing list;
  size_t i, end;
  char *path_arg, *options_arg;
} shards_cursor;

static const char *const *known_for(ds_format f) {
  switch (f) {
  case DS_FORMAT_BAGZ: return bagz_known;
  case DS_FORMAT_DATADINGS: return datadings_known;
  case DS_FORMAT_ATLAS: return atlas_known;
  case DS_FORMAT_BCOLZ: return bcolz_known;
  }
  return NULL;
}

/* Parse and check the options string for a dataset of format d. */
static int read_options(const char *opts, const ds_detected *d,
                        ds_shards_options *so, char **err) {
  static const char *const limits[] = {"tail", "separate", NULL};
  static const char *const layouts[] = {"concatenated", "interleaved", NULL};
  ds_options o = {0};
  int lim = 0, lay = 0;
  int64_t split = 0;
  memset(so, 0, sizeof *so);
  int rc = opts ? ds_options_add_list(&o, opts, err) : 0;
  if (rc == 0) rc = ds_options_check_known(&o, known_for(d->format), err);
  if (rc == 0) rc = ds_options_int(&o, "split_rows", 0, 1, INT64_MAX, &split, err);
  if (rc == 0 && d->format == DS_FORMAT_BAGZ)
    rc = ds_options_enum(&o, "limits", limits, 0, &lim, err) ||
         ds_options_enum(&o, "layout", layouts, 0, &lay, err);
  so->split_rows = (uint64_t)split;
  so->limits = (bagz_limits)lim;
  so->layout = (ds_layout)lay;
  so->limits_given = ds_options_get(&o, "limits") != NULL;
  ds_options_free(&o);
  return rc ? -1 : 0;
}

/* The listing of `path` with the options string `opts` (may be NULL). */
static int collect(const char *path, const char *opts, ds_shard_listing *l,
                   char **err) {
  ds_detected d;
  ds_shards_options so;
  if (ds_detect(path, &d, err)) return -1;
  if (read_options(opts, &d, &so, err)) {
    ds_err_prefix(err, path);
    return -1;
  }
  return ds_shards_list(path, &d, &so, l, err);
}

/* ------------------------------------------------------------ module */

static int shards_connect(sqlite3 *db, void *aux, int argc, const char *const *argv,
                          sqlite3_vtab **out, char **pzErr) {
  (void)aux;
  (void)argc;
  (void)argv;
  (void)pzErr;
  int rc = sqlite3_declare_vtab(
      db, "CREATE TABLE x(shard INTEGER, path TEXT, first_rowid INTEGER, rows INTEGER, "
          "bytes INTEGER, dataset HIDDEN, options HIDDEN, shard_index INTEGER HIDDEN, "
          "open_options TEXT HIDDEN)");
  if (rc != SQLITE_OK) return rc;
  sqlite3_vtab_config(db, SQLITE_VTAB_DIRECTONLY);
  sqlite3_vtab *t = sqlite3_malloc(sizeof *t);
  if (!t) return SQLITE_NOMEM;
  memset(t, 0, sizeof *t);
  *out = t;
  return SQLITE_OK;
}

static int shards_disconnect(sqlite3_vtab *t) {
  sqlite3_free(t);
  return SQLITE_OK;
}

/* Only the two arguments, LIMIT and OFFSET are taken; a listing costs
 * about one file open per shard. */
static int shards_best_index(sqlite3_vtab *t, sqlite3_index_info *info) {
  (void)t;
  static const int args[2] = {COL_DATASET, COL_OPTIONS};
  ds_plan_config cfg = {1000, 1.0, NULL, 0, args, 2, 1};
  return ds_plan_best_index(info, &cfg);
}

static int shards_open(sqlite3_vtab *t, sqlite3_vtab_cursor **out) {
  (void)t;
  shards_cursor *c = sqlite3_malloc(sizeof *c);
  if (!c) return SQLITE_NOMEM;
  memset(c, 0, sizeof *c);
  *out = &c->base;
  return SQLITE_OK;
}

static void shards_reset(shards_cursor *c) {
  ds_shard_listing_free(&c->list);
  c->i = c->end = 0;
  sqlite3_free(c->path_arg);
  sqlite3_free(c->options_arg);
  c->path_arg = c->options_arg = NULL;
}

static int shards_close(sqlite3_vtab_cursor *cur) {
  shards_reset((shards_cursor *)cur);
  sqlite3_free(cur);
  return SQLITE_OK;
}

static int shards_filter(sqlite3_vtab_cursor *cur, int idxNum, const char *idxStr,
                         int argc, sqlite3_value **argv) {
  (void)idxStr;
  shards_cursor *c = (shards_cursor *)cur;
  shards_reset(c);
  char *err = NULL, *key = NULL;
  const char *path, *opts;
  ds_plan_args a;
  int rc = ds_plan_decode(idxNum, argc, argv, 2, &a, &err);
  if (rc == 0)
    rc = ds_tvf_call((const sqlite3_value *const *)a.args,
                     "dataset_shards('path' [, 'name=value,...'])", &path, &opts,
                     &c->path_arg, &c->options_arg, &key, &err);
  free(key);
  if (rc == 0) rc = collect(path, opts, &c->list, &err);
  if (rc == 0) { /* LIMIT / OFFSET */
    size_t n = c->list.n;
    c->i = a.offset < n ? (size_t)a.offset : n;
    c->end = a.limit < n - c->i ? c->i + (size_t)a.limit : n;
  }
  ds_plan_args_free(&a);
  if (rc) {
    ds_shard_listing_free(&c->list);
    return ds_vtab_error(cur->pVtab, MOD, err);
  }
  return SQLITE_OK;
}

static int shards_next(sqlite3_vtab_cursor *cur) {
  ((shards_cursor *)cur)->i++;
  return SQLITE_OK;
}

static int shards_eof(sqlite3_vtab_cursor *cur) {
  shards_cursor *c = (shards_cursor *)cur;
  return c->i >= c->end;
}

/* The options that open only entry e, numbered as the whole dataset
 * (core/row_window.h), plus atlas's shared dictionary: a task adds them to
 * the format's own options. */
static void open_options(const ds_shard_listing *l, const ds_shard_entry *e,
                         sqlite3_context *ctx) {
  char *s = sqlite3_mprintf("shard=%llu, first_rowid=%llu, shard_index=%llu, rows=%llu",
                            (unsigned long long)e->shard, (unsigned long long)e->first_rowid,
                            (unsigned long long)e->shard_index, (unsigned long long)e->rows);
  if (s && l->layout == DS_LAYOUT_INTERLEAVED && l->nshards > 1)
    s = sqlite3_mprintf("%z, rowid_step=%llu", s, (unsigned long long)l->nshards);
  if (s && e->dictionary) s = sqlite3_mprintf("%z, dictionary=%Q", s, e->dictionary);
  if (s) sqlite3_result_text(ctx, s, -1, sqlite3_free);
  else sqlite3_result_error_nomem(ctx);
}

static int shards_column(sqlite3_vtab_cursor *cur, sqlite3_context *ctx, int col) {
  shards_cursor *c = (shards_cursor *)cur;
  const ds_shard_entry *e = &c->list.items[c->i];
  switch (col) {
  case COL_SHARD: sqlite3_result_int64(ctx, (sqlite3_int64)e->shard); break;
  case COL_PATH: sqlite3_result_text(ctx, e->path, -1, SQLITE_TRANSIENT); break;
  case COL_FIRST_ROWID: sqlite3_result_int64(ctx, (sqlite3_int64)e->first_rowid); break;
  case COL_ROWS: sqlite3_result_int64(ctx, (sqlite3_int64)e->rows); break;
  case COL_BYTES: sqlite3_result_int64(ctx, (sqlite3_int64)e->bytes); break;
  case COL_SHARD_INDEX: sqlite3_result_int64(ctx, (sqlite3_int64)e->shard_index); break;
  case COL_OPEN_OPTIONS: open_options(&c->list, e, ctx); break;
  case COL_DATASET: sqlite3_result_text(ctx, c->path_arg, -1, SQLITE_TRANSIENT); break;
  case COL_OPTIONS:
    if (c->options_arg) sqlite3_result_text(ctx, c->options_arg, -1, SQLITE_TRANSIENT);
    break;
  }
  return SQLITE_OK;
}

static int shards_rowid(sqlite3_vtab_cursor *cur, sqlite3_int64 *rowid) {
  *rowid = (sqlite3_int64)((shards_cursor *)cur)->i;
  return SQLITE_OK;
}

static sqlite3_module shards_module = {
    .iVersion = 0,
    .xCreate = NULL, /* table-valued only */
    .xConnect = shards_connect,
    .xBestIndex = shards_best_index,
    .xDisconnect = shards_disconnect,
    .xDestroy = shards_disconnect,
    .xOpen = shards_open,
    .xClose = shards_close,
    .xFilter = shards_filter,
    .xNext = shards_next,
    .xEof = shards_eof,
    .xColumn = shards_column,
    .xRowid = shards_rowid,
};

int ds_dataset_shards_register(sqlite3 *db) {
  return sqlite3_create_module_v2(db, "dataset_shards", &shards_module, NULL, NULL);
}
