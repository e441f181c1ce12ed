/* bagz_vtab.c - the `bagz` virtual table: SQL over bagz files.
 *
 *   SELECT rowid, length(record) FROM bagz('data@4.bagz') WHERE rowid < 10;
 *   CREATE VIRTUAL TABLE temp.t USING bagz('data@*.bagz', layout=interleaved);
 *   SELECT shard, count(*) FROM t GROUP BY shard;
 *
 * Columns: record BLOB, shard INTEGER, shard_index INTEGER, and in the
 * table-valued form the HIDDEN arguments path and options. rowid is the
 * global record index. Options: compression=auto|none|zstd,
 * limits=tail|separate, layout=concatenated|interleaved,
 * dictionary=<file>, threads=1|2 (2: decompress ahead on a second thread
 * during scans).
 *
 * Planning (core/plan.c): rowid =, IN, ranges, shard = / IN, record = / IN
 * and LIMIT/OFFSET become a ds_rowset, so only the records a query returns
 * are read; count(*) and the shard columns never decompress anything.
 * record = uses a hash index of all records, built once per dataset on
 * first use (upstream's MultiIndex: every matching row, ascending). */
#include <stdlib.h>
#include <string.h>

#include "core/common.h"
#include "core/hash_index.h"
#include "core/options.h"
#include "core/plan.h"
#include "core/rowset.h"
#include "core/sqlite_api.h"
#include "formats/bagz.h"
#include "formats/bagz_readahead.h"
#include "vtab/dataset.h"
#include "vtab/interrupt.h"
#include "vtab/modules.h"
#include "vtab/vtab_util.h"

#define MOD "bagz"

enum { COL_RECORD, COL_SHARD, COL_SHARD_INDEX, COL_PATH, COL_OPTIONS };

/* An opened bag with its options and lazily built record index. Shared
 * (reference-counted) by the table and its cursors. */
typedef struct bagz_dataset {
  ds_dataset base; /* refcount, cache key, path, change detection */
  bagz_reader *reader;
  int threads;
  int indexed;
  ds_hash_index index;
} bagz_dataset;

/* The module's view of a shared dataset. */
static bagz_dataset *BAG(ds_dataset *d) { return (bagz_dataset *)d; }

typedef struct bagz_vtab {
  sqlite3_vtab base;
  sqlite3 *db;        /* for interrupt checks (vtab/interrupt.h) */
  int tvf;            /* table-valued form: the dataset comes from xFilter */
  ds_dataset *ds;     /* CREATE form: the table's; tvf: last one used */
  /* A zstd context and buffer kept between cursors: SQLite opens a cursor
   * per statement run, and a fresh ZSTD_DCtx costs more than a lookup. */
  int spare;
  ds_zstd_ctx spare_z;
  ds_buf spare_buf;
} bagz_vtab;

typedef struct bagz_cursor {
  sqlite3_vtab_cursor base;
  ds_dataset *ds;
  ds_rowset rs;
  ds_rowiter it;
  int eof;
  uint64_t row;
  size_t shard;
  uint64_t shard_index;
  ds_zstd_ctx z;
  ds_buf scratch;
  bagz_readahead *ra;   /* scans with threads=2 that read records */
  const uint8_t *ra_rec; /* the current row's record from the read-ahead */
  size_t ra_len;
  char *ra_err;          /* a read-ahead failure, reported by xNext */
  char *path_arg, *options_arg;
  int located;             /* row/shard/shard_index are valid */
  int reads_records;       /* the plan reads the record column */
  bagz_io io;              /* windows on the files (reads with pread) */
} bagz_cursor;

/* idxNum flag (module-specific bit of plan.h's encoding): the query reads
 * the record column, so a scan may decompress ahead. */
#define PLAN_RECORD_USED DS_PLAN_MODULE_FLAG
/* Scans shorter than this are not worth a thread. */
#define READAHEAD_MIN_ROWS 512

