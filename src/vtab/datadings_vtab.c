/* datadings_vtab.c - the `datadings` and `datadings_verify` virtual tables.
 *
 *   SELECT key, sample FROM datadings('train.msgpack') LIMIT 3;
 *   CREATE VIRTUAL TABLE temp.train USING datadings('train.msgpack', infer=1000);
 *   SELECT label, count(*) FROM train GROUP BY label;
 *   SELECT * FROM train WHERE key = 'img-00042';
 *   SELECT m.tag, t.label FROM meta m JOIN train t ON t.key = m.key;
 *   SELECT * FROM datadings_verify('train.msgpack');
 *
 * Table-valued form: key TEXT, sample TEXT (JSON), HIDDEN raw BLOB, and the
 * HIDDEN arguments path and options. CREATE form: key, one column per
 * top-level field seen in the first `infer` samples (default 100) or as
 * given by columns='name TYPE, ...', then HIDDEN sample and raw (renamed
 * _sample / _raw when a field already has that name).
 *
 * Planning (sql/plan.c, vtab/table.c): rowid =, IN, ranges and LIMIT/OFFSET
 * read only the samples asked for through .offsets; key = / IN go through the
 * reader's Bloom filter + salted key hashes (a lookup never scans the data
 * file). A sample is parsed once per row, and only the fields a query
 * reads are converted. */
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "core/common.h"
#include "core/value_json.h"
#include "core/options.h"
#include "core/rowset.h"
#include "core/schema.h"
#include "formats/datadings/datadings.h"
#include "formats/datadings/datadings_sample.h"
#include "sql/plan.h"
#include "sql/sqlite_api.h"
#include "sql/column_value.h"
#include "sql/value_sql.h"
#include "vtab/datadings_options.h"
#include "vtab/datadings_write.h"
#include "vtab/dataset.h"
#include "vtab/list.h"
#include "vtab/module_help.h"
#include "vtab/module_options.h"
#include "vtab/modules.h"
#include "vtab/table.h"
#include "vtab/vtab_util.h"

#define MOD "datadings"

/* An opened dataset, shared (reference-counted) by a table and its
 * cursors. */
typedef struct dd_dataset {
  ds_dataset base; /* refcount, cache key, path, change detection */
  datadings_reader *reader;
  dd_opts opts;
} dd_dataset;

/* The module's view of a shared dataset. */
static dd_dataset *DD(ds_dataset *d) { return (dd_dataset *)d; }

typedef struct dd_vtab {
  ds_table base;      /* db, form, dataset, argument columns */
  ds_table_writer *writer; /* mode=create|replace (table_writer.h) */
  ds_schema schema;   /* CREATE form: the field columns */
  int col_sample, col_raw, col_shard, col_shard_index;
  int raw_writer;     /* writer=raw: `raw` written unchecked (RawWriter) */
} dd_vtab;

typedef struct dd_cursor {
  ds_cursor base;      /* dataset, rowset, row, argument columns */
  int parsed;          /* doc holds the current row */
  datadings_doc *doc;  /* the current sample; learns the fields read */
  ds_arena arena;      /* values of the current row */
} dd_cursor;

/* ds_dataset_ops.close */
static void dataset_close(ds_dataset *d) {
  datadings_close(DD(d)->reader);
}

/* ds_dataset_ops.changed */
static int dataset_changed(const ds_dataset *d) {
  return datadings_stale(((const dd_dataset *)d)->reader);
}

/* Samples of a dataset (a writer's table before its first commit has no
 * reader: 0). */
static uint64_t dd_count(const dd_dataset *d) {
  return d->reader ? datadings_count(d->reader) : 0;
}

/* ds_dataset_ops.open: the CREATE form takes infer= and columns=, the
 * table-valued form no option. */
static int dataset_open(ds_dataset *d, const char *path, const ds_options *o, int tvf,
                        char **err) {
  (void)tvf;
  if (ds_opt_bind(ds_datadings_option_groups, d->form, o, &DD(d)->opts, err)) {
    ds_err_prefix(err, path);
    return -1;
  }
  /* a writer's table reads what it has published: nothing yet */
  return d->mode ? 0 : datadings_open(path, &DD(d)->reader, err);
}

