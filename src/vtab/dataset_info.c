/* dataset_info.c - dataset_info(path [, options]): what a dataset is, as
 * `property, value` rows, whatever its format.
 *
 *   SELECT * FROM dataset_info('data@4.bagz');
 *   SELECT value FROM dataset_info('train.msgpack') WHERE property = 'rows';
 *
 * The format comes from formats/detect.h; the numbers from the format's
 * reader (its public API); `columns` from a private in-memory database in
 * which `CREATE VIRTUAL TABLE t USING dataset(path, options...)` is run and
 * PRAGMA table_info read back, so it is exactly what that CREATE declares.
 * `options` are those of the format's CREATE form (e.g. infer=, bytes=);
 * they go to that CREATE unchanged, so a bad one is its error.
 *
 * Rows, in this order: format, rows, shards, bytes_on_disk, compression,
 * columns (JSON object name -> declared type), then the format's own
 * (README "dataset_info"). A per-shard property whose shards all agree is
 * one value; otherwise a JSON array with one value per shard. */
#include <jansson.h>
#include <stdlib.h>
#include <string.h>

#include "core/abspath.h"
#include "core/common.h"
#include "core/json_file.h"
#include "core/options.h"
#include "sql/sqlite_api.h"
#include "sql/value_sql.h"
#include "formats/atlas/atlas.h"
#include "formats/bagz/bagz.h"
#include "formats/bagz/bagz_shards.h"
#include "formats/bcolz/bcolz.h"
#include "formats/bcolz/bcolz_meta.h"
#include "formats/datadings/datadings.h"
#include "formats/detect.h"
#include "vtab/list.h"
#include "vtab/module_options.h"
#include "vtab/modules.h"
#include "vtab/vtab_util.h"

#define MOD "dataset_info"

enum { COL_PROPERTY, COL_VALUE };

/* One row: the value as JSON (integer, real, string, null, or a container
 * given back as JSON text). */
typedef struct info_row {
  const char *name;
  json_t *value;
} info_row;

typedef struct info_list {
  info_row *rows;
  size_t n;
  int oom;
} info_list;

/* Add a row, taking the reference to v (NULL v: SQL NULL). */
static void put(info_list *l, const char *name, json_t *v) {
  info_row *r = ds_grow(l->rows, l->n, sizeof *r);
  if (!r) {
    json_decref(v);
    l->oom = 1;
    return;
  }
  l->rows = r;
  r[l->n].name = name;
  r[l->n].value = v ? v : json_null();
  l->n++;
}

/* Free the rows of l. */
static void list_free(info_list *l) {
  for (size_t i = 0; i < l->n; i++) json_decref(l->rows[i].value);
  free(l->rows);
  memset(l, 0, sizeof *l);
}

static json_t *jint(uint64_t v) { return json_integer((json_int_t)v); }

/* The per-shard rule: one value when all agree, else the array (takes a). */
static json_t *uniform(json_t *a) {
  size_t n = json_array_size(a);
  if (n == 0) {
    json_decref(a);
    return json_null();
  }
  for (size_t i = 1; i < n; i++)
    if (!json_equal(json_array_get(a, 0), json_array_get(a, i))) return a;
  json_t *v = json_incref(json_array_get(a, 0));
  json_decref(a);
  return v;
}

static json_t *parse_json(const char *text) {
  char *why = NULL;
  const char *t = text ? text : "null";
  json_t *j = ds_json_parse((const uint8_t *)t, strlen(t), "dataset_info", &why);
  free(why);
  return j;
}

/* ------------------------------------------------------------ columns */

/* Append ", 'name=value'" for every option. */
static char *create_sql(const char *path, const ds_options *o) {
  char *sql = sqlite3_mprintf("CREATE VIRTUAL TABLE temp.t USING dataset(%Q", path);
  for (size_t i = 0; sql && i < o->n; i++) {
    char *arg = sqlite3_mprintf("%s=%s", o->items[i].name, o->items[i].value);
    char *next = arg ? sqlite3_mprintf("%s, %Q", sql, arg) : NULL;
    sqlite3_free(arg);
    sqlite3_free(sql);
    sql = next;
  }
  char *done = sql ? sqlite3_mprintf("%s)", sql) : NULL;
  sqlite3_free(sql);
  return done;
}

