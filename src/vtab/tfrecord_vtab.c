/* tfrecord_vtab.c - the `tfrecord` virtual table (issue 25,
 * docs/INTERFACE.md "tfrecord"): SQL over TFRecord files.
 *
 *   SELECT count(*) FROM tfrecord('train-*.tfrecord');
 *   CREATE VIRTUAL TABLE temp.t USING tfrecord('train@*.tfrecord', records=tfexample);
 *
 * Columns: record BLOB, shard INTEGER, shard_index INTEGER, and in the
 * table-valued form the HIDDEN arguments path and options; rowid is the
 * record's number in the whole set. With records=tfexample (CREATE form)
 * the columns are the features of tf.train.Example records, then HIDDEN
 * record, shard and shard_index (vtab/tfexample_columns.c, as for bagz).
 * Options (tfrecord_options.h): compression=auto|none|gzip|zlib (auto:
 * detected from each file's bytes), verify=true|false (false: the data
 * CRCs are not checked; the length CRCs always are), idx=true|false (use
 * a "<file>.idx" sidecar that checks out instead of the index pass),
 * threads=1|2 (2: a scan of a local uncompressed file is read and checked
 * ahead on a helper thread: formats/tfrecord/tfrecord_scan.h; its rows are
 * stepped through in runs, see xnext()).
 *
 * The set of files is indexed on the first query (formats/tfrecord/
 * tfrecord_set.h: one pass over each file, headers only when
 * uncompressed) and kept for the dataset's life; then rowid =, IN, ranges,
 * shard = / IN, LIMIT and OFFSET read only the records they return (a
 * gzip / zlib file decompresses up to each record, from its start when
 * going backwards). A file whose records stop at a damaged or cut record
 * has that record as its last row: stepping onto it fails with the file,
 * the record and the offset (count(*) included); the rows before it read.
 *
 * Writing (CREATE form, mode=create|replace): vtab/tfrecord_write.c. */
#include <stdlib.h>
#include <string.h>

#include "core/common.h"
#include "formats/tfrecord/tfrecord.h"
#include "formats/tfrecord/tfrecord_scan.h"
#include "formats/tfrecord/tfrecord_set.h"
#include "sql/plan.h"
#include "sql/sqlite_api.h"
#include "vtab/dataset.h"
#include "vtab/module_help.h"
#include "vtab/module_options.h"
#include "vtab/modules.h"
#include "vtab/record_module.h"
#include "vtab/table.h"
#include "vtab/tfexample_columns.h"
#include "vtab/tfrecord_options.h"
#include "vtab/tfrecord_write.h"
#include "vtab/vtab_util.h"

#define MOD "tfrecord"

/* An opened set of files (none for a writer's table before its first
 * publish); indexed on first need. */
typedef struct tfr_dataset {
  ds_dataset base;
  tfr_opts opts; /* bound once (TEXT values valid while the table is created) */
  tfrecord_set set;
  int open;
} tfr_dataset;

/* A table: a writer's when mode=create|replace (record_module.h). */
typedef ds_record_table tfr_vtab;

static tfr_dataset *TFR(ds_dataset *d) { return (tfr_dataset *)d; }

typedef struct tfr_cursor {
  ds_record_cursor rec; /* dataset, rowset, row, argument columns, shard, tfex */
  tfrecord_cursor *cs;  /* one per file, set up on first read */
  size_t ncs;
  int located;          /* rec.shard and rec.shard_index are row's */
  /* threads=2: a scan's records read ahead (formats/tfrecord/
   * tfrecord_scan.h), one shard at a time */
  uint64_t scan_end;    /* the scan's rows end before this row; 0: no scan */
  size_t scan_shard;    /* the shard scan reads (or failed to), SIZE_MAX: none */
  tfrecord_scan *scan;
  uint64_t run;         /* rows after row taken from the row set already
                           (consecutive, intact records of its shard) */
} tfr_cursor;

/* The plan reads the record (a column of it is used): threads=2 may scan
 * ahead. */
#define PLAN_RECORD_USED DS_PLAN_MODULE_FLAG
/* Fewer rows than this are read on the querying thread alone. */
#define SCAN_MIN_ROWS 4096

static const char *const compression_names[] = {"auto", "none", "gzip", "zlib", NULL};

