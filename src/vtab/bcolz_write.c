/* bcolz_write.c - INSERT INTO a bcolz CREATE-form table:
 *
 *   CREATE VIRTUAL TABLE temp.c USING bcolz('labels_bcolz', mode=create,
 *       columns='id INTEGER, label i4, score f8, name U16', cname=lz4, clevel=5, shuffle=1);
 *   INSERT INTO c SELECT id, label, score, name FROM meta;
 *
 * A ctable with one column per declared column (a carray when the only
 * column is `value`); without columns= a carray `value` whose dtype the
 * first row decides (INTEGER int64, REAL float64, TEXT U, BLOB S; NULL
 * there is an error). The format writer is opened at the first row, or
 * at the commit of an empty table. */
#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "core/codec.h"
#include "core/common.h"
#include "formats/bcolz/bcolz_cell_fast.h"
#include "formats/bcolz/bcolz_replay.h"
#include "sql/value_sql.h"
#include "vtab/bcolz_options.h"
#include "vtab/bcolz_write.h"
#include "vtab/dir_table_write.h"

/* Defaults as formats/bcolz/bcolz_writer.c's bcolz_write_defaults (and
 * bcolz's own). */
static const char *const cnames[] = {"blosclz", "lz4", "lz4hc", "snappy", "zlib", "zstd", NULL};
#define WRITER_INT(name_, field, lo, hi, d, dtext, text)                              \
  {.name = name_, .forms = DS_FORM_WRITER, .kind = DS_OPT_INT, .min = lo, .max = hi, \
   .def = d, .def_text = dtext, .help = text, .at = offsetof(bcolz_write_opts, field)}
const ds_opt_spec bcolz_write_specs[] = {
    {.name = "columns", .forms = DS_FORM_WRITER, .kind = DS_OPT_TEXT,
     .def_text = "one column value, typed by the first row",
     .help = "the columns, 'name type, ...' (numpy types, or JSON)",
     .at = offsetof(bcolz_write_opts, columns)},
    WRITER_INT("chunklen", chunklen, 1, INT64_MAX, 0, "from expectedlen", "rows per chunk"),
    WRITER_INT("expectedlen", expectedlen, 1, INT64_MAX, 1000000, NULL,
               "rows expected (sets chunklen, as bcolz does)"),
    {.name = "cname", .forms = DS_FORM_WRITER, .kind = DS_OPT_ENUM, .names = cnames, .def = 1,
     .help = "the blosc compressor", .at = offsetof(bcolz_write_opts, cname)},
    WRITER_INT("clevel", clevel, 0, 9, 5, NULL, "the blosc level"),
    WRITER_INT("shuffle", shuffle, 0, 2, 1, NULL, "0 none, 1 byte shuffle, 2 bit shuffle"),
    {0}};

/* What a staged directory opens: the columns and options. */
typedef struct bz_cfg {
  bcolz_wcols cols;
  bcolz_write_options opts;
} bz_cfg;

/* The format writer, opened lazily once the types are known. */
typedef struct bz_lazy {
  char *dir;
  bz_cfg *cfg;
  bcolz_writer *w;
} bz_lazy;

void bcolz_wcols_free(bcolz_wcols *c) {
  for (size_t i = 0; i < c->n; i++) free(c->names[i]);
  free(c->names);
  free(c->types);
  free(c->json);
  memset(c, 0, sizeof *c);
}

/* Room for one more column. */
static int wcols_push(bcolz_wcols *c, char *name, const bcolz_wtype *t, int json,
                      char **err) {
  char **n = realloc(c->names, (c->n + 1) * sizeof *n);
  if (n) c->names = n;
  bcolz_wtype *ty = n ? realloc(c->types, (c->n + 1) * sizeof *ty) : NULL;
  if (ty) c->types = ty;
  int *js = ty ? realloc(c->json, (c->n + 1) * sizeof *js) : NULL;
  if (!js) {
    free(name);
    return ds_err(err, "out of memory");
  }
  c->json = js;
  c->names[c->n] = name;
  c->types[c->n] = *t;
  c->json[c->n++] = json;
  return 0;
}

