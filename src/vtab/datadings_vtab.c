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
 * Planning (core/plan.c): rowid =, IN, ranges and LIMIT/OFFSET read only
 * the samples asked for through .offsets; key = / IN go through the
 * reader's Bloom filter + salted key hashes (a lookup never scans the data
 * file). A sample is parsed once per row, and only the fields a query
 * reads are converted. */
#include <stdlib.h>
#include <string.h>

#include "core/common.h"
#include "core/options.h"
#include "core/plan.h"
#include "core/rowset.h"
#include "core/schema.h"
#include "core/sqlite_api.h"
#include "core/value_sql.h"
#include "formats/datadings.h"
#include "formats/msgpack_value.h"
#include "vtab/dataset.h"
#include "vtab/interrupt.h"
#include "vtab/modules.h"
#include "vtab/vtab_util.h"

#define MOD "datadings"
#define DEFAULT_INFER 100

/* An opened dataset, shared (reference-counted) by a table and its
 * cursors. */
typedef struct dd_dataset {
  ds_dataset base; /* refcount, cache key, path, change detection */
  datadings_reader *reader;
} dd_dataset;

/* The module's view of a shared dataset. */
static dd_dataset *DD(ds_dataset *d) { return (dd_dataset *)d; }

typedef struct dd_vtab {
  sqlite3_vtab base;
  sqlite3 *db;        /* for interrupt checks (vtab/interrupt.h) */
  int tvf;            /* table-valued form */
  ds_dataset *ds;     /* CREATE form: the table's; tvf: last used */
  ds_schema schema;   /* CREATE form: the field columns */
  int col_sample, col_raw, col_path, col_options; /* -1 when absent */
} dd_vtab;

typedef struct dd_cursor {
  sqlite3_vtab_cursor base;
  ds_dataset *ds;
  ds_rowset rs;
  ds_rowiter it;
  int eof;
  uint64_t row;
  int parsed;          /* doc holds the current row */
  ds_msgpack_doc doc;
  ds_arena arena;      /* values of the current row */
  char *path_arg, *options_arg;
  datadings_io io;     /* windows on the files (reads with pread) */
  /* the fields this query has read so far: later samples are walked only
   * as far as the last of them (msgpack_value.c checks the rest only when
   * a query needs it) */
  const char *want[64];
  size_t want_len[64];
  size_t nwant;
} dd_cursor;


/* ds_dataset_ops.close */
static void dataset_close(ds_dataset *d) {
  datadings_close(DD(d)->reader);
  free(d);
}

/* ds_dataset_ops.changed */
static int dataset_changed(const ds_dataset *d) {
  return datadings_stale(((const dd_dataset *)d)->reader);
}

/* ds_dataset_ops.open: the CREATE form takes infer= and columns=, the
 * table-valued form no option. */
static int dataset_open(const char *path, const ds_options *o, int tvf,
                        ds_dataset **out, char **err) {
  static const char *const create_known[] = {"infer", "columns", NULL};
  static const char *const tvf_known[] = {NULL};
  int64_t infer;
  if (ds_options_check_known(o, tvf ? tvf_known : create_known, err) ||
      ds_options_int(o, "infer", DEFAULT_INFER, 0, INT64_MAX, &infer, err)) {
    ds_err_prefix(err, path);
    return -1;
  }
  dd_dataset *d = calloc(1, sizeof *d);
  if (!d) return ds_err(err, "out of memory");
  if (datadings_open(path, &d->reader, err)) {
    free(d);
    return -1;
  }
  *out = &d->base;
  return 0;
}

static const ds_dataset_ops datadings_ops = {"datadings('file.msgpack')", dataset_open,
                                             dataset_close, dataset_changed};

/* Prefix an error about sample g with the file that holds it (the shard
 * file of a glob) and its index. */
static char *sample_error(const dd_dataset *d, uint64_t g, char *why) {
  size_t shard = 0;
  uint64_t start, end;
  char *ignored = NULL;
  const char *file = d->base.path;
  datadings_io io;
  memset(&io, 0, sizeof io);
  if (datadings_sample_range(d->reader, &io, g, &shard, &start, &end, &ignored) == 0)
    file = datadings_shard_path(d->reader, shard);
  datadings_io_free(&io);
  free(ignored);
  char *m = ds_strf("%s: sample %llu: %s", file, (unsigned long long)g,
                    why ? why : "out of memory");
  free(why);
  return m;
}

