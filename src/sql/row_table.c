/* row_table.c - the steps in-memory row tables share (see row_table.h). */
#include "sql/row_table.h"

#include <string.h>

int ds_row_table_connect(sqlite3 *db, const char *schema, size_t size, size_t cursor_size,
                         sqlite3_vtab **out) {
  int rc = sqlite3_declare_vtab(db, schema);
  if (rc != SQLITE_OK) return rc;
  ds_row_table *t = sqlite3_malloc64(size);
  if (!t) return SQLITE_NOMEM;
  memset(t, 0, size);
  t->cursor_size = cursor_size;
  *out = &t->base;
  return SQLITE_OK;
}

int ds_row_table_disconnect(sqlite3_vtab *t) {
  sqlite3_free(t->zErrMsg);
  sqlite3_free(t);
  return SQLITE_OK;
}

int ds_row_cursor_open(sqlite3_vtab *t, sqlite3_vtab_cursor **out) {
  size_t size = ((ds_row_table *)t)->cursor_size;
  ds_row_cursor *c = sqlite3_malloc64(size);
  if (!c) return SQLITE_NOMEM;
  memset(c, 0, size);
  *out = &c->base;
  return SQLITE_OK;
}

int ds_row_cursor_next(sqlite3_vtab_cursor *cur) {
  ((ds_row_cursor *)cur)->i++;
  return SQLITE_OK;
}

int ds_row_cursor_eof(sqlite3_vtab_cursor *cur) {
  const ds_row_cursor *c = (const ds_row_cursor *)cur;
  return c->i >= c->end;
}

int ds_row_cursor_rowid(sqlite3_vtab_cursor *cur, sqlite3_int64 *rowid) {
  *rowid = (sqlite3_int64)((ds_row_cursor *)cur)->i;
  return SQLITE_OK;
}