static const char *const known_options[] = {"compression", "limits", "layout",
                                            "dictionary", "threads", NULL};
static const char *const compression_names[] = {"auto", "none", "zstd", NULL};
static const char *const limits_names[] = {"tail", "separate", NULL};
static const char *const layout_names[] = {"concatenated", "interleaved", NULL};

/* ds_dataset_ops.close */
static void dataset_close(ds_dataset *base) {
  bagz_dataset *d = BAG(base);
  bagz_close(d->reader);
  ds_hash_index_free(&d->index);
  free(d);
}

/* ds_dataset_ops.changed */
static int dataset_changed(const ds_dataset *d) {
  return bagz_stale(((const bagz_dataset *)d)->reader);
}

/* ds_dataset_ops.open: both forms take the same options. */
static int dataset_open(const char *path, const ds_options *o, int tvf,
                        ds_dataset **out, char **err) {
  (void)tvf;
  bagz_options bo = {0};
  int comp, lim, lay;
  int64_t threads;
  if (ds_options_check_known(o, known_options, err) ||
      ds_options_enum(o, "compression", compression_names, 0, &comp, err) ||
      ds_options_enum(o, "limits", limits_names, 0, &lim, err) ||
      ds_options_enum(o, "layout", layout_names, 0, &lay, err) ||
      ds_options_int(o, "threads", 2, 1, 2, &threads, err)) {
    ds_err_prefix(err, path); /* every error names the path */
    return -1;
  }
  bo.compression = (bagz_compression)comp;
  bo.limits = (bagz_limits)lim;
  bo.layout = (ds_layout)lay;
  bo.dictionary_path = ds_options_get(o, "dictionary");
  bagz_dataset *d = calloc(1, sizeof *d);
  if (!d) return ds_err(err, "out of memory");
  if (bagz_open(path, &bo, &d->reader, err)) {
    free(d);
    return -1;
  }
  d->threads = (int)threads;
  *out = &d->base;
  return 0;
}

static const ds_dataset_ops bagz_ops = {
    "bagz('file.bagz' [, 'name=value,...'])", dataset_open, dataset_close,
    dataset_changed};

/* Reads one record for the hash index builder. */
typedef struct index_ctx {
  bagz_reader *r;
  ds_zstd_ctx z;
  bagz_io io;
  ds_buf buf;
} index_ctx;

static int index_get(void *ctx, uint64_t row, const uint8_t **p, size_t *n,
                     char **err) {
  index_ctx *c = ctx;
  return bagz_read(c->r, &c->z, &c->io, row, &c->buf, p, n, err);
}

/* Build the record index once per dataset. */
static int dataset_index(bagz_dataset *d, char **err) {
  if (d->indexed) return 0;
  index_ctx c;
  memset(&c, 0, sizeof c);
  c.r = d->reader;
  ds_zstd_ctx_init(&c.z, d->reader->dict);
  c.buf.max = (size_t)d->base.max_value;
  int rc = ds_hash_index_build(&d->index, bagz_count(d->reader), index_get, &c, err);
  ds_zstd_ctx_free(&c.z);
  bagz_io_free(&c.io);
  ds_buf_free(&c.buf);
  if (rc == 0) d->indexed = 1;
  return rc;
}

/* xCreate / xConnect: no arguments = the table-valued form. */
static int bagz_connect(sqlite3 *db, void *aux, int argc, const char *const *argv,
                        sqlite3_vtab **out, char **pzErr) {
  (void)aux;
  int tvf = argc <= 3;
  int rc = sqlite3_declare_vtab(
      db, tvf ? "CREATE TABLE x(record BLOB, shard INTEGER, shard_index INTEGER,"
                " path HIDDEN, options HIDDEN)"
              : "CREATE TABLE x(record BLOB, shard INTEGER, shard_index INTEGER)");
  if (rc != SQLITE_OK) return rc;
  sqlite3_vtab_config(db, SQLITE_VTAB_DIRECTONLY);
  bagz_vtab *t = sqlite3_malloc(sizeof *t);
  if (!t) return SQLITE_NOMEM;
  memset(t, 0, sizeof *t);
  t->db = db;
  t->tvf = tvf;
  if (!tvf) {
    char *err = NULL;
    ds_options o;
    ds_dataset_create(&bagz_ops, argc, argv, &o, &t->ds, &err);
    ds_options_free(&o);
    if (err) {
      sqlite3_free(t);
      return ds_set_error(pzErr, MOD, err);
    }
  }
  *out = &t->base;
  return SQLITE_OK;
}

