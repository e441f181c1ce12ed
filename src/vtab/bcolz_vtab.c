/* bcolz_vtab.c - the `bcolz`, `bcolz_attrs` and `bcolz_stats` virtual
 * tables: SQL over bcolz carrays and ctables (blosc-compressed columns).
 * With mode=create|replace the CREATE form writes a new table
 * (vtab/bcolz_write.c).
 *
 *   SELECT row FROM bcolz('data/table') LIMIT 3;
 *   CREATE VIRTUAL TABLE temp.t USING bcolz('data/table' [, bytes=blob]);
 *   SELECT label, sum(score) FROM t WHERE flag GROUP BY label;
 *   SELECT * FROM bcolz_attrs('data/table');
 *   SELECT * FROM bcolz_stats('data/table');
 *
 * Table-valued form: row TEXT (the row as a JSON object; for a carray the
 * value) and the HIDDEN arguments path and options. CREATE form: one column
 * per ctable column in the table's order (a carray gives `value`), typed by
 * dtype. Options: bytes=text|blob (S columns as TEXT, BLOB when not UTF-8,
 * or always BLOB), cache_mb=N (decompressed chunks kept for lookups).
 *
 * Only the columns a query reads are decompressed: each column keeps the
 * chunk it last decompressed, so a scan decompresses every chunk of the
 * columns it uses once, and never touches the others. rowid =, IN, ranges
 * and LIMIT/OFFSET pick the rows (sql/plan.c, vtab/table.c); a lookup of a few rows
 * reads each row's chunk from the table's bounded LRU cache of decompressed
 * chunks (formats/bcolz/bcolz_cache.c, cache_mb MiB), or with cache_mb=0
 * decompresses only the Blosc block holding it (blosc_getitem).
 *
 * Pushdown (CREATE form): `col = < <= > >= ?` (BETWEEN arrives as >= and
 * <=), `col IS NULL`, `col IS NOT NULL` on scalar numeric columns (ints,
 * uints, floats, bool, timedelta) and on S / U text columns (BINARY
 * collation), combined with AND, up to MAX_PUSHED. The plan is sql/plan.c's
 * idxNum/idxStr plus:
 *   idxNum bit DS_PLAN_MODULE_FLAG (0x200): comparisons are pushed;
 *   idxStr  "<plan>; pushed: x>? AND name IS NOT NULL #1>,3n"
 *           after the last '#': <column number><op> per comparison, ','
 *           between, ops = < l(<=) > g(>=) N(IS NULL) n(IS NOT NULL);
 *   argv    their values, in that order, after plan.c's arguments.
 * They keep omit = 0: SQLite still checks every row returned, so the
 * filters (formats/bcolz/bcolz_filter.c) are pre-filters that may keep a row they
 * cannot judge but never drop one SQLite would keep; LIMIT/OFFSET then stay
 * with SQLite. A scan of one ascending rowid range tests the first
 * comparison on whole decompressed chunks of its column, the others only on
 * the rows that pass, and decompresses the selected columns' chunks only for
 * rows that pass them all (late materialization); other row sets test row
 * by row. bcolz_decoded(path) reports the decompressions per column. */
#include <stdlib.h>
#include <string.h>

#include "core/abspath.h"
#include "core/common.h"
#include "core/value_json.h"
#include "core/options.h"
#include "core/rowset.h"
#include "formats/bcolz/bcolz.h"
#include "formats/bcolz/bcolz_cache.h"
#include "formats/bcolz/bcolz_cell.h"
#include "formats/bcolz/bcolz_filter.h"
#include "formats/bcolz/bcolz_meta.h"
#include "sql/plan.h"
#include "sql/sqlite_api.h"
#include "sql/value_sql.h"
#include "vtab/bcolz_options.h"
#include "vtab/bcolz_write.h"
#include "vtab/dataset.h"
#include "vtab/interrupt.h"
#include "vtab/list.h"
#include "vtab/module_help.h"
#include "vtab/module_options.h"
#include "vtab/modules.h"
#include "vtab/table.h"
#include "vtab/vtab_util.h"

#define MOD "bcolz"
/* Row lists shorter than this are read block by block, not chunk by chunk. */
#define FEW_ROWS 64
/* At most this many column comparisons are pushed into one scan. */
#define MAX_PUSHED 16

typedef struct bz_dataset {
  ds_dataset base; /* refcount, cache key, path, change detection */
  bcolz_table *table;
  bz_opts opts;
  int flags; /* BCOLZ_BYTES_BLOB */
  uint64_t cache_budget;  /* bytes; 0: lookups use blosc_getitem */
  bcolz_cache *cache;     /* created at the first lookup */
} bz_dataset;

/* The module's view of a shared dataset. */
static bz_dataset *BZ(ds_dataset *d) { return (bz_dataset *)d; }

typedef struct bz_vtab {
  ds_table base;  /* db, form, dataset, argument columns */
  ds_table_writer *writer; /* mode=create|replace (table_writer.h) */
  int col_row;    /* tvf form: the row as JSON */
} bz_vtab;

/* What a cursor holds for one column: its last decompressed chunk. */
typedef struct bz_colcache {
  int have;
  uint64_t chunk;
  uint64_t lo, hi;  /* its rows [lo, hi) */
  const uint8_t *p;
  ds_buf buf;
  int fast;         /* bcolz_fast_kind: xColumn reads cells without the
                       value model (0: not this column, or the tvf form) */
  uint64_t fast_rows; /* rows of the chunk xColumn reads in place: hi - lo
                         when fast and have, else 0 (one test per cell) */
  size_t itemsize;  /* bytes per cell of a fast column */
  uint64_t single;  /* 1 + the chunk of the last single-row read */
} bz_colcache;

