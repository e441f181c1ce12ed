/* dataset_shards.c - dataset_shards(path [, options]): one row per shard of
 * a dataset of any format, or per range of rows with split_rows=N; what a
 * scheduler reads to hand out work (formats/shards.h does the listing,
 * from indexes only; vtab/list.c the table-valued function).
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
 * Options: split_rows=N, and any option of the format's own module (its
 * row's shard_options in vtab/format_table.c), so one
 * options string serves both; of those only bagz limits= and layout=
 * change the listing (with layout=interleaved, row i of an entry has
 * rowid first_rowid + i * shards). The others are checked by name only. */
#include <stdlib.h>
#include <string.h>

#include "core/common.h"
#include "core/options.h"
#include "sql/sqlite_api.h"
#include "formats/detect.h"
#include "formats/shards.h"
#include "vtab/format_table.h"
#include "vtab/list.h"
#include "vtab/module_help.h"
#include "vtab/module_options.h"
#include "vtab/modules.h"
#include "vtab/vtab_util.h"

#define MOD "dataset_shards"

/* Columns as ds_list_def.column numbers them: the visible ones, then
 * those after the HIDDEN arguments dataset and options. */
enum {
  COL_SHARD, COL_PATH, COL_FIRST_ROWID, COL_ROWS, COL_BYTES, COL_SHARD_INDEX,
  COL_OPEN_OPTIONS
};

/* split_rows=N, and the options of the format's module its specs take in
 * the dataset_shards form (DS_FORM_SHARDS). */
static const ds_opt_spec shards_specs[] = {
    {.name = "split_rows", .forms = DS_FORM_SHARDS, .kind = DS_OPT_INT, .min = 1,
     .max = INT64_MAX, .def = 0, .def_text = "one row per shard",
     .help = "one row per range of at most this many rows"},
    {0}};
static const ds_opt_group shards_groups[] = {{shards_specs, 0}, {0}};
#define MAX_GROUPS 12

/* One row: a listing entry (its strings owned) and the rowid step of its
 * rows (1, or the shard count of interleaved bagz). */
typedef struct shard_row {
  ds_shard_entry e;
  uint64_t step;
} shard_row;

/* Parse and check the options string for a dataset of the format of row. */
static int read_options(const char *opts, const ds_format_row *row,
                        ds_shards_options *so, char **err) {
  ds_options o = {0};
  int64_t split = 0;
  memset(so, 0, sizeof *so);
  ds_opt_group groups[MAX_GROUPS] = {{shards_specs, 0}};
  size_t n = 1;
  const ds_opt_group *g = ds_format_option_groups(row);
  for (; g && g->specs && n + 1 < MAX_GROUPS; g++)
    groups[n++] = (ds_opt_group){g->specs, 0};
  int rc = opts ? ds_options_add_list(&o, opts, err) : 0;
  if (rc == 0) rc = ds_opt_check(groups, DS_FORM_SHARDS, &o, err);
  if (rc == 0) rc = ds_opt_read(shards_groups, &o, &split, err);
  /* what the format's options change in the listing (bagz limits= and
   * layout=, a dictionary=) */
  if (rc == 0 && row->listing_options) rc = row->listing_options(&o, so, err);
  so->split_rows = (uint64_t)split;
  ds_options_free(&o);
  return rc ? -1 : 0;
}

/* The listing of `path` with the options string `opts` (may be NULL). */
static int list(const char *path, const char *opts, ds_shard_listing *l, char **err) {
  ds_detected d;
  const ds_format_row *row;
  ds_shards_options so;
  if (ds_format_detect(path, &d, &row, err)) return -1;
  if (read_options(opts, row, &so, err)) {
    free(so.dictionary);
    ds_err_prefix(err, path);
    return -1;
  }
  int rc = ds_shards_list(path, &d, &so, l, err);
  free(so.dictionary);
  return rc;
}

/* ds_list_def.collect: the listing's entries become the rows (their
 * strings move over). */
