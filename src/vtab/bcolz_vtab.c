/* bcolz_vtab.c - the `bcolz`, `bcolz_attrs` and `bcolz_stats` virtual
 * tables: SQL over bcolz carrays and ctables (blosc-compressed columns).
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
 * and LIMIT/OFFSET pick the rows (core/plan.c); a lookup of a few rows
 * reads each row's chunk from the table's bounded LRU cache of decompressed
 * chunks (formats/bcolz_cache.c, cache_mb MiB), or with cache_mb=0
 * decompresses only the Blosc block holding it (blosc_getitem).
 *
 * Pushdown (CREATE form): `col = < <= > >= ?` (BETWEEN arrives as >= and
 * <=), `col IS NULL`, `col IS NOT NULL` on scalar numeric columns (ints,
 * uints, floats, bool, timedelta) and on S / U text columns (BINARY
 * collation), combined with AND, up to MAX_PUSHED. The plan is core/plan.c's
 * idxNum/idxStr plus:
 *   idxNum bit DS_PLAN_MODULE_FLAG (0x200): comparisons are pushed;
 *   idxStr  "<plan>; pushed: x>? AND name IS NOT NULL #1>,3n"
 *           after the last '#': <column number><op> per comparison, ','
 *           between, ops = < l(<=) > g(>=) N(IS NULL) n(IS NOT NULL);
 *   argv    their values, in that order, after plan.c's arguments.
 * They keep omit = 0: SQLite still checks every row returned, so the
 * filters (formats/bcolz_filter.c) are pre-filters that may keep a row they
 * cannot judge but never drop one SQLite would keep; LIMIT/OFFSET then stay
 * with SQLite. A scan of one ascending rowid range tests the first
 * comparison on whole decompressed chunks of its column, the others only on
 * the rows that pass, and decompresses the selected columns' chunks only for
 * rows that pass them all (late materialization); other row sets test row
 * by row. bcolz_decoded(path) reports the decompressions per column. */
#include <jansson.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "core/common.h"
#include "core/options.h"
#include "core/plan.h"
#include "core/rowset.h"
#include "core/sqlite_api.h"
#include "core/value_sql.h"
#include "formats/bcolz.h"
#include "formats/bcolz_cache.h"
#include "formats/bcolz_filter.h"
#include "vtab/dataset.h"
#include "vtab/interrupt.h"
#include "vtab/modules.h"
#include "vtab/vtab_util.h"

#define MOD "bcolz"
/* Row lists shorter than this are read block by block, not chunk by chunk. */
#define FEW_ROWS 64
/* At most this many column comparisons are pushed into one scan. */
#define MAX_PUSHED 16

/* Default cache_mb: decompressed chunks kept for row lookups. */
#define DEFAULT_CACHE_MB 1024

typedef struct bz_dataset {
  ds_dataset base; /* refcount, cache key, path, change detection */
  bcolz_table *table;
  int flags; /* BCOLZ_BYTES_BLOB */
  uint64_t cache_budget;  /* bytes; 0: lookups use blosc_getitem */
  bcolz_cache *cache;     /* created at the first lookup */
} bz_dataset;

/* The module's view of a shared dataset. */
static bz_dataset *BZ(ds_dataset *d) { return (bz_dataset *)d; }

typedef struct bz_vtab {
  sqlite3_vtab base;
  sqlite3 *db; /* for interrupt checks: a filtered xNext may scan long */
  int tvf;
  ds_dataset *ds;
  int col_row, col_path, col_options; /* tvf form */
} bz_vtab;

/* What a cursor holds for one column: its last decompressed chunk. */
typedef struct bz_colcache {
  int have;
  uint64_t chunk;
  uint64_t lo, hi;  /* its rows [lo, hi) */
  const uint8_t *p;
  ds_buf buf;
  int num;          /* NUM_*: how xColumn reads a cell without the value model */
} bz_colcache;

/* Cells xColumn turns into SQL values directly (native byte order). */
enum { NUM_NONE, NUM_I8, NUM_I4, NUM_I2, NUM_I1, NUM_U4, NUM_U2, NUM_U1, NUM_B1, NUM_F8, NUM_F4,
       NUM_S /* S text, not bytes=blob */ };

typedef struct bz_cursor {
  sqlite3_vtab_cursor base;
  ds_dataset *ds;
  ds_rowset rs;
  ds_rowiter it;
  int eof;
  int few;          /* a short row list: read single rows */
  uint64_t row;
  bz_colcache *cols;
  size_t ncols;
  ds_buf atom;      /* single-row reads */
  ds_arena arena;   /* values of the current row */
  char *path_arg, *options_arg;
  /* pushed comparisons (CREATE form): filt[j] on column filt_col[j] */
  bcolz_filter filt[MAX_PUSHED];
  int filt_col[MAX_PUSHED];
  char *filt_text[MAX_PUSHED];
  size_t nfilt;
  int fast;          /* ascending scan of [next, end): 1 chunk-wise
                        filtering, 2 no filters (every row) */
  uint64_t next, end;
} bz_cursor;