/* One "name type" item (type may be empty: object). */
static int parse_item(const char *p, size_t n, bcolz_wcols *out, char **err) {
  while (n && isspace((unsigned char)*p)) p++, n--;
  while (n && isspace((unsigned char)p[n - 1])) n--;
  size_t k = 0;
  while (k < n && !isspace((unsigned char)p[k])) k++;
  char *name = strndup(p, k);
  size_t t0 = k;
  while (t0 < n && isspace((unsigned char)p[t0])) t0++;
  char *type = strndup(p + t0, n - t0);
  if (!name || !type) {
    free(name);
    free(type);
    return ds_err(err, "out of memory");
  }
  bcolz_wtype t;
  int json = strcasecmp(type, "JSON") == 0;
  int rc = !*name ? ds_err(err, "columns: an empty column name")
                  : bcolz_write_check_name(name, err);
  if (rc == 0) rc = bcolz_write_parse_type(json || !*type ? "object" : type, &t, err);
  free(type);
  if (rc) {
    free(name);
    return -1;
  }
  for (size_t i = 0; i < out->n; i++)
    if (sqlite3_stricmp(out->names[i], name) == 0) { /* SQL's names ignore case */
      int r = ds_err(err, "columns: \"%s\" and \"%s\" name the same column (SQL compares "
                          "names ignoring ASCII case)", out->names[i], name);
      free(name);
      return r;
    }
  return wcols_push(out, name, &t, json, err);
}

int bcolz_wcols_parse(const char *spec, bcolz_wcols *out, char **err) {
  memset(out, 0, sizeof *out);
  if (!spec) {
    bcolz_wtype t = {0};
    char *name = strdup("value");
    out->inferred = 1;
    return name ? wcols_push(out, name, &t, 0, err) : ds_err(err, "out of memory");
  }
  int depth = 0;
  const char *start = spec;
  for (const char *p = spec;; p++) {
    if (*p == '(' || *p == '[') depth++;
    if (*p == ')' || *p == ']') depth--;
    if (*p && (*p != ',' || depth > 0)) continue;
    if (parse_item(start, (size_t)(p - start), out, err)) {
      bcolz_wcols_free(out);
      return -1;
    }
    if (!*p) break;
    start = p + 1;
  }
  return 0;
}

/* A copy of the columns (the table keeps its own). */
static int wcols_copy(const bcolz_wcols *src, bcolz_wcols *dst, char **err) {
  memset(dst, 0, sizeof *dst);
  dst->inferred = src->inferred;
  for (size_t i = 0; i < src->n; i++) {
    char *name = strdup(src->names[i]);
    if (!name || wcols_push(dst, name, &src->types[i], src->json[i], err)) {
      if (!name) ds_err(err, "out of memory");
      bcolz_wcols_free(dst);
      return -1;
    }
  }
  return 0;
}

static void cfg_free(void *v) {
  bz_cfg *c = v;
  if (!c) return;
  bcolz_wcols_free(&c->cols);
  free(c);
}

/* Open the bcolz writer with the (now known) types. */
static int lazy_start(bz_lazy *l, char **err) {
  bcolz_wcols *c = &l->cfg->cols;
  int carray = c->n == 1 && strcmp(c->names[0], "value") == 0;
  return bcolz_writer_open(l->dir, carray, c->n, (const char *const *)c->names, c->types,
                           &l->cfg->opts, &l->w, err);
}

/* The format's writer for core/staged_dir. */
static int fmt_open(const char *dir, const void *cfg, void **w, char **err) {
  bz_lazy *l = calloc(1, sizeof *l);
  if (!l || !(l->dir = strdup(dir))) {
    free(l);
    return ds_err(err, "out of memory");
  }
  l->cfg = (bz_cfg *)cfg;
  *w = l;
  return l->cfg->cols.inferred ? 0 : lazy_start(l, err);
}

/* The first row's value decides an inferred column's type. */
static int infer_type(bz_lazy *l, const ds_value *v, char **err) {
  const char *sql = v->type == DS_V_INT ? "INTEGER" : v->type == DS_V_FLOAT ? "REAL"
                  : v->type == DS_V_TEXT ? "TEXT" : v->type == DS_V_BYTES ? "BLOB"
                  : v->type == DS_V_NDARRAY ? "BLOB" : NULL;
  if (!sql)
    return ds_err(err, "row 0: column value is %s: without columns= the first row "
                       "decides the type and must be INTEGER, REAL, TEXT or BLOB",
                  v->type == DS_V_NULL ? "NULL" : "not a scalar");
  return bcolz_write_parse_type(sql, &l->cfg->cols.types[0], err) || lazy_start(l, err);
}