typedef struct bz_cursor {
  ds_cursor base;   /* dataset, rowset, row, argument columns */
  int fast;          /* ascending scan of [next, end): 1 chunk-wise
                        filtering, 2 no filters (every row); next to the
                        row, which bz_xnext steps with them */
  uint64_t next, end;
  int few;          /* a short row list: read single rows */
  bz_colcache *cols; /* kept from one xFilter to the next on the same */
  size_t ncols;
  ds_dataset *cols_ds; /* dataset (a reference held), so lookups one
                          after another reuse the chunk they are on */
  ds_buf atom;      /* single-row reads */
  ds_arena arena;   /* values of the current row */
  /* pushed comparisons (CREATE form): filt[j] on column filt_col[j] */
  bcolz_filter filt[MAX_PUSHED];
  int filt_col[MAX_PUSHED];
  char *filt_text[MAX_PUSHED];
  size_t nfilt;
} bz_cursor;

/* ds_dataset_ops.close */
static void dataset_close(ds_dataset *d) {
  bcolz_cache_free(BZ(d)->cache);
  bcolz_close(BZ(d)->table);
}

/* ds_dataset_ops.changed: did a chunk file read so far change? */
static int dataset_changed(const ds_dataset *d) {
  return bcolz_stale(((const bz_dataset *)d)->table);
}

/* Rows and columns (a writer's table before its first commit has no
 * table: none). */
static uint64_t nrows_of(const bz_dataset *d) { return d->table ? bcolz_nrows(d->table) : 0; }
static size_t ncols_of(const bz_dataset *d) { return d->table ? bcolz_ncols(d->table) : 0; }

/* ds_dataset_ops.open: option bytes=text|blob in both forms. */
static int dataset_open(ds_dataset *base, const char *path, const ds_options *o, int tvf,
                        char **err) {
  (void)tvf;
  bz_dataset *d = BZ(base);
  if (ds_opt_bind(ds_bcolz_option_groups, base->form, o, &d->opts, err)) {
    ds_err_prefix(err, path);
    return -1;
  }
  d->flags = d->opts.bytes ? BCOLZ_BYTES_BLOB : 0;
  d->cache_budget = (uint64_t)d->opts.cache_mb << 20;
  /* a writer's table reads what it has published: nothing yet */
  return base->mode ? 0 : bcolz_open(path, &d->table, err);
}

/* ds_dataset_ops.saw_change: did a chunk read find the folder replaced? */
static int dataset_saw_change(const ds_dataset *d) {
  return bcolz_saw_change(((const bz_dataset *)d)->table);
}

static const ds_dataset_ops bcolz_ops = {"bcolz('table/dir' [, 'bytes=blob'])",
                                         dataset_open, dataset_close, dataset_changed,
                                         dataset_saw_change, sizeof(bz_dataset),
                                         ds_bcolz_option_groups};

/* The declared SQL type of a column. */
static const char *decltype_of(const bcolz_dtype *dt, int flags) {
  if (dt->ndim > 0) return "BLOB";
  switch (dt->kind) {
    case 'b': case 'i': case 'u': case 'm': return "INTEGER";
    case 'f': return "REAL";
    case 'U': case 'M': return "TEXT";
    case 'S': return flags & BCOLZ_BYTES_BLOB ? "BLOB" : "TEXT";
    default: return "";
  }
}

/* CREATE TABLE text of the CREATE form: one column per bcolz column (or
 * per column a writer declares: wc). */
static char *create_sql(const bz_dataset *d, const bcolz_wcols *wc) {
  ds_buf b = {0};
  ds_buf_puts(&b, "CREATE TABLE x(");
  size_t n = wc ? wc->n : bcolz_ncols(d->table);
  for (size_t c = 0; c < n; c++) {
    const char *name = wc ? wc->names[c]
                     : bcolz_is_ctable(d->table) ? bcolz_col_name(d->table, c) : "value";
    ds_buf_puts(&b, c ? ", \"" : "\"");
    for (const char *p = name; *p; p++) {
      if (*p == '"') ds_buf_puts(&b, "\""); /* "" inside a quoted name */
      ds_buf_append(&b, p, 1);
    }
    ds_buf_printf(&b, "\" %s", wc && (wc->inferred || wc->json[c]) ? ""
                               : decltype_of(wc ? &wc->types[c].dt : bcolz_col_dtype(d->table, c),
                                             d->flags));
  }
  ds_buf_puts(&b, ")");
  if (ds_buf_append(&b, "", 1)) {
    ds_buf_free(&b);
    return NULL;
  }
  return (char *)b.data;
}

/* ds_table_def.declare: the row as JSON (table-valued form), or one
 * column per bcolz column. */
static int declare(ds_table *base, const ds_options *o, char **err) {
  bz_vtab *t = (bz_vtab *)base;
  t->col_row = base->tvf ? 0 : -1;
  if (base->tvf) {
    ds_table_arg_columns(base, 1, 2);
    return ds_table_declare(base, "CREATE TABLE x(row TEXT, path HIDDEN, options HIDDEN)", err);
  }
  const bz_opts *v = &BZ(base->ds)->opts;
  int mode = base->ds->mode;
  bcolz_wcols wc = {0};
  if (mode && bcolz_wcols_parse(v->write.columns, &wc, err)) {
    ds_err_prefix(err, base->ds->path);
    return -1;
  }
  char *sql = create_sql(BZ(base->ds), mode ? &wc : NULL);
  int rc = ds_table_declare(base, sql, err);
  free(sql);
  if (rc == 0 && mode) rc = bcolz_table_write_open(base->ds->path, o, &v->write, base->ds->max_value_bytes,
                                                  mode, &wc, &t->writer, err);
  bcolz_wcols_free(&wc);
  return rc;
}

/* ds_table_def.table_free: the writer. */
static void table_free(ds_table *base) { ds_table_writer_free(((bz_vtab *)base)->writer); }