/* The columns CREATE VIRTUAL TABLE ... USING dataset(path, options)
 * declares, as a JSON object name -> type (PRAGMA table_info). */
static int declared_columns(const char *path, const ds_options *o, json_t **out,
                            char **err) {
  *out = NULL;
  sqlite3 *db = NULL;
  sqlite3_stmt *st = NULL;
  char *sql = create_sql(path, o);
  int rc = sql ? sqlite3_open_v2(":memory:", &db,
                                 SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE, NULL)
               : SQLITE_NOMEM;
  if (rc == SQLITE_OK) rc = ds_dataset_module_register(db);
  if (rc == SQLITE_OK) rc = sqlite3_exec(db, sql, NULL, NULL, NULL);
  if (rc == SQLITE_OK)
    rc = sqlite3_prepare_v2(db, "SELECT name, type FROM pragma_table_info('t')", -1,
                            &st, NULL);
  json_t *cols = rc == SQLITE_OK ? json_object() : NULL;
  while (rc == SQLITE_OK && sqlite3_step(st) == SQLITE_ROW) {
    const char *name = (const char *)sqlite3_column_text(st, 0);
    const char *type = (const char *)sqlite3_column_text(st, 1);
    if (!cols || !name || json_object_set_new(cols, name, json_string(type ? type : "")))
      rc = SQLITE_NOMEM;
  }
  if (rc == SQLITE_OK && sqlite3_finalize(st) != SQLITE_OK) rc = SQLITE_ERROR;
  else if (rc != SQLITE_OK) sqlite3_finalize(st);
  if (rc != SQLITE_OK)
    ds_err(err, "%s", rc == SQLITE_NOMEM || !db ? "out of memory" : sqlite3_errmsg(db));
  sqlite3_close(db);
  sqlite3_free(sql);
  if (rc != SQLITE_OK) {
    json_decref(cols);
    return -1;
  }
  *out = cols;
  return 0;
}

/* ------------------------------------------------------------ formats */

/* The rows every format has. */
static void common_rows(info_list *l, const char *format, uint64_t rows,
                        uint64_t shards, uint64_t bytes, json_t *compression,
                        json_t *columns) {
  put(l, "format", json_string(format));
  put(l, "rows", jint(rows));
  put(l, "shards", jint(shards));
  put(l, "bytes_on_disk", jint(bytes));
  put(l, "compression", compression);
  put(l, "columns", columns);
}

static int bagz_rows(info_list *l, const char *path, const ds_detected *d,
                     const ds_options *o, uint64_t bytes, json_t *columns,
                     char **err) {
  static const char *const comp[] = {"auto", "none", "zstd", NULL};
  static const char *const lim[] = {"tail", "separate", NULL};
  static const char *const lay[] = {"concatenated", "interleaved", NULL};
  int c, li, la;
  if (ds_options_enum(o, "compression", comp, 0, &c, err) ||
      ds_options_enum(o, "limits", lim, d->bagz_separate, &li, err) ||
      ds_options_enum(o, "layout", lay, 0, &la, err))
    return -1;
  bagz_options bo = {(bagz_compression)c, (bagz_limits)li, (ds_layout)la,
                     ds_options_get(o, "dictionary")};
  bagz_reader *r;
  if (bagz_open(path, &bo, &r, err)) return -1;
  size_t zstd = 0, k = bagz_nshards(r);
  json_t *files = json_array(), *sizes = json_array();
  for (size_t i = 0; i < k; i++) {
    zstd += bagz_shard_zstd(r, i) != 0;
    json_array_append_new(files, json_string(bagz_shard_path(r, i)));
    json_array_append_new(sizes, jint(bagz_shard_count(r, i)));
  }
  const char *cname = zstd == k ? "zstd" : zstd == 0 ? "none" : "mixed";
  common_rows(l, "bagz", bagz_count(r), k, bytes, json_string(cname), columns);
  put(l, "limits", json_string(lim[li]));
  put(l, "layout", json_string(lay[la]));
  put(l, "shard_rows", sizes);
  put(l, "files", files);
  bagz_close(r);
  return 0;
}