static int fmt_add(void *w, const ds_value *row, char **err) {
  bz_lazy *l = w;
  if (!l->w && infer_type(l, &row[0], err)) return -1;
  return bcolz_writer_add(l->w, row, err);
}
static uint64_t fmt_count(const void *w) {
  const bz_lazy *l = w;
  return l->w ? bcolz_writer_count(l->w) : 0;
}
static int fmt_truncate(void *w, uint64_t n, char **err) {
  bz_lazy *l = w;
  return l->w ? bcolz_writer_truncate(l->w, n, err) : 0;
}
static int fmt_finish(void *w, char **err) {
  bz_lazy *l = w;
  if (!l->w) { /* no row: an empty float64 carray, numpy's default dtype */
    if (bcolz_write_parse_type("f8", &l->cfg->cols.types[0], err) || lazy_start(l, err))
      return -1;
  }
  return bcolz_writer_finish(l->w, err);
}
static void fmt_free(void *w) {
  bz_lazy *l = w;
  if (!l) return;
  bcolz_writer_free(l->w);
  free(l->dir);
  free(l);
}

/* The rows a previous commit published come back first. */
static int fmt_replay(void *w, const char *dir, char **err) {
  return bcolz_each_row(dir, fmt_add, w, err);
}

static const ds_dir_format bcolz_dir_format = {"bcolz", fmt_open, fmt_add, fmt_count,
                                               fmt_truncate, fmt_finish, fmt_free,
                                               fmt_replay, bcolz_write_is_own};

/* The writer options from the table's options. */
static int parse_options(const bcolz_write_opts *v, uint64_t max_value_bytes,
                         bcolz_write_options *wo, char **err) {
  bcolz_write_defaults(wo);
  wo->max_value_bytes = max_value_bytes; /* what reads back with the same option */
  wo->chunklen = (uint64_t)v->chunklen;
  wo->expectedlen = (uint64_t)v->expectedlen;
  snprintf(wo->cname, sizeof wo->cname, "%s", cnames[v->cname]);
  wo->clevel = (int)v->clevel;
  wo->shuffle = (int)v->shuffle;
  wo->sync = 0; /* the stage fsyncs the whole tree before the commit */
  return bcolz_write_check(wo, err);
}

int bcolz_table_write_open(const char *path, const ds_options *o, const bcolz_write_opts *v,
                           uint64_t max_value_bytes, int mode, const bcolz_wcols *cols,
                           ds_table_writer **out, char **err) {
  bz_cfg *cfg = calloc(1, sizeof *cfg);
  if (!cfg) return ds_err(err, "out of memory");
  if (parse_options(v, max_value_bytes, &cfg->opts, err) || wcols_copy(cols, &cfg->cols, err)) {
    cfg_free(cfg);
    ds_err_prefix(err, path);
    return -1;
  }
  return ds_dir_write_open(path, o, mode, ds_bcolz_option_groups, &bcolz_dir_format, cfg,
                           cfg_free, out, err);
}

/* One SQL value of the row as a value: numbers, NULL and text that is not
 * JSON here (one sqlite3_value_type call each, the copy's common case),
 * the rest through ds_dir_write_value (JSON text, .npy BLOBs). */
static int row_value(sqlite3_value *sv, int json, ds_arena *a, ds_value *out, char **err) {
  switch (sqlite3_value_type(sv)) {
    case SQLITE_TEXT:
      if (json || sqlite3_value_subtype(sv) == DS_JSON_SUBTYPE) break;
      out->type = DS_V_TEXT;
      out->u.s.p = sqlite3_value_text(sv);
      out->u.s.n = (size_t)sqlite3_value_bytes(sv);
      if (!out->u.s.p) out->u.s.p = (const uint8_t *)""; /* as ds_value_from_sql */
      return 0;
    case SQLITE_INTEGER:
      out->type = DS_V_INT;
      out->u.i = sqlite3_value_int64(sv);
      return 0;
    case SQLITE_FLOAT:
      out->type = DS_V_FLOAT;
      out->u.f = sqlite3_value_double(sv);
      return 0;
    case SQLITE_NULL:
      out->type = DS_V_NULL;
      return 0;
    default: break;
  }
  return ds_dir_write_value(sv, json, DS_DECL_NONE, a, out, err); /* bcolz checks its dtypes */
}

int bcolz_table_write_row(ds_table_writer *tw, sqlite3_value **vals, uint64_t row,
                          char **err) {
  ds_staged_dir *d = ds_dir_write_target(tw);
  const bz_cfg *cfg = ds_staged_dir_config(d);
  size_t n = cfg->cols.n;
  ds_arena a = {0}; /* allocates only for JSON values (and wide rows) */
  ds_value stack_v[32];
  ds_value *v = n <= 32 ? stack_v : ds_arena_get(&a, n * sizeof *v, err);
  int rc = v ? 0 : -1;
  tw->row_fast = NULL; /* set again once this row is in */
  for (size_t i = 0; i < n && rc == 0; i++)
    rc = row_value(vals[i], cfg->cols.json[i], &a, &v[i], err);
  if (rc == 0) rc = ds_staged_dir_add(d, v, err);
  if (rc == 0) { /* the next row's shortcut: the writer's window, made current */
    bz_lazy *l = ds_staged_dir_writer(d);
    tw->row_fast = l && l->w ? bcolz_writer_window(l->w) : NULL;
  }
  if (rc && !strstr(*err ? *err : "", "row ")) {
    char where[32];
    snprintf(where, sizeof where, "row %llu", (unsigned long long)row);
    ds_err_prefix(err, where);
  }
  if (a.head) ds_arena_free(&a);
  return rc;
}