/* The pushed operator for a constraint op, or -1. */
static int pushed_op(unsigned char op) {
  switch (op) {
  case SQLITE_INDEX_CONSTRAINT_EQ: return BCOLZ_OP_EQ;
  case SQLITE_INDEX_CONSTRAINT_LT: return BCOLZ_OP_LT;
  case SQLITE_INDEX_CONSTRAINT_LE: return BCOLZ_OP_LE;
  case SQLITE_INDEX_CONSTRAINT_GT: return BCOLZ_OP_GT;
  case SQLITE_INDEX_CONSTRAINT_GE: return BCOLZ_OP_GE;
  case SQLITE_INDEX_CONSTRAINT_ISNULL: return BCOLZ_OP_ISNULL;
  case SQLITE_INDEX_CONSTRAINT_ISNOTNULL: return BCOLZ_OP_NOTNULL;
  default: return -1;
  }
}

/* Operator spellings: in idxStr's code (one character) and for people. */
static const char OP_CODE[] = "=<l>gNn";
static const char *const OP_TEXT[] = {"=?", "<?", "<=?", ">?", ">=?", " IS NULL",
                                      " IS NOT NULL"};

/* Push comparisons on data columns after the plan's own constraints: each
 * gets the next argv slot with omit = 0 (SQLite still checks the rows that
 * pass, so a filter only has to be a safe pre-filter; this also keeps
 * LIMIT/OFFSET with SQLite). idxStr gains "; pushed: <col><op>?, ... #<codes>"
 * where codes are <column number><op code> separated by ',' (op codes
 * = < l(<=) > g(>=) N(IS NULL) n(IS NOT NULL)), and idxNum
 * DS_PLAN_MODULE_FLAG. Text columns are pushed for the BINARY collation
 * only. */
static int push_filters(ds_table *t, sqlite3_index_info *info) {
  bcolz_table *tb = BZ(t->ds)->table;
  if (!tb) return SQLITE_OK; /* a writer's table before its first commit */
  int n = 0, npush = 0;
  for (int i = 0; i < info->nConstraint; i++)
    if (info->aConstraintUsage[i].argvIndex > n) n = info->aConstraintUsage[i].argvIndex;
  ds_buf human = {0}, codes = {0};
  double keep = 1;
  for (int i = 0; i < info->nConstraint && npush < MAX_PUSHED; i++) {
    const struct sqlite3_index_constraint *k = &info->aConstraint[i];
    int op = pushed_op(k->op), text;
    if (!k->usable || k->iColumn < 0 || (size_t)k->iColumn >= bcolz_ncols(tb) || op < 0 ||
        info->aConstraintUsage[i].argvIndex)
      continue;
    if (!bcolz_filter_supported(bcolz_col_dtype(tb, (size_t)k->iColumn),
                                BZ(t->ds)->flags & BCOLZ_BYTES_BLOB, &text))
      continue;
    if (text && op <= BCOLZ_OP_GE &&
        sqlite3_stricmp(sqlite3_vtab_collation(info, i), "BINARY") != 0)
      continue;
    info->aConstraintUsage[i].argvIndex = ++n;
    info->aConstraintUsage[i].omit = 0;
    const char *name = bcolz_is_ctable(tb) ? bcolz_col_name(tb, (size_t)k->iColumn) : "value";
    ds_buf_printf(&human, "%s%s%s", npush ? " AND " : "", name, OP_TEXT[op]);
    ds_buf_printf(&codes, "%s%d%c", npush ? "," : "", k->iColumn, OP_CODE[op]);
    keep *= op == BCOLZ_OP_EQ ? 0.01 : op == BCOLZ_OP_ISNULL ? 0.05 : 0.3;
    npush++;
  }
  int rc = SQLITE_OK;
  if (npush) {
    char *s = sqlite3_mprintf("%s; pushed: %.*s #%.*s", info->idxStr ? info->idxStr : "",
                              (int)human.len, (const char *)human.data, (int)codes.len,
                              (const char *)codes.data);
    if (!s) {
      rc = SQLITE_NOMEM;
    } else {
      if (info->needToFreeIdxStr) sqlite3_free(info->idxStr);
      info->idxStr = s;
      info->needToFreeIdxStr = 1;
      info->idxNum |= DS_PLAN_MODULE_FLAG;
      double rows = (double)info->estimatedRows * keep;
      info->estimatedRows = (sqlite3_int64)(rows < 1 ? 1 : rows);
      /* the filters are tested on whole chunks: far cheaper than rows */
      info->estimatedCost *= 0.3 + 0.7 * keep;
    }
  }
  ds_buf_free(&human);
  ds_buf_free(&codes);
  return rc;
}

/* Cost model: a row costs 1; rowid constraints touch only their rows;
 * pushed comparisons keep a fraction of them. */
static int bz_best_index(sqlite3_vtab *vtab, sqlite3_index_info *info) {
  ds_table *t = (ds_table *)vtab;
  double n = t->ds ? (double)nrows_of(BZ(t->ds)) : 1e6;
  int rc = ds_table_plan(t, info, n, NULL, 0);
  if (rc == SQLITE_OK && !t->tvf) rc = push_filters(t, info);
  return rc;
}

/* ds_table_def.cursor_reset */
static void cursor_reset(ds_cursor *base) {
  bz_cursor *c = (bz_cursor *)base;
  for (size_t j = 0; j < c->nfilt; j++) {
    bcolz_filter_free(&c->filt[j]);
    free(c->filt_text[j]);
    c->filt_text[j] = NULL;
  }
  c->nfilt = 0;
  c->fast = 0;
}

/* Free the columns' chunks and let their dataset go. */
static void free_cols(bz_cursor *c) {
  for (size_t i = 0; i < c->ncols; i++) ds_buf_free(&c->cols[i].buf);
  free(c->cols);
  c->cols = NULL;
  c->ncols = 0;
  ds_dataset_unref(c->cols_ds);
  c->cols_ds = NULL;
}

/* ds_table_def.cursor_free */
static void cursor_free(ds_cursor *base) {
  bz_cursor *c = (bz_cursor *)base;
  free_cols(c);
  ds_buf_free(&c->atom);
  ds_arena_free(&c->arena);
}