static const ds_dataset_ops datadings_ops = {"datadings('file.msgpack')", dataset_open,
                                             dataset_close, dataset_changed, NULL,
                                             sizeof(dd_dataset), ds_datadings_option_groups};

/* Declare the CREATE form's columns: key, fields, HIDDEN sample and raw. */
static int declare_create(dd_vtab *t, char **err) {
  static const char *const reserved[] = {"key", NULL};
  if (ds_schema_name_columns(&t->schema, reserved, err)) return -1;
  char *sample = ds_schema_free_name(&t->schema, "sample", reserved);
  char *raw = ds_schema_free_name(&t->schema, "raw", reserved);
  char *sh = ds_schema_free_name(&t->schema, "shard", reserved);
  char *si = ds_schema_free_name(&t->schema, "shard_index", reserved);
  char *tail = sample && raw && sh && si
                   ? ds_strf("\"%s\" HIDDEN, \"%s\" HIDDEN, \"%s\" INTEGER HIDDEN, "
                             "\"%s\" INTEGER HIDDEN", sample, raw, sh, si)
                   : NULL;
  free(sh);
  free(si);
  char *sql = tail ? ds_schema_sql(&t->schema, "key TEXT", tail) : NULL;
  free(sample);
  free(raw);
  free(tail);
  int rc = ds_table_declare(&t->base, sql, err);
  free(sql);
  t->col_sample = 1 + (int)t->schema.n;
  t->col_raw = t->col_sample + 1;
  t->col_shard = t->col_sample + 2;
  t->col_shard_index = t->col_sample + 3;
  return rc;
}

/* columns='key TEXT, ...' names the key column, which is always there:
 * drop it from the field columns instead of adding key_2. */
static void drop_key_column(ds_schema *s) {
  size_t j = 0;
  for (size_t i = 0; i < s->n; i++) {
    if (strcasecmp(s->cols[i].field, "key") == 0) {
      free(s->cols[i].field);
      free(s->cols[i].decltype);
      free(s->cols[i].name);
      continue;
    }
    s->cols[j++] = s->cols[i];
  }
  s->n = j;
}

/* CREATE VIRTUAL TABLE t USING datadings(path, infer=N | columns='...'):
 * the field columns given, or inferred from the first samples. */
static int create_form(dd_vtab *t, const ds_options *o, char **err) {
  ds_dataset *ds = t->base.ds;
  const dd_opts *v = &DD(ds)->opts;
  const char *cols = v->columns;
  int mode = ds->mode;
  if (cols && ds_schema_parse_columns(&t->schema, cols, mode != 0, err)) {
    ds_err_prefix(err, ds->path);
    return -1;
  }
  if (cols) drop_key_column(&t->schema);
  if (!cols && DD(ds)->reader && datadings_infer_columns(DD(ds)->reader, ds->path, ds->max_value_bytes,
                                       (uint64_t)v->infer, &t->schema, err))
    return -1;
  t->raw_writer = v->write.writer == 1;
  if (declare_create(t, err)) return -1;
  return mode ? datadings_write_open(ds->path, o, mode, &t->schema, &t->writer, err) : 0;
}

/* ds_table_def.declare */
static int declare(ds_table *base, const ds_options *o, char **err) {
  dd_vtab *t = (dd_vtab *)base;
  if (!base->tvf) return create_form(t, o, err);
  /* the arguments fill the first HIDDEN columns, so path and options come
   * before raw */
  t->col_sample = 1, t->col_raw = 4, t->col_shard = 5, t->col_shard_index = 6;
  ds_table_arg_columns(base, 2, 3);
  return ds_table_declare(base, "CREATE TABLE x(key TEXT, sample TEXT, path HIDDEN,"
                                " options HIDDEN, raw BLOB HIDDEN, shard INTEGER HIDDEN,"
                                " shard_index INTEGER HIDDEN)", err);
}