/* ds_dataset_ops.close */
static void dataset_close(ds_dataset *d) {
  bcolz_cache_free(BZ(d)->cache);
  bcolz_close(BZ(d)->table);
  free(d);
}

/* ds_dataset_ops.changed: did a chunk file read so far change? */
static int dataset_changed(const ds_dataset *d) {
  return bcolz_stale(((const bz_dataset *)d)->table);
}

/* ds_dataset_ops.open: option bytes=text|blob in both forms. */
static int dataset_open(const char *path, const ds_options *o, int tvf,
                        ds_dataset **out, char **err) {
  (void)tvf;
  static const char *const known[] = {"bytes", "cache_mb", NULL};
  static const char *const bytes_modes[] = {"text", "blob", NULL};
  int bytes;
  int64_t cache_mb;
  if (ds_options_check_known(o, known, err) ||
      ds_options_enum(o, "bytes", bytes_modes, 0, &bytes, err) ||
      ds_options_int(o, "cache_mb", DEFAULT_CACHE_MB, 0, INT64_C(1) << 40, &cache_mb, err)) {
    ds_err_prefix(err, path);
    return -1;
  }
  bz_dataset *d = calloc(1, sizeof *d);
  if (!d) return ds_err(err, "out of memory");
  d->flags = bytes ? BCOLZ_BYTES_BLOB : 0;
  d->cache_budget = (uint64_t)cache_mb << 20;
  if (bcolz_open(path, &d->table, err)) {
    free(d);
    return -1;
  }
  *out = &d->base;
  return 0;
}

static const ds_dataset_ops bcolz_ops = {"bcolz('table/dir' [, 'bytes=blob'])",
                                         dataset_open, dataset_close, dataset_changed};

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

/* CREATE TABLE text of the CREATE form: one column per bcolz column. */
static char *create_sql(const bz_dataset *d) {
  ds_buf b = {0};
  ds_buf_puts(&b, "CREATE TABLE x(");
  for (size_t c = 0; c < bcolz_ncols(d->table); c++) {
    const char *name = bcolz_is_ctable(d->table) ? bcolz_col_name(d->table, c) : "value";
    ds_buf_puts(&b, c ? ", \"" : "\"");
    for (const char *p = name; *p; p++) {
      if (*p == '"') ds_buf_puts(&b, "\""); /* "" inside a quoted name */
      ds_buf_append(&b, p, 1);
    }
    ds_buf_printf(&b, "\" %s", decltype_of(bcolz_col_dtype(d->table, c), d->flags));
  }
  ds_buf_puts(&b, ")");
  if (ds_buf_append(&b, "", 1)) {
    ds_buf_free(&b);
    return NULL;
  }
  return (char *)b.data;
}

static int bz_connect(sqlite3 *db, void *aux, int argc, const char *const *argv,
                      sqlite3_vtab **out, char **pzErr) {
  (void)aux;
  bz_vtab *t = sqlite3_malloc(sizeof *t);
  if (!t) return SQLITE_NOMEM;
  memset(t, 0, sizeof *t);
  t->db = db;
  t->tvf = argc <= 3;
  t->col_row = t->col_path = t->col_options = -1;
  int rc;
  if (t->tvf) {
    rc = sqlite3_declare_vtab(db, "CREATE TABLE x(row TEXT, path HIDDEN, options HIDDEN)");
    t->col_row = 0;
    t->col_path = 1;
    t->col_options = 2;
  } else {
    char *err = NULL, *sql = NULL;
    ds_options o;
    rc = ds_dataset_create(&bcolz_ops, argc, argv, &o, &t->ds, &err) ? SQLITE_ERROR : SQLITE_OK;
    if (rc == SQLITE_OK && !(sql = create_sql(BZ(t->ds)))) rc = SQLITE_NOMEM;
    if (rc == SQLITE_OK) rc = sqlite3_declare_vtab(db, sql);
    free(sql);
    ds_options_free(&o);
    if (err) ds_set_error(pzErr, MOD, err);
  }
  if (rc != SQLITE_OK) {
    ds_dataset_unref(t->ds);
    sqlite3_free(t);
    return rc;
  }
  sqlite3_vtab_config(db, SQLITE_VTAB_DIRECTONLY);
  *out = &t->base;
  return SQLITE_OK;
}