/* The filters of idxStr's "#<codes>" with their values, the last argv
 * entries. */
static int set_filters(bz_cursor *c, const char *idxStr, int argc,
                       sqlite3_value **argv, char **err) {
  const char *p = idxStr ? strrchr(idxStr, '#') : NULL;
  if (!p) return ds_err(err, "bad plan");
  bcolz_table *tb = BZ(c->base.ds)->table;
  size_t n = 1;
  for (const char *q = p; *q; q++) n += *q == ',';
  if (n > MAX_PUSHED || (int)n > argc) return ds_err(err, "bad plan");
  sqlite3_value **vals = argv + argc - n;
  for (p++; c->nfilt < n; p += *p == ',') {
    char *end;
    long col = strtol(p, &end, 10);
    const char *op = end > p && *end ? strchr(OP_CODE, *end) : NULL;
    if (!op || col < 0 || (size_t)col >= c->ncols) return ds_err(err, "bad plan");
    bcolz_filter *f = &c->filt[c->nfilt];
    const bcolz_dtype *dt = bcolz_col_dtype(tb, (size_t)col);
    int text;
    memset(f, 0, sizeof *f);
    bcolz_filter_supported(dt, 0, &text);
    f->op = (bcolz_op)(op - OP_CODE);
    sqlite3_value *v = vals[c->nfilt];
    /* SQLite's comparison rules: NULL matches nothing; a numeric column
     * applies numeric affinity to the value; other mixes are left to
     * SQLite's own check */
    int vt = sqlite3_value_type(v);
    f->vkind = BCOLZ_FV_ANY;
    if (vt == SQLITE_NULL) {
      f->vkind = BCOLZ_FV_NONE;
    } else if (!text) {
      vt = sqlite3_value_numeric_type(v);
      if (vt == SQLITE_INTEGER) f->vkind = BCOLZ_FV_INT, f->i = sqlite3_value_int64(v);
      if (vt == SQLITE_FLOAT) f->vkind = BCOLZ_FV_FLOAT, f->f = sqlite3_value_double(v);
    } else if (vt == SQLITE_TEXT) {
      const unsigned char *s = sqlite3_value_text(v);
      size_t len = (size_t)sqlite3_value_bytes(v);
      char *copy = malloc(len + 1);
      if (!copy || !s) {
        free(copy);
        return ds_err(err, "out of memory");
      }
      memcpy(copy, s, len);
      c->filt_text[c->nfilt] = copy;
      f->vkind = BCOLZ_FV_TEXT;
      f->s = (const uint8_t *)copy;
      f->n = len;
    }
    if (bcolz_filter_prepare(f, dt)) return ds_err(err, "out of memory");
    c->filt_col[c->nfilt++] = (int)col;
    p = end + 1;
  }
  return 0;
}

/* ds_table_def.select: every row (rowid constraints are the skeleton's). */
static int select_rows(ds_cursor *base, ds_plan_args *a, ds_rows *r, char **err) {
  (void)a;
  (void)err;
  r->total = nrows_of(BZ(base->ds));
  return 0;
}

/* ds_table_def.start: the columns' chunk caches, the pushed filters, and
 * how the row set is walked (few rows, one ascending range). */
static int start(ds_cursor *base, const ds_filter_call *call, char **err) {
  bz_cursor *c = (bz_cursor *)base;
  bz_dataset *d = BZ(base->ds);
  const ds_rowset *rs = &base->rs;
  if (c->cols_ds != base->ds || !c->cols) { /* another dataset: new columns */
    free_cols(c);
    c->cols = calloc(ncols_of(d) ? ncols_of(d) : 1, sizeof *c->cols);
    if (!c->cols) return ds_err(err, "out of memory");
    c->ncols = ncols_of(d);
    c->cols_ds = base->ds;
    ds_dataset_ref(c->cols_ds);
  }
  /* max_value_bytes caps chunks, rows and values */
  c->atom.max = c->arena.limit = (size_t)base->ds->max_value_bytes;
  for (size_t i = 0; i < c->ncols; i++) {
    bz_colcache *cc = &c->cols[i];
    const bcolz_dtype *dt = bcolz_col_dtype(d->table, i);
    cc->buf.max = c->atom.max;
    /* the tvf form's column numbers are not the table's */
    cc->fast = ds_table_of(&base->base)->tvf ? 0 : bcolz_fast_kind(dt, d->flags);
    cc->itemsize = dt->itemsize;
    cc->fast_rows = cc->fast && cc->have ? cc->hi - cc->lo : 0;
  }
  if ((call->idxNum & DS_PLAN_MODULE_FLAG) &&
      set_filters(c, call->idxStr, call->argc, call->argv, err))
    return -1;
  c->few = rs->kind == DS_RS_LIST && rs->nids < FEW_ROWS;
  /* one ascending range: filters test whole chunks of the first column */
  if (!c->few && rs->kind == DS_RS_RANGES && rs->nranges == 1 && !rs->desc &&
      rs->offset == 0 && rs->limit == UINT64_MAX) {
    c->fast = c->nfilt ? 1 : 2;
    c->next = rs->ranges[0].lo > rs->lo ? rs->ranges[0].lo : rs->lo;
    c->end = rs->ranges[0].hi < rs->hi ? rs->ranges[0].hi : rs->hi;
    if (c->fast == 2) base->row = c->next - 1; /* bz_next steps to c->next first */
    bcolz_scan_from(d->table, c->next);
  }
  return 0;
}

/* One row's bytes read on their own into c->atom (see cell_bytes). */
static int row_atom(bz_cursor *c, bcolz_table *tb, size_t col, uint64_t row,
                    const uint8_t **p, size_t *n, char **err) {
  if (bcolz_row_atom(tb, col, row, &c->atom, err)) return -1;
  *p = c->atom.data ? c->atom.data : (const uint8_t *)"";
  *n = c->atom.len;
  return 0;
}