/* ds_table_def.table_free */
static void table_free(ds_table *t) {
  ds_table_writer_free(((dd_vtab *)t)->writer);
  ds_schema_free(&((dd_vtab *)t)->schema);
}

/* Cost model: a row costs 1 to read and decode; rowid constraints touch
 * only their rows; key = costs about 2 rows a value (filter, hash table,
 * one key compare), which makes joins on key look the key up. */
static int dd_best_index(sqlite3_vtab *vtab, sqlite3_index_info *info) {
  ds_table *t = (ds_table *)vtab;
  double n = t->ds ? (double)dd_count(DD(t->ds)) : 1e6;
  ds_plan_extra extra[1] = {{0, "key", 1, 1}};
  return ds_table_plan(t, info, n, extra, 1);
}

/* The cursor's sample reader, made on first use: a key lookup that finds
 * nothing (each lookup query opens a cursor) needs none. NULL when out of
 * memory. */
static datadings_doc *cursor_doc(dd_cursor *c) {
  if (!c->doc) c->doc = datadings_doc_new();
  return c->doc;
}

/* ds_table_def.cursor_reset: a new query reads other fields. */
static void cursor_reset(ds_cursor *base) {
  dd_cursor *c = (dd_cursor *)base;
  c->parsed = 0;
  if (c->doc) datadings_doc_forget(c->doc);
}

/* ds_table_def.cursor_free */
static void cursor_free(ds_cursor *base) {
  dd_cursor *c = (dd_cursor *)base;
  datadings_doc_free(c->doc);
  ds_arena_free(&c->arena);
}

/* ds_lookup_fn: the row whose key equals one constraint value (SQLite's
 * TEXT affinity: numbers compare as their text; BLOB and NULL never equal
 * a key). */
static int pick_key(void *ctx, sqlite3_value *v, ds_rows *r, char **err) {
  dd_dataset *d = ctx;
  int type = sqlite3_value_type(v);
  if (type == SQLITE_NULL || type == SQLITE_BLOB) return 0;
  const unsigned char *k = sqlite3_value_text(v);
  size_t n = (size_t)sqlite3_value_bytes(v);
  uint64_t g;
  int found = datadings_find(d->reader, k ? k : (const unsigned char *)"", n, &g, err);
  if (found <= 0) return found;
  return ds_rows_add(r, g, err);
}

/* ds_table_def.select: key = / IN through the reader's lookup. */
static int select_rows(ds_cursor *base, ds_plan_args *a, ds_rows *r, char **err) {
  dd_cursor *c = (dd_cursor *)base;
  c->arena.limit = (size_t)base->ds->max_value_bytes;
  r->total = dd_count(DD(base->ds));
  if (!a->extra[0] || !DD(base->ds)->reader) return 0;
  return ds_rows_lookup(r, a->extra[0], a->extra_in[0], pick_key, DD(base->ds), err);
}

/* ds_table_def.arrive: the new row is not parsed yet. */
static void arrive(ds_cursor *c, uint64_t g) {
  (void)g;
  ((dd_cursor *)c)->parsed = 0;
}

/* Parse the current row once; its values live until the next row. */
static int ensure_parsed(dd_cursor *c, char **err) {
  if (c->parsed) return 0;
  ds_arena_reset(&c->arena);
  ds_dataset *ds = c->base.ds;
  if (!cursor_doc(c)) return ds_err(err, "out of memory");
  if (datadings_doc_load(c->doc, DD(ds)->reader, ds->path, ds->max_value_bytes, c->base.row, err))
    return -1;
  c->parsed = 1;
  return 0;
}

/* One field of the current sample (NULL when absent). */
static void column_field(dd_cursor *c, sqlite3_context *ctx, const ds_column *col) {
  char *err = NULL;
  ds_value v;
  int found = ensure_parsed(c, &err) ? -1
              : datadings_doc_field(c->doc, col->field, col->field_len, &c->arena, &v, &err);
  if (found < 0) ds_result_error(ctx, MOD, err);
  else if (found) ds_value_result_decl(ctx, &v, col->decl);
}

