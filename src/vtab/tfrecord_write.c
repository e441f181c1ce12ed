/* tfrecord_write.c - INSERT INTO a tfrecord CREATE-form table:
 *
 *   CREATE VIRTUAL TABLE temp.o USING tfrecord('out@*.tfrecord', mode=create,
 *                                              compression=gzip, rows_per_shard=1000);
 *   INSERT INTO o(record) SELECT record FROM bagz('in@4.bagz');
 *
 * Each row's record (a BLOB, or TEXT as its bytes) becomes one record, in
 * insertion order, staged and published at COMMIT
 * (formats/tfrecord/tfrecord_staged.h). compression=auto means none;
 * level= is ISA-L's (0..3). With records=tfexample the feature columns are
 * encoded as one tf.train.Example a row, as for bagz. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/common.h"
#include "formats/tfrecord/tfrecord_staged.h"
#include "vtab/tfrecord_write.h"

const ds_opt_spec tfr_write_specs[] = {
    {.name = "level", .forms = DS_FORM_WRITER, .kind = DS_OPT_INT, .min = 0, .max = 3,
     .def = 1, .help = "the gzip / zlib level (ISA-L's 0..3)",
     .at = offsetof(tfr_write_opts, level)},
    {.name = "rows_per_shard", .forms = DS_FORM_WRITER, .kind = DS_OPT_INT, .min = 1,
     .max = INT64_MAX, .def = 0, .def_text = "no limit",
     .help = "rows of each shard, with a name@*.ext or name@N.ext path",
     .at = offsetof(tfr_write_opts, rows_per_shard)},
    {0}};

/* The format writer's steps, for writer_txn / table_writer. */
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

int tfrecord_write_open(const char *path, const ds_options *o, const tfr_opts *v, int mode,
                        ds_table_writer **out, char **err) {
  tfrecord_staged_options wo = {.compression = (tfrecord_compression)v->read.compression,
                                .level = (int)v->write.level,
                                .rows_per_shard = (uint64_t)v->write.rows_per_shard};
  ds_table_writer_spec spec = {&tfr_fmt, ds_tfrecord_option_groups, tfrecord_staged_target,
                               open_writer, &wo};
  return ds_table_writer_open(path, o, mode, &spec, out, err) < 0 ? -1 : 0;
}

int tfrecord_write_row(ds_table *t, int argc, sqlite3_value **argv, ds_tfex_columns *x,
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
    if (rc == 0)
      rc = tfrecord_staged_add(tw->w, out.data ? out.data : (const uint8_t *)"", out.len, err);
    ds_buf_free(&out);
    if (rc == 0) *rowid = (sqlite3_int64)row;
    return rc;
  }
  int type = sqlite3_value_type(rec);
  if (type != SQLITE_BLOB && type != SQLITE_TEXT)
    return ds_err(err, "row %llu: record is %s: a record must be a BLOB or TEXT",
                  (unsigned long long)row,
                  type == SQLITE_NULL ? "NULL" : type == SQLITE_INTEGER ? "INTEGER" : "REAL");
  const void *p = type == SQLITE_BLOB ? sqlite3_value_blob(rec)
                                      : (const void *)sqlite3_value_text(rec);
  size_t n = (size_t)sqlite3_value_bytes(rec);
  if (tfrecord_staged_add(tw->w, p ? p : (const void *)"", n, err)) return -1;
  *rowid = (sqlite3_int64)row;
  return 0;
}