static int datadings_rows(info_list *l, const char *path, uint64_t bytes,
                          json_t *columns, char **err) {
  datadings_reader *r;
  if (datadings_open(path, &r, err)) return -1;
  size_t n = datadings_nshards(r);
  json_t *style = json_array(), *salt = json_array(), *bits = json_array(),
         *hashes = json_array(), *cap = json_array(), *rate = json_array(),
         *sizes = json_array(), *files = json_array();
  for (size_t s = 0; s < n; s++) {
    datadings_shard_facts f;
    datadings_shard_facts_get(r, s, &f);
    json_array_append_new(style, json_string(f.has_offsets ? "new" : "legacy"));
    char hex[17] = "";
    for (int i = 0; i < 8; i++) snprintf(hex + 2 * i, 3, "%02x", f.salt[i]);
    json_array_append_new(salt, f.has_key_hashes ? json_string(hex) : json_null());
    json_array_append_new(bits, f.has_filter ? jint(f.filter_bits) : json_null());
    json_array_append_new(hashes, f.has_filter ? jint(f.filter_hashes) : json_null());
    json_array_append_new(cap, f.has_filter ? jint(f.filter_capacity) : json_null());
    json_array_append_new(rate, f.has_filter ? json_real(f.filter_fp_rate) : json_null());
    json_array_append_new(sizes, jint(datadings_shard_count(r, s)));
    json_array_append_new(files, json_string(datadings_shard_path(r, s)));
  }
  common_rows(l, "datadings", datadings_count(r), n, bytes, json_string("none"), columns);
  put(l, "index_style", uniform(style));
  put(l, "lookup", json_string(datadings_lookup_method(r)));
  put(l, "salt", uniform(salt));
  put(l, "filter_bits", uniform(bits));
  put(l, "filter_hashes", uniform(hashes));
  put(l, "filter_capacity", uniform(cap));
  put(l, "filter_fp_rate", uniform(rate));
  put(l, "shard_rows", sizes);
  put(l, "files", files);
  datadings_close(r);
  return 0;
}

static const char *atlas_strategy_name(int s) {
  switch (s) {
  case ATLAS_NO_COMPRESSION: return "none";
  case ATLAS_STANDARD_COMPRESSION: return "zstd";
  case ATLAS_SHARED_DICTIONARY: return "zstd, shared dictionary";
  case ATLAS_SHARD_DICTIONARY: return "zstd, per-shard dictionaries";
  }
  return "unknown";
}

static int atlas_rows(info_list *l, const char *path, const ds_options *o,
                      uint64_t bytes, json_t *columns, char **err) {
  atlas_reader *r;
  if (atlas_open_dict(path, ds_options_get(o, "dictionary"), &r, err)) return -1;
  size_t n = atlas_nshards(r);
  int strategy = atlas_root_strategy(r);
  if (strategy < 0) strategy = n ? atlas_shard_strategy(r, 0) : 0;
  json_t *strat = json_array(), *bsize = json_array(), *level = json_array(),
         *dtype = json_array(), *dirs = json_array(), *sizes = json_array(),
         *dicts = json_array();
  for (size_t s = 0; s < n; s++) {
    json_array_append_new(strat, json_integer(atlas_shard_strategy(r, s)));
    json_array_append_new(bsize, jint(atlas_block_size(r, s)));
    json_array_append_new(level, json_integer(atlas_shard_meta(r, s)->compression_level));
    json_array_append_new(dtype, json_string(atlas_index_dtype(r, s)));
    json_array_append_new(dirs, json_string(atlas_shard_name(r, s)));
    json_array_append_new(sizes, jint(atlas_shard_count(r, s)));
    const char *dp = atlas_dict_path(r, s);
    if (!dp) continue;
    json_t *entry = NULL; /* one entry per dictionary file */
    for (size_t k = 0; k < json_array_size(dicts) && !entry; k++) {
      json_t *e = json_array_get(dicts, k);
      if (strcmp(json_string_value(json_object_get(e, "file")), dp) == 0) entry = e;
    }
    if (!entry) {
      entry = json_pack("{s:s, s:I, s:[]}", "file", dp, "dict_id",
                        (json_int_t)atlas_dict_id(r, s), "shards");
      json_array_append_new(dicts, entry);
    }
    json_array_append_new(json_object_get(entry, "shards"), jint(s));
  }
  common_rows(l, "atlas", atlas_count(r), n, bytes,
              json_string(atlas_strategy_name(strategy)), columns);
  put(l, "kind", json_string(atlas_is_bare_shard(r) ? "shard" : "dataset"));
  put(l, "strategy", json_integer(strategy));
  put(l, "shard_strategy", uniform(strat));
  put(l, "block_size", uniform(bsize));
  put(l, "compression_level", uniform(level));
  put(l, "dictionaries", dicts);
  put(l, "index_dtype", uniform(dtype));
  put(l, "shard_rows", sizes);
  put(l, "shard_dirs", dirs);
  atlas_close(r);
  return 0;
}

