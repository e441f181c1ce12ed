/* record_module.c - the part of the record modules (bagz, tfrecord) that
 * is the same for each (see record_module.h): declaring the columns,
 * opening the writer, one INSERT row -> one record, xColumn's dispatch,
 * and the sharded writer's steps for writer_txn. */
#include "vtab/record_module.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/common.h"
#include "formats/sharded_writer.h"
#include "vtab/vtab_util.h"

/* The format writer's steps, for writer_txn / table_writer. */
DS_TABLE_WRITER_FMT(sharded_fmt, sharded_writer, (w), sharded_writer_close,
                    sharded_writer_published_spec);
const ds_table_writer_fmt *const ds_sharded_writer_fmt = &sharded_fmt;

int ds_record_bind(ds_dataset *d, const ds_record_module *m, const char *path,
                   const ds_options *o, int tvf, char **err) {
  ds_tfex_columns x = {0};
  if (ds_opt_bind(d->ops->options, d->form, o, (char *)d + m->opts_at, err) ||
      ds_tfex_columns_options(&x, &ds_record_opts_of(d, m)->tfex, tvf, o, err)) {
    ds_err_prefix(err, path); /* every error names the path */
    return -1;
  }
  return 0;
}

const ds_record_opts *ds_record_opts_of(const ds_dataset *d, const ds_record_module *m) {
  return (const ds_record_opts *)((const char *)d + m->opts_at + m->rec_at);
}

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

int ds_record_declare(ds_table *b, const ds_options *o, char **err) {
  ds_record_table *t = (ds_record_table *)b;
  const ds_record_module *m = b->def->module;
  int mode = b->tvf ? 0 : b->ds->mode;
  const char *opts = b->tvf ? NULL : (const char *)b->ds + m->opts_at;
  const ds_tfex_columns_opts *v = opts ? &ds_record_opts_of(b->ds, m)->tfex : NULL;
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

void ds_record_table_free(ds_table *b) {
  ds_record_table *t = (ds_record_table *)b;
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

/* The record as the column's value. A one-row statement (a point lookup:
 * its rowset is one id) hands SQLite a malloc'd copy with free as its
 * destructor: with SQLITE_TRANSIENT SQLite copies the bytes into a register
 * that sqlite3_reset frees again, an allocation and a free through its
 * allocator's mutex (about 830 instructions a lookup; malloc, memcpy and
 * free: about 100). Scans and lists keep SQLITE_TRANSIENT: there SQLite
 * reuses the register's buffer row after row. */
void ds_record_result(sqlite3_context *ctx, const ds_cursor *c, const uint8_t *p, size_t n) {
  if (n && c->rs.kind == DS_RS_LIST && c->rs.nids == 1) {
    void *copy = malloc(n);
    if (copy) {
      memcpy(copy, p, n);
      sqlite3_result_blob64(ctx, copy, n, free); /* SQLite frees it, also on error */
      return;
    }
  }
  sqlite3_result_blob64(ctx, n ? p : (const uint8_t *)"", n, SQLITE_TRANSIENT);
}

int ds_record_column(sqlite3_vtab_cursor *cur, sqlite3_context *ctx, int col) {
  ds_record_cursor *c = (ds_record_cursor *)cur;
  const ds_record_table *t = (const ds_record_table *)cur->pVtab;
  const ds_table_def *def = t->base.def;
  const ds_record_module *m = def->module;
  int f = t->nfeat;
  if (ds_cursor_arg_column(cur, ctx, col)) return SQLITE_OK;
  if (col < f || col - f == DS_REC_COL_RECORD) {
    const uint8_t *p = NULL;
    size_t n = 0;
    char *err = NULL;
    int decoded = col < f && c->tfex.valid && c->tfex.row == c->base.row;
    if (!decoded && m->record(&c->base, &p, &n, &err)) {
      ds_result_error(ctx, def->name, err);
    } else if (col < f) {
      ds_tfex_columns_result(&t->tfex, &c->tfex, col, c->base.row, p, n,
                             c->base.ds->max_value_bytes, def->name, m->file(&c->base), ctx);
    } else {
      ds_record_result(ctx, &c->base, p, n);
    }
    return SQLITE_OK;
  }
  switch (col - f) {
    case DS_REC_COL_SHARD:
      sqlite3_result_int64(ctx, (sqlite3_int64)ds_cursor_shard(&c->base, c->shard));
      break;
    case DS_REC_COL_SHARD_INDEX: sqlite3_result_int64(ctx, (sqlite3_int64)c->shard_index); break;
  }
  return SQLITE_OK;
}
