/* datadings_write.c - INSERT INTO a datadings CREATE-form table:
 *
 *   CREATE VIRTUAL TABLE temp.val USING datadings('val.msgpack', mode=create);
 *   INSERT INTO val(key, raw) SELECT key, raw FROM datadings('train.msgpack')
 *     WHERE rowid % 10 = 0;
 *   CREATE VIRTUAL TABLE temp.lab USING datadings('lab.msgpack', mode=create,
 *                                                 columns='label INTEGER, image BLOB');
 *   INSERT INTO lab(key, label, image) SELECT ...;
 *
 * A row gives its sample one of three ways: `raw` (exact msgpack bytes,
 * checked to be one map whose "key" is the key column), `sample` (a JSON
 * object), or the field columns ({"key": key, field: value, ...}, NULL
 * fields left out; JSON text, by its SQLite JSON subtype or a column
 * declared JSON, becomes a msgpack map/list; a .npy BLOB an array). */
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "core/common.h"
#include "formats/datadings/datadings_writer.h"
#include "vtab/datadings_options.h"
#include "vtab/datadings_write.h"

/* The format writer's steps; what the table reopens after a commit is
 * the .msgpack path. */
DS_TABLE_WRITER_FMT(dd_fmt, datadings_writer, (w), datadings_writer_close,
                    datadings_writer_path);

static const char *const writer_names[] = {"file", "raw", NULL};
const ds_opt_spec datadings_write_specs[] = {
    {.name = "writer", .forms = DS_FORM_WRITER, .kind = DS_OPT_ENUM, .names = writer_names,
     .def = 0, .help = "raw: the raw column written unchecked, as upstream's RawWriter",
     .at = offsetof(datadings_write_opts, writer)},
    {0}};

/* ds_table_writer_spec.open: the datadings writer. */
static int open_writer(ds_stage *stage, const char *path, void *ctx, void **w, char **err) {
  (void)ctx;
  return datadings_writer_open(stage, path, (datadings_writer **)w, err);
}

int datadings_write_open(const char *path, const ds_options *o, int mode,
                         const ds_schema *s, ds_table_writer **out, char **err) {
  for (size_t i = 0; i < s->n; i++)
    if ((s->cols[i].field_len == 2 && memcmp(s->cols[i].field, "nd", 2) == 0) ||
        (s->cols[i].field_len == 7 && memcmp(s->cols[i].field, "complex", 7) == 0))
      return ds_err(err, "%s: column \"%s\" is a field name msgpack-numpy reserves",
                    path, s->cols[i].name);
  ds_table_writer_spec spec = {&dd_fmt, ds_datadings_option_groups, datadings_writer_target, open_writer, NULL};
  return ds_table_writer_open(path, o, mode, &spec, out, err) < 0 ? -1 : 0;
}

/* 1 when a column is declared JSON. */
static int json_column(const ds_column *c) {
  return c->decltype && strcasecmp(c->decltype, "JSON") == 0;
}

/* The row's sample from its field columns. */
static int write_fields(datadings_writer *w, const ds_schema *s, sqlite3_value **vals,
                        const uint8_t *key, size_t klen, uint64_t row, char **err) {
  datadings_field stack_f[32]; /* no malloc per row for usual widths */
  datadings_field *f = s->n <= 32 ? stack_f : calloc(s->n, sizeof *f);
  if (!f) return ds_err(err, "out of memory");
  memset(f, 0, s->n * sizeof *f);
  for (size_t i = 0; i < s->n; i++) {
    f[i].name = s->cols[i].field;
    f[i].name_len = s->cols[i].field_len;
    char *why = NULL;
    if (ds_value_from_sql_decl(vals[1 + i], s->cols[i].decl, &f[i].value, &why)) {
      ds_err(err, "sample %llu: column '%s' declared %s: %s", (unsigned long long)row,
             s->cols[i].name, s->cols[i].decltype, why);
      free(why);
      if (f != stack_f) free(f);
      return -1;
    }
    f[i].json = ds_sql_is_json(vals[1 + i]) || json_column(&s->cols[i]);
  }
  int rc = datadings_writer_add_fields(w, key, klen, f, s->n, err);
  if (f != stack_f) free(f);
  return rc;
}

int datadings_write_row(ds_table_writer *tw, const ds_schema *s,
                        sqlite3_value **vals, int sample, int raw, int check_raw,
                        uint64_t row, char **err) {
  datadings_writer *w = tw->w;
  int ktype = sqlite3_value_type(vals[0]);
  const uint8_t *key = ktype == SQLITE_NULL ? NULL : sqlite3_value_text(vals[0]);
  size_t klen = key ? (size_t)sqlite3_value_bytes(vals[0]) : 0;
  if (ktype == SQLITE_BLOB)
    return ds_err(err, "sample %llu: key is a BLOB: keys are text", (unsigned long long)row);
  if (sqlite3_value_type(vals[raw]) != SQLITE_NULL) {
    if (!key) return ds_err(err, "sample %llu: key is NULL", (unsigned long long)row);
    if (sqlite3_value_type(vals[raw]) != SQLITE_BLOB)
      return ds_err(err, "sample %llu: raw must be a BLOB of msgpack bytes",
                    (unsigned long long)row);
    const uint8_t *p = sqlite3_value_blob(vals[raw]);
    size_t n = (size_t)sqlite3_value_bytes(vals[raw]);
    return datadings_writer_add_raw(w, key, klen, p ? p : (const uint8_t *)"", n, check_raw,
                                    err);
  }
  if (sqlite3_value_type(vals[sample]) != SQLITE_NULL) {
    const char *j = (const char *)sqlite3_value_text(vals[sample]);
    size_t n = (size_t)sqlite3_value_bytes(vals[sample]);
    return datadings_writer_add_json(w, key, klen, j ? j : "", n, err);
  }
  if (!key) return ds_err(err, "sample %llu: key is NULL", (unsigned long long)row);
  return write_fields(w, s, vals, key, klen, row, err);
}
