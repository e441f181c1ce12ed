/* plan.h - the xBestIndex / xFilter logic every module shares.
 *
 * What a table can answer without reading rows it does not return:
 *   rowid = v, rowid IN (...)    (IN taken all at once: sqlite3_vtab_in)
 *   rowid > >= < <= v            (one lower and one upper bound)
 *   <extra column> = v / IN (...) for up to DS_PLAN_MAX_EXTRA columns the
 *                                module names (bagz: shard, record)
 *   ORDER BY rowid [DESC]        (rows come in rowid order anyway)
 *   LIMIT / OFFSET               only when every other WHERE term on the
 *                                table is answered here and the ORDER BY is
 *                                consumed: SQLite 3.40 offers LIMIT even when
 *                                it still has to filter or sort afterwards.
 * plus the HIDDEN argument columns of the table-valued form (path,
 * options), which must be given with =.
 *
 * idxNum encoding (what EXPLAIN QUERY PLAN shows; idxStr spells it out):
 *   bit 0 rowid=   bit 1 rowid IN   bit 2 lower bound  bit 3 lower inclusive
 *   bit 4 upper bound  bit 5 upper inclusive  bit 6 LIMIT  bit 7 OFFSET
 *   bit 8 DESC   bit 9 the module's own flag   bits 12+2k: extra column k =   bit 13+2k: extra k IN
 *   bits 24+a: argument column a given.
 * xFilter's argv holds, in this order: the argument columns, the rowid
 * value(s), lower bound, upper bound, each extra column, LIMIT, OFFSET. */
#ifndef DS_PLAN_H
#define DS_PLAN_H

#include <stddef.h>
#include <stdint.h>

#include "sqlite_api.h"

#define DS_PLAN_MAX_EXTRA 4
#define DS_PLAN_MAX_ARGS 2

#define DS_PLAN_ROWID_EQ 0x1
#define DS_PLAN_ROWID_IN 0x2
#define DS_PLAN_LO 0x4
#define DS_PLAN_LO_INCL 0x8
#define DS_PLAN_HI 0x10
#define DS_PLAN_HI_INCL 0x20
#define DS_PLAN_LIMIT 0x40
#define DS_PLAN_OFFSET 0x80
#define DS_PLAN_DESC 0x100
/* free for the module's own use (plan.c never sets or reads it) */
#define DS_PLAN_MODULE_FLAG 0x200
#define DS_PLAN_EXTRA_EQ(k) (0x1000 << (2 * (k)))
#define DS_PLAN_EXTRA_IN(k) (0x2000 << (2 * (k)))
#define DS_PLAN_ARG(a) (0x1000000 << (a))

typedef struct ds_plan_extra {
  int column;            /* column number in the declared schema */
  const char *name;      /* for idxStr */
  double rows_per_value; /* expected matches per value */
  double setup_cost;     /* one-time cost to answer (e.g. build an index) */
} ds_plan_extra;

typedef struct ds_plan_config {
  double nrows;    /* rows in the table (an estimate when unknown) */
  double row_cost; /* cost of producing one row */
  const ds_plan_extra *extra;
  int nextra;
  const int *arg_columns; /* HIDDEN argument columns (table-valued form) */
  int nargs;
  int nrequired_args;     /* the first this many must be present */
} ds_plan_config;

/* Fill the index info. Returns SQLITE_OK, or SQLITE_CONSTRAINT when a
 * required argument is not usable in this plan. */
int ds_plan_best_index(sqlite3_index_info *info, const ds_plan_config *cfg);

/* What xFilter was asked, decoded from idxNum and argv. */
typedef struct ds_plan_args {
  sqlite3_value *args[DS_PLAN_MAX_ARGS]; /* argument columns or NULL */
  int empty;          /* the constraints can match no row */
  int has_ids;        /* rowid = / IN given: ids[0..nids) (unsorted) */
  uint64_t *ids;      /* only values that can be row numbers: &one for a
                         single value, else malloc'd */
  size_t nids;
  uint64_t one;
  uint64_t lo, hi;    /* rows [lo, hi) from range constraints */
  int desc;
  uint64_t offset;
  uint64_t limit;     /* UINT64_MAX: none */
  sqlite3_value *extra[DS_PLAN_MAX_EXTRA]; /* value, or the IN list */
  int extra_in[DS_PLAN_MAX_EXTRA];
} ds_plan_args;

/* Decode. nargs is the config's number of argument columns. 0 ok, -1 with
 * *err (malloc'd) set on out-of-memory or a bad IN list. */
int ds_plan_decode(int idxNum, int argc, sqlite3_value **argv, int nargs,
                   ds_plan_args *a, char **err);
void ds_plan_args_free(ds_plan_args *a);

/* Call fn for every value of an extra constraint (one value, or each value
 * of an IN list). Stops and returns fn's result when it is non-zero. */
int ds_plan_each_value(sqlite3_value *v, int is_in,
                       int (*fn)(void *ctx, sqlite3_value *v), void *ctx);

/* For an INTEGER-typed constraint (one value or an IN list): a malloc'd
 * array of n flags, flags[x] = 1 for every value x in [0, n) named
 * (e.g. the shards of `shard IN (...)`). NULL when out of memory. */
unsigned char *ds_plan_flag_ints(sqlite3_value *v, int is_in, size_t n);
/* The same for values [first, first + n): flags[x - first]. */
unsigned char *ds_plan_flag_ints_from(sqlite3_value *v, int is_in, uint64_t first,
                                      size_t n);

/* Apply SQLite's INTEGER affinity to a constraint value: 1 and *out set
 * when it is an integer (or an integral REAL / numeric TEXT), else 0. */
int ds_plan_int_value(sqlite3_value *v, int64_t *out);

#endif