/* The shard of the current row, or its index inside that shard. */
static void column_shard(dd_cursor *c, sqlite3_context *ctx, int want_index) {
  const datadings_reader *r = DD(c->base.ds)->reader;
  size_t shard;
  uint64_t start, end;
  char *err = NULL;
  if (!cursor_doc(c)) {
    sqlite3_result_error_nomem(ctx);
    return;
  }
  if (datadings_sample_range(r, datadings_doc_io(c->doc), c->base.row, &shard, &start, &end, &err)) {
    ds_result_error(ctx, MOD, err);
    return;
  }
  uint64_t first = 0; /* rows of the shards before: a short loop per shard */
  for (size_t s = 0; want_index && s < shard; s++) first += datadings_shard_count(r, s);
  sqlite3_result_int64(ctx, (sqlite3_int64)(want_index ? c->base.row - first : shard));
}

/* The whole sample as JSON. */
static void column_sample(dd_cursor *c, sqlite3_context *ctx) {
  char *err = NULL;
  if (ensure_parsed(c, &err)) {
    ds_result_error(ctx, MOD, err);
    return;
  }
  ds_value v;
  ds_buf json = {0};
  if (datadings_doc_value(c->doc, &c->arena, &v, &err))
    ds_result_error(ctx, MOD, err);
  else if (ds_value_json_capped(&json, &v, c->base.ds->max_value_bytes, &c->arena, &err))
    ds_result_error(ctx, MOD, datadings_doc_error(c->doc, err));
  else
    ds_result_json(ctx, &json);
  ds_buf_free(&json);
}

/* The index key of the current sample. */
static void column_key(dd_cursor *c, sqlite3_context *ctx) {
  const uint8_t *p;
  size_t n;
  char *err = NULL;
  if (datadings_key(DD(c->base.ds)->reader, c->base.row, &p, &n, &err)) {
    ds_result_error(ctx, MOD, err);
    return;
  }
  sqlite3_result_text64(ctx, n ? (const char *)p : "", n, SQLITE_TRANSIENT, SQLITE_UTF8);
}

/* The sample's msgpack bytes. */
static void column_raw(dd_cursor *c, sqlite3_context *ctx) {
  const uint8_t *p;
  size_t n;
  char *err = NULL;
  ds_dataset *ds = c->base.ds;
  if (!cursor_doc(c)) {
    sqlite3_result_error_nomem(ctx);
    return;
  }
  if (datadings_sample_capped(DD(ds)->reader, datadings_doc_io(c->doc), ds->path,
                              ds->max_value_bytes, c->base.row, &p, &n, &err)) {
    ds_result_error(ctx, MOD, err);
    return;
  }
  sqlite3_result_blob64(ctx, n ? p : (const uint8_t *)"", n, SQLITE_TRANSIENT);
}

static int dd_column(sqlite3_vtab_cursor *cur, sqlite3_context *ctx, int col) {
  dd_cursor *c = (dd_cursor *)cur;
  dd_vtab *t = (dd_vtab *)cur->pVtab;
  if (ds_cursor_arg_column(cur, ctx, col)) return SQLITE_OK;
  if (col == 0) column_key(c, ctx);
  else if (col == t->col_sample) column_sample(c, ctx);
  else if (col == t->col_raw) column_raw(c, ctx);
  else if (col == t->col_shard || col == t->col_shard_index)
    column_shard(c, ctx, col == t->col_shard_index);
  else if (!t->base.tvf && col >= 1 && (size_t)col <= t->schema.n)
    column_field(c, ctx, &t->schema.cols[col - 1]);
  return SQLITE_OK;
}

/* xUpdate: one INSERT row -> one sample (datadings_write.c). */
static int dd_update(ds_table *base, int argc, sqlite3_value **argv,
                     sqlite3_int64 *rowid, char **err) {
  dd_vtab *t = (dd_vtab *)base;
  uint64_t row;
  if (ds_table_writer_insert(base, argc, argv, &row, err) ||
      datadings_write_row(t->writer, &t->schema, argv + 2, t->col_sample, t->col_raw,
                          !t->raw_writer, row, err))
    return -1;
  *rowid = (sqlite3_int64)row;
  return 0;
}