/* The bytes of sample g, at most max_value_bytes of them. */
static int sample_bytes(const dd_dataset *d, datadings_io *io, uint64_t g,
                        const uint8_t **p, size_t *n, char **err) {
  if (datadings_sample(d->reader, io, g, p, n, err)) return -1;
  if (*n <= d->base.max_value) return 0;
  size_t shard;
  uint64_t start = 0, end;
  datadings_sample_range(d->reader, io, g, &shard, &start, &end, err);
  ds_err(err, "sample of %zu bytes at offset %llu is more than max_value_bytes=%llu", *n,
         (unsigned long long)start, (unsigned long long)d->base.max_value);
  *err = sample_error(d, g, *err);
  return -1;
}

/* Parse sample g into doc. */
static int parse_sample(const dd_dataset *d, datadings_io *io, uint64_t g,
                        ds_msgpack_doc *doc, char **err) {
  const uint8_t *p;
  size_t n;
  if (sample_bytes(d, io, g, &p, &n, err)) return -1;
  doc->max_bytes = (size_t)d->base.max_value;
  if (ds_msgpack_scan(doc, p, n, err)) {
    *err = sample_error(d, g, *err);
    return -1;
  }
  return 0;
}

/* Infer the field columns from the first `infer` samples. Samples that do
 * not parse, and values that do not convert, are left for the queries that
 * read them to report. */
static int infer_schema(dd_vtab *t, int64_t infer, char **err) {
  uint64_t n = datadings_count(DD(t->ds)->reader);
  ds_msgpack_doc doc;
  ds_msgpack_doc_init(&doc);
  datadings_io io;
  memset(&io, 0, sizeof io);
  ds_arena arena = {0};
  arena.limit = (size_t)t->ds->max_value;
  int rc = 0;
  for (uint64_t g = 0; g < n && g < (uint64_t)infer && rc == 0; g++) {
    char *e = NULL;
    const msgpack_object *root;
    if (parse_sample(DD(t->ds), &io, g, &doc, &e) || ds_msgpack_get_root(&doc, &root, &e) ||
        root->type != MSGPACK_OBJECT_MAP) {
      free(e);
      continue;
    }
    const msgpack_object_map *m = &root->via.map;
    for (uint32_t i = 0; i < m->size && rc == 0; i++) {
      const msgpack_object *k = &m->ptr[i].key;
      if (k->type != MSGPACK_OBJECT_STR) continue; /* only str names become columns */
      if (k->via.str.size == 3 && memcmp(k->via.str.ptr, "key", 3) == 0) continue;
      ds_value v;
      ds_vtype type = DS_V_NULL;
      if (ds_msgpack_to_value(&m->ptr[i].val, &arena, &v, &e) == 0) type = v.type;
      free(e);
      e = NULL;
      rc = ds_schema_observe(&t->schema, k->via.str.ptr, k->via.str.size, type, err);
    }
    ds_arena_reset(&arena);
  }
  ds_arena_free(&arena);
  ds_msgpack_doc_free(&doc);
  datadings_io_free(&io);
  return rc;
}

/* Declare the CREATE form's columns: key, fields, HIDDEN sample and raw. */
static int declare_create(sqlite3 *db, dd_vtab *t, char **err) {
  static const char *const reserved[] = {"key", NULL};
  if (ds_schema_name_columns(&t->schema, reserved, err)) return -1;
  char *sample = ds_schema_free_name(&t->schema, "sample", reserved);
  char *raw = ds_schema_free_name(&t->schema, "raw", reserved);
  char *tail = sample && raw ? ds_strf("\"%s\" HIDDEN, \"%s\" HIDDEN", sample, raw) : NULL;
  char *sql = tail ? ds_schema_sql(&t->schema, "key TEXT", tail) : NULL;
  free(sample);
  free(raw);
  free(tail);
  if (!sql) return ds_err(err, "out of memory");
  int rc = sqlite3_declare_vtab(db, sql);
  if (rc != SQLITE_OK) ds_err(err, "cannot declare columns (%s): %s", sqlite3_errmsg(db), sql);
  free(sql);
  t->col_sample = 1 + (int)t->schema.n;
  t->col_raw = t->col_sample + 1;
  return rc == SQLITE_OK ? 0 : -1;
}