/* Bytes of column col at row (atom bytes; an object cell's pickle): from
 * the chunk the cursor holds for the column (the one it read last, kept
 * from one xFilter to the next: not a cache, a scan holds the same), from
 * the table's cache (lookups, cache_mb > 0 and room for a chunk of each
 * column), or for few rows a single-row
 * read of its Blosc block (when that is the whole chunk, the chunk is
 * decompressed and held instead); object cells are read one by one. */
static int cell_bytes(bz_cursor *c, size_t col, uint64_t row, const uint8_t **p,
                      size_t *n, char **err) {
  bcolz_table *tb = BZ(c->base.ds)->table;
  const bcolz_dtype *dt = bcolz_col_dtype(tb, col);
  bz_dataset *d = BZ(c->base.ds);
  bz_colcache *cc = &c->cols[col];
  int in_chunk = cc->have && row >= cc->lo && row < cc->hi;
  /* lookups: cached chunks, when the cache can hold one chunk of every
   * column (else row after row would evict each other's chunks: the
   * cursor's own chunk serves instead) */
  if (!in_chunk && c->few && dt->kind != 'O' && d->cache_budget &&
      bcolz_col_chunk_rows(tb, col, bcolz_col_chunk_of(tb, col, row)) * dt->atom <=
          d->cache_budget / c->ncols) {
    if (!d->cache) {
      if (!(d->cache = bcolz_cache_new(d->cache_budget))) return ds_err(err, "out of memory");
      bcolz_cache_set_max(d->cache, d->base.max_value_bytes);
    }
    if (bcolz_cache_row(d->cache, tb, col, row, p, err)) return -1;
    *n = (size_t)dt->atom;
    return 0;
  }
  if (!in_chunk && c->few && dt->kind != 'O') { /* one row: only its block */
    /* ... unless that block is the whole chunk, or the last single-row
     * read was in the same chunk (lookups in order): then keep the chunk */
    uint64_t k = bcolz_col_chunk_of(tb, col, row);
    int one = cc->single == k + 1;
    if (!one && bcolz_chunk_one_block(tb, col, k, &one, err)) return -1;
    if (cc->buf.max && bcolz_col_chunk_rows(tb, col, k) * dt->atom > cc->buf.max)
      one = 0; /* a chunk over max_value_bytes: its rows are still read alone */
    if (!one) {
      cc->single = k + 1;
      return row_atom(c, tb, col, row, p, n, err);
    }
  }
  if (dt->kind == 'O') return row_atom(c, tb, col, row, p, n, err); /* a chunk a row */
  if (!in_chunk) {
    uint64_t k = bcolz_col_chunk_of(tb, col, row), rows;
    cc->have = 0;
    cc->fast_rows = 0;
    if (bcolz_chunk(tb, col, k, &cc->buf, &cc->p, &rows, err)) return -1;
    cc->have = 1;
    cc->chunk = k;
    cc->lo = bcolz_col_chunk_first(tb, col, k);
    cc->hi = cc->lo + rows;
    cc->fast_rows = cc->fast ? rows : 0;
  }
  *p = cc->p + (row - cc->lo) * dt->atom;
  *n = (size_t)dt->atom;
  return 0;
}

/* Do the filters from `first` on pass at row? */
static int row_passes(bz_cursor *c, uint64_t row, size_t first, int *ok, char **err) {
  bcolz_table *tb = BZ(c->base.ds)->table;
  for (size_t j = first; j < c->nfilt; j++) {
    const uint8_t *p;
    size_t n;
    if (cell_bytes(c, (size_t)c->filt_col[j], row, &p, &n, err)) return -1;
    if (!bcolz_filter_test(&c->filt[j], bcolz_col_dtype(tb, (size_t)c->filt_col[j]), p)) {
      *ok = 0;
      return 0;
    }
  }
  *ok = 1;
  return 0;
}

/* A filtered xNext may pass over many rows before one passes: once it has
 * passed SKIP_LISTEN of them it listens for interrupts and progress
 * handlers (vtab/interrupt.h); short steps pay nothing. */
#define SKIP_LISTEN 65536
typedef struct skip_guard {
  sqlite3 *db;
  uint64_t rows;
  int open;
  ds_interrupt it;
} skip_guard;

/* Count `rows` more passed over; 1 when the statement should stop. */
static int skip_stop(skip_guard *g, uint64_t rows) {
  if (!g->open) {
    if ((g->rows += rows) < SKIP_LISTEN) return 0;
    ds_interrupt_begin(&g->it, g->db);
    g->open = 1;
  }
  return ds_cancel_poll();
}

/* Close the guard; 1 when the call was interrupted. */
static int skip_end(skip_guard *g) { return g->open && ds_interrupt_end(&g->it); }

/* The next row of [c->next, c->end) passing every filter: the first
 * filter scans its column's decompressed chunks; the other columns are
 * decompressed only for rows that pass it. 1 found, 0 none, -1 error. */
static int fast_next(bz_cursor *c, skip_guard *g, char **err) {
  bcolz_table *tb = BZ(c->base.ds)->table;
  size_t col = (size_t)c->filt_col[0];
  const bcolz_dtype *dt = bcolz_col_dtype(tb, col);
  while (c->next < c->end) {
    const uint8_t *p;
    size_t n;
    uint64_t from = c->next;
    if (cell_bytes(c, col, c->next, &p, &n, err)) return -1;
    bz_colcache *cc = &c->cols[col];
    uint64_t first = bcolz_col_chunk_first(tb, col, cc->chunk);
    uint64_t stop = first + bcolz_col_chunk_rows(tb, col, cc->chunk);
    if (stop > c->end) stop = c->end;
    uint64_t r = first + bcolz_filter_scan(&c->filt[0], dt, cc->p, c->next - first,
                                           stop - first);
    c->next = r + 1;
    if (r >= stop) {
      c->next = stop;
      if (skip_stop(g, stop - from)) return ds_err(err, DS_CANCEL_MSG);
      continue;
    }
    int ok;
    if (row_passes(c, r, 1, &ok, err)) return -1;
    if (ok) {
      c->base.row = r;
      return 1;
    }
    if (skip_stop(g, r + 1 - from)) return ds_err(err, DS_CANCEL_MSG);
  }
  return 0;
}