/* One INSERT row through the writer's window: 1 when every cell is a
 * value its column's put code takes as it is (an INTEGER in range, a REAL
 * for f8, TEXT that is not JSON and fits an S column) and the window has
 * room to spare (no column fills up with it): the row added, *rowid set.
 * Else 0 with nothing added (cells may be written past the last row,
 * where no row is yet). One sqlite3_value_type call and one fetch per
 * value. (Columns declared JSON are object columns: no window.) */
static int row_fast(bcolz_window *win, sqlite3_value **argv, sqlite3_int64 *rowid) {
  /* the API's entries once (through sqlite3_api, each call would load them) */
  int (*vtype)(sqlite3_value *) = sqlite3_value_type;
  sqlite3_int64 (*vint)(sqlite3_value *) = sqlite3_value_int64;
  /* an INSERT without a rowid (else the long way checks it) */
  if (win->room <= 1 || vtype(argv[0]) != SQLITE_NULL || vtype(argv[1]) != SQLITE_NULL)
    return 0;
  sqlite3_value **vals = argv + 2;
  const bcolz_wcol *c = win->cols, *end = c + win->ncols;
  uint64_t k = win->lag; /* the next row's cells: k cells past cell0 */
  for (; c < end; c++, vals++) {
    sqlite3_value *sv = *vals;
    int t = vtype(sv);
    const bcolz_fast *f = &c->fast;
    switch (f->put & 7) { /* every case listed: no range check */
      case BCOLZ_PUT_I8:
        if (t != SQLITE_INTEGER) return 0;
        bcolz_put_int(f, BCOLZ_PUT_I8, vint(sv), c->cell0 + k * 8);
        break;
      case BCOLZ_PUT_I4:
        if (t != SQLITE_INTEGER || !bcolz_put_int(f, BCOLZ_PUT_I4, vint(sv), c->cell0 + k * 4))
          return 0;
        break;
      case BCOLZ_PUT_I2:
        if (t != SQLITE_INTEGER || !bcolz_put_int(f, BCOLZ_PUT_I2, vint(sv), c->cell0 + k * 2))
          return 0;
        break;
      case BCOLZ_PUT_I1:
        if (t != SQLITE_INTEGER || !bcolz_put_int(f, BCOLZ_PUT_I1, vint(sv), c->cell0 + k))
          return 0;
        break;
      case BCOLZ_PUT_B1:
        if (t != SQLITE_INTEGER || !bcolz_put_int(f, BCOLZ_PUT_B1, vint(sv), c->cell0 + k))
          return 0;
        break;
      case BCOLZ_PUT_F8: {
        if (t != SQLITE_FLOAT) return 0;
        double x = sqlite3_value_double(sv);
        memcpy(c->cell0 + k * 8, &x, 8);
        break;
      }
      case BCOLZ_PUT_S: {
        if (t != SQLITE_TEXT || sqlite3_value_subtype(sv) == DS_JSON_SUBTYPE) return 0;
        const uint8_t *p = sqlite3_value_text(sv);
        size_t len = (size_t)sqlite3_value_bytes(sv);
        if (!p || !bcolz_put_s(f, p, len, c->cell0 + k * f->size)) return 0;
        break;
      }
      case BCOLZ_PUT_NONE:
      default:
        return 0;
    }
  }
  *rowid = (sqlite3_int64)*win->rows;
  bcolz_window_add(win); /* room > 1: it adds */
  return 1;
}

int bcolz_table_xupdate(sqlite3_vtab *vtab, int argc, sqlite3_value **argv,
                        sqlite3_int64 *rowid) {
  ds_table_writer *tw = ((ds_writable_table *)vtab)->writer;
  bcolz_window *win = tw ? tw->row_fast : NULL;
  if (win && (size_t)argc == win->ncols + 2 && row_fast(win, argv, rowid)) return SQLITE_OK;
  return ds_table_update(vtab, argc, argv, rowid); /* every check, every error */
}