static int bz_disconnect(sqlite3_vtab *vtab) {
  bz_vtab *t = (bz_vtab *)vtab;
  ds_dataset_unref(t->ds);
  sqlite3_free(t);
  return SQLITE_OK;
}

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
static int push_filters(bz_vtab *t, sqlite3_index_info *info) {
  bcolz_table *tb = BZ(t->ds)->table;
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
  bz_vtab *t = (bz_vtab *)vtab;
  double n = t->ds ? (double)bcolz_nrows(BZ(t->ds)->table) : 1e6;
  int args[2] = {t->col_path, t->col_options};
  ds_plan_config cfg = {n, 1.0, NULL, 0, args, t->tvf ? 2 : 0, t->tvf ? 1 : 0};
  int rc = ds_plan_best_index(info, &cfg);
  if (rc == SQLITE_OK && !t->tvf) rc = push_filters(t, info);
  return rc;
}

static int bz_next(sqlite3_vtab_cursor *cur);

static int bz_open(sqlite3_vtab *vtab, sqlite3_vtab_cursor **out) {
  (void)vtab;
  bz_cursor *c = sqlite3_malloc(sizeof *c);
  if (!c) return SQLITE_NOMEM;
  memset(c, 0, sizeof *c);
  c->eof = 1;
  *out = &c->base;
  return SQLITE_OK;
}

static void cursor_reset(bz_cursor *c) {
  ds_rowset_free(&c->rs);
  for (size_t i = 0; i < c->ncols; i++) ds_buf_free(&c->cols[i].buf);
  free(c->cols);
  c->cols = NULL;
  c->ncols = 0;
  ds_dataset_unref(c->ds);
  c->ds = NULL;
  sqlite3_free(c->path_arg);
  sqlite3_free(c->options_arg);
  c->path_arg = c->options_arg = NULL;
  for (size_t j = 0; j < c->nfilt; j++) {
    bcolz_filter_free(&c->filt[j]);
    free(c->filt_text[j]);
    c->filt_text[j] = NULL;
  }
  c->nfilt = 0;
  c->fast = 0;
  c->eof = 1;
}

static int bz_close(sqlite3_vtab_cursor *cur) {
  bz_cursor *c = (bz_cursor *)cur;
  cursor_reset(c);
  ds_buf_free(&c->atom);
  ds_arena_free(&c->arena);
  sqlite3_free(c);
  return SQLITE_OK;
}

/* The filters of idxStr's "#<codes>" with their values, the last argv
 * entries. */