const ds_opt_spec tfr_read_specs[] = {
    {.name = "compression", .forms = DS_FORMS_ALL, .kind = DS_OPT_ENUM,
     .names = compression_names, .def = 0,
     .help = "auto: detected from each file's bytes (writing: none)",
     .at = offsetof(tfr_read_opts, compression)},
    {.name = "verify", .forms = DS_FORMS_READ, .kind = DS_OPT_BOOL, .def = 1,
     .help = "false: the data CRCs are not checked (the length CRCs always are)",
     .at = offsetof(tfr_read_opts, verify)},
    {.name = "idx", .forms = DS_FORMS_READ, .kind = DS_OPT_BOOL, .def = 1,
     .help = "use a <file>.idx sidecar (offset size lines) that checks out",
     .at = offsetof(tfr_read_opts, idx)},
    {.name = "threads", .forms = DS_FORMS_READ, .kind = DS_OPT_INT, .min = 1, .max = 2,
     .def = 2,
     .help = "2: scans of local uncompressed files read and check the records ahead "
             "on a second thread, and their index is built from windows read ahead",
     .at = offsetof(tfr_read_opts, threads)},
    {0}};
const ds_opt_group ds_tfrecord_option_groups[] = {
    {tfr_read_specs, offsetof(tfr_opts, read)},
    DS_RECORD_OPTION_GROUPS(tfr_opts, tfr_write_specs),
    {0}};

/* What the record modules share (vtab/record_module.h), defined below. */
static const ds_record_module tfr_records_module;

/* ds_dataset_ops.open: both forms take the same options, but for
 * records=tfexample and its own (CREATE form only). */
static int dataset_open(ds_dataset *base, const char *path, const ds_options *o, int tvf,
                        char **err) {
  tfr_opts *v = &TFR(base)->opts;
  if (ds_record_bind(base, &tfr_records_module, path, o, tvf, err)) return -1;
  tfrecord_options to = {.compression = (tfrecord_compression)v->read.compression,
                         .skip_data_crc = !v->read.verify,
                         /* base->max_value_bytes is set after open */
                         .max_record = (uint64_t)v->rec.common.max_value_bytes,
                         .read_ahead = v->read.threads >= 2};
  if (base->mode) return 0; /* a writer's table reads what it published: nothing yet */
  if (tfrecord_set_open(&TFR(base)->set, path, &to, (int)v->read.idx, err)) return -1;
  TFR(base)->open = 1;
  return 0;
}

/* ds_dataset_ops.close */
static void dataset_close(ds_dataset *base) {
  if (TFR(base)->open) tfrecord_set_close(&TFR(base)->set);
  TFR(base)->open = 0;
}

/* ds_dataset_ops.changed */
static int dataset_changed(const ds_dataset *d) {
  const tfr_dataset *t = (const tfr_dataset *)d;
  return t->open && tfrecord_set_stale(&t->set);
}

static const ds_dataset_ops tfr_ops = {
    "tfrecord('file.tfrecord' [, 'name=value,...'])", dataset_open, dataset_close,
    dataset_changed, NULL, sizeof(tfr_dataset), ds_tfrecord_option_groups};

/* Records of a set for inference (ds_record_source): indexed first. */
typedef struct tfr_source {
  const tfrecord_set *set;
  tfrecord_cursor *cs;
} tfr_source;

/* ds_tfex_record_fn over a tfr_source. */
static int source_get(void *ctx, uint64_t i, const uint8_t **p, size_t *n, char **err) {
  tfr_source *s = ctx;
  tfrecord_rec r;
  if (tfrecord_set_read(s->set, s->cs, i, &r, err)) return -1;
  *p = r.data;
  *n = r.len;
  return 0;
}

/* ds_record_module.source_open: the set's records (indexed first), for
 * inference; none for a writer's table before its first publish. */
static int source_open(ds_dataset *d, ds_record_source *src, void **ctx, char **err) {
  tfr_dataset *td = TFR(d);
  tfr_source *s = calloc(1, sizeof *s);
  if (!s) return ds_err(err, "out of memory");
  *ctx = s;
  s->set = &td->set;
  *src = (ds_record_source){0, source_get, s};
  if (!td->open) return 0;
  if (tfrecord_set_index(&td->set, err)) return -1;
  if (!(s->cs = calloc(td->set.n ? td->set.n : 1, sizeof *s->cs)))
    return ds_err(err, "out of memory");
  src->count = td->set.map.total;
  return 0;
}