/* CREATE VIRTUAL TABLE t USING datadings(path, infer=N | columns='...'). */
static int create_form(sqlite3 *db, dd_vtab *t, int argc, const char *const *argv,
                       char **err) {
  ds_options o;
  int64_t infer = DEFAULT_INFER;
  int rc = ds_dataset_create(&datadings_ops, argc, argv, &o, &t->ds, err);
  if (rc == 0) ds_options_int(&o, "infer", DEFAULT_INFER, 0, INT64_MAX, &infer, err);
  const char *cols = ds_options_get(&o, "columns");
  if (rc == 0 && cols && ds_schema_parse_columns(&t->schema, cols, err)) {
    ds_err_prefix(err, t->ds->path);
    rc = -1;
  }
  ds_interrupt it; /* inferring and naming columns stop when asked */
  ds_interrupt_begin(&it, db);
  if (rc == 0 && !cols) rc = infer_schema(t, infer, err);
  if (rc == 0) rc = declare_create(db, t, err);
  ds_interrupt_end(&it);
  ds_options_free(&o);
  return rc;
}

static int dd_connect(sqlite3 *db, void *aux, int argc, const char *const *argv,
                      sqlite3_vtab **out, char **pzErr) {
  (void)aux;
  dd_vtab *t = sqlite3_malloc(sizeof *t);
  if (!t) return SQLITE_NOMEM;
  memset(t, 0, sizeof *t);
  t->db = db;
  t->tvf = argc <= 3;
  t->col_path = t->col_options = -1;
  int rc;
  if (t->tvf) {
    /* the arguments fill the first HIDDEN columns, so path and options
     * come before raw */
    rc = sqlite3_declare_vtab(db, "CREATE TABLE x(key TEXT, sample TEXT, path HIDDEN,"
                                  " options HIDDEN, raw BLOB HIDDEN)");
    t->col_sample = 1;
    t->col_path = 2;
    t->col_options = 3;
    t->col_raw = 4;
  } else {
    char *err = NULL;
    rc = create_form(db, t, argc, argv, &err) ? SQLITE_ERROR : SQLITE_OK;
    if (rc != SQLITE_OK) ds_set_error(pzErr, MOD, err);
  }
  if (rc != SQLITE_OK) {
    ds_dataset_unref(t->ds);
    ds_schema_free(&t->schema);
    sqlite3_free(t);
    return rc;
  }
  sqlite3_vtab_config(db, SQLITE_VTAB_DIRECTONLY);
  *out = &t->base;
  return SQLITE_OK;
}

static int dd_disconnect(sqlite3_vtab *vtab) {
  dd_vtab *t = (dd_vtab *)vtab;
  ds_dataset_unref(t->ds);
  ds_schema_free(&t->schema);
  sqlite3_free(t);
  return SQLITE_OK;
}

/* Cost model: a row costs 1 to read and decode; rowid constraints touch
 * only their rows; key = costs about 2 rows a value (filter, hash table,
 * one key compare), which makes joins on key look the key up. */
static int dd_best_index(sqlite3_vtab *vtab, sqlite3_index_info *info) {
  dd_vtab *t = (dd_vtab *)vtab;
  double n = t->ds ? (double)datadings_count(DD(t->ds)->reader) : 1e6;
  ds_plan_extra extra[1] = {{0, "key", 1, 1}};
  int args[2] = {t->col_path, t->col_options};
  ds_plan_config cfg = {n, 1.0, extra, 1, args, t->tvf ? 2 : 0, t->tvf ? 1 : 0};
  return ds_plan_best_index(info, &cfg);
}

static int dd_open(sqlite3_vtab *vtab, sqlite3_vtab_cursor **out) {
  (void)vtab;
  dd_cursor *c = sqlite3_malloc(sizeof *c);
  if (!c) return SQLITE_NOMEM;
  memset(c, 0, sizeof *c);
  ds_msgpack_doc_init(&c->doc);
  c->eof = 1;
  *out = &c->base;
  return SQLITE_OK;
}