static int shards_collect(ds_list_cursor *c, const char *path, const char *opts,
                          char **err) {
  ds_shard_listing l = {0};
  if (list(path, opts, &l, err)) return -1;
  uint64_t step = l.layout == DS_LAYOUT_INTERLEAVED && l.nshards > 1 ? l.nshards : 1;
  size_t i = 0;
  for (; i < l.n; i++) {
    shard_row *r = ds_list_add(c, sizeof *r);
    if (!r) break;
    r->e = l.items[i];
    r->step = step;
  }
  /* not moved: out of memory */
  for (size_t j = i; j < l.n; j++) ds_shard_entry_free(&l.items[j]);
  free(l.items);
  return i == l.n ? 0 : ds_err(err, "out of memory");
}

/* ds_list_def.clear: the rows' strings. */
static void shards_clear(ds_list_cursor *c) {
  shard_row *rows = c->rows;
  for (size_t i = 0; i < c->n; i++) ds_shard_entry_free(&rows[i].e);
}

/* The options that open only entry r, numbered as the whole dataset
 * (core/row_window.h), plus atlas's shared dictionary: a task adds them to
 * the format's own options. */
static void open_options(const shard_row *r, sqlite3_context *ctx) {
  const ds_shard_entry *e = &r->e;
  char *s = sqlite3_mprintf("shard=%llu, first_rowid=%llu, shard_index=%llu, rows=%llu",
                            (unsigned long long)e->shard, (unsigned long long)e->first_rowid,
                            (unsigned long long)e->shard_index, (unsigned long long)e->rows);
  if (s && r->step > 1) s = sqlite3_mprintf("%z, rowid_step=%llu", s, (unsigned long long)r->step);
  if (s && e->dictionary) s = sqlite3_mprintf("%z, dictionary=%Q", s, e->dictionary);
  if (s) sqlite3_result_text(ctx, s, -1, sqlite3_free);
  else sqlite3_result_error_nomem(ctx);
}

/* ds_list_def.column */
static void shards_column(ds_list_cursor *c, size_t i, int col, sqlite3_context *ctx) {
  const shard_row *r = &((const shard_row *)c->rows)[i];
  const ds_shard_entry *e = &r->e;
  switch (col) {
  case COL_SHARD: sqlite3_result_int64(ctx, (sqlite3_int64)e->shard); break;
  case COL_PATH: sqlite3_result_text(ctx, e->path, -1, SQLITE_TRANSIENT); break;
  case COL_FIRST_ROWID: sqlite3_result_int64(ctx, (sqlite3_int64)e->first_rowid); break;
  case COL_ROWS: sqlite3_result_int64(ctx, (sqlite3_int64)e->rows); break;
  case COL_BYTES:
    if (e->bytes == DS_BYTES_UNKNOWN) sqlite3_result_null(ctx); /* http(s) folder */
    else sqlite3_result_int64(ctx, (sqlite3_int64)e->bytes);
    break;
  case COL_SHARD_INDEX: sqlite3_result_int64(ctx, (sqlite3_int64)e->shard_index); break;
  case COL_OPEN_OPTIONS: open_options(r, ctx); break;
  }
}

/* A listing costs about one file open per shard. */
static const ds_list_def shards_def = {
    MOD,
    "CREATE TABLE x(shard INTEGER, path TEXT, first_rowid INTEGER, rows INTEGER, "
    "bytes INTEGER, dataset HIDDEN, options HIDDEN, shard_index INTEGER HIDDEN, "
    "open_options TEXT HIDDEN)",
    5, 2, "dataset_shards('path' [, 'name=value,...'])", 1000, shards_collect,
    shards_column, shards_clear, shards_groups};

int ds_dataset_shards_register(sqlite3 *db) { return ds_list_register(db, &shards_def); }

/* datasets_help(): the cross-format modules (datasets.so only). */
const ds_help_entry ds_dataset_help[] = {
    {"module", "dataset", "CREATE VIRTUAL TABLE t USING dataset('path', name=value, ...): "
     "the format's module, detected", NULL, 0},
    {"function", "dataset_info", "SELECT * FROM dataset_info('path' [, 'name=value,...']): "
     "what a dataset is", NULL, 0},
    {"function", "dataset_shards", "SELECT * FROM dataset_shards('path' [, 'name=value,...']): "
     "one row per shard or split_rows range", shards_groups, DS_FORM_SHARDS},
    {NULL, NULL, NULL, NULL, 0}};
