/* list.h - the table-valued functions that answer with a short list of
 * rows computed whole in xFilter (datadings_verify, bcolz_attrs,
 * bcolz_stats, dataset_info): one sqlite3_module for all of them, and a
 * ds_list_def per function saying its columns and how to fill and show
 * its rows (dataset_shards too). The HIDDEN argument columns (path,
 * options) come after the visible ones (more HIDDEN columns may follow); the
 * helper plans (sql/plan.c, with LIMIT/OFFSET applied to the list), reads
 * the arguments, runs collect inside an interrupt scope (vtab/interrupt.h),
 * serves the argument columns and the rowid (the row's position). */
#ifndef DS_LIST_H
#define DS_LIST_H

#include <stddef.h>

#include "core/option_spec.h"
#include "core/value.h"
#include "sql/row_table.h"
#include "sql/sqlite_api.h"

typedef struct ds_list_cursor ds_list_cursor;

typedef struct ds_list_def {
  const char *name;   /* the function's name: module name and error prefix */
  const char *schema; /* CREATE TABLE x(..., path HIDDEN [, options HIDDEN]) */
  int ncols;          /* columns before the HIDDEN arguments */
  int nargs;          /* 1: path; 2: path and options */
  const char *usage;  /* shown when no path is given */
  double rows;        /* the cost model's row estimate */
  /* Fill c->rows / c->n for path and opts (NULL when not given). 0, or -1
   * with *err (malloc'd). Rows may use c->arena. */
  int (*collect)(ds_list_cursor *c, const char *path, const char *opts, char **err);
  /* Column col of row i: col < ncols, or ncols + k for the k-th column
   * declared after the HIDDEN arguments (more HIDDEN columns: SQLite binds
   * a call's arguments to the first HIDDEN ones). */
  void (*column)(ds_list_cursor *c, size_t i, int col, sqlite3_context *ctx);
  /* Free c->rows[0..n) (NULL: free(c->rows) only). */
  void (*clear)(ds_list_cursor *c);
  /* Its own options, listed after the usage (NULL: none listed). */
  const ds_opt_group *options;
} ds_list_def;

struct ds_list_cursor {
  ds_row_cursor row; /* the current row; one past the last (LIMIT/OFFSET) */
  void *rows;       /* the def's rows */
  size_t n;         /* rows held */
  ds_arena arena;   /* for values the rows point into */
  char *path_arg, *options_arg;
};

/* Register def as a table-valued function on db (def must outlive db). */
int ds_list_register(sqlite3 *db, const ds_list_def *def);

/* Append one zeroed row of `size` bytes to c->rows; NULL when out of
 * memory. */
void *ds_list_add(ds_list_cursor *c, size_t size);

/* A TEXT value of s copied into the cursor's arena (NULL value when out of
 * memory). */
void ds_list_text(ds_list_cursor *c, const char *s, ds_value *v);

#endif