/* ds_table_def.start: the samples of a list of rows (rowid IN, key IN)
 * of a remote dataset are fetched at once. */
static int start(ds_cursor *base, const ds_filter_call *call, char **err) {
  (void)call, (void)err;
  const ds_rowset *rs = &base->rs;
  if (rs->kind == DS_RS_LIST && rs->nids > 1 && rs->limit == UINT64_MAX)
    datadings_prefetch(DD(base->ds)->reader, rs->ids, rs->nids);
  return 0;
}

/* ---- datadings_verify(path): one row per file listed in the .md5 ---- */

enum { V_FILE, V_EXPECTED, V_ACTUAL, V_OK };

/* ds_list_def.collect: hash every listed file (long: interruptible). */
static int verify_collect(ds_list_cursor *c, const char *path, const char *opts,
                          char **err) {
  (void)opts;
  datadings_md5_row *rows = NULL;
  int rc = datadings_verify(path, &rows, &c->n, err);
  c->rows = rows;
  return rc;
}

/* ds_list_def.column */
static void verify_column(ds_list_cursor *c, size_t i, int col, sqlite3_context *ctx) {
  const datadings_md5_row *r = &((const datadings_md5_row *)c->rows)[i];
  switch (col) {
    case V_FILE: sqlite3_result_text(ctx, r->file, -1, SQLITE_TRANSIENT); break;
    case V_EXPECTED: sqlite3_result_text(ctx, r->expected, -1, SQLITE_TRANSIENT); break;
    case V_ACTUAL:
      if (r->actual[0]) sqlite3_result_text(ctx, r->actual, -1, SQLITE_TRANSIENT);
      break;
    case V_OK: sqlite3_result_int(ctx, r->ok); break;
  }
}

/* ds_list_def.clear */
static void verify_clear(ds_list_cursor *c) {
  datadings_md5_free(c->rows, c->n);
  c->rows = NULL;
}

/* 4 columns, then the HIDDEN path; about 10 rows */
static const ds_list_def verify_def = {
    "datadings_verify",
    "CREATE TABLE x(file TEXT, expected_md5 TEXT, actual_md5 TEXT, ok INTEGER, path HIDDEN)",
    4, 1, "datadings_verify('file.msgpack')", 10, verify_collect, verify_column, verify_clear, NULL};

/* ds_table_def.register_more: datadings_verify. */
static int register_more(sqlite3 *db) { return ds_list_register(db, &verify_def); }

static const sqlite3_module datadings_module = DS_TABLE_WRITER_MODULE(dd_best_index, dd_column);

/* modules.h */
const ds_table_def ds_datadings_def = {
    .name = MOD, .methods = &datadings_module, .register_more = register_more,
    .ops = &datadings_ops, DS_TABLE_SIZES(dd_vtab, dd_cursor), .declare = declare,
    .table_free = table_free, /* the writer, the schema */
    .cursor_reset = cursor_reset, .cursor_free = cursor_free,
    .select = select_rows, .arrive = arrive, /* key lookups; a new row is unparsed */
    .start = start, /* lists: remote samples fetched at once */
    .update = dd_update}; /* mode=create|replace */

const ds_help_entry ds_datadings_help[] = {
    {"module", "datadings", "datadings('file.msgpack'), or CREATE VIRTUAL TABLE t USING "
     "datadings('file.msgpack', name=value, ...)", ds_datadings_option_groups, DS_HELP_FORMS},
    {"function", "datadings_verify", "SELECT * FROM datadings_verify('file.msgpack'): checks "
     "of the index, hashes and filter", NULL, 0},
    {NULL, NULL, NULL, NULL, 0}};

/* module_options.h */
datadings_reader *ds_datadings_reader_of(const ds_dataset *d) {
  return ((const dd_dataset *)d)->reader;
}