/* ds_record_module.source_close: the per-file cursors. */
static void source_close(ds_dataset *d, void *ctx) {
  tfr_source *s = ctx;
  for (size_t i = 0; s && s->cs && i < TFR(d)->set.n; i++) tfrecord_cursor_free(&s->cs[i]);
  if (s) free(s->cs);
  free(s);
}

/* Cost model: a row costs 1; shard = picks a shard's rows; an unindexed
 * set pays the index pass first (about as much as a scan). */
static int tfr_best_index(sqlite3_vtab *vtab, sqlite3_index_info *info) {
  ds_table *t = (ds_table *)vtab;
  int f = ((tfr_vtab *)vtab)->nfeat;
  tfr_dataset *d = t->ds && TFR(t->ds)->open ? TFR(t->ds) : NULL;
  double n = d && d->set.mapped ? (double)d->set.map.total : 1e6;
  double shards = d ? (double)d->set.n : 4;
  ds_plan_extra extra[1] = {{f + DS_REC_COL_SHARD, "shard", n / (shards > 0 ? shards : 1), 0}};
  int rc = ds_table_plan(t, info, n, extra, 1);
  /* columns 0 .. f+DS_REC_COL_RECORD read the record (bit 63: column 63 or later) */
  int last = f + DS_REC_COL_RECORD;
  sqlite3_uint64 reads = last >= 63 ? ~(sqlite3_uint64)0 : ((sqlite3_uint64)2 << last) - 1;
  if (rc == SQLITE_OK && (info->colUsed & reads)) info->idxNum |= PLAN_RECORD_USED;
  return rc;
}

/* ds_table_def.cursor_reset (also what xClose needs): the per-file cursors go
 * with the xFilter's dataset (the next xFilter may have another, perhaps
 * at the same address). */
static void cursor_reset(ds_cursor *base) {
  tfr_cursor *c = (tfr_cursor *)base;
  tfrecord_scan_free(c->scan); /* before the cursors and the set it reads */
  c->scan = NULL;
  c->scan_end = 0;
  c->scan_shard = SIZE_MAX;
  c->located = 0;
  c->run = 0;
  for (size_t i = 0; i < c->ncs; i++) tfrecord_cursor_free(&c->cs[i]);
  free(c->cs);
  c->cs = NULL;
  c->ncs = 0;
  ds_tfex_columns_row_reset(&c->rec.tfex);
}

/* ds_table_def.cursor_free */
static void cursor_free(ds_cursor *base) {
  ds_tfex_columns_row_free(&((tfr_cursor *)base)->rec.tfex);
}

/* ds_table_def.select: index the set (once), give its rows and the shard
 * flags of shard = / IN. */
static int select_rows(ds_cursor *base, ds_plan_args *a, ds_rows *r, char **err) {
  tfr_cursor *c = (tfr_cursor *)base;
  tfr_dataset *d = TFR(base->ds);
  if (!d->open) { /* a writer's table before its first publish */
    r->total = 0;
    return 0;
  }
  if (tfrecord_set_index(&d->set, err)) return -1;
  if (!(c->cs = calloc(d->set.n ? d->set.n : 1, sizeof *c->cs)))
    return ds_err(err, "out of memory");
  c->ncs = d->set.n;
  return ds_rows_shard_map(base, &d->set.map, a->extra[0], a->extra_in[0], r, err);
}

/* ds_table_def.start: a scan that reads records, with threads=2, of at
 * least SCAN_MIN_ROWS rows in ascending order and no LIMIT, reads them
 * ahead (each shard's scan starts at its first row read: record_bytes). */
