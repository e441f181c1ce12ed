/* interrupt.h - a core/cancel.h scope for one call into a virtual table:
 * its callback tells whether SQLite wants the statement stopped, so long
 * single calls (xFilter building an index, hashing files, skipping rows)
 * honour sqlite3_interrupt (Ctrl-C in the shell) and progress handlers the
 * way SQLite honours them between rows.
 *
 * SQLite 3.40 (Debian bookworm) has no sqlite3_is_interrupted(), and only
 * the VDBE calls the progress handler, so the callback (at most once a
 * millisecond) steps a tiny prepared statement on the same connection:
 * its opcodes check the interrupt flag (SQLITE_INTERRUPT) and count
 * towards the progress handler, which can stop it too. With SQLite 3.41 or
 * later sqlite3_is_interrupted() is asked first. */
#ifndef DS_INTERRUPT_H
#define DS_INTERRUPT_H

#include "core/cancel.h"
#include "sql/sqlite_api.h"

typedef struct ds_interrupt {
  ds_cancel_scope scope;
  sqlite3 *db;
  sqlite3_stmt *probe; /* prepared on first use */
} ds_interrupt;

void ds_interrupt_begin(ds_interrupt *it, sqlite3 *db);
/* Close the scope; 1 when the call was interrupted (return
 * ds_vtab_interrupted then). */
int ds_interrupt_end(ds_interrupt *it);

/* SQLITE_INTERRUPT for xFilter / xNext, dropping any message the call set
 * (SQLite then reports "interrupted"). */
int ds_vtab_interrupted(sqlite3_vtab *vtab);

#endif