static int bagz_disconnect(sqlite3_vtab *vtab) {
  bagz_vtab *t = (bagz_vtab *)vtab;
  if (t->spare) {
    ds_zstd_ctx_free(&t->spare_z);
    ds_buf_free(&t->spare_buf);
  }
  ds_dataset_unref(t->ds);
  sqlite3_free(t);
  return SQLITE_OK;
}

/* Cost model: reading a row costs 1 (a record may need decompression);
 * rowid and shard constraints touch only the rows they name; record = pays
 * once for the index (half a scan, so the planner still prefers it to
 * scanning and filtering), then about one row per value. */
static int bagz_best_index(sqlite3_vtab *vtab, sqlite3_index_info *info) {
  bagz_vtab *t = (bagz_vtab *)vtab;
  bagz_dataset *d = t->ds ? BAG(t->ds) : NULL;
  double n = d ? (double)bagz_count(d->reader) : 1e6;
  double shards = d ? (double)d->reader->nshards : 4;
  ds_plan_extra extra[2] = {
      {COL_SHARD, "shard", n / (shards > 0 ? shards : 1), 0},
      {COL_RECORD, "record", 1, d && d->indexed ? 0 : n * 0.5}};
  static const int args[2] = {COL_PATH, COL_OPTIONS};
  ds_plan_config cfg = {n, 1.0, extra, 2, args, t->tvf ? 2 : 0, t->tvf ? 1 : 0};
  int rc = ds_plan_best_index(info, &cfg);
  if (rc == SQLITE_OK && (info->colUsed & ((sqlite3_uint64)1 << COL_RECORD)))
    info->idxNum |= PLAN_RECORD_USED;
  return rc;
}

static int bagz_open_cursor(sqlite3_vtab *vtab, sqlite3_vtab_cursor **out) {
  bagz_vtab *t = (bagz_vtab *)vtab;
  bagz_cursor *c = sqlite3_malloc(sizeof *c);
  if (!c) return SQLITE_NOMEM;
  memset(c, 0, sizeof *c);
  if (t->spare) { /* reuse the last cursor's context and buffer */
    c->z = t->spare_z;
    c->scratch = t->spare_buf;
    t->spare = 0;
  } else {
    ds_zstd_ctx_init(&c->z, NULL);
  }
  c->eof = 1;
  *out = &c->base;
  return SQLITE_OK;
}

/* Drop what one xFilter set up. */
static void cursor_reset(bagz_cursor *c) {
  bagz_readahead_free(c->ra);
  c->ra = NULL;
  free(c->ra_err);
  c->ra_err = NULL;
  ds_rowset_free(&c->rs);
  ds_dataset_unref(c->ds);
  c->ds = NULL;
  sqlite3_free(c->path_arg);
  sqlite3_free(c->options_arg);
  c->path_arg = c->options_arg = NULL;
  c->eof = 1;
}

static int bagz_close_cursor(sqlite3_vtab_cursor *cur) {
  bagz_cursor *c = (bagz_cursor *)cur;
  bagz_vtab *t = (bagz_vtab *)cur->pVtab;
  cursor_reset(c);
  bagz_io_free(&c->io);
  if (!t->spare && c->scratch.cap <= ((size_t)1 << 20)) {
    t->spare_z = c->z; /* keep for the next cursor */
    t->spare_buf = c->scratch;
    t->spare = 1;
  } else {
    ds_zstd_ctx_free(&c->z);
    ds_buf_free(&c->scratch);
  }
  sqlite3_free(c);
  return SQLITE_OK;
}

