/* table_writer.c - the writing part every module's CREATE form shares
 * (see table_writer.h). */
#include <stdlib.h>
#include <string.h>

#include "core/common.h"
#include "sql/value_sql.h"
#include "vtab/dataset.h"
#include "vtab/table_writer.h"
#include "vtab/vtab_util.h"

int ds_table_writer_mode(const ds_options *o, int *mode, char **err) {
  static const char *const modes[] = {"read", "create", "replace", NULL};
  return ds_options_enum(o, "mode", modes, 0, mode, err);
}

int ds_table_writer_connect(sqlite3 *db, void *aux, int argc, const char *const *argv,
                            sqlite3_vtab **out, char **pzErr) {
  /* argv: module, database, table, path, options... */
  const char *file = argc > 3 ? sqlite3_db_filename(db, argv[1]) : NULL;
  if (file && *file) {
    ds_options o = {0};
    char *err = NULL;
    int mode = 0;
    for (int i = 4; i < argc && !err; i++) ds_options_add(&o, argv[i], &err);
    if (!err) ds_table_writer_mode(&o, &mode, &err);
    ds_options_free(&o);
    free(err); /* bad options: the module's own connect says it */
    if (mode)
      return ds_set_error(pzErr, argv[0],
                          ds_strf("%s.%s: a table with mode=create or mode=replace "
                                  "must be TEMP (CREATE VIRTUAL TABLE temp.%s ...): "
                                  "in a database file it would try to create its "
                                  "dataset again each time the file is opened",
                                  argv[1], argv[2], argv[2]));
  }
  return ds_table_connect(db, aux, argc, argv, out, pzErr);
}

int ds_table_writer_new(const ds_options *o, const char *const *write_only,
                        ds_table_writer **out, char **err) {
  ds_table_writer *tw = calloc(1, sizeof *tw);
  if (!tw) return ds_err(err, "out of memory");
  for (size_t i = 0; i < o->n; i++) {
    int skip = strcmp(o->items[i].name, "mode") == 0;
    for (size_t k = 0; write_only && write_only[k] && !skip; k++)
      skip = strcmp(o->items[i].name, write_only[k]) == 0;
    if (skip) continue;
    char *arg = ds_strf("%s='%s'", o->items[i].name, o->items[i].value);
    int rc = arg ? ds_options_add(&tw->read_opts, arg, err) : ds_err(err, "out of memory");
    free(arg);
    if (rc) {
      ds_table_writer_free(tw);
      return -1;
    }
  }
  *out = tw;
  return 0;
}

void ds_table_writer_attach(ds_table_writer *tw, const ds_table_writer_fmt *fmt,
                            void *w, ds_stage *stage) {
  tw->fmt = fmt;
  tw->w = w;
  tw->stage = stage;
  ds_txn_init(&tw->txn, &fmt->steps, w);
}

void ds_table_writer_free(ds_table_writer *tw) {
  if (!tw) return;
  if (tw->fmt) {
    ds_txn_free(&tw->txn); /* a connection closed without commit: abort */
    tw->fmt->close(tw->w);
  }
  ds_stage_close(tw->stage);
  ds_options_free(&tw->read_opts);
  free(tw);
}

/* The writer of a table (NULL: a reading table). */
static ds_table_writer *writer_of(ds_table *t) {
  return ((ds_writable_table *)t)->writer;
}

int ds_table_writer_insert(ds_table *t, int argc, sqlite3_value **argv,
                           uint64_t *row, char **err) {
  ds_table_writer *tw = writer_of(t);
  if (!tw)
    return ds_err(err, "%s: the table reads (mode=read, or a writer table "
                       "reopened from a database's schema); CREATE a table "
                       "with mode=create or mode=replace to write",
                  t->ds ? t->ds->path : "");
  if (argc == 1 || sqlite3_value_type(argv[0]) != SQLITE_NULL)
    return ds_err(err, "%s: datasets are written once: only INSERT, no %s",
                  t->ds ? t->ds->path : "", argc == 1 ? "DELETE" : "UPDATE");
  uint64_t next = tw->fmt->count(tw->w);
  if (sqlite3_value_type(argv[1]) != SQLITE_NULL &&
      (sqlite3_value_type(argv[1]) != SQLITE_INTEGER ||
       (uint64_t)sqlite3_value_int64(argv[1]) != next))
    return ds_err(err, "row %llu: rowid %s: a new row's rowid must be NULL or the "
                       "next index (%llu)",
                  (unsigned long long)next, (const char *)sqlite3_value_text(argv[1]),
                  (unsigned long long)next);
  *row = next;
  return 0;
}

void ds_value_from_sql(sqlite3_value *v, ds_value *out) {
  memset(out, 0, sizeof *out);
  switch (sqlite3_value_type(v)) {
    case SQLITE_INTEGER: out->type = DS_V_INT; out->u.i = sqlite3_value_int64(v); break;
    case SQLITE_FLOAT: out->type = DS_V_FLOAT; out->u.f = sqlite3_value_double(v); break;
    case SQLITE_TEXT:
    case SQLITE_BLOB: /* text or bytes: the empty string rather than NULL */
      out->type = sqlite3_value_type(v) == SQLITE_TEXT ? DS_V_TEXT : DS_V_BYTES;
      out->u.s.p = out->type == DS_V_TEXT ? sqlite3_value_text(v) : sqlite3_value_blob(v);
      out->u.s.n = (size_t)sqlite3_value_bytes(v);
      if (!out->u.s.p) out->u.s.p = (const uint8_t *)"";
      break;
    default: out->type = DS_V_NULL;
  }
}

int ds_sql_is_json(sqlite3_value *v) {
  return sqlite3_value_type(v) == SQLITE_TEXT && sqlite3_value_subtype(v) == DS_JSON_SUBTYPE;
}

int ds_table_writer_begin(ds_table *t, char **err) {
  ds_table_writer *tw = writer_of(t);
  return tw ? ds_txn_begin(&tw->txn, err) : 0;
}

int ds_table_writer_sync(ds_table *t, char **err) {
  ds_table_writer *tw = writer_of(t);
  return tw ? ds_txn_sync(&tw->txn, err) : 0;
}

/* Publish, then let the table read what it wrote. */
int ds_table_writer_commit(ds_table *t, char **err) {
  ds_table_writer *tw = writer_of(t);
  int published;
  if (!tw) return 0;
  if (ds_txn_commit(&tw->txn, &published, err)) return -1;
  const char *path = published ? tw->fmt->published(tw->w) : NULL;
  if (!path) return 0;
  return ds_dataset_reopen(&t->ds, path, &tw->read_opts, err);
}

int ds_table_writer_rollback(ds_table *t, char **err) {
  ds_table_writer *tw = writer_of(t);
  return tw ? ds_txn_rollback(&tw->txn, err) : 0;
}

int ds_table_writer_savepoint(ds_table *t, int n, char **err) {
  ds_table_writer *tw = writer_of(t);
  return tw ? ds_txn_savepoint(&tw->txn, n, err) : 0;
}

int ds_table_writer_release(ds_table *t, int n, char **err) {
  ds_table_writer *tw = writer_of(t);
  return tw ? ds_txn_release(&tw->txn, n, err) : 0;
}

int ds_table_writer_rollback_to(ds_table *t, int n, char **err) {
  ds_table_writer *tw = writer_of(t);
  return tw ? ds_txn_rollback_to(&tw->txn, n, err) : 0;
}