static int set_filters(bz_cursor *c, const char *idxStr, int argc,
                       sqlite3_value **argv, char **err) {
  const char *p = idxStr ? strrchr(idxStr, '#') : NULL;
  if (!p) return ds_err(err, "bad plan");
  bcolz_table *tb = BZ(c->ds)->table;
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

/* NUM_* for a column's dtype (flags: the dataset's BCOLZ_*). */
static int num_kind(const bcolz_dtype *dt, int flags) {
  if (dt->kind == 'S' && dt->ndim == 0 && !(flags & BCOLZ_BYTES_BLOB)) return NUM_S;
  int native = 1;
#if !defined(__BYTE_ORDER__) || __BYTE_ORDER__ != __ORDER_LITTLE_ENDIAN__
  native = dt->itemsize == 1;
#endif
  if (dt->ndim != 0 || dt->byteorder == '>' || !native) return NUM_NONE;
  switch (dt->kind) {
  case 'i':
    return dt->itemsize == 8 ? NUM_I8 : dt->itemsize == 4 ? NUM_I4
         : dt->itemsize == 2 ? NUM_I2 : NUM_I1;
  case 'b':
    return NUM_B1;
  case 'u':
    return dt->itemsize == 4 ? NUM_U4 : dt->itemsize == 2 ? NUM_U2
         : dt->itemsize == 1 ? NUM_U1 : NUM_NONE;
  case 'f':
    return dt->itemsize == 8 ? NUM_F8 : dt->itemsize == 4 ? NUM_F4 : NUM_NONE;
  default:
    return NUM_NONE;
  }
}

static int bz_filter(sqlite3_vtab_cursor *cur, int idxNum, const char *idxStr,
                     int argc, sqlite3_value **argv) {
  bz_cursor *c = (bz_cursor *)cur;
  bz_vtab *t = (bz_vtab *)cur->pVtab;
  cursor_reset(c);
  char *err = NULL;
  ds_plan_args a;
  int rc = ds_plan_decode(idxNum, argc, argv, t->tvf ? 2 : 0, &a, &err);
  if (rc == 0)
    rc = t->tvf ? ds_dataset_for_call(&bcolz_ops, &t->ds, a.args, &c->path_arg,
                                      &c->options_arg, &err)
                : ds_dataset_check(t->ds, &err);
  uint64_t total = 0;
  if (rc == 0) {
    c->ds = t->ds;
    ds_dataset_ref(c->ds);
    total = bcolz_nrows(BZ(c->ds)->table);
    c->ncols = bcolz_ncols(BZ(c->ds)->table);
    c->cols = calloc(c->ncols ? c->ncols : 1, sizeof *c->cols);
    if (!c->cols) rc = ds_err(&err, "out of memory");
    /* max_value_bytes caps chunks, rows and values */
    c->atom.max = c->arena.limit = (size_t)c->ds->max_value;
    for (size_t i = 0; rc == 0 && i < c->ncols; i++) c->cols[i].buf.max = c->atom.max;
  }
  if (rc == 0 && (idxNum & DS_PLAN_MODULE_FLAG)) rc = set_filters(c, idxStr, argc, argv, &err);
  if (rc == 0) {
    if (a.has_ids && a.ids == &a.one) {
      ds_rowset_init_one(&c->rs, a.one);
    } else if (a.has_ids) {
      ds_rowset_init_list(&c->rs, a.ids, a.nids);
      a.ids = NULL;
    } else if (ds_rowset_init_all(&c->rs, total)) {
      rc = ds_err(&err, "out of memory");
    }
  }
  if (rc == 0) {
    ds_rowset_clip(&c->rs, a.lo, a.hi < total ? a.hi : total);
    if (a.empty) ds_rowset_clip(&c->rs, 0, 0);
    c->rs.desc = a.desc;
    c->rs.offset = a.offset;
    c->rs.limit = a.limit;
    c->few = c->rs.kind == DS_RS_LIST && c->rs.nids < FEW_ROWS;
    /* one ascending range: filters test whole chunks of the first column */
    if (!c->few && c->rs.kind == DS_RS_RANGES && c->rs.nranges == 1 && !c->rs.desc &&
        c->rs.offset == 0 && c->rs.limit == UINT64_MAX) {
      c->fast = c->nfilt ? 1 : 2;
      c->next = c->rs.ranges[0].lo > c->rs.lo ? c->rs.ranges[0].lo : c->rs.lo;
      c->end = c->rs.ranges[0].hi < c->rs.hi ? c->rs.ranges[0].hi : c->rs.hi;
    }
  }
  ds_plan_args_free(&a);
  if (rc) return ds_vtab_error(cur->pVtab, MOD, err);
  for (size_t col = 0; rc == 0 && col < c->ncols; col++)
    c->cols[col].num = num_kind(bcolz_col_dtype(BZ(c->ds)->table, col), BZ(c->ds)->flags);
  ds_rowiter_init(&c->it, &c->rs);
  if (c->fast == 2) { /* bz_next steps to c->next first */
    c->row = c->next - 1;
    if (c->next >= c->end) {
      c->eof = 1;
      return SQLITE_OK;
    }
  }
  return bz_next(cur);
}

/* Bytes of column col at row (atom bytes; an object cell's pickle):
 * from the column's cached chunk, or for few rows and object columns
 * from a single-row read. */
static int cell_bytes(bz_cursor *c, size_t col, uint64_t row, const uint8_t **p,
                      size_t *n, char **err) {
  bcolz_table *tb = BZ(c->ds)->table;
  const bcolz_dtype *dt = bcolz_col_dtype(tb, col);
  bz_dataset *d = BZ(c->ds);
  if (c->few && dt->kind != 'O' && d->cache_budget) { /* lookups: cached chunks */
    if (!d->cache) {
      if (!(d->cache = bcolz_cache_new(d->cache_budget))) return ds_err(err, "out of memory");
      bcolz_cache_set_max(d->cache, d->base.max_value);
    }
    if (bcolz_cache_row(d->cache, tb, col, row, p, err)) return -1;
    *n = (size_t)dt->atom;
    return 0;
  }
  if (c->few || dt->kind == 'O') { /* one row: decompress only its block */
    if (bcolz_row_atom(tb, col, row, &c->atom, err)) return -1;
    *p = c->atom.data ? c->atom.data : (const uint8_t *)"";
    *n = c->atom.len;
    return 0;
  }
  bz_colcache *cc = &c->cols[col];
  if (!cc->have || row < cc->lo || row >= cc->hi) {
    uint64_t k = bcolz_col_chunk_of(tb, col, row), rows;
    cc->have = 0;
    if (bcolz_chunk(tb, col, k, &cc->buf, &cc->p, &rows, err)) return -1;
    cc->have = 1;
    cc->chunk = k;
    cc->lo = bcolz_col_chunk_first(tb, col, k);
    cc->hi = cc->lo + rows;
  }
  *p = cc->p + (row - cc->lo) * dt->atom;
  *n = (size_t)dt->atom;
  return 0;
}

/* Do the filters from `first` on pass at row? */
static int row_passes(bz_cursor *c, uint64_t row, size_t first, int *ok, char **err) {
  bcolz_table *tb = BZ(c->ds)->table;
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
  bcolz_table *tb = BZ(c->ds)->table;
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
      c->row = r;
      return 1;
    }
    if (skip_stop(g, r + 1 - from)) return ds_err(err, DS_CANCEL_MSG);
  }
  return 0;
}

