/* table.h - the skeleton every dataset module (bagz, datadings, atlas,
 * bcolz) stands on: one base struct for the table and one for the cursor,
 * and the steps every module would otherwise repeat, written once:
 *
 *   xConnect   ds_table_connect: the CREATE form opens the dataset, the
 *              table-valued form has the HIDDEN path/options columns; the
 *              module's declare hook declares its columns
 *   xBestIndex ds_table_plan (core of the module's cost model)
 *   xFilter    ds_cursor_filter: interrupt scope, plan decoding, the
 *              dataset for this call, the row set (rowid = / IN / ranges,
 *              the module's own lookups, shard flags, clip, DESC, LIMIT,
 *              OFFSET), then the module's start hook and the first row
 *   xNext      ds_cursor_next: next row and the module's arrive hook
 *              (nothing is mapped: readers pread through per-cursor io
 *              windows, so there are no pages to hand back)
 *   xEof, xRowid, xOpen, xClose, xDisconnect: here; xRowid and the
 *              plan's rowids go through the dataset's row window
 *              (options shard, first_rowid, rowid_step, shard_index,
 *              rows: core/row_window.h), so a table over one shard's
 *              files keeps the whole dataset's numbers
 *   xColumn    the module's; ds_cursor_arg_column serves path/options.
 *
 * A module puts `ds_table base` / `ds_cursor base` first in its own table
 * and cursor structs, fills a ds_table_def (sizes and hooks), builds its
 * sqlite3_module with DS_TABLE_MODULE(its xBestIndex, its xColumn) and
 * registers it with the def as client data. Writers plug in through
 * def->update and DS_TABLE_WRITER_MODULE (vtab/table_writer.h and
 * ARCHITECTURE.md). */
#ifndef DS_TABLE_H
#define DS_TABLE_H

#include <stddef.h>
#include <stdint.h>

#include "core/options.h"
#include "core/rowset.h"
#include "core/shard_spec.h"
#include "sql/plan.h"
#include "sql/sqlite_api.h"
#include "vtab/dataset.h"

typedef struct ds_table ds_table;
typedef struct ds_cursor ds_cursor;

/* The arguments of one xFilter call (for the start hook). */
typedef struct ds_filter_call {
  int idxNum;
  const char *idxStr;
  int argc;
  sqlite3_value **argv;
} ds_filter_call;

/* What a module's select hook says about the rows its own constraints
 * pick (the skeleton adds rowid =, IN and ranges, clip, DESC, LIMIT and
 * OFFSET). Zeroed before the call. */
typedef struct ds_rows {
  uint64_t total;          /* rows in the dataset (required) */
  int have_ids;            /* the module looked rows up (key =, record =): */
  uint64_t *ids;           /*   malloc'd, any order; the skeleton takes it */
  size_t nids, cap;        /*   (ds_rows_add grows it geometrically) */
  unsigned char *shard_on; /* shard = / IN: flags of the shards picked
                              (malloc'd, taken), or NULL */
  size_t nshards;
  int interleaved;         /* shard rows are s + j*nshards (else ranges) */
  const uint64_t *first;   /* first global row of each shard */
  const uint64_t *counts;  /* rows of each shard */
} ds_rows;

typedef struct ds_table_def {
  const char *name;           /* module name: the prefix of every error */
  const ds_dataset_ops *ops;  /* opening, closing, change detection */
  size_t table_size;          /* the module's table struct (ds_table first) */
  size_t cursor_size;         /* its cursor struct (ds_cursor first) */
  /* xCreate / xConnect after the table is allocated (and in the CREATE
   * form its dataset opened, options o): set the argument columns of the
   * table-valued form, declare the columns (ds_table_declare). Required. */
  int (*declare)(ds_table *t, const ds_options *o, char **err);
  /* Every other hook may be NULL. */
  void (*table_free)(ds_table *t);   /* the module's part of xDisconnect */
  void (*cursor_init)(ds_cursor *c); /* xOpen, after zeroing */
  void (*cursor_reset)(ds_cursor *c); /* drop what one xFilter set up */
  void (*cursor_free)(ds_cursor *c); /* xClose, after cursor_reset */
  /* xFilter, the dataset attached (c->ds): the module's own constraints
   * (a->extra[k]) as rows, and r->total. 0, or -1 with *err. NULL: every
   * row of ds_rows.total = 0 (a module without rows). */
  int (*select)(ds_cursor *c, ds_plan_args *a, ds_rows *r, char **err);
  /* The shard of row g (for shard flags combined with a rowid list);
   * SIZE_MAX when g is out of range. */
  size_t (*shard_of)(ds_cursor *c, uint64_t g);
  /* xFilter, after the row set is built and before the first row. */
  int (*start)(ds_cursor *c, const ds_filter_call *call, char **err);
  /* The next row number: 1 and *g, 0 at the end, -1 and *err. NULL: the
   * row set's iterator (bagz takes rows from its read-ahead). */
  int (*fetch)(ds_cursor *c, uint64_t *g, char **err);
  /* The cursor moves to row g (c->row still holds the previous one). */
  void (*arrive)(ds_cursor *c, uint64_t g);
  /* Replaces the whole of xNext (bcolz's filtered scans); gets the
   * cursor, returns an SQLite result code. */
  int (*next)(ds_cursor *c);
  /* Writing modules (vtab/table_writer.h): an INSERT's row to the format
   * writer (xUpdate); NULL for read-only modules. The transaction methods
   * are table_writer's, the same for every module. */
  int (*update)(ds_table *t, int argc, sqlite3_value **argv, sqlite3_int64 *rowid,
                char **err);
  /* What hooks shared by several modules need of this one (the record
   * modules': a ds_record_module, vtab/record_module.h), or NULL. */
  const void *module;
  /* The sqlite3_module registered under `name` with this def as its aux
   * (DS_TABLE_MODULE / DS_TABLE_WRITER_MODULE); `dataset` forwards to it. */
  const sqlite3_module *methods;
  /* The format's other modules and functions, registered after it
   * (datadings_verify; bcolz_attrs, bcolz_stats, bcolz_decoded), or NULL.
   * Returns an SQLite result code. */
  int (*register_more)(sqlite3 *db);
} ds_table_def;

