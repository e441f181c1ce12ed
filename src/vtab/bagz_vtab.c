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
 * during scans). With records=tfexample (CREATE form) the columns are the
 * features of tf.train.Example records, then HIDDEN record, shard and
 * shard_index (vtab/tfexample_columns.c).
 *
 * Planning (sql/plan.c, vtab/table.c): rowid =, IN, ranges, shard = / IN,
 * record = / IN and LIMIT/OFFSET become a ds_rowset, so only the records a query returns
 * are read; count(*) and the shard columns never decompress anything.
 * record = uses a hash index of all records, built once per dataset on
 * first use (upstream's MultiIndex: every matching row, ascending). */
#include <stdlib.h>
#include <string.h>

#include "core/common.h"
#include "core/hash_index.h"
#include "core/options.h"
#include "vtab/bagz_options.h"
#include "core/rowset.h"
#include "formats/bagz/bagz.h"
#include "formats/bagz/bagz_readahead.h"
#include "formats/bagz/bagz_records.h"
#include "formats/bagz/bagz_scan_ahead.h"
#include "formats/bagz/bagz_format.h"
#include "formats/bagz/bagz_shards.h"
#include "sql/plan.h"
#include "sql/sqlite_api.h"
#include "vtab/tfexample_columns.h"
#include "vtab/bagz_write.h"
#include "vtab/dataset.h"
#include "vtab/module_help.h"
#include "vtab/module_options.h"
#include "vtab/record_module.h"
#include "vtab/modules.h"
#include "vtab/table.h"
#include "vtab/vtab_util.h"

#define MOD "bagz"

/* An opened bag with its options and lazily built record index. Shared
 * (reference-counted) by the table and its cursors. */
typedef struct bagz_dataset {
  ds_dataset base; /* refcount, cache key, path, change detection */
  bagz_reader *reader;
  bagz_opts opts;  /* bound once (TEXT values valid while the table is created) */
  int threads;
  int indexed;
  ds_hash_index index;
} bagz_dataset;

/* The module's view of a shared dataset. */
static bagz_dataset *BAG(ds_dataset *d) { return (bagz_dataset *)d; }

typedef struct bagz_vtab {
  ds_record_table rec; /* db, form, dataset, argument columns, writer, features */
  /* A zstd context, buffer and file windows kept between cursors: SQLite
   * opens a cursor per statement run, and a fresh decompression context
   * (or window buffer) costs more than a lookup. */
  int spare;
  ds_zstd_ctx spare_z;
  ds_buf spare_buf;
  bagz_io spare_io;
} bagz_vtab;

typedef struct bagz_cursor {
  ds_record_cursor rec;  /* dataset, rowset, row, argument columns, shard, tfex */
  ds_zstd_ctx z;
  bagz_io io;            /* windows on the files (reads with pread) */
  ds_buf scratch;
  bagz_readahead *ra;    /* scans with threads=2 that read records */
  const uint8_t *ra_rec; /* the current row's record: from the read-ahead, */
  size_t ra_len;         /* or read on demand (then valid while rec_ok) */
  int rec_ok;            /* without read-ahead: ra_rec holds row rec_row, so */
  uint64_t rec_row;      /* a query using record twice decompresses it once */
  int located;           /* row/shard/shard_index are valid */
  ds_scan_ahead ahead; /* without read-ahead: remote shards' hints */
} bagz_cursor;

/* idxNum flag (module-specific bit of plan.h's encoding): the query reads
 * the record column or a feature, so a scan may decompress ahead. */
#define PLAN_RECORD_USED DS_PLAN_MODULE_FLAG
/* Scans shorter than this are not worth a thread. */
#define READAHEAD_MIN_ROWS 512

static const char *const compression_names[] = {"auto", "none", "zstd", NULL};
static const char *const limits_names[] = {"tail", "separate", NULL};
static const char *const layout_names[] = {"concatenated", "interleaved", NULL};

/* bagz_read_specs[BAGZ_SPEC_LIMITS] is limits= (ds_bagz_detected_options). */
const ds_opt_spec bagz_read_specs[] = {
    {.name = "compression", .forms = DS_FORMS_ALL, .kind = DS_OPT_ENUM,
     .names = compression_names, .def = 0,
     .help = "auto: as each record's bytes say (writing: zstd for .bagz names)",
     .at = offsetof(bagz_read_opts, compression)},
    {.name = "limits", .forms = DS_FORMS_ALL, .kind = DS_OPT_ENUM, .names = limits_names,
     .def = 0, .help = "the record ends at the file's tail, or in a separate file",
     .at = offsetof(bagz_read_opts, limits)},
    {.name = "layout", .forms = DS_FORMS_ALL, .kind = DS_OPT_ENUM, .names = layout_names,
     .def = 0, .help = "rows numbered shard after shard, or round-robin over the shards",
     .at = offsetof(bagz_read_opts, layout)},
    {.name = "dictionary", .forms = DS_FORMS_ALL, .kind = DS_OPT_TEXT,
     .help = "a zstd dictionary file", .at = offsetof(bagz_read_opts, dictionary)},
    {0}};
const ds_opt_spec bagz_threads_specs[] = {
    {.name = "threads", .forms = DS_FORMS_ALL, .kind = DS_OPT_INT, .min = 1, .max = 2,
     .def = 2, .def_text = "2 (writing: 1)",
     .help = "2: decompress ahead during scans (writing: compress) on a second thread"},
    {0}};
const ds_opt_group ds_bagz_option_groups[] = {
    {bagz_read_specs, offsetof(bagz_opts, read)},
    {bagz_threads_specs, offsetof(bagz_opts, threads)},
    DS_RECORD_OPTION_GROUPS(bagz_opts, bagz_write_specs),
    {0}};

/* ds_dataset_ops.close */
static void dataset_close(ds_dataset *base) {
  bagz_dataset *d = BAG(base);
  bagz_close(d->reader);
  ds_hash_index_free(&d->index);
}

/* ds_dataset_ops.changed */
static int dataset_changed(const ds_dataset *d) {
  return bagz_stale(((const bagz_dataset *)d)->reader);
}

/* What the record modules share (vtab/record_module.h), defined below. */
static const ds_record_module bagz_records_module;

/* ds_dataset_ops.open: both forms take the same options, but for
 * records=tfexample and its own (CREATE form only). */
static int dataset_open(ds_dataset *base, const char *path, const ds_options *o, int tvf,
                        char **err) {
  bagz_opts *v = &BAG(base)->opts;
  if (ds_record_bind(base, &bagz_records_module, path, o, tvf, err)) return -1;
  bagz_options bo = {(bagz_compression)v->read.compression, (bagz_limits)v->read.limits,
                     (ds_layout)v->read.layout, v->read.dictionary};
  BAG(base)->threads = (int)v->threads;
  /* a writer's table reads what it has published: nothing yet */
  if (base->mode) return bagz_open_memory(path, (const uint8_t *)"", 0, &bo, &BAG(base)->reader, err);
  return bagz_open(path, &bo, &BAG(base)->reader, err);
}

static const ds_dataset_ops bagz_ops = {
    "bagz('file.bagz' [, 'name=value,...'])", dataset_open, dataset_close,
    dataset_changed, NULL, sizeof(bagz_dataset), ds_bagz_option_groups};

/* Build the record index once per dataset. */
static int dataset_index(bagz_dataset *d, char **err) {
  if (d->indexed) return 0;
  bagz_records c;
  bagz_records_init(&c, d->reader, d->base.max_value_bytes);
  int rc = ds_hash_index_build(&d->index, bagz_count(d->reader), bagz_records_get, &c, err);
  bagz_records_free(&c);
  if (rc == 0) d->indexed = 1;
  return rc;
}

/* ds_record_module.source_open: the bag's records, for inference. */
static int source_open(ds_dataset *d, ds_record_source *src, void **ctx, char **err) {
  const bagz_reader *r = BAG(d)->reader;
  bagz_records *c = malloc(sizeof *c);
  if (!c) return ds_err(err, "out of memory");
  bagz_records_init(c, r, d->max_value_bytes);
  *src = (ds_record_source){bagz_count(r), bagz_records_get, c};
  *ctx = c;
  return 0;
}

/* ds_record_module.source_close */
static void source_close(ds_dataset *d, void *ctx) {
  (void)d;
  bagz_records_free(ctx);
  free(ctx);
}

/* ds_table_def.table_free: the writer, the feature columns and the spare
 * decompression context. */
static void table_free(ds_table *base) {
  bagz_vtab *t = (bagz_vtab *)base;
  ds_record_table_free(base);
  if (!t->spare) return;
  ds_zstd_ctx_free(&t->spare_z);
  ds_buf_free(&t->spare_buf);
  bagz_io_free(&t->spare_io);
}

/* Cost model: reading a row costs 1 (a record may need decompression);
 * rowid and shard constraints touch only the rows they name; record = pays
 * once for the index (half a scan, so the planner still prefers it to
 * scanning and filtering), then about one row per value. */
static int bagz_best_index(sqlite3_vtab *vtab, sqlite3_index_info *info) {
  ds_table *t = (ds_table *)vtab;
  int f = ((bagz_vtab *)vtab)->rec.nfeat;
  bagz_dataset *d = t->ds ? BAG(t->ds) : NULL;
  double n = d ? (double)bagz_count(d->reader) : 1e6;
  double shards = d ? (double)bagz_nshards(d->reader) : 4;
  ds_plan_extra extra[2] = {
      {f + DS_REC_COL_SHARD, "shard", n / (shards > 0 ? shards : 1), 0},
      {f + DS_REC_COL_RECORD, "record", 1, d && d->indexed ? 0 : n * 0.5}};
  int rc = ds_table_plan(t, info, n, extra, 2);
  /* columns 0 .. f+DS_REC_COL_RECORD read the record (bit 63: column 63 or later) */
  int last = f + DS_REC_COL_RECORD;
  sqlite3_uint64 reads = last >= 63 ? ~(sqlite3_uint64)0
                                    : ((sqlite3_uint64)2 << last) - 1;
  if (rc == SQLITE_OK && (info->colUsed & reads)) info->idxNum |= PLAN_RECORD_USED;
  return rc;
}

/* ds_table_def.cursor_init: the last cursor's context, buffer and
 * windows, or new. */
static void cursor_init(ds_cursor *base) {
  bagz_cursor *c = (bagz_cursor *)base;
  bagz_vtab *t = (bagz_vtab *)c->rec.base.base.pVtab;
  if (t->spare) {
    c->z = t->spare_z;
    c->scratch = t->spare_buf;
    c->io = t->spare_io;
    t->spare = 0;
  } else {
    ds_zstd_ctx_init(&c->z, NULL);
  }
}

/* ds_table_def.cursor_reset */
static void cursor_reset(ds_cursor *base) {
  bagz_cursor *c = (bagz_cursor *)base;
  bagz_readahead_free(c->ra);
  c->ra = NULL;
  c->located = 0;
  c->rec_ok = 0;
  c->ahead.hi = 0;
  ds_tfex_columns_row_reset(&c->rec.tfex);
}

/* ds_table_def.cursor_free: keep a small context, buffer and windows
 * (emptied: the dataset may be reopened before the next cursor) for the
 * next cursor. */
static void cursor_free(ds_cursor *base) {
  bagz_cursor *c = (bagz_cursor *)base;
  bagz_vtab *t = (bagz_vtab *)c->rec.base.base.pVtab;
  ds_tfex_columns_row_free(&c->rec.tfex);
  if (!t->spare && c->scratch.cap <= ((size_t)1 << 20)) {
    t->spare_z = c->z;
    t->spare_buf = c->scratch;
    bagz_io_idle(&c->io);
    t->spare_io = c->io;
    t->spare = 1;
  } else {
    ds_zstd_ctx_free(&c->z);
    ds_buf_free(&c->scratch);
    bagz_io_free(&c->io);
  }
}

/* ds_lookup_fn: the rows whose record equals one BLOB value (candidates
 * from the hash index, compared byte for byte). */
static int pick_record(void *ctx, sqlite3_value *v, ds_rows *r, char **err) {
  bagz_cursor *c = ctx;
  bagz_dataset *d = BAG(c->rec.base.ds);
  if (sqlite3_value_type(v) != SQLITE_BLOB) return 0; /* SQLite: TEXT never equals a BLOB */
  const void *key = sqlite3_value_blob(v);
  size_t klen = (size_t)sqlite3_value_bytes(v);
  const ds_hash_entry *e;
  c->rec_ok = 0; /* io and scratch are reused below */
  size_t m = ds_hash_index_find(&d->index, key ? key : "", klen, &e);
  for (size_t i = 0; i < m; i++) {
    const uint8_t *rec;
    size_t len;
    if (bagz_read(d->reader, &c->z, &c->io, e[i].row, &c->scratch, &rec, &len, err)) return -1;
    if (len != klen || (klen && memcmp(rec, key, klen) != 0)) continue;
    if (ds_rows_add(r, e[i].row, err)) return -1;
  }
  return 0;
}

/* ds_table_def.select: shard = / IN as flags, record = / IN through the
 * record index. */
static int select_rows(ds_cursor *base, ds_plan_args *a, ds_rows *r, char **err) {
  bagz_cursor *c = (bagz_cursor *)base;
  bagz_dataset *d = BAG(base->ds);
  c->scratch.max = (size_t)base->ds->max_value_bytes;
  if (ds_rows_shard_map(base, bagz_shard_map(d->reader), a->extra[0], a->extra_in[0], r, err))
    return -1;
  if (!a->extra[1]) return 0;
  if (dataset_index(d, err)) return -1;
  return ds_rows_lookup(r, a->extra[1], a->extra_in[1], pick_record, c, err);
}

/* ds_table_def.shard_of */
static size_t shard_of(ds_cursor *base, uint64_t g) {
  const bagz_reader *r = BAG(base->ds)->reader;
  size_t s;
  uint64_t idx;
  if (g >= bagz_count(r)) return SIZE_MAX;
  ds_shard_map_locate(bagz_shard_map(r), g, &s, &idx);
  return s;
}

/* Does the rowset hold at least `n` rows? (cheap: stops counting at n) */
static int rowset_has(const ds_rowset *rs, uint64_t n) {
  ds_rowiter it;
  ds_rowiter_init(&it, rs);
  uint64_t g, k = 0;
  while (k < n && ds_rowiter_next(&it, &g)) k++;
  return k >= n;
}

/* Does any shard hold zstd frames? (uncompressed records have nothing to
 * decompress ahead: they are read in place from the mapped file) */
static int any_zstd(const bagz_reader *r) {
  for (size_t s = 0; s < bagz_nshards(r); s++)
    if (bagz_shard_zstd(r, s)) return 1;
  return 0;
}

/* ds_table_def.start: scans that read records of zstd shards decompress
 * ahead on a second thread (threads=2). */
static int start(ds_cursor *base, const ds_filter_call *call, char **err) {
  bagz_cursor *c = (bagz_cursor *)base;
  bagz_dataset *d = BAG(base->ds);
  int reads = (call->idxNum & PLAN_RECORD_USED) != 0;
  const ds_rowset *rs = &base->rs;
  if (reads && rs->kind == DS_RS_LIST && rs->nids > 1 && rs->limit == UINT64_MAX)
    bagz_prefetch(d->reader, rs->ids, rs->nids); /* remote: all at once */
  if (reads && d->threads > 1 && any_zstd(d->reader) &&
      rowset_has(&base->rs, READAHEAD_MIN_ROWS) &&
      bagz_readahead_start(d->reader, &base->rs, base->ds->max_value_bytes, &c->ra, err))
    return -1;
  bagz_scan_ahead_init(&c->ahead, d->reader, reads && !c->ra ? rs : NULL);
  return 0;
}

/* ds_table_def.fetch: rows from the read-ahead when there is one. */
static int fetch(ds_cursor *base, uint64_t *g, char **err) {
  bagz_cursor *c = (bagz_cursor *)base;
  if (!c->ra) return ds_rowiter_next(&base->it, g);
  int r = bagz_readahead_next(c->ra, g, &c->ra_rec, &c->ra_len, err);
  if (r < 0 && !*err) *err = strdup("read-ahead failed");
  return r;
}

/* ds_table_def.arrive: the shard and index of row g (counted on when it
 * follows the last row in the same shard). */
static void arrive(ds_cursor *base, uint64_t g) {
  bagz_cursor *c = (bagz_cursor *)base;
  const ds_shard_map *map = bagz_shard_map(BAG(base->ds)->reader);
  if (c->located && g == base->row + 1 && map->layout == DS_LAYOUT_CONCATENATED &&
      c->rec.shard_index + 1 < map->counts[c->rec.shard]) {
    c->rec.shard_index++;
  } else { /* a jump (a lookup): its limit is likely a cache miss, fetch it now */
    ds_shard_map_locate(map, g, &c->rec.shard, &c->rec.shard_index);
    bagz_touch_limits(BAG(base->ds)->reader, c->rec.shard, c->rec.shard_index);
  }
  c->located = 1;
  bagz_scan_ahead_row(&c->ahead, BAG(base->ds)->reader, c->rec.shard, c->rec.shard_index);
}

/* ds_record_module.record: the record of the current row (from the
 * read-ahead, or decompressed on demand once per row). */
static int record_bytes(ds_cursor *base, const uint8_t **p, size_t *n, char **err) {
  bagz_cursor *c = (bagz_cursor *)base;
  if (!c->ra && !(c->rec_ok && c->rec_row == c->rec.base.row)) {
    c->rec_ok = 0;
    if (bagz_read_at(BAG(c->rec.base.ds)->reader, &c->z, &c->io, c->rec.shard, c->rec.shard_index,
                     c->rec.base.row, &c->scratch, &c->ra_rec, &c->ra_len, err))
      return -1;
    c->rec_ok = 1;
    c->rec_row = c->rec.base.row;
  }
  *p = c->ra_rec;
  *n = c->ra_len;
  return 0;
}

/* ds_record_module.file */
static const char *record_file(ds_cursor *base) {
  return bagz_shard_path(BAG(base->ds)->reader, ((bagz_cursor *)base)->rec.shard);
}

/* What the record modules share (vtab/record_module.h). */
static const ds_record_module bagz_records_module = {
    offsetof(bagz_dataset, opts), offsetof(bagz_opts, rec), bagz_write_open, source_open,
    source_close, record_bytes, record_file};

static const sqlite3_module bagz_module =
    DS_TABLE_WRITER_MODULE(bagz_best_index, ds_record_column);

/* modules.h */
const ds_table_def ds_bagz_def = {
    .name = MOD, .methods = &bagz_module, .ops = &bagz_ops,
    DS_TABLE_SIZES(bagz_vtab, bagz_cursor), .declare = ds_record_declare,
    .table_free = table_free, /* the writer, the spare decompression context */
    .cursor_init = cursor_init, .cursor_reset = cursor_reset, .cursor_free = cursor_free,
    .select = select_rows, .shard_of = shard_of, .start = start, /* plan -> rows */
    .fetch = fetch, .arrive = arrive,                             /* stepping */
    .update = ds_record_update, /* mode=create|replace */
    .module = &bagz_records_module};

const ds_help_entry ds_bagz_help[] = {
    DS_HELP_MODULE("bagz", "'file.bagz'", "'data@*.bagz'", ds_bagz_option_groups),
    {NULL, NULL, NULL, NULL, 0}};

/* module_options.h */
bagz_reader *ds_bagz_reader_of(const ds_dataset *d) {
  return ((const bagz_dataset *)d)->reader;
}

/* module_options.h: limits=separate, by limits' own spec. */
int ds_bagz_detected_options(const ds_detected *d, ds_options *o, char **err) {
  const ds_opt_spec *limits = &bagz_read_specs[BAGZ_SPEC_LIMITS];
  if (!(d->detail & DS_BAGZ_DETECT_SEPARATE) || ds_opt_given(o, limits)) return 0;
  return ds_options_put(o, limits->name, limits->names[BAGZ_LIMITS_SEPARATE], err);
}
