/* tfrecord_vtab.c - the `tfrecord` virtual table (read side; issue 25,
 * docs/INTERFACE.md "TFRecord"): SQL over TFRecord files.
 *
 *   SELECT count(*) FROM tfrecord('train@*.tfrecord');
 *   CREATE VIRTUAL TABLE temp.t USING tfrecord('a.tfrecord,b.tfrecord', verify=false);
 *
 * Columns: record BLOB, shard INTEGER, shard_index INTEGER, and in the
 * table-valued form the HIDDEN arguments path and options; rowid is the
 * record's number in the whole set. Options: compression=auto|none|gzip|
 * zlib (auto: detected from each file's bytes), verify=true|false (false:
 * the data CRCs are not checked; the length CRCs always are), idx=true|
 * false (use a "<file>.idx" sidecar that checks out instead of the index
 * pass).
 *
 * The set of files is indexed on the first query (formats/tfrecord/
 * tfrecord_set.h: one pass over each file, headers only when
 * uncompressed) and kept for the dataset's life; then rowid =, IN, ranges,
 * shard = / IN, LIMIT and OFFSET read only the records they return (a
 * gzip / zlib file decompresses up to each record, from its start when
 * going backwards). A file whose records stop at a damaged or cut record
 * has that record as its last row: reading it fails with the file, the
 * record and the offset.
 *
 * Writing (CREATE form): mode=create|replace, compression=none|gzip|zlib
 * (auto: none), level=0..3 (ISA-L's), rows_per_shard with name@*.ext /
 * name@N.ext; each row's record (BLOB, or TEXT as its bytes) one record,
 * staged and published at COMMIT (formats/tfrecord/tfrecord_staged.h). An
 * uncompressed copy of a TFRecord file is byte-identical to it.
 * Not here yet: records=tfexample, globs. */
#include <stdlib.h>
#include <string.h>

#include "core/common.h"
#include "core/options.h"
#include "formats/tfrecord/tfrecord.h"
#include "formats/tfrecord/tfrecord_set.h"
#include "sql/plan.h"
#include "sql/sqlite_api.h"
#include "vtab/dataset.h"
#include "vtab/modules.h"
#include "formats/tfrecord/tfrecord_staged.h"
#include "vtab/table.h"
#include "vtab/table_writer.h"
#include "vtab/vtab_util.h"

#define MOD "tfrecord"

enum { COL_RECORD, COL_SHARD, COL_SHARD_INDEX, COL_PATH, COL_OPTIONS };

/* An opened set of files (none for a writer's table before its first
 * publish); indexed on first need. */
typedef struct tfr_dataset {
  ds_dataset base;
  tfrecord_set set;
  int open;
} tfr_dataset;

/* A table: a writer's when mode=create|replace. */
typedef struct tfr_vtab {
  ds_writable_table base;
} tfr_vtab;

static tfr_dataset *TFR(ds_dataset *d) { return (tfr_dataset *)d; }

typedef struct tfr_cursor {
  ds_cursor base;
  tfrecord_cursor *cs; /* one per file, set up on first read */
  size_t ncs;
  size_t shard;
  uint64_t shard_index;
} tfr_cursor;

static const char *const known_options[] = {"compression", "verify", "idx", NULL};
static const char *const create_options[] = {"compression", "verify", "idx", "mode",
                                             "level", "rows_per_shard", NULL};
static const char *const write_only[] = {"level", "rows_per_shard", NULL};
static const char *const compression_names[] = {"auto", "none", "gzip", "zlib", NULL};
static const char *const bool_names[] = {"false", "true", NULL};

/* ds_dataset_ops.open */
static int dataset_open(ds_dataset *base, const char *path, const ds_options *o, int tvf,
                        char **err) {
  int comp, verify, idx, mode;
  if (ds_options_check_known(o, tvf ? known_options : create_options, err) ||
      ds_table_writer_mode(o, &mode, err) ||
      ds_options_enum(o, "compression", compression_names, 0, &comp, err) ||
      ds_options_enum(o, "verify", bool_names, 1, &verify, err) ||
      ds_options_enum(o, "idx", bool_names, 1, &idx, err)) {
    ds_err_prefix(err, path);
    return -1;
  }
  tfrecord_options to = {.compression = (tfrecord_compression)comp,
                         .skip_data_crc = !verify,
                         .max_record = base->max_value};
  if (mode) return 0; /* a writer's table reads what it published: nothing yet */
  if (tfrecord_set_open(&TFR(base)->set, path, &to, idx, err)) return -1;
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
    dataset_changed, NULL, sizeof(tfr_dataset)};

