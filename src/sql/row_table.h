/* row_table.h - what the table-valued functions whose rows are computed
 * whole and held in memory (datasets_help, datasets_remote_stats, the
 * vtab/list.c lists) share: xConnect's declare-and-allocate, xDisconnect,
 * and a cursor over rows numbered 0 .. end-1 (the first member of such a
 * module's cursor) with its xOpen/xNext/xEof/xRowid. */
#ifndef DS_ROW_TABLE_H
#define DS_ROW_TABLE_H

#include <stddef.h>

#include "sql/sqlite_api.h"

/* The first member of such a module's table: it knows its cursors' size. */
typedef struct ds_row_table {
  sqlite3_vtab base;
  size_t cursor_size; /* of the module's cursor (a ds_row_cursor first) */
} ds_row_table;

/* xConnect's work: declare schema, then a zeroed table of `size` bytes (a
 * struct whose first member is a ds_row_table), sqlite3_malloc'd, whose
 * cursors will have cursor_size bytes. */
int ds_row_table_connect(sqlite3 *db, const char *schema, size_t size, size_t cursor_size,
                         sqlite3_vtab **out);
/* xDisconnect: frees the table (and an error message left on it). */
int ds_row_table_disconnect(sqlite3_vtab *t);

typedef struct ds_row_cursor {
  sqlite3_vtab_cursor base;
  size_t i, end; /* the current row; one past the last */
} ds_row_cursor;

/* xOpen: a zeroed cursor of the table's cursor_size, sqlite3_malloc'd
 * (xClose sqlite3_frees it). */
int ds_row_cursor_open(sqlite3_vtab *t, sqlite3_vtab_cursor **out);
/* xNext, xEof and xRowid (the rowid is the row's number). */
int ds_row_cursor_next(sqlite3_vtab_cursor *cur);
int ds_row_cursor_eof(sqlite3_vtab_cursor *cur);
int ds_row_cursor_rowid(sqlite3_vtab_cursor *cur, sqlite3_int64 *rowid);

#endif
