/* dataset_info.c - dataset_info(path [, options]): what a dataset is, as
 * `property, value` rows, whatever its format.
 *
 *   SELECT * FROM dataset_info('data@4.bagz');
 *   SELECT value FROM dataset_info('train.msgpack') WHERE property = 'rows';
 *
 * The format comes from formats/detect.h. The dataset is opened once, as
 * the format module's CREATE form opens it (vtab/table.h
 * ds_table_declared: the module's own open and declare hooks, no SQLite
 * connection): `columns` are the visible columns of the CREATE TABLE text
 * its declare hook gives, so exactly what `CREATE VIRTUAL TABLE t USING
 * dataset(path, options...)` declares, and the numbers come from the
 * reader it opened (its public API). `options` are those of the format's
 * CREATE form (e.g. infer=, bytes=) but no writer's, checked by the
 * module's option specs, so a bad one is its error.
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
#include "vtab/bagz_options.h"
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

/* The name of a column definition starting at *p ("quoted" with ""
 * doubled, or bare up to a space), advancing *p past it. malloc'd. */
static char *def_name(const char **p) {
  const char *s = *p;
  ds_buf b = {0};
  if (*s == '"') {
    for (s++; *s && !(s[0] == '"' && s[1] != '"'); s++) {
      if (s[0] == '"') s++; /* "" is one quote */
      ds_buf_append(&b, s, 1);
    }
    if (*s) s++;
  } else {
    while (*s && *s != ' ' && *s != ',' && *s != ')') ds_buf_append(&b, s++, 1);
  }
  *p = s;
  if (ds_buf_append(&b, "", 1)) {
    ds_buf_free(&b);
    return NULL;
  }
  return (char *)b.data;
}

/* The visible columns of a module's CREATE TABLE text (as its declare
 * hook generates it: `name TYPE [HIDDEN], ...`) as a JSON object name ->
 * declared type, what PRAGMA table_info would say. */
static json_t *columns_of(const char *sql) {
  json_t *cols = json_object();
  const char *p = strchr(sql, '(');
  while (cols && p && *p && *p != ')') {
    p++;
    while (*p == ' ') p++;
    char *name = def_name(&p);
    const char *start = p;
    for (int depth = 0; *p && (depth || (*p != ',' && *p != ')')); p++)
      depth += *p == '(' ? 1 : *p == ')' ? -1 : 0;
    char *type = name ? ds_strf("%.*s", (int)(p - start), start) : NULL;
    char *t = type, *hidden = NULL;
    while (t && *t == ' ') t++;
    for (char *h = t; h && (h = strstr(h, "HIDDEN")); h++)
      if ((h == t || h[-1] == ' ') && (!h[6] || h[6] == ' ')) hidden = h;
    if (hidden) *hidden = 0;
    size_t n = t ? strlen(t) : 0;
    while (n && t[n - 1] == ' ') t[--n] = 0;
    if (!name || !type || (!hidden && json_object_set_new(cols, name, json_string(t)))) {
      json_decref(cols);
      cols = NULL;
    }
    free(name);
    free(type);
  }
  return cols;
}

/* Open the dataset once, as the format module's CREATE form does, and the
 * columns that CREATE declares (a JSON object name -> type). */
static int open_declared(const ds_detected *d, const char *path, const ds_options *o,
                         ds_dataset **ds, json_t **out, char **err) {
  char *sql = NULL;
  *out = NULL;
  if (ds_table_declared(ds_format_table_def(d->format), path, o, ds, &sql, err)) return -1;
  *out = columns_of(sql);
  free(sql);
  if (*out) return 0;
  ds_dataset_unref(*ds);
  *ds = NULL;
  return ds_err(err, "out of memory");
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

static int bagz_rows(info_list *l, bagz_reader *r, uint64_t bytes, json_t *columns) {
  /* limits and layout as the options that opened it name them */
  const ds_opt_spec *lim = &bagz_read_specs[BAGZ_SPEC_LIMITS];
  const ds_opt_spec *lay = &bagz_read_specs[BAGZ_SPEC_LAYOUT];
  size_t zstd = 0, k = bagz_nshards(r);
  json_t *files = json_array(), *sizes = json_array();
  for (size_t i = 0; i < k; i++) {
    zstd += bagz_shard_zstd(r, i) != 0;
    json_array_append_new(files, json_string(bagz_shard_path(r, i)));
    json_array_append_new(sizes, jint(bagz_shard_count(r, i)));
  }
  const char *cname = zstd == k ? "zstd" : zstd == 0 ? "none" : "mixed";
  common_rows(l, "bagz", bagz_count(r), k, bytes, json_string(cname), columns);
  put(l, "limits", json_string(lim->names[r->opts.limits]));
  put(l, "layout", json_string(lay->names[r->opts.layout]));
  put(l, "shard_rows", sizes);
  put(l, "files", files);
  return 0;
}

static int datadings_rows(info_list *l, datadings_reader *r, uint64_t bytes,
                          json_t *columns) {
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

static int atlas_rows(info_list *l, atlas_reader *r, uint64_t bytes, json_t *columns) {
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
  return 0;
}

static int bcolz_rows(info_list *l, bcolz_table *t, uint64_t bytes, json_t *columns,
                      char **err) {
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
  /* what `dataset` adds (bagz: limits=separate when detected) */
  if (rc == 0) rc = ds_bagz_detected_options(&d, &o, err);
  ds_dataset *ds = NULL;
  if (rc == 0 && open_declared(&d, path, &o, &ds, &columns, err)) {
    ds_err_prefix(err, ds_format_table_def(d.format)->name); /* as the module says it */
    rc = -1;
  }
  if (rc == 0) rc = ds_detect_bytes(path, &d, &bytes, err);
  if (rc == 0) {
    switch (d.format) {
    case DS_FORMAT_BAGZ: rc = bagz_rows(l, ds_bagz_reader_of(ds), bytes, columns); break;
    case DS_FORMAT_DATADINGS:
      rc = datadings_rows(l, ds_datadings_reader_of(ds), bytes, columns);
      break;
    case DS_FORMAT_ATLAS: rc = atlas_rows(l, ds_atlas_reader_of(ds), bytes, columns); break;
    case DS_FORMAT_BCOLZ: rc = bcolz_rows(l, ds_bcolz_table_of(ds), bytes, columns, err); break;
    }
    if (rc) json_decref(columns); /* not handed to a row */
  } else {
    json_decref(columns);
  }
  ds_dataset_unref(ds);
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
    info_clear, NULL};

int ds_dataset_info_register(sqlite3 *db) { return ds_list_register(db, &info_def); }