/* Rows whose record equals one of the constraint's BLOB values. */
typedef struct record_pick {
  bagz_dataset *d;
  ds_zstd_ctx *z;
  bagz_io *io;
  ds_buf *buf;
  uint64_t *ids;
  size_t n;
  char *err;
} record_pick;

static int pick_record(void *ctx, sqlite3_value *v) {
  record_pick *p = ctx;
  if (sqlite3_value_type(v) != SQLITE_BLOB) return 0; /* SQLite: TEXT never equals a BLOB */
  const void *key = sqlite3_value_blob(v);
  size_t klen = (size_t)sqlite3_value_bytes(v);
  const ds_hash_entry *e;
  size_t m = ds_hash_index_find(&p->d->index, key ? key : "", klen, &e);
  for (size_t i = 0; i < m; i++) {
    const uint8_t *rec;
    size_t len;
    if (bagz_read(p->d->reader, p->z, p->io, e[i].row, p->buf, &rec, &len, &p->err)) return 1;
    if (len != klen || (klen && memcmp(rec, key, klen) != 0)) continue;
    uint64_t *ids = ds_grow(p->ids, p->n, sizeof *ids);
    if (!ids) return ds_err(&p->err, "out of memory"), 1;
    p->ids = ids;
    p->ids[p->n++] = e[i].row;
  }
  return 0;
}

/* Keep only ids whose shard is picked. */
static size_t filter_ids_by_shard(const bagz_reader *r, const unsigned char *on,
                                  uint64_t *ids, size_t n) {
  size_t j = 0;
  for (size_t i = 0; i < n; i++) {
    size_t s;
    uint64_t idx;
    if (ids[i] >= bagz_count(r)) continue;
    ds_shard_map_locate(&r->map, ids[i], &s, &idx);
    if (on[s]) ids[j++] = ids[i];
  }
  return j;
}

/* Turn the decoded plan into the cursor's rowset. */
static int build_rowset(bagz_cursor *c, ds_plan_args *a, char **err) {
  const bagz_reader *r = BAG(c->ds)->reader;
  uint64_t total = bagz_count(r);
  unsigned char *on = NULL;
  uint64_t *ids = NULL;
  size_t nids = 0;
  int have_ids = 0;
  if (a->extra[0]) { /* shard */
    on = ds_plan_flag_ints(a->extra[0], a->extra_in[0], r->nshards);
    if (!on) return ds_err(err, "out of memory");
  }
  if (a->extra[1]) { /* record */
    if (dataset_index(BAG(c->ds), err)) { free(on); return -1; }
    record_pick rp = {BAG(c->ds), &c->z, &c->io, &c->scratch, NULL, 0, NULL};
    if (ds_plan_each_value(a->extra[1], a->extra_in[1], pick_record, &rp)) {
      free(rp.ids);
      free(on);
      if (rp.err) { free(*err); *err = rp.err; return -1; }
      return ds_err(err, "cannot read the IN list of record values");
    }
    ids = rp.ids;
    nids = rp.n;
    have_ids = 1;
  }
  if (a->has_ids) {
    if (have_ids) { /* rowid list AND record matches: keep the common ones */
      ds_rowset probe;
      ds_rowset_init_list(&probe, ids, nids);
      size_t j = 0;
      for (size_t i = 0; i < a->nids; i++)
        if (ds_rowset_contains(&probe, a->ids[i])) a->ids[j++] = a->ids[i];
      ds_rowset_free(&probe);
      a->nids = j;
    }
    ids = a->ids;
    nids = a->nids;
    a->ids = NULL;
    have_ids = 1;
  }
  if (have_ids) {
    if (on) nids = filter_ids_by_shard(r, on, ids, nids);
    if (ids == &a->one) {
      if (nids == 1) ds_rowset_init_one(&c->rs, a->one);
      else ds_rowset_init_list(&c->rs, NULL, 0);
    } else {
      ds_rowset_init_list(&c->rs, ids, nids);
    }
  } else if (on) {
    if (ds_rowset_init_shards(&c->rs, r->map.layout == DS_LAYOUT_INTERLEAVED,
                              r->map.first, r->map.counts, r->nshards, on)) {
      free(on);
      return ds_err(err, "out of memory");
    }
  } else if (ds_rowset_init_all(&c->rs, total)) {
    return ds_err(err, "out of memory");
  }
  free(on);
  ds_rowset_clip(&c->rs, a->lo, a->hi < total ? a->hi : total);
  if (a->empty) ds_rowset_clip(&c->rs, 0, 0);
  c->rs.desc = a->desc;
  c->rs.offset = a->offset;
  c->rs.limit = a->limit;
  return 0;
}

