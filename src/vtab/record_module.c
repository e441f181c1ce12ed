/* record_module.c - the part of the record modules (bagz, tfrecord) that
 * is the same for each (see record_module.h): declaring the columns,
 * opening the writer, one INSERT row -> one record, xColumn's dispatch,
 * and the sharded writer's steps for writer_txn. */
#include "vtab/record_module.h"

#include <stdio.h>
#include <stdlib.h>

#include "core/common.h"
#include "formats/sharded_writer.h"
#include "vtab/vtab_util.h"

/* The format writer's steps, for writer_txn / table_writer. */
static int step_begin(void *w, char **err) { return sharded_writer_begin(w, err); }
static int step_mark(void *w, void **m, char **err) { return sharded_writer_mark(w, m, err); }
static int step_rollback_to(void *w, const void *m, char **err) {
  return sharded_writer_rollback_to(w, m, err);
}
static int step_prepare(void *w, char **err) { return sharded_writer_prepare(w, err); }
static int step_publish(void *w, char **err) { return sharded_writer_publish(w, err); }
static void step_abort(void *w) { sharded_writer_abort(w); }
static void fmt_close(void *w) { sharded_writer_close(w); }
static const char *fmt_published(void *w) { return sharded_writer_published_spec(w); }
static uint64_t fmt_count(void *w) { return sharded_writer_count(w); }

const ds_table_writer_fmt ds_sharded_writer_fmt = {
    {step_begin, step_mark, step_rollback_to, step_prepare, step_publish, step_abort,
     fmt_count},
    fmt_close, fmt_published, fmt_count};

/* The CREATE form with records=tfexample: feature columns (inferred from
 * the first records, or columns=), then HIDDEN record, shard, shard_index. */
static int declare_tfexample(ds_record_table *t, const ds_tfex_columns_opts *v,
                             const ds_record_module *m, char **err) {
  ds_dataset *d = t->base.ds;
  ds_record_source src = {0};
  void *ctx = NULL;
  if (m->source_open(d, &src, &ctx, err)) return -1;
  char *sql = ds_tfex_columns_declaration(&t->tfex, v, d->mode != 0, &src,
                                          d->max_value_bytes, err);
  m->source_close(d, ctx);
  if (!sql) {
    ds_err_prefix(err, d->path);
    return -1;
  }
  t->nfeat = (int)t->tfex.schema.n;
  int rc = ds_table_declare(&t->base, sql, err);
  free(sql);
  return rc;
}

int ds_record_declare(ds_record_table *t, const ds_options *o, const ds_record_module *m,
                      char **err) {
  ds_table *b = &t->base;
  int mode = b->tvf ? 0 : b->ds->mode;
  const char *opts = b->tvf ? NULL : (const char *)b->ds + m->opts_at;
  const ds_tfex_columns_opts *v = opts ? (const ds_tfex_columns_opts *)(opts + m->tfex_at)
                                       : NULL;
  if (v && ds_tfex_columns_options(&t->tfex, v, 0, o, err)) return -1;
  if (mode && t->tfex.on && !v->columns)
    return ds_err(err, "%s: records=tfexample with mode=create or replace needs "
                       "columns='name TYPE, ...' (there are no records to infer them from)",
                  b->ds->path);
  if (mode && m->write_open(b->ds->path, o, opts, mode, &t->writer, err)) return -1;
  if (t->tfex.on) return declare_tfexample(t, v, m, err);
  if (b->tvf) ds_table_arg_columns(b, DS_REC_COL_PATH, DS_REC_COL_OPTIONS);
  return ds_table_declare(
      b, b->tvf ? "CREATE TABLE x(record BLOB, shard INTEGER, shard_index INTEGER,"
                  " path HIDDEN, options HIDDEN)"
                : "CREATE TABLE x(record BLOB, shard INTEGER, shard_index INTEGER)",
      err);
}

void ds_record_table_free(ds_record_table *t) {
  ds_table_writer_free(t->writer);
  ds_tfex_columns_free(&t->tfex);
}

int ds_record_update(ds_table *t, int argc, sqlite3_value **argv, sqlite3_int64 *rowid,
                     char **err) {
  ds_record_table *rt = (ds_record_table *)t;
  uint64_t row;
  if (ds_table_writer_insert(t, argc, argv, &row, err)) return -1;
  sqlite3_value *rec = argv[2 + rt->nfeat];
  const void *p;
  size_t n;
  ds_buf out = {0};
  int rc = 0;
  if (rt->tfex.on) {
    rc = ds_tfex_columns_encode_row(&rt->tfex, argv + 2, rec, &out, err);
    if (rc) {
      char where[32];
      snprintf(where, sizeof where, "row %llu", (unsigned long long)row);
      ds_err_prefix(err, where);
    }
    p = out.data;
    n = out.len;
  } else {
    int type = sqlite3_value_type(rec);
    if (type != SQLITE_BLOB && type != SQLITE_TEXT)
      return ds_err(err, "row %llu: record is %s: a record must be a BLOB or TEXT",
                    (unsigned long long)row,
                    type == SQLITE_NULL      ? "NULL"
                    : type == SQLITE_INTEGER ? "INTEGER"
                                             : "REAL");
    p = type == SQLITE_BLOB ? sqlite3_value_blob(rec) : (const void *)sqlite3_value_text(rec);
    n = (size_t)sqlite3_value_bytes(rec);
  }
  if (rc == 0) rc = sharded_writer_add(rt->writer->w, p ? p : (const void *)"", n, err);
  ds_buf_free(&out);
  if (rc == 0) *rowid = (sqlite3_int64)row;
  return rc;
}

int ds_record_column(sqlite3_vtab_cursor *cur, sqlite3_context *ctx, int col,
                     size_t shard, uint64_t shard_index,
                     void (*feature)(ds_cursor *c, sqlite3_context *ctx, int col),
                     void (*record)(ds_cursor *c, sqlite3_context *ctx)) {
  ds_cursor *c = (ds_cursor *)cur;
  int f = ((const ds_record_table *)cur->pVtab)->nfeat;
  if (ds_cursor_arg_column(cur, ctx, col)) return SQLITE_OK;
  if (col < f) {
    feature(c, ctx, col);
    return SQLITE_OK;
  }
  switch (col - f) {
    case DS_REC_COL_RECORD: record(c, ctx); break;
    case DS_REC_COL_SHARD:
      sqlite3_result_int64(ctx, (sqlite3_int64)ds_cursor_shard(c, shard));
      break;
    case DS_REC_COL_SHARD_INDEX: sqlite3_result_int64(ctx, (sqlite3_int64)shard_index); break;
  }
  return SQLITE_OK;
}