/* The sizes of a module's table and cursor structs, for a ds_table_def. */
#define DS_TABLE_SIZES(table_type, cursor_type) \
  .table_size = sizeof(table_type), .cursor_size = sizeof(cursor_type)

struct ds_table {
  sqlite3_vtab base;
  const ds_table_def *def;
  sqlite3 *db;        /* for interrupt checks (vtab/interrupt.h) */
  int tvf;            /* table-valued form: the dataset comes with xFilter */
  ds_dataset *ds;     /* CREATE form: the table's; tvf: the last one used */
  int col_path, col_options; /* HIDDEN argument columns, -1 when absent */
  char *unavailable;  /* CREATE form reconnected without its dataset: why */
  int declared;       /* ds_table_declare succeeded (it may run once) */
  char *captured;     /* a table of ds_table_declared: the CREATE TABLE text
                         its declare hook gave (not declared to SQLite) */
  int capture;
  uint64_t publishes; /* writer tables: the writer's publishes ds shows */
  void *spare_cursor; /* a closed cursor's memory for the next xOpen (SQLite
                         opens and closes a cursor per statement run: a point
                         lookup then pays no allocation), or NULL */
};

struct ds_cursor {
  sqlite3_vtab_cursor base;
  ds_dataset *ds;     /* the dataset of this xFilter (a reference) */
  ds_rowset rs;
  ds_rowiter it;
  int eof;
  uint64_t row;       /* the current row (rowid) */
  char *path_arg, *options_arg; /* the HIDDEN columns (sqlite3_malloc'd) */
  int filtered;       /* an xFilter ran since the last reset: state to drop */
};

/* The module's table / cursor of an SQLite one. */
static inline ds_table *ds_table_of(sqlite3_vtab_cursor *cur) {
  return (ds_table *)cur->pVtab;
}

/* xCreate and xConnect of every module: ds_table_open, def->declare (the
 * def is the module's aux pointer), ds_table_done. */
/* 1 while a CREATE statement runs on db (xCreate, not a reconnect). */
int ds_table_creating(sqlite3 *db);
int ds_table_connect(sqlite3 *db, void *aux, int argc, const char *const *argv,
                     sqlite3_vtab **out, char **pzErr);

/* The module's own lookups (key =, record =): for each value of an extra
 * constraint (one value or an IN list) fn adds the matching rows with
 * ds_rows_add; r->have_ids is set. 0, or -1 with *err. */
typedef int (*ds_lookup_fn)(void *ctx, sqlite3_value *v, ds_rows *r, char **err);
int ds_rows_lookup(ds_rows *r, sqlite3_value *v, int is_in, ds_lookup_fn fn, void *ctx,
                   char **err);
/* Add row g to the module's rows. 0, or -1 with *err. */
int ds_rows_add(ds_rows *r, uint64_t g, char **err);

/* Parts of xCreate / xConnect, first step: allocate def->table_size bytes (zeroed).
 * argc <= 3 is the table-valued form (columns path/options -1 until the
 * module sets them); otherwise the CREATE form, whose dataset is opened
 * and whose parsed options land in *o (free with ds_options_free; zeroed
 * in the table-valued form). 0, or -1 with *err; *out is set either way
 * unless out of memory (ds_table_done frees it). */
int ds_table_open(sqlite3 *db, const ds_table_def *def, int argc,
                  const char *const *argv, ds_options *o, ds_table **out,
                  char **err);