/* ds_table_def.next: xNext and the first row of xFilter; filtered scans
 * skip the rows the pushed comparisons reject. */
static int bz_next(ds_cursor *base) {
  bz_cursor *c = (bz_cursor *)base;
  char *err = NULL;
  if (c->fast == 2) {
    base->eof = ++base->row >= c->end;
    return SQLITE_OK;
  }
  skip_guard g = {ds_table_of(&base->base)->db, 0, 0, {{0}, NULL, NULL}};
  int rc = SQLITE_OK;
  if (c->fast) {
    int r = fast_next(c, &g, &err);
    if (r < 0) rc = ds_cursor_error(base, err);
    else base->eof = !r;
  } else {
    for (;;) {
      base->eof = !ds_rowiter_next(&base->it, &base->row);
      if (base->eof || !c->nfilt) break;
      int ok;
      if (row_passes(c, base->row, 0, &ok, &err)) {
        rc = ds_cursor_error(base, err);
        break;
      }
      if (ok) break;
      if (skip_stop(&g, 1)) {
        rc = ds_cursor_error(base, ds_strf(DS_CANCEL_MSG));
        break;
      }
    }
  }
  return skip_end(&g) ? ds_vtab_interrupted(base->base.pVtab) : rc;
}

/* xNext: an unfiltered ascending scan steps in place (the row the
 * columns then read in place, see bz_column); every other walk goes
 * through the skeleton to bz_next. */
static int bz_xnext(sqlite3_vtab_cursor *cur) {
  bz_cursor *c = (bz_cursor *)cur;
  if (c->fast == 2) {
    c->base.eof = ++c->base.row >= c->end;
    return SQLITE_OK;
  }
  return ds_cursor_next(cur);
}

/* The value of column col at the current row (in the cursor's arena). */
static int cell(bz_cursor *c, size_t col, ds_value *v, char **err) {
  const uint8_t *p;
  size_t n;
  bcolz_table *tb = BZ(c->base.ds)->table;
  if (cell_bytes(c, col, c->base.row, &p, &n, err)) return -1;
  if (bcolz_cell_value(bcolz_col_dtype(tb, col), p, n, BZ(c->base.ds)->flags, &c->arena, v,
                       err) == 0)
    return 0;
  if (c->arena.over) ds_arena_fail(&c->arena, err); /* max_value_bytes */
  char *m = ds_strf("%s: row %llu: %s", bcolz_col_path(tb, col), (unsigned long long)c->base.row,
                    *err ? *err : "?");
  free(*err);
  *err = m;
  return -1;
}

/* The whole row as JSON: an object for a ctable, the value for a carray. */
static int row_json(bz_cursor *c, ds_buf *out, char **err) {
  bcolz_table *tb = BZ(c->base.ds)->table;
  int table = bcolz_is_ctable(tb);
  if (table) ds_buf_puts(out, "{");
  for (size_t col = 0; col < c->ncols; col++) {
    ds_value v;
    if (cell(c, col, &v, err)) return -1;
    if (table) {
      const char *name = bcolz_col_name(tb, col);
      if ((col && ds_buf_puts(out, ",")) ||
          ds_json_string(out, (const uint8_t *)name, strlen(name)) || ds_buf_puts(out, ":"))
        return ds_err(err, "out of memory");
    }
    if (ds_value_json(out, &v, err)) return -1;
  }
  if (table && ds_buf_puts(out, "}")) return ds_err(err, "out of memory");
  return 0;
}

/* A cell as an SQL result: a number, NULL, text or bytes (1), or 0 when
 * the value model must show it. */
static inline int result_cell(sqlite3_context *ctx, const bcolz_cell *v) {
  switch (v->kind) {
  case BCOLZ_NUM_INT: sqlite3_result_int64(ctx, v->i); return 1;
  case BCOLZ_NUM_FLOAT: sqlite3_result_double(ctx, v->f); return 1;
  case BCOLZ_NUM_NULL: return 1;
  case BCOLZ_CELL_TEXT: ds_result_text(ctx, v->s, v->n); return 1;
  case BCOLZ_CELL_BYTES:
    sqlite3_result_blob64(ctx, v->n ? (const void *)v->s : "", v->n, SQLITE_TRANSIENT);
    return 1;
  default: return 0;
  }
}

/* xColumn for everything bz_column does not read in place: argument
 * columns, the tvf form's row, cells outside the chunk the cursor holds,
 * columns without a fast kind. Not inlined: bz_column's in-place path
 * then needs no stack frame. */
__attribute__((noinline)) static int column_slow(bz_cursor *c, sqlite3_context *ctx, int col) {
  sqlite3_vtab_cursor *cur = &c->base.base;
  bz_vtab *t = (bz_vtab *)cur->pVtab;
  char *err = NULL;
  ds_arena_reset(&c->arena);
  if (ds_cursor_arg_column(cur, ctx, col)) {
    return SQLITE_OK;
  } else if (col == t->col_row) {
    ds_buf json = {0};
    json.max = (size_t)c->base.ds->max_value_bytes; /* it holds for the text too */
    if (row_json(c, &json, &err)) {
      if (json.over) {
        free(err);
        err = ds_strf("%s: row %llu: JSON text of more than %zu bytes: more than "
                      "max_value_bytes=%zu", bcolz_path(BZ(c->base.ds)->table),
                      (unsigned long long)c->base.row, json.max, json.max);
      }
      ds_result_error(ctx, MOD, err);
    }
    else ds_result_json(ctx, &json);
    ds_buf_free(&json);
  } else {
    /* scalar numbers through bcolz_cell_number; the rest through the value
     * model */
    const bcolz_dtype *dt = bcolz_col_dtype(BZ(c->base.ds)->table, (size_t)col);
    const uint8_t *p;
    size_t n;
    bcolz_cell v = {0};
    if (cell_bytes(c, (size_t)col, c->base.row, &p, &n, &err)) {
      ds_result_error(ctx, MOD, err);
      return SQLITE_OK;
    }
    v.kind = bcolz_cell_number(dt, p, &v.i, &v.f);
    if (result_cell(ctx, &v)) return SQLITE_OK;
    ds_value val; /* through cell(): errors name the column's file and the row */
    if (cell(c, (size_t)col, &val, &err))
      ds_result_error(ctx, MOD, err);
    else
      ds_value_result(ctx, &val);
  }
  return SQLITE_OK;
}