static void cursor_reset(dd_cursor *c) {
  ds_rowset_free(&c->rs);
  ds_dataset_unref(c->ds);
  c->ds = NULL;
  sqlite3_free(c->path_arg);
  sqlite3_free(c->options_arg);
  c->path_arg = c->options_arg = NULL;
  c->eof = 1;
  c->parsed = 0;
  c->nwant = 0;
  ds_msgpack_want(&c->doc, NULL, NULL, 0);
}

static int dd_close(sqlite3_vtab_cursor *cur) {
  dd_cursor *c = (dd_cursor *)cur;
  cursor_reset(c);
  datadings_io_free(&c->io);
  ds_msgpack_doc_free(&c->doc);
  ds_arena_free(&c->arena);
  sqlite3_free(c);
  return SQLITE_OK;
}

/* Rows whose key equals one constraint value (SQLite's TEXT affinity:
 * numbers compare as their text; BLOB and NULL never equal a key). */
typedef struct key_pick {
  dd_dataset *d;
  uint64_t *ids;
  size_t n;
  char *err;
} key_pick;

static int pick_key(void *ctx, sqlite3_value *v) {
  key_pick *p = ctx;
  int type = sqlite3_value_type(v);
  if (type == SQLITE_NULL || type == SQLITE_BLOB) return 0;
  const unsigned char *k = sqlite3_value_text(v);
  size_t n = (size_t)sqlite3_value_bytes(v);
  uint64_t g;
  int r = datadings_find(p->d->reader, k ? k : (const unsigned char *)"", n, &g, &p->err);
  if (r < 0) return 1;
  if (r == 0) return 0;
  uint64_t *ids = ds_grow(p->ids, p->n, sizeof *ids);
  if (!ids) return ds_err(&p->err, "out of memory"), 1;
  p->ids = ids;
  p->ids[p->n++] = g;
  return 0;
}

/* Turn the decoded plan into the cursor's rowset. */
static int build_rowset(dd_cursor *c, ds_plan_args *a, char **err) {
  uint64_t total = datadings_count(DD(c->ds)->reader);
  if (a->extra[0]) {
    key_pick kp = {DD(c->ds), NULL, 0, NULL};
    if (ds_plan_each_value(a->extra[0], a->extra_in[0], pick_key, &kp)) {
      free(kp.ids);
      if (kp.err) {
        free(*err);
        *err = kp.err;
        return -1;
      }
      return ds_err(err, "cannot read the IN list of keys");
    }
    if (a->has_ids) { /* key AND rowid lists: keep the common rows */
      size_t j = 0;
      for (size_t i = 0; i < kp.n; i++)
        for (size_t k = 0; k < a->nids; k++)
          if (a->ids[k] == kp.ids[i]) {
            kp.ids[j++] = kp.ids[i];
            break;
          }
      kp.n = j;
    }
    ds_rowset_init_list(&c->rs, kp.ids, kp.n);
  } else if (a->has_ids) {
    if (a->ids == &a->one) {
      ds_rowset_init_one(&c->rs, a->one);
    } else {
      ds_rowset_init_list(&c->rs, a->ids, a->nids);
      a->ids = NULL;
    }
  } else if (ds_rowset_init_all(&c->rs, total)) {
    return ds_err(err, "out of memory");
  }
  ds_rowset_clip(&c->rs, a->lo, a->hi < total ? a->hi : total);
  if (a->empty) ds_rowset_clip(&c->rs, 0, 0);
  c->rs.desc = a->desc;
  c->rs.offset = a->offset;
  c->rs.limit = a->limit;
  return 0;
}

static void cursor_step(dd_cursor *c) {
  uint64_t g;
  c->parsed = 0;
  if (!ds_rowiter_next(&c->it, &g)) {
    c->eof = 1;
    return;
  }
  c->row = g;
}