/* ------------------------------------------------------------------ */
/* Writing                                                              */

static int step_begin(void *w, char **err) { return tfrecord_staged_begin(w, err); }
static int step_mark(void *w, void **m, char **err) { return tfrecord_staged_mark(w, m, err); }
static int step_rollback_to(void *w, const void *m, char **err) {
  return tfrecord_staged_rollback_to(w, m, err);
}
static int step_prepare(void *w, char **err) { return tfrecord_staged_prepare(w, err); }
static int step_publish(void *w, char **err) { return tfrecord_staged_publish(w, err); }
static void step_abort(void *w) { tfrecord_staged_abort(w); }
static void fmt_close(void *w) { tfrecord_staged_close(w); }
static const char *fmt_published(void *w) { return tfrecord_staged_published_spec(w); }
static uint64_t fmt_count(void *w) { return tfrecord_staged_count(w); }

static const ds_table_writer_fmt tfr_fmt = {
    {step_begin, step_mark, step_rollback_to, step_prepare, step_publish, step_abort,
     fmt_count},
    fmt_close, fmt_published, fmt_count};

/* ds_table_writer_spec.open */
static int open_writer(ds_stage *stage, const char *path, void *wo, void **w, char **err) {
  return tfrecord_staged_open(stage, path, wo, (tfrecord_staged **)w, err);
}

/* The writer of a mode=create|replace table. */
static int write_open(const char *path, const ds_options *o, int mode,
                      ds_table_writer **out, char **err) {
  static const char *const compression[] = {"auto", "none", "gzip", "zlib", NULL};
  int comp;
  int64_t level, rps;
  if (ds_options_enum(o, "compression", compression, 0, &comp, err) ||
      ds_options_int(o, "level", 1, 0, 3, &level, err) ||
      ds_options_int(o, "rows_per_shard", 0, 1, INT64_MAX, &rps, err)) {
    ds_err_prefix(err, path);
    return -1;
  }
  tfrecord_staged_options wo = {.compression = (tfrecord_compression)comp,
                                .level = (int)level,
                                .rows_per_shard = (uint64_t)rps};
  ds_table_writer_spec spec = {&tfr_fmt, write_only, tfrecord_staged_target, open_writer,
                               &wo};
  return ds_table_writer_open(path, o, mode, &spec, out, err) < 0 ? -1 : 0;
}

/* xUpdate of a writer table: one record a row. */
static int update(ds_table *t, int argc, sqlite3_value **argv, sqlite3_int64 *rowid,
                  char **err) {
  uint64_t row;
  if (ds_table_writer_insert(t, argc, argv, &row, err)) return -1;
  sqlite3_value *rec = argv[2 + COL_RECORD];
  int type = sqlite3_value_type(rec);
  if (type != SQLITE_BLOB && type != SQLITE_TEXT)
    return ds_err(err, "row %llu: record is %s: a record must be a BLOB or TEXT",
                  (unsigned long long)row,
                  type == SQLITE_NULL ? "NULL" : type == SQLITE_INTEGER ? "INTEGER" : "REAL");
  const void *p = type == SQLITE_BLOB ? sqlite3_value_blob(rec)
                                      : (const void *)sqlite3_value_text(rec);
  size_t n = (size_t)sqlite3_value_bytes(rec);
  if (tfrecord_staged_add(((ds_writable_table *)t)->writer->w,
                          p ? p : (const void *)"", n, err))
    return -1;
  *rowid = (sqlite3_int64)row;
  return 0;
}

static const ds_table_write_ops write_ops = {update, DS_TABLE_WRITER_HOOKS};

/* ds_table_def.table_free: the writer. */
static void table_free(ds_table *t) { ds_table_writer_free(((tfr_vtab *)t)->base.writer); }