/* A cell of a fast column read in place: cell i of the chunk cc holds.
 * Not inlined, so that bz_column's int64 path needs no stack frame. */
__attribute__((noinline)) static int column_in_place(const bz_colcache *cc, uint64_t i,
                                                     sqlite3_context *ctx) {
  bcolz_cell v;
  bcolz_fast_cell(cc->fast, cc->itemsize, cc->p, i, &v);
  result_cell(ctx, &v); /* a fast kind always has a result */
  return SQLITE_OK;
}

/* xColumn: a cell of a fast column (bcolz_cell.h) in the chunk the cursor
 * holds is read in place: one range test and an inline load (int64, the
 * commonest, without even a stack frame); the rest goes to column_slow. */
static int bz_column(sqlite3_vtab_cursor *cur, sqlite3_context *ctx, int col) {
  bz_cursor *c = (bz_cursor *)cur;
  if ((size_t)col < c->ncols) { /* a negative col is huge here */
    const bz_colcache *cc = &c->cols[col];
    uint64_t i = c->base.row - cc->lo; /* huge below the chunk */
    if (i < cc->fast_rows) {
      if (cc->fast != BCOLZ_FAST_I8) return column_in_place(cc, i, ctx);
      sqlite3_result_int64(ctx, bcolz_fast_i8(cc->p, i));
      return SQLITE_OK;
    }
  }
  return column_slow(c, ctx, col);
}

/* xUpdate: one INSERT row (vtab/bcolz_write.c). */
static int bz_update(ds_table *base, int argc, sqlite3_value **argv, sqlite3_int64 *rowid,
                     char **err) {
  uint64_t row;
  if (ds_table_writer_insert(base, argc, argv, &row, err) ||
      bcolz_table_write_row(((bz_vtab *)base)->writer, argv + 2, row, err))
    return -1;
  *rowid = (sqlite3_int64)row;
  return 0;
}

/* ---- bcolz_attrs(path) and bcolz_stats(path): small row lists ---- */

/* One result row: up to 8 values. */
typedef struct list_row {
  ds_value v[8];
} list_row;

/* bcolz_attrs_each callback: one row name, value (JSON), column. */
typedef struct attrs_ctx {
  ds_list_cursor *c;
  const char *column;
  char **err;
} attrs_ctx;

static int attrs_row(void *ctx, const char *name, const char *value) {
  attrs_ctx *a = ctx;
  list_row *r = ds_list_add(a->c, sizeof *r);
  if (!r) return ds_err(a->err, "out of memory");
  ds_list_text(a->c, name, &r->v[0]);
  ds_list_text(a->c, value, &r->v[1]);
  if (a->column) ds_list_text(a->c, a->column, &r->v[2]);
  return 0;
}

/* ds_list_def.collect of bcolz_attrs: the table's __attrs__, then each
 * column's. */
static int attrs_collect(ds_list_cursor *c, const char *path, const char *opts, char **err) {
  (void)opts;
  bcolz_table *tb = NULL;
  if (bcolz_open(path, &tb, err)) return -1;
  attrs_ctx a = {c, NULL, err};
  int rc = bcolz_attrs_each(bcolz_attrs_json(tb), NULL, attrs_row, &a, err);
  for (size_t col = 0; rc == 0 && bcolz_is_ctable(tb) && col < bcolz_ncols(tb); col++) {
    a.column = bcolz_col_name(tb, col);
    rc = bcolz_attrs_each(bcolz_col_attrs_json(tb, col), a.column, attrs_row, &a, err);
  }
  if (rc) ds_err_prefix(err, path);
  bcolz_close(tb);
  return rc;
}

/* One row of statistics for column col. */
static int stats_row(ds_list_cursor *c, bcolz_table *tb, size_t col, char **err) {
  bcolz_stats s;
  int rc = bcolz_column_stats(tb, col, &s, err);
  list_row *r = rc == 0 ? ds_list_add(c, sizeof *r) : NULL;
  if (rc == 0 && !r) rc = ds_err(err, "out of memory");
  if (rc == 0) {
    const bcolz_dtype *dt = bcolz_col_dtype(tb, col);
    ds_list_text(c, bcolz_is_ctable(tb) ? bcolz_col_name(tb, col) : "value", &r->v[0]);
    ds_list_text(c, dt->str, &r->v[1]);
    r->v[2] = (ds_value){.type = DS_V_INT, .u.i = (int64_t)s.count};
    r->v[3] = (ds_value){.type = DS_V_INT, .u.i = (int64_t)s.nulls};
    ds_value *keep[3] = {&s.min, &s.max, &s.sum};
    for (int i = 0; i < 3 && s.has_values; i++) { /* copy text out of the stats */
      ds_value v = *keep[i];
      if (v.type == DS_V_TEXT || v.type == DS_V_BYTES || v.type == DS_V_BIGINT) {
        uint8_t *p = ds_arena_alloc(&c->arena, v.u.s.n + 1);
        if (!p) { rc = ds_err(err, "out of memory"); break; }
        memcpy(p, v.u.s.p, v.u.s.n);
        v.u.s.p = p;
      }
      r->v[4 + i] = v;
    }
    if (s.has_mean) r->v[7] = (ds_value){.type = DS_V_FLOAT, .u.f = s.mean};
  }
  bcolz_stats_free(&s);
  return rc;
}