static int start(ds_cursor *base, const ds_filter_call *call, char **err) {
  tfr_cursor *c = (tfr_cursor *)base;
  tfr_dataset *d = TFR(base->ds);
  (void)err;
  c->scan_end = 0;
  c->scan_shard = SIZE_MAX; /* (a cursor's first xFilter has had no reset) */
  c->run = 0;
  if (!d->open || d->opts.read.threads < 2 || !(call->idxNum & PLAN_RECORD_USED)) return 0;
  uint64_t end = ds_rowset_scan_end(&base->rs);
  if (base->rs.kind != DS_RS_RANGES || base->rs.nranges == 0 ||
      end < base->rs.ranges[0].lo + SCAN_MIN_ROWS)
    return 0;
  c->scan_end = end;
  return 0;
}

/* ds_table_def.shard_of */
static size_t shard_of(ds_cursor *base, uint64_t g) {
  const tfrecord_set *s = &TFR(base->ds)->set;
  size_t shard;
  uint64_t i;
  if (!TFR(base->ds)->open || !s->mapped || g >= s->map.total) return SIZE_MAX;
  ds_shard_map_locate(&s->map, g, &shard, &i);
  return shard;
}

/* ds_table_def.fetch: the next row of the row set; a shard's damaged or
 * cut tail row fails here, so that a query stepping onto it (count(*)
 * too, which reads no column) gets its error. */
static int fetch(ds_cursor *base, uint64_t *g, char **err) {
  int r = ds_rowiter_next(&base->it, g);
  const tfrecord_set *s = &TFR(base->ds)->set;
  if (r > 0 && s->damaged && tfrecord_set_row_damaged(s, *g, err)) return -1;
  return r;
}

/* ds_table_def.next: a scan read ahead (scan_end) steps through its
 * shard's intact records in runs taken from the row set at once
 * (ds_rowiter_run), counted down by xnext without fetch and arrive;
 * every other row goes the common way (ds_cursor_step). A shard's damaged
 * tail row is never in a run: fetch fails on it. */
static int next(ds_cursor *base) {
  tfr_cursor *c = (tfr_cursor *)base;
  char *err = NULL;
  if (ds_cursor_step(base, &err)) return ds_cursor_error(base, err);
  if (!base->eof && c->scan_end > base->row + 1) {
    const tfrecord_file *t = &TFR(base->ds)->set.files[c->rec.shard];
    uint64_t max = c->scan_end - base->row - 1;
    uint64_t intact = t->count > c->rec.shard_index + 1 ? t->count - c->rec.shard_index - 1 : 0;
    c->run = ds_rowiter_run(&base->it, max < intact ? max : intact);
  }
  return SQLITE_OK;
}

/* xNext: a row of a run is the next record of its shard (no I/O, so
 * without ds_cursor_next's remote settings put in place); the others
 * through ds_cursor_next and next(). */
static int xnext(sqlite3_vtab_cursor *cur) {
  tfr_cursor *c = (tfr_cursor *)cur;
  if (!c->run) return ds_cursor_next(cur);
  c->run--;
  c->rec.base.row++;
  c->rec.shard_index++;
  return SQLITE_OK;
}

/* ds_table_def.arrive: the shard and index of row g (counted on when it
 * follows the last row in the same shard). */
static void arrive(ds_cursor *base, uint64_t g) {
  tfr_cursor *c = (tfr_cursor *)base;
  const ds_shard_map *map = &TFR(base->ds)->set.map;
  if (c->located && g == base->row + 1 && c->rec.shard_index + 1 < map->counts[c->rec.shard])
    c->rec.shard_index++;
  else
    ds_shard_map_locate(map, g, &c->rec.shard, &c->rec.shard_index);
  c->located = 1;
}

/* Record i of shard `shard` through its scan, started here when the
 * cursor enters the shard (to the scan's end or the shard's last intact
 * record): 1 with *r, 0 when there is no scan for it (read it the plain
 * way), -1 with *err. */
static int scan_read(tfr_cursor *c, size_t shard, uint64_t i, tfrecord_rec *r, char **err) {
  const tfrecord_set *s = &TFR(c->rec.base.ds)->set;
  if (c->scan_shard != shard) {
    tfrecord_scan_free(c->scan);
    c->scan = NULL;
    c->scan_shard = shard;
    const tfrecord_file *t = &s->files[shard];
    uint64_t first = s->map.first[shard];
    uint64_t hi = c->scan_end - first < t->count ? c->scan_end - first : t->count;
    if (i + SCAN_MIN_ROWS <= hi) c->scan = tfrecord_scan_start(t, i, hi);
  }
  if (!c->scan) return 0;
  tfrecord_cursor *fc = &c->cs[shard];
  if (!fc->t && tfrecord_cursor_init(fc, &s->files[shard], err)) return -1;
  return tfrecord_scan_read(c->scan, fc, i, r, err) ? -1 : 1;
}