/* xNext (and the first row of xFilter). */
static int bz_next(sqlite3_vtab_cursor *cur) {
  bz_cursor *c = (bz_cursor *)cur;
  char *err = NULL;
  if (c->fast == 2) {
    c->eof = ++c->row >= c->end;
    return SQLITE_OK;
  }
  skip_guard g = {((bz_vtab *)cur->pVtab)->db, 0, 0, {{0}, NULL, NULL}};
  int rc = SQLITE_OK;
  if (c->fast) {
    int r = fast_next(c, &g, &err);
    if (r < 0) rc = ds_vtab_error(cur->pVtab, MOD, err);
    else c->eof = !r;
  } else {
    for (;;) {
      c->eof = !ds_rowiter_next(&c->it, &c->row);
      if (c->eof || !c->nfilt) break;
      int ok;
      if (row_passes(c, c->row, 0, &ok, &err)) {
        rc = ds_vtab_error(cur->pVtab, MOD, err);
        break;
      }
      if (ok) break;
      if (skip_stop(&g, 1)) {
        rc = ds_vtab_error(cur->pVtab, MOD, ds_strf(DS_CANCEL_MSG));
        break;
      }
    }
  }
  return skip_end(&g) ? ds_vtab_interrupted(cur->pVtab) : rc;
}

static int bz_eof(sqlite3_vtab_cursor *cur) { return ((bz_cursor *)cur)->eof; }

/* The value of column col at the current row (in the cursor's arena). */
static int cell(bz_cursor *c, size_t col, ds_value *v, char **err) {
  const uint8_t *p;
  size_t n;
  bcolz_table *tb = BZ(c->ds)->table;
  if (cell_bytes(c, col, c->row, &p, &n, err)) return -1;
  if (bcolz_cell_value(bcolz_col_dtype(tb, col), p, n, BZ(c->ds)->flags, &c->arena, v,
                       err) == 0)
    return 0;
  if (c->arena.over) ds_arena_fail(&c->arena, err); /* max_value_bytes */
  char *m = ds_strf("%s: row %llu: %s", bcolz_col_path(tb, col), (unsigned long long)c->row,
                    *err ? *err : "?");
  free(*err);
  *err = m;
  return -1;
}