static int filter(sqlite3_vtab_cursor *cur, int idxNum, int argc, sqlite3_value **argv) {
  dd_cursor *c = (dd_cursor *)cur;
  dd_vtab *t = (dd_vtab *)cur->pVtab;
  cursor_reset(c);
  char *err = NULL;
  ds_plan_args a;
  int rc = ds_plan_decode(idxNum, argc, argv, t->tvf ? 2 : 0, &a, &err);
  if (rc == 0)
    rc = t->tvf ? ds_dataset_for_call(&datadings_ops, &t->ds, a.args, &c->path_arg,
                                      &c->options_arg, &err)
                : ds_dataset_check(t->ds, &err);
  if (rc == 0) {
    c->ds = t->ds;
    ds_dataset_ref(c->ds);
    c->arena.limit = (size_t)c->ds->max_value; /* max_value_bytes */
    rc = build_rowset(c, &a, &err);
  }
  ds_plan_args_free(&a);
  if (rc) return ds_vtab_error(cur->pVtab, MOD, err);
  ds_rowiter_init(&c->it, &c->rs);
  c->eof = 0;
  cursor_step(c);
  return SQLITE_OK;
}

/* xFilter: the first key lookup builds a table of every key, which can
 * take long; it stops on request. */
static int dd_filter(sqlite3_vtab_cursor *cur, int idxNum, const char *idxStr,
                     int argc, sqlite3_value **argv) {
  (void)idxStr;
  ds_interrupt it;
  ds_interrupt_begin(&it, ((dd_vtab *)cur->pVtab)->db);
  int rc = filter(cur, idxNum, argc, argv);
  return ds_interrupt_end(&it) ? ds_vtab_interrupted(cur->pVtab) : rc;
}

static int dd_next(sqlite3_vtab_cursor *cur) {
  cursor_step((dd_cursor *)cur);
  return SQLITE_OK;
}

static int dd_eof(sqlite3_vtab_cursor *cur) { return ((dd_cursor *)cur)->eof; }

/* Parse the current row once; its values live until the next row. */
static int ensure_parsed(dd_cursor *c, char **err) {
  if (c->parsed) return 0;
  ds_arena_reset(&c->arena);
  if (parse_sample(DD(c->ds), &c->io, c->row, &c->doc, err)) return -1;
  c->parsed = 1;
  return 0;
}

/* One field of the current sample (NULL when absent). */
static void column_field(dd_cursor *c, sqlite3_context *ctx, const ds_column *col) {
  char *err = NULL;
  if (ensure_parsed(c, &err)) {
    ds_result_error(ctx, MOD, err);
    return;
  }
  const msgpack_object *o;
  int found = ds_msgpack_get_field(&c->doc, col->field, col->field_len, &o, &err);
  if (found < 0) {
    ds_result_error(ctx, MOD, sample_error(DD(c->ds), c->row, err));
    return;
  }
  if (found && c->nwant < 64) { /* learn the fields the query reads */
    size_t i = 0;
    while (i < c->nwant && !(c->want_len[i] == col->field_len && c->want[i] == col->field)) i++;
    if (i == c->nwant) {
      c->want[c->nwant] = col->field;
      c->want_len[c->nwant++] = col->field_len;
      ds_msgpack_want(&c->doc, c->want, c->want_len, c->nwant);
    }
  }
  if (!found) return; /* absent: NULL */
  ds_value v;
  if (ds_msgpack_to_value(o, &c->arena, &v, &err)) {
    ds_result_error(ctx, MOD, sample_error(DD(c->ds), c->row, err));
    return;
  }
  ds_value_result(ctx, &v);
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
  const msgpack_object *root;
  if (ds_msgpack_get_root(&c->doc, &root, &err) ||
      ds_msgpack_to_value(root, &c->arena, &v, &err) ||
      ds_value_json_capped(&json, &v, c->ds->max_value, &c->arena, &err))
    ds_result_error(ctx, MOD, sample_error(DD(c->ds), c->row, err));
  else
    ds_result_json(ctx, &json);
  ds_buf_free(&json);
}

static void column_key(dd_cursor *c, sqlite3_context *ctx) {
  const uint8_t *p;
  size_t n;
  char *err = NULL;
  if (datadings_key(DD(c->ds)->reader, c->row, &p, &n, &err)) {
    ds_result_error(ctx, MOD, err);
    return;
  }
  sqlite3_result_text64(ctx, n ? (const char *)p : "", n, SQLITE_TRANSIENT, SQLITE_UTF8);
}