/* ds_record_module.record: the row arrive located (its shard and index) */
static int record_bytes(ds_cursor *base, const uint8_t **p, size_t *n, char **err) {
  tfrecord_rec r;
  tfr_cursor *c = (tfr_cursor *)base;
  int sr = c->scan && c->scan_shard == c->rec.shard &&
                   tfrecord_scan_take(c->scan, c->rec.shard_index, &r)
               ? 1
           : c->scan_end > base->row && c->rec.shard < c->ncs
               ? scan_read(c, c->rec.shard, c->rec.shard_index, &r, err)
               : 0;
  if (sr < 0) return -1;
  if (sr == 0 && tfrecord_set_read_in(&TFR(base->ds)->set, c->cs, c->rec.shard,
                                      c->rec.shard_index, &r, err))
    return -1;
  *p = r.data;
  *n = r.len;
  return 0;
}

/* xColumn: the record column of a row whose record its scan has read
 * and checked comes straight from the scan's window
 * (tfrecord_scan_take), not copied: the value holds the window's bytes
 * (tfrecord_scan_pin) until SQLite lets go of it (its destructor). Not
 * SQLITE_STATIC: where SQLite copies a value to keep it (min/max, a
 * sorter) it then copies the bytes; where it keeps the value itself (an
 * aggregate's bare column) the value keeps the window. Everything else
 * through ds_record_column. */
static int xcolumn(sqlite3_vtab_cursor *cur, sqlite3_context *ctx, int col) {
  tfr_cursor *c = (tfr_cursor *)cur;
  tfrecord_rec r;
  if (c->scan && col == ((tfr_vtab *)cur->pVtab)->nfeat + DS_REC_COL_RECORD &&
      c->scan_shard == c->rec.shard && tfrecord_scan_take(c->scan, c->rec.shard_index, &r)) {
    if (r.len) {
      tfrecord_scan_pin(r.data);
      sqlite3_result_blob64(ctx, r.data, r.len, tfrecord_scan_unpin); /* unpins on error too */
    } else {
      ds_record_result(ctx, &c->rec.base, r.data, r.len);
    }
    return SQLITE_OK;
  }
  return ds_record_column(cur, ctx, col);
}

/* ds_record_module.file */
static const char *record_file(ds_cursor *base) {
  return TFR(base->ds)->set.files[((tfr_cursor *)base)->rec.shard].file.path;
}

/* What the record modules share (vtab/record_module.h). */
static const ds_record_module tfr_records_module = {
    offsetof(tfr_dataset, opts), offsetof(tfr_opts, rec), tfrecord_write_open, source_open,
    source_close, record_bytes, record_file};

static const sqlite3_module tfr_module =
    DS_TABLE_WRITER_MODULE_NEXT(tfr_best_index, xcolumn, xnext);

/* modules.h */
const ds_table_def ds_tfrecord_def = {
    .name = MOD, .methods = &tfr_module, .ops = &tfr_ops,
    DS_TABLE_SIZES(tfr_vtab, tfr_cursor), .declare = ds_record_declare,
    .table_free = ds_record_table_free, .cursor_reset = cursor_reset, /* per-file cursors */
    .cursor_free = cursor_free, .select = select_rows, .shard_of = shard_of,
    .start = start, .fetch = fetch, .next = next, .arrive = arrive, .update = ds_record_update,
    .module = &tfr_records_module};

const ds_help_entry ds_tfrecord_help[] = {
    DS_HELP_MODULE(MOD, "'file.tfrecord'", "'train@*.tfrecord'", ds_tfrecord_option_groups),
    {NULL, NULL, NULL, NULL, 0}};

/* module_options.h: the set a dataset opened (NULL: a writer's table). */
tfrecord_set *ds_tfrecord_set_of(const ds_dataset *d) {
  tfr_dataset *t = (tfr_dataset *)d;
  return t->open ? &t->set : NULL;
}