static int bcolz_rows(info_list *l, const char *path, uint64_t bytes,
                      json_t *columns, char **err) {
  bcolz_table *t;
  if (bcolz_open(path, &t, err)) return -1;
  json_t *chunklen = json_object(), *dtypes = json_object(),
         *cparams = json_object(), *col_attrs = json_object();
  json_t *cnames = json_array();
  int rc = 0;
  for (size_t c = 0; c < bcolz_ncols(t) && rc == 0; c++) {
    const char *name = bcolz_is_ctable(t) ? bcolz_col_name(t, c) : "value";
    bcolz_cparams cp;
    if ((rc = bcolz_col_cparams(t, c, &cp, err))) break;
    json_object_set_new(chunklen, name, jint(bcolz_col_chunklen(t, c)));
    json_object_set_new(dtypes, name, json_string(bcolz_col_dtype(t, c)->str));
    json_object_set_new(col_attrs, name, parse_json(bcolz_col_attrs_json(t, c)));
    const char *codec, *shuffle;
    int memcpyed;
    bcolz_blosc_flags(cp.flags, &codec, &shuffle, &memcpyed);
    json_t *blosc = cp.has_chunk
        ? json_pack("{s:s, s:s, s:b, s:i}", "codec", codec, "shuffle", shuffle,
                    "memcpyed", memcpyed, "typesize", (int)cp.typesize)
        : json_null();
    json_object_set_new(cparams, name,
                        json_pack("{s:s, s:i, s:i, s:i, s:o}", "cname", cp.cname,
                                  "clevel", cp.clevel, "shuffle", cp.shuffle,
                                  "quantize", cp.quantize, "blosc", blosc));
    int seen = 0; /* distinct codec names, in column order */
    for (size_t k = 0; k < json_array_size(cnames) && !seen; k++)
      seen = strcmp(json_string_value(json_array_get(cnames, k)), cp.cname) == 0;
    if (!seen) json_array_append_new(cnames, json_string(cp.cname));
  }
  if (rc == 0) {
    ds_buf comp = {0};
    ds_buf_puts(&comp, "blosc:");
    for (size_t k = 0; k < json_array_size(cnames); k++)
      ds_buf_printf(&comp, "%s%s", k ? "," : "", json_string_value(json_array_get(cnames, k)));
    ds_buf_append(&comp, "", 1);
    common_rows(l, "bcolz", bcolz_nrows(t), 1, bytes,
                comp.data ? json_string((const char *)comp.data) : NULL, columns);
    ds_buf_free(&comp);
    put(l, "kind", json_string(bcolz_is_ctable(t) ? "ctable" : "carray"));
    put(l, "chunklen", chunklen);
    put(l, "dtypes", dtypes);
    put(l, "cparams", cparams);
    put(l, "attrs", parse_json(bcolz_attrs_json(t)));
    if (bcolz_is_ctable(t)) put(l, "column_attrs", col_attrs);
    else json_decref(col_attrs);
  } else {
    json_decref(chunklen);
    json_decref(dtypes);
    json_decref(cparams);
    json_decref(col_attrs);
  }
  json_decref(cnames);
  bcolz_close(t);
  return rc;
}