/* The whole row as JSON: an object for a ctable, the value for a carray. */
static int row_json(bz_cursor *c, ds_buf *out, char **err) {
  bcolz_table *tb = BZ(c->ds)->table;
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

/* A native number from the cached chunk of column col: 1 done, 0 not
 * possible here. */
static int column_number(bz_cursor *c, sqlite3_context *ctx, int col) {
  bz_colcache *cc = &c->cols[col];
  if (!cc->num || !cc->have || c->row < cc->lo || c->row >= cc->hi || c->few) return 0;
  uint64_t i = c->row - cc->lo;
  const uint8_t *p = cc->p;
  union { int64_t i8; int32_t i4; int16_t i2; int8_t i1; uint32_t u4; uint16_t u2;
          double f8; float f4; } v;
  switch (cc->num) {
  case NUM_I8: memcpy(&v.i8, p + 8 * i, 8); sqlite3_result_int64(ctx, v.i8); return 1;
  case NUM_I4: memcpy(&v.i4, p + 4 * i, 4); sqlite3_result_int64(ctx, v.i4); return 1;
  case NUM_I2: memcpy(&v.i2, p + 2 * i, 2); sqlite3_result_int64(ctx, v.i2); return 1;
  case NUM_I1: memcpy(&v.i1, p + i, 1); sqlite3_result_int64(ctx, v.i1); return 1;
  case NUM_U4: memcpy(&v.u4, p + 4 * i, 4); sqlite3_result_int64(ctx, v.u4); return 1;
  case NUM_U2: memcpy(&v.u2, p + 2 * i, 2); sqlite3_result_int64(ctx, v.u2); return 1;
  case NUM_U1: sqlite3_result_int64(ctx, p[i]); return 1;
  case NUM_B1: sqlite3_result_int64(ctx, p[i] != 0); return 1;
  case NUM_F8:
    memcpy(&v.f8, p + 8 * i, 8);
    if (!isnan(v.f8)) sqlite3_result_double(ctx, v.f8);
    return 1;
  case NUM_F4:
    memcpy(&v.f4, p + 4 * i, 4);
    if (!isnan(v.f4)) sqlite3_result_double(ctx, v.f4);
    return 1;
  case NUM_S: { /* TEXT without trailing NULs; BLOB when not UTF-8 */
    size_t w = bcolz_col_dtype(BZ(c->ds)->table, (size_t)col)->itemsize, n = w;
    const uint8_t *e = p + w * i;
    while (n > 0 && e[n - 1] == 0) n--;
    if (ds_utf8_valid(e, n)) ds_result_text(ctx, e, n);
    else sqlite3_result_blob64(ctx, n ? (const void *)e : "", n, SQLITE_TRANSIENT);
    return 1;
  }
  default:
    return 0;
  }
}

static int bz_column(sqlite3_vtab_cursor *cur, sqlite3_context *ctx, int col) {
  bz_cursor *c = (bz_cursor *)cur;
  bz_vtab *t = (bz_vtab *)cur->pVtab;
  char *err = NULL;
  if (!t->tvf && col >= 0 && (size_t)col < c->ncols && column_number(c, ctx, col))
    return SQLITE_OK;
  ds_arena_reset(&c->arena);
  if (col == t->col_path) {
    if (c->path_arg) sqlite3_result_text(ctx, c->path_arg, -1, SQLITE_TRANSIENT);
  } else if (col == t->col_options) {
    if (c->options_arg) sqlite3_result_text(ctx, c->options_arg, -1, SQLITE_TRANSIENT);
  } else if (col == t->col_row) {
    ds_buf json = {0};
    json.max = (size_t)c->ds->max_value; /* max_value_bytes holds for the text too */
    if (row_json(c, &json, &err)) {
      if (json.over) {
        free(err);
        err = ds_strf("%s: row %llu: JSON text of more than %zu bytes: more than "
                      "max_value_bytes=%zu", bcolz_path(BZ(c->ds)->table),
                      (unsigned long long)c->row, json.max, json.max);
      }
      ds_result_error(ctx, MOD, err);
    }
    else ds_result_json(ctx, &json);
    ds_buf_free(&json);
  } else {
    /* scalar numbers straight from the chunk; the rest through the value
     * model */
    const bcolz_dtype *dt = bcolz_col_dtype(BZ(c->ds)->table, (size_t)col);
    const uint8_t *p;
    size_t n;
    int64_t i;
    double d;
    if (cell_bytes(c, (size_t)col, c->row, &p, &n, &err)) {
      ds_result_error(ctx, MOD, err);
      return SQLITE_OK;
    }
    switch (bcolz_cell_number(dt, p, &i, &d)) {
    case BCOLZ_NUM_INT: sqlite3_result_int64(ctx, i); return SQLITE_OK;
    case BCOLZ_NUM_FLOAT: sqlite3_result_double(ctx, d); return SQLITE_OK;
    case BCOLZ_NUM_NULL: return SQLITE_OK;
    default: break;
    }
    ds_value v; /* through cell(): errors name the column's file and the row */
    if (cell(c, (size_t)col, &v, &err))
      ds_result_error(ctx, MOD, err);
    else
      ds_value_result(ctx, &v);
  }
  return SQLITE_OK;
}

static int bz_rowid(sqlite3_vtab_cursor *cur, sqlite3_int64 *rowid) {
  *rowid = (sqlite3_int64)((bz_cursor *)cur)->row;
  return SQLITE_OK;
}

static sqlite3_module bcolz_module = {
    .iVersion = 0,
    .xCreate = bz_connect,
    .xConnect = bz_connect,
    .xBestIndex = bz_best_index,
    .xDisconnect = bz_disconnect,
    .xDestroy = bz_disconnect,
    .xOpen = bz_open,
    .xClose = bz_close,
    .xFilter = bz_filter,
    .xNext = bz_next,
    .xEof = bz_eof,
    .xColumn = bz_column,
    .xRowid = bz_rowid,
};

/* ---- bcolz_attrs(path) and bcolz_stats(path): small row lists ---- */

/* One result row: up to 8 values. */
typedef struct list_row {
  ds_value v[8];
} list_row;

typedef struct list_cursor {
  sqlite3_vtab_cursor base;
  list_row *rows;
  size_t n, i;
  ds_arena arena;
  char *path;
} list_cursor;

typedef struct list_vtab {
  sqlite3_vtab base;
  sqlite3 *db; /* for interrupt checks: statistics read whole columns */
  int ncols;   /* data columns before the HIDDEN path */
  int stats;   /* 1: bcolz_stats, 0: bcolz_attrs */
} list_vtab;

static int list_connect(sqlite3 *db, void *aux, int argc, const char *const *argv,
                        sqlite3_vtab **out, char **pzErr) {
  (void)argc;
  (void)argv;
  (void)pzErr;
  int stats = aux != NULL;
  int rc = sqlite3_declare_vtab(
      db, stats ? "CREATE TABLE x(\"column\" TEXT, dtype TEXT, count INTEGER, nulls INTEGER,"
                  " min, max, sum, mean REAL, path HIDDEN)"
                : "CREATE TABLE x(name TEXT, value TEXT, \"column\" TEXT, path HIDDEN)");
  if (rc != SQLITE_OK) return rc;
  sqlite3_vtab_config(db, SQLITE_VTAB_DIRECTONLY);
  list_vtab *t = sqlite3_malloc(sizeof *t);
  if (!t) return SQLITE_NOMEM;
  memset(t, 0, sizeof *t);
  t->db = db;
  t->stats = stats;
  t->ncols = stats ? 8 : 3;
  *out = &t->base;
  return SQLITE_OK;
}

static int list_disconnect(sqlite3_vtab *t) {
  sqlite3_free(t);
  return SQLITE_OK;
}

static int list_best_index(sqlite3_vtab *vt, sqlite3_index_info *info) {
  list_vtab *t = (list_vtab *)vt;
  int args[1] = {t->ncols};
  ds_plan_config cfg = {10, 1.0, NULL, 0, args, 1, 1};
  return ds_plan_best_index(info, &cfg);
}

static int list_open(sqlite3_vtab *t, sqlite3_vtab_cursor **out) {
  (void)t;
  list_cursor *c = sqlite3_malloc(sizeof *c);
  if (!c) return SQLITE_NOMEM;
  memset(c, 0, sizeof *c);
  *out = &c->base;
  return SQLITE_OK;
}

static void list_reset(list_cursor *c) {
  free(c->rows);
  c->rows = NULL;
  c->n = c->i = 0;
  ds_arena_reset(&c->arena);
  sqlite3_free(c->path);
  c->path = NULL;
}

static int list_close(sqlite3_vtab_cursor *cur) {
  list_cursor *c = (list_cursor *)cur;
  list_reset(c);
  ds_arena_free(&c->arena);
  sqlite3_free(c);
  return SQLITE_OK;
}

/* A TEXT value copied into the arena. */
static void text_value(ds_arena *a, const char *s, ds_value *v) {
  size_t n = strlen(s);
  char *p = ds_arena_alloc(a, n + 1);
  memset(v, 0, sizeof *v);
  if (!p) return; /* NULL value: out of memory shows as NULL */
  memcpy(p, s, n + 1);
  v->type = DS_V_TEXT;
  v->u.s.p = (const uint8_t *)p;
  v->u.s.n = n;
}

/* Append one row; NULL when out of memory. */
static list_row *add_row(list_cursor *c) {
  list_row *r = ds_grow(c->rows, c->n, sizeof *r);
  if (!r) return NULL;
  c->rows = r;
  memset(&r[c->n], 0, sizeof *r);
  return &r[c->n++];
}

/* Rows name, value (JSON), column for one __attrs__ object. */
static int attrs_rows(list_cursor *c, const char *json, const char *column, char **err) {
  json_error_t je;
  json_t *o = json_loads(json, JSON_DECODE_ANY, &je);
  if (!o || !json_is_object(o)) {
    json_decref(o);
    return ds_err(err, "__attrs__%s%s is not a JSON object", column ? " of " : "",
                  column ? column : "");
  }
  const char *k;
  json_t *x;
  json_object_foreach(o, k, x) {
    list_row *r = add_row(c);
    char *text = json_dumps(x, JSON_ENCODE_ANY | JSON_COMPACT);
    if (!r || !text) {
      free(text);
      json_decref(o);
      return ds_err(err, "out of memory");
    }
    text_value(&c->arena, k, &r->v[0]);
    text_value(&c->arena, text, &r->v[1]);
    if (column) text_value(&c->arena, column, &r->v[2]);
    free(text);
  }
  json_decref(o);
  return 0;
}

/* One row of statistics for column col. */
static int stats_row(list_cursor *c, bcolz_table *tb, size_t col, char **err) {
  bcolz_stats s;
  int rc = bcolz_column_stats(tb, col, &s, err);
  list_row *r = rc == 0 ? add_row(c) : NULL;
  if (rc == 0 && !r) rc = ds_err(err, "out of memory");
  if (rc == 0) {
    const bcolz_dtype *dt = bcolz_col_dtype(tb, col);
    text_value(&c->arena, bcolz_is_ctable(tb) ? bcolz_col_name(tb, col) : "value", &r->v[0]);
    text_value(&c->arena, dt->str, &r->v[1]);
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

static int list_filter(sqlite3_vtab_cursor *cur, int idxNum, const char *idxStr,
                       int argc, sqlite3_value **argv) {
  (void)idxStr;
  list_cursor *c = (list_cursor *)cur;
  list_vtab *t = (list_vtab *)cur->pVtab;
  const char *mod = t->stats ? "bcolz_stats" : "bcolz_attrs";
  list_reset(c);
  char *err = NULL;
  ds_plan_args a;
  int rc = ds_plan_decode(idxNum, argc, argv, 1, &a, &err);
  const char *path = rc == 0 && a.args[0] ? (const char *)sqlite3_value_text(a.args[0]) : NULL;
  if (rc == 0 && !path) rc = ds_err(&err, "no path given: use %s('table/dir')", mod);
  bcolz_table *tb = NULL;
  if (rc == 0) {
    c->path = sqlite3_mprintf("%s", path);
    rc = bcolz_open(path, &tb, &err);
  }
  ds_interrupt it;
  ds_interrupt_begin(&it, t->db);
  for (size_t col = 0; rc == 0 && t->stats && col < bcolz_ncols(tb); col++)
    rc = stats_row(c, tb, col, &err);
  if (ds_interrupt_end(&it)) {
    bcolz_close(tb);
    ds_plan_args_free(&a);
    free(err);
    return ds_vtab_interrupted(cur->pVtab);
  }
  if (rc == 0 && !t->stats) {
    rc = attrs_rows(c, bcolz_attrs_json(tb), NULL, &err);
    for (size_t col = 0; rc == 0 && bcolz_is_ctable(tb) && col < bcolz_ncols(tb); col++)
      rc = attrs_rows(c, bcolz_col_attrs_json(tb, col), bcolz_col_name(tb, col), &err);
    if (rc) ds_err_prefix(&err, path);
  }
  bcolz_close(tb);
  ds_plan_args_free(&a);
  if (rc) return ds_vtab_error(cur->pVtab, mod, err);
  c->i = a.offset < c->n ? (size_t)a.offset : c->n;
  if (a.limit < c->n - c->i) c->n = c->i + (size_t)a.limit;
  return SQLITE_OK;
}

static int list_next(sqlite3_vtab_cursor *cur) {
  ((list_cursor *)cur)->i++;
  return SQLITE_OK;
}

static int list_eof(sqlite3_vtab_cursor *cur) {
  list_cursor *c = (list_cursor *)cur;
  return c->i >= c->n;
}

static int list_column(sqlite3_vtab_cursor *cur, sqlite3_context *ctx, int col) {
  list_cursor *c = (list_cursor *)cur;
  list_vtab *t = (list_vtab *)cur->pVtab;
  if (col == t->ncols) {
    sqlite3_result_text(ctx, c->path, -1, SQLITE_TRANSIENT);
  } else if (!t->stats && col == 1 && c->rows[c->i].v[1].type == DS_V_TEXT) {
    ds_buf b = {0}; /* attribute values are JSON */
    ds_buf_append(&b, c->rows[c->i].v[1].u.s.p, c->rows[c->i].v[1].u.s.n);
    ds_result_json(ctx, &b);
    ds_buf_free(&b);
  } else if (col >= 0 && col < 8) {
    ds_value_result(ctx, &c->rows[c->i].v[col]);
  }
  return SQLITE_OK;
}

static int list_rowid(sqlite3_vtab_cursor *cur, sqlite3_int64 *rowid) {
  *rowid = (sqlite3_int64)((list_cursor *)cur)->i;
  return SQLITE_OK;
}

static sqlite3_module list_module = {
    .iVersion = 0,
    .xCreate = NULL, /* table-valued only */
    .xConnect = list_connect,
    .xBestIndex = list_best_index,
    .xDisconnect = list_disconnect,
    .xDestroy = list_disconnect,
    .xOpen = list_open,
    .xClose = list_close,
    .xFilter = list_filter,
    .xNext = list_next,
    .xEof = list_eof,
    .xColumn = list_column,
    .xRowid = list_rowid,
};

/* bcolz_decoded(path): JSON {column: decompressions} of the table at path
 * in this process so far (see bcolz_decode_count): proof that a query
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
    ds_buf_printf(&b, ":%llu", (unsigned long long)bcolz_decode_count(bcolz_col_path(tb, col)));
  }
  ds_buf_puts(&b, "}");
  bcolz_close(tb);
  ds_result_json(ctx, &b);
  ds_buf_free(&b);
}

int ds_bcolz_register(sqlite3 *db) {
  static int stats_flag = 1;
  int rc = sqlite3_create_module_v2(db, "bcolz", &bcolz_module, NULL, NULL);
  if (rc == SQLITE_OK)
    rc = sqlite3_create_module_v2(db, "bcolz_attrs", &list_module, NULL, NULL);
  if (rc == SQLITE_OK)
    rc = sqlite3_create_module_v2(db, "bcolz_stats", &list_module, &stats_flag, NULL);
  if (rc == SQLITE_OK)
    rc = sqlite3_create_function(db, "bcolz_decoded", 1, SQLITE_UTF8, NULL, decoded_func,
                                 NULL, NULL);
  return rc;
}

const sqlite3_module *ds_bcolz_module(void) { return &bcolz_module; }