/* Move to the next row of the rowset (through the read-ahead if any).
 * SQLITE_ERROR when the read-ahead met a bad record. */
static int cursor_step(bagz_cursor *c) {
  uint64_t g;
  if (c->ra) {
    int r = bagz_readahead_next(c->ra, &g, &c->ra_rec, &c->ra_len, &c->ra_err);
    if (r < 0) return SQLITE_ERROR;
    if (r == 0) {
      c->eof = 1;
      return SQLITE_OK;
    }
  } else if (!ds_rowiter_next(&c->it, &g)) {
    c->eof = 1;
    return SQLITE_OK;
  }
  const bagz_reader *r = BAG(c->ds)->reader;
  if (c->located && g == c->row + 1 && r->map.layout == DS_LAYOUT_CONCATENATED &&
      c->shard_index + 1 < r->map.counts[c->shard]) {
    c->shard_index++; /* the next row of a scan: same shard */
  } else {
    ds_shard_map_locate(&r->map, g, &c->shard, &c->shard_index);
  }
  c->row = g;
  c->located = 1;
  return SQLITE_OK;
}

/* Does the rowset hold at least `n` rows? (cheap: stops counting at n) */
static int rowset_has(const ds_rowset *rs, uint64_t n) {
  ds_rowiter it;
  ds_rowiter_init(&it, rs);
  uint64_t g, k = 0;
  while (k < n && ds_rowiter_next(&it, &g)) k++;
  return k >= n;
}

/* Report a read-ahead error through the table. */
static int step_error(bagz_cursor *c) {
  char *e = c->ra_err;
  c->ra_err = NULL;
  return ds_vtab_error(c->base.pVtab, MOD, e ? e : strdup("read-ahead failed"));
}

static int filter(sqlite3_vtab_cursor *cur, int idxNum, int argc, sqlite3_value **argv) {
  bagz_cursor *c = (bagz_cursor *)cur;
  bagz_vtab *t = (bagz_vtab *)cur->pVtab;
  cursor_reset(c);
  char *err = NULL;
  ds_plan_args a;
  int rc = ds_plan_decode(idxNum, argc, argv, t->tvf ? 2 : 0, &a, &err);
  if (rc == 0)
    rc = t->tvf ? ds_dataset_for_call(&bagz_ops, &t->ds, a.args, &c->path_arg,
                                      &c->options_arg, &err)
                : ds_dataset_check(t->ds, &err);
  if (rc == 0) {
    c->ds = t->ds;
    ds_dataset_ref(c->ds);
    c->scratch.max = (size_t)c->ds->max_value;
    rc = build_rowset(c, &a, &err);
  }
  ds_plan_args_free(&a);
  if (rc) return ds_vtab_error(cur->pVtab, MOD, err);
  ds_rowiter_init(&c->it, &c->rs);
  c->eof = 0;
  c->located = 0;
  c->reads_records = (idxNum & PLAN_RECORD_USED) != 0;
  if ((idxNum & PLAN_RECORD_USED) && BAG(c->ds)->threads > 1 &&
      rowset_has(&c->rs, READAHEAD_MIN_ROWS) &&
      bagz_readahead_start(BAG(c->ds)->reader, &c->rs, c->ds->max_value, &c->ra, &err))
    return ds_vtab_error(cur->pVtab, MOD, err);
  return cursor_step(c) ? step_error(c) : SQLITE_OK;
}