/* ds_list_def.collect of bcolz_stats: one row per column (reads every
 * column whole: interruptible). */
static int stats_collect(ds_list_cursor *c, const char *path, const char *opts, char **err) {
  (void)opts;
  bcolz_table *tb = NULL;
  int rc = bcolz_open(path, &tb, err);
  for (size_t col = 0; rc == 0 && col < bcolz_ncols(tb); col++) rc = stats_row(c, tb, col, err);
  bcolz_close(tb);
  return rc;
}

/* ds_list_def.column: the row's values (attribute values are JSON). */
static void list_column(ds_list_cursor *c, size_t i, int col, sqlite3_context *ctx) {
  const ds_value *v = &((const list_row *)c->rows)[i].v[col];
  ds_value_result(ctx, v);
}

static void attrs_column(ds_list_cursor *c, size_t i, int col, sqlite3_context *ctx) {
  const ds_value *v = &((const list_row *)c->rows)[i].v[col];
  if (col != 1 || v->type != DS_V_TEXT) {
    ds_value_result(ctx, v);
    return;
  }
  ds_buf b = {0};
  ds_buf_append(&b, v->u.s.p, v->u.s.n);
  ds_result_json(ctx, &b);
  ds_buf_free(&b);
}

/* name, value, column, then the HIDDEN path; about 10 rows */
static const ds_list_def attrs_def = {
    "bcolz_attrs", "CREATE TABLE x(name TEXT, value TEXT, \"column\" TEXT, path HIDDEN)",
    3, 1, "bcolz_attrs('table/dir')", 10, attrs_collect, attrs_column, NULL, NULL};

/* 8 columns, then the HIDDEN path; about 10 rows */
static const ds_list_def stats_def = {
    "bcolz_stats",
    "CREATE TABLE x(\"column\" TEXT, dtype TEXT, count INTEGER, nulls INTEGER, min, max, sum,"
    " mean REAL, path HIDDEN)",
    8, 1, "bcolz_stats('table/dir')", 10, stats_collect, list_column, NULL, NULL};

/* bcolz_decoded(path): JSON {column: decompressions} of the table at path
 * (as written and, when relative, as resolved against the current
 * directory) in this process so far (see bcolz_decode_count): proof that a query
 * decompressed only the columns and chunks it needed. */
static void decoded_func(sqlite3_context *ctx, int argc, sqlite3_value **argv) {
  (void)argc;
  const char *path = (const char *)sqlite3_value_text(argv[0]);
  if (!path) return;
  bcolz_table *tb = NULL;
  char *err = NULL;
  if (bcolz_open(path, &tb, &err)) {
    ds_result_error(ctx, "bcolz_decoded", err);
    return;
  }
  ds_buf b = {0};
  ds_buf_puts(&b, "{");
  for (size_t col = 0; col < bcolz_ncols(tb); col++) {
    const char *name = bcolz_is_ctable(tb) ? bcolz_col_name(tb, col) : "value";
    if (col) ds_buf_puts(&b, ",");
    ds_json_string(&b, (const uint8_t *)name, strlen(name));
    const char *dir = bcolz_col_path(tb, col);
    uint64_t n = bcolz_decode_count(dir);
    char *abs = dir[0] != '/' ? ds_path_absolute(dir, &err) : NULL;
    if (abs) n += bcolz_decode_count(abs); /* a CREATE-form table's resolved path */
    free(abs);
    free(err);
    err = NULL;
    ds_buf_printf(&b, ":%llu", (unsigned long long)n);
  }
  ds_buf_puts(&b, "}");
  bcolz_close(tb);
  ds_result_json(ctx, &b);
  ds_buf_free(&b);
}

/* ds_table_def.register_more: bcolz_attrs, bcolz_stats, bcolz_decoded. */
static int register_more(sqlite3 *db) {
  int rc = ds_list_register(db, &attrs_def);
  if (rc == SQLITE_OK) rc = ds_list_register(db, &stats_def);
  if (rc == SQLITE_OK)
    rc = sqlite3_create_function(db, "bcolz_decoded", 1, SQLITE_UTF8 | SQLITE_DIRECTONLY,
                                 NULL, decoded_func, NULL, NULL); /* it reads files */
  return rc;
}

static const sqlite3_module bcolz_module =
    DS_TABLE_WRITER_MODULE_UPDATE(bz_best_index, bz_column, bz_xnext, bcolz_table_xupdate);

/* modules.h */
const ds_table_def ds_bcolz_def = {
    .name = MOD, .methods = &bcolz_module, .register_more = register_more,
    .ops = &bcolz_ops, DS_TABLE_SIZES(bz_vtab, bz_cursor), .declare = declare,
    .table_free = table_free, .cursor_reset = cursor_reset, .cursor_free = cursor_free,
    .select = select_rows, .start = start, .next = bz_next, /* filtered scans */
    .update = bz_update}; /* mode=create|replace */

const ds_help_entry ds_bcolz_help[] = {
    DS_HELP_MODULE("bcolz", "'table/dir'", "'table/dir'", ds_bcolz_option_groups),
    {"function", "bcolz_attrs", "SELECT * FROM bcolz_attrs('table/dir'): the user attributes",
     NULL, 0},
    {"function", "bcolz_stats", "SELECT * FROM bcolz_stats('table/dir'): per-chunk statistics",
     NULL, 0},
    {"function", "bcolz_decoded", "bcolz_decoded(value): a bcolz object cell decoded as JSON",
     NULL, 0},
    {NULL, NULL, NULL, NULL, 0}};

/* module_options.h */
bcolz_table *ds_bcolz_table_of(const ds_dataset *d) {
  return ((const bz_dataset *)d)->table;
}
