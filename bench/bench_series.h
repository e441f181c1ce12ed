/* bench_series.h - a minimal eponymous virtual table `bench_series(start,
 * stop)` with one column `value`, the same shape as SQLite's generate_series
 * (ext/misc/series.c). The benchmark uses it as the row floor of SQLite's
 * virtual-table machinery when the linked libsqlite3 has no generate_series
 * (Debian builds it into the sqlite3 shell only). Header-only: the driver is
 * a single translation unit. */
#ifndef BENCH_SERIES_H
#define BENCH_SERIES_H

#include <sqlite3.h>
#include <string.h>

typedef struct ser_cursor {
  sqlite3_vtab_cursor base;
  sqlite3_int64 value, stop;
} ser_cursor;

static int ser_connect(sqlite3 *db, void *aux, int argc,
                       const char *const *argv, sqlite3_vtab **out,
                       char **err) {
  (void)aux, (void)argc, (void)argv, (void)err;
  int rc = sqlite3_declare_vtab(db,
                                "CREATE TABLE x(value, start HIDDEN, stop HIDDEN)");
  if (rc != SQLITE_OK) return rc;
  *out = sqlite3_malloc(sizeof **out);
  if (!*out) return SQLITE_NOMEM;
  memset(*out, 0, sizeof **out);
  return SQLITE_OK;
}

static int ser_disconnect(sqlite3_vtab *vt) {
  sqlite3_free(vt);
  return SQLITE_OK;
}

/* Needs equality constraints on both start (column 1) and stop (column 2). */
static int ser_best_index(sqlite3_vtab *vt, sqlite3_index_info *info) {
  (void)vt;
  int found = 0;
  for (int i = 0; i < info->nConstraint; i++) {
    const struct sqlite3_index_constraint *c = &info->aConstraint[i];
    if (!c->usable || c->op != SQLITE_INDEX_CONSTRAINT_EQ) continue;
    if (c->iColumn != 1 && c->iColumn != 2) continue;
    info->aConstraintUsage[i].argvIndex = c->iColumn;
    info->aConstraintUsage[i].omit = 1;
    found |= c->iColumn;
  }
  if (found != 3) return SQLITE_CONSTRAINT;
  info->estimatedCost = 1000.0;
  return SQLITE_OK;
}

static int ser_open(sqlite3_vtab *vt, sqlite3_vtab_cursor **out) {
  (void)vt;
  ser_cursor *c = sqlite3_malloc(sizeof *c);
  if (!c) return SQLITE_NOMEM;
  memset(c, 0, sizeof *c);
  *out = &c->base;
  return SQLITE_OK;
}

static int ser_close(sqlite3_vtab_cursor *cur) {
  sqlite3_free(cur);
  return SQLITE_OK;
}

static int ser_filter(sqlite3_vtab_cursor *cur, int idx, const char *idxs,
                      int argc, sqlite3_value **argv) {
  (void)idx, (void)idxs;
  ser_cursor *c = (ser_cursor *)cur;
  if (argc < 2) return SQLITE_ERROR;
  c->value = sqlite3_value_int64(argv[0]);
  c->stop = sqlite3_value_int64(argv[1]);
  return SQLITE_OK;
}

static int ser_next(sqlite3_vtab_cursor *cur) {
  ((ser_cursor *)cur)->value++;
  return SQLITE_OK;
}

static int ser_eof(sqlite3_vtab_cursor *cur) {
  ser_cursor *c = (ser_cursor *)cur;
  return c->value > c->stop;
}

static int ser_column(sqlite3_vtab_cursor *cur, sqlite3_context *ctx, int i) {
  (void)i;
  sqlite3_result_int64(ctx, ((ser_cursor *)cur)->value);
  return SQLITE_OK;
}

static int ser_rowid(sqlite3_vtab_cursor *cur, sqlite3_int64 *rowid) {
  *rowid = ((ser_cursor *)cur)->value;
  return SQLITE_OK;
}

static const sqlite3_module bench_series_module = {
    .iVersion = 0,
    .xConnect = ser_connect,
    .xBestIndex = ser_best_index,
    .xDisconnect = ser_disconnect,
    .xOpen = ser_open,
    .xClose = ser_close,
    .xFilter = ser_filter,
    .xNext = ser_next,
    .xEof = ser_eof,
    .xColumn = ser_column,
    .xRowid = ser_rowid,
};

#endif
