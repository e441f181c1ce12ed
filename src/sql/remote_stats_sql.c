/* remote_stats_sql.c - the datasets_remote_stats() table (see
 * remote_stats_sql.h): a snapshot of the per-endpoint counters taken when
 * the scan starts. Columns: endpoint, requests (tries sent), retries,
 * failures, bytes (body bytes fetched), wait_ms (time waited for the
 * network), cache_hits, cache_misses, cache_bytes (served by the disk
 * cache); the hidden argument `action` ('reset': zero after reading). */
#include "sql/remote_stats_sql.h"

#include <string.h>

#include "core/remote_stats.h"
#include "sql/row_table.h"

enum { COL_ENDPOINT, COL_REQUESTS, COL_RETRIES, COL_FAILURES, COL_BYTES, COL_WAIT_MS,
       COL_HITS, COL_MISSES, COL_CACHE_BYTES, COL_ACTION };

/* The counter of each numeric column (COL_REQUESTS ...). */
static const ds_rstat_field field_of[] = {DS_RSTAT_REQUESTS, DS_RSTAT_RETRIES,
                                          DS_RSTAT_FAILURES, DS_RSTAT_BYTES,
                                          DS_RSTAT_WAIT_US,  DS_RSTAT_CACHE_HITS,
                                          DS_RSTAT_CACHE_MISSES, DS_RSTAT_CACHE_BYTES};

typedef struct stats_cursor {
  ds_row_cursor row; /* row.end: the rows held */
  ds_rstats_row rows[DS_RSTATS_ENDPOINTS];
} stats_cursor;

static int st_connect(sqlite3 *db, void *aux, int argc, const char *const *argv,
                      sqlite3_vtab **out, char **err) {
  (void)aux;
  (void)argc;
  (void)argv;
  (void)err;
  return ds_row_table_connect(
      db, "CREATE TABLE x(endpoint TEXT, requests INTEGER, retries INTEGER, failures INTEGER,"
          " bytes INTEGER, wait_ms INTEGER, cache_hits INTEGER, cache_misses INTEGER,"
          " cache_bytes INTEGER, action HIDDEN)",
      sizeof(ds_row_table), sizeof(stats_cursor), out);
}

/* An equality on `action` is the argument (idxNum 1). */
static int st_best_index(sqlite3_vtab *v, sqlite3_index_info *info) {
  (void)v;
  info->idxNum = 0;
  for (int i = 0; i < info->nConstraint; i++) {
    const struct sqlite3_index_constraint *c = &info->aConstraint[i];
    if (c->iColumn != COL_ACTION || c->op != SQLITE_INDEX_CONSTRAINT_EQ) continue;
    if (!c->usable) return SQLITE_CONSTRAINT;
    info->aConstraintUsage[i].argvIndex = 1;
    info->aConstraintUsage[i].omit = 1;
    info->idxNum = 1;
  }
  info->estimatedCost = 10;
  info->estimatedRows = 10;
  return SQLITE_OK;
}

static int st_close(sqlite3_vtab_cursor *cur) {
  sqlite3_free(cur);
  return SQLITE_OK;
}

static int st_filter(sqlite3_vtab_cursor *cur, int idxNum, const char *idxStr, int argc,
                     sqlite3_value **argv) {
  (void)idxStr;
  stats_cursor *c = (stats_cursor *)cur;
  int reset = 0;
  if (idxNum == 1 && argc == 1) {
    const char *a = (const char *)sqlite3_value_text(argv[0]);
    if (!a || strcmp(a, "reset") != 0) {
      sqlite3_free(cur->pVtab->zErrMsg);
      cur->pVtab->zErrMsg = sqlite3_mprintf(
          "datasets_remote_stats: unknown action '%s' (known: 'reset')", a ? a : "NULL");
      return SQLITE_ERROR;
    }
    reset = 1;
  }
  c->row.end = ds_rstats_read(c->rows, DS_RSTATS_ENDPOINTS, reset);
  c->row.i = 0;
  return SQLITE_OK;
}

static int st_column(sqlite3_vtab_cursor *cur, sqlite3_context *ctx, int col) {
  stats_cursor *c = (stats_cursor *)cur;
  const ds_rstats_row *r = &c->rows[c->row.i];
  if (col == COL_ENDPOINT) {
    sqlite3_result_text(ctx, r->endpoint, -1, SQLITE_TRANSIENT);
  } else if (col >= COL_REQUESTS && col <= COL_CACHE_BYTES) {
    ds_rstat_field f = field_of[col - COL_REQUESTS];
    uint64_t v = r->v[f];
    if (f == DS_RSTAT_WAIT_US) v /= 1000;
    sqlite3_result_int64(ctx, v > INT64_MAX ? INT64_MAX : (sqlite3_int64)v);
  } else {
    sqlite3_result_null(ctx);
  }
  return SQLITE_OK;
}

/* Eponymous only (no xCreate): SELECT * FROM datasets_remote_stats(). */
static sqlite3_module stats_module = {
    .iVersion = 0, .xConnect = st_connect, .xBestIndex = st_best_index,
    .xDisconnect = ds_row_table_disconnect, .xOpen = ds_row_cursor_open, .xClose = st_close,
    .xFilter = st_filter, .xNext = ds_row_cursor_next, .xEof = ds_row_cursor_eof,
    .xColumn = st_column, .xRowid = ds_row_cursor_rowid};

int ds_remote_stats_register(sqlite3 *db) {
  return sqlite3_create_module_v2(db, "datasets_remote_stats", &stats_module, NULL, NULL);
}