static void column_raw(dd_cursor *c, sqlite3_context *ctx) {
  const uint8_t *p;
  size_t n;
  char *err = NULL;
  if (sample_bytes(DD(c->ds), &c->io, c->row, &p, &n, &err)) {
    ds_result_error(ctx, MOD, err);
    return;
  }
  sqlite3_result_blob64(ctx, n ? p : (const uint8_t *)"", n, SQLITE_TRANSIENT);
}

static int dd_column(sqlite3_vtab_cursor *cur, sqlite3_context *ctx, int col) {
  dd_cursor *c = (dd_cursor *)cur;
  dd_vtab *t = (dd_vtab *)cur->pVtab;
  if (col == 0) column_key(c, ctx);
  else if (col == t->col_sample) column_sample(c, ctx);
  else if (col == t->col_raw) column_raw(c, ctx);
  else if (col == t->col_path) {
    if (c->path_arg) sqlite3_result_text(ctx, c->path_arg, -1, SQLITE_TRANSIENT);
  } else if (col == t->col_options) {
    if (c->options_arg) sqlite3_result_text(ctx, c->options_arg, -1, SQLITE_TRANSIENT);
  } else if (!t->tvf && col >= 1 && (size_t)col <= t->schema.n) {
    column_field(c, ctx, &t->schema.cols[col - 1]);
  }
  return SQLITE_OK;
}

static int dd_rowid(sqlite3_vtab_cursor *cur, sqlite3_int64 *rowid) {
  *rowid = (sqlite3_int64)((dd_cursor *)cur)->row;
  return SQLITE_OK;
}

static sqlite3_module datadings_module = {
    .iVersion = 0,
    .xCreate = dd_connect,
    .xConnect = dd_connect,
    .xBestIndex = dd_best_index,
    .xDisconnect = dd_disconnect,
    .xDestroy = dd_disconnect,
    .xOpen = dd_open,
    .xClose = dd_close,
    .xFilter = dd_filter,
    .xNext = dd_next,
    .xEof = dd_eof,
    .xColumn = dd_column,
    .xRowid = dd_rowid,
};

/* ---- datadings_verify(path): one row per file listed in the .md5 ---- */

typedef struct verify_cursor {
  sqlite3_vtab_cursor base;
  datadings_md5_row *rows;
  size_t n, i;
  char *path;
} verify_cursor;

enum { V_FILE, V_EXPECTED, V_ACTUAL, V_OK, V_PATH };

typedef struct verify_vtab {
  sqlite3_vtab base;
  sqlite3 *db; /* for interrupt checks: hashing big files takes long */
} verify_vtab;

static int verify_connect(sqlite3 *db, void *aux, int argc, const char *const *argv,
                          sqlite3_vtab **out, char **pzErr) {
  (void)aux;
  (void)argc;
  (void)argv;
  (void)pzErr;
  int rc = sqlite3_declare_vtab(db, "CREATE TABLE x(file TEXT, expected_md5 TEXT,"
                                    " actual_md5 TEXT, ok INTEGER, path HIDDEN)");
  if (rc != SQLITE_OK) return rc;
  sqlite3_vtab_config(db, SQLITE_VTAB_DIRECTONLY);
  verify_vtab *t = sqlite3_malloc(sizeof *t);
  if (!t) return SQLITE_NOMEM;
  memset(t, 0, sizeof *t);
  t->db = db;
  *out = &t->base;
  return SQLITE_OK;
}

static int verify_disconnect(sqlite3_vtab *t) {
  sqlite3_free(t);
  return SQLITE_OK;
}

static int verify_best_index(sqlite3_vtab *t, sqlite3_index_info *info) {
  (void)t;
  static const int args[1] = {V_PATH};
  ds_plan_config cfg = {10, 1.0, NULL, 0, args, 1, 1};
  return ds_plan_best_index(info, &cfg);
}

static int verify_open(sqlite3_vtab *t, sqlite3_vtab_cursor **out) {
  (void)t;
  verify_cursor *c = sqlite3_malloc(sizeof *c);
  if (!c) return SQLITE_NOMEM;
  memset(c, 0, sizeof *c);
  *out = &c->base;
  return SQLITE_OK;
}