/* ds_table_def.declare */
static int declare(ds_table *t, const ds_options *o, char **err) {
  int mode = 0;
  if (!t->tvf && ds_table_writer_mode(o, &mode, err)) return -1;
  if (mode && write_open(t->ds->path, o, mode, &((tfr_vtab *)t)->base.writer, err))
    return -1;
  if (t->tvf) ds_table_arg_columns(t, COL_PATH, COL_OPTIONS);
  return ds_table_declare(
      t, t->tvf ? "CREATE TABLE x(record BLOB, shard INTEGER, shard_index INTEGER,"
                  " path HIDDEN, options HIDDEN)"
                : "CREATE TABLE x(record BLOB, shard INTEGER, shard_index INTEGER)",
      err);
}

/* Cost model: a row costs 1; shard = picks a shard's rows; an unindexed
 * set pays the index pass first (about as much as a scan). */
static int tfr_best_index(sqlite3_vtab *vtab, sqlite3_index_info *info) {
  ds_table *t = (ds_table *)vtab;
  tfr_dataset *d = t->ds && TFR(t->ds)->open ? TFR(t->ds) : NULL;
  double n = d && d->set.mapped ? (double)d->set.map.total : 1e6;
  double shards = d ? (double)d->set.n : 4;
  ds_plan_extra extra[1] = {{COL_SHARD, "shard", n / (shards > 0 ? shards : 1), 0}};
  return ds_table_plan(t, info, n, extra, 1);
}

/* ds_table_def.cursor_reset (also what xClose needs): the per-file cursors go
 * with the xFilter's dataset (the next xFilter may have another, perhaps
 * at the same address). */
static void cursor_reset(ds_cursor *base) {
  tfr_cursor *c = (tfr_cursor *)base;
  for (size_t i = 0; i < c->ncs; i++) tfrecord_cursor_free(&c->cs[i]);
  free(c->cs);
  c->cs = NULL;
  c->ncs = 0;
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
  const ds_shard_map *map = &d->set.map;
  r->total = map->total;
  r->nshards = map->nshards;
  r->interleaved = 0;
  r->first = map->first;
  r->counts = map->counts;
  if (a->extra[0] &&
      !(r->shard_on = ds_cursor_shard_flags(base, a->extra[0], a->extra_in[0], map->nshards)))
    return ds_err(err, "out of memory");
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

/* ds_table_def.arrive */
static void arrive(ds_cursor *base, uint64_t g) {
  tfr_cursor *c = (tfr_cursor *)base;
  ds_shard_map_locate(&TFR(base->ds)->set.map, g, &c->shard, &c->shard_index);
}

static int tfr_column(sqlite3_vtab_cursor *cur, sqlite3_context *ctx, int col) {
  tfr_cursor *c = (tfr_cursor *)cur;
  if (ds_cursor_arg_column(cur, ctx, col)) return SQLITE_OK;
  switch (col) {
    case COL_RECORD: {
      tfrecord_rec r;
      char *err = NULL;
      if (tfrecord_set_read(&TFR(c->base.ds)->set, c->cs, c->base.row, &r, &err)) {
        ds_result_error(ctx, MOD, err);
        break;
      }
      sqlite3_result_blob64(ctx, r.len ? r.data : (const uint8_t *)"", r.len,
                            SQLITE_TRANSIENT);
      break;
    }
    case COL_SHARD:
      sqlite3_result_int64(ctx, (sqlite3_int64)ds_cursor_shard(&c->base, c->shard));
      break;
    case COL_SHARD_INDEX: sqlite3_result_int64(ctx, (sqlite3_int64)c->shard_index); break;
  }
  return SQLITE_OK;
}

static const ds_table_def tfr_def = {
    .name = MOD, .ops = &tfr_ops, DS_TABLE_SIZES(tfr_vtab, tfr_cursor), .declare = declare,
    .table_free = table_free, .cursor_reset = cursor_reset, /* per-file cursors */
    .select = select_rows, .shard_of = shard_of, .arrive = arrive, .write = &write_ops};

static sqlite3_module tfr_module = DS_TABLE_WRITER_MODULE(tfr_best_index, tfr_column);

int ds_tfrecord_register(sqlite3 *db) {
  int rc = sqlite3_create_module_v2(db, MOD, &tfr_module, (void *)&tfr_def, NULL);
  return rc == SQLITE_OK ? ds_table_writer_register(db) : rc;
}