/* xFilter: building the record index can take long; it stops on request. */
static int bagz_filter(sqlite3_vtab_cursor *cur, int idxNum, const char *idxStr,
                       int argc, sqlite3_value **argv) {
  (void)idxStr;
  ds_interrupt it;
  ds_interrupt_begin(&it, ((bagz_vtab *)cur->pVtab)->db);
  int rc = filter(cur, idxNum, argc, argv);
  return ds_interrupt_end(&it) ? ds_vtab_interrupted(cur->pVtab) : rc;
}

static int bagz_next(sqlite3_vtab_cursor *cur) {
  bagz_cursor *c = (bagz_cursor *)cur;
  return cursor_step(c) ? step_error(c) : SQLITE_OK;
}

static int bagz_eof(sqlite3_vtab_cursor *cur) { return ((bagz_cursor *)cur)->eof; }

/* The record of the current row, decompressed on demand. */
static void column_record(bagz_cursor *c, sqlite3_context *ctx) {
  const uint8_t *p = c->ra_rec;
  size_t n = c->ra_len;
  char *err = NULL;
  if (!c->ra && bagz_read_at(BAG(c->ds)->reader, &c->z, &c->io, c->shard, c->shard_index, c->row,
                   &c->scratch, &p, &n, &err)) {
    ds_result_error(ctx, MOD, err);
    return;
  }
  sqlite3_result_blob64(ctx, n ? p : (const uint8_t *)"", n, SQLITE_TRANSIENT);
}

static int bagz_column(sqlite3_vtab_cursor *cur, sqlite3_context *ctx, int col) {
  bagz_cursor *c = (bagz_cursor *)cur;
  switch (col) {
    case COL_RECORD: column_record(c, ctx); break;
    case COL_SHARD: sqlite3_result_int64(ctx, (sqlite3_int64)c->shard); break;
    case COL_SHARD_INDEX: sqlite3_result_int64(ctx, (sqlite3_int64)c->shard_index); break;
    case COL_PATH:
      if (c->path_arg) sqlite3_result_text(ctx, c->path_arg, -1, SQLITE_TRANSIENT);
      break;
    case COL_OPTIONS:
      if (c->options_arg) sqlite3_result_text(ctx, c->options_arg, -1, SQLITE_TRANSIENT);
      break;
  }
  return SQLITE_OK;
}

static int bagz_rowid(sqlite3_vtab_cursor *cur, sqlite3_int64 *rowid) {
  *rowid = (sqlite3_int64)((bagz_cursor *)cur)->row;
  return SQLITE_OK;
}

static sqlite3_module bagz_module = {
    .iVersion = 0,
    .xCreate = bagz_connect,
    .xConnect = bagz_connect,
    .xBestIndex = bagz_best_index,
    .xDisconnect = bagz_disconnect,
    .xDestroy = bagz_disconnect,
    .xOpen = bagz_open_cursor,
    .xClose = bagz_close_cursor,
    .xFilter = bagz_filter,
    .xNext = bagz_next,
    .xEof = bagz_eof,
    .xColumn = bagz_column,
    .xRowid = bagz_rowid,
};

int ds_bagz_register(sqlite3 *db) {
  return sqlite3_create_module_v2(db, "bagz", &bagz_module, NULL, NULL);
}

const sqlite3_module *ds_bagz_module(void) { return &bagz_module; }
