/* tfexample_columns.c - records=tfexample for the CREATE form of a
 * module whose rows are records (see tfexample_columns.h): options, the feature columns (inferred by
 * decoders/tfexample_schema.c or given by columns=), and one feature cell
 * as an SQLite result (decoders/tfexample_cell.c makes the value; this file
 * only hands it to SQLite). */
#include "tfexample_columns.h"

#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include "decoders/tfexample_cell.h"
#include "sql/column_value.h"
#include "sql/value_sql.h"
#include "vtab/infer_options.h"
#include "vtab/table_writer.h"
#include "vtab/vtab_util.h"


static const char *const records_names[] = {"none", "tfexample", NULL};
static const char *const bytes_names[] = {"blob", "text", NULL};

/* records= first: the others need records=tfexample
 * (ds_tfex_columns_options). */
const ds_opt_spec ds_tfex_columns_specs[] = {
    {.name = "records", .forms = DS_FORMS_ALL, .kind = DS_OPT_ENUM, .names = records_names,
     .def = 0, .help = "tfexample: the features of tf.train.Example records as columns",
     .at = offsetof(ds_tfex_columns_opts, records)},
    {.name = "bytes", .forms = DS_FORMS_CREATE, .kind = DS_OPT_ENUM, .names = bytes_names,
     .def = 0, .help = "records=tfexample: bytes features as BLOB or TEXT",
     .at = offsetof(ds_tfex_columns_opts, bytes)},
    {.name = "infer", .forms = DS_FORMS_CREATE, .kind = DS_OPT_INT, .min = 0,
     .max = INT64_MAX, .def = DS_DEFAULT_INFER,
     .help = "records=tfexample: records read to infer the feature columns",
     .at = offsetof(ds_tfex_columns_opts, infer)},
    {.name = "columns", .forms = DS_FORMS_CREATE, .kind = DS_OPT_TEXT,
     .help = "records=tfexample: the feature columns, 'name TYPE, ...' (no inference)",
     .at = offsetof(ds_tfex_columns_opts, columns)},
    {0}};

int ds_tfex_columns_options(ds_tfex_columns *x, const ds_tfex_columns_opts *v, int tvf,
                            const ds_options *o, char **err) {
  x->on = v->records == 1;
  x->bytes_text = v->bytes == 1;
  if (x->on && tvf)
    return ds_err(err, "records=tfexample needs the CREATE VIRTUAL TABLE form "
                       "(its columns are the features)");
  if (!x->on)
    for (const ds_opt_spec *s = ds_tfex_columns_specs + 1; s->name; s++)
      if (ds_opt_given(o, s)) return ds_err(err, "option '%s' needs records=tfexample", s->name);
  return 0;
}

char *ds_tfex_columns_declaration(ds_tfex_columns *x, const ds_tfex_columns_opts *v,
                                  int writing, const ds_record_source *src,
                                  uint64_t max_value_bytes, char **err) {
  const char *cols = v->columns;
  if (cols) {
    if (ds_schema_parse_columns(&x->schema, cols, writing != 0, err)) return NULL;
  } else if (ds_tfex_infer(&x->schema, src->count, (uint64_t)v->infer, src->get,
                           src->ctx, x->bytes_text, max_value_bytes, err)) {
    return NULL;
  }
  if (ds_schema_name_columns(&x->schema, NULL, err)) return NULL;
  char *rec = ds_schema_free_name(&x->schema, "record", NULL);
  char *sh = ds_schema_free_name(&x->schema, "shard", NULL);
  char *si = ds_schema_free_name(&x->schema, "shard_index", NULL);
  char *tail = rec && sh && si ? ds_strf("\"%s\" BLOB HIDDEN, \"%s\" INTEGER HIDDEN, "
                                         "\"%s\" INTEGER HIDDEN", rec, sh, si)
                               : NULL;
  char *sql = tail ? ds_schema_sql(&x->schema, NULL, tail) : NULL;
  free(rec);
  free(sh);
  free(si);
  free(tail);
  if (!sql) ds_err(err, "out of memory");
  return sql;
}

void ds_tfex_columns_free(ds_tfex_columns *x) {
  ds_schema_free(&x->schema);
  ds_tfex_builder_free(&x->builder);
  ds_tfex_free(&x->check);
}

/* Put feature column c (value v, not NULL) into the builder, as its
 * declared type stores v (vtab/table_writer.h: 'abc' for an INTEGER
 * column is an error, '12' is 12). */