static void verify_reset(verify_cursor *c) {
  datadings_md5_free(c->rows, c->n);
  c->rows = NULL;
  c->n = c->i = 0;
  sqlite3_free(c->path);
  c->path = NULL;
}

static int verify_close(sqlite3_vtab_cursor *cur) {
  verify_reset((verify_cursor *)cur);
  sqlite3_free(cur);
  return SQLITE_OK;
}

static int verify_filter(sqlite3_vtab_cursor *cur, int idxNum, const char *idxStr,
                         int argc, sqlite3_value **argv) {
  (void)idxStr;
  verify_cursor *c = (verify_cursor *)cur;
  verify_reset(c);
  char *err = NULL;
  ds_plan_args a;
  int rc = ds_plan_decode(idxNum, argc, argv, 1, &a, &err);
  const char *path = rc == 0 && a.args[0] ? (const char *)sqlite3_value_text(a.args[0]) : NULL;
  if (rc == 0 && !path) rc = ds_err(&err, "no path given: use datadings_verify('file.msgpack')");
  if (rc == 0) {
    c->path = sqlite3_mprintf("%s", path);
    ds_interrupt it;
    ds_interrupt_begin(&it, ((verify_vtab *)cur->pVtab)->db);
    rc = datadings_verify(path, &c->rows, &c->n, &err);
    if (ds_interrupt_end(&it)) {
      free(err);
      ds_plan_args_free(&a);
      return ds_vtab_interrupted(cur->pVtab);
    }
  }
  ds_plan_args_free(&a);
  if (rc) return ds_vtab_error(cur->pVtab, "datadings_verify", err);
  /* a LIMIT/OFFSET pushed by the shared planner applies to these rows */
  c->i = a.offset < c->n ? (size_t)a.offset : c->n;
  if (a.limit < c->n - c->i) c->n = c->i + (size_t)a.limit;
  return SQLITE_OK;
}

static int verify_next(sqlite3_vtab_cursor *cur) {
  ((verify_cursor *)cur)->i++;
  return SQLITE_OK;
}

static int verify_eof(sqlite3_vtab_cursor *cur) {
  verify_cursor *c = (verify_cursor *)cur;
  return c->i >= c->n;
}

static int verify_column(sqlite3_vtab_cursor *cur, sqlite3_context *ctx, int col) {
  verify_cursor *c = (verify_cursor *)cur;
  const datadings_md5_row *r = &c->rows[c->i];
  switch (col) {
    case V_FILE: sqlite3_result_text(ctx, r->file, -1, SQLITE_TRANSIENT); break;
    case V_EXPECTED: sqlite3_result_text(ctx, r->expected, -1, SQLITE_TRANSIENT); break;
    case V_ACTUAL:
      if (r->actual[0]) sqlite3_result_text(ctx, r->actual, -1, SQLITE_TRANSIENT);
      break;
    case V_OK: sqlite3_result_int(ctx, r->ok); break;
    case V_PATH: sqlite3_result_text(ctx, c->path, -1, SQLITE_TRANSIENT); break;
  }
  return SQLITE_OK;
}

static int verify_rowid(sqlite3_vtab_cursor *cur, sqlite3_int64 *rowid) {
  *rowid = (sqlite3_int64)((verify_cursor *)cur)->i;
  return SQLITE_OK;
}

static sqlite3_module verify_module = {
    .iVersion = 0,
    .xCreate = NULL, /* table-valued only */
    .xConnect = verify_connect,
    .xBestIndex = verify_best_index,
    .xDisconnect = verify_disconnect,
    .xDestroy = verify_disconnect,
    .xOpen = verify_open,
    .xClose = verify_close,
    .xFilter = verify_filter,
    .xNext = verify_next,
    .xEof = verify_eof,
    .xColumn = verify_column,
    .xRowid = verify_rowid,
};

int ds_datadings_register(sqlite3 *db) {
  int rc = sqlite3_create_module_v2(db, "datadings", &datadings_module, NULL, NULL);
  if (rc == SQLITE_OK)
    rc = sqlite3_create_module_v2(db, "datadings_verify", &verify_module, NULL, NULL);
  return rc;
}

const sqlite3_module *ds_datadings_module(void) { return &datadings_module; }