/* Everything about `path`, into l. Errors name the path. */
static int collect(const char *path, const char *opts, info_list *l, char **err) {
  ds_detected d;
  if (ds_detect(path, &d, err)) return -1;
  ds_options o = {0};
  json_t *columns = NULL;
  uint64_t bytes = 0;
  int rc = opts ? ds_options_add_list(&o, opts, err) : 0;
  /* the format's options that dataset_info takes: those of its CREATE
   * form, but no writer's (mode= among them) */
  if (rc == 0 && ds_opt_check(ds_format_option_groups(d.format), DS_FORM_INFO, &o, err)) {
    char *why = NULL, *abs = ds_path_absolute(path, &why); /* as the module names it */
    ds_err_prefix(err, abs ? abs : path);
    free(abs);
    free(why);
    rc = -1;
  } else if (rc) {
    ds_err_prefix(err, path);
  }
  if (rc == 0) rc = declared_columns(path, &o, &columns, err);
  if (rc == 0) rc = ds_detect_bytes(path, &d, &bytes, err);
  if (rc == 0) {
    switch (d.format) {
    case DS_FORMAT_BAGZ: rc = bagz_rows(l, path, &d, &o, bytes, columns, err); break;
    case DS_FORMAT_DATADINGS: rc = datadings_rows(l, path, bytes, columns, err); break;
    case DS_FORMAT_ATLAS: rc = atlas_rows(l, path, &o, bytes, columns, err); break;
    case DS_FORMAT_BCOLZ: rc = bcolz_rows(l, path, bytes, columns, err); break;
    }
    if (rc) json_decref(columns); /* not handed to a row */
  }
  ds_options_free(&o);
  if (rc == 0 && l->oom) rc = ds_err(err, "out of memory");
  return rc;
}

/* ------------------------------------------------------------ module */

/* ds_list_def.collect: every row of the dataset at path. */
static int info_collect(ds_list_cursor *c, const char *path, const char *opts, char **err) {
  info_list l = {0};
  int rc = collect(path, opts, &l, err);
  if (rc) {
    list_free(&l);
    return rc;
  }
  c->rows = l.rows;
  c->n = l.n;
  return 0;
}

/* ds_list_def.clear */
static void info_clear(ds_list_cursor *c) {
  info_list l = {c->rows, c->n, 0};
  list_free(&l);
  c->rows = NULL;
}

/* A JSON value as an SQL value: numbers and strings as such, containers
 * as JSON text. */
static void value_result(sqlite3_context *ctx, json_t *v) {
  switch (json_typeof(v)) {
  case JSON_INTEGER: sqlite3_result_int64(ctx, (sqlite3_int64)json_integer_value(v)); break;
  case JSON_REAL: sqlite3_result_double(ctx, json_real_value(v)); break;
  case JSON_STRING:
    sqlite3_result_text(ctx, json_string_value(v), (int)json_string_length(v),
                        SQLITE_TRANSIENT);
    break;
  case JSON_TRUE: sqlite3_result_int(ctx, 1); break;
  case JSON_FALSE: sqlite3_result_int(ctx, 0); break;
  case JSON_NULL: sqlite3_result_null(ctx); break;
  default: { /* object or array: JSON text with the JSON subtype */
    char *text = ds_json_dumps(v);
    ds_buf b = {0};
    if (!text || ds_buf_puts(&b, text)) sqlite3_result_error_nomem(ctx);
    else ds_result_json(ctx, &b);
    ds_buf_free(&b);
    free(text);
  }
  }
}

/* ds_list_def.column */
static void info_column(ds_list_cursor *c, size_t i, int col, sqlite3_context *ctx) {
  const info_row *r = &((const info_row *)c->rows)[i];
  if (col == COL_PROPERTY) sqlite3_result_text(ctx, r->name, -1, SQLITE_STATIC);
  else value_result(ctx, r->value);
}

/* property, value, then the HIDDEN path and options; about 20 rows */
static const ds_list_def info_def = {
    MOD, "CREATE TABLE x(property TEXT, value, path HIDDEN, options HIDDEN)",
    2, 2, "dataset_info('path' [, 'name=value,...'])", 20, info_collect, info_column,
    info_clear};

int ds_dataset_info_register(sqlite3 *db) { return ds_list_register(db, &info_def); }