static int put_feature(ds_tfex_columns *x, const ds_column *c, sqlite3_value *v, char **err) {
  const char *name = c->field;
  size_t len = c->field_len;
  ds_value d;
  char *why = NULL;
  if (ds_value_from_sql_decl(v, c->decl, &d, &why)) {
    ds_err(err, "declared %s: %s", c->decltype, why);
    free(why);
    return -1;
  }
  switch (d.type) {
    case DS_V_INT: return ds_tfex_put_int64(&x->builder, name, len, &d.u.i, 1, err);
    case DS_V_FLOAT: {
      float f = (float)d.u.f;
      return ds_tfex_put_float(&x->builder, name, len, &f, 1, err);
    }
    case DS_V_BYTES: {
      int rc = ds_tfex_put_npy(&x->builder, name, len, d.u.s.p, d.u.s.n, err);
      if (rc <= 0) return rc;
      return ds_tfex_put_bytes(&x->builder, name, len, d.u.s.p, d.u.s.n, err);
    }
    default: return ds_tfex_put_bytes(&x->builder, name, len, d.u.s.p, d.u.s.n, err);
  }
}

int ds_tfex_columns_encode_row(ds_tfex_columns *x, sqlite3_value **cols,
                               sqlite3_value *rec, ds_buf *out, char **err) {
  int t = sqlite3_value_type(rec);
  if (t == SQLITE_BLOB || t == SQLITE_TEXT) {
    const uint8_t *p = t == SQLITE_BLOB ? sqlite3_value_blob(rec) : sqlite3_value_text(rec);
    size_t n = (size_t)sqlite3_value_bytes(rec);
    if (ds_tfex_decode(&x->check, p ? p : (const uint8_t *)"", n, err)) return -1;
    return ds_buf_append(out, p ? p : (const uint8_t *)"", n) ? ds_err(err, "out of memory") : 0;
  }
  if (t != SQLITE_NULL) return ds_err(err, "record must be NULL, a BLOB or TEXT");
  for (size_t i = 0; i < x->schema.n; i++)
    if (sqlite3_value_type(cols[i]) != SQLITE_NULL &&
        put_feature(x, &x->schema.cols[i], cols[i], err)) {
      ds_err_prefix(err, x->schema.cols[i].name);
      ds_tfex_builder_reset(&x->builder);
      return -1;
    }
  return ds_tfex_build(&x->builder, out, err);
}

void ds_tfex_columns_row_free(ds_tfex_columns_row *r) {
  ds_tfex_free(&r->ex);
  free(r->hint);
  r->hint = NULL;
  r->valid = 0;
}

/* The feature of column col in the decoded record, trying the place it
 * had in the last record first (records of one bag share their layout). */
static const ds_tfex_feature *find_feature(const ds_tfex_columns *x,
                                           ds_tfex_columns_row *r, int col) {
  const ds_column *c = &x->schema.cols[col];
  size_t h = r->hint ? r->hint[col] : 0;
  if (h < r->ex.n && r->ex.features[h].name_len == c->field_len &&
      !memcmp(r->ex.features[h].name, c->field, c->field_len))
    return &r->ex.features[h];
  const ds_tfex_feature *f = ds_tfex_find(&r->ex, c->field, c->field_len);
  if (f && r->hint) r->hint[col] = (size_t)(f - r->ex.features);
  return f;
}

void ds_tfex_columns_result(const ds_tfex_columns *x, ds_tfex_columns_row *r,
                            int col, uint64_t g, const uint8_t *rec, size_t n,
                            uint64_t max_value_bytes, const char *module,
                            const char *file, sqlite3_context *ctx) {
  char *err = NULL;
  if (!r->hint && x->schema.n) r->hint = calloc(x->schema.n, sizeof *r->hint);
  if (!r->valid || r->row != g) {
    r->valid = 0;
    r->ex.arena.limit = (size_t)max_value_bytes;
    if (ds_tfex_decode(&r->ex, rec, n, &err)) goto fail;
    r->valid = 1;
    r->row = g;
  }
  ds_value v;
  if (ds_tfex_cell(find_feature(x, r, col), x->bytes_text, &r->ex.arena, &v, &err))
    goto fail;
  ds_value_result_decl(ctx, &v, x->schema.cols[col].decl);
  return;
fail:;
  char *m = ds_strf("%s: record %llu: %s", file, (unsigned long long)g,
                    err ? err : "out of memory");
  free(err);
  ds_result_error(ctx, module, m);
}
