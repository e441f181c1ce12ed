/* bagz_write.c - INSERT INTO a bagz CREATE-form table:
 *
 *   CREATE VIRTUAL TABLE temp.out USING bagz('clean@*.bagz', mode=create,
 *                                            level=3, rows_per_shard=100000);
 *   INSERT INTO out(record) SELECT record FROM bagz('raw@8.bagz');
 *
 * Each row's record (a BLOB, or TEXT as its UTF-8 bytes) becomes one
 * record, in insertion order; shard and shard_index are derived (values
 * given for them are ignored). Options as upstream's writer names them:
 * level (0 = zstd's default), dictionary=<file>, limits=tail|separate,
 * rows_per_shard with a name@*.ext / name@N.ext path, compression
 * (auto: zstd for .bagz names), threads=1|2. With records=tfexample the
 * feature columns are encoded as one tf.train.Example a row. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/common.h"
#include "formats/bagz/bagz_writer.h"
#include "vtab/bagz_write.h"

const ds_opt_spec bagz_write_specs[] = {
    {.name = "level", .forms = DS_FORM_WRITER, .kind = DS_OPT_INT, .min = -131072, .max = 22,
     .def = 0, .def_text = "0 (zstd's default, 3)", .help = "the zstd level",
     .at = offsetof(bagz_write_opts, level)},
    {.name = "rows_per_shard", .forms = DS_FORM_WRITER, .kind = DS_OPT_INT, .min = 1,
     .max = INT64_MAX, .def = 0, .def_text = "no limit",
     .help = "rows of each shard, with a name@*.ext or name@N.ext path",
     .at = offsetof(bagz_write_opts, rows_per_shard)},
    {0}};

/* The format writer's steps, for writer_txn / table_writer. */
static int step_begin(void *w, char **err) { return bagz_writer_begin(w, err); }
static int step_mark(void *w, void **m, char **err) { return bagz_writer_mark(w, m, err); }
static int step_rollback_to(void *w, const void *m, char **err) {
  return bagz_writer_rollback_to(w, m, err);
}
static int step_prepare(void *w, char **err) { return bagz_writer_prepare(w, err); }
static int step_publish(void *w, char **err) { return bagz_writer_publish(w, err); }
static void step_abort(void *w) { bagz_writer_abort(w); }
static void fmt_close(void *w) { bagz_writer_close(w); }
static const char *fmt_published(void *w) { return bagz_writer_published_spec(w); }
static uint64_t fmt_count(void *w) { return bagz_writer_count(w); }

static const ds_table_writer_fmt bagz_fmt = {
    {step_begin, step_mark, step_rollback_to, step_prepare, step_publish, step_abort,
     fmt_count},
    fmt_close, fmt_published, fmt_count};

/* Writer options from the table's bound options (threads: 1 unless given). */
static void writer_options(const char *path, const ds_options *o, const bagz_opts *v,
                           bagz_writer_options *wo) {
  size_t n = strlen(path);
  int64_t comp = v->read.compression;
  wo->zstd = comp == 2 || (comp == 0 && n >= 5 && strcmp(path + n - 5, ".bagz") == 0);
  wo->limits = (bagz_limits)v->read.limits;
  wo->level = (int)v->write.level;
  wo->rows_per_shard = (uint64_t)v->write.rows_per_shard;
  wo->threads = ds_opt_given(o, bagz_threads_specs) ? (int)v->threads : 1;
  wo->dictionary_path = v->read.dictionary;
}

/* ds_table_writer_spec.open: the bag writer with the parsed options. */
static int open_writer(ds_stage *stage, const char *path, void *wo, void **w, char **err) {
  return bagz_writer_open(stage, path, wo, (bagz_writer **)w, err);
}

int bagz_write_open(const char *path, const ds_options *o, const bagz_opts *v, int mode,
                    ds_table_writer **out, char **err) {
  bagz_writer_options wo = {0};
  writer_options(path, o, v, &wo);
  ds_table_writer_spec spec = {&bagz_fmt, ds_bagz_option_groups, bagz_writer_target,
                               open_writer, &wo};
  return ds_table_writer_open(path, o, mode, &spec, out, err) < 0 ? -1 : 0;
}

int bagz_write_row(ds_table *t, int argc, sqlite3_value **argv, ds_tfex_columns *x,
                   int nfeat, sqlite3_int64 *rowid, char **err) {
  uint64_t row;
  if (ds_table_writer_insert(t, argc, argv, &row, err)) return -1;
  ds_table_writer *tw = ((ds_writable_table *)t)->writer;
  sqlite3_value *rec = argv[2 + nfeat];
  if (x) {
    ds_buf out = {0};
    int rc = ds_tfex_columns_encode_row(x, argv + 2, rec, &out, err);
    if (rc) {
      char where[32];
      snprintf(where, sizeof where, "row %llu", (unsigned long long)row);
      ds_err_prefix(err, where);
    }
    if (rc == 0) rc = bagz_writer_add(tw->w, out.data ? out.data : (const uint8_t *)"",
                                      out.len, err);
    ds_buf_free(&out);
    if (rc == 0) *rowid = (sqlite3_int64)row;
    return rc;
  }
  int type = sqlite3_value_type(rec);
  if (type != SQLITE_BLOB && type != SQLITE_TEXT)
    return ds_err(err, "row %llu: record is %s: a record must be a BLOB or TEXT",
                  (unsigned long long)row,
                  type == SQLITE_NULL ? "NULL" : type == SQLITE_INTEGER ? "INTEGER" : "REAL");
  const void *p = type == SQLITE_BLOB ? sqlite3_value_blob(rec) : (const void *)sqlite3_value_text(rec);
  size_t n = (size_t)sqlite3_value_bytes(rec);
  if (bagz_writer_add(tw->w, p ? p : (const void *)"", n, err)) return -1;
  *rowid = (sqlite3_int64)row;
  return 0;
}