/* What a CREATE-form table of def over `path` with the parsed options o
 * declares, without SQLite (dataset_info): the dataset opened once (*ds,
 * a reference the caller drops with ds_dataset_unref) and the CREATE
 * TABLE text the module's declare hook gives (*sql, malloc'd). 0, or -1
 * with *err. */
int ds_table_declared(const ds_table_def *def, const char *path, const ds_options *o,
                      ds_dataset **ds, char **sql, char **err);
/* The table-valued form's HIDDEN argument columns. */
void ds_table_arg_columns(ds_table *t, int path, int options);
/* Declare the columns. 0, or -1 with *err. */
int ds_table_declare(ds_table *t, const char *sql, char **err);
/* xCreate / xConnect, last step: rc 0 hands the table to SQLite (direct
 * only: no use from views or triggers); otherwise it is freed and err
 * (malloc'd, may be NULL) becomes "<module>: err" in *pzErr. Returns the
 * SQLite result code. */
int ds_table_done(ds_table *t, int rc, char *err, sqlite3_vtab **out, char **pzErr);

/* xBestIndex with the argument columns of the form: nrows rows at cost
 * 1.0 each, and the module's extra columns. */
int ds_table_plan(ds_table *t, sqlite3_index_info *info, double nrows,
                  const ds_plan_extra *extra, int nextra);

/* Set ctx to the path or options argument when col is one of the HIDDEN
 * argument columns: 1, else 0. */
int ds_cursor_arg_column(sqlite3_vtab_cursor *cur, sqlite3_context *ctx, int col);

/* Report err (malloc'd) as "<module>: err" on the table; SQLITE_ERROR. */
int ds_cursor_error(ds_cursor *c, char *err);

/* The methods every dataset module shares. */
int ds_table_disconnect(sqlite3_vtab *vtab);
int ds_cursor_open(sqlite3_vtab *vtab, sqlite3_vtab_cursor **out);
int ds_cursor_close(sqlite3_vtab_cursor *cur);
int ds_cursor_filter(sqlite3_vtab_cursor *cur, int idxNum, const char *idxStr,
                     int argc, sqlite3_value **argv);
int ds_cursor_next(sqlite3_vtab_cursor *cur);
int ds_cursor_eof(sqlite3_vtab_cursor *cur);
int ds_cursor_rowid(sqlite3_vtab_cursor *cur, sqlite3_int64 *rowid);

/* The dataset's number of the files' shard s (option shard=K adds K:
 * core/row_window.h); the shard column of a module. */
uint64_t ds_cursor_shard(const ds_cursor *c, size_t s);
/* ds_table_def.select's part for rows kept in shards: r's total, shards
 * and layout from map, and with a shard = / IN constraint (shard, not
 * NULL) the flags of the shards it picks. 0, or -1 (out of memory). */
int ds_rows_shard_map(ds_cursor *c, const ds_shard_map *map, sqlite3_value *shard,
                      int shard_in, ds_rows *r, char **err);
/* A shard = / IN constraint's values as flags of the files' n shards
 * (ds_plan_flag_ints less the window's shard). NULL: out of memory. */
unsigned char *ds_cursor_shard_flags(const ds_cursor *c, sqlite3_value *v, int is_in,
                                     size_t n);

/* The default xNext step: the next row (fetch hook or iterator), the
 * arrive hook. 0, or -1 with *err. */
int ds_cursor_step(ds_cursor *c, char **err);

/* The shared part of a module's sqlite3_module, for designated
 * initializers (a writer uses DS_TABLE_WRITER_MODULE, table_writer.h). */
#define DS_TABLE_METHODS \
  .xDestroy = ds_table_disconnect, DS_TABLE_METHODS_BUT_DESTROY
/* The same without xDestroy (a writer drops its writer there). */
#define DS_TABLE_METHODS_BUT_DESTROY DS_TABLE_CURSOR_METHODS(ds_cursor_next)
/* The same with the module's own xNext. */
#define DS_TABLE_CURSOR_METHODS(next)                                     \
  .xDisconnect = ds_table_disconnect,                                     \
  .xOpen = ds_cursor_open, .xClose = ds_cursor_close,                     \
  .xFilter = ds_cursor_filter, .xNext = next,                             \
  .xEof = ds_cursor_eof, .xRowid = ds_cursor_rowid

/* A read-only module: its own xBestIndex and xColumn. xCreate and
 * xConnect are one function, so that a table-valued call reaches it; the
 * module registers with its ds_table_def as aux. */
#define DS_TABLE_MODULE(best_index, column)                                   \
  {.iVersion = 0, .xCreate = ds_table_connect, .xConnect = ds_table_connect, \
   .xBestIndex = best_index, .xColumn = column, DS_TABLE_METHODS}

#endif
